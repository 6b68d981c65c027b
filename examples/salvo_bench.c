/*
 * salvo-bench: what a launch costs, measured.
 *
 * Prints a table and (with --json FILE) writes the same figures as JSON:
 *  - dependent chains (each launch reads and writes what the previous one
 *    wrote: a barrier between each) and independent launches (disjoint
 *    slices: no barrier) at batch sizes 1, 8, 32, 128, 512 and the default,
 *    in us/launch and launches/s, launch calls + synchronize, wall clock;
 *  - host ns per recorded launch (launch calls only, nothing submitted);
 *  - one launch + synchronize round trip, and the CPU time it costs;
 *  - graphs of 10,000 tiny launches (dependent, independent) captured once
 *    and replayed: device us per node, host us per replay, capture ms, the
 *    cost of updating one node's push constants, and a one-node graph's
 *    launch + synchronize round trip beside a plain launch's;
 *  - saxpy GB/s (3 x array bytes per run);
 *  - explicit transfer GB/s (write and read of a DEVICE buffer);
 *  - host gate latency (raise -> the gated launch seen complete);
 *  - streams side by side: two streams of long single-workgroup kernels
 *    (both together / one alone), and a large copy on one stream beside
 *    kernels on another (0: fully overlapped, 1: one after the other).
 * Every figure is the median of --repeats runs (default 5). Results of the
 * kernels are checked; a wrong value exits 1.
 *
 * Sizes are scaled down on a CPU device (lavapipe): --full disables that.
 *
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <salvo/salvo.h>
#include <salvo/salvo_vulkan.h>

#include "add.spv.h"
#include "mark.spv.h"
#include "saxpy.spv.h"
#include "spin.spv.h"

#define CHECK(call)                                                                                \
    do {                                                                                           \
        salvo_status st_ = (call);                                                                 \
        if (st_ < 0) {                                                                             \
            fprintf(stderr, "%s:%d: %s: %s\n  %s\n", __FILE__, __LINE__, #call,                    \
                    salvo_status_string(st_), salvo_last_error());                                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

typedef struct opts {
    int repeats;
    bool full;
    const char *json;
} opts;

typedef struct bench {
    salvo_device *dev;
    salvo_device_info info;
    salvo_kernel *add, *saxpy;
    bool cpu;
    uint64_t align;
    FILE *json;
    int metrics;
    uint32_t streams; /* created on dev so far (stream_create below) */
} bench;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#include "raw_floor.h"

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void metric(bench *b, const char *name, double value, const char *unit)
{
    if (!b->json)
        return;
    fprintf(b->json, "%s\n    \"%s\": {\"value\": %.6g, \"unit\": \"%s\"}", b->metrics ? "," : "",
            name, value, unit);
    b->metrics++;
}

static salvo_kernel *kernel(salvo_device *dev, const uint32_t *spv, size_t size, const char *name,
                            uint32_t local)
{
    salvo_spec_constant sc = {0, local};
    salvo_kernel_desc kd = {.spirv = spv, .spirv_size = size, .name = name,
                            .spec_constants = &sc, .spec_constant_count = 1};
    salvo_kernel *k = NULL;
    CHECK(salvo_kernel_create(dev, &kd, &k));
    return k;
}

/* salvo_stream_create on b's device, counted: streams take the queue
 * family's queues in turn, by creation, and the raw floors submit to the
 * queue of the stream they are compared with (stream_queue). */
static salvo_status stream_create(bench *b, const salvo_stream_desc *sd, salvo_stream **out)
{
    salvo_status st = salvo_stream_create(b->dev, sd, out);
    b->streams += st == SALVO_OK;
    return st;
}

/* The queue index of the stream created last, of normal priority
 * (salvo_vulkan.h: the high-priority queue, where kept, is the last and
 * only for the streams that ask for it). */
static uint32_t stream_queue(const bench *b)
{
    uint32_t shared = b->info.queue_count ? b->info.queue_count : 1;
    if (b->info.high_priority_queue && shared > 1)
        shared--;
    return (b->streams - 1) % shared;
}

/* n launches of add (64 elements, +1) on one slice (dependent) or each on
 * its own slice (independent); returns seconds for the launch calls and
 * the synchronize. */
static double run_chain(bench *b, salvo_buffer *buf, uint32_t batch, uint32_t n, bool dependent)
{
    salvo_stream_desc sd = {.batch_size = batch};
    salvo_stream *st = NULL;
    CHECK(stream_create(b, &sd, &st));
    uint32_t push[2] = {64, 1};
    uint32_t groups[3] = {1, 1, 1};
    salvo_binding bd = {.binding = 0, .buffer = buf, .size = 256};
    double t0 = now_s();
    for (uint32_t i = 0; i < n; i++) {
        bd.offset = dependent ? 0 : i * b->align;
        CHECK(salvo_launch(st, b->add, groups, &bd, 1, push, sizeof push));
    }
    CHECK(salvo_stream_synchronize(st));
    double t = now_s() - t0;
    salvo_stream_destroy(st);
    return t;
}

static void zero(salvo_buffer *buf)
{
    uint64_t size = salvo_buffer_size(buf);
    void *z = calloc(1, size);
    CHECK(salvo_buffer_write(buf, 0, z, size));
    free(z);
}

static void expect_chain(bench *b, salvo_buffer *buf, uint32_t n, bool dependent, uint32_t runs)
{
    uint32_t first[64], last[64];
    CHECK(salvo_buffer_read(buf, 0, first, sizeof first));
    uint64_t off = dependent ? 0 : (uint64_t)(n - 1) * b->align;
    CHECK(salvo_buffer_read(buf, off, last, sizeof last));
    uint32_t want = dependent ? n * runs : runs;
    for (int i = 0; i < 64; i++)
        if (first[i] != want || last[i] != want) {
            fprintf(stderr, "wrong result: %u / %u, want %u\n", first[i], last[i], want);
            exit(1);
        }
}

static void bench_chains(bench *b, const opts *o)
{
    uint32_t n = b->cpu && !o->full ? 2000 : 10000;
    salvo_buffer *buf = NULL;
    CHECK(salvo_buffer_create(b->dev, (uint64_t)n * b->align + 256, SALVO_DOMAIN_DEVICE, &buf));
    uint32_t sizes[] = {1, 8, 32, 128, 512, 0};
    printf("\n%-28s %14s %14s %14s %14s\n", "launches", "dep us/launch", "dep launch/s",
           "ind us/launch", "ind launch/s");
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        uint32_t batch = sizes[s];
        uint32_t count = batch == 1 && n > 2000 ? 2000 : n; /* batch 1 waits every launch */
        if (batch == 1 && b->cpu && !o->full)
            count = 500;
        double dep[32], ind[32];
        for (int mode = 0; mode < 2; mode++) {
            bool dependent = mode == 0;
            zero(buf);
            for (int r = 0; r < o->repeats; r++)
                (dependent ? dep : ind)[r] = run_chain(b, buf, batch, count, dependent) / count;
            expect_chain(b, buf, count, dependent, (uint32_t)o->repeats);
        }
        double d = median(dep, o->repeats), i = median(ind, o->repeats);
        char label[64];
        snprintf(label, sizeof label, batch ? "batch %u" : "batch %u (default)",
                 batch ? batch : b->info.batch_size);
        printf("%-28s %14.2f %14.0f %14.2f %14.0f\n", label, d * 1e6, 1 / d, i * 1e6, 1 / i);
        char name[96];
        snprintf(name, sizeof name, "dependent_batch_%s_us_per_launch",
                 batch ? (snprintf(label, sizeof label, "%u", batch), label) : "default");
        metric(b, name, d * 1e6, "us/launch");
        snprintf(name, sizeof name, "independent_batch_%s_us_per_launch",
                 batch ? label : "default");
        metric(b, name, i * 1e6, "us/launch");
    }
    salvo_buffer_destroy(buf);
}

/* Host cost per launch: the launch calls alone (their share of the
 * submits included), at the default batch size; the synchronize after
 * them is not counted. */
static void bench_record(bench *b, const opts *o)
{
    uint32_t n = 10000;
    salvo_buffer *buf = NULL;
    CHECK(salvo_buffer_create(b->dev, (uint64_t)n * b->align + 256, SALVO_DOMAIN_DEVICE, &buf));
    double dep[32], ind[32];
    for (int mode = 0; mode < 2; mode++) {
        for (int r = 0; r < o->repeats; r++) {
            salvo_stream *st = NULL;
            CHECK(stream_create(b, NULL, &st));
            uint32_t push[2] = {64, 1};
            uint32_t groups[3] = {1, 1, 1};
            salvo_binding bd = {.binding = 0, .buffer = buf, .size = 256};
            double t0 = now_s();
            for (uint32_t i = 0; i < n; i++) {
                bd.offset = mode == 0 ? 0 : i * b->align;
                CHECK(salvo_launch(st, b->add, groups, &bd, 1, push, sizeof push));
            }
            (mode == 0 ? dep : ind)[r] = (now_s() - t0) / n;
            CHECK(salvo_stream_synchronize(st));
            salvo_stream_destroy(st);
        }
    }
    double d = median(dep, o->repeats) * 1e9, i = median(ind, o->repeats) * 1e9;
    printf("\nhost ns per recorded launch: %.0f (dependent, with barrier), %.0f (independent)\n",
           d, i);
    metric(b, "record_dependent_ns_per_launch", d, "ns/launch");
    metric(b, "record_independent_ns_per_launch", i, "ns/launch");
    salvo_buffer_destroy(buf);
}

/* Launch + synchronize, in two passes: the same launch every time (as the
 * raw floors: salvo submits it as recorded ahead from its third time),
 * then a launch whose push value changes at every trip (recorded every
 * time). The raw floors' round trips are made in turn with salvo's in
 * each pass. */
static void bench_roundtrip(bench *b, const opts *o)
{
    int iters = b->cpu && !o->full ? 200 : 2000;
    salvo_buffer *buf = NULL;
    CHECK(salvo_buffer_create(b->dev, 256, SALVO_DOMAIN_DEVICE, &buf));
    salvo_stream *st = NULL;
    CHECK(stream_create(b, NULL, &st));
    uint32_t groups[3] = {1, 1, 1};
    salvo_binding bd = {.binding = 0, .buffer = buf};
    double *t = malloc(sizeof *t * (size_t)iters * 6);
    double *tl = t + iters, *tf = t + 2 * iters, *tw = t + 3 * iters, *tr = t + 4 * iters,
           *tb = t + 5 * iters;
    /* The floors: the empty kernel, and the same launch as salvo's (add,
     * its buffer and push constants pushed), each recorded once; the
     * second on a buffer of its own. */
    raw_floor floor, bound;
    salvo_buffer *raw_buf = NULL;
    CHECK(salvo_buffer_create(b->dev, 256, SALVO_DOMAIN_DEVICE, &raw_buf));
    bool raw = raw_floor_open(&floor, b->dev, 0, NULL, stream_queue(b)) &&
               raw_floor_open(&bound, b->dev, RAW_BIND, raw_buf, stream_queue(b));
    for (int pass = 0; pass < 2; pass++) {
        bool vary = pass == 1;
        salvo_stats s0;
        CHECK(salvo_device_stats(b->dev, &s0));
        double cpu = 0, wall = 0;
        for (int i = 0; i < iters; i++) {
            tr[i] = raw ? raw_floor_trip(&floor) : 0;
            tb[i] = raw ? raw_floor_trip(&bound) : 0;
            uint32_t push[2] = {64, vary ? 1 + (uint32_t)(i & 1) : 1};
            double c0 = cpu_s(), t0 = now_s();
            CHECK(salvo_launch(st, b->add, groups, &bd, 1, push, sizeof push));
            double t1 = now_s();
            CHECK(salvo_stream_flush(st));
            double t2 = now_s();
            CHECK(salvo_stream_synchronize(st));
            double t3 = now_s();
            cpu += cpu_s() - c0;
            wall += t3 - t0;
            t[i] = t3 - t0;
            tl[i] = t1 - t0;
            tf[i] = t2 - t1;
            tw[i] = t3 - t2;
        }
        salvo_stats s1;
        CHECK(salvo_device_stats(b->dev, &s1));
        cpu /= iters;
        wall /= iters;
        double m = median(t, iters);
        const char *what = vary ? "launch + synchronize, a new push value each time"
                                : "launch + synchronize";
        printf("%s: %.1f us median (launch %.1f, submit %.1f, wait %.1f), %.1f us CPU per round "
               "trip (%.0f%% of wall); %llu of %d recorded ahead\n",
               what, m * 1e6, median(tl, iters) * 1e6, median(tf, iters) * 1e6,
               median(tw, iters) * 1e6, cpu * 1e6, 100 * cpu / wall,
               (unsigned long long)(s1.launches_ahead - s0.launches_ahead), iters);
        const char *key = vary ? "launch_sync_vary" : "launch_sync";
        char name[96];
        snprintf(name, sizeof name, "%s_roundtrip_median_us", key);
        metric(b, name, m * 1e6, "us");
        snprintf(name, sizeof name, "%s_roundtrip_cpu_us", key);
        metric(b, name, cpu * 1e6, "us");
        if (raw) {
            double f = median(tr, iters), fb = median(tb, iters);
            printf("raw floor beside it (same process and queue; a pre-recorded submit, the "
                   "timeline polled): %.1f us median for the empty kernel, %.1f for the same "
                   "launch (add, its buffer and constants pushed); %s / floor %.2f, / "
                   "same-launch floor %.2f\n",
                   f * 1e6, fb * 1e6, what, m / f, m / fb);
            if (!vary) {
                metric(b, "raw_floor_roundtrip_us", f * 1e6, "us");
                metric(b, "raw_floor_same_launch_us", fb * 1e6, "us");
            }
            snprintf(name, sizeof name, "%s_over_raw_floor", key);
            metric(b, name, m / f, "ratio");
            snprintf(name, sizeof name, "%s_over_same_launch_floor", key);
            metric(b, name, m / fb, "ratio");
        }
    }
    raw_floor_close(&floor);
    raw_floor_close(&bound);
    free(t);
    salvo_stream_destroy(st);
    salvo_buffer_destroy(buf);
    salvo_buffer_destroy(raw_buf);
}

/* Exit 1 unless the 64 words at each of count offsets step apart in buf
 * are all want. */
static void expect_words(salvo_buffer *buf, uint32_t count, uint64_t step, uint32_t want,
                         const char *what)
{
    uint64_t size = (uint64_t)(count - 1) * step + 256;
    uint32_t *v = malloc(size);
    CHECK(salvo_buffer_read(buf, 0, v, size));
    for (uint32_t s = 0; s < count; s++)
        for (uint32_t i = 0; i < 64; i++)
            if (v[s * step / 4 + i] != want) {
                fprintf(stderr, "%s: word %u of slice %u is %u, want %u\n", what, i, s,
                        v[s * step / 4 + i], want);
                exit(1);
            }
    free(v);
}

/* n launches of add (64 elements, +1) captured on st: on one slice
 * (dependent: a barrier between each) or each on its own slice
 * (independent: no barrier). */
static salvo_graph *capture_adds(bench *b, salvo_stream *st, salvo_buffer *buf, uint32_t n,
                                 bool dependent)
{
    uint32_t push[2] = {64, 1};
    uint32_t groups[3] = {1, 1, 1};
    salvo_binding bd = {.binding = 0, .buffer = buf, .size = 256};
    CHECK(salvo_stream_begin_capture(st));
    for (uint32_t i = 0; i < n; i++) {
        bd.offset = dependent ? 0 : (uint64_t)i * b->align;
        CHECK(salvo_launch(st, b->add, groups, &bd, 1, push, sizeof push));
    }
    salvo_graph *g = NULL;
    CHECK(salvo_stream_end_capture(st, &g));
    if (salvo_graph_node_count(g) != n) {
        fprintf(stderr, "graph: %u nodes, want %u\n", salvo_graph_node_count(g), n);
        exit(1);
    }
    return g;
}

/* Replays that find a free batch slot (a stream has 3): the later ones of
 * a run wait for the device, which the per-node figure counts. */
enum { FREE_SLOTS = 3 };

static void bench_graphs(bench *b, const opts *o)
{
    uint32_t n = b->cpu && !o->full ? 1000 : 10000;
    uint32_t replays = 10;
    salvo_stream *st = NULL;
    CHECK(stream_create(b, NULL, &st));
    printf("\n%-28s %14s %14s %14s\n", "graphs", "us/node", "host us/replay", "capture ms");
    double dep_host = 0;
    salvo_graph *dep_graph = NULL;
    salvo_buffer *dep_buf = NULL;
    for (int mode = 0; mode < 2; mode++) {
        bool dependent = mode == 0;
        salvo_buffer *buf = NULL;
        uint64_t size = dependent ? 256 : (uint64_t)(n - 1) * b->align + 256;
        CHECK(salvo_buffer_create(b->dev, size, SALVO_DOMAIN_DEVICE, &buf));
        zero(buf);
        double node[32], capture[32], host[32 * FREE_SLOTS];
        int hosts = 0;
        for (int r = 0; r < o->repeats; r++) {
            double t0 = now_s();
            salvo_graph *g = capture_adds(b, st, buf, n, dependent);
            capture[r] = now_s() - t0;
            CHECK(salvo_graph_launch(g, st)); /* warm-up */
            CHECK(salvo_stream_synchronize(st));
            t0 = now_s();
            for (uint32_t k = 0; k < replays; k++) {
                double t1 = now_s();
                CHECK(salvo_graph_launch(g, st));
                if (k < FREE_SLOTS)
                    host[hosts++] = now_s() - t1;
            }
            CHECK(salvo_stream_synchronize(st));
            node[r] = (now_s() - t0) / ((double)replays * n);
            /* The dependent graph of the last run stays for the update. */
            if (dependent && r == o->repeats - 1)
                dep_graph = g;
            else
                salvo_graph_destroy(g);
        }
        /* Every replay adds n (dependent) or 1 (each slice) to each word. */
        uint32_t want = (uint32_t)o->repeats * (replays + 1) * (dependent ? n : 1);
        expect_words(buf, dependent ? 1 : n, b->align, want,
                     dependent ? "graph dep" : "graph indep");
        double us = median(node, o->repeats) * 1e6, h = median(host, hosts) * 1e6;
        double ms = median(capture, o->repeats) * 1e3;
        char label[64], name[96];
        snprintf(label, sizeof label, "%s, %u nodes", dependent ? "dependent" : "independent", n);
        printf("%-28s %14.2f %14.1f %14.2f\n", label, us, h, ms);
        const char *kind = dependent ? "dep" : "indep";
        snprintf(name, sizeof name, "graph_%s_n%u_us_per_node", kind, n);
        metric(b, name, us, "us/node");
        snprintf(name, sizeof name, "graph_%s_n%u_host_us_per_replay", kind, n);
        metric(b, name, h, "us");
        snprintf(name, sizeof name, "graph_%s_n%u_capture_ms", kind, n);
        metric(b, name, ms, "ms");
        if (dependent) {
            dep_host = h;
            dep_buf = buf;
        } else {
            salvo_buffer_destroy(buf);
        }
    }

    /* The raw-Vulkan yardstick's shape: a kernel that writes one word, each
     * node after a barrier (they overwrite each other). */
    {
        salvo_kernel *mark = NULL;
        salvo_kernel_desc kd = {.spirv = mark_spv, .spirv_size = sizeof mark_spv, .name = "mark"};
        CHECK(salvo_kernel_create(b->dev, &kd, &mark));
        salvo_buffer *buf = NULL;
        CHECK(salvo_buffer_create(b->dev, 256, SALVO_DOMAIN_DEVICE, &buf));
        double node[32], host[32 * FREE_SLOTS];
        int hosts = 0;
        uint32_t groups[3] = {1, 1, 1};
        salvo_binding bd = {.binding = 0, .buffer = buf, .size = 256};
        for (int r = 0; r < o->repeats; r++) {
            CHECK(salvo_stream_begin_capture(st));
            for (uint32_t i = 0; i < n; i++)
                CHECK(salvo_launch(st, mark, groups, &bd, 1, NULL, 0));
            salvo_graph *g = NULL;
            CHECK(salvo_stream_end_capture(st, &g));
            CHECK(salvo_graph_launch(g, st)); /* warm-up */
            CHECK(salvo_stream_synchronize(st));
            double t0 = now_s();
            for (uint32_t k = 0; k < replays; k++) {
                double t1 = now_s();
                CHECK(salvo_graph_launch(g, st));
                if (k < FREE_SLOTS)
                    host[hosts++] = now_s() - t1;
            }
            CHECK(salvo_stream_synchronize(st));
            node[r] = (now_s() - t0) / ((double)replays * n);
            salvo_graph_destroy(g);
        }
        uint32_t word = 0;
        CHECK(salvo_buffer_read(buf, 0, &word, sizeof word));
        if (word != 1) {
            fprintf(stderr, "graph mark: word 0 is %u, want 1\n", word);
            exit(1);
        }
        double us = median(node, o->repeats) * 1e6, h = median(host, hosts) * 1e6;
        char label[64], name[96];
        snprintf(label, sizeof label, "write-one chain, %u nodes", n);
        printf("%-28s %14.2f %14.1f\n", label, us, h);
        snprintf(name, sizeof name, "graph_mark_n%u_us_per_node", n);
        metric(b, name, us, "us/node");
        salvo_buffer_destroy(buf);
        salvo_kernel_destroy(mark);
    }

    /* Update: new push constants for one node, then a replay; the host
     * time of the two calls (the replay records the node into its batch
     * where the device pushes descriptors, else records the node again). */
    int iters = b->cpu && !o->full ? 20 : 100;
    double *t = malloc(sizeof *t * (size_t)iters);
    zero(dep_buf);
    uint32_t want = 0;
    for (int i = 0; i < iters; i++) {
        uint32_t push[2] = {64, 1 + (uint32_t)(i & 1)}; /* alternate, so each call changes it */
        double t0 = now_s();
        CHECK(salvo_graph_set_push(dep_graph, n / 2, push, sizeof push));
        CHECK(salvo_graph_launch(dep_graph, st));
        t[i] = now_s() - t0;
        CHECK(salvo_stream_synchronize(st));
        want += n - 1 + push[1];
    }
    expect_words(dep_buf, 1, 0, want, "graph update");
    double upd = median(t, iters) * 1e6;
    printf("update one node's push constants + replay: %.1f us on the host (a replay alone %.1f)\n",
           upd, dep_host);
    metric(b, "graph_update_host_us", upd, "us");
    /* The same with the device busy: a replay in flight, then two updates
     * and replays timed (each finds a free batch slot). Above, each pair
     * starts with the device idle, and a driver takes longer over a
     * submit that finds its device idle. */
    int rounds = b->cpu && !o->full ? 5 : 20;
    double *tb = malloc(sizeof *tb * 2 * (size_t)rounds);
    int busy = 0;
    for (int r = 0; r < rounds; r++) {
        uint32_t one[2] = {64, 1}; /* the capture's value for the first replay */
        CHECK(salvo_graph_set_push(dep_graph, n / 2, one, sizeof one));
        CHECK(salvo_graph_launch(dep_graph, st));
        want += n;
        for (int i = 0; i < 2; i++) {
            uint32_t push[2] = {64, 1 + (uint32_t)(i & 1)};
            double t0 = now_s();
            CHECK(salvo_graph_set_push(dep_graph, n / 2, push, sizeof push));
            CHECK(salvo_graph_launch(dep_graph, st));
            tb[busy++] = now_s() - t0;
            want += n - 1 + push[1];
        }
        CHECK(salvo_stream_synchronize(st));
    }
    expect_words(dep_buf, 1, 0, want, "graph update, device busy");
    double upd_busy = median(tb, busy) * 1e6;
    printf("update one node's push constants + replay, device busy: %.1f us on the host\n",
           upd_busy);
    metric(b, "graph_update_busy_host_us", upd_busy, "us");
    free(tb);
    salvo_graph_destroy(dep_graph);
    salvo_buffer_destroy(dep_buf);
    free(t);

    /* One node: graph launch + synchronize, as bench_roundtrip does with a
     * launch, alternating with a launch + synchronize of the same kernel so
     * that both see the same machine. */
    iters = b->cpu && !o->full ? 200 : 2000;
    salvo_buffer *buf = NULL;
    CHECK(salvo_buffer_create(b->dev, 256, SALVO_DOMAIN_DEVICE, &buf));
    zero(buf);
    salvo_graph *g = capture_adds(b, st, buf, 1, true);
    CHECK(salvo_graph_launch(g, st)); /* warm-up */
    CHECK(salvo_stream_synchronize(st));
    uint32_t push[2] = {64, 1};
    uint32_t groups[3] = {1, 1, 1};
    salvo_binding bd = {.binding = 0, .buffer = buf, .size = 256};
    t = malloc(sizeof *t * (size_t)iters * 5);
    double *tl = t + iters, *tk = t + 2 * iters, *tr = t + 3 * iters, *ts = t + 4 * iters;
    double cpu = 0, wall = 0;
    raw_floor floor, bound;
    salvo_buffer *raw_buf = NULL;
    CHECK(salvo_buffer_create(b->dev, 256, SALVO_DOMAIN_DEVICE, &raw_buf));
    bool raw = raw_floor_open(&floor, b->dev, 0, NULL, stream_queue(b)) &&
               raw_floor_open(&bound, b->dev, RAW_BIND, raw_buf, stream_queue(b));
    for (int i = 0; i < iters; i++) {
        tr[i] = raw ? raw_floor_trip(&floor) : 0;
        ts[i] = raw ? raw_floor_trip(&bound) : 0;
        double c0 = cpu_s(), t0 = now_s();
        CHECK(salvo_graph_launch(g, st));
        double t1 = now_s();
        CHECK(salvo_stream_synchronize(st));
        double t2 = now_s();
        cpu += cpu_s() - c0;
        wall += t2 - t0;
        t[i] = t2 - t0;
        tl[i] = t1 - t0;
        CHECK(salvo_launch(st, b->add, groups, &bd, 1, push, sizeof push));
        CHECK(salvo_stream_synchronize(st));
        tk[i] = now_s() - t2;
    }
    expect_words(buf, 1, 0, 2 * (uint32_t)iters + 1, "graph 1 node");
    cpu /= iters;
    wall /= iters;
    double m = median(t, iters) * 1e6;
    printf("graph launch + synchronize (1 node): %.1f us median (launch %.1f), %.1f us CPU "
           "(%.0f%% of wall); launch + synchronize beside it: %.1f us\n",
           m, median(tl, iters) * 1e6, cpu * 1e6, 100 * cpu / wall, median(tk, iters) * 1e6);
    metric(b, "graph_1node_roundtrip_us", m, "us");
    if (raw) {
        double f = median(tr, iters) * 1e6, fb = median(ts, iters) * 1e6;
        printf("raw floors beside them: %.1f us median (empty kernel), %.1f (the same launch); "
               "one-node graph / floors %.2f, %.2f; launch + synchronize / floors %.2f, %.2f\n",
               f, fb, m / f, m / fb, median(tk, iters) * 1e6 / f, median(tk, iters) * 1e6 / fb);
        metric(b, "graph_1node_over_raw_floor", m / f, "ratio");
        metric(b, "graph_1node_over_same_launch_floor", m / fb, "ratio");
    }
    raw_floor_close(&floor);
    raw_floor_close(&bound);
    salvo_buffer_destroy(raw_buf);
    metric(b, "graph_1node_roundtrip_cpu_us", cpu * 1e6, "us");
    free(t);
    salvo_graph_destroy(g);
    salvo_buffer_destroy(buf);
    salvo_stream_destroy(st);
}

static void bench_saxpy(bench *b, const opts *o)
{
    uint64_t mib = b->cpu && !o->full ? 64 : 1024;
    uint64_t bytes = mib << 20, n = bytes / 4;
    salvo_buffer *x = NULL, *y = NULL;
    CHECK(salvo_buffer_create(b->dev, bytes, SALVO_DOMAIN_DEVICE, &x));
    CHECK(salvo_buffer_create(b->dev, bytes, SALVO_DOMAIN_DEVICE, &y));
    /* fill through a chunk: x = 1, y = 2 */
    size_t chunk = 16u << 20;
    float *host = malloc(chunk);
    for (int which = 0; which < 2; which++) {
        for (size_t i = 0; i < chunk / 4; i++)
            host[i] = which ? 2.0f : 1.0f;
        for (uint64_t off = 0; off < bytes; off += chunk)
            CHECK(salvo_buffer_write(which ? y : x, off, host,
                                     bytes - off < chunk ? bytes - off : chunk));
    }
    salvo_stream *st = NULL;
    CHECK(stream_create(b, NULL, &st));
    /* One launch: a 2D grid when x alone cannot hold the groups. */
    uint64_t total = (n + 255) / 256, gx = total, gy = 1;
    if (gx > b->info.max_workgroup_count[0]) {
        gx = b->info.max_workgroup_count[0];
        gy = (total + gx - 1) / gx;
    }
    /* Each run: reps saxpys back to back (each reads what the previous
     * wrote), one synchronize; per-saxpy time = run / reps. */
    int runs = o->repeats + 1, reps = b->cpu && !o->full ? 4 : 20;
    double t[33];
    for (int r = 0; r < runs; r++) {
        double t0 = now_s();
        salvo_binding bd[2] = {{.binding = 0, .buffer = x, .size = bytes}, {.binding = 1, .buffer = y, .size = bytes}};
        struct { float a; uint32_t n; } push = {0.5f, (uint32_t)n};
        uint32_t groups[3] = {(uint32_t)gx, (uint32_t)gy, 1};
        for (int k = 0; k < reps; k++)
            CHECK(salvo_launch(st, b->saxpy, groups, bd, 2, &push, sizeof push));
        CHECK(salvo_stream_synchronize(st));
        t[r] = (now_s() - t0) / reps;
    }
    double m = median(t + 1, runs - 1); /* the first is a warm-up */
    double gbps = 3.0 * (double)bytes / m / 1e9;
    runs = 1 + runs * reps; /* saxpys applied, for the check below */
    float probe[2];
    CHECK(salvo_buffer_read(y, 0, &probe[0], 4));
    CHECK(salvo_buffer_read(y, bytes - 4, &probe[1], 4));
    float want = 2.0f + 0.5f * (float)(runs - 1);
    if (probe[0] != want || probe[1] != want) {
        fprintf(stderr, "saxpy: %g %g, want %g\n", probe[0], probe[1], want);
        exit(1);
    }
    printf("saxpy %llu MiB per array: %.1f GB/s (median of %d runs of %d)\n",
           (unsigned long long)mib, gbps, o->repeats, reps);
    metric(b, "saxpy_gbps", gbps, "GB/s");
    free(host);
    salvo_stream_destroy(st);
    salvo_buffer_destroy(x);
    salvo_buffer_destroy(y);
}

/* GB/s of salvo_copy each way between buf and host memory: stage (a HOST
 * buffer), or own imported afresh for every copy (own non-NULL). */
static void copy_rates(bench *b, const opts *o, salvo_stream *st, salvo_buffer *buf,
                       salvo_buffer *stage, char *own, uint64_t bytes, double *wg, double *rg)
{
    double w[32], r[32];
    for (int i = 0; i < o->repeats * 2; i++) {
        bool to_device = i % 2 == 0;
        salvo_buffer *host = stage;
        double t0 = now_s();
        if (own)
            CHECK(salvo_buffer_import_host(b->dev, own, bytes, SALVO_DOMAIN_HOST, &host));
        if (to_device)
            CHECK(salvo_copy(st, host, 0, buf, 0, bytes));
        else
            CHECK(salvo_copy(st, buf, 0, host, 0, bytes));
        CHECK(salvo_stream_synchronize(st));
        if (own)
            salvo_buffer_destroy(host);
        (to_device ? w : r)[i / 2] = now_s() - t0;
    }
    *wg = bytes / median(w, o->repeats) / 1e9;
    *rg = bytes / median(r, o->repeats) / 1e9;
}

static void bench_transfer(bench *b, const opts *o)
{
    uint64_t mib = b->cpu && !o->full ? 64 : 256;
    uint64_t bytes = mib << 20;
    salvo_buffer *buf = NULL;
    CHECK(salvo_buffer_create(b->dev, bytes, SALVO_DOMAIN_DEVICE, &buf));
    char *host = malloc(bytes);
    memset(host, 7, bytes);
    double w[32], r[32];
    for (int i = 0; i < o->repeats; i++) {
        double t0 = now_s();
        CHECK(salvo_buffer_write(buf, 0, host, bytes));
        w[i] = now_s() - t0;
        t0 = now_s();
        CHECK(salvo_buffer_read(buf, 0, host, bytes));
        r[i] = now_s() - t0;
    }
    double wg = bytes / median(w, o->repeats) / 1e9, rg = bytes / median(r, o->repeats) / 1e9;
    printf("transfers %llu MiB: write %.1f GB/s, read %.1f GB/s (salvo_buffer_write/read, host "
           "copy included)\n",
           (unsigned long long)mib, wg, rg);
    metric(b, "transfer_write_gbps", wg, "GB/s");
    metric(b, "transfer_read_gbps", rg, "GB/s");
    /* The device's copy engine between a mapped HOST buffer and a DEVICE
     * buffer (salvo_copy): what a staging copy costs. */
    salvo_buffer *stage = NULL;
    CHECK(salvo_buffer_create(b->dev, bytes, SALVO_DOMAIN_HOST, &stage));
    char *mapped = NULL;
    CHECK(salvo_buffer_map(stage, (void **)&mapped));
    memset(mapped, 3, bytes);
    salvo_stream *st = NULL;
    CHECK(stream_create(b, NULL, &st));
    copy_rates(b, o, st, buf, stage, NULL, bytes, &wg, &rg);
    if (mapped[0] != 3 || mapped[bytes - 1] != 3) {
        fprintf(stderr, "copy: wrong bytes back\n");
        exit(1);
    }
    printf("copies %llu MiB: host->device %.1f GB/s, device->host %.1f GB/s (salvo_copy with a "
           "HOST buffer)\n",
           (unsigned long long)mib, wg, rg);
    metric(b, "copy_h2d_gbps", wg, "GB/s");
    metric(b, "copy_d2h_gbps", rg, "GB/s");
    /* The program's own memory imported for each copy (salvo_buffer_import_host
     * pins its pages), copied and released: what a zero-copy transfer of
     * memory salvo did not allocate costs, the import included. */
    uint64_t align = b->info.host_import_alignment;
    char *own = b->info.host_import && bytes % align == 0 ? aligned_alloc(align, bytes) : NULL;
    if (own) {
        memset(own, 5, bytes);
        copy_rates(b, o, st, buf, NULL, own, bytes, &wg, &rg);
        if (own[0] != 5 || own[bytes - 1] != 5) {
            fprintf(stderr, "imported copy: wrong bytes back\n");
            exit(1);
        }
        printf("imported copies %llu MiB: host->device %.1f GB/s, device->host %.1f GB/s "
               "(import, salvo_copy, destroy)\n",
               (unsigned long long)mib, wg, rg);
        metric(b, "import_copy_h2d_gbps", wg, "GB/s");
        metric(b, "import_copy_d2h_gbps", rg, "GB/s");
        free(own);
    }
    salvo_stream_destroy(st);
    salvo_buffer_destroy(stage);
    free(host);
    salvo_buffer_destroy(buf);
}

static void bench_gate(bench *b, const opts *o)
{
    salvo_gate *g = NULL;
    if (salvo_gate_create(b->dev, &g) == SALVO_ERROR_UNSUPPORTED) {
        printf("gate latency: unsupported (no timeline semaphores)\n");
        return;
    }
    int iters = b->cpu && !o->full ? 100 : 500;
    salvo_buffer *buf = NULL;
    CHECK(salvo_buffer_create(b->dev, 256, SALVO_DOMAIN_DEVICE, &buf));
    salvo_stream *st = NULL;
    salvo_event *ev = NULL;
    CHECK(stream_create(b, NULL, &st));
    CHECK(salvo_event_create(b->dev, &ev));
    uint32_t push[2] = {64, 1};
    uint32_t groups[3] = {1, 1, 1};
    salvo_binding bd = {.binding = 0, .buffer = buf};
    double *t = malloc(sizeof *t * (size_t)iters * 2), *tr = t + iters;
    /* The floor, in turn with salvo's trips: the same launch (add, its
     * buffer and constants pushed) recorded once, its submit waiting on a
     * timeline the host signals 200 us later, timed from the signal to
     * the dispatch's timeline read complete; on a buffer of its own. */
    raw_floor floor;
    salvo_buffer *raw_buf = NULL;
    CHECK(salvo_buffer_create(b->dev, 256, SALVO_DOMAIN_DEVICE, &raw_buf));
    bool raw = raw_floor_open(&floor, b->dev, RAW_GATE | RAW_BIND, raw_buf, stream_queue(b));
    for (int i = 0; i < iters; i++) {
        tr[i] = raw ? raw_floor_trip(&floor) : 0;
        CHECK(salvo_stream_wait_gate(st, g, (uint64_t)i + 1));
        CHECK(salvo_launch(st, b->add, groups, &bd, 1, push, sizeof push));
        CHECK(salvo_event_record(ev, st));
        CHECK(salvo_stream_flush(st));
        /* let the device reach the wait */
        struct timespec pause = {0, 200 * 1000};
        nanosleep(&pause, NULL);
        double t0 = now_s();
        CHECK(salvo_gate_raise(g, (uint64_t)i + 1));
        salvo_status q;
        while ((q = salvo_event_query(ev)) == SALVO_NOT_READY) {
        }
        CHECK(q);
        t[i] = now_s() - t0;
    }
    CHECK(salvo_stream_synchronize(st));
    double m = median(t, iters);
    printf("gate latency (raise -> launch seen complete): %.1f us median\n", m * 1e6);
    metric(b, "gate_latency_median_us", m * 1e6, "us");
    if (raw) {
        double f = median(tr, iters);
        printf("raw gate floor beside it (same process and queue; the same launch pre-recorded, "
               "waiting on a timeline the host signals): %.1f us median; gate / floor %.2f\n",
               f * 1e6, m / f);
        metric(b, "raw_floor_gate_us", f * 1e6, "us");
        metric(b, "gate_over_raw_floor", m / f, "ratio");
    }
    raw_floor_close(&floor);
    salvo_buffer_destroy(raw_buf);
    free(t);
    salvo_event_destroy(ev);
    salvo_stream_destroy(st);
    salvo_buffer_destroy(buf);
    salvo_gate_destroy(g);
}

/* Seconds for k spin kernels (one workgroup each) on st, launched and
 * waited for. */
static void spin(salvo_stream *st, salvo_kernel *k, salvo_buffer *out, uint32_t iterations,
                 int count)
{
    salvo_binding bd = {.binding = 0, .buffer = out};
    uint32_t groups[3] = {1, 1, 1};
    for (int i = 0; i < count; i++)
        CHECK(salvo_launch(st, k, groups, &bd, 1, &iterations, sizeof iterations));
}

static double spin_alone(salvo_stream *st, salvo_kernel *k, salvo_buffer *out,
                         uint32_t iterations, int count)
{
    double t0 = now_s();
    spin(st, k, out, iterations, count);
    CHECK(salvo_stream_synchronize(st));
    return now_s() - t0;
}

static void bench_streams(bench *b, const opts *o)
{
    salvo_kernel_desc kd = {.spirv = spin_spv, .spirv_size = sizeof spin_spv, .name = "spin"};
    salvo_kernel *k = NULL;
    CHECK(salvo_kernel_create(b->dev, &kd, &k));
    salvo_stream *st[2];
    salvo_buffer *out[2];
    for (int i = 0; i < 2; i++) {
        CHECK(stream_create(b, NULL, &st[i]));
        CHECK(salvo_buffer_create(b->dev, 64 * sizeof(uint32_t), SALVO_DOMAIN_DEVICE, &out[i]));
    }
    /* Kernels of about 2 ms: double the loop until four take 8 ms (the
     * first run also builds what the driver builds lazily). */
    spin_alone(st[0], k, out[0], 1, 1);
    uint32_t it = 1024;
    while (it < (1u << 30) && spin_alone(st[0], k, out[0], it, 4) < 8e-3)
        it *= 2;
    const int count = 8;
    double one[32], two[32];
    for (int r = 0; r < o->repeats; r++) {
        one[r] = spin_alone(st[0], k, out[0], it, count);
        double t0 = now_s();
        for (int i = 0; i < count; i++) {
            spin(st[0], k, out[0], it, 1);
            spin(st[1], k, out[1], it, 1);
        }
        CHECK(salvo_stream_flush(st[0]));
        CHECK(salvo_stream_flush(st[1]));
        CHECK(salvo_stream_synchronize(st[0]));
        CHECK(salvo_stream_synchronize(st[1]));
        two[r] = now_s() - t0;
    }
    double ratio = median(two, o->repeats) / median(one, o->repeats);
    printf("two streams of %d kernels of %.1f ms (one workgroup): both together / one alone "
           "%.2f (1.00: side by side, 2.00: one after the other), %u queue(s)\n",
           count, median(one, o->repeats) / count * 1e3, ratio, b->info.queue_count);
    metric(b, "two_streams_ratio", ratio, "x");

    /* A copy beside kernels of about its length. */
    uint64_t bytes = (b->cpu && !o->full ? 32ull : 256ull) << 20;
    salvo_buffer *host = NULL, *dev = NULL;
    CHECK(salvo_buffer_create(b->dev, bytes, SALVO_DOMAIN_HOST, &host));
    CHECK(salvo_buffer_create(b->dev, bytes, SALVO_DOMAIN_DEVICE, &dev));
    double tc[32], tk[32], tb[32];
    double t0 = 0, copy_s = 0;
    for (int warm = 0; warm < 2; warm++) { /* the first copy also maps the pages */
        t0 = now_s();
        CHECK(salvo_copy(st[0], host, 0, dev, 0, bytes));
        CHECK(salvo_stream_synchronize(st[0]));
        copy_s = now_s() - t0;
    }
    double kernel_s = spin_alone(st[1], k, out[1], it, 4) / 4;
    int kernels = copy_s / kernel_s < 1 ? 1 : (int)(copy_s / kernel_s + 0.5);
    for (int r = 0; r < o->repeats; r++) {
        t0 = now_s();
        CHECK(salvo_copy(st[0], host, 0, dev, 0, bytes));
        CHECK(salvo_stream_synchronize(st[0]));
        tc[r] = now_s() - t0;
        tk[r] = spin_alone(st[1], k, out[1], it, kernels);
        t0 = now_s();
        CHECK(salvo_copy(st[0], host, 0, dev, 0, bytes));
        spin(st[1], k, out[1], it, kernels);
        CHECK(salvo_stream_flush(st[0]));
        CHECK(salvo_stream_flush(st[1]));
        CHECK(salvo_stream_synchronize(st[0]));
        CHECK(salvo_stream_synchronize(st[1]));
        tb[r] = now_s() - t0;
    }
    double c = median(tc, o->repeats), kk = median(tk, o->repeats), both = median(tb, o->repeats);
    double longer = c > kk ? c : kk, shorter = c > kk ? kk : c;
    double serial = (both - longer) / shorter;
    printf("copy %llu MiB (%.1f ms) beside %d kernels (%.1f ms) on another stream: %.2f of the "
           "way from overlapped (0) to serial (1)\n",
           (unsigned long long)(bytes >> 20), c * 1e3, kernels, kk * 1e3, serial);
    metric(b, "copy_beside_kernels_serial_fraction", serial, "fraction");
    salvo_buffer_destroy(host);
    salvo_buffer_destroy(dev);
    for (int i = 0; i < 2; i++) {
        salvo_buffer_destroy(out[i]);
        salvo_stream_destroy(st[i]);
    }
    salvo_kernel_destroy(k);
}

static const char *type_name(salvo_device_type t)
{
    switch (t) {
    case SALVO_DEVICE_TYPE_DISCRETE: return "discrete";
    case SALVO_DEVICE_TYPE_INTEGRATED: return "integrated";
    case SALVO_DEVICE_TYPE_VIRTUAL: return "virtual";
    case SALVO_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
    }
}

int main(int argc, char **argv)
{
    opts o = {.repeats = 5};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
            o.json = argv[++i];
        else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc)
            o.repeats = atoi(argv[++i]);
        else if (strcmp(argv[i], "--full") == 0)
            o.full = true;
        else {
            fprintf(stderr, "usage: %s [--json FILE] [--repeats N] [--full]\n", argv[0]);
            return 2;
        }
    }
    if (o.repeats < 1 || o.repeats > 31)
        o.repeats = 5;
    bench b = {0};
    CHECK(salvo_device_create(NULL, &b.dev));
    CHECK(salvo_device_info_get(b.dev, &b.info));
    b.cpu = b.info.type == SALVO_DEVICE_TYPE_CPU;
    b.align = b.info.min_storage_buffer_offset_alignment > 256
                  ? b.info.min_storage_buffer_offset_alignment
                  : 256;
    b.add = kernel(b.dev, add_spv, sizeof add_spv, "add", 64);
    b.saxpy = kernel(b.dev, saxpy_spv, sizeof saxpy_spv, "saxpy", 256);
    if (o.json) {
        b.json = fopen(o.json, "w");
        if (!b.json) {
            perror(o.json);
            return 1;
        }
        fprintf(b.json, "{\n  \"device\": \"%s\",\n  \"type\": \"%s\",\n  \"driver\": \"%s\",\n"
                        "  \"batch_default\": %u,\n  \"repeats\": %d,\n  \"metrics\": {",
                b.info.name, type_name(b.info.type), b.info.driver_info, b.info.batch_size,
                o.repeats);
    }
    printf("device %s (%s), driver %s, default batch %u, medians of %d runs%s\n", b.info.name,
           type_name(b.info.type), b.info.driver_info, b.info.batch_size, o.repeats,
           b.cpu && !o.full ? ", sizes scaled down for a CPU device" : "");
    bench_chains(&b, &o);
    bench_record(&b, &o);
    bench_roundtrip(&b, &o);
    bench_graphs(&b, &o);
    bench_saxpy(&b, &o);
    bench_transfer(&b, &o);
    bench_gate(&b, &o);
    bench_streams(&b, &o);
    if (b.json) {
        fprintf(b.json, "\n  }\n}\n");
        fclose(b.json);
    }
    salvo_kernel_destroy(b.add);
    salvo_kernel_destroy(b.saxpy);
    salvo_device_destroy(b.dev);
    return 0;
}
