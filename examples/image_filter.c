/*
 * image-filter: blur a picture and find its edges on the GPU with salvo
 * images, and write the results as PNG files (libpng).
 *
 *   image-filter [--size WxH] [--sigma S] [--gain G]
 *                [--out-in PATH] [--out-blur PATH] [--out-edges PATH] [INPUT.png]
 *
 * The input is an 8-bit PNG (gray, RGB, palette, with or without alpha),
 * brought to RGBA8 by libpng's transforms, or without INPUT.png a picture
 * drawn here (shapes, stripes and gradients, 512x384 or --size), so the
 * program runs anywhere. On one stream, with one synchronize at the end:
 *
 *   salvo_copy_buffer_to_image  the picture, from a mapped HOST buffer
 *   hblur  (image_filter_hblur.comp)  horizontal Gaussian taps, reading the
 *          input through a sampler (nearest, unnormalized coordinates,
 *          clamp to edge) into an RGBA8 storage image
 *   vblur  (image_filter_vblur.comp)  vertical taps, storage image to
 *          storage image (RGBA8)
 *   sobel  (image_filter_sobel.comp)  edge magnitude of the blurred luma
 *          into an R8 storage image
 *   salvo_copy_image_to_buffer  the blurred picture and the edges, to
 *          mapped HOST buffers
 *
 * salvo orders the launches by what each reads and writes. Events around
 * the three kernels give their GPU time where the device has timestamps.
 * The same blur and Sobel run on the CPU, in the same float arithmetic,
 * and the results must agree within TOLERANCE units of 8 bits (GPUs may
 * fuse multiply-adds and round float to unorm either way at a tie). The
 * input, the blur and the edges are written as PNG files (defaults
 * filter_in.png, filter_blur.png, filter_edges.png).
 *
 * Exit 0 when the results agree and the validation layer (on with
 * $SALVO_VALIDATION) said nothing; 1 on any error or mismatch; 77 without
 * a Vulkan device; 2 on bad arguments.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <salvo/salvo.h>

#include "image_filter_hblur.spv.h"
#include "image_filter_sobel.spv.h"
#include "image_filter_vblur.spv.h"

#define MAX_RADIUS 12   /* taps either side; the shaders' weight[13] */
#define LOCAL_SIZE 16u  /* the shaders' local_size_x and local_size_y */
#define MAX_EXTENT 16384u
#define TOLERANCE 2     /* largest difference accepted, in units of 8 bits */

/* The blur kernels' push constants (std430: 56 bytes). */
typedef struct blur_push {
    int32_t radius;
    float weight[MAX_RADIUS + 1];
} blur_push;

/* A picture in host memory: RGBA8, rows tightly packed. */
typedef struct picture {
    uint32_t width, height;
    unsigned char *rgba;
    int has_alpha; /* the input carried alpha: written back as RGBA, else RGB */
} picture;

/* ------------------------------------------------------------------ */
/* PNG files                                                           */
/* ------------------------------------------------------------------ */

/* Read an 8-bit (or less, or 16-bit: stripped) PNG into RGBA8, whatever
 * its colour type. libpng reports its errors on stderr and long-jumps
 * here; what was allocated before the jump is freed. 0 on success. */
static int png_load(const char *path, picture *out)
{
    memset(out, 0, sizeof *out);
    FILE *file = fopen(path, "rb");
    if (!file) {
        perror(path);
        return -1;
    }
    unsigned char signature[8];
    if (fread(signature, 1, sizeof signature, file) != sizeof signature ||
        png_sig_cmp(signature, 0, sizeof signature) != 0) {
        fprintf(stderr, "image-filter: %s is not a PNG file\n", path);
        fclose(file);
        return -1;
    }
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    /* Written after setjmp, read after the jump: volatile. */
    unsigned char *volatile pixels = NULL;
    png_bytep *volatile rows = NULL;
    if (!info || setjmp(png_jmpbuf(png))) {
        fprintf(stderr, "image-filter: cannot read %s\n", path);
        png_destroy_read_struct(&png, &info, NULL);
        free(rows);
        free(pixels);
        fclose(file);
        return -1;
    }
    png_init_io(png, file);
    png_set_sig_bytes(png, sizeof signature);
    png_read_info(png, info);
    const uint32_t width = png_get_image_width(png, info);
    const uint32_t height = png_get_image_height(png, info);
    const int color = png_get_color_type(png, info);
    if (width > MAX_EXTENT || height > MAX_EXTENT) {
        fprintf(stderr, "image-filter: %s is %ux%u, larger than %ux%u\n", path, (unsigned)width,
                (unsigned)height, MAX_EXTENT, MAX_EXTENT);
        png_error(png, "too large");
    }
    const int alpha = (color & PNG_COLOR_MASK_ALPHA) || png_get_valid(png, info, PNG_INFO_tRNS);
    /* To RGBA8: palettes to RGB, gray below 8 bits to 8, transparency
     * chunks to alpha, 16 bits to 8, gray to RGB, an opaque alpha byte
     * added where there is none. */
    png_set_palette_to_rgb(png);
    png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS))
        png_set_tRNS_to_alpha(png);
    png_set_strip_16(png);
    png_set_gray_to_rgb(png);
    png_set_add_alpha(png, 0xff, PNG_FILLER_AFTER);
    (void)png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)width * 4)
        png_error(png, "unexpected row size after the transforms");
    pixels = malloc((size_t)width * height * 4);
    rows = malloc(height * sizeof *rows);
    if (!pixels || !rows)
        png_error(png, "out of memory");
    for (uint32_t y = 0; y < height; y++)
        rows[y] = pixels + (size_t)y * width * 4;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    free(rows);
    fclose(file);
    out->width = width;
    out->height = height;
    out->rgba = pixels;
    out->has_alpha = alpha;
    return 0;
}

/* Write width x height pixels of channels bytes each (1: gray, 4: RGBA)
 * as an 8-bit PNG; with channels 4 and keep_alpha 0 the alpha byte is
 * dropped (an RGB file). 0 on success. */
static int png_save(const char *path, const unsigned char *pixels, uint32_t width, uint32_t height,
                    int channels, int keep_alpha)
{
    FILE *file = fopen(path, "wb");
    if (!file) {
        perror(path);
        return -1;
    }
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    png_bytep *volatile rows = NULL;
    if (!info || setjmp(png_jmpbuf(png))) {
        fprintf(stderr, "image-filter: cannot write %s\n", path);
        png_destroy_write_struct(&png, &info);
        free(rows);
        fclose(file);
        return -1;
    }
    png_init_io(png, file);
    png_set_compression_level(png, 9);
    const int color = channels == 1 ? PNG_COLOR_TYPE_GRAY
                      : keep_alpha  ? PNG_COLOR_TYPE_RGB_ALPHA
                                    : PNG_COLOR_TYPE_RGB;
    png_set_IHDR(png, info, width, height, 8, color, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    if (channels == 4 && !keep_alpha)
        png_set_filler(png, 0, PNG_FILLER_AFTER); /* on write: strip the 4th byte */
    rows = malloc(height * sizeof *rows);
    if (!rows)
        png_error(png, "out of memory");
    for (uint32_t y = 0; y < height; y++)
        rows[y] = (png_bytep)(pixels + (size_t)y * width * (size_t)channels);
    png_write_image(png, rows);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(rows);
    if (fclose(file) != 0) {
        perror(path);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* The generated picture                                               */
/* ------------------------------------------------------------------ */

/* Shapes with hard edges over smooth gradients, in coordinates relative
 * to the height so that any size draws the same picture: a diagonal
 * colour ramp, a band of vertical stripes, a disc, a ring, a rectangle, a
 * triangle and a checkerboard. Opaque. 0 on success. */
static int draw_picture(picture *out, uint32_t width, uint32_t height)
{
    memset(out, 0, sizeof *out);
    out->rgba = malloc((size_t)width * height * 4);
    if (!out->rgba)
        return -1;
    out->width = width;
    out->height = height;
    const float aspect = (float)width / (float)height;
    for (uint32_t y = 0; y < height; y++) {
        for (uint32_t x = 0; x < width; x++) {
            /* u in [0, aspect), v in [0, 1): pixel centres. */
            const float u = ((float)x + 0.5f) / (float)height;
            const float v = ((float)y + 0.5f) / (float)height;
            float r = 0.15f + 0.6f * u / aspect, g = 0.2f + 0.5f * v,
                  b = 0.55f + 0.25f * sinf(6.2831853f * (u / aspect + v) * 0.75f);
            /* Vertical stripes, getting narrower to the right, in a band. */
            if (v > 0.06f && v < 0.30f && u > 0.06f && u < aspect - 0.06f) {
                const float phase = u * (6.0f + 10.0f * u);
                const int on = fmodf(phase, 1.0f) < 0.5f;
                r = g = b = on ? 0.92f : 0.08f;
            }
            const float dx = u - 0.36f * aspect, dy = v - 0.64f;
            const float d2 = dx * dx + dy * dy;
            if (d2 < 0.20f * 0.20f) { /* disc with a radial gradient */
                const float t = sqrtf(d2) / 0.20f;
                r = 0.95f - 0.35f * t;
                g = 0.55f - 0.30f * t;
                b = 0.10f;
            } else if (d2 > 0.25f * 0.25f && d2 < 0.28f * 0.28f) { /* ring around it */
                r = 0.10f;
                g = 0.10f;
                b = 0.35f;
            }
            if (u > 0.66f * aspect && u < 0.92f * aspect && v > 0.40f && v < 0.62f) {
                r = 0.20f; /* rectangle with a horizontal ramp */
                g = 0.45f + 0.5f * (u - 0.66f * aspect) / (0.26f * aspect);
                b = 0.30f;
            }
            /* Triangle: apex (0.79a, 0.66), base from (0.64a, 0.94) to (0.94a, 0.94). */
            const float ty = (v - 0.66f) / 0.28f, tx = (u - 0.79f * aspect) / (0.15f * aspect);
            if (ty > 0.0f && ty < 1.0f && fabsf(tx) < ty) {
                r = 0.85f;
                g = 0.85f;
                b = 0.95f;
            }
            /* Checkerboard in the lower left corner. */
            if (u > 0.03f && u < 0.15f && v > 0.82f && v < 0.97f) {
                const int cell = ((int)(u / 0.03f) + (int)(v / 0.03f)) & 1;
                r = g = b = cell ? 0.85f : 0.25f;
            }
            unsigned char *p = out->rgba + ((size_t)y * width + x) * 4;
            p[0] = (unsigned char)lrintf(fminf(fmaxf(r, 0.0f), 1.0f) * 255.0f);
            p[1] = (unsigned char)lrintf(fminf(fmaxf(g, 0.0f), 1.0f) * 255.0f);
            p[2] = (unsigned char)lrintf(fminf(fmaxf(b, 0.0f), 1.0f) * 255.0f);
            p[3] = 255;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* The CPU reference                                                   */
/* ------------------------------------------------------------------ */

/* Float to 8-bit unorm, rounded to nearest, as Vulkan asks of stores. */
static unsigned char unorm8(float f)
{
    f = fminf(fmaxf(f, 0.0f), 1.0f);
    return (unsigned char)floorf(f * 255.0f + 0.5f);
}

/* One blur pass over RGBA8, along x (dx 1) or y (dx 0), edges clamped: the
 * shaders' sum, tap for tap. */
static void cpu_blur_pass(const unsigned char *src, unsigned char *dst, uint32_t width,
                          uint32_t height, const blur_push *taps, int along_x)
{
    const int w = (int)width, h = (int)height;
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            for (size_t c = 0; c < 4; c++) {
#define TAP(xx, yy) ((float)src[((size_t)(yy) * width + (size_t)(xx)) * 4 + c] / 255.0f)
                float acc = taps->weight[0] * TAP(x, y);
                for (int i = 1; i <= taps->radius; i++) {
                    float before, after;
                    if (along_x) {
                        before = TAP(x - i < 0 ? 0 : x - i, y);
                        after = TAP(x + i > w - 1 ? w - 1 : x + i, y);
                    } else {
                        before = TAP(x, y - i < 0 ? 0 : y - i);
                        after = TAP(x, y + i > h - 1 ? h - 1 : y + i);
                    }
                    acc += taps->weight[i] * (before + after);
                }
#undef TAP
                dst[((size_t)y * width + (size_t)x) * 4 + c] = unorm8(acc);
            }
        }
    }
}

static float cpu_luma(const unsigned char *rgba, uint32_t width, uint32_t height, int x, int y)
{
    x = x < 0 ? 0 : x >= (int)width ? (int)width - 1 : x;
    y = y < 0 ? 0 : y >= (int)height ? (int)height - 1 : y;
    const unsigned char *p = rgba + ((size_t)y * width + (size_t)x) * 4;
    return (float)p[0] / 255.0f * 0.299f + (float)p[1] / 255.0f * 0.587f +
           (float)p[2] / 255.0f * 0.114f;
}

static void cpu_sobel(const unsigned char *rgba, unsigned char *dst, uint32_t width,
                      uint32_t height, float gain)
{
    for (int y = 0; y < (int)height; y++) {
        for (int x = 0; x < (int)width; x++) {
#define L(dx, dy) cpu_luma(rgba, width, height, x + (dx), y + (dy))
            const float gx = (L(1, -1) + 2.0f * L(1, 0) + L(1, 1)) -
                             (L(-1, -1) + 2.0f * L(-1, 0) + L(-1, 1));
            const float gy = (L(-1, 1) + 2.0f * L(0, 1) + L(1, 1)) -
                             (L(-1, -1) + 2.0f * L(0, -1) + L(1, -1));
#undef L
            dst[(size_t)y * width + (size_t)x] = unorm8(sqrtf(gx * gx + gy * gy) * gain);
        }
    }
}

/* The largest difference between two byte arrays, and how many differ. */
static int max_difference(const unsigned char *a, const unsigned char *b, size_t n,
                          size_t *differ)
{
    int worst = 0;
    *differ = 0;
    for (size_t i = 0; i < n; i++) {
        const int d = abs((int)a[i] - (int)b[i]);
        if (d > worst)
            worst = d;
        if (d)
            ++*differ;
    }
    return worst;
}

/* ------------------------------------------------------------------ */
/* The program                                                         */
/* ------------------------------------------------------------------ */

/* Counts every validation message, those at teardown included, after
 * salvo_device_stats can no longer be asked. */
static atomic_uint validation_seen;

static void log_message(void *user, salvo_log_level level, const char *file, int line,
                        const char *message)
{
    (void)user;
    (void)line;
    if (file && strcmp(file, "validation") == 0) {
        atomic_fetch_add(&validation_seen, 1);
        fprintf(stderr, "image-filter: validation: %s\n", message);
    } else if (level >= SALVO_LOG_WARNING) {
        fprintf(stderr, "image-filter: %s: %s\n", file ? file : "salvo", message);
    }
}

/* Remember which call failed; its status and message are printed at `done`. */
#define CHECK(call)                                                                                \
    do {                                                                                           \
        status = (call);                                                                           \
        if (status < 0) {                                                                          \
            failed = #call;                                                                        \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

static void usage(FILE *to)
{
    fprintf(to, "usage: image-filter [--size WxH] [--sigma S] [--gain G] [--out-in PATH]\n"
                "                    [--out-blur PATH] [--out-edges PATH] [INPUT.png]\n"
                "  INPUT.png        8-bit PNG to filter (default: a picture drawn here)\n"
                "  --size WxH       size of the drawn picture (default 512x384)\n"
                "  --sigma S        Gaussian standard deviation in pixels, 0.3 to %.1f "
                "(default 2)\n"
                "  --gain G         factor on the Sobel magnitude (default 1)\n"
                "  --out-in PATH    the input as filtered (default filter_in.png)\n"
                "  --out-blur PATH  the blurred picture (default filter_blur.png)\n"
                "  --out-edges PATH the edges, gray (default filter_edges.png)\n",
            MAX_RADIUS / 3.0);
}

static salvo_status kernel(salvo_device *device, const uint32_t *spirv, size_t size,
                           const char *name, salvo_kernel **out)
{
    const salvo_kernel_desc desc = {.spirv = spirv, .spirv_size = size, .name = name};
    return salvo_kernel_create(device, &desc, out);
}

static salvo_status image(salvo_device *device, salvo_format format, uint32_t usage,
                          const picture *pic, salvo_image **out)
{
    const salvo_image_desc desc = {
        .type = SALVO_IMAGE_2D,
        .format = format,
        .width = pic->width,
        .height = pic->height,
        .usage = usage,
    };
    return salvo_image_create(device, &desc, out);
}

int main(int argc, char **argv)
{
    const char *input = NULL;
    const char *out_in = "filter_in.png", *out_blur = "filter_blur.png",
               *out_edges = "filter_edges.png";
    unsigned width = 512, height = 384;
    double sigma = 2.0, gain = 1.0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        char tail;
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(arg, "--size") == 0 && value) {
            if (sscanf(value, "%ux%u%c", &width, &height, &tail) != 2 || width < 3 ||
                height < 3 || width > MAX_EXTENT || height > MAX_EXTENT) {
                fprintf(stderr, "image-filter: --size wants WxH, 3 to %u each\n", MAX_EXTENT);
                return 2;
            }
            i++;
        } else if (strcmp(arg, "--sigma") == 0 && value) {
            if (sscanf(value, "%lf%c", &sigma, &tail) != 1 || !(sigma >= 0.3) ||
                sigma > MAX_RADIUS / 3.0) {
                fprintf(stderr, "image-filter: --sigma wants 0.3 to %.1f\n", MAX_RADIUS / 3.0);
                return 2;
            }
            i++;
        } else if (strcmp(arg, "--gain") == 0 && value) {
            if (sscanf(value, "%lf%c", &gain, &tail) != 1 || !(gain > 0.0) || gain > 1000.0) {
                fprintf(stderr, "image-filter: --gain wants a positive number\n");
                return 2;
            }
            i++;
        } else if (strcmp(arg, "--out-in") == 0 && value) {
            out_in = argv[++i];
        } else if (strcmp(arg, "--out-blur") == 0 && value) {
            out_blur = argv[++i];
        } else if (strcmp(arg, "--out-edges") == 0 && value) {
            out_edges = argv[++i];
        } else if (arg[0] != '-' && !input) {
            input = arg;
        } else {
            usage(stderr);
            return 2;
        }
    }

    salvo_device *device = NULL;
    salvo_kernel *hblur = NULL, *vblur = NULL, *sobel = NULL;
    salvo_image *src = NULL, *tmp = NULL, *blurred = NULL, *edges = NULL;
    salvo_sampler *sampler = NULL;
    salvo_buffer *upload = NULL, *down_blur = NULL, *down_edges = NULL;
    salvo_event *start = NULL, *end = NULL;
    salvo_stream *stream = NULL;
    salvo_status status = SALVO_OK;
    const char *failed = NULL;
    int result = 1;
    picture pic;
    unsigned char *cpu_tmp = NULL, *cpu_blur = NULL, *cpu_edges = NULL;

    if (input ? png_load(input, &pic) : draw_picture(&pic, width, height)) {
        if (!input)
            fprintf(stderr, "image-filter: out of host memory\n");
        return 1;
    }
    const size_t texels = (size_t)pic.width * pic.height;
    cpu_tmp = malloc(texels * 4);
    cpu_blur = malloc(texels * 4);
    cpu_edges = malloc(texels);
    if (!cpu_tmp || !cpu_blur || !cpu_edges) {
        fprintf(stderr, "image-filter: out of host memory\n");
        goto done;
    }

    /* Gaussian taps, normalized over the 2 * radius + 1 of them. */
    blur_push taps = {.radius = (int32_t)ceil(3.0 * sigma)};
    if (taps.radius > MAX_RADIUS)
        taps.radius = MAX_RADIUS;
    double total = 0.0, weight[MAX_RADIUS + 1];
    for (int i = 0; i <= taps.radius; i++) {
        weight[i] = exp(-(double)(i * i) / (2.0 * sigma * sigma));
        total += i ? 2.0 * weight[i] : weight[i];
    }
    for (int i = 0; i <= taps.radius; i++)
        taps.weight[i] = (float)(weight[i] / total);
    const float gain_f = (float)gain;

    /* Validation comes from $SALVO_VALIDATION, so the program also runs
     * where the layer is not installed. */
    const salvo_device_desc desc = {.log = log_message};
    status = salvo_device_create(&desc, &device);
    if (status == SALVO_ERROR_NO_DEVICE) {
        fprintf(stderr, "image-filter: no Vulkan device: skipped\n");
        result = 77;
        goto done;
    }
    CHECK(status);
    salvo_device_info info;
    CHECK(salvo_device_info_get(device, &info));
    printf("image-filter: %s, %ux%u %s, Gaussian sigma %.2f (%d taps), Sobel gain %.2f\n",
           info.name, (unsigned)pic.width, (unsigned)pic.height, input ? input : "(drawn)",
           sigma, 2 * taps.radius + 1, gain);

    CHECK(kernel(device, image_filter_hblur_spv, sizeof image_filter_hblur_spv, "hblur", &hblur));
    CHECK(kernel(device, image_filter_vblur_spv, sizeof image_filter_vblur_spv, "vblur", &vblur));
    CHECK(kernel(device, image_filter_sobel_spv, sizeof image_filter_sobel_spv, "sobel", &sobel));
    CHECK(image(device, SALVO_FORMAT_RGBA8_UNORM, SALVO_IMAGE_SAMPLED | SALVO_IMAGE_STORAGE, &pic,
                &src));
    CHECK(image(device, SALVO_FORMAT_RGBA8_UNORM, SALVO_IMAGE_STORAGE, &pic, &tmp));
    CHECK(image(device, SALVO_FORMAT_RGBA8_UNORM, SALVO_IMAGE_STORAGE, &pic, &blurred));
    CHECK(image(device, SALVO_FORMAT_R8_UNORM, SALVO_IMAGE_STORAGE, &pic, &edges));
    /* Texel coordinates and clamping at the borders: the horizontal pass
     * reads x + 0.5 +- i and the sampler does the edge handling. */
    const salvo_sampler_desc sampler_desc = {
        .filter = SALVO_FILTER_NEAREST,
        .address = {SALVO_ADDRESS_CLAMP_TO_EDGE, SALVO_ADDRESS_CLAMP_TO_EDGE,
                    SALVO_ADDRESS_CLAMP_TO_EDGE},
        .unnormalized = true,
    };
    CHECK(salvo_sampler_create(device, &sampler_desc, &sampler));
    CHECK(salvo_buffer_create(device, texels * 4, SALVO_DOMAIN_HOST, &upload));
    CHECK(salvo_buffer_create(device, texels * 4, SALVO_DOMAIN_HOST, &down_blur));
    CHECK(salvo_buffer_create(device, texels, SALVO_DOMAIN_HOST, &down_edges));
    CHECK(salvo_event_create(device, &start));
    CHECK(salvo_event_create(device, &end));
    CHECK(salvo_stream_create(device, NULL, &stream));

    void *upload_map = NULL, *blur_map = NULL, *edges_map = NULL;
    CHECK(salvo_buffer_map(upload, &upload_map));
    CHECK(salvo_buffer_map(down_blur, &blur_map));
    CHECK(salvo_buffer_map(down_edges, &edges_map));
    memcpy(upload_map, pic.rgba, texels * 4);

    const uint32_t groups[3] = {(pic.width + LOCAL_SIZE - 1) / LOCAL_SIZE,
                                (pic.height + LOCAL_SIZE - 1) / LOCAL_SIZE, 1};
    const salvo_binding hblur_bindings[2] = {
        {.binding = 0, .image = src, .sampler = sampler},
        {.binding = 1, .image = tmp},
    };
    const salvo_binding vblur_bindings[2] = {
        {.binding = 0, .image = tmp},
        {.binding = 1, .image = blurred},
    };
    const salvo_binding sobel_bindings[2] = {
        {.binding = 0, .image = blurred},
        {.binding = 1, .image = edges},
    };
    CHECK(salvo_copy_buffer_to_image(stream, upload, 0, src, NULL));
    CHECK(salvo_event_record(start, stream));
    CHECK(salvo_launch(stream, hblur, groups, hblur_bindings, 2, &taps, sizeof taps));
    CHECK(salvo_launch(stream, vblur, groups, vblur_bindings, 2, &taps, sizeof taps));
    CHECK(salvo_launch(stream, sobel, groups, sobel_bindings, 2, &gain_f, sizeof gain_f));
    CHECK(salvo_event_record(end, stream));
    CHECK(salvo_copy_image_to_buffer(stream, blurred, NULL, down_blur, 0));
    CHECK(salvo_copy_image_to_buffer(stream, edges, NULL, down_edges, 0));
    /* The one wait. SALVO_TIMEOUT (the device's fence timeout expired, the
     * work goes on) is no error to salvo, but the results are not there
     * yet: here it fails the run as an error would. */
    status = salvo_stream_synchronize(stream);
    if (status != SALVO_OK) {
        failed = "salvo_stream_synchronize(stream)";
        goto done;
    }

    /* Both marks are complete after the synchronize, so SALVO_NOT_READY
     * would be a fault as well. */
    uint64_t ns = 0;
    status = salvo_event_elapsed(start, end, &ns);
    if (status == SALVO_ERROR_UNSUPPORTED) {
        printf("image-filter: GPU time: not measured (the device has no timestamps)\n");
    } else if (status != SALVO_OK) {
        failed = "salvo_event_elapsed(start, end, &ns)";
        goto done;
    } else {
        printf("image-filter: GPU time of blur (2 passes) + Sobel: %.3f ms\n", (double)ns / 1e6);
    }

    /* The CPU reference. The blur is checked against the CPU's blur of the
     * input; the edges against the CPU's Sobel of the GPU's blur, so that a
     * one-unit rounding difference the blur check accepts is not amplified
     * by the Sobel weights (up to 4 taps of 2) into a false mismatch. */
    cpu_blur_pass(pic.rgba, cpu_tmp, pic.width, pic.height, &taps, 1);
    cpu_blur_pass(cpu_tmp, cpu_blur, pic.width, pic.height, &taps, 0);
    cpu_sobel(blur_map, cpu_edges, pic.width, pic.height, gain_f);
    size_t blur_differ = 0, edges_differ = 0;
    const int blur_max = max_difference(blur_map, cpu_blur, texels * 4, &blur_differ);
    const int edges_max = max_difference(edges_map, cpu_edges, texels, &edges_differ);
    printf("image-filter: GPU vs CPU: blur max difference %d (%zu of %zu values differ), "
           "edges max difference %d (%zu of %zu)\n",
           blur_max, blur_differ, texels * 4, edges_max, edges_differ, texels);
    if (blur_max > TOLERANCE || edges_max > TOLERANCE) {
        fprintf(stderr, "image-filter: GPU and CPU differ by more than %d\n", TOLERANCE);
        goto done;
    }

    if (png_save(out_in, pic.rgba, pic.width, pic.height, 4, pic.has_alpha) ||
        png_save(out_blur, blur_map, pic.width, pic.height, 4, pic.has_alpha) ||
        png_save(out_edges, edges_map, pic.width, pic.height, 1, 0))
        goto done;
    printf("image-filter: wrote %s, %s, %s\n", out_in, out_blur, out_edges);

    salvo_stats stats;
    CHECK(salvo_device_stats(device, &stats));
    if (stats.validation_messages != 0) {
        fprintf(stderr, "image-filter: %llu validation messages\n",
                (unsigned long long)stats.validation_messages);
        goto done;
    }
    result = 0;

done:
    if (failed) {
        /* The status name first: salvo_last_error() is valid until the next salvo call. */
        const char *name = salvo_status_string(status);
        fprintf(stderr, "image-filter: %s failed: %s: %s\n", failed, name, salvo_last_error());
    }
    /* Destroys never block and accept NULL; the device waits for the rest. */
    salvo_stream_destroy(stream);
    salvo_event_destroy(end);
    salvo_event_destroy(start);
    salvo_buffer_destroy(down_edges);
    salvo_buffer_destroy(down_blur);
    salvo_buffer_destroy(upload);
    salvo_sampler_destroy(sampler);
    salvo_image_destroy(edges);
    salvo_image_destroy(blurred);
    salvo_image_destroy(tmp);
    salvo_image_destroy(src);
    salvo_kernel_destroy(sobel);
    salvo_kernel_destroy(vblur);
    salvo_kernel_destroy(hblur);
    salvo_device_destroy(device);
    free(cpu_edges);
    free(cpu_blur);
    free(cpu_tmp);
    free(pic.rgba);
    /* Teardown may draw messages too. */
    if (result == 0 && atomic_load(&validation_seen) != 0) {
        fprintf(stderr, "image-filter: %u validation messages\n",
                (unsigned)atomic_load(&validation_seen));
        result = 1;
    }
    return result;
}
