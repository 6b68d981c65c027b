/*
 * salvo-demo: what batching buys, with every result checked.
 *
 * 1. A chain of 10,000 dependent launches of add.comp (each adds 1 to a
 *    1024-element buffer, reading what the previous launch wrote), first on a
 *    stream that submits and waits at every launch (batch 1), then on one
 *    with the device's batch size ($SALVO_BATCH or the default). Every
 *    element must be 10,000 after each.
 * 2. A large saxpy (64 MiB per array on a CPU device, 1 GiB otherwise):
 *    median of 5 runs after a warm-up; GB/s counts reading x and y and
 *    writing y. Sampled elements must match the CPU.
 *
 * The device is the preferred one, or $SALVO_DEVICE. Exit 0 only if every
 * result is correct.
 *
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <salvo/salvo.h>

#include "add.spv.h"
#include "saxpy.spv.h"

enum {
    CHAIN_LENGTH = 10000,
    CHAIN_ELEMENTS = 1024,
    SAXPY_RUNS = 5,
    SAXPY_SAMPLES = 1024,
    FILL_ELEMENTS = 1u << 20 /* host chunk used to fill the saxpy arrays */
};

#define MiB (1024.0 * 1024.0)
#define SAXPY_A 2.0f

/* Prints the failed call at once: salvo_last_error() only lasts until the
 * next salvo call, and cleanup makes some. */
#define CHECK(call)                                                                                \
    do {                                                                                           \
        status = (call);                                                                           \
        if (status < 0) {                                                                          \
            report_failure(#call, status);                                                         \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

/* For the demo's own steps, which have reported their failure already. */
#define PROPAGATE(call)                                                                            \
    do {                                                                                           \
        status = (call);                                                                           \
        if (status < 0)                                                                            \
            goto done;                                                                             \
    } while (0)

static void report_failure(const char *call, salvo_status status)
{
    const char *name = salvo_status_string(status);
    fprintf(stderr, "salvo-demo: %s failed: %s: %s\n", call, name, salvo_last_error());
}

/* Wrong results do not stop the demo: the remaining parts still run, and
 * the summary names every part that was wrong. */
static char wrong_parts[256];

static void wrong(const char *part, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "salvo-demo: WRONG in %s: ", part);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    if (!strstr(wrong_parts, part)) {
        size_t used = strlen(wrong_parts);
        snprintf(wrong_parts + used, sizeof wrong_parts - used, "%s%s", used ? "; " : "", part);
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Errors of salvo's own reach us through the status and salvo_last_error();
 * the validation layer's reach us only here. */
static void log_to_stderr(void *user, salvo_log_level level, const char *file, int line,
                          const char *message)
{
    (void)user;
    (void)line;
    if (level == SALVO_LOG_WARNING)
        fprintf(stderr, "salvo warning: %s\n", message);
    else if (level == SALVO_LOG_ERROR && file && strcmp(file, "validation") == 0)
        fprintf(stderr, "salvo validation error: %s\n", message);
}

static const char *type_name(salvo_device_type type)
{
    switch (type) {
    case SALVO_DEVICE_TYPE_INTEGRATED: return "integrated GPU";
    case SALVO_DEVICE_TYPE_DISCRETE: return "discrete GPU";
    case SALVO_DEVICE_TYPE_VIRTUAL: return "virtual GPU";
    case SALVO_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
    }
}

typedef struct demo {
    salvo_device *device;
    salvo_device_info info;
    uint32_t local_size; /* workgroup size of both kernels (spec constant 0) */
} demo;

static salvo_status kernel_create(demo *d, const uint32_t *spirv, size_t size, const char *name,
                                  salvo_kernel **out)
{
    const salvo_spec_constant local_size = {.id = 0, .value = d->local_size};
    const salvo_kernel_desc desc = {
        .spirv = spirv,
        .spirv_size = size,
        .name = name,
        .spec_constants = &local_size,
        .spec_constant_count = 1,
    };
    return salvo_kernel_create(d->device, &desc, out);
}

/* ------------------------------------------------------------------ */
/* 1. dependent launches                                               */
/* ------------------------------------------------------------------ */

typedef struct chain_result {
    double seconds;
    uint64_t batches;
} chain_result;

static salvo_status run_chain(demo *d, salvo_kernel *add, salvo_buffer *data, uint32_t batch_size,
                              const char *part, chain_result *result)
{
    salvo_status status = SALVO_OK;
    salvo_stream *stream = NULL;
    static uint32_t host[CHAIN_ELEMENTS];
    salvo_stats before, after;

    memset(host, 0, sizeof host);
    CHECK(salvo_buffer_write(data, 0, host, sizeof host));
    const salvo_stream_desc desc = {.batch_size = batch_size};
    CHECK(salvo_stream_create(d->device, &desc, &stream));

    /* Matches add.comp's push-constant block { uint n; uint value; }. */
    const struct {
        uint32_t n, value;
    } push = {CHAIN_ELEMENTS, 1};
    const salvo_binding binding = {.binding = 0, .buffer = data};
    const uint32_t groups[3] = {(CHAIN_ELEMENTS + d->local_size - 1) / d->local_size, 1, 1};

    CHECK(salvo_device_stats(d->device, &before));
    double start = now_s();
    for (int i = 0; i < CHAIN_LENGTH; i++)
        CHECK(salvo_launch(stream, add, groups, &binding, 1, &push, sizeof push));
    CHECK(salvo_stream_synchronize(stream));
    result->seconds = now_s() - start;
    CHECK(salvo_device_stats(d->device, &after));
    result->batches = after.batches_submitted - before.batches_submitted;

    CHECK(salvo_buffer_read(data, 0, host, sizeof host));
    for (uint32_t i = 0; i < CHAIN_ELEMENTS; i++) {
        if (host[i] != CHAIN_LENGTH) {
            wrong(part, "element %u is %u, expected %u", (unsigned)i, (unsigned)host[i],
                  (unsigned)CHAIN_LENGTH);
            break;
        }
    }

done:
    salvo_stream_destroy(stream);
    return status;
}

/* ------------------------------------------------------------------ */
/* 2. saxpy bandwidth                                                  */
/* ------------------------------------------------------------------ */

/* Integer-valued, so y stays exact in float through every run whether or
 * not the device fuses the multiply-add: the check can demand equality. */
static float x_at(uint64_t i) { return (float)(i % 1024u); }
static float y0_at(uint64_t i) { return (float)(i % 7u); }

static salvo_status fill(salvo_buffer *buffer, uint64_t n, float (*value)(uint64_t), float *chunk)
{
    for (uint64_t first = 0; first < n; first += FILL_ELEMENTS) {
        uint64_t count = n - first < FILL_ELEMENTS ? n - first : FILL_ELEMENTS;
        for (uint64_t i = 0; i < count; i++)
            chunk[i] = value(first + i);
        salvo_status status =
            salvo_buffer_write(buffer, first * sizeof(float), chunk, count * sizeof(float));
        if (status < 0)
            return status;
    }
    return SALVO_OK;
}

/* Elements per launch: one launch may cover no more workgroups than
 * max_workgroup_count[0] (65535 on many devices) and bind no more than
 * max_storage_buffer_range bytes, and each range must start at an allowed
 * offset. Zero limits read as Vulkan's guaranteed minimums. */
static uint64_t saxpy_chunk(const demo *d, uint64_t n)
{
    uint64_t max_groups = d->info.max_workgroup_count[0] ? d->info.max_workgroup_count[0] : 65535;
    uint64_t range = d->info.max_storage_buffer_range ? d->info.max_storage_buffer_range
                                                      : (uint64_t)1 << 27;
    uint64_t align = d->info.min_storage_buffer_offset_alignment
                         ? d->info.min_storage_buffer_offset_alignment
                         : 1;
    uint64_t chunk = max_groups * d->local_size;
    if (chunk > range / sizeof(float))
        chunk = range / sizeof(float);
    if (chunk >= n)
        return n;
    chunk -= chunk % d->local_size;
    while (chunk > 0 && (chunk * sizeof(float)) % align != 0)
        chunk -= d->local_size;
    return chunk;
}

typedef struct saxpy_result {
    uint64_t bytes; /* per array */
    uint32_t launches_per_run;
    double median_s;
} saxpy_result;

static salvo_status saxpy_run(demo *d, salvo_stream *stream, salvo_kernel *kernel,
                              salvo_buffer *x, salvo_buffer *y, uint64_t n, uint64_t chunk)
{
    for (uint64_t first = 0; first < n; first += chunk) {
        uint64_t count = n - first < chunk ? n - first : chunk;
        /* Matches saxpy.comp's push-constant block { float a; uint n; }. */
        const struct {
            float a;
            uint32_t n;
        } push = {SAXPY_A, (uint32_t)count};
        const salvo_binding bindings[2] = {
            {.binding = 0, .buffer = x, .offset = first * sizeof(float),
             .size = count * sizeof(float)},
            {.binding = 1, .buffer = y, .offset = first * sizeof(float),
             .size = count * sizeof(float)},
        };
        const uint32_t groups[3] = {(uint32_t)((count + d->local_size - 1) / d->local_size), 1, 1};
        salvo_status status = salvo_launch(stream, kernel, groups, bindings, 2, &push, sizeof push);
        if (status < 0)
            return status;
    }
    return salvo_stream_synchronize(stream);
}

static salvo_status run_saxpy(demo *d, salvo_kernel *kernel, saxpy_result *result)
{
    salvo_status status = SALVO_OK;
    salvo_buffer *x = NULL, *y = NULL;
    salvo_stream *stream = NULL;
    float *chunk_host = NULL;
    const char *part = "saxpy";

    result->bytes = d->info.type == SALVO_DEVICE_TYPE_CPU ? (uint64_t)64 << 20 : (uint64_t)1 << 30;
    const uint64_t n = result->bytes / sizeof(float);
    const uint64_t chunk = saxpy_chunk(d, n);
    if (chunk == 0) {
        fprintf(stderr, "salvo-demo: the device's limits leave no room for a saxpy launch\n");
        return SALVO_ERROR_UNSUPPORTED;
    }
    result->launches_per_run = (uint32_t)((n + chunk - 1) / chunk);

    chunk_host = malloc(FILL_ELEMENTS * sizeof(float));
    if (!chunk_host) {
        fprintf(stderr, "salvo-demo: out of host memory\n");
        return SALVO_ERROR_OUT_OF_HOST_MEMORY;
    }
    CHECK(salvo_buffer_create(d->device, result->bytes, SALVO_DOMAIN_DEVICE, &x));
    CHECK(salvo_buffer_create(d->device, result->bytes, SALVO_DOMAIN_DEVICE, &y));
    CHECK(fill(x, n, x_at, chunk_host));
    CHECK(fill(y, n, y0_at, chunk_host));
    CHECK(salvo_stream_create(d->device, NULL, &stream));

    CHECK(saxpy_run(d, stream, kernel, x, y, n, chunk)); /* warm-up */
    double seconds[SAXPY_RUNS];
    for (int run = 0; run < SAXPY_RUNS; run++) {
        double start = now_s();
        CHECK(saxpy_run(d, stream, kernel, x, y, n, chunk));
        seconds[run] = now_s() - start;
    }
    qsort(seconds, SAXPY_RUNS, sizeof seconds[0], compare_double);
    result->median_s = seconds[SAXPY_RUNS / 2];

    /* Samples spread over the whole array, first and last element included. */
    for (uint64_t k = 0; k < SAXPY_SAMPLES; k++) {
        uint64_t i = k * (n - 1) / (SAXPY_SAMPLES - 1);
        float got;
        CHECK(salvo_buffer_read(y, i * sizeof(float), &got, sizeof got));
        float want = y0_at(i);
        for (int run = 0; run < 1 + SAXPY_RUNS; run++)
            want = SAXPY_A * x_at(i) + want;
        if (got != want) {
            wrong(part, "y[%llu] is %g, expected %g", (unsigned long long)i, got, want);
            break;
        }
    }

done:
    salvo_stream_destroy(stream);
    salvo_buffer_destroy(y);
    salvo_buffer_destroy(x);
    free(chunk_host);
    return status;
}

/* ------------------------------------------------------------------ */

static void explain_no_device(salvo_status status)
{
    report_failure("salvo_device_create", status);
    const char *wanted = getenv("SALVO_DEVICE");
    salvo_device_entry entries[16];
    uint32_t count = 16;
    if (salvo_device_enumerate(entries, &count) < 0 || count == 0) {
        fprintf(stderr, "salvo-demo: no Vulkan device can run compute here; on Debian, "
                        "mesa-vulkan-drivers provides one on the CPU (lavapipe)\n");
        return;
    }
    if (wanted && *wanted)
        fprintf(stderr, "salvo-demo: SALVO_DEVICE=\"%s\"; the devices are:\n", wanted);
    else
        fprintf(stderr, "salvo-demo: the devices are:\n");
    for (uint32_t i = 0; i < count; i++)
        fprintf(stderr, "  %s (%s)\n", entries[i].name, type_name(entries[i].type));
}

static void usage(FILE *to)
{
    fprintf(to, "usage: salvo-demo [--help]\n"
                "  A chain of 10,000 dependent launches, submitted one by one and then in\n"
                "  batches, and a large saxpy, every result checked. The device:\n"
                "  $SALVO_DEVICE, else the preferred one; $SALVO_BATCH sets the batch size\n"
                "  (README, \"Configuration\"). Exit 0 when every result is right.\n");
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        }
        fprintf(stderr, "salvo-demo: unknown argument '%s'\n", argv[i]);
        usage(stderr);
        return 2;
    }
    salvo_status status = SALVO_OK;
    demo d = {0};
    salvo_kernel *add = NULL, *saxpy = NULL;
    salvo_buffer *chain_data = NULL;
    chain_result chain_one = {0}, chain_default = {0};
    saxpy_result sx = {0};
    int exit_code = 1;

    /* name NULL and batch_size 0: $SALVO_DEVICE and $SALVO_BATCH decide. */
    const salvo_device_desc desc = {.log = log_to_stderr};
    status = salvo_device_create(&desc, &d.device);
    if (status < 0) {
        explain_no_device(status);
        return 1;
    }
    CHECK(salvo_device_info_get(d.device, &d.info));
    const uint32_t v = d.info.api_version;
    printf("device   %s\n", d.info.name);
    printf("type     %s\n", type_name(d.info.type));
    printf("driver   %s%s%s\n", d.info.driver_name, d.info.driver_info[0] ? ", " : "",
           d.info.driver_info);
    printf("Vulkan   %u.%u.%u\n\n", (unsigned)(v >> 22) & 0x7fu, (unsigned)(v >> 12) & 0x3ffu,
           (unsigned)v & 0xfffu);

    d.local_size = 256;
    if (d.info.max_workgroup_size[0] && d.local_size > d.info.max_workgroup_size[0])
        d.local_size = d.info.max_workgroup_size[0];
    if (d.info.max_workgroup_invocations && d.local_size > d.info.max_workgroup_invocations)
        d.local_size = d.info.max_workgroup_invocations;

    CHECK(kernel_create(&d, add_spv, sizeof add_spv, "add", &add));
    CHECK(kernel_create(&d, saxpy_spv, sizeof saxpy_spv, "saxpy", &saxpy));
    CHECK(salvo_buffer_create(d.device, CHAIN_ELEMENTS * sizeof(uint32_t), SALVO_DOMAIN_DEVICE,
                              &chain_data));

    PROPAGATE(run_chain(&d, add, chain_data, 1, "chain with batch 1", &chain_one));
    PROPAGATE(run_chain(&d, add, chain_data, 0, "chain with the default batch", &chain_default));
    PROPAGATE(run_saxpy(&d, saxpy, &sx));

    salvo_stats stats;
    CHECK(salvo_device_stats(d.device, &stats));
    if (stats.validation_messages)
        wrong("validation", "the validation layer reported %llu messages",
              (unsigned long long)stats.validation_messages);

    char label[64];
    printf("%-28s %12s\n", "", "launches/s");
    printf("%-28s %12.0f   (%d dependent launches in %llu submissions)\n", "batch 1",
           CHAIN_LENGTH / chain_one.seconds, CHAIN_LENGTH,
           (unsigned long long)chain_one.batches);
    snprintf(label, sizeof label, "batch %u (device default)", (unsigned)d.info.batch_size);
    printf("%-28s %12.0f   (%d dependent launches in %llu submissions)\n", label,
           CHAIN_LENGTH / chain_default.seconds, CHAIN_LENGTH,
           (unsigned long long)chain_default.batches);
    snprintf(label, sizeof label, "saxpy, %.0f MiB per array", (double)sx.bytes / MiB);
    printf("%-28s %12.2f GB/s   (median of %d runs, %u launch%s each)\n\n", label,
           3.0 * (double)sx.bytes / sx.median_s / 1e9, SAXPY_RUNS, (unsigned)sx.launches_per_run,
           sx.launches_per_run == 1 ? "" : "es");

    if (wrong_parts[0]) {
        printf("WRONG results: %s\n", wrong_parts);
    } else {
        printf("all results correct\n");
        exit_code = 0;
    }

done:
    salvo_buffer_destroy(chain_data);
    salvo_kernel_destroy(saxpy);
    salvo_kernel_destroy(add);
    salvo_device_destroy(d.device);
    return exit_code;
}
