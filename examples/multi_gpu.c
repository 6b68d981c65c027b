/*
 * multi-gpu: one salvo device per GPU, each driven from a thread of its
 * own, all at the same time.
 *
 *     multi-gpu [--mib N] [--reps N] [DEVICE_NAME ...]
 *
 * Opens every enumerated device (or those named on the command line), gives
 * each the same saxpy workload (shaders/saxpy.comp: y = a * x + y over two
 * arrays, `reps` saxpys back to back, one synchronize), runs it on each
 * device alone, one after the other, then on all of them together, and
 * prints per device its name, seconds and GB/s (3 x array bytes per saxpy),
 * and the overlap: the wall time of the run together against the sum of
 * the runs alone. With one device there is nothing to overlap; it says so.
 *
 * Nothing is shared between the devices: salvo objects belong to the device
 * that made them, and each thread only touches its own.
 *
 * A note on names: salvo picks a device by its enumerated name
 * (salvo_device_desc.name). Identical GPUs enumerate under the same name,
 * and the name then always opens the first of them, so such a group
 * counts once here (a line says so).
 *
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, pthread_barrier_t */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <salvo/salvo.h>

#include "saxpy.spv.h"

#define LOCAL_SIZE 256u /* the kernel's local_size_x, set by spec constant 0 */
#define A 0.5f          /* y = A * x + y, x = 1, y starts at 2: exact in float */

#define CHECK(call)                                                                                \
    do {                                                                                           \
        salvo_status st_ = (call);                                                                 \
        if (st_ < 0) {                                                                             \
            fprintf(stderr, "%s:%d: %s: %s\n  %s\n", __FILE__, __LINE__, #call,                    \
                    salvo_status_string(st_), salvo_last_error());                                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

typedef struct gpu {
    char name[SALVO_NAME_MAX];
    salvo_device *dev;
    salvo_device_info info;
    salvo_kernel *saxpy;
    salvo_stream *st;
    salvo_buffer *x, *y;
    uint64_t bytes; /* per array */
    uint32_t n, groups[3];
    int reps;
    uint64_t saxpys; /* applied to y so far, for the check */
    /* One run, written by its thread. */
    pthread_barrier_t *start; /* NULL: run at once */
    double t_begin, t_end;
    double alone_s, together_s;
} gpu;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void open_gpu(gpu *g, uint64_t mib, int reps)
{
    salvo_device_desc desc = {.name = g->name};
    CHECK(salvo_device_create(&desc, &g->dev));
    CHECK(salvo_device_info_get(g->dev, &g->info));
    bool cpu = g->info.type == SALVO_DEVICE_TYPE_CPU;
    if (mib == 0)
        mib = cpu ? 64 : 1024; /* salvo-bench's saxpy sizes */
    if (reps == 0)
        reps = cpu ? 4 : 100;
    g->bytes = mib << 20;
    /* One binding covers a whole array. */
    if (g->bytes > g->info.max_storage_buffer_range)
        g->bytes = (uint64_t)g->info.max_storage_buffer_range & ~(uint64_t)((1u << 20) - 1);
    g->n = (uint32_t)(g->bytes / 4);
    g->reps = reps;

    salvo_spec_constant sc = {0, LOCAL_SIZE};
    salvo_kernel_desc kd = {.spirv = saxpy_spv, .spirv_size = sizeof saxpy_spv, .name = "saxpy",
                            .spec_constants = &sc, .spec_constant_count = 1};
    CHECK(salvo_kernel_create(g->dev, &kd, &g->saxpy));
    CHECK(salvo_stream_create(g->dev, NULL, &g->st));
    CHECK(salvo_buffer_create(g->dev, g->bytes, SALVO_DOMAIN_DEVICE, &g->x));
    CHECK(salvo_buffer_create(g->dev, g->bytes, SALVO_DOMAIN_DEVICE, &g->y));

    /* x = 1, y = 2, through a chunk of host memory. */
    size_t chunk = 16u << 20;
    float *host = malloc(chunk);
    if (!host) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    for (int which = 0; which < 2; which++) {
        for (size_t i = 0; i < chunk / 4; i++)
            host[i] = which ? 2.0f : 1.0f;
        for (uint64_t off = 0; off < g->bytes; off += chunk)
            CHECK(salvo_buffer_write(which ? g->y : g->x, off, host,
                                     g->bytes - off < chunk ? g->bytes - off : chunk));
    }
    free(host);

    /* One launch covers the array: a 2D grid when x alone cannot hold the
     * groups (the kernel flattens it back to one index). */
    uint64_t total = (g->n + LOCAL_SIZE - 1) / LOCAL_SIZE, gx = total, gy = 1;
    if (gx > g->info.max_workgroup_count[0]) {
        gx = g->info.max_workgroup_count[0];
        gy = (total + gx - 1) / gx;
    }
    if (gy > g->info.max_workgroup_count[1]) {
        fprintf(stderr, "%s: %llu MiB needs more workgroups than the device allows\n", g->name,
                (unsigned long long)(g->bytes >> 20));
        exit(1);
    }
    g->groups[0] = (uint32_t)gx;
    g->groups[1] = (uint32_t)gy;
    g->groups[2] = 1;
}

/* One run: reps saxpys back to back (each reads what the previous one
 * wrote), one synchronize. */
static void *run(void *arg)
{
    gpu *g = arg;
    salvo_binding bd[2] = {{.binding = 0, .buffer = g->x}, {.binding = 1, .buffer = g->y}};
    struct {
        float a;
        uint32_t n;
    } push = {A, g->n};
    if (g->start)
        pthread_barrier_wait(g->start);
    g->t_begin = now_s();
    for (int k = 0; k < g->reps; k++)
        CHECK(salvo_launch(g->st, g->saxpy, g->groups, bd, 2, &push, sizeof push));
    CHECK(salvo_stream_synchronize(g->st));
    g->t_end = now_s();
    g->saxpys += (uint64_t)g->reps;
    return NULL;
}

static double gbps(const gpu *g, double seconds)
{
    return 3.0 * (double)g->bytes * g->reps / seconds / 1e9;
}

static void check(const gpu *g)
{
    float probe[2];
    CHECK(salvo_buffer_read(g->y, 0, &probe[0], 4));
    CHECK(salvo_buffer_read(g->y, g->bytes - 4, &probe[1], 4));
    float want = 2.0f + A * (float)g->saxpys;
    if (probe[0] != want || probe[1] != want) {
        fprintf(stderr, "%s: y is %g ... %g, want %g\n", g->name, probe[0], probe[1], want);
        exit(1);
    }
}

static void close_gpu(gpu *g)
{
    salvo_buffer_destroy(g->x);
    salvo_buffer_destroy(g->y);
    salvo_stream_destroy(g->st);
    salvo_kernel_destroy(g->saxpy);
    salvo_device_destroy(g->dev);
}

static void usage(const char *argv0)
{
    fprintf(stderr, "usage: %s [--mib N] [--reps N] [DEVICE_NAME ...]\n", argv0);
    exit(2);
}

/* Adds name to the list unless it is there already. */
static void add_name(char (*names)[SALVO_NAME_MAX], uint32_t *count, const char *name)
{
    for (uint32_t i = 0; i < *count; i++)
        if (strcmp(names[i], name) == 0)
            return;
    snprintf(names[*count], SALVO_NAME_MAX, "%s", name);
    (*count)++;
}

int main(int argc, char **argv)
{
    uint64_t mib = 0;
    int reps = 0;
    int first_name = argc;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mib") == 0 && i + 1 < argc) {
            mib = strtoull(argv[++i], NULL, 10);
            if (mib == 0)
                usage(argv[0]);
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
            if (reps <= 0)
                usage(argv[0]);
        } else if (argv[i][0] == '-') {
            usage(argv[0]);
        } else {
            first_name = i;
            break;
        }
    }

    uint32_t count = 0;
    CHECK(salvo_device_enumerate(NULL, &count));
    if (count == 0) {
        fprintf(stderr, "no Vulkan device\n");
        return 1;
    }
    salvo_device_entry *entries = calloc(count, sizeof *entries);
    char(*names)[SALVO_NAME_MAX] = calloc((size_t)count + (size_t)argc, SALVO_NAME_MAX);
    if (!entries || !names) {
        fprintf(stderr, "out of host memory\n");
        return 1;
    }
    CHECK(salvo_device_enumerate(entries, &count));
    printf("%u Vulkan device(s):\n", count);
    for (uint32_t i = 0; i < count; i++)
        printf("  %u: %s\n", i, entries[i].name);

    uint32_t used = 0;
    if (first_name < argc) {
        for (int i = first_name; i < argc; i++) {
            bool known = false;
            for (uint32_t e = 0; e < count && !known; e++)
                known = strcmp(entries[e].name, argv[i]) == 0;
            if (!known) {
                fprintf(stderr, "no Vulkan device named '%s'\n", argv[i]);
                return 1;
            }
            add_name(names, &used, argv[i]);
        }
    } else {
        for (uint32_t i = 0; i < count; i++)
            add_name(names, &used, entries[i].name);
    }
    /* Identical GPUs share a name, and a name opens the first of them. */
    for (uint32_t u = 0; u < used; u++) {
        uint32_t same = 0;
        for (uint32_t e = 0; e < count; e++)
            same += strcmp(entries[e].name, names[u]) == 0;
        if (same > 1)
            printf("note: %u devices are named '%s'; salvo opens a device by name, so only the "
                   "first of them is used\n",
                   same, names[u]);
    }
    free(entries);

    gpu *gpus = calloc(used, sizeof *gpus);
    if (!gpus) {
        fprintf(stderr, "out of host memory\n");
        return 1;
    }
    for (uint32_t i = 0; i < used; i++) {
        gpu *g = &gpus[i];
        snprintf(g->name, sizeof g->name, "%s", names[i]);
        open_gpu(g, mib, reps);
        /* A first run outside the timing: pipelines, memory and clocks warm. */
        run(g);
        printf("device %u: %s: %llu MiB per array, %d saxpys per run, grid %u x %u\n", i,
               g->name, (unsigned long long)(g->bytes >> 20), g->reps, g->groups[0],
               g->groups[1]);
    }
    free(names);

    /* Alone: one after the other, each from a thread of its own. */
    double sum_alone = 0, max_alone = 0;
    for (uint32_t i = 0; i < used; i++) {
        gpu *g = &gpus[i];
        pthread_t t;
        if (pthread_create(&t, NULL, run, g) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
        pthread_join(t, NULL);
        g->alone_s = g->t_end - g->t_begin;
        sum_alone += g->alone_s;
        if (g->alone_s > max_alone)
            max_alone = g->alone_s;
    }

    if (used == 1) {
        gpu *g = &gpus[0];
        check(g);
        if (first_name < argc && count > 1)
            printf("\none device selected (%s) of %u present: nothing runs beside it, no "
                   "overlap to measure\n",
                   g->name, count);
        else
            printf("\nonly one device is present (%s): nothing runs beside it, no overlap to "
                   "measure\n",
                   g->name);
        printf("%-40s %10s %10s\n", "device", "seconds", "GB/s");
        printf("%-40.40s %10.4f %10.1f\n", g->name, g->alone_s, gbps(g, g->alone_s));
        close_gpu(g);
        free(gpus);
        return 0;
    }

    /* Together: every thread starts at one barrier. */
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, used);
    pthread_t *threads = calloc(used, sizeof *threads);
    if (!threads) {
        fprintf(stderr, "out of host memory\n");
        return 1;
    }
    for (uint32_t i = 0; i < used; i++) {
        gpus[i].start = &start;
        if (pthread_create(&threads[i], NULL, run, &gpus[i]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    }
    for (uint32_t i = 0; i < used; i++)
        pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&start);
    free(threads);
    double begin = gpus[0].t_begin, end = gpus[0].t_end;
    for (uint32_t i = 0; i < used; i++) {
        gpu *g = &gpus[i];
        g->together_s = g->t_end - g->t_begin;
        if (g->t_begin < begin)
            begin = g->t_begin;
        if (g->t_end > end)
            end = g->t_end;
        check(g);
    }
    double wall = end - begin;

    printf("\n%-40s %10s %10s %10s %10s\n", "device", "alone s", "GB/s", "together s", "GB/s");
    double total_alone_gbps = 0, total_together = 0;
    for (uint32_t i = 0; i < used; i++) {
        gpu *g = &gpus[i];
        printf("%-40.40s %10.4f %10.1f %10.4f %10.1f\n", g->name, g->alone_s,
               gbps(g, g->alone_s), g->together_s, gbps(g, g->together_s));
        total_alone_gbps += gbps(g, g->alone_s);
        total_together += 3.0 * (double)g->bytes * g->reps / 1e9;
    }
    /* 100%: the wall time of all together is that of the slowest alone
     * (they fully overlap); 0%: it is the sum of all alone (serialized). */
    double overlap = sum_alone > max_alone ? (sum_alone - wall) / (sum_alone - max_alone) : 1.0;
    printf("\nsum of the runs alone  %.4f s (%.1f GB/s each on average)\n", sum_alone,
           total_alone_gbps / used);
    printf("all together, wall     %.4f s (%.1f GB/s in all)\n", wall, total_together / wall);
    printf("overlap                %.0f%% (speed-up %.2fx of %u devices; 100%% = as fast as the "
           "slowest alone)\n",
           100.0 * overlap, sum_alone / wall, used);

    for (uint32_t i = 0; i < used; i++)
        close_gpu(&gpus[i]);
    free(gpus);
    return 0;
}
