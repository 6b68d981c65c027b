/*
 * image-bench: one 2D filter on images beside the same filter on buffers.
 *
 * A 3x3 box blur (float32, one channel, edges clamped) of an N x N grid,
 * written three ways over the same data:
 *  - buffer:        a storage buffer in, a storage buffer out, row-major;
 *  - storage_image: R32_FLOAT storage images, imageLoad/imageStore;
 *  - sampled_image: an R32_FLOAT sampled image read through a sampler
 *                   (textureLod, nearest, clamp to edge), written to a
 *                   storage image.
 * For each size and variant: one launch is checked against a CPU reference
 * (1e-5; a mismatch exits 1), then a chain of --launches launches
 * ping-ponging between two resources on one stream, one synchronize, is
 * run --reps times (after one untimed chain). Each figure is the median
 * over the chains of the time per launch: GPU time between two events
 * recorded around the chain (where the device has timestamps), and host
 * wall time from the first record to the synchronize's return. The time
 * per launch includes the barrier between dependent launches. Bandwidth
 * counts 8 bytes per texel per launch (each texel read once, neighbours'
 * cache hits aside, and written once), from the GPU time where there is
 * one. "x buffer" is a variant's time per launch over the buffer's.
 *
 * Prints a table; --json FILE writes one JSON line per variant and size.
 * Sizes default to 1024, 2048 and 4096 (256 and 512 on a CPU device such
 * as lavapipe, unless --sizes is given).
 *
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <salvo/salvo.h>

#include "image_bench_buffer.spv.h"
#include "image_bench_sampled.spv.h"
#include "image_bench_storage.spv.h"

/* Any status but SALVO_OK fails the run: nothing here expects a timeout
 * or a pending result where it checks. */
#define CHECK(call)                                                                                \
    do {                                                                                           \
        salvo_status st_ = (call);                                                                 \
        if (st_ != SALVO_OK) {                                                                     \
            fprintf(stderr, "%s:%d: %s: %s\n  %s\n", __FILE__, __LINE__, #call,                    \
                    salvo_status_string(st_), salvo_last_error());                                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

enum {
    LOCAL = 16, /* the shaders' local size, in x and in y */
    MAX_SIZES = 16,
    MAX_REPS = 63
};

typedef enum variant {
    V_BUFFER,
    V_STORAGE,
    V_SAMPLED,
    V_COUNT
} variant;

static const char *const variant_name[V_COUNT] = {"buffer", "storage_image", "sampled_image"};

typedef struct opts {
    uint32_t sizes[MAX_SIZES];
    int size_count;
    int launches;
    int reps;
    const char *json;
} opts;

typedef struct bench {
    salvo_device *dev;
    salvo_device_info info;
    salvo_kernel *kernel[V_COUNT];
    salvo_sampler *sampler;
    bool offered[V_COUNT];
    bool timestamps; /* salvo_event_elapsed works on this device */
    FILE *json;
} bench;

/* The two resources a chain ping-pongs between: [0] holds the input. */
typedef struct pair {
    salvo_buffer *buf[2];
    salvo_image *img[2];
} pair;

typedef struct result {
    bool done;
    double gpu_ms; /* per launch; < 0: no timestamps */
    double host_ms;
} result;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Values in [0, 1), different at every texel, the same for every variant. */
static void fill_input(float *v, size_t count)
{
    uint32_t x = 2463534242u;
    for (size_t i = 0; i < count; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        v[i] = (float)(x >> 8) / 16777216.0f;
    }
}

/* The reference, summing in the shaders' order. */
static void blur_cpu(const float *src, float *dst, int n)
{
    for (int y = 0; y < n; y++)
        for (int x = 0; x < n; x++) {
            float acc = 0.0f;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int sx = x + dx < 0 ? 0 : x + dx >= n ? n - 1 : x + dx;
                    int sy = y + dy < 0 ? 0 : y + dy >= n ? n - 1 : y + dy;
                    acc += src[(size_t)sy * n + sx];
                }
            dst[(size_t)y * n + x] = acc / 9.0f;
        }
}

static salvo_kernel *kernel(salvo_device *dev, const uint32_t *spv, size_t size, const char *name)
{
    salvo_kernel_desc kd = {.spirv = spv, .spirv_size = size, .name = name};
    salvo_kernel *k = NULL;
    CHECK(salvo_kernel_create(dev, &kd, &k));
    return k;
}

static void pair_create(bench *b, variant v, uint32_t n, const float *input, pair *p)
{
    memset(p, 0, sizeof *p);
    uint64_t bytes = (uint64_t)n * n * sizeof(float);
    for (int i = 0; i < 2; i++) {
        if (v == V_BUFFER) {
            CHECK(salvo_buffer_create(b->dev, bytes, SALVO_DOMAIN_DEVICE, &p->buf[i]));
        } else {
            salvo_image_desc d = {
                .type = SALVO_IMAGE_2D,
                .format = SALVO_FORMAT_R32_FLOAT,
                .width = n,
                .height = n,
                .usage = SALVO_IMAGE_STORAGE | (v == V_SAMPLED ? SALVO_IMAGE_SAMPLED : 0),
            };
            CHECK(salvo_image_create(b->dev, &d, &p->img[i]));
        }
    }
    if (v == V_BUFFER)
        CHECK(salvo_buffer_write(p->buf[0], 0, input, bytes));
    else
        CHECK(salvo_image_write(p->img[0], NULL, input, bytes));
}

static void pair_destroy(pair *p)
{
    for (int i = 0; i < 2; i++) {
        salvo_buffer_destroy(p->buf[i]);
        salvo_image_destroy(p->img[i]);
    }
}

/* One blur from resource `from` (0 or 1) into the other. */
static void launch(bench *b, salvo_stream *st, variant v, uint32_t n, const pair *p, int from)
{
    const uint32_t groups[3] = {(n + LOCAL - 1) / LOCAL, (n + LOCAL - 1) / LOCAL, 1};
    salvo_binding bd[2] = {{.binding = 0}, {.binding = 1}};
    if (v == V_BUFFER) {
        int32_t push[2] = {(int32_t)n, (int32_t)n};
        bd[0].buffer = p->buf[from];
        bd[1].buffer = p->buf[!from];
        CHECK(salvo_launch(st, b->kernel[v], groups, bd, 2, push, sizeof push));
        return;
    }
    bd[0].image = p->img[from];
    bd[1].image = p->img[!from];
    if (v == V_SAMPLED)
        bd[0].sampler = b->sampler;
    CHECK(salvo_launch(st, b->kernel[v], groups, bd, 2, NULL, 0));
}

/* One launch from the input against the CPU's blur of it; exits 1 on a
 * mismatch. */
static void verify(bench *b, salvo_stream *st, variant v, uint32_t n, const pair *p,
                   const float *want, float *got)
{
    uint64_t bytes = (uint64_t)n * n * sizeof(float);
    launch(b, st, v, n, p, 0);
    CHECK(salvo_stream_synchronize(st));
    if (v == V_BUFFER)
        CHECK(salvo_buffer_read(p->buf[1], 0, got, bytes));
    else
        CHECK(salvo_image_read(p->img[1], NULL, got, bytes));
    size_t count = (size_t)n * n, worst = 0;
    double max_err = 0.0;
    for (size_t i = 0; i < count; i++) {
        double err = fabs((double)got[i] - (double)want[i]);
        if (!(err <= max_err)) { /* NaN counts as the worst */
            max_err = isnan(err) ? INFINITY : err;
            worst = i;
        }
    }
    if (max_err > 1e-5) {
        fprintf(stderr, "%s %ux%u: wrong result at (%zu, %zu): %.9g, want %.9g\n",
                variant_name[v], n, n, worst % n, worst / n, got[worst], want[worst]);
        exit(1);
    }
}

/* reps chains of launches ping-ponging, after one untimed one. */
static result run_variant(bench *b, const opts *o, variant v, uint32_t n, const float *input,
                          const float *want, float *scratch)
{
    result r = {.done = true, .gpu_ms = -1.0};
    /* One batch holds the whole chain (and its two events), up to 1024
     * launches: the GPU starts it at the synchronize, with no submission
     * gaps inside. */
    uint32_t batch = o->launches + 2 < 1024 ? (uint32_t)o->launches + 2 : 1024;
    salvo_stream_desc sd = {.batch_size = batch, .first_batch = batch};
    salvo_stream *st = NULL;
    salvo_event *ev[2] = {NULL, NULL};
    CHECK(salvo_stream_create(b->dev, &sd, &st));
    CHECK(salvo_event_create(b->dev, &ev[0]));
    CHECK(salvo_event_create(b->dev, &ev[1]));
    pair p;
    pair_create(b, v, n, input, &p);
    verify(b, st, v, n, &p, want, scratch);

    double gpu[MAX_REPS + 1], host[MAX_REPS + 1];
    bool timed = b->timestamps;
    for (int rep = -1; rep < o->reps; rep++) {
        double t0 = now_s();
        CHECK(salvo_event_record(ev[0], st));
        for (int i = 0; i < o->launches; i++)
            launch(b, st, v, n, &p, i & 1);
        CHECK(salvo_event_record(ev[1], st));
        CHECK(salvo_stream_synchronize(st));
        double t = now_s() - t0;
        if (rep < 0)
            continue; /* warm-up: lazy driver work, clocks ramping up */
        host[rep] = t * 1e3 / o->launches;
        if (timed) {
            uint64_t ns = 0;
            salvo_status s = salvo_event_elapsed(ev[0], ev[1], &ns);
            if (s == SALVO_ERROR_UNSUPPORTED) {
                timed = b->timestamps = false;
            } else {
                CHECK(s);
                gpu[rep] = (double)ns * 1e-6 / o->launches;
            }
        }
    }
    r.host_ms = median(host, o->reps);
    if (timed)
        r.gpu_ms = median(gpu, o->reps);
    pair_destroy(&p);
    salvo_event_destroy(ev[0]);
    salvo_event_destroy(ev[1]);
    salvo_stream_destroy(st);
    return r;
}

static double gbps(uint32_t n, const result *r)
{
    double ms = r->gpu_ms >= 0 ? r->gpu_ms : r->host_ms;
    return 8.0 * n * n / (ms * 1e-3) / 1e9;
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", (unsigned char)*s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static void report(bench *b, const opts *o, uint32_t n, const result res[V_COUNT])
{
    for (int v = 0; v < V_COUNT; v++) {
        const result *r = &res[v];
        char label[32];
        snprintf(label, sizeof label, "%ux%u", n, n);
        if (!r->done) {
            printf("%-11s %-14s  (R32_FLOAT %s images not offered by the device)\n", label,
                   variant_name[v], v == V_SAMPLED ? "sampled and storage" : "storage");
            continue;
        }
        double ms = r->gpu_ms >= 0 ? r->gpu_ms : r->host_ms;
        const result *base = &res[V_BUFFER];
        double base_ms = base->gpu_ms >= 0 ? base->gpu_ms : base->host_ms;
        char gpu[32];
        if (r->gpu_ms >= 0)
            snprintf(gpu, sizeof gpu, "%.4f", r->gpu_ms);
        else
            snprintf(gpu, sizeof gpu, "-");
        printf("%-11s %-14s %14s %15.4f %9.1f %9.2f\n", label, variant_name[v], gpu, r->host_ms,
               gbps(n, r), ms / base_ms);
        if (!b->json)
            continue;
        fprintf(b->json, "{\"variant\": \"%s\", \"size\": %u, \"ms_per_launch_gpu\": ",
                variant_name[v], n);
        if (r->gpu_ms >= 0)
            fprintf(b->json, "%.6g", r->gpu_ms);
        else
            fprintf(b->json, "null");
        fprintf(b->json,
                ", \"ms_per_launch_host\": %.6g, \"gbps\": %.6g, \"time_vs_buffer\": %.4g, "
                "\"launches\": %d, \"reps\": %d, \"device\": ",
                r->host_ms, gbps(n, r), ms / base_ms, o->launches, o->reps);
        json_string(b->json, b->info.name);
        fprintf(b->json, "}\n");
    }
    fflush(stdout);
}

static void bench_size(bench *b, const opts *o, uint32_t n)
{
    size_t count = (size_t)n * n;
    float *input = malloc(count * sizeof *input);
    float *want = malloc(count * sizeof *want);
    float *scratch = malloc(count * sizeof *scratch);
    if (!input || !want || !scratch) {
        fprintf(stderr, "out of host memory for %ux%u\n", n, n);
        exit(1);
    }
    fill_input(input, count);
    blur_cpu(input, want, (int)n);
    result res[V_COUNT] = {{0}};
    for (int v = 0; v < V_COUNT; v++)
        if (b->offered[v])
            res[v] = run_variant(b, o, (variant)v, n, input, want, scratch);
    report(b, o, n, res);
    free(input);
    free(want);
    free(scratch);
}

static int parse_sizes(const char *arg, opts *o)
{
    o->size_count = 0;
    const char *s = arg;
    while (*s) {
        char *end = NULL;
        errno = 0;
        unsigned long v = strtoul(s, &end, 10);
        if (end == s || errno || v < 1 || v > 65536 || o->size_count == MAX_SIZES ||
            (*end && *end != ','))
            return -1;
        o->sizes[o->size_count++] = (uint32_t)v;
        s = *end ? end + 1 : end;
    }
    return o->size_count ? 0 : -1;
}

static int positive(const char *arg, int max)
{
    char *end = NULL;
    long v = strtol(arg, &end, 10);
    return end != arg && !*end && v >= 1 && v <= max ? (int)v : -1;
}

int main(int argc, char **argv)
{
    opts o = {.launches = 50, .reps = 7};
    bool sizes_given = false;
    for (int i = 1; i < argc; i++) {
        bool more = i + 1 < argc;
        if (strcmp(argv[i], "--json") == 0 && more) {
            o.json = argv[++i];
        } else if (strcmp(argv[i], "--sizes") == 0 && more) {
            if (parse_sizes(argv[++i], &o) != 0)
                goto usage;
            sizes_given = true;
        } else if (strcmp(argv[i], "--reps") == 0 && more) {
            if ((o.reps = positive(argv[++i], MAX_REPS)) < 0)
                goto usage;
        } else if (strcmp(argv[i], "--launches") == 0 && more) {
            if ((o.launches = positive(argv[++i], 100000)) < 0)
                goto usage;
        } else {
            goto usage;
        }
    }

    bench b = {0};
    CHECK(salvo_device_create(NULL, &b.dev));
    CHECK(salvo_device_info_get(b.dev, &b.info));
    bool cpu = b.info.type == SALVO_DEVICE_TYPE_CPU;
    if (!sizes_given) {
        const uint32_t gpu_sizes[] = {1024, 2048, 4096}, cpu_sizes[] = {256, 512};
        o.size_count = cpu ? 2 : 3;
        memcpy(o.sizes, cpu ? cpu_sizes : gpu_sizes, (size_t)o.size_count * sizeof o.sizes[0]);
    }

    uint32_t usage = 0;
    CHECK(salvo_image_format_support(b.dev, SALVO_FORMAT_R32_FLOAT, &usage));
    b.offered[V_BUFFER] = true;
    b.offered[V_STORAGE] = (usage & SALVO_IMAGE_STORAGE) != 0;
    b.offered[V_SAMPLED] = (usage & (SALVO_IMAGE_STORAGE | SALVO_IMAGE_SAMPLED)) ==
                           (SALVO_IMAGE_STORAGE | SALVO_IMAGE_SAMPLED);
    b.kernel[V_BUFFER] = kernel(b.dev, image_bench_buffer_spv, sizeof image_bench_buffer_spv,
                                "image_bench_buffer");
    if (b.offered[V_STORAGE])
        b.kernel[V_STORAGE] = kernel(b.dev, image_bench_storage_spv,
                                     sizeof image_bench_storage_spv, "image_bench_storage");
    if (b.offered[V_SAMPLED]) {
        b.kernel[V_SAMPLED] = kernel(b.dev, image_bench_sampled_spv,
                                     sizeof image_bench_sampled_spv, "image_bench_sampled");
        salvo_sampler_desc sd = {
            .filter = SALVO_FILTER_NEAREST,
            .address = {SALVO_ADDRESS_CLAMP_TO_EDGE, SALVO_ADDRESS_CLAMP_TO_EDGE,
                        SALVO_ADDRESS_CLAMP_TO_EDGE},
        };
        CHECK(salvo_sampler_create(b.dev, &sd, &b.sampler));
    }
    for (int i = 0; i < o.size_count; i++)
        if ((uint64_t)o.sizes[i] * o.sizes[i] * sizeof(float) > b.info.max_storage_buffer_range) {
            fprintf(stderr, "%ux%u floats exceed the device's storage buffer range (%u bytes)\n",
                    o.sizes[i], o.sizes[i], b.info.max_storage_buffer_range);
            salvo_device_destroy(b.dev);
            return 2;
        }
    b.timestamps = true; /* until salvo_event_elapsed says otherwise */

    if (o.json) {
        b.json = fopen(o.json, "w");
        if (!b.json) {
            perror(o.json);
            return 1;
        }
    }
    printf("device %s, driver %s; 3x3 box blur, R32 float; chains of %d launches, medians of %d "
           "chains%s\n",
           b.info.name, b.info.driver_info, o.launches, o.reps,
           cpu && !sizes_given ? "; sizes scaled down for a CPU device" : "");
    printf("%-11s %-14s %14s %15s %9s %9s\n", "size", "variant", "gpu ms/launch",
           "host ms/launch", "GB/s", "x buffer");
    for (int i = 0; i < o.size_count; i++)
        bench_size(&b, &o, o.sizes[i]);
    /* Under the validation layer ($SALVO_VALIDATION=1) a message fails
     * the run: figures from misused Vulkan are no figures. */
    salvo_stats stats;
    CHECK(salvo_device_stats(b.dev, &stats));
    if (stats.validation_messages) {
        fprintf(stderr, "%llu validation message(s)\n",
                (unsigned long long)stats.validation_messages);
        return 1;
    }
    if (!b.timestamps)
        printf("(no GPU timestamps on this device: GB/s and ratios from host time)\n");
    printf("results checked against the CPU (1 launch per size and variant, 1e-5): ok\n");

    if (b.json && fclose(b.json) != 0) {
        perror(o.json);
        return 1;
    }
    salvo_sampler_destroy(b.sampler);
    for (int v = 0; v < V_COUNT; v++)
        salvo_kernel_destroy(b.kernel[v]);
    salvo_device_destroy(b.dev);
    return 0;

usage:
    fprintf(stderr,
            "usage: %s [--sizes N,N,...] [--launches R] [--reps N] [--json FILE]\n"
            "  defaults: --sizes 1024,2048,4096 (256,512 on a CPU device) --launches 50 "
            "--reps 7\n",
            argv[0]);
    return 2;
}
