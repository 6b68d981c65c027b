/* Images and samplers on a real device under the validation layer (and
 * synchronization validation): every format the device offers round-trips
 * exactly through host transfers and through stream copies; 1D, 3D and
 * 2D-array regions; a 3x3 blur on storage images and a bilinear resize
 * through a sampler against CPU references; hazards between launches on
 * one image; images in graphs; lifetimes; and refusals of bad input. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <vulkan/vulkan.h>

#include "img_add.spv.h"
#include "img_blur.spv.h"
#include "img_sample.spv.h"
#include "img_separate.spv.h"
#include "img_separate_uint.spv.h"
#include "salvo/salvo.h"
#include "support/lava.h"

typedef lava_fixture fixture;

/* Every test destroys the images and samplers it made. */
static int teardown(void **state)
{
    fixture *f = *state;
    salvo_stats s;
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    assert_int_equal(salvo_device_synchronize(f->dev), SALVO_OK);
    assert_int_equal(salvo_device_stats(f->dev, &s), SALVO_OK);
    assert_int_equal(s.live_images, 0);
    assert_int_equal(s.live_image_bytes, 0);
    assert_int_equal(s.live_samplers, 0);
    return lava_teardown(state);
}

static salvo_kernel *kernel(fixture *f, const uint32_t *spv, size_t size, const char *name)
{
    salvo_kernel *k = NULL;
    salvo_kernel_desc kd = {.spirv = spv, .spirv_size = size, .name = name};
    assert_int_equal(salvo_kernel_create(f->dev, &kd, &k), SALVO_OK);
    return k;
}

static salvo_image *image(fixture *f, salvo_image_type type, salvo_format format, uint32_t w,
                          uint32_t h, uint32_t d, uint32_t layers)
{
    salvo_image *img = NULL;
    salvo_image_desc desc = {type, format, w, h, d, layers, 0};
    assert_int_equal(salvo_image_create(f->dev, &desc, &img), SALVO_OK);
    return img;
}

/* Bytes that exercise every bit, different for every call. */
static void pattern(unsigned char *p, size_t n, uint32_t seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (unsigned char)x;
    }
}

/* Every format the device offers: a whole-image write then read, a
 * region written over it, and the image copied to a buffer and back into
 * a second image on a stream. Transfers copy texels: bytes come back as
 * they went in, whatever they mean. */
static void formats_round_trip(void **state)
{
    fixture *f = *state;
    enum { W = 13, H = 7 };
    unsigned offered = 0;
    for (int fmt = 1; fmt < SALVO_FORMAT_COUNT; fmt++) {
        uint32_t usage = 0;
        assert_int_equal(salvo_image_format_support(f->dev, (salvo_format)fmt, &usage), SALVO_OK);
        if (!(usage & (SALVO_IMAGE_STORAGE | SALVO_IMAGE_SAMPLED)))
            continue;
        offered++;
        uint32_t texel = salvo_format_texel_size((salvo_format)fmt);
        assert_true(texel >= 1 && texel <= 16);
        size_t bytes = (size_t)W * H * texel;
        unsigned char *in = malloc(bytes), *out = malloc(bytes), *part = malloc(bytes);
        pattern(in, bytes, (uint32_t)fmt);
        salvo_image *a = image(f, SALVO_IMAGE_2D, (salvo_format)fmt, W, H, 1, 1);
        salvo_image *b = image(f, SALVO_IMAGE_2D, (salvo_format)fmt, W, H, 1, 1);
        assert_int_equal(salvo_image_write(a, NULL, in, bytes), SALVO_OK);
        assert_int_equal(salvo_image_read(a, NULL, out, bytes), SALVO_OK);
        assert_memory_equal(in, out, bytes);
        /* A 5x3 box at (4, 2). */
        salvo_image_region r = {.x = 4, .y = 2, .width = 5, .height = 3};
        pattern(part, 15 * texel, (uint32_t)fmt + 1000);
        assert_int_equal(salvo_image_write(a, &r, part, 15ull * texel), SALVO_OK);
        for (uint32_t y = 0; y < 3; y++)
            memcpy(in + ((size_t)(2 + y) * W + 4) * texel, part + (size_t)y * 5 * texel,
                   5 * texel);
        /* Through a buffer on the stream, into b. */
        salvo_buffer *buf = NULL;
        assert_int_equal(salvo_buffer_create(f->dev, bytes + 64 * texel, SALVO_DOMAIN_DEVICE, &buf),
                         SALVO_OK);
        assert_int_equal(salvo_copy_image_to_buffer(f->st, a, NULL, buf, 64ull * texel), SALVO_OK);
        assert_int_equal(salvo_copy_buffer_to_image(f->st, buf, 64ull * texel, b, NULL), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
        memset(out, 0, bytes);
        assert_int_equal(salvo_image_read(b, NULL, out, bytes), SALVO_OK);
        if (memcmp(in, out, bytes) != 0)
            fail_msg("format %s does not round-trip", salvo_format_name((salvo_format)fmt));
        salvo_buffer_destroy(buf);
        salvo_image_destroy(a);
        salvo_image_destroy(b);
        free(in);
        free(out);
        free(part);
    }
    /* lavapipe offers all of them; any device offers the common ones. */
    assert_true(offered >= 20);
}

/* 1D, 3D and 2D arrays: regions land where they say. */
static void image_types(void **state)
{
    fixture *f = *state;
    /* 1D: 100 texels, 10 of them rewritten. */
    salvo_image *one = image(f, SALVO_IMAGE_1D, SALVO_FORMAT_R32_UINT, 100, 0, 0, 0);
    uint32_t line[100], got[100], ten[10];
    for (uint32_t i = 0; i < 100; i++)
        line[i] = i * 7u;
    for (uint32_t i = 0; i < 10; i++)
        ten[i] = 1000u + i;
    assert_int_equal(salvo_image_write(one, NULL, line, sizeof line), SALVO_OK);
    salvo_image_region r1 = {.x = 50, .width = 10};
    assert_int_equal(salvo_image_write(one, &r1, ten, sizeof ten), SALVO_OK);
    memcpy(line + 50, ten, sizeof ten);
    assert_int_equal(salvo_image_read(one, NULL, got, sizeof got), SALVO_OK);
    assert_memory_equal(line, got, sizeof got);
    salvo_image_destroy(one);

    /* 3D 8x6x5: read back slices 2..3 of a 4x3 box. */
    salvo_image *vol = image(f, SALVO_IMAGE_3D, SALVO_FORMAT_R16_UINT, 8, 6, 5, 0);
    uint16_t all[5][6][8], box[2][3][4];
    for (int z = 0; z < 5; z++)
        for (int y = 0; y < 6; y++)
            for (int x = 0; x < 8; x++)
                all[z][y][x] = (uint16_t)(z * 100 + y * 10 + x);
    assert_int_equal(salvo_image_write(vol, NULL, all, sizeof all), SALVO_OK);
    salvo_image_region r3 = {.x = 2, .y = 1, .z = 2, .width = 4, .height = 3, .depth = 2};
    assert_int_equal(salvo_image_read(vol, &r3, box, sizeof box), SALVO_OK);
    for (int z = 0; z < 2; z++)
        for (int y = 0; y < 3; y++)
            for (int x = 0; x < 4; x++)
                assert_int_equal(box[z][y][x], all[2 + z][1 + y][2 + x]);
    salvo_image_destroy(vol);

    /* 2D array of 4 layers 16x16: layers 1..2 written, read whole. */
    salvo_image *arr = image(f, SALVO_IMAGE_2D_ARRAY, SALVO_FORMAT_R8_UINT, 16, 16, 0, 4);
    static uint8_t layers[4][16][16], two[2][16][16], back[4][16][16];
    memset(layers, 0x11, sizeof layers);
    memset(two, 0x77, sizeof two);
    assert_int_equal(salvo_image_write(arr, NULL, layers, sizeof layers), SALVO_OK);
    salvo_image_region rl = {.layer = 1, .layers = 2};
    assert_int_equal(salvo_image_write(arr, &rl, two, sizeof two), SALVO_OK);
    memcpy(layers[1], two, sizeof two);
    assert_int_equal(salvo_image_read(arr, NULL, back, sizeof back), SALVO_OK);
    assert_memory_equal(layers, back, sizeof back);
    salvo_image_destroy(arr);
}

static float blur_at(const float *src, int w, int h, int x, int y)
{
    float acc = 0.0f;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            int sx = x + dx < 0 ? 0 : x + dx >= w ? w - 1 : x + dx;
            int sy = y + dy < 0 ? 0 : y + dy >= h ? h - 1 : y + dy;
            acc += src[sy * w + sx];
        }
    return acc / 9.0f;
}

/* A 3x3 box blur, storage image to storage image, twice in a row on one
 * stream (the second reads what the first wrote): against the CPU. */
static void blur_matches_cpu(void **state)
{
    fixture *f = *state;
    enum { W = 61, H = 37 };
    static float in[H][W], mid[H][W], want[H][W], got[H][W];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            in[y][x] = (float)((x * 37 + y * 91) % 101) / 100.0f;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            mid[y][x] = blur_at(&in[0][0], W, H, x, y);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            want[y][x] = blur_at(&mid[0][0], W, H, x, y);
    salvo_kernel *k = kernel(f, img_blur_spv, sizeof img_blur_spv, "img_blur");
    salvo_image *a = image(f, SALVO_IMAGE_2D, SALVO_FORMAT_R32_FLOAT, W, H, 1, 1);
    salvo_image *b = image(f, SALVO_IMAGE_2D, SALVO_FORMAT_R32_FLOAT, W, H, 1, 1);
    assert_int_equal(salvo_image_write(a, NULL, in, sizeof in), SALVO_OK);
    const uint32_t groups[3] = {(W + 7) / 8, (H + 7) / 8, 1};
    salvo_binding ab[2] = {{.binding = 0, .image = a}, {.binding = 1, .image = b}};
    salvo_binding ba[2] = {{.binding = 0, .image = b}, {.binding = 1, .image = a}};
    assert_int_equal(salvo_launch(f->st, k, groups, ab, 2, NULL, 0), SALVO_OK);
    assert_int_equal(salvo_launch(f->st, k, groups, ba, 2, NULL, 0), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    assert_int_equal(salvo_image_read(a, NULL, got, sizeof got), SALVO_OK);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            if (fabsf(got[y][x] - want[y][x]) > 1e-5f)
                fail_msg("blur (%d, %d): %g, want %g", x, y, got[y][x], want[y][x]);
    salvo_image_destroy(a);
    salvo_image_destroy(b);
    salvo_kernel_destroy(k);
}

/* Bilinear sample of an image at (u, v), normalized, clamp to edge. */
static float bilinear(const float *src, int w, int h, float u, float v)
{
    float x = u * (float)w - 0.5f, y = v * (float)h - 0.5f;
    int x0 = (int)floorf(x), y0 = (int)floorf(y);
    float fx = x - (float)x0, fy = y - (float)y0;
#define AT(xx, yy)                                                                                 \
    src[((yy) < 0 ? 0 : (yy) >= h ? h - 1 : (yy)) * w + ((xx) < 0 ? 0 : (xx) >= w ? w - 1 : (xx))]
    float top = AT(x0, y0) * (1 - fx) + AT(x0 + 1, y0) * fx;
    float bottom = AT(x0, y0 + 1) * (1 - fx) + AT(x0 + 1, y0 + 1) * fx;
#undef AT
    return top * (1 - fy) + bottom * fy;
}

/* A 16x12 image resized to 37x29 through a linear sampler. Vulkan lets a
 * device round filter weights to subTexelPrecisionBits (at least 4): the
 * tolerance is that rounding's worst case over texels in [0, 1]. */
static void resize_through_sampler(void **state)
{
    fixture *f = *state;
    enum { W = 16, H = 12, OW = 37, OH = 29 };
    uint32_t usage = 0;
    assert_int_equal(salvo_image_format_support(f->dev, SALVO_FORMAT_R32_FLOAT, &usage), SALVO_OK);
    salvo_format fmt = usage & SALVO_IMAGE_LINEAR_FILTER ? SALVO_FORMAT_R32_FLOAT
                                                         : SALVO_FORMAT_RGBA8_UNORM;
    static float src[H][W];
    static unsigned char src8[H][W][4];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            unsigned char v = (unsigned char)((x * 53 + y * 29) % 256);
            src8[y][x][0] = v;
            src[y][x] = (float)v / 255.0f;
        }
    salvo_image *img = NULL;
    salvo_image_desc d = {SALVO_IMAGE_2D, fmt, W, H, 1, 1, SALVO_IMAGE_SAMPLED};
    assert_int_equal(salvo_image_create(f->dev, &d, &img), SALVO_OK);
    if (fmt == SALVO_FORMAT_R32_FLOAT)
        assert_int_equal(salvo_image_write(img, NULL, src, sizeof src), SALVO_OK);
    else
        assert_int_equal(salvo_image_write(img, NULL, src8, sizeof src8), SALVO_OK);
    salvo_sampler *smp = NULL;
    salvo_sampler_desc sd = {.filter = SALVO_FILTER_LINEAR};
    assert_int_equal(salvo_sampler_create(f->dev, &sd, &smp), SALVO_OK);
    salvo_buffer *out = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, OW * OH * 4, SALVO_DOMAIN_HOST, &out), SALVO_OK);
    salvo_kernel *k = kernel(f, img_sample_spv, sizeof img_sample_spv, "img_sample");
    salvo_binding bd[2] = {{.binding = 0, .image = img, .sampler = smp},
                           {.binding = 1, .buffer = out}};
    const uint32_t push[2] = {OW, OH};
    const uint32_t groups[3] = {(OW + 7) / 8, (OH + 7) / 8, 1};
    assert_int_equal(salvo_launch(f->st, k, groups, bd, 2, push, sizeof push), SALVO_OK);
    /* The sampler and image go at once: pending work still holds them. */
    salvo_sampler_destroy(smp);
    salvo_image_destroy(img);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    static float got[OH][OW];
    assert_int_equal(salvo_buffer_read(out, 0, got, sizeof got), SALVO_OK);
    double worst = 0;
    for (int y = 0; y < OH; y++)
        for (int x = 0; x < OW; x++) {
            float want = bilinear(&src[0][0], W, H, ((float)x + 0.5f) / OW, ((float)y + 0.5f) / OH);
            double e = fabs((double)got[y][x] - want);
            worst = e > worst ? e : worst;
        }
    /* 4 bits of sub-texel precision: weights off by at most 1/32 on each
     * axis, texels at most 1 apart. */
    assert_true(worst <= 2.0 / 32 + 1e-6);
    print_message("resize: worst error %.2e (%s)\n", worst, salvo_format_name(fmt));
    salvo_buffer_destroy(out);
    salvo_kernel_destroy(k);
}

/* A separate texture and sampler, texelFetch from a chosen layer. */
static void separate_texture_and_sampler(void **state)
{
    fixture *f = *state;
    enum { W = 8, H = 8, L = 3 };
    salvo_image *arr = image(f, SALVO_IMAGE_2D_ARRAY, SALVO_FORMAT_R32_FLOAT, W, H, 0, L);
    static float texels[L][H][W];
    for (int l = 0; l < L; l++)
        for (int i = 0; i < H * W; i++)
            texels[l][i / W][i % W] = (float)(l * 1000 + i);
    assert_int_equal(salvo_image_write(arr, NULL, texels, sizeof texels), SALVO_OK);
    salvo_sampler *smp = NULL;
    assert_int_equal(salvo_sampler_create(f->dev, NULL, &smp), SALVO_OK);
    salvo_buffer *out = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, W * H * 4, SALVO_DOMAIN_HOST, &out), SALVO_OK);
    salvo_kernel *k = kernel(f, img_separate_spv, sizeof img_separate_spv, "img_separate");
    salvo_kernel_info info;
    assert_int_equal(salvo_kernel_info_get(k, &info), SALVO_OK);
    assert_int_equal(info.binding_count, 3);
    assert_int_equal(info.bindings[0].kind, SALVO_BINDING_SAMPLED_IMAGE);
    assert_int_equal(info.bindings[0].image_type, SALVO_IMAGE_2D_ARRAY);
    assert_int_equal(info.bindings[1].kind, SALVO_BINDING_SAMPLER);
    assert_int_equal(info.bindings[2].kind, SALVO_BINDING_BUFFER);
    salvo_binding bd[3] = {{.binding = 0, .image = arr}, {.binding = 1, .sampler = smp},
                           {.binding = 2, .buffer = out}};
    const uint32_t push[3] = {W, H, 2};
    const uint32_t groups[3] = {1, 1, 1};
    assert_int_equal(salvo_launch(f->st, k, groups, bd, 3, push, sizeof push), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    float got[H][W];
    assert_int_equal(salvo_buffer_read(out, 0, got, sizeof got), SALVO_OK);
    assert_memory_equal(got, texels[2], sizeof got);

    /* The sampler is checked against the texture the kernel samples it
     * with, as a combined image sampler is: unnormalized coordinates are
     * for 1D and 2D images, and this texture is a 2D array. A launch and
     * a graph's new bindings alike. */
    salvo_sampler *unnorm = NULL;
    salvo_sampler_desc ud = {.filter = SALVO_FILTER_NEAREST, .unnormalized = true};
    assert_int_equal(salvo_sampler_create(f->dev, &ud, &unnorm), SALVO_OK);
    bd[1].sampler = unnorm;
    assert_int_equal(salvo_launch(f->st, k, groups, bd, 3, push, sizeof push),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(salvo_last_error(), "binding 1 (a sampler) with binding 0 (a texture): "
                                               "an unnormalized sampler on a 2D array image"));
    bd[1].sampler = smp;
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    assert_int_equal(salvo_launch(f->st, k, groups, bd, 3, push, sizeof push), SALVO_OK);
    assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_OK);
    bd[1].sampler = unnorm;
    assert_int_equal(salvo_graph_set_bindings(g, 0, bd, 3), SALVO_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(salvo_last_error(), "an unnormalized sampler on a 2D array image"));
    salvo_graph_destroy(g);
    salvo_sampler_destroy(unnorm);

    /* Integer texels sampled through a separate sampler: nearest runs, a
     * linear sampler is refused (the device filters no integer format). */
    enum { N = 64 };
    salvo_kernel *ku = kernel(f, img_separate_uint_spv, sizeof img_separate_uint_spv,
                              "img_separate_uint");
    salvo_image *ui = image(f, SALVO_IMAGE_2D, SALVO_FORMAT_R32_UINT, N, 1, 0, 0);
    uint32_t uv[N];
    for (uint32_t i = 0; i < N; i++)
        uv[i] = 7 * i + 1;
    assert_int_equal(salvo_image_write(ui, NULL, uv, sizeof uv), SALVO_OK);
    salvo_buffer *uout = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, N * 4, SALVO_DOMAIN_HOST, &uout), SALVO_OK);
    salvo_binding ub[3] = {{.binding = 0, .image = ui}, {.binding = 1, .sampler = smp},
                           {.binding = 2, .buffer = uout}};
    assert_int_equal(salvo_launch(f->st, ku, groups, ub, 3, NULL, 0), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    uint32_t ugot[N];
    assert_int_equal(salvo_buffer_read(uout, 0, ugot, sizeof ugot), SALVO_OK);
    assert_memory_equal(ugot, uv, sizeof ugot);
    salvo_sampler *linear = NULL;
    salvo_sampler_desc ld = {.filter = SALVO_FILTER_LINEAR};
    assert_int_equal(salvo_sampler_create(f->dev, &ld, &linear), SALVO_OK);
    ub[1].sampler = linear;
    assert_int_equal(salvo_launch(f->st, ku, groups, ub, 3, NULL, 0), SALVO_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(salvo_last_error(), "binding 1 (a sampler) with binding 0 (a texture): "
                                               "a linear sampler on format R32_UINT"));
    salvo_sampler_destroy(linear);
    salvo_buffer_destroy(uout);
    salvo_image_destroy(ui);
    salvo_kernel_destroy(ku);
    salvo_buffer_destroy(out);
    salvo_sampler_destroy(smp);
    salvo_image_destroy(arr);
    salvo_kernel_destroy(k);
}

/* Launches that read and write one image in place, copies in and out
 * around them, all in one batch: each sees the one before (the layer
 * reports any missing barrier). */
static void hazards_between_launches(void **state)
{
    fixture *f = *state;
    enum { W = 24, H = 16, N = 20 };
    salvo_kernel *k = kernel(f, img_add_spv, sizeof img_add_spv, "img_add");
    salvo_image *img = image(f, SALVO_IMAGE_2D, SALVO_FORMAT_R32_UINT, W, H, 1, 1);
    salvo_buffer *in = NULL, *out = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, W * H * 4, SALVO_DOMAIN_HOST, &in), SALVO_OK);
    assert_int_equal(salvo_buffer_create(f->dev, W * H * 4, SALVO_DOMAIN_DEVICE, &out), SALVO_OK);
    uint32_t *p = NULL;
    assert_int_equal(salvo_buffer_map(in, (void **)&p), SALVO_OK);
    for (uint32_t i = 0; i < W * H; i++)
        p[i] = i;
    salvo_binding bd = {.binding = 0, .image = img};
    const uint32_t groups[3] = {W / 8, H / 8, 1};
    assert_int_equal(salvo_copy_buffer_to_image(f->st, in, 0, img, NULL), SALVO_OK);
    for (uint32_t i = 1; i <= N; i++) {
        const uint32_t v = i;
        assert_int_equal(salvo_launch(f->st, k, groups, &bd, 1, &v, sizeof v), SALVO_OK);
    }
    assert_int_equal(salvo_copy_image_to_buffer(f->st, img, NULL, out, 0), SALVO_OK);
    /* The image is written again after the copy out read it. */
    const uint32_t big = 1000000;
    assert_int_equal(salvo_launch(f->st, k, groups, &bd, 1, &big, sizeof big), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    static uint32_t got[W * H];
    assert_int_equal(salvo_buffer_read(out, 0, got, sizeof got), SALVO_OK);
    for (uint32_t i = 0; i < W * H; i++)
        assert_int_equal(got[i], i + N * (N + 1) / 2);
    assert_int_equal(salvo_image_read(img, NULL, got, sizeof got), SALVO_OK);
    for (uint32_t i = 0; i < W * H; i++)
        assert_int_equal(got[i], i + N * (N + 1) / 2 + big);
    salvo_buffer_destroy(in);
    salvo_buffer_destroy(out);
    salvo_image_destroy(img);
    salvo_kernel_destroy(k);
}

/* Copy in, blur, copy out: captured once, replayed on new input. */
static void images_in_graphs(void **state)
{
    fixture *f = *state;
    enum { W = 16, H = 16 };
    salvo_kernel *k = kernel(f, img_blur_spv, sizeof img_blur_spv, "img_blur");
    salvo_image *a = image(f, SALVO_IMAGE_2D, SALVO_FORMAT_R32_FLOAT, W, H, 1, 1);
    salvo_image *b = image(f, SALVO_IMAGE_2D, SALVO_FORMAT_R32_FLOAT, W, H, 1, 1);
    salvo_buffer *in = NULL, *out = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, W * H * 4, SALVO_DOMAIN_HOST, &in), SALVO_OK);
    assert_int_equal(salvo_buffer_create(f->dev, W * H * 4, SALVO_DOMAIN_HOST, &out), SALVO_OK);
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    assert_int_equal(salvo_copy_buffer_to_image(f->st, in, 0, a, NULL), SALVO_OK);
    salvo_binding bd[2] = {{.binding = 0, .image = a}, {.binding = 1, .image = b}};
    const uint32_t groups[3] = {W / 8, H / 8, 1};
    assert_int_equal(salvo_launch(f->st, k, groups, bd, 2, NULL, 0), SALVO_OK);
    assert_int_equal(salvo_copy_image_to_buffer(f->st, b, NULL, out, 0), SALVO_OK);
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_OK);
    assert_int_equal(salvo_graph_node_count(g), 3);
    /* The graph holds the images: the handles can go now. */
    salvo_image_destroy(a);
    salvo_image_destroy(b);
    float *pin = NULL, *pout = NULL;
    assert_int_equal(salvo_buffer_map(in, (void **)&pin), SALVO_OK);
    assert_int_equal(salvo_buffer_map(out, (void **)&pout), SALVO_OK);
    static float src[H][W];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < W * H; i++)
            src[i / W][i % W] = (float)((i * (round + 3)) % 17);
        memcpy(pin, src, sizeof src);
        assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                assert_true(fabsf(pout[y * W + x] - blur_at(&src[0][0], W, H, x, y)) <= 1e-5f);
    }
    salvo_graph_destroy(g);
    salvo_buffer_destroy(in);
    salvo_buffer_destroy(out);
    salvo_kernel_destroy(k);
}

/* Bad input gets a clear status and changes nothing. */
/* An image or a buffer larger than any heap, or an image past the
 * format's largest resource, is refused as out of device memory with no
 * allocation asked of the driver (which would be invalid usage: the
 * validation layer, on here, fails the test at teardown). */
static void too_large_for_the_device(void **state)
{
    fixture *f = *state;
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(f->dev, &info), SALVO_OK);
    uint64_t heap = 0;
    for (uint32_t i = 0; i < info.memory_heap_count; i++)
        heap = info.memory_heaps[i].size > heap ? info.memory_heaps[i].size : heap;
    /* 16384 a side, 16 bytes a texel: 4 GiB, past lavapipe's largest
     * resource and its heap; a device whose sides stop short says so. */
    salvo_image *img = NULL;
    salvo_image_desc big = {SALVO_IMAGE_2D, SALVO_FORMAT_RGBA32_FLOAT, 16384, 16384, 1, 1, 0};
    salvo_status st = salvo_image_create(f->dev, &big, &img);
    if (st == SALVO_ERROR_INVALID_ARGUMENT && strstr(salvo_last_error(), "limits"))
        print_message("16384 texels a side is past this device's limits: %s\n",
                      salvo_last_error());
    else if (heap < (4ull << 30))
        assert_int_equal(st, SALVO_ERROR_OUT_OF_DEVICE_MEMORY);
    else if (st == SALVO_OK)
        salvo_image_destroy(img), img = NULL;
    assert_null(img);
    salvo_buffer *b = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, heap + 4096, SALVO_DOMAIN_DEVICE, &b),
                     SALVO_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_null(b);
    /* Nothing was left behind, and the device still works. */
    img = image(f, SALVO_IMAGE_2D, SALVO_FORMAT_R32_FLOAT, 4, 4, 1, 1);
    salvo_image_destroy(img);
}

/* salvo's copy of volk's global for an instance function: another
 * thread's device open or enumerate rewrites these while they load, so
 * nothing may call through them once a device is open. */
extern PFN_vkGetPhysicalDeviceImageFormatProperties
    salvo_volk_vkGetPhysicalDeviceImageFormatProperties;

static int instance_calls;
static VkResult VKAPI_CALL counted_format_properties(VkPhysicalDevice pd, VkFormat format,
                                                     VkImageType type, VkImageTiling tiling,
                                                     VkImageUsageFlags usage,
                                                     VkImageCreateFlags flags,
                                                     VkImageFormatProperties *out)
{
    (void)pd, (void)format, (void)type, (void)tiling, (void)usage, (void)flags, (void)out;
    instance_calls++;
    return VK_ERROR_FORMAT_NOT_SUPPORTED;
}

/* Creating an image asks the instance nothing (its limits were read at
 * the device's open): with volk's pointer swapped for one that counts,
 * images of every type are made without a call. */
static void image_create_calls_no_instance_function(void **state)
{
    fixture *f = *state;
    PFN_vkGetPhysicalDeviceImageFormatProperties saved =
        salvo_volk_vkGetPhysicalDeviceImageFormatProperties;
    salvo_volk_vkGetPhysicalDeviceImageFormatProperties = counted_format_properties;
    instance_calls = 0;
    salvo_image *a = image(f, SALVO_IMAGE_1D, SALVO_FORMAT_R32_FLOAT, 16, 0, 0, 0);
    salvo_image *b = image(f, SALVO_IMAGE_2D, SALVO_FORMAT_RGBA8_UNORM, 16, 16, 0, 0);
    salvo_image *c = image(f, SALVO_IMAGE_3D, SALVO_FORMAT_R32_UINT, 4, 4, 4, 0);
    salvo_image *d = image(f, SALVO_IMAGE_2D_ARRAY, SALVO_FORMAT_R16_FLOAT, 8, 8, 0, 3);
    salvo_volk_vkGetPhysicalDeviceImageFormatProperties = saved;
    assert_int_equal(instance_calls, 0);
    salvo_image_destroy(a);
    salvo_image_destroy(b);
    salvo_image_destroy(c);
    salvo_image_destroy(d);
}

static void bad_input(void **state)
{
    fixture *f = *state;
    salvo_image *img = NULL;
    salvo_image_desc d = {SALVO_IMAGE_2D, SALVO_FORMAT_R32_FLOAT, 8, 8, 1, 1, 0};
    assert_int_equal(salvo_image_create(NULL, &d, &img), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_image_create(f->dev, NULL, &img), SALVO_ERROR_INVALID_ARGUMENT);
    salvo_image_desc bad = d;
    bad.width = 0;
    assert_int_equal(salvo_image_create(f->dev, &bad, &img), SALVO_ERROR_INVALID_ARGUMENT);
    bad = d;
    bad.format = (salvo_format)999;
    assert_int_equal(salvo_image_create(f->dev, &bad, &img), SALVO_ERROR_INVALID_ARGUMENT);
    bad = d;
    bad.depth = 4; /* a 2D image */
    assert_int_equal(salvo_image_create(f->dev, &bad, &img), SALVO_ERROR_INVALID_ARGUMENT);
    bad = d;
    bad.width = 1u << 30;
    assert_int_equal(salvo_image_create(f->dev, &bad, &img), SALVO_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(salvo_last_error(), "limits"));
    assert_null(img);

    salvo_image *a = image(f, SALVO_IMAGE_2D, SALVO_FORMAT_R32_FLOAT, 8, 8, 1, 1);
    float buf[64] = {0};
    assert_int_equal(salvo_image_write(a, NULL, buf, 100), SALVO_ERROR_INVALID_ARGUMENT);
    salvo_image_region outside = {.x = 6, .width = 4};
    assert_int_equal(salvo_image_read(a, &outside, buf, 4 * 8 * 4), SALVO_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(salvo_last_error(), "outside"));

    /* Launch mismatches: a 3D image where a 2D one is declared, a float
     * image where uint is read, a buffer where an image is, a missing
     * sampler. */
    salvo_kernel *add = kernel(f, img_add_spv, sizeof img_add_spv, "img_add");
    salvo_kernel *blur = kernel(f, img_blur_spv, sizeof img_blur_spv, "img_blur");
    salvo_kernel *smpk = kernel(f, img_sample_spv, sizeof img_sample_spv, "img_sample");
    salvo_image *vol = image(f, SALVO_IMAGE_3D, SALVO_FORMAT_R32_FLOAT, 4, 4, 4, 0);
    salvo_image *rgba = image(f, SALVO_IMAGE_2D, SALVO_FORMAT_RGBA8_UNORM, 8, 8, 1, 1);
    salvo_buffer *b = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, 200, SALVO_DOMAIN_DEVICE, &b), SALVO_OK);
    const uint32_t g1[3] = {1, 1, 1};
    const uint32_t v = 1;
    salvo_binding wrong_type[2] = {{.binding = 0, .image = vol}, {.binding = 1, .image = a}};
    assert_int_equal(salvo_launch(f->st, blur, g1, wrong_type, 2, NULL, 0),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(salvo_last_error(), "3D"));
    salvo_binding wrong_format[2] = {{.binding = 0, .image = rgba}, {.binding = 1, .image = a}};
    assert_int_equal(salvo_launch(f->st, blur, g1, wrong_format, 2, NULL, 0),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(salvo_last_error(), "R32_FLOAT"));
    salvo_binding wrong_class = {.binding = 0, .image = a};
    assert_int_equal(salvo_launch(f->st, add, g1, &wrong_class, 1, &v, sizeof v),
                     SALVO_ERROR_INVALID_ARGUMENT);
    salvo_binding a_buffer = {.binding = 0, .buffer = b};
    assert_int_equal(salvo_launch(f->st, add, g1, &a_buffer, 1, &v, sizeof v),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(salvo_last_error(), "not a buffer"));
    salvo_binding no_sampler[2] = {{.binding = 0, .image = a}, {.binding = 1, .buffer = b}};
    const uint32_t push[2] = {1, 1};
    assert_int_equal(salvo_launch(f->st, smpk, g1, no_sampler, 2, push, sizeof push),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(salvo_last_error(), "sampler"));
    salvo_binding image_for_buffer[2] = {{.binding = 0, .image = a, .sampler = NULL},
                                         {.binding = 1, .image = a}};
    assert_int_equal(salvo_launch(f->st, smpk, g1, image_for_buffer, 2, push, sizeof push),
                     SALVO_ERROR_INVALID_ARGUMENT);
    /* Samplers: unnormalized coordinates only clamp. */
    salvo_sampler *s = NULL;
    salvo_sampler_desc sd = {.unnormalized = true, .address = {SALVO_ADDRESS_REPEAT}};
    assert_int_equal(salvo_sampler_create(f->dev, &sd, &s), SALVO_ERROR_INVALID_ARGUMENT);
    assert_null(s);
    /* Copies: a region past the buffer's end, an offset not a multiple of
     * the texel. */
    assert_int_equal(salvo_copy_image_to_buffer(f->st, a, NULL, b, 0), SALVO_ERROR_INVALID_ARGUMENT);
    salvo_image_region small = {.width = 2, .height = 2};
    assert_int_equal(salvo_copy_image_to_buffer(f->st, a, &small, b, 2),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_copy_image_to_buffer(f->st, a, &small, b, 4), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);

    salvo_buffer_destroy(b);
    salvo_image_destroy(vol);
    salvo_image_destroy(rgba);
    salvo_image_destroy(a);
    salvo_kernel_destroy(add);
    salvo_kernel_destroy(blur);
    salvo_kernel_destroy(smpk);
}

/* A kernel binding an array of twelve storage images (descriptor sets,
 * not pushed) runs in batches of one and two launches and as a graph's
 * one node: every descriptor pool has room for at least one launch of any
 * kind (pools once kept a quarter of their room for each image type, and
 * such a launch could never be recorded). */
static void image_arrays_in_small_pools(void **state)
{
    fixture *f = *state;
    enum { IMAGES = 12 };
    char src[1024];
    int n = snprintf(src, sizeof src,
                     "#version 450\nlayout(local_size_x = 1) in;\n"
                     "layout(binding = 0, r32ui) uniform writeonly uimage2D imgs[%d];\n"
                     "layout(push_constant) uniform P { uint add; } p;\nvoid main() {\n",
                     IMAGES);
    for (int i = 0; i < IMAGES; i++)
        n += snprintf(src + n, sizeof src - (size_t)n,
                      "  imageStore(imgs[%d], ivec2(0), uvec4(%du + p.add));\n", i, i + 1);
    snprintf(src + n, sizeof src - (size_t)n, "}\n");
    salvo_kernel_desc kd = {.glsl = src, .name = "image_array"};
    salvo_kernel *k = NULL;
    salvo_status r = salvo_kernel_create(f->dev, &kd, &k);
    if (r == SALVO_ERROR_UNSUPPORTED)
        skip(); /* no runtime GLSL, or too many images for the device */
    assert_int_equal(r, SALVO_OK);
    salvo_image *img[IMAGES];
    salvo_binding b[IMAGES];
    for (int i = 0; i < IMAGES; i++) {
        img[i] = image(f, SALVO_IMAGE_2D, SALVO_FORMAT_R32_UINT, 1, 1, 1, 1);
        b[i] = (salvo_binding){.binding = 0, .element = (uint32_t)i, .image = img[i]};
    }
    uint32_t groups[3] = {1, 1, 1};
    salvo_image_region one = {0, 0, 0, 1, 1, 1, 0, 1};
    for (uint32_t batch = 1; batch <= 3; batch++) {
        salvo_stream *st = NULL;
        salvo_stream_desc sd = {.batch_size = batch < 3 ? batch : 0};
        assert_int_equal(salvo_stream_create(f->dev, &sd, &st), SALVO_OK);
        uint32_t add = 100 * batch;
        if (batch < 3) { /* three launches, the last one's values stay */
            for (int i = 0; i < 3; i++) {
                r = salvo_launch(st, k, groups, b, IMAGES, &add, sizeof add);
                if (r != SALVO_OK)
                    fail_msg("batch %u: %s: %s", batch, salvo_status_string(r),
                             salvo_last_error());
            }
        } else { /* a graph of that launch, replayed */
            assert_int_equal(salvo_stream_begin_capture(st), SALVO_OK);
            assert_int_equal(salvo_launch(st, k, groups, b, IMAGES, &add, sizeof add), SALVO_OK);
            salvo_graph *g = NULL;
            assert_int_equal(salvo_stream_end_capture(st, &g), SALVO_OK);
            r = salvo_graph_launch(g, st);
            if (r != SALVO_OK)
                fail_msg("graph: %s: %s", salvo_status_string(r), salvo_last_error());
            salvo_graph_destroy(g);
        }
        assert_int_equal(salvo_stream_synchronize(st), SALVO_OK);
        for (int i = 0; i < IMAGES; i++) {
            uint32_t v = 0;
            assert_int_equal(salvo_image_read(img[i], &one, &v, sizeof v), SALVO_OK);
            assert_int_equal(v, (uint32_t)i + 1 + add);
        }
        salvo_stream_destroy(st);
    }
    for (int i = 0; i < IMAGES; i++)
        salvo_image_destroy(img[i]);
    salvo_kernel_destroy(k);
}

/* Two streams copy into different layers of one 2D-array image side by
 * side, as CUDA allows work on disjoint parts of an allocation: each copy
 * changes the layout of its own layers only (copies once changed every
 * layer's, racing the other stream's copy under synchronization
 * validation), and both layers read back. */
static void streams_copy_into_their_own_layers(void **state)
{
    fixture *f = *state;
    enum { W = 64, H = 64 };
    salvo_image *arr = image(f, SALVO_IMAGE_2D_ARRAY, SALVO_FORMAT_R32_UINT, W, H, 0, 2);
    salvo_stream *st[2] = {NULL, NULL};
    salvo_buffer *src[2] = {NULL, NULL};
    static uint32_t texels[2][H][W], back[2][H][W];
    for (int l = 0; l < 2; l++) {
        assert_int_equal(salvo_stream_create(f->dev, NULL, &st[l]), SALVO_OK);
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                texels[l][y][x] = (uint32_t)(l * 100000 + y * W + x);
        assert_int_equal(salvo_buffer_create(f->dev, sizeof texels[l], SALVO_DOMAIN_HOST, &src[l]),
                         SALVO_OK);
        assert_int_equal(salvo_buffer_write(src[l], 0, texels[l], sizeof texels[l]), SALVO_OK);
    }
    for (int round = 0; round < 20; round++)
        for (int l = 0; l < 2; l++) {
            salvo_image_region r = {.layer = (uint32_t)l, .layers = 1};
            assert_int_equal(salvo_copy_buffer_to_image(st[l], src[l], 0, arr, &r), SALVO_OK);
            assert_int_equal(salvo_stream_flush(st[l]), SALVO_OK);
        }
    for (int l = 0; l < 2; l++)
        assert_int_equal(salvo_stream_synchronize(st[l]), SALVO_OK);
    assert_int_equal(salvo_image_read(arr, NULL, back, sizeof back), SALVO_OK);
    assert_memory_equal(texels, back, sizeof back);
    for (int l = 0; l < 2; l++) {
        salvo_stream_destroy(st[l]);
        salvo_buffer_destroy(src[l]);
    }
    salvo_image_destroy(arr);
}

/* An array of samplers whose elements go with different textures: each
 * element is checked against the texture it samples, not every texture
 * the array meets (a linear sampler used only with a float texture was
 * once refused for the uint texture its neighbour samples). */
static void sampler_array_elements_checked_apart(void **state)
{
    fixture *f = *state;
    static const char src[] =
        "#version 450\nlayout(local_size_x = 1) in;\n"
        "layout(binding = 0) uniform utexture2D t;\n"
        "layout(binding = 1) uniform texture2D u;\n"
        "layout(binding = 2) uniform sampler s[2];\n"
        "layout(std430, binding = 3) buffer Out { float o[]; };\n"
        "void main() {\n"
        "  o[0] = float(texelFetch(usampler2D(t, s[0]), ivec2(0), 0).x);\n"
        "  o[1] = texture(sampler2D(u, s[1]), vec2(0.5)).x;\n"
        "}\n";
    salvo_kernel_desc kd = {.glsl = src, .name = "two_samplers"};
    salvo_kernel *k = NULL;
    salvo_status r = salvo_kernel_create(f->dev, &kd, &k);
    if (r == SALVO_ERROR_UNSUPPORTED)
        skip(); /* no runtime GLSL */
    assert_int_equal(r, SALVO_OK);
    salvo_image *t = image(f, SALVO_IMAGE_2D, SALVO_FORMAT_R32_UINT, 1, 1, 1, 1);
    salvo_image *u = image(f, SALVO_IMAGE_2D, SALVO_FORMAT_R32_FLOAT, 1, 1, 1, 1);
    uint32_t nine = 9;
    float quarter = 0.25f;
    assert_int_equal(salvo_image_write(t, NULL, &nine, 4), SALVO_OK);
    assert_int_equal(salvo_image_write(u, NULL, &quarter, 4), SALVO_OK);
    salvo_sampler *nearest = NULL, *linear = NULL;
    salvo_sampler_desc ld = {.filter = SALVO_FILTER_LINEAR};
    assert_int_equal(salvo_sampler_create(f->dev, NULL, &nearest), SALVO_OK);
    assert_int_equal(salvo_sampler_create(f->dev, &ld, &linear), SALVO_OK);
    salvo_buffer *out = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, 8, SALVO_DOMAIN_HOST, &out), SALVO_OK);
    salvo_binding b[5] = {{.binding = 0, .image = t},
                          {.binding = 1, .image = u},
                          {.binding = 2, .element = 0, .sampler = nearest},
                          {.binding = 2, .element = 1, .sampler = linear},
                          {.binding = 3, .buffer = out}};
    uint32_t groups[3] = {1, 1, 1};
    r = salvo_launch(f->st, k, groups, b, 5, NULL, 0);
    if (r != SALVO_OK)
        fail_msg("launch: %s: %s", salvo_status_string(r), salvo_last_error());
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    float o[2];
    assert_int_equal(salvo_buffer_read(out, 0, o, sizeof o), SALVO_OK);
    assert_true(o[0] == 9.0f && o[1] == 0.25f);
    /* The linear sampler where the uint texture is sampled: refused. */
    b[2].sampler = linear;
    assert_int_equal(salvo_launch(f->st, k, groups, b, 5, NULL, 0), SALVO_ERROR_INVALID_ARGUMENT);
    salvo_buffer_destroy(out);
    salvo_sampler_destroy(nearest);
    salvo_sampler_destroy(linear);
    salvo_image_destroy(t);
    salvo_image_destroy(u);
    salvo_kernel_destroy(k);
}

int main(void)
{
    lava_require_device();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(formats_round_trip, lava_setup, teardown),
        cmocka_unit_test_setup_teardown(image_types, lava_setup, teardown),
        cmocka_unit_test_setup_teardown(blur_matches_cpu, lava_setup, teardown),
        cmocka_unit_test_setup_teardown(resize_through_sampler, lava_setup, teardown),
        cmocka_unit_test_setup_teardown(separate_texture_and_sampler, lava_setup, teardown),
        cmocka_unit_test_setup_teardown(hazards_between_launches, lava_setup, teardown),
        cmocka_unit_test_setup_teardown(images_in_graphs, lava_setup, teardown),
        cmocka_unit_test_setup_teardown(bad_input, lava_setup, teardown),
        cmocka_unit_test_setup_teardown(too_large_for_the_device, lava_setup, teardown),
        cmocka_unit_test_setup_teardown(image_create_calls_no_instance_function, lava_setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(image_arrays_in_small_pools, lava_setup, teardown),
        cmocka_unit_test_setup_teardown(sampler_array_elements_checked_apart, lava_setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(streams_copy_into_their_own_layers, lava_setup,
                                        teardown),
    };
    return lava_run_tests(tests);
}
