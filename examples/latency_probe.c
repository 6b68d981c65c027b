/*
 * latency-probe: one of salvo-bench's latency figures, alone in a process,
 * so that a build with -DSALVO_DRIVER_CLOCK=ON can say where its host time
 * goes (the driver clock's table on stderr at exit, counted from after the
 * warm-up: divide by the operations printed here).
 *
 *   latency-probe SCENARIO [OPS]
 *
 * SCENARIO (OPS operations each, default 2000; graph ones 300,
 *          independent 30):
 *   roundtrip     launch + flush + synchronize, the launch's push value
 *                 alternating (1, 2, 1, ...): recorded at every trip
 *   repeat        the same, the same launch every time (as the raw
 *                 floors): recorded ahead (salvo_stats.launches_ahead)
 *   graph1        a one-node graph: launch + synchronize
 *   raw           the raw-Vulkan round trip of raw_floor.h
 *   raw-barrier   the same, a barrier recorded before its dispatch
 *   raw-fresh     the same, its command buffer recorded for each trip
 *   raw-wait      the same, its submit waiting on the value before
 *   raw-salvo     barrier and fresh: what a batch of one launch records
 *   raw-waited    fresh and wait, no barrier
 *   raw-bind      the add kernel, its buffer and push constants pushed
 *   raw-bind-salvo  the same, barrier and fresh
 *   empty         launch + flush + synchronize of the empty kernel (no
 *                 bindings, no push constants)
 *   independent   10,000 launches of add at the default batch size, each
 *                 on a 256-byte slice of its own (salvo-bench's
 *                 independent launches), then a synchronize: the time
 *                 per launch of the launch calls (their submits included)
 *   independent-streams  the same on OPS streams (default 16), made in
 *                 turn and kept (they take the device's queues in turn):
 *                 each stream's median of 9 operations, then a second
 *                 pass over the same streams: whether a launch's cost is
 *                 the stream's (its queue, its command memory) or the
 *                 moment's
 *   gate          as salvo-bench's gate latency: a stream waits on a host
 *                 gate, then the launch (add) and an event, flushed; 200 us
 *                 later the gate is raised and the event queried until
 *                 complete, timed from the raise; a second line gives the
 *                 queries a trip took and the host time of the one that
 *                 saw the work complete (medians)
 *   gate-empty    the same with the empty kernel
 *   gate-stream   the same (add), the stream queried instead of an event
 *   gate-untimed  the same, the event made with SALVO_EVENT_DISABLE_TIMING
 *   event-trip    repeat's launch, then an event recorded and synchronized
 *                 instead of the stream
 *   event-trip-untimed  the same, the event made with
 *                 SALVO_EVENT_DISABLE_TIMING (the launch stays recorded
 *                 ahead: no timestamp follows it)
 *   raw-gate      raw_floor.h's trip of the empty kernel waiting on a gate
 *                 the host signals 200 us after the submit, timed from the
 *                 signal
 *   raw-gate-bind the same, the add kernel bound as salvo's launch
 *   raw-gate-salvo  the same, barrier and fresh: what salvo's gated batch
 *                 of one launch records (the recording is not timed)
 *   replay-idle   launch of a 10,000-node dependent graph, device idle
 *                 (each replay synchronized before the next)
 *   replay-busy   the same, three launches back to back, then synchronize
 *   replay-busy-empty  the same, the graph's nodes the empty kernel (no
 *                 bindings, no push constants)
 *   update-idle   set one node's push constants + launch, device idle
 *   update-busy   the same, three back to back, then synchronize
 * Prints the median host time of what each operation times (see above;
 * a replay or an update: the launch call, or the update and launch).
 * Exit 0; 1 where a call failed or the validation layer (SALVO_VALIDATION)
 * reported anything; 77 without a Vulkan device; 2 on a bad argument.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <salvo/salvo.h>
#include <salvo/salvo_vulkan.h>

#include "add.spv.h"

/* Internal (libsalvo_internal.a): zero the driver clock's counts; nothing
 * in a build without it. */
void accel_vk_driver_clock_reset(void);

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#include "raw_floor.h"

#define CHECK(call)                                                                               \
    do {                                                                                          \
        salvo_status check_s = (call);                                                            \
        if (check_s != SALVO_OK) {                                                                \
            fprintf(stderr, "%s: %s\n", #call, salvo_status_string(check_s));                     \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

enum { INDEPENDENT_LAUNCHES = 10000 };

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef enum scenario {
    ROUNDTRIP,
    REPEAT,
    EMPTY,
    INDEPENDENT,
    INDEPENDENT_STREAMS,
    GATE,
    GATE_EMPTY,
    GATE_STREAM,
    GATE_UNTIMED,
    EVENT_TRIP,
    EVENT_TRIP_UNTIMED,
    GRAPH1,
    REPLAY_IDLE,
    REPLAY_BUSY,
    REPLAY_EMPTY,
    UPDATE_IDLE,
    UPDATE_BUSY,
    RAW, /* this and those after it: raw_floor.h's trips */
    RAW_WITH_BARRIER,
    RAW_FRESH_RECORDED,
    RAW_WAITING,
    RAW_SALVO,
    RAW_WAITED,
    RAW_BOUND,
    RAW_BOUND_SALVO,
    RAW_GATED,
    RAW_GATED_BOUND,
    RAW_GATED_SALVO,
    SCENARIOS
} scenario;

static const struct {
    const char *name;
    unsigned raw_variant;
} scenarios[SCENARIOS] = {
    [ROUNDTRIP] = {"roundtrip", 0},
    [REPEAT] = {"repeat", 0},
    [EMPTY] = {"empty", 0},
    [INDEPENDENT] = {"independent", 0},
    [INDEPENDENT_STREAMS] = {"independent-streams", 0},
    [GATE] = {"gate", 0},
    [GATE_EMPTY] = {"gate-empty", 0},
    [GATE_STREAM] = {"gate-stream", 0},
    [GATE_UNTIMED] = {"gate-untimed", 0},
    [EVENT_TRIP] = {"event-trip", 0},
    [EVENT_TRIP_UNTIMED] = {"event-trip-untimed", 0},
    [GRAPH1] = {"graph1", 0},
    [REPLAY_IDLE] = {"replay-idle", 0},
    [REPLAY_BUSY] = {"replay-busy", 0},
    [REPLAY_EMPTY] = {"replay-busy-empty", 0},
    [UPDATE_IDLE] = {"update-idle", 0},
    [UPDATE_BUSY] = {"update-busy", 0},
    [RAW] = {"raw", 0},
    [RAW_WITH_BARRIER] = {"raw-barrier", RAW_BARRIER},
    [RAW_FRESH_RECORDED] = {"raw-fresh", RAW_FRESH},
    [RAW_WAITING] = {"raw-wait", RAW_WAIT},
    [RAW_SALVO] = {"raw-salvo", RAW_BARRIER | RAW_FRESH},
    [RAW_WAITED] = {"raw-waited", RAW_FRESH | RAW_WAIT},
    [RAW_BOUND] = {"raw-bind", RAW_BIND},
    [RAW_BOUND_SALVO] = {"raw-bind-salvo", RAW_BIND | RAW_BARRIER | RAW_FRESH},
    [RAW_GATED] = {"raw-gate", RAW_GATE},
    [RAW_GATED_BOUND] = {"raw-gate-bind", RAW_GATE | RAW_BIND},
    [RAW_GATED_SALVO] = {"raw-gate-salvo", RAW_GATE | RAW_BIND | RAW_BARRIER | RAW_FRESH},
};

static void usage(FILE *to)
{
    fprintf(to, "usage: latency-probe SCENARIO [OPS]; SCENARIO one of");
    for (int i = 0; i < SCENARIOS; i++)
        fprintf(to, " %s", scenarios[i].name);
    fprintf(to, "\n");
}

typedef struct probe {
    salvo_device *dev;
    salvo_stream *st;
    salvo_kernel *add, *empty;
    salvo_buffer *buf;
    salvo_graph *graph;
    salvo_gate *gate;
    salvo_event *event;
    uint64_t align; /* bytes between independent launches' slices */
    uint64_t gate_value;
    double *gate_last;  /* per gate trip: the host time of the query that saw it complete */
    double *gate_polls; /* per gate trip: the queries it took, that one included */
    int trip;           /* the gate trip timed now (-1 in the warm-up) */
    raw_floor floor;
} probe;

/* n launches of add (64 elements, +1) on one slice, captured. */
static salvo_graph *capture(probe *p, uint32_t n, bool empty)
{
    uint32_t push[2] = {64, 1}, groups[3] = {1, 1, 1};
    salvo_binding bd = {.binding = 0, .buffer = p->buf, .size = 256};
    CHECK(salvo_stream_begin_capture(p->st));
    for (uint32_t i = 0; i < n; i++)
        CHECK(empty ? salvo_launch(p->st, p->empty, groups, NULL, 0, NULL, 0)
                    : salvo_launch(p->st, p->add, groups, &bd, 1, push, sizeof push));
    salvo_graph *g = NULL;
    CHECK(salvo_stream_end_capture(p->st, &g));
    return g;
}

/* One operation of scenario s; returns the host time it times. */
static double op(probe *p, scenario s, int i)
{
    bool same = s == REPEAT || s == EVENT_TRIP || s == EVENT_TRIP_UNTIMED;
    uint32_t push[2] = {64, same ? 1 : 1 + (uint32_t)(i & 1)}, groups[3] = {1, 1, 1};
    salvo_binding bd = {.binding = 0, .buffer = p->buf, .size = 256};
    double t0 = now_s(), t = 0;
    switch (s) {
    case ROUNDTRIP:
    case REPEAT:
    case EMPTY:
        if (s == EMPTY)
            CHECK(salvo_launch(p->st, p->empty, groups, NULL, 0, NULL, 0));
        else
            CHECK(salvo_launch(p->st, p->add, groups, &bd, 1, push, sizeof push));
        CHECK(salvo_stream_flush(p->st));
        CHECK(salvo_stream_synchronize(p->st));
        return now_s() - t0;
    case INDEPENDENT:
        for (uint32_t k = 0; k < INDEPENDENT_LAUNCHES; k++) {
            bd.offset = (uint64_t)k * p->align;
            CHECK(salvo_launch(p->st, p->add, groups, &bd, 1, push, sizeof push));
        }
        t = (now_s() - t0) / INDEPENDENT_LAUNCHES;
        CHECK(salvo_stream_synchronize(p->st));
        return t;
    case EVENT_TRIP:
    case EVENT_TRIP_UNTIMED:
        CHECK(salvo_launch(p->st, p->add, groups, &bd, 1, push, sizeof push));
        CHECK(salvo_event_record(p->event, p->st));
        CHECK(salvo_event_synchronize(p->event));
        return now_s() - t0;
    case GATE:
    case GATE_EMPTY:
    case GATE_STREAM:
    case GATE_UNTIMED: {
        uint64_t v = ++p->gate_value;
        CHECK(salvo_stream_wait_gate(p->st, p->gate, v));
        if (s == GATE_EMPTY)
            CHECK(salvo_launch(p->st, p->empty, groups, NULL, 0, NULL, 0));
        else
            CHECK(salvo_launch(p->st, p->add, groups, &bd, 1, push, sizeof push));
        if (s != GATE_STREAM)
            CHECK(salvo_event_record(p->event, p->st));
        CHECK(salvo_stream_flush(p->st));
        struct timespec pause = {0, 200 * 1000}; /* the device reaches the wait */
        nanosleep(&pause, NULL);
        t0 = now_s();
        CHECK(salvo_gate_raise(p->gate, v));
        salvo_status q;
        double polls = 0, before;
        do {
            before = now_s();
            q = s == GATE_STREAM ? salvo_stream_query(p->st) : salvo_event_query(p->event);
            polls++;
        } while (q == SALVO_NOT_READY);
        double end = now_s();
        CHECK(q);
        if (p->trip >= 0) {
            p->gate_last[p->trip] = end - before;
            p->gate_polls[p->trip] = polls;
        }
        return end - t0;
    }
    case GRAPH1:
        CHECK(salvo_graph_launch(p->graph, p->st));
        CHECK(salvo_stream_synchronize(p->st));
        return now_s() - t0;
    case REPLAY_IDLE:
    case UPDATE_IDLE:
        if (s == UPDATE_IDLE)
            CHECK(salvo_graph_set_push(p->graph, 5000, push, sizeof push));
        CHECK(salvo_graph_launch(p->graph, p->st));
        t = now_s() - t0;
        CHECK(salvo_stream_synchronize(p->st));
        return t;
    case REPLAY_BUSY:
    case REPLAY_EMPTY:
    case UPDATE_BUSY:
        /* The third of three back to back: the device busy with two. */
        for (int k = 0; k < 3; k++) {
            t0 = now_s();
            if (s == UPDATE_BUSY)
                CHECK(salvo_graph_set_push(p->graph, 5000, push, sizeof push));
            CHECK(salvo_graph_launch(p->graph, p->st));
            t = now_s() - t0;
        }
        CHECK(salvo_stream_synchronize(p->st));
        return t;
    default:
        return raw_floor_trip(&p->floor);
    }
}

/* independent-streams: n streams (at most 64) made in turn and kept; per
 * stream, the median of 9 operations of independent after 3 of warm-up,
 * in two passes over the same streams. Returns how many operations the
 * first stream then runs for the usual line (9). */
static int independent_streams(probe *p, int n, uint32_t queues)
{
    salvo_stream *sts[64];
    double med[2][64];
    if (n > 64)
        n = 64;
    sts[0] = p->st; /* made first: the device's first queue */
    for (int k = 1; k < n; k++)
        CHECK(salvo_stream_create(p->dev, NULL, &sts[k]));
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < n; k++) {
            p->st = sts[k];
            double t[9];
            for (int i = 0; i < 3; i++)
                op(p, INDEPENDENT, i);
            for (int i = 0; i < 9; i++)
                t[i] = op(p, INDEPENDENT, i);
            qsort(t, 9, sizeof *t, by_value);
            med[pass][k] = t[4];
        }
    printf("independent-streams: %d streams over %u queue(s); us a launch, medians of 9\n", n,
           queues);
    printf("stream  queue  pass 1  pass 2\n");
    for (int k = 0; k < n; k++)
        printf("%6d  %5u  %6.2f  %6.2f\n", k, (uint32_t)k % queues, med[0][k] * 1e6,
               med[1][k] * 1e6);
    p->st = sts[0];
    for (int k = 1; k < n; k++)
        salvo_stream_destroy(sts[k]);
    return 9;
}

int main(int argc, char **argv)
{
    int s = -1;
    if (argc >= 2)
        for (int i = 0; i < SCENARIOS; i++)
            if (strcmp(argv[1], scenarios[i].name) == 0)
                s = i;
    if (argc >= 2 && strcmp(argv[1], "--help") == 0) {
        usage(stdout);
        return 0;
    }
    if (s < 0 || argc > 3) {
        usage(stderr);
        return 2;
    }
    bool raw = s >= RAW, graph = s >= GRAPH1 && !raw;
    int ops = argc == 3                 ? atoi(argv[2])
              : s == INDEPENDENT        ? 30
              : s == INDEPENDENT_STREAMS ? 16
              : graph && s != GRAPH1    ? 300
                                        : 2000;
    if (ops < 1)
        ops = 1;
    probe p = {0};
    if (salvo_device_create(NULL, &p.dev) != SALVO_OK)
        return 77;
    salvo_spec_constant sc = {0, 64};
    salvo_kernel_desc kd = {.spirv = add_spv, .spirv_size = sizeof add_spv, .name = "add",
                            .spec_constants = &sc, .spec_constant_count = 1};
    CHECK(salvo_kernel_create(p.dev, &kd, &p.add));
    salvo_kernel_desc ed = {.spirv = empty_spv, .spirv_size = sizeof empty_spv, .name = "empty"};
    CHECK(salvo_kernel_create(p.dev, &ed, &p.empty));
    salvo_device_info info;
    CHECK(salvo_device_info_get(p.dev, &info));
    p.align = 256;
    while (p.align % info.min_storage_buffer_offset_alignment)
        p.align += 256;
    bool streams = s == INDEPENDENT_STREAMS;
    if (streams)
        s = INDEPENDENT;
    uint64_t bytes = s == INDEPENDENT ? INDEPENDENT_LAUNCHES * p.align + 256 : 256;
    CHECK(salvo_buffer_create(p.dev, bytes, SALVO_DOMAIN_DEVICE, &p.buf));
    CHECK(salvo_stream_create(p.dev, NULL, &p.st));
    if (s >= GATE && s <= EVENT_TRIP_UNTIMED) {
        if (s <= GATE_UNTIMED && salvo_gate_create(p.dev, &p.gate) != SALVO_OK) {
            fprintf(stderr, "latency-probe: no timeline semaphores for a gate\n");
            return 77;
        }
        bool untimed = s == GATE_UNTIMED || s == EVENT_TRIP_UNTIMED;
        CHECK(salvo_event_create_flags(p.dev, untimed ? SALVO_EVENT_DISABLE_TIMING : 0, &p.event));
    }
    if (raw && !raw_floor_open(&p.floor, p.dev, scenarios[s].raw_variant, p.buf, 0 /* p.st's */)) {
        fprintf(stderr, "latency-probe: no Vulkan 1.2 device for the raw floor\n");
        return 77;
    }
    if (graph)
        p.graph = capture(&p, s == GRAPH1 ? 1 : 10000, s == REPLAY_EMPTY);
    if (streams)
        ops = independent_streams(&p, ops,
                                  (info.queue_count ? info.queue_count : 1) -
                                      (info.high_priority_queue && info.queue_count > 1));
    double *t = malloc(sizeof *t * (size_t)ops);
    p.gate_last = calloc((size_t)ops, sizeof *p.gate_last);
    p.gate_polls = calloc((size_t)ops, sizeof *p.gate_polls);
    if (!t || !p.gate_last || !p.gate_polls)
        return 1;
    p.trip = -1;
    for (int i = 0; i < (s == INDEPENDENT ? 3 : 20); i++) /* warm-up */
        op(&p, (scenario)s, i);
    accel_vk_driver_clock_reset();
    p.floor.submit_s = 0;
    double t0 = now_s();
    for (int i = 0; i < ops; i++) {
        p.trip = i;
        t[i] = op(&p, (scenario)s, i);
    }
    double wall = now_s() - t0;
    qsort(t, (size_t)ops, sizeof *t, by_value);
    printf("%s: %d ops, median %.2f us, p10 %.2f, p90 %.2f; wall per op %.2f us\n", scenarios[s].name,
           ops, t[ops / 2] * 1e6, t[ops / 10] * 1e6, t[ops * 9 / 10] * 1e6, wall / ops * 1e6);
    if (raw)
        printf("%s: vkQueueSubmit %.2f us per op\n", scenarios[s].name, p.floor.submit_s / ops * 1e6);
    if (s >= GATE && s <= GATE_UNTIMED) {
        /* Where a trip's time goes after the raise: the queries that found
         * the work not done yet, and the one that saw it complete. */
        qsort(p.gate_polls, (size_t)ops, sizeof *p.gate_polls, by_value);
        qsort(p.gate_last, (size_t)ops, sizeof *p.gate_last, by_value);
        printf("%s: %.0f queries a trip (median), the completing one %.2f us (median; p90 %.2f)\n",
               scenarios[s].name, p.gate_polls[ops / 2], p.gate_last[ops / 2] * 1e6,
               p.gate_last[ops * 9 / 10] * 1e6);
    }
    free(p.gate_last);
    free(p.gate_polls);
    free(t);
    /* With SALVO_VALIDATION set, a finding of the layer fails the run (the
     * raw trips' calls go through salvo's instance and are checked too). */
    salvo_stats stats;
    CHECK(salvo_device_stats(p.dev, &stats));
    if (s == REPEAT || s == ROUNDTRIP || s == EVENT_TRIP || s == EVENT_TRIP_UNTIMED)
        printf("%s: %llu of %d launches recorded ahead\n", scenarios[s].name,
               (unsigned long long)stats.launches_ahead, ops + 20);
    fflush(stdout);
    raw_floor_close(&p.floor);
    salvo_event_destroy(p.event);
    salvo_gate_destroy(p.gate);
    salvo_graph_destroy(p.graph);
    salvo_stream_destroy(p.st);
    salvo_buffer_destroy(p.buf);
    salvo_kernel_destroy(p.add);
    salvo_kernel_destroy(p.empty);
    salvo_device_destroy(p.dev);
    if (stats.validation_messages) {
        fprintf(stderr, "latency-probe: the validation layer reported %llu messages\n",
                (unsigned long long)stats.validation_messages);
        return 1;
    }
    return 0;
}
