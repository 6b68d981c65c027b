/*
 * model_random: a model-based random tester of salvo's public API.
 *
 * From a seed it opens a device (lavapipe with the validation layer in CI),
 * generates a random program of public calls and checks every outcome
 * against a CPU model of the buffers: each status against what the API
 * promises, and every value read back against the model, element by
 * element. The generated programs are race-free (a buffer last touched on
 * another stream is ordered by an event wait, a synchronize or a host
 * transfer first), so applying the calls to the model in issue order is a
 * valid linearisation of what the device did.
 *
 * Failures print the seed, the configuration and the trace of calls, one
 * line per call, which --replay FILE executes again with the same checks.
 *
 *   model_random                       what ctest runs (MODEL_* env below)
 *   model_random --seed S [--ops M]    one seed
 *   model_random --seeds N --first S   N seeds from S
 *   model_random --threads N           each seed on N threads (2..4)
 *   model_random --seconds T           seeds until T seconds are up
 *   model_random --sync                also synchronization validation
 *   model_random --replay FILE         execute a trace (single-thread)
 *   model_random --trace FILE          write the failing trace there too
 *   model_random --fake-queues N       on the fake accelerator: N compute
 *                                      queues and a copy queue (README)
 *
 * The long run (about ten minutes, every configuration, plus threads):
 *
 *   build/tests/model/model_random --seconds 600 --sync --mix-threads
 *
 * Environment: MODEL_SEEDS, MODEL_THREAD_SEEDS, MODEL_OPS, MODEL_SECONDS
 * (the default run's size), MODEL_SYNC=1 (as --sync), MODEL_WATCHDOG
 * (seconds per seed before the watchdog aborts, default 120), MODEL_AVOID
 * (README: what to step around), MODEL_FAKE_QUEUES (as --fake-queues).
 *
 * Every SALVO_API function is called here (ctest model_vocabulary checks
 * it against the headers and README's coverage table).
 */
#define _GNU_SOURCE /* pthread_cond_timedwait with CLOCK_MONOTONIC helpers */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "salvo/salvo.h"
#define VK_NO_PROTOTYPES
#include "salvo/salvo_vulkan.h"

#include "add.spv.h"
#include "addr_add.spv.h"
#include "arr_add.spv.h"
#include "copy.spv.h"
#include "empty.spv.h"
#include "img_add.spv.h"
#include "img_fetch_add.spv.h"
#include "support/fake_accel.h"

#define SKIP_EXIT 77

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MODEL_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define MODEL_SANITIZED 1
#endif
#endif
#ifndef MODEL_SANITIZED
#define MODEL_SANITIZED 0
#endif

enum {
    MAX_STREAMS = 4,  /* live stream slots per thread */
    MAX_BUFS = 6,
    MAX_EVENTS = 4,
    MAX_GATES = 2,
    MAX_KERNELS = 4,  /* k0/k2 add, k1/k3 copy */
    MAX_SID = 48,     /* streams created per seed and thread (ids never reused) */
    MAX_THREADS = 4,
    MAX_ARGS = 11,
    RAISE_QUEUE = 512,
    LOST_TAIL = 15,   /* calls issued after a loss, to see they fail fast */
    MAX_GRAPHS = 4,   /* graph slots per thread */
    MAX_CAPS = 2,     /* captures in progress per thread */
    MAX_ZOMBIES = 12, /* destroyed buffers that graphs still use, modelled privately */
    MAX_IMAGES = 2,   /* image slots per thread */
    NBUF = MAX_BUFS + MAX_ZOMBIES
};

/* ------------------------------------------------------------------ */
/* Operations: one text line each, so a trace replays                  */
/* ------------------------------------------------------------------ */

#define OPS(X)                                                                                     \
    X(STREAM_CREATE, "stream_create", "s fb pri")                                                  \
    X(STREAM_DESTROY, "stream_destroy", "s")                                                       \
    X(BUFFER_CREATE, "buffer_create", "b dom n")                                                   \
    X(BUFFER_DESTROY, "buffer_destroy", "b")                                                       \
    X(KERNEL_CREATE, "kernel_create", "k kind local")                                              \
    X(KERNEL_DESTROY, "kernel_destroy", "k")                                                       \
    X(EVENT_CREATE, "event_create", "e untimed")                                                   \
    X(EVENT_DESTROY, "event_destroy", "e")                                                         \
    X(GATE_CREATE, "gate_create", "g")                                                             \
    X(GATE_DESTROY, "gate_destroy", "g drop")                                                      \
    X(LAUNCH_ADD, "launch_add", "s k b off sz n v extra")                                          \
    X(LAUNCH_COPY, "launch_copy", "s k src soff ssz dst doff dsz n add")                           \
    X(LAUNCH_ADDR, "launch_addr", "s b off n v")                                                   \
    X(LAUNCH_ARR, "launch_arr", "s b0 off0 sz0 b1 off1 sz1 n v")                                   \
    X(LAUNCH_BARE, "launch_bare", "s gx")                                                          \
    X(FILL, "fill", "s b off n v")                                                                 \
    X(FILL_PATTERN, "fill_pattern", "s b off n w p")                                               \
    X(LAUNCH_INDIRECT, "launch_indirect", "s k b off sz n v gx gy gz mode")                        \
    X(SWRITE, "stream_write", "s b off n seed")                                                    \
    X(COPY, "copy", "s src soff dst doff n")                                                       \
    X(WRITE, "write", "b off n seed")                                                              \
    X(READ, "read", "b off n")                                                                     \
    X(MAP_WRITE, "map_write", "b off n seed")                                                      \
    X(MAP_READ, "map_read", "b off n")                                                             \
    X(FLUSH, "flush", "s")                                                                         \
    X(SYNC, "sync", "s")                                                                           \
    X(DSYNC, "device_sync", "")                                                                    \
    X(EV_RECORD, "event_record", "e s")                                                            \
    X(EV_QUERY, "event_query", "e")                                                                \
    X(EV_SYNC, "event_sync", "e")                                                                  \
    X(EV_CANCEL, "event_cancel", "e")                                                              \
    X(EV_WAIT, "event_wait", "e t")                                                                \
    X(EV_ELAPSED, "event_elapsed", "e e2")                                                         \
    X(STREAM_QUERY, "stream_query", "s")                                                           \
    X(WAIT_EVENT, "wait_event", "s e")                                                             \
    X(WAIT_GATE, "wait_gate", "s g v delay_us")                                                    \
    X(STATS, "stats", "")                                                                          \
    X(BEGIN_CAPTURE, "begin_capture", "s")                                                         \
    X(END_CAPTURE, "end_capture", "s gr")                                                          \
    X(GRAPH_LAUNCH, "graph_launch", "gr s")                                                        \
    X(GRAPH_SET_PUSH, "graph_set_push", "gr node n v")                                             \
    X(GRAPH_SET_BINDINGS, "graph_set_bindings", "gr node b off sz b2 off2 sz2")                    \
    X(GRAPH_UPDATE, "graph_update", "gr from")                                                     \
    X(GRAPH_DESTROY, "graph_destroy", "gr")                                                        \
    X(SREAD, "stream_read", "s b off n")                                                           \
    X(HOST_CALL, "host_call", "s b off n seed mode")                                               \
    X(VK_RECORD, "vk_record", "s b off n v decl")                                                  \
    X(IMAGE_CREATE, "image_create", "i w h")                                                       \
    X(IMAGE_DESTROY, "image_destroy", "i")                                                         \
    X(IMAGE_ADD, "image_add", "s b off i x y w h v mode")                                          \
    X(IMAGE_HOST, "image_host", "i x y w h seed")                                                  \
    X(IMAGE_COPY, "image_copy", "s i x y w h i2 x2 y2 seed")                                       \
    X(FORMAT_QUERY, "format_query", "f")                                                           \
    X(BUFFER_IMPORT, "buffer_import", "b dom n seed bad")                                          \
    X(TRACE_START, "trace_start", "bad")                                                           \
    X(TRACE_STOP, "trace_stop", "")                                                                \
    X(DEFAULT_ALLOCATOR, "default_allocator", "mode")                                              \
    X(VK_DEVICE, "vk_device", "mode seed")                                                         \
    X(BAD, "bad", "what s b k e g gr node i")                                                      \
    X(LOST_ELSEWHERE, "lost_elsewhere", "")                                                        \
    X(END_CHECK, "end_check", "")

enum op_kind {
#define X(id, name, keys) OP_##id,
    OPS(X)
#undef X
        OP_COUNT
};

static const char *const op_names[] = {
#define X(id, name, keys) name,
    OPS(X)
#undef X
};
static const char *const op_keys[] = {
#define X(id, name, keys) keys,
    OPS(X)
#undef X
};

typedef struct op {
    enum op_kind kind;
    int64_t a[MAX_ARGS];
} op;

/* Deliberately bad calls: each must return SALVO_ERROR_INVALID_ARGUMENT
 * and change nothing. */
enum bad_kind {
    BAD_LAUNCH_NULL_STREAM,
    BAD_LAUNCH_NULL_KERNEL,
    BAD_LAUNCH_NO_BINDINGS,
    BAD_LAUNCH_PUSH_SIZE,
    BAD_LAUNCH_RANGE,
    BAD_LAUNCH_UNALIGNED,
    BAD_COPY_OVERLAP,
    BAD_COPY_RANGE,
    BAD_WRITE_RANGE,
    BAD_READ_RANGE,
    BAD_WRITE_NULL,
    BAD_MAP_DEVICE,
    BAD_BUFFER_ZERO,
    BAD_RECORD_NULL,
    BAD_WAIT_NULL,
    BAD_GATE_LOWER,
    BAD_KERNEL_SIZE,
    BAD_BEGIN_CAPTURE_NULL,
    BAD_END_CAPTURE_NULL,
    BAD_GRAPH_LAUNCH_NULL,
    BAD_GRAPH_PUSH_SIZE,
    BAD_GRAPH_NO_BINDINGS,
    BAD_IMAGE_ZERO,       /* an image of width 0 */
    BAD_IMAGE_REGION,     /* a copy of a box outside the image */
    BAD_IMAGE_OFFSET,     /* a copy at a buffer offset not a multiple of the texel */
    BAD_IMAGE_SIZE,       /* image_write of fewer bytes than the region holds */
    BAD_IMAGE_AS_BUFFER,  /* a buffer bound where the kernel declares a storage image */
    BAD_IMAGE_NO_SAMPLER, /* a combined image sampler bound without its sampler */
    BAD_INDIRECT_OFFSET,  /* an indirect launch's counts at an offset not a multiple of 4 */
    BAD_FILL_PATTERN,     /* a fill with a 3-byte pattern */
    BAD_COPY_IMAGE,       /* a copy between images of regions of different extents */
    BAD_EVENT_FLAGS,      /* an event made with a flag salvo does not know */
    BAD_COUNT
};

/* ------------------------------------------------------------------ */
/* Configuration and process-wide state                                */
/* ------------------------------------------------------------------ */

typedef struct config {
    uint32_t batch;
    bool staging;
    double timeout_s;
    char fault[96]; /* "" none */
    bool sync_validation;
    int threads;    /* 1: single */
    int ops;        /* generated calls per thread */
    /* The device made with allocator NULL, the default set to the counting
     * one first (salvo_default_allocator_set): it must keep that. */
    bool defalloc;
    /* 0: lavapipe. N: the fake accelerator with N compute queues and a
     * transfer queue (--fake-queues); manual: a device thread completes
     * submissions queue by queue in a random order (else at once, in
     * order); unmappable: DEVICE buffers have no mapping (staged). */
    int fake;
    bool manual, unmappable;
} config;

static config g_cfg;
static salvo_device *g_dev;
static uint32_t g_align_elems = 1;
static bool g_may_timeout; /* the config can make waits expire */
static bool g_errors_ok;   /* ... or calls fail (an injected fault) */
static bool g_lost_ok;     /* ... or lose the device */
static _Atomic uint64_t g_validation;
static _Atomic uint64_t g_injected;
static uint64_t g_seed;
static bool g_verbose;
static bool g_strict_layer;
/* MODEL_AVOID=gate_destroy: destroy gates only after every stream, to look
 * past a failure of destroying a gate that a stream still waits on. */
static bool g_avoid_gate_destroy;
/* Library bugs the tester found, fixed; MODEL_AVOID names one to step
 * around it again (see README "Library bugs it found"). empty_replay: a replay of a graph
 * of 0 nodes counts one launch in its batch and none in launches_pending,
 * which wraps below 0 when the batch completes. */
static bool g_avoid_empty_replay;
/* pool_reset: the replay after an update records the graph again into its
 * own command buffer when that is idle, resetting its descriptor pool; an
 * injected result there (vkResetDescriptorPool cannot fail: the fault
 * layer's device_lost on descpool_reset does not lose the device) fails the
 * replay with SALVO_ERROR_DEVICE_LOST and marks the queue lost without
 * abandoning its work: fences and command buffers are then destroyed while
 * in use (validation errors, then a crash). Avoided: no updates in configs
 * with a descpool_reset fault. */
static bool g_avoid_pool_reset;
/* gated_replay (threaded runs): a batch held back for a gate not raised yet
 * that holds a replay counts as binding every buffer (its buffers are not
 * listed), so a host read or write on another thread waits for it, polling
 * the gate's timeline with the queue lock dropped (queue.c wait_held_locked);
 * the owning thread destroys the gate meanwhile and the poll reads a freed
 * semaphore (validation: invalid VkSemaphore, then a crash; seeds 21319,
 * 60381, 62191 with --threads 3 --ops 150, now and then). Avoided: in
 * threaded runs no replay while a stream of the thread waited on a gate
 * since it was last synchronized, and no gate wait while one replayed. */
static bool g_avoid_gated_replay;
/* busy_destroy: salvo_stream_destroy only tries the device lock; when
 * another thread holds it, the stream that began a capture stays in it and
 * the capture is never abandoned (salvo.h: destroying it abandons it): its
 * buffers' reads stay refused, its events still let streams join, and
 * live_graphs and the buffers it holds stay up until the device goes.
 * Single-threaded runs let the gate raiser finish first (nothing else
 * takes the lock); threaded runs end such a capture instead. */
static bool g_avoid_busy_destroy;
/* call_wait (fixed; unit_host_call after_a_waited_event): a stream's wait
 * for another stream's event on the same queue is only an ordering of the
 * device's work (no semaphore, stream_wait_batch_locked), and a host call
 * waited only for the last batch of its own stream: fn ran before the
 * other stream's work that the stream waited for was over, and its reads
 * of a mapping missed what that work wrote (event_record e s=2,
 * wait_event s=1 e, host_call s=1 mode=1: seed 70). Stepped around when
 * MODEL_AVOID names it: before a host call that uses a mapping, every
 * other stream's use of the buffer is over. */
static bool g_avoid_call_wait;
/* call_value (fixed; unit_host_call values_across_a_slot_wait):
 * host_call_enqueue_locked took the call's value on the host-call timeline
 * (issued + 1) before stream_add_wait_locked, which may wait for a batch
 * slot with the queue's lock dropped; a host call or stream read of
 * another thread meanwhile took the same value: the worker signalled it
 * twice (validation: vkSignalSemaphore value must be greater than the
 * current value; then "its gate could not be raised", the device taken
 * for lost). Threaded runs, batch 16 (--threads 3 --seeds 40). Stepped
 * around when MODEL_AVOID names it: threads make those calls one at a
 * time. */
static bool g_avoid_call_value;
/* read_timeout (fixed; unit_host_call read_pending_at_destroy): with a
 * fence timeout (seed 15: batch=0 timeout=0.0005), device destroy stops
 * the host-call worker, which gives up waiting for a read's copy after a
 * few timeouts and destroyed the read's staging buffer while the copy was
 * still queued: lavapipe's queue thread crashed (SIGSEGV) running it in
 * the destroy's wait for idle. Stepped around when MODEL_AVOID names it:
 * no stream reads where a fence timeout is configured. */
static bool g_avoid_read_timeout;
/* worker_wait (fixed: the host-call thread looks at the fence when its
 * waits fail; avoided when MODEL_AVOID names it): with every
 * fence wait timing out (fault fence_wait:N:timeout:always) and no fence
 * timeout, the host-call worker waits for the batch before a call with
 * fence waits alone and never polls the fence, so the call never runs;
 * a batch after it is held on the host-call timeline, and
 * salvo_event_synchronize (or salvo_event_wait without bound) of an event
 * recorded after the call polls that timeline for ever (stream and device
 * synchronize poll the fences and finish). Seven calls on lavapipe:
 * launch_add, host_call, event_record, event_sync (README). Avoided: no
 * host calls or stream reads in such configs. */
static bool g_avoid_worker_wait;
/* call_failed_batch (fixed: events report a refused batch's failure;
 * avoided when MODEL_AVOID names it):
 * when the batch a host call's stream submits for it fails (fault
 * cmd_end:1:oom_host), an event recorded after the call reads complete
 * (salvo_event_query and salvo_event_synchronize return SALVO_OK, not the
 * failure) before fn has run; the stream's synchronize returns the failure
 * and fn has run by then. Avoided: where a fault may have fired, a point
 * an event says was passed is checked only at the end (fn ran once), a
 * stream read's values not at all. */
static bool g_avoid_call_failed_batch;
/* trace_failed_launch (fixed: the refused launch's query is reset;
 * avoided when MODEL_AVOID names it): while
 * tracing, a launch whose dispatch cannot be recorded (fault
 * cmd_dispatch:1:oom_host) leaves its timestamp query written; the next
 * launch writes it again without a reset (validation:
 * UNASSIGNED-CoreValidation-DrawState-QueryNotReset at the submit).
 * Avoided: no traces in configs with a cmd_dispatch fault. */
static bool g_avoid_trace_failed_launch;
/* cancel_twin (fixed: such a cancel is refused; avoided when MODEL_AVOID
 * names it): two events
 * recorded one after the other (no launch between), a launch, a third
 * event, salvo_event_cancel of the third (withdraws the launch): then a
 * cancel of the second returns SALVO_OK and it reads SALVO_CANCELLED,
 * though nothing before it was pending (salvo.h: INVALID_STATE). Avoided:
 * a cancel of an event recorded at the same point as an earlier one may
 * succeed; the model then takes the stream's unsubmitted writes as
 * unknown. */
static bool g_avoid_cancel_twin;
/* trace_copy_queue (fixed: the queue is chosen after the slot wait;
 * avoided when MODEL_AVOID names it; threaded runs on a device with a copy queue,
 * the fake): salvo_copy and salvo_fill choose the copy queue for a batch
 * when the device is not tracing (stream_engine.c: host_side &&
 * !q->trace), then open it (stream_open_on_locked), which may wait for a
 * batch slot with the lock dropped; a trace started meanwhile stamps the
 * batch's start into the copy queue's command buffer: a query reset there
 * (the fake's transfer_queue_work; Vulkan: vkCmdResetQueryPool needs a
 * graphics or compute queue). Avoided: no traces in threaded runs on the
 * fake. */
static bool g_avoid_trace_copy_queue;
static pthread_mutex_t g_call_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t g_layer_timeouts, g_layer_timeouts_total;
/* What the run exercised, for the summary. */
static _Atomic uint64_t g_n_cancelled, g_n_timeouts, g_n_errors;
static _Atomic uint64_t g_n_nodes, g_n_replayed, g_n_joins, g_n_refused, g_n_zombies;
/* Launches and replays salvo submitted as recorded ahead (core/ahead.h). */
static _Atomic uint64_t g_n_launches_ahead, g_n_replays_ahead;
static char g_trace_path[512];

/* ------------------------------------------------------------------ */
/* The fake accelerator (--fake-queues N, MODEL_FAKE_QUEUES)           */
/* ------------------------------------------------------------------ */

/* The fake the seed's device runs on (NULL: lavapipe); the fault of the
 * config is a script of the fake's (fake_set_result), whose call count
 * says when it fired. */
static fake_accel *g_fake;
static int g_fake_queues; /* what --fake-queues asked for (0: lavapipe) */
static char g_fault_op[48];
static uint64_t g_fault_n;
/* The model's kernels, as the fake's dispatch_hook knows them. */
static uint64_t g_h_add, g_h_copy, g_h_addr, g_h_arr, g_h_img_add, g_h_img_fetch, g_h_empty;
static _Atomic uint64_t g_fake_unknown; /* dispatches of a kernel the hook does not know */
static _Atomic uint64_t g_fake_ran;     /* dispatches the hook ran */
/* Over the run: submissions per queue (the transfer queue at index fake). */
static uint64_t g_fake_submits[ACCEL_MAX_QUEUES + 1];
static uint64_t g_fake_seeds, g_fake_manual_seeds;

/* salvo's internal device_create_with_accel (fake_open.c). */
salvo_status model_fake_device(const salvo_device_desc *desc, fake_accel *f, salvo_device **out);

/* Whether an injected failure may have happened: the fault layer logged
 * one, or the fake's scripted call was reached. */
static bool faults_seen(void)
{
    if (atomic_load(&g_injected) > 0)
        return true;
    return g_fake && g_fault_op[0] && fake_calls(g_fake, g_fault_op) >= g_fault_n;
}

static uint32_t push_word(const fake_dispatch *d, uint32_t i)
{
    uint32_t w = 0;
    if ((i + 1) * 4 <= d->push_size)
        memcpy(&w, (const char *)d->push + i * 4, 4);
    return w;
}

static const fake_dispatch_res *dispatch_res(const fake_dispatch *d, uint32_t binding,
                                             uint32_t element)
{
    for (uint32_t i = 0; i < d->res_count; i++)
        if (d->res[i].binding == binding && d->res[i].element == element && d->res[i].mem)
            return &d->res[i];
    return NULL;
}

/* words[i] += v for i < n within the groups' reach and the range. */
static void run_add(uint32_t *w, uint64_t bytes, uint64_t reach, uint32_t n, uint32_t v)
{
    for (uint64_t i = 0; i < n && i < reach && (i + 1) * 4 <= bytes; i++)
        w[i] += v;
}

/* The fake's dispatch_hook: the model's kernels run on the host, so that
 * the fake's buffers hold what lavapipe's would (the .comp files of tests/model,
 * tests/shaders/add.comp, copy.comp, img_add.comp). */
static void fake_kernel(void *user, const fake_dispatch *d)
{
    (void)user;
    uint64_t gx = d->groups[0], gy = d->groups[1];
    const fake_dispatch_res *a = dispatch_res(d, 0, 0), *b = dispatch_res(d, 1, 0);
    atomic_fetch_add(&g_fake_ran, 1);
    if (d->module_hash == g_h_add) {
        uint64_t local = 1; /* local_size_x_id = 0, default 1 */
        for (uint32_t i = 0; i < d->spec_count; i++)
            if (d->spec[i].id == 0)
                local = d->spec[i].value;
        if (a)
            run_add((uint32_t *)(void *)a->mem, a->size, gx * local, push_word(d, 0),
                    push_word(d, 1));
    } else if (d->module_hash == g_h_arr) {
        const fake_dispatch_res *a1 = dispatch_res(d, 0, 1);
        if (a)
            run_add((uint32_t *)(void *)a->mem, a->size, gx * 64, push_word(d, 0), push_word(d, 1));
        if (a1)
            run_add((uint32_t *)(void *)a1->mem, a1->size, gx * 64, push_word(d, 0),
                    push_word(d, 1));
    } else if (d->module_hash == g_h_addr) {
        uint64_t addr = push_word(d, 0) | (uint64_t)push_word(d, 1) << 32;
        if (addr) /* the fake's device address is the buffer's memory */
            run_add((uint32_t *)(uintptr_t)addr, UINT64_MAX, gx * 64, push_word(d, 2),
                    push_word(d, 3));
    } else if (d->module_hash == g_h_copy) {
        uint32_t n = push_word(d, 0), add = push_word(d, 1);
        if (a && b)
            for (uint64_t i = 0; i < n && i < gx * 64 && (i + 1) * 4 <= a->size &&
                                 (i + 1) * 4 <= b->size;
                 i++)
                ((uint32_t *)(void *)b->mem)[i] = ((const uint32_t *)(void *)a->mem)[i] + add;
    } else if (d->module_hash == g_h_img_add) {
        uint32_t v = push_word(d, 0);
        if (a && a->texel == 4)
            for (uint64_t y = 0; y < a->height && y < gy * 8; y++)
                for (uint64_t x = 0; x < a->width && x < gx * 8; x++)
                    ((uint32_t *)(void *)a->mem)[y * a->width + x] += v;
    } else if (d->module_hash == g_h_img_fetch) {
        uint32_t x0 = push_word(d, 0), y0 = push_word(d, 1), w = push_word(d, 2);
        uint32_t h = push_word(d, 3), off = push_word(d, 4), v = push_word(d, 5);
        if (a && b && a->texel == 4)
            for (uint64_t qy = 0; qy < h && qy < gy * 8; qy++)
                for (uint64_t qx = 0; qx < w && qx < gx * 8; qx++) {
                    uint64_t at = (y0 + qy) * a->width + x0 + qx, to = off + qy * w + qx;
                    if (y0 + qy < a->height && x0 + qx < a->width && (to + 1) * 4 <= b->size)
                        ((uint32_t *)(void *)b->mem)[to] =
                            ((const uint32_t *)(void *)a->mem)[at] + v;
                }
    } else if (d->module_hash != g_h_empty) { /* the empty kernel does nothing */
        atomic_fetch_add(&g_fake_unknown, 1);
    }
}

/* The device of a manual fake: completes submissions one queue at a time,
 * the queue picked at random, so that queues run ahead of one another. */
static struct {
    pthread_t thread;
    bool running;
    _Atomic bool stop;
    uint64_t rng;
} D;

static void *device_main(void *arg)
{
    fake_accel *f = arg;
    uint32_t queues = (uint32_t)g_cfg.fake + 1;
    while (!atomic_load(&D.stop)) {
        uint64_t z = (D.rng += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z ^= z >> 27;
        uint32_t q = (uint32_t)(z % queues), burst = 1 + (uint32_t)(z >> 8) % 4;
        bool any = false;
        for (uint32_t i = 0; i < burst; i++)
            any |= fake_complete_on(f, q);
        if (!any || (z >> 16) % 8 == 0) {
            struct timespec ts = {0, (long)(10000 + (z >> 24) % 90000)};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

/* Kernels are shared by every thread of a seed (created by the main
 * thread; destroyed and recreated only in single-thread runs). */
typedef struct mkernel {
    salvo_kernel *h;
    int kind; /* 0 add, 1 copy */
    uint32_t local;
} mkernel;
static mkernel g_kern[MAX_KERNELS];
/* A kernel that adds through a buffer's device address (NULL where the
 * device has none, or an injected fault refused it). */
static salvo_kernel *g_addr_kernel;
/* One that adds to both buffers of an array of two (NULL when refused). */
static salvo_kernel *g_arr_kernel;
/* The empty kernel: no bindings, no push constants, touches nothing (NULL
 * when refused). */
static salvo_kernel *g_bare_kernel;
/* Images (image_* ops): where the device offers R32_UINT images for storage
 * and sampled use, img_add (adds to every texel of a storage image) and
 * img_fetch_add (texelFetch through a combined image sampler into a
 * buffer) with the one sampler they use; each NULL when refused. */
static bool g_img_ok;
static salvo_kernel *g_img_add_kernel, *g_img_fetch_kernel;
static salvo_sampler *g_sampler;
/* vkCmdFillBuffer of the device's VkDevice, for the program's own commands
 * (vk_record); NULL where the device has no Vulkan handles. */
static PFN_vkCmdFillBuffer g_vk_fill;
/* Stream reads, host calls and recorded commands the model checked. */
static _Atomic uint64_t g_n_reads_checked, g_n_calls_checked, g_n_recorded;

/* The last warnings and errors the library logged, printed with a failure. */
static pthread_mutex_t g_log_mu = PTHREAD_MUTEX_INITIALIZER;
static char g_log_ring[8][256];
static unsigned g_log_next;

static void log_cb(void *user, salvo_log_level level, const char *file, int line,
                   const char *message)
{
    (void)user;
    (void)line;
    if (file && strcmp(file, "validation") == 0) {
        /* Under synchronization validation the layer's own queue tracker
         * gives up on work held by a gate that the host raises from
         * another thread, and says it is most likely a validation bug.
         * Counted apart (MODEL_STRICT_LAYER=1 counts them as failures). */
        if (strstr(message, "-state-timeout") && !g_strict_layer) {
            atomic_fetch_add(&g_layer_timeouts, 1);
            atomic_fetch_add(&g_layer_timeouts_total, 1);
            return;
        }
        atomic_fetch_add(&g_validation, 1);
        fprintf(stderr, "VALIDATION: %s\n", message);
        return;
    }
    if (strstr(message, "fault injected"))
        atomic_fetch_add(&g_injected, 1);
    if (level >= SALVO_LOG_WARNING) {
        pthread_mutex_lock(&g_log_mu);
        snprintf(g_log_ring[g_log_next++ % 8], sizeof g_log_ring[0], "%s:%d: %s",
                 file ? file : "?", line, message);
        pthread_mutex_unlock(&g_log_mu);
    }
}

/* Counts live host blocks: the device must give every one back. */
typedef union block_head {
    size_t size;
    max_align_t align;
} block_head;
static _Atomic int64_t g_live_blocks;

static void *count_alloc(void *user, size_t size)
{
    (void)user;
    block_head *h = malloc(sizeof *h + size);
    if (!h)
        return NULL;
    h->size = size;
    atomic_fetch_add(&g_live_blocks, 1);
    return h + 1;
}

static void count_free(void *user, void *ptr)
{
    (void)user;
    if (!ptr)
        return;
    atomic_fetch_sub(&g_live_blocks, 1);
    free((block_head *)ptr - 1);
}

static const salvo_allocator g_alloc = {count_alloc, count_free, NULL};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------ */
/* The model of one thread                                             */
/* ------------------------------------------------------------------ */

/* A range a stream's unsubmitted-for-certain work wrote: what a cancel
 * could withdraw. */
typedef struct wentry {
    uint32_t seq;
    int buf;
    uint32_t gen;
    uint32_t lo, hi;
} wentry;

/* Per stream id. Sequence numbers count the stream's launches and copies;
 * seq is the last one issued. */
typedef struct sinfo {
    bool live;
    uint32_t seq;
    uint32_t completed; /* known to have finished (host saw it) */
    uint32_t boundary;  /* known to have been submitted: no cancel can reach it */
    uint32_t vc[MAX_SID]; /* per other stream: last op this stream is ordered after */
    int cap;              /* the capture it is in (began or joined; mcap.num), 0 none */
    bool gated, replayed; /* waited on a gate / replayed a graph since synchronized */
    bool opened; /* an event record or wait since synchronized: a batch of its own */
    wentry *win;
    size_t nwin, capwin;
} sinfo;

typedef struct mbuf {
    salvo_buffer *h;
    uint32_t gen;
    salvo_domain dom;
    uint32_t n;
    uint32_t *val;
    uint8_t *known;
    /* Streams whose not yet confirmed work went into the element (directly
     * or through copies): when one of them reports a failure, the element
     * is unknown. */
    uint64_t *risk;
    uint32_t acc[MAX_SID]; /* per stream id: seq of its last use, 0 none since idle */
    uint32_t *map;
} mbuf;

enum { ES_NORMAL, ES_CANCELLED, ES_UNCERTAIN };

typedef struct mevent {
    salvo_event *h;
    bool recorded;
    int sid;
    uint32_t point;
    uint32_t vc[MAX_SID];
    int state;
    int capn; /* recorded during capture capn (mcap.num): a point of a graph, 0 none */
    bool twin; /* another event of the stream was recorded at the same point first */
    bool untimed; /* made with SALVO_EVENT_DISABLE_TIMING: elapsed refuses it */
} mevent;

/* An image: scratch for image_add, which overwrites the box it uses
 * before reading it, so the model keeps no texels, only the image's users:
 * per stream id, the seq of its last use (0: none since it was idle). */
typedef struct mimage {
    salvo_image *h;
    uint32_t w, ht;
    uint32_t acc[MAX_SID];
} mimage;

typedef struct mgate {
    salvo_gate *h;
    uint64_t scheduled; /* highest value a raise was scheduled for */
    _Atomic uint64_t raising; /* set before each raise call */
    _Atomic uint64_t raised;  /* set after it returned */
    int pending;              /* raises queued (raiser lock) */
    double last_due;
} mgate;

/* A node of a graph (or of a capture in progress): the launch or copy it
 * was captured from, with its updates. Buffers are model indices: a user
 * slot, or a zombie (>= MAX_BUFS) once the user destroyed the buffer while
 * a graph still used it. Offsets and sizes in elements (sz 0: to the
 * end). */
enum { NK_ADD, NK_LCOPY, NK_COPY, NK_ARR, NK_BARE };

typedef struct mnode {
    int kind;
    uint32_t local, groups; /* launches: they cover groups * local elements */
    int b[2];               /* add: b[0] data; copies: b[0] source, b[1] destination;
                               array add: b[0], b[1] its elements 0 and 1, both added to */
    uint32_t off[2], sz[2];
    uint32_t n, v;          /* push constants: elements, value added (copy: 0) */
    /* An indirect add: its counts (in a buffer the graph keeps) reach
     * this many elements, whatever n says. */
    bool indirect;
    uint32_t reach;
} mnode;

typedef struct nodelist {
    mnode *v;
    uint32_t n, cap;
} nodelist;

typedef struct mgraph {
    salvo_graph *h;
    nodelist nodes;
} mgraph;

typedef struct mcap {
    int num;         /* this thread's capture number, 0: the slot is free */
    int origin;      /* the stream id that began it */
    uint64_t began;  /* c->ops at the begin */
    uint32_t limit;  /* the generator ends it after this many calls */
    nodelist nodes;  /* node i: the i-th launch or copy captured with SALVO_OK */
} mcap;

/* A point of a stream whose outcome the host sees only later: a stream
 * read (dst filled once the stream passes it), a host call (fn run) or the
 * program's own recorded commands (user valid until it is passed). Kept
 * until the model knows the stream passed the point, then checked; kept
 * to the end (after the device is destroyed, which runs what is pending)
 * when a failure or a loss came in between. */
enum { PK_READ, PK_CALL, PK_VK };

typedef struct mpend {
    int kind;
    int sid;
    uint32_t point;  /* the stream's seq at the call */
    int bi;          /* the buffer (user slot) and its generation */
    uint32_t gen;
    uint32_t off, n;
    bool accepted;   /* SALVO_OK: dst is filled, fn runs once, the commands run */
    bool done;       /* the model knows the stream passed the point */
    bool unclean;    /* a failure reported for the stream, or the device lost, since */
    /* Host access to the buffer is not ordered by salvo after this point
     * (fn uses its mapping; commands with no declared uses): the generator
     * keeps host transfers and destroys of it until the point is passed. */
    bool guards;
    /* The model's contents of the range at the call (READ; CALL mode >= 1). */
    uint32_t *want;
    uint8_t *wknown;
    uint64_t *wrisk;
    uint32_t *got; /* READ: dst; CALL: what fn saw in the mapping */
    /* CALL: mode 0 counts, 1 also reads the range through the mapping, 2
     * then writes data_word(seed, i) there. */
    int mode;
    uint64_t seed;
    pthread_mutex_t *mu; /* the ctx's pend_mu: guards map and touched */
    uint32_t *map;       /* the buffer's mapping; NULL once the buffer is destroyed */
    bool touched;        /* fn used the mapping */
    _Atomic int *ran;    /* the ctx's count of its host calls that ran */
    uint32_t order;      /* CALL: its number among the ctx's accepted calls */
    _Atomic uint32_t pos; /* the number fn drew when it ran */
    _Atomic int calls;   /* fn runs / record calls */
    /* VK: one vkCmdFillBuffer. */
    PFN_vkCmdFillBuffer fill;
    VkBuffer vb;
    uint32_t value;
    uint64_t addr; /* on the fake: the buffer's device address, which names it there */
} mpend;

typedef struct ctx {
    int tid;
    uint64_t rng;
    bool replay;
    salvo_stream *sh[MAX_STREAMS];
    int ssid[MAX_STREAMS];
    sinfo sid[MAX_SID];
    int next_sid;
    mbuf buf[NBUF]; /* user slots, then zombies */
    uint32_t next_gen;
    mgraph graph[MAX_GRAPHS];
    mcap cap[MAX_CAPS];
    int next_capn;
    mevent ev[MAX_EVENTS];
    mgate gate[MAX_GATES];
    mimage img[MAX_IMAGES];
    mpend **pend;
    size_t npend, cappend;
    pthread_mutex_t pend_mu;
    _Atomic int calls_ran;     /* host calls of this ctx that ran */
    uint32_t calls_accepted;   /* ... that returned SALVO_OK */
    bool lost;
    int after_lost;
    /* lost_elsewhere (replays only): the next call reads the device as
     * not lost before it, as when another thread loses it in between. */
    bool stale_lost, stale_now;
    bool failed;
    char why[4096];
    char *trace;
    size_t tlen, tcap;
    uint64_t ops;
    uint64_t counts[OP_COUNT];
    /* Memory imported as buffers (buffer_import): freed once the device
     * is destroyed (launches that bound it may run until then). */
    void **imports;
    size_t nimports, capimports;
} ctx;

static ctx *g_ctx[MAX_THREADS];
static int g_nctx;

static void trace_add(ctx *c, const char *line)
{
    size_t n = strlen(line);
    if (c->tlen + n + 2 > c->tcap) {
        size_t cap = c->tcap ? c->tcap * 2 : 65536;
        while (cap < c->tlen + n + 2)
            cap *= 2;
        char *t = realloc(c->trace, cap);
        if (!t)
            abort();
        c->trace = t;
        c->tcap = cap;
    }
    memcpy(c->trace + c->tlen, line, n);
    c->tlen += n;
    c->trace[c->tlen++] = '\n';
    c->trace[c->tlen] = 0;
}

static void fail(ctx *c, const char *fmt, ...)
{
    if (c->failed)
        return;
    c->failed = true;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(c->why, sizeof c->why, fmt, ap);
    va_end(ap);
    if (n > 0 && (size_t)n < sizeof c->why)
        snprintf(c->why + n, sizeof c->why - (size_t)n, " [last error: %s]", salvo_last_error());
}

static uint64_t rnd64(ctx *c)
{
    uint64_t z = (c->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint32_t rnd(ctx *c, uint32_t n)
{
    return n ? (uint32_t)(rnd64(c) % n) : 0;
}

static uint32_t data_word(uint64_t seed, uint32_t i)
{
    uint64_t z = seed * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull + 1;
    z ^= z >> 31;
    z *= 0x94d049bb133111ebull;
    return (uint32_t)(z >> 32) & 0xffffff; /* small: sums never wrap in a run */
}

/* ------------------------------------------------------------------ */
/* Gate raiser: gated streams must not deadlock a single-threaded      */
/* program, so another thread raises each gate shortly after the wait. */
/* ------------------------------------------------------------------ */

typedef struct raise_req {
    mgate *g;
    uint64_t value;
    double due;
    uint64_t order; /* ties in due keep the order scheduled */
} raise_req;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    raise_req q[RAISE_QUEUE];
    int n;
    uint64_t next_order;
    bool stop;
    char error[512];
    pthread_t thread;
} R = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void *raiser_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&R.mu);
    while (!R.stop) {
        int best = -1;
        for (int i = 0; i < R.n; i++)
            if (best < 0 || R.q[i].due < R.q[best].due ||
                (R.q[i].due == R.q[best].due && R.q[i].order < R.q[best].order))
                best = i;
        if (best < 0) {
            pthread_cond_wait(&R.cv, &R.mu);
            continue;
        }
        double wait = R.q[best].due - now_s();
        if (wait > 0) {
            pthread_mutex_unlock(&R.mu);
            usleep((useconds_t)(wait * 1e6) + 1);
            pthread_mutex_lock(&R.mu);
            continue;
        }
        raise_req rq = R.q[best];
        R.q[best] = R.q[--R.n];
        /* Raised with the lock held, so that a gate is never destroyed
         * under a raise. salvo_gate_raise takes no device lock. */
        atomic_store(&rq.g->raising, rq.value);
        salvo_status st = salvo_gate_raise(rq.g->h, rq.value);
        if (st == SALVO_OK)
            atomic_store(&rq.g->raised, rq.value);
        else
            atomic_store(&rq.g->raising, atomic_load(&rq.g->raised)); /* not raised */
        bool lost = st == SALVO_ERROR_DEVICE_LOST && salvo_device_is_lost(g_dev);
        if (st != SALVO_OK && !lost && !R.error[0])
            snprintf(R.error, sizeof R.error, "gate_raise(%" PRIu64 ") returned %s: %s", rq.value,
                     salvo_status_string(st), salvo_last_error());
        rq.g->pending--;
        pthread_cond_broadcast(&R.cv);
    }
    pthread_mutex_unlock(&R.mu);
    return NULL;
}

static void raiser_schedule(mgate *g, uint64_t value, uint32_t delay_us)
{
    pthread_mutex_lock(&R.mu);
    while (R.n == RAISE_QUEUE)
        pthread_cond_wait(&R.cv, &R.mu);
    double due = now_s() + delay_us * 1e-6;
    if (due < g->last_due)
        due = g->last_due; /* per gate in order: raises are monotonic */
    g->last_due = due;
    R.q[R.n++] = (raise_req){g, value, due, R.next_order++};
    g->pending++;
    pthread_cond_broadcast(&R.cv);
    pthread_mutex_unlock(&R.mu);
}

/* Wait until every raise scheduled for g ran (g NULL: every raise). */
static void raiser_drain(mgate *g)
{
    pthread_mutex_lock(&R.mu);
    while (g ? g->pending > 0 : R.n > 0)
        pthread_cond_wait(&R.cv, &R.mu);
    pthread_mutex_unlock(&R.mu);
}

/* Drop the raises still queued for g: its destroy must release the work. */
static void raiser_withdraw(mgate *g)
{
    pthread_mutex_lock(&R.mu);
    for (int i = 0; i < R.n;) {
        if (R.q[i].g == g) {
            R.q[i] = R.q[--R.n];
            g->pending--;
        } else {
            i++;
        }
    }
    pthread_cond_broadcast(&R.cv);
    pthread_mutex_unlock(&R.mu);
}

static void raiser_check(ctx *c)
{
    pthread_mutex_lock(&R.mu);
    if (R.error[0]) {
        fail(c, "raiser: %s", R.error);
        R.error[0] = 0;
    }
    pthread_mutex_unlock(&R.mu);
}

/* ------------------------------------------------------------------ */
/* Model updates                                                       */
/* ------------------------------------------------------------------ */

static void buf_unknown(mbuf *b, uint32_t lo, uint32_t hi)
{
    for (uint32_t i = lo; i < hi && i < b->n; i++) {
        b->known[i] = 0;
        b->risk[i] = 0;
    }
}

static void all_unknown(ctx *c)
{
    for (int i = 0; i < NBUF; i++)
        if (c->buf[i].h)
            buf_unknown(&c->buf[i], 0, c->buf[i].n);
}

static void note_lost(ctx *c)
{
    if (!c->lost) {
        c->lost = true;
        all_unknown(c);
        for (size_t i = 0; i < c->npend; i++)
            c->pend[i]->unclean = true;
    }
}

/* A failure was reported for stream sid: whatever its unconfirmed work
 * wrote is unknown. */
static void stream_error(ctx *c, int sid)
{
    uint64_t bit = 1ull << sid;
    for (int i = 0; i < NBUF; i++) {
        mbuf *b = &c->buf[i];
        if (!b->h)
            continue;
        for (uint32_t j = 0; j < b->n; j++)
            if (b->risk[j] & bit) {
                b->known[j] = 0;
                b->risk[j] = 0;
            }
    }
    /* The same for what pending reads and host calls expect; a failure of
     * the stream itself may be the read's own copy (or its batch). */
    for (size_t i = 0; i < c->npend; i++) {
        mpend *p = c->pend[i];
        if (p->sid == sid)
            p->unclean = true;
        for (uint32_t j = 0; p->want && j < p->n; j++)
            if (p->wrisk[j] & bit) {
                p->wknown[j] = 0;
                p->wrisk[j] = 0;
            }
    }
}

static void stream_confirmed(ctx *c, int sid)
{
    uint64_t bit = 1ull << sid;
    for (int i = 0; i < NBUF; i++) {
        mbuf *b = &c->buf[i];
        if (b->h)
            for (uint32_t j = 0; j < b->n; j++)
                b->risk[j] &= ~bit;
    }
    for (size_t i = 0; i < c->npend; i++) {
        mpend *p = c->pend[i];
        for (uint32_t j = 0; p->want && j < p->n; j++)
            p->wrisk[j] &= ~bit;
    }
}

static void set_boundary(ctx *c, int sid, uint32_t point)
{
    sinfo *s = &c->sid[sid];
    if (point <= s->boundary)
        return;
    s->boundary = point;
    size_t k = 0;
    for (size_t i = 0; i < s->nwin; i++)
        if (s->win[i].seq > point)
            s->win[k++] = s->win[i];
    s->nwin = k;
}

static void win_add(ctx *c, int sid, int bi, uint32_t lo, uint32_t hi)
{
    sinfo *s = &c->sid[sid];
    if (s->nwin == s->capwin) {
        size_t cap = s->capwin ? s->capwin * 2 : 64;
        wentry *w = realloc(s->win, cap * sizeof *w);
        if (!w)
            abort();
        s->win = w;
        s->capwin = cap;
    }
    s->win[s->nwin++] = (wentry){s->seq, bi, c->buf[bi].gen, lo, hi};
}

/* The new op of sid (seq already advanced) used buffer bi. */
static void note_use(ctx *c, int sid, int bi)
{
    c->buf[bi].acc[sid] = c->sid[sid].seq;
}

/* Is stream sid ordered after every use in acc (per stream id: seq of the
 * last use) made on other streams? */
static bool uses_ordered(ctx *c, int sid, const uint32_t *acc, int *blocker)
{
    for (int t = 0; t < c->next_sid; t++) {
        if (t == sid || acc[t] == 0)
            continue;
        uint32_t seen = c->sid[sid].vc[t];
        if (c->sid[t].completed > seen)
            seen = c->sid[t].completed;
        if (seen < acc[t]) {
            if (blocker)
                *blocker = t;
            return false;
        }
    }
    return true;
}

/* Is stream sid ordered after every earlier use of buffer bi? */
static bool ordered(ctx *c, int sid, int bi, int *blocker)
{
    return uses_ordered(c, sid, c->buf[bi].acc, blocker);
}

/* ... and of image ii: an image_add overwrites the image, so an earlier
 * use on another stream must be over first, as for a buffer. */
static bool img_ordered(ctx *c, int sid, int ii, int *blocker)
{
    return uses_ordered(c, sid, c->img[ii].acc, blocker);
}

static bool idle(ctx *c, int bi, int *blocker)
{
    mbuf *b = &c->buf[bi];
    for (int t = 0; t < c->next_sid; t++)
        if (b->acc[t] > c->sid[t].completed) {
            if (blocker)
                *blocker = t;
            return false;
        }
    return true;
}

static void apply_add(ctx *c, int sid, int bi, uint32_t off, uint32_t n, uint32_t v)
{
    mbuf *b = &c->buf[bi];
    c->sid[sid].seq++;
    for (uint32_t i = off; i < off + n; i++) {
        b->val[i] += v;
        b->risk[i] |= 1ull << sid;
    }
    note_use(c, sid, bi);
    win_add(c, sid, bi, off, off + n);
}

static void apply_copy(ctx *c, int sid, int si, uint32_t soff, int di, uint32_t doff, uint32_t n,
                       uint32_t add)
{
    mbuf *s = &c->buf[si], *d = &c->buf[di];
    c->sid[sid].seq++;
    uint32_t *v = malloc(n * sizeof *v);
    uint8_t *k = malloc(n);
    uint64_t *r = malloc(n * sizeof *r);
    if (!v || !k || !r)
        abort();
    for (uint32_t i = 0; i < n; i++) {
        v[i] = s->val[soff + i] + add;
        k[i] = s->known[soff + i];
        r[i] = s->risk[soff + i] | (1ull << sid);
    }
    memcpy(d->val + doff, v, n * sizeof *v);
    memcpy(d->known + doff, k, n);
    memcpy(d->risk + doff, r, n * sizeof *r);
    free(v);
    free(k);
    free(r);
    note_use(c, sid, si);
    note_use(c, sid, di);
    win_add(c, sid, di, doff, doff + n);
}

/* An op that failed may or may not have run: its target is unknown. */
static void advance_unknown(ctx *c, int sid, int bi, uint32_t lo, uint32_t hi)
{
    c->sid[sid].seq++;
    buf_unknown(&c->buf[bi], lo, hi);
    note_use(c, sid, bi);
    win_add(c, sid, bi, lo, hi);
}

static void host_wrote(ctx *c, int bi, uint32_t off, uint32_t n, uint64_t seed)
{
    mbuf *b = &c->buf[bi];
    for (uint32_t i = 0; i < n; i++) {
        b->val[off + i] = data_word(seed, i);
        b->known[off + i] = 1;
        b->risk[off + i] = 0;
    }
}

/* Compare what the device gave with the model. */
static void check_values(ctx *c, int bi, uint32_t off, uint32_t n, const uint32_t *got,
                         const char *what)
{
    mbuf *b = &c->buf[bi];
    bool faults = faults_seen();
    uint32_t bad = 0, first = 0;
    char detail[512] = "";
    size_t dl = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t j = off + i;
        if (!b->known[j] || (faults && b->risk[j]))
            continue;
        if (got[i] != b->val[j]) {
            if (bad++ == 0)
                first = j;
            if (bad <= 6 && dl < sizeof detail - 64)
                dl += (size_t)snprintf(detail + dl, sizeof detail - dl, " [%u] got %u want %u", j,
                                       got[i], b->val[j]);
        }
    }
    if (bad)
        fail(c, "%s b%d: %u of %u elements differ from the model (first at %u):%s", what, bi, bad,
             n, first, detail);
}

/* ------------------------------------------------------------------ */
/* Points checked later: stream reads, host calls, recorded commands   */
/* ------------------------------------------------------------------ */

static mpend *pend_new(ctx *c, int kind, int sid, int bi, uint32_t off, uint32_t n)
{
    if (c->npend == c->cappend) {
        size_t cap = c->cappend ? c->cappend * 2 : 32;
        mpend **v = realloc(c->pend, cap * sizeof *v);
        if (!v)
            abort();
        c->pend = v;
        c->cappend = cap;
    }
    mpend *p = calloc(1, sizeof *p);
    if (!p)
        abort();
    *p = (mpend){.kind = kind, .sid = sid, .bi = bi, .gen = c->buf[bi].gen, .off = off, .n = n,
                 .mu = &c->pend_mu, .ran = &c->calls_ran};
    c->pend[c->npend++] = p;
    return p;
}

/* What the model holds in p's range now: what p must find there. */
static void pend_snapshot(ctx *c, mpend *p)
{
    const mbuf *b = &c->buf[p->bi];
    p->want = malloc(p->n * sizeof *p->want);
    p->wknown = malloc(p->n);
    p->wrisk = malloc(p->n * sizeof *p->wrisk);
    p->got = malloc(p->n * sizeof *p->got);
    if (!p->want || !p->wknown || !p->wrisk || !p->got)
        abort();
    memcpy(p->want, b->val + p->off, p->n * sizeof *p->want);
    memcpy(p->wknown, b->known + p->off, p->n);
    memcpy(p->wrisk, b->risk + p->off, p->n * sizeof *p->wrisk);
    memset(p->got, 0xee, p->n * sizeof *p->got); /* a read fills it, or leaves it so */
}

static void pend_free(mpend *p)
{
    free(p->want);
    free(p->wknown);
    free(p->wrisk);
    free(p->got);
    free(p);
}

/* p->got against what the model held at the call, as check_values. */
static void pend_compare(ctx *c, const mpend *p, const char *what)
{
    bool faults = faults_seen();
    uint32_t bad = 0, first = 0;
    char detail[512] = "";
    size_t dl = 0;
    for (uint32_t i = 0; i < p->n; i++) {
        if (!p->wknown[i] || (faults && p->wrisk[i]))
            continue;
        if (p->got[i] != p->want[i]) {
            if (bad++ == 0)
                first = p->off + i;
            if (bad <= 6 && dl < sizeof detail - 64)
                dl += (size_t)snprintf(detail + dl, sizeof detail - dl, " [%u] got %u want %u",
                                       p->off + i, p->got[i], p->want[i]);
        }
    }
    if (bad)
        fail(c, "%s of b%d (s%d at point %u): %u of %u elements differ from the model at the "
                "call (first at %u):%s", what, p->bi, p->sid, p->point, bad, p->n, first, detail);
}

/* fn of every host call: what the mapping holds (mode >= 1), then the
 * write (mode 2), then its turn among the ctx's calls, then the count
 * (last: once it is seen, fn no longer touches p). */
static void call_fn(void *user)
{
    mpend *p = user;
    pthread_mutex_lock(p->mu);
    if (p->map && p->mode >= 1) {
        memcpy(p->got, p->map + p->off, p->n * sizeof *p->got);
        if (p->mode == 2)
            for (uint32_t i = 0; i < p->n; i++)
                p->map[p->off + i] = data_word(p->seed, i);
        p->touched = true;
    }
    pthread_mutex_unlock(p->mu);
    atomic_store(&p->pos, (uint32_t)atomic_fetch_add(p->ran, 1) + 1);
    atomic_fetch_add(&p->calls, 1);
}

/* Fills the fake refused to record (fake_record_fill). */
static _Atomic uint64_t g_fake_fill_refused;

/* The program's own commands: one fill of the range (on the fake, the
 * fake's own record of a fill: the command buffer is the fake's). */
static void vk_fill_record(VkCommandBuffer cb, void *user)
{
    mpend *p = user;
    if (g_fake) {
        if (!fake_record_fill(g_fake, (void *)cb, p->addr, p->off * 4ull, p->n * 4ull, p->value))
            atomic_fetch_add(&g_fake_fill_refused, 1);
    } else {
        p->fill(cb, p->vb, p->off * 4ull, p->n * 4ull, p->value);
    }
    atomic_fetch_add(&p->calls, 1);
}

static bool pend_touched(mpend *p)
{
    pthread_mutex_lock(p->mu);
    bool t = p->touched;
    pthread_mutex_unlock(p->mu);
    return t;
}

/* p's outcome: once the model knows the stream passed its point (final
 * false), or after the device was destroyed (final: every pending read
 * and host call has run by then). */
static void pend_check(ctx *c, mpend *p, bool final, bool lost)
{
    int calls = atomic_load(&p->calls);
    bool clean = p->accepted && !p->unclean && !lost;
    switch (p->kind) {
    case PK_READ:
        if (!p->accepted) {
            for (uint32_t i = 0; i < p->n; i++)
                if (p->got[i] != 0xeeeeeeeeu) {
                    fail(c, "stream_read that did not return SALVO_OK wrote dst[%u] (b%d s%d)", i,
                         p->bi, p->sid);
                    break;
                }
        } else if (clean) {
            pend_compare(c, p, final ? "stream_read (at device destroy)" : "stream_read");
            atomic_fetch_add(&g_n_reads_checked, 1);
        }
        break;
    case PK_CALL:
        if (calls != (p->accepted ? 1 : 0)) {
            fail(c, "host call %s (s%d at point %u) ran fn %d times%s", p->accepted ? "accepted" :
                 "refused", p->sid, p->point, calls,
                 final ? " by the end" : ", though the stream has passed its point");
            break;
        }
        if (!p->accepted)
            break;
        if (atomic_load(&p->pos) != p->order)
            fail(c, "host call %u of the thread (s%d) ran as its call %u: not in the order made",
                 p->order, p->sid, atomic_load(&p->pos));
        else if (clean && p->mode >= 1 && pend_touched(p))
            pend_compare(c, p, "host call fn: what it saw in the mapping");
        atomic_fetch_add(&g_n_calls_checked, 1);
        break;
    default:
        break;
    }
}

/* Points the model now knows passed: checked, and let go when clean (a
 * failure in between: kept for the end). */
static void pend_scan(ctx *c)
{
    size_t k = 0;
    for (size_t i = 0; i < c->npend; i++) {
        mpend *p = c->pend[i];
        if (!p->done && !p->accepted && !p->guards)
            p->done = true;
        else if (!p->done && c->sid[p->sid].completed >= p->point)
            p->done = true;
        else {
            c->pend[k++] = p;
            continue;
        }
        if (p->accepted && !p->unclean && !c->lost && g_avoid_call_failed_batch &&
            faults_seen()) {
            /* Known bug call_failed_batch: an event may say the point was
             * passed while the call has not run (and a read's copy did not
             * run): fn is counted at the end, a read's values not. */
            if (p->kind == PK_READ)
                p->unclean = true;
            c->pend[k++] = p;
        } else if (p->accepted && !p->unclean && !c->lost) {
            pend_check(c, p, false, false);
            pend_free(p);
        } else {
            c->pend[k++] = p;
        }
    }
    c->npend = k;
}

/* After salvo_device_destroy: everything left ran (or never will). */
static void pend_final(ctx *c, bool lost)
{
    for (size_t i = 0; i < c->npend; i++) {
        pend_check(c, c->pend[i], true, lost);
        pend_free(c->pend[i]);
    }
    c->npend = 0;
}

/* A point not yet passed that keeps host access to buffer bi unordered
 * (see mpend.guards): its stream id, or -1. */
static int host_blocker(ctx *c, int bi)
{
    if (c->lost || bi < 0 || bi >= MAX_BUFS || !c->buf[bi].h)
        return -1;
    for (size_t i = 0; i < c->npend; i++) {
        const mpend *p = c->pend[i];
        if (p->guards && !p->done && p->bi == bi && p->gen == c->buf[bi].gen)
            return p->sid;
    }
    return -1;
}

static bool stream_guards(ctx *c, int sid)
{
    for (size_t i = 0; i < c->npend; i++)
        if (c->pend[i]->guards && !c->pend[i]->done && c->pend[i]->sid == sid)
            return true;
    return false;
}

/* Buffer bi (every buffer: -1) goes: host calls still to come find no
 * mapping. A write the model expected from one that has not run will not
 * happen. */
static void pend_revoke(ctx *c, int bi)
{
    for (size_t i = 0; i < c->npend; i++) {
        mpend *p = c->pend[i];
        if (p->kind != PK_CALL || (bi >= 0 && (p->bi != bi || p->gen != c->buf[bi].gen)))
            continue;
        pthread_mutex_lock(p->mu);
        bool touched = p->touched;
        p->map = NULL;
        pthread_mutex_unlock(p->mu);
        if (!touched && p->accepted && p->mode == 2 && bi >= 0)
            buf_unknown(&c->buf[bi], p->off, p->off + p->n);
    }
}

/* ------------------------------------------------------------------ */
/* Status expectations                                                 */
/* ------------------------------------------------------------------ */

enum {
    F_DEVICE = 1,    /* needs the device: DEVICE_LOST once it is lost */
    F_PTIMEOUT = 2,  /* may return SALVO_TIMEOUT (done, a wait expired) */
    F_NTIMEOUT = 4,  /* may return SALVO_ERROR_TIMEOUT (nothing done) */
    F_ERR = 8,       /* may fail when a fault is injected */
    F_LENIENT = 16   /* after loss: LOST or success */
};

enum outcome { OUT_OK, OUT_PTIMEOUT, OUT_NTIMEOUT, OUT_LOST, OUT_ERROR, OUT_OTHER };

static enum outcome outcome(ctx *c, const char *what, salvo_status st, unsigned flags,
                            bool lost_before)
{
    if (lost_before && (flags & F_DEVICE) && st != SALVO_ERROR_DEVICE_LOST) {
        if (!((flags & F_LENIENT) && st >= 0))
            fail(c, "%s on a lost device returned %s, expected SALVO_ERROR_DEVICE_LOST", what,
                 salvo_status_string(st));
    }
    switch ((int)st) {
    case SALVO_OK:
        return OUT_OK;
    case SALVO_ERROR_DEVICE_LOST:
        if (!salvo_device_is_lost(g_dev))
            fail(c, "%s returned SALVO_ERROR_DEVICE_LOST but salvo_device_is_lost is false", what);
        else if (!g_lost_ok && !lost_before)
            fail(c, "%s returned SALVO_ERROR_DEVICE_LOST without a fault that loses the device",
                 what);
        note_lost(c);
        return OUT_LOST;
    case SALVO_TIMEOUT:
        atomic_fetch_add(&g_n_timeouts, 1);
        if (!(flags & F_PTIMEOUT))
            fail(c, "%s returned SALVO_TIMEOUT, which it never should", what);
        else if (!g_may_timeout)
            fail(c, "%s returned SALVO_TIMEOUT with no timeout configured", what);
        return OUT_PTIMEOUT;
    case SALVO_ERROR_TIMEOUT:
        atomic_fetch_add(&g_n_timeouts, 1);
        if (!(flags & F_NTIMEOUT))
            fail(c, "%s returned SALVO_ERROR_TIMEOUT, which it never should", what);
        else if (!g_may_timeout)
            fail(c, "%s returned SALVO_ERROR_TIMEOUT with no timeout configured", what);
        return OUT_NTIMEOUT;
    case SALVO_ERROR_INVALID_ARGUMENT:
        fail(c, "%s: a valid call returned SALVO_ERROR_INVALID_ARGUMENT", what);
        return OUT_ERROR;
    default:
        if (st > 0)
            return OUT_OTHER;
        atomic_fetch_add(&g_n_errors, 1);
        if (!(flags & F_ERR) || !(g_errors_ok || lost_before))
            fail(c, "%s returned %s", what, salvo_status_string(st));
        return OUT_ERROR;
    }
}

/* ------------------------------------------------------------------ */
/* Executing one op                                                    */
/* ------------------------------------------------------------------ */

static int slot_sid(ctx *c, int s)
{
    return (s >= 0 && s < MAX_STREAMS && c->sh[s]) ? c->ssid[s] : -1;
}

static bool buf_ok(ctx *c, int64_t b)
{
    return b >= 0 && b < MAX_BUFS && c->buf[b].h;
}

static void buf_free_model(mbuf *b)
{
    free(b->val);
    free(b->known);
    free(b->risk);
    memset(b, 0, sizeof *b);
}

static void event_complete(ctx *c, mevent *e)
{
    for (int t = 0; t < c->next_sid; t++)
        if (e->vc[t] > c->sid[t].completed)
            c->sid[t].completed = e->vc[t];
    set_boundary(c, e->sid, e->point);
}

/* ------------------------------------------------------------------ */
/* Graphs in the model                                                 */
/* ------------------------------------------------------------------ */

static void nodes_add(nodelist *l, const mnode *nd)
{
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 16;
        mnode *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            abort();
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = *nd;
}

static void nodes_free(nodelist *l)
{
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int node_nbufs(const mnode *nd)
{
    return nd->kind == NK_BARE ? 0 : nd->kind == NK_ADD ? 1 : 2;
}

/* Which of nd's buffers it writes (an array add writes both: the
 * second here, and node_writes says so). */
static int node_wi(const mnode *nd)
{
    return nd->kind == NK_ADD ? 0 : 1;
}

static bool node_writes(const mnode *nd, int j)
{
    return j == node_wi(nd) || nd->kind == NK_ARR;
}

static uint32_t range_len(ctx *c, int bi, uint32_t off, uint32_t sz)
{
    return sz ? sz : c->buf[bi].n - off;
}

static mcap *cap_find(ctx *c, int num)
{
    if (num)
        for (int i = 0; i < MAX_CAPS; i++)
            if (c->cap[i].num == num)
                return &c->cap[i];
    return NULL;
}

static bool graph_ok(ctx *c, int64_t g)
{
    return g >= 0 && g < MAX_GRAPHS && c->graph[g].h;
}

static bool list_uses(const nodelist *l, int bi, bool writes)
{
    for (uint32_t i = 0; i < l->n; i++) {
        const mnode *nd = &l->v[i];
        for (int j = 0; j < node_nbufs(nd); j++)
            if (nd->b[j] == bi && (!writes || node_writes(nd, j)))
                return true;
    }
    return false;
}

/* Whether a node of a capture in progress writes buffer bi: a
 * salvo_buffer_read of it is refused then. */
static bool cap_writes(ctx *c, int bi)
{
    for (int i = 0; i < MAX_CAPS; i++)
        if (c->cap[i].num && list_uses(&c->cap[i].nodes, bi, true))
            return true;
    return false;
}

/* Whether a graph or a capture in progress uses buffer bi. */
static bool buf_referenced(ctx *c, int bi)
{
    for (int g = 0; g < MAX_GRAPHS; g++)
        if (c->graph[g].h && list_uses(&c->graph[g].nodes, bi, false))
            return true;
    for (int i = 0; i < MAX_CAPS; i++)
        if (c->cap[i].num && list_uses(&c->cap[i].nodes, bi, false))
            return true;
    return false;
}

static void list_rename(nodelist *l, int from, int to)
{
    for (uint32_t i = 0; i < l->n; i++)
        for (int j = 0; j < 2; j++)
            if (l->v[i].b[j] == from)
                l->v[i].b[j] = to;
}

static int zombie_room(ctx *c)
{
    for (int z = MAX_BUFS; z < NBUF; z++)
        if (!c->buf[z].h)
            return z;
    return -1;
}

/* The user destroyed buffer bi. While a graph uses it the library keeps
 * it, and so does the model, as a zombie that only replays reach (the
 * user sees its contents through what the graph copies out of it). */
static void buf_retire(ctx *c, int bi)
{
    if (!buf_referenced(c, bi)) {
        buf_free_model(&c->buf[bi]);
        return;
    }
    int z = zombie_room(c);
    if (z < 0) {
        fail(c, "trace: no room to model a destroyed buffer that a graph uses");
        buf_free_model(&c->buf[bi]);
        return;
    }
    c->buf[z] = c->buf[bi];
    c->buf[z].map = NULL;
    atomic_fetch_add(&g_n_zombies, 1);
    memset(&c->buf[bi], 0, sizeof c->buf[bi]);
    for (int g = 0; g < MAX_GRAPHS; g++)
        if (c->graph[g].h)
            list_rename(&c->graph[g].nodes, bi, z);
    for (int i = 0; i < MAX_CAPS; i++)
        if (c->cap[i].num)
            list_rename(&c->cap[i].nodes, bi, z);
    for (int t = 0; t < c->next_sid; t++)
        for (size_t i = 0; i < c->sid[t].nwin; i++) {
            wentry *w = &c->sid[t].win[i];
            if (w->buf == bi && w->gen == c->buf[z].gen)
                w->buf = z;
        }
}

/* Zombies no graph uses any more are gone for the model too. */
static void zombies_gc(ctx *c)
{
    for (int z = MAX_BUFS; z < NBUF; z++)
        if (c->buf[z].h && !buf_referenced(c, z))
            buf_free_model(&c->buf[z]);
}

/* Capture cp is over (ended, failed or abandoned) for every stream in it. */
static void cap_close(ctx *c, mcap *cp)
{
    for (int t = 0; t < c->next_sid; t++)
        if (c->sid[t].cap == cp->num)
            c->sid[t].cap = 0;
    nodes_free(&cp->nodes);
    cp->num = 0;
    zombies_gc(c);
}

/* A replay on stream sid ran node nd (ok), or failed: its target unknown. */
static void node_apply(ctx *c, int sid, const mnode *nd, bool ok)
{
    if (nd->kind == NK_BARE) { /* a point of the stream; touches nothing, run or not */
        c->sid[sid].seq++;
        return;
    }
    if (!ok) {
        int w = node_wi(nd);
        advance_unknown(c, sid, nd->b[w], nd->off[w], nd->off[w] + nd->n);
        if (nd->kind == NK_ARR)
            advance_unknown(c, sid, nd->b[0], nd->off[0], nd->off[0] + nd->n);
        else if (w)
            note_use(c, sid, nd->b[0]);
    } else if (nd->kind == NK_ARR) {
        for (int j = 0; j < 2; j++)
            apply_add(c, sid, nd->b[j], nd->off[j], nd->n, nd->v);
    } else if (nd->kind == NK_ADD) {
        uint32_t n = nd->indirect && nd->reach < nd->n ? nd->reach : nd->n;
        apply_add(c, sid, nd->b[0], nd->off[0], n, nd->v);
    } else {
        apply_copy(c, sid, nd->b[0], nd->off[0], nd->b[1], nd->off[1], nd->n, nd->v);
    }
}

/* A launch or copy on a capturing stream: a node, nothing runs. Only a
 * lost device refuses it. */
static void captured(ctx *c, int sid, salvo_status st, const mnode *nd, bool lost_before,
                     const char *what)
{
    mcap *cp = cap_find(c, c->sid[sid].cap);
    if (outcome(c, what, st, F_DEVICE, lost_before) == OUT_OK && cp) {
        nodes_add(&cp->nodes, nd);
        atomic_fetch_add(&g_n_nodes, 1);
    }
}

/* A call that a capture refuses: SALVO_ERROR_INVALID_STATE, nothing done
 * (some check a lost device first). */
static void expect_refused(ctx *c, const char *what, salvo_status st)
{
    if (st == SALVO_ERROR_INVALID_STATE) {
        atomic_fetch_add(&g_n_refused, 1);
        return;
    }
    if (st == SALVO_ERROR_DEVICE_LOST && salvo_device_is_lost(g_dev)) {
        note_lost(c);
        return;
    }
    fail(c, "%s returned %s, expected SALVO_ERROR_INVALID_STATE", what, salvo_status_string(st));
}

static void exec_bad(ctx *c, const op *o, bool lost_before);

/* The model after an add of v to n words of buffer bi from off returned
 * st: applied, not recorded, or unknown (the stream reports a failure). */
static void added(ctx *c, const char *what, salvo_status st, bool lost_before, int sid, int bi,
                  uint32_t off, uint32_t n, uint32_t v)
{
    switch (outcome(c, what, st, F_DEVICE | F_PTIMEOUT | F_NTIMEOUT | F_ERR, lost_before)) {
    case OUT_OK:
    case OUT_PTIMEOUT:
        apply_add(c, sid, bi, off, n, v);
        if (g_cfg.batch == 1)
            set_boundary(c, sid, c->sid[sid].seq);
        break;
    case OUT_NTIMEOUT:
        break;
    default:
        advance_unknown(c, sid, bi, off, off + n);
        stream_error(c, sid);
        break;
    }
}

static void exec_launch_add(ctx *c, const op *o, bool lost_before)
{
    int s = (int)o->a[0], k = (int)o->a[1], bi = (int)o->a[2];
    int sid = slot_sid(c, s);
    if (sid < 0 || !buf_ok(c, bi) || k < 0 || k >= MAX_KERNELS || !g_kern[k].h) {
        fail(c, "trace names a missing object");
        return;
    }
    uint32_t off = (uint32_t)o->a[3], sz = (uint32_t)o->a[4], n = (uint32_t)o->a[5];
    uint32_t v = (uint32_t)o->a[6], extra = (uint32_t)o->a[7];
    if (c->replay && !c->sid[sid].cap && !ordered(c, sid, bi, NULL))
        fprintf(stderr, "note: replayed launch_add is not ordered after another stream's use\n");
    const salvo_binding bind = {.binding = 0, .buffer = c->buf[bi].h, .offset = off * 4ull,
                                .size = sz * 4ull};
    uint32_t local = g_kern[k].local;
    const uint32_t groups[3] = {(n + local - 1) / local + extra, 1, 1};
    const uint32_t push[2] = {n, v};
    salvo_status st = salvo_launch(c->sh[s], g_kern[k].h, groups, &bind, 1, push, sizeof push);
    if (c->sid[sid].cap) {
        mnode nd = {NK_ADD, local, groups[0], {bi, -1}, {off, 0}, {sz, 0}, n, v, false, 0};
        captured(c, sid, st, &nd, lost_before, "launch (captured)");
        return;
    }
    added(c, "launch", st, lost_before, sid, bi, off, n, v);
}

/* launch_addr: as launch_add, through the buffer's device address. */
static void exec_launch_addr(ctx *c, const op *o, bool lost_before)
{
    int s = (int)o->a[0], bi = (int)o->a[1];
    int sid = slot_sid(c, s);
    if (sid < 0 || !buf_ok(c, bi) || !g_addr_kernel) {
        fail(c, "trace names a missing object");
        return;
    }
    uint32_t off = (uint32_t)o->a[2], n = (uint32_t)o->a[3], v = (uint32_t)o->a[4];
    if (c->replay && !ordered(c, sid, bi, NULL))
        fprintf(stderr, "note: replayed launch_addr is not ordered after another stream's use\n");
    uint64_t addr = 0;
    salvo_status st = salvo_buffer_address(c->buf[bi].h, &addr);
    if (st != SALVO_OK || addr == 0) {
        fail(c, "buffer_address: %s (%s)", salvo_status_string(st), salvo_last_error());
        return;
    }
    addr += off * 4ull;
    struct {
        uint32_t lo, hi, n, v;
    } push = {(uint32_t)addr, (uint32_t)(addr >> 32), n, v};
    const uint32_t groups[3] = {(n + 63) / 64, 1, 1};
    st = salvo_launch(c->sh[s], g_addr_kernel, groups, NULL, 0, &push, sizeof push);
    added(c, "launch(addr)", st, lost_before, sid, bi, off, n, v);
}

/* fill: n words of a buffer set to v, in stream order. */
static void exec_fill(ctx *c, const op *o, bool lost_before)
{
    int s = (int)o->a[0], bi = (int)o->a[1];
    int sid = slot_sid(c, s);
    if (sid < 0 || !buf_ok(c, bi)) {
        fail(c, "trace names a missing object");
        return;
    }
    uint32_t off = (uint32_t)o->a[2], n = (uint32_t)o->a[3], v = (uint32_t)o->a[4];
    if (c->replay && !ordered(c, sid, bi, NULL))
        fprintf(stderr, "note: replayed fill is not ordered after another stream's use\n");
    salvo_status st = salvo_fill(c->sh[s], c->buf[bi].h, off * 4ull, n * 4ull, v);
    switch (outcome(c, "fill", st, F_DEVICE | F_PTIMEOUT | F_NTIMEOUT | F_ERR, lost_before)) {
    case OUT_OK:
    case OUT_PTIMEOUT: {
        mbuf *b = &c->buf[bi];
        c->sid[sid].seq++;
        for (uint32_t i = off; i < off + n; i++) {
            b->val[i] = v;
            b->known[i] = 1;
            b->risk[i] = 1ull << sid;
        }
        note_use(c, sid, bi);
        win_add(c, sid, bi, off, off + n);
        if (g_cfg.batch == 1)
            set_boundary(c, sid, c->sid[sid].seq);
        break;
    }
    case OUT_NTIMEOUT:
        break;
    default:
        advance_unknown(c, sid, bi, off, off + n);
        stream_error(c, sid);
        break;
    }
}

/* fill_pattern: n bytes of a buffer from byte off (any offset; n a whole
 * number of patterns) set to the w-byte pattern p repeated from off, in
 * stream order: the words it covers change in those bytes only. */
static void exec_fill_pattern(ctx *c, const op *o, bool lost_before)
{
    int s = (int)o->a[0], bi = (int)o->a[1];
    int sid = slot_sid(c, s);
    uint32_t off = (uint32_t)o->a[2], n = (uint32_t)o->a[3], w = (uint32_t)o->a[4];
    uint32_t p = (uint32_t)o->a[5];
    if (sid < 0 || !buf_ok(c, bi) || (w != 1 && w != 2 && w != 4) || n == 0 || n % w ||
        off >= c->buf[bi].n * 4 || n > c->buf[bi].n * 4 - off) {
        fail(c, "trace names a missing object or a fill outside the buffer");
        return;
    }
    if (c->replay && !ordered(c, sid, bi, NULL))
        fprintf(stderr, "note: replayed fill_pattern is not ordered after another stream's use\n");
    unsigned char pattern[4];
    memcpy(pattern, &p, sizeof pattern);
    salvo_status st = salvo_fill_pattern(c->sh[s], c->buf[bi].h, off, n, pattern, w);
    uint32_t lo = off / 4, hi = (off + n + 3) / 4;
    switch (outcome(c, "fill_pattern", st, F_DEVICE | F_PTIMEOUT | F_NTIMEOUT | F_ERR,
                    lost_before)) {
    case OUT_OK:
    case OUT_PTIMEOUT: {
        mbuf *b = &c->buf[bi];
        c->sid[sid].seq++;
        for (uint32_t j = lo; j < hi; j++) {
            unsigned char bytes[4];
            memcpy(bytes, &b->val[j], sizeof bytes);
            uint32_t covered = 0;
            for (uint32_t k = 0; k < 4; k++) {
                uint32_t at = j * 4 + k;
                if (at >= off && at < off + n) {
                    bytes[k] = pattern[(at - off) % w];
                    covered++;
                }
            }
            memcpy(&b->val[j], bytes, sizeof bytes);
            if (covered == 4)
                b->known[j] = 1; /* a word written whole is known; a partial one as it was */
            b->risk[j] |= 1ull << sid;
        }
        note_use(c, sid, bi);
        win_add(c, sid, bi, lo, hi);
        if (g_cfg.batch == 1)
            set_boundary(c, sid, c->sid[sid].seq);
        break;
    }
    case OUT_NTIMEOUT:
        break;
    default:
        advance_unknown(c, sid, bi, lo, hi);
        stream_error(c, sid);
        break;
    }
}

/* launch_indirect: launch_add's add, the device reading its workgroup
 * counts (gx, gy, gz) from a HOST buffer of the op's own: written through
 * its mapping (mode 0), or left (1, 1, 1) there and filled on the stream
 * before the launch (mode 1: salvo_fill, the copy queue's work where there
 * is one; not on a capturing stream, whose fills would be nodes). The
 * count buffer is destroyed at once: its release waits for the launch, and
 * a graph keeps it. Words [off, off + min(n, gx * local)) get v when no
 * count is 0 (gy and gz are 0 or 1: the add is not atomic). */
static void exec_launch_indirect(ctx *c, const op *o, bool lost_before)
{
    const int64_t *a = o->a;
    int s = (int)a[0], k = (int)a[1], bi = (int)a[2], mode = (int)a[10];
    int sid = slot_sid(c, s);
    uint32_t off = (uint32_t)a[3], sz = (uint32_t)a[4], n = (uint32_t)a[5], v = (uint32_t)a[6];
    uint32_t counts[3] = {(uint32_t)a[7], (uint32_t)a[8], (uint32_t)a[9]};
    if (sid < 0 || !buf_ok(c, bi) || k < 0 || k >= MAX_KERNELS || !g_kern[k].h ||
        counts[0] > 4096 || counts[1] > 1 || counts[2] > 1 || (mode == 1 && c->sid[sid].cap)) {
        fail(c, "trace names a missing object, counts beyond what the model runs, or counts "
                "filled on a capturing stream");
        return;
    }
    if (c->replay && !c->sid[sid].cap && !ordered(c, sid, bi, NULL))
        fprintf(stderr, "note: replayed launch_indirect is not ordered after another stream's "
                        "use\n");
    salvo_buffer *cb = NULL;
    salvo_status st = salvo_buffer_create(g_dev, sizeof counts, SALVO_DOMAIN_HOST, &cb);
    if (outcome(c, "buffer_create(counts)", st, F_DEVICE | F_ERR, lost_before) != OUT_OK)
        return;
    uint32_t *mapped = NULL;
    if (salvo_buffer_map(cb, (void **)&mapped) != SALVO_OK || !mapped) {
        fail(c, "buffer_map of a HOST buffer: %s", salvo_last_error());
        salvo_buffer_destroy(cb);
        return;
    }
    for (int i = 0; i < 3; i++)
        mapped[i] = mode == 1 ? 1 : counts[i];
    const unsigned flags = F_DEVICE | F_PTIMEOUT | F_NTIMEOUT | F_ERR;
    for (int i = 0; mode == 1 && i < 3; i++) {
        st = salvo_fill(c->sh[s], cb, i * 4ull, 4, counts[i]);
        enum outcome r = outcome(c, "fill(counts)", st, flags, lost_before);
        if (r == OUT_OK || r == OUT_PTIMEOUT)
            continue;
        if (r != OUT_NTIMEOUT)
            stream_error(c, sid); /* the stream's earlier work may be gone with it */
        salvo_buffer_destroy(cb);
        return;
    }
    const salvo_binding bind = {.binding = 0, .buffer = c->buf[bi].h, .offset = off * 4ull,
                                .size = sz * 4ull};
    const uint32_t push[2] = {n, v};
    st = salvo_launch_indirect(c->sh[s], g_kern[k].h, cb, 0, &bind, 1, push, sizeof push);
    salvo_buffer_destroy(cb); /* never blocks; the launch (or a graph) keeps it */
    uint32_t local = g_kern[k].local;
    uint32_t reach = counts[1] && counts[2] ? counts[0] * local : 0;
    if (c->sid[sid].cap) {
        mnode nd = {NK_ADD, local, (n + local - 1) / local, {bi, -1}, {off, 0}, {sz, 0}, n, v,
                    true, reach};
        captured(c, sid, st, &nd, lost_before, "launch_indirect (captured)");
        return;
    }
    added(c, "launch_indirect", st, lost_before, sid, bi, off, n < reach ? n : reach, v);
}

/* stream_write: n words of data_word(seed, i) written at off, in stream
 * order (copied at the call: the source is freed at once). */
static void exec_swrite(ctx *c, const op *o, bool lost_before)
{
    int s = (int)o->a[0], bi = (int)o->a[1];
    int sid = slot_sid(c, s);
    if (sid < 0 || !buf_ok(c, bi)) {
        fail(c, "trace names a missing object");
        return;
    }
    uint32_t off = (uint32_t)o->a[2], n = (uint32_t)o->a[3];
    uint64_t seed = (uint64_t)o->a[4];
    /* calloc: gcc cannot see that every word read below is written. */
    uint32_t *src = calloc(n ? n : 1, sizeof *src);
    if (!src)
        abort();
    for (uint32_t i = 0; i < n; i++)
        src[i] = data_word(seed, i);
    salvo_status st = salvo_stream_write(c->sh[s], c->buf[bi].h, off * 4ull, src, n * 4ull);
    free(src);
    switch (outcome(c, "stream_write", st, F_DEVICE | F_PTIMEOUT | F_NTIMEOUT | F_ERR,
                    lost_before)) {
    case OUT_OK:
    case OUT_PTIMEOUT: {
        mbuf *b = &c->buf[bi];
        c->sid[sid].seq++;
        for (uint32_t i = 0; i < n; i++) {
            b->val[off + i] = data_word(seed, i);
            b->known[off + i] = 1;
            b->risk[off + i] = 1ull << sid;
        }
        note_use(c, sid, bi);
        win_add(c, sid, bi, off, off + n);
        if (g_cfg.batch == 1)
            set_boundary(c, sid, c->sid[sid].seq);
        break;
    }
    case OUT_NTIMEOUT:
        break;
    default:
        advance_unknown(c, sid, bi, off, off + n);
        stream_error(c, sid);
        break;
    }
}

/* stream_read: n words at off into memory the model owns (a pending
 * point), filled once the stream passes the call; they must equal the
 * model's contents at the call, whatever the stream does later. */
static void exec_sread(ctx *c, const op *o, bool lost_before)
{
    int s = (int)o->a[0], bi = (int)o->a[1];
    int sid = slot_sid(c, s);
    if (sid < 0 || !buf_ok(c, bi)) {
        fail(c, "trace names a missing object");
        return;
    }
    uint32_t off = (uint32_t)o->a[2], n = (uint32_t)o->a[3];
    if (c->replay && !c->sid[sid].cap && !ordered(c, sid, bi, NULL))
        fprintf(stderr, "note: replayed stream_read is not ordered after another stream's use\n");
    mpend *p = pend_new(c, PK_READ, sid, bi, off, n);
    pend_snapshot(c, p);
    bool one = g_nctx > 1 && g_avoid_call_value; /* MODEL_AVOID=call_value */
    if (one)
        pthread_mutex_lock(&g_call_mu);
    salvo_status st = salvo_stream_read(c->sh[s], c->buf[bi].h, off * 4ull, p->got, n * 4ull);
    if (one)
        pthread_mutex_unlock(&g_call_mu);
    if (c->sid[sid].cap) {
        expect_refused(c, "stream_read on a capturing stream", st);
        return;
    }
    /* The copy reads the buffer: later writes of other streams come after. */
    switch (outcome(c, "stream_read", st, F_DEVICE | F_PTIMEOUT | F_NTIMEOUT | F_ERR,
                    lost_before)) {
    case OUT_OK:
    case OUT_PTIMEOUT:
        p->accepted = true;
        c->sid[sid].seq++;
        note_use(c, sid, bi);
        set_boundary(c, sid, c->sid[sid].seq); /* submitted for the copy-out */
        break;
    case OUT_NTIMEOUT:
        c->sid[sid].seq++; /* its copy may be recorded all the same */
        note_use(c, sid, bi);
        break;
    default:
        c->sid[sid].seq++;
        note_use(c, sid, bi);
        stream_error(c, sid);
        break;
    }
    p->point = c->sid[sid].seq;
}

/* host_call: fn (call_fn) runs once the stream's earlier work is over; in
 * mode 1 and 2 it reads the range through the buffer's mapping (it must
 * see that work), in mode 2 it then writes data_word(seed, i) there: a
 * write at this point of the stream, which the stream's later work sees. */
static void exec_host_call(ctx *c, const op *o, bool lost_before)
{
    int s = (int)o->a[0], bi = (int)o->a[1];
    int sid = slot_sid(c, s);
    int mode = (int)o->a[5];
    if (sid < 0 || !buf_ok(c, bi) || (mode >= 1 && !c->buf[bi].map)) {
        fail(c, "trace names a missing object (or an unmapped buffer for a host call's mode)");
        return;
    }
    uint32_t off = (uint32_t)o->a[2], n = (uint32_t)o->a[3];
    if (c->replay && mode >= 1 && !c->sid[sid].cap && !ordered(c, sid, bi, NULL))
        fprintf(stderr, "note: replayed host_call is not ordered after another stream's use\n");
    mpend *p = pend_new(c, PK_CALL, sid, bi, off, n);
    p->mode = mode;
    p->seed = (uint64_t)o->a[4];
    if (mode >= 1) {
        pend_snapshot(c, p);
        p->map = c->buf[bi].map;
    }
    p->order = c->calls_accepted + 1; /* fn may run before the call returns */
    bool one = g_nctx > 1 && g_avoid_call_value; /* MODEL_AVOID=call_value */
    if (one)
        pthread_mutex_lock(&g_call_mu);
    salvo_status st = salvo_stream_host_call(c->sh[s], call_fn, p);
    if (one)
        pthread_mutex_unlock(&g_call_mu);
    if (c->sid[sid].cap) {
        expect_refused(c, "stream_host_call on a capturing stream", st);
        return;
    }
    switch (outcome(c, "stream_host_call", st, F_DEVICE | F_NTIMEOUT | F_ERR, lost_before)) {
    case OUT_OK: {
        p->accepted = true;
        c->calls_accepted++;
        sinfo *si = &c->sid[sid];
        si->seq++;
        set_boundary(c, sid, si->seq); /* the work before it was submitted */
        if (mode >= 1) {
            p->guards = true;
            note_use(c, sid, bi);
        }
        if (mode == 2) {
            mbuf *b = &c->buf[bi];
            for (uint32_t i = 0; i < n; i++) {
                b->val[off + i] = data_word(p->seed, i);
                b->known[off + i] = 1;
                b->risk[off + i] = 1ull << sid;
            }
        }
        break;
    }
    case OUT_NTIMEOUT:
        break;
    default:
        stream_error(c, sid);
        break;
    }
    p->point = c->sid[sid].seq;
}

/* vk_record: the program's own vkCmdFillBuffer of n words at off with v,
 * recorded into the stream; decl 0 declares no uses (full barriers), 1
 * the range written, 2 the whole buffer read and written. */
static void exec_vk_record(ctx *c, const op *o, bool lost_before)
{
    int s = (int)o->a[0], bi = (int)o->a[1];
    int sid = slot_sid(c, s);
    if (sid < 0 || !buf_ok(c, bi) || (!g_vk_fill && !g_fake)) {
        fail(c, "trace names a missing object (or the device has no vkCmdFillBuffer)");
        return;
    }
    uint32_t off = (uint32_t)o->a[2], n = (uint32_t)o->a[3], v = (uint32_t)o->a[4];
    int decl = (int)o->a[5];
    if (c->replay && !c->sid[sid].cap && !ordered(c, sid, bi, NULL))
        fprintf(stderr, "note: replayed vk_record is not ordered after another stream's use\n");
    mpend *p = pend_new(c, PK_VK, sid, bi, off, n);
    p->fill = g_vk_fill;
    p->value = v;
    p->vb = (VkBuffer)(uintptr_t)0x77;
    salvo_status st = salvo_buffer_vk_handle(c->buf[bi].h, &p->vb);
    if (g_fake) {
        /* No Vulkan behind the fake: no VkBuffer; the fake knows the
         * buffer by its device address. */
        if (st != SALVO_ERROR_UNSUPPORTED || p->vb != VK_NULL_HANDLE) {
            fail(c, "buffer_vk_handle on the fake returned %s, expected SALVO_ERROR_UNSUPPORTED "
                    "and VK_NULL_HANDLE", salvo_status_string(st));
            return;
        }
        st = salvo_buffer_address(c->buf[bi].h, &p->addr);
        if (st != SALVO_OK || !p->addr) {
            fail(c, "buffer_address: %s", salvo_status_string(st));
            return;
        }
    } else if (st != SALVO_OK || p->vb == VK_NULL_HANDLE) {
        fail(c, "buffer_vk_handle: %s", salvo_status_string(st));
        return;
    }
    salvo_vk_buffer_use use = {.buffer = c->buf[bi].h, .offset = off * 4ull, .size = n * 4ull,
                               .access = SALVO_ACCESS_WRITE};
    if (decl == 2)
        use = (salvo_vk_buffer_use){.buffer = c->buf[bi].h, .access = SALVO_ACCESS_READ_WRITE};
    st = salvo_vk_stream_record(c->sh[s], decl ? &use : NULL, decl ? 1 : 0, vk_fill_record, p);
    int calls = atomic_load(&p->calls);
    if (c->sid[sid].cap) {
        expect_refused(c, "vk_stream_record on a capturing stream", st);
        if (calls)
            fail(c, "vk_stream_record refused during a capture called record %d times", calls);
        return;
    }
    enum outcome r = outcome(c, "vk_stream_record", st,
                             F_DEVICE | F_PTIMEOUT | F_NTIMEOUT | F_ERR, lost_before);
    if ((r == OUT_OK || r == OUT_PTIMEOUT) && calls != 1)
        fail(c, "vk_stream_record returned %s and called record %d times during the call",
             salvo_status_string(st), calls);
    else if ((r == OUT_NTIMEOUT || (r == OUT_LOST && lost_before)) && calls != 0)
        fail(c, "vk_stream_record returned %s (nothing done) and called record %d times",
             salvo_status_string(st), calls);
    mbuf *b = &c->buf[bi];
    switch (r) {
    case OUT_OK:
    case OUT_PTIMEOUT:
        p->accepted = true;
        atomic_fetch_add(&g_n_recorded, 1);
        c->sid[sid].seq++;
        for (uint32_t i = off; i < off + n; i++) {
            b->val[i] = v;
            b->known[i] = 1;
            b->risk[i] = 1ull << sid;
        }
        note_use(c, sid, bi);
        win_add(c, sid, bi, off, off + n);
        if (g_cfg.batch == 1)
            set_boundary(c, sid, c->sid[sid].seq);
        p->guards = decl == 0;
        break;
    case OUT_NTIMEOUT:
        break;
    default:
        advance_unknown(c, sid, bi, off, off + n);
        stream_error(c, sid);
        p->guards = decl == 0 && calls > 0; /* recorded, maybe run */
        break;
    }
    p->point = c->sid[sid].seq;
}

/* launch_arr: v added to n words of two buffers, bound as elements 0 and
 * 1 of one binding (given in either order). */
static void exec_launch_arr(ctx *c, const op *o, bool lost_before)
{
    int s = (int)o->a[0], b0 = (int)o->a[1], b1 = (int)o->a[4];
    int sid = slot_sid(c, s);
    if (sid < 0 || !buf_ok(c, b0) || !buf_ok(c, b1) || b0 == b1 || !g_arr_kernel) {
        fail(c, "trace names a missing object");
        return;
    }
    uint32_t off0 = (uint32_t)o->a[2], sz0 = (uint32_t)o->a[3], off1 = (uint32_t)o->a[5];
    uint32_t sz1 = (uint32_t)o->a[6], n = (uint32_t)o->a[7], v = (uint32_t)o->a[8];
    salvo_binding bind[2] = {
        {.binding = 0, .element = 0, .buffer = c->buf[b0].h, .offset = off0 * 4ull,
         .size = sz0 * 4ull},
        {.binding = 0, .element = 1, .buffer = c->buf[b1].h, .offset = off1 * 4ull,
         .size = sz1 * 4ull}};
    if (v & 1) { /* the order of the elements is free */
        salvo_binding t = bind[0];
        bind[0] = bind[1];
        bind[1] = t;
    }
    const uint32_t groups[3] = {(n + 63) / 64, 1, 1};
    const uint32_t push[2] = {n, v};
    salvo_status st = salvo_launch(c->sh[s], g_arr_kernel, groups, bind, 2, push, sizeof push);
    if (c->sid[sid].cap) {
        mnode nd = {NK_ARR, 64, groups[0], {b0, b1}, {off0, off1}, {sz0, sz1}, n, v, false, 0};
        captured(c, sid, st, &nd, lost_before, "launch(array) (captured)");
        return;
    }
    switch (outcome(c, "launch(array)", st, F_DEVICE | F_PTIMEOUT | F_NTIMEOUT | F_ERR,
                    lost_before)) {
    case OUT_OK:
    case OUT_PTIMEOUT:
        c->sid[sid].seq++;
        for (int e = 0; e < 2; e++) {
            mbuf *b = &c->buf[e ? b1 : b0];
            uint32_t off = e ? off1 : off0;
            for (uint32_t i = off; i < off + n; i++) {
                b->val[i] += v;
                b->risk[i] |= 1ull << sid;
            }
            note_use(c, sid, e ? b1 : b0);
            win_add(c, sid, e ? b1 : b0, off, off + n);
        }
        if (g_cfg.batch == 1)
            set_boundary(c, sid, c->sid[sid].seq);
        break;
    case OUT_NTIMEOUT:
        break;
    default:
        advance_unknown(c, sid, b0, off0, off0 + n);
        buf_unknown(&c->buf[b1], off1, off1 + n);
        note_use(c, sid, b1);
        win_add(c, sid, b1, off1, off1 + n);
        stream_error(c, sid);
        break;
    }
}

/* launch_bare: the empty kernel (no bindings, no push constants) over gx
 * workgroups; captured, a node with no parameters. */
static void exec_launch_bare(ctx *c, const op *o, bool lost_before)
{
    int s = (int)o->a[0];
    int sid = slot_sid(c, s);
    uint32_t gx = (uint32_t)o->a[1];
    if (sid < 0 || !g_bare_kernel || gx == 0) {
        fail(c, "trace names a missing object");
        return;
    }
    const uint32_t groups[3] = {gx, 1, 1};
    salvo_status st = salvo_launch(c->sh[s], g_bare_kernel, groups, NULL, 0, NULL, 0);
    if (c->sid[sid].cap) {
        mnode nd = {NK_BARE, 1, gx, {-1, -1}, {0, 0}, {0, 0}, 0, 0, false, 0};
        captured(c, sid, st, &nd, lost_before, "launch(bare) (captured)");
        return;
    }
    switch (outcome(c, "launch(bare)", st, F_DEVICE | F_PTIMEOUT | F_NTIMEOUT | F_ERR,
                    lost_before)) {
    case OUT_OK:
    case OUT_PTIMEOUT:
        c->sid[sid].seq++;
        if (g_cfg.batch == 1)
            set_boundary(c, sid, c->sid[sid].seq);
        break;
    case OUT_NTIMEOUT:
        break;
    default:
        c->sid[sid].seq++; /* as any launch's, failed or not */
        stream_error(c, sid);
        break;
    }
}

/* ------------------------------------------------------------------ */
/* Images                                                              */
/* ------------------------------------------------------------------ */

static bool img_live(ctx *c, int64_t i)
{
    return i >= 0 && i < MAX_IMAGES && c->img[i].h;
}

/* A box's extent on one axis: 0 is to the end of the image. */
static uint32_t box_len(uint32_t len, uint32_t org, uint32_t ext)
{
    return len ? len : ext - org;
}

static bool box_inside(const mimage *m, uint32_t x, uint32_t y, uint32_t w, uint32_t h)
{
    return x < m->w && y < m->ht && w <= m->w - x && h <= m->ht - y;
}

/* format_query: what salvo says of format f (any value, known or not):
 * its name and texel size agree with each other (a name such as
 * "RGBA16_FLOAT" gives channels times bytes), an unknown format has
 * neither, and the device's support for it never changes (the first
 * answer is kept) and matches what the image ops found at setup. */
static _Atomic uint32_t g_format_usage[SALVO_FORMAT_COUNT]; /* answer + 1; 0: none yet */

static void exec_format_query(ctx *c, const op *o)
{
    int64_t f = o->a[0];
    salvo_format fmt = (salvo_format)f;
    bool known = f > SALVO_FORMAT_UNDEFINED && f < SALVO_FORMAT_COUNT;
    const char *name = salvo_format_name(fmt);
    uint32_t size = salvo_format_texel_size(fmt);
    if (!name) {
        fail(c, "format_name(%" PRId64 ") is NULL", f);
        return;
    }
    if (!known) {
        const char *want = f == SALVO_FORMAT_UNDEFINED ? "UNDEFINED" : "unknown";
        if (strcmp(name, want) != 0 || size != 0)
            fail(c, "format %" PRId64 " is not a format, yet is named '%s', %u bytes", f, name,
                 size);
    } else {
        uint32_t channels = strncmp(name, "RGBA", 4) == 0 ? 4 : strncmp(name, "RG", 2) == 0 ? 2
                            : name[0] == 'R' ? 1 : 0;
        const char *bits = name + strspn(name, "RGBA");
        uint32_t bytes = (uint32_t)strtoul(bits, NULL, 10) / 8;
        if (!channels || !bytes || size != channels * bytes)
            fail(c, "format %" PRId64 " '%s': texel size %u", f, name, size);
        for (int g = SALVO_FORMAT_UNDEFINED + 1; g < SALVO_FORMAT_COUNT; g++)
            if (g != f && strcmp(salvo_format_name((salvo_format)g), name) == 0)
                fail(c, "formats %" PRId64 " and %d are both named '%s'", f, g, name);
    }
    uint32_t usage = 0xdeadu;
    salvo_status st = salvo_image_format_support(g_dev, fmt, &usage);
    if (!known) {
        if (st != SALVO_ERROR_INVALID_ARGUMENT || usage != 0)
            fail(c, "image_format_support of non-format %" PRId64 ": %s, usage 0x%x", f,
                 salvo_status_string(st), usage);
        return;
    }
    const uint32_t all = SALVO_IMAGE_STORAGE | SALVO_IMAGE_SAMPLED | SALVO_IMAGE_LINEAR_FILTER;
    if (st != SALVO_OK || (usage & ~all)) {
        fail(c, "image_format_support(%s): %s, usage 0x%x", name, salvo_status_string(st),
             usage);
        return;
    }
    if ((usage & SALVO_IMAGE_LINEAR_FILTER) && !(usage & SALVO_IMAGE_SAMPLED))
        fail(c, "image_format_support(%s): linear filtering without sampling (0x%x)", name, usage);
    if (fmt == SALVO_FORMAT_R32_UINT &&
        g_img_ok != ((usage & (SALVO_IMAGE_STORAGE | SALVO_IMAGE_SAMPLED)) ==
                     (SALVO_IMAGE_STORAGE | SALVO_IMAGE_SAMPLED)))
        fail(c, "image_format_support(R32_UINT): 0x%x, at setup images were %s", usage,
             g_img_ok ? "offered" : "not offered");
    uint32_t expect = 0;
    if (!atomic_compare_exchange_strong(&g_format_usage[f], &expect, usage + 1) &&
        expect != usage + 1)
        fail(c, "image_format_support(%s): 0x%x, earlier 0x%x", name, usage, expect - 1);
}

static void exec_image_create(ctx *c, const op *o, bool lost_before)
{
    int i = (int)o->a[0];
    if (i < 0 || i >= MAX_IMAGES || c->img[i].h || !g_img_ok) {
        fail(c, "trace: bad image slot (or the device has no R32_UINT images)");
        return;
    }
    salvo_image_desc d = {.type = SALVO_IMAGE_2D, .format = SALVO_FORMAT_R32_UINT,
                          .width = (uint32_t)o->a[1], .height = (uint32_t)o->a[2],
                          .usage = SALVO_IMAGE_STORAGE | SALVO_IMAGE_SAMPLED};
    salvo_image *h = NULL;
    salvo_status st = salvo_image_create(g_dev, &d, &h);
    /* It brings the image into use with a transfer, which waits for
     * gated work ahead of it: within the fence timeout, or not done. */
    if (outcome(c, "image_create", st, F_DEVICE | F_NTIMEOUT | F_ERR, lost_before) != OUT_OK) {
        if (h)
            fail(c, "image_create failed but set *out");
        return;
    }
    if (!h) {
        fail(c, "image_create: SALVO_OK and no image");
        return;
    }
    salvo_image_desc got;
    if (salvo_image_desc_get(h, &got) != SALVO_OK || got.type != d.type ||
        got.format != d.format || got.width != d.width || got.height != d.height ||
        got.depth != 1 || got.layers != 1 || got.usage != d.usage)
        fail(c, "image_desc_get of a %ux%u image: %ux%ux%u, %u layers, usage 0x%x", d.width,
             d.height, got.width, got.height, got.depth, got.layers, got.usage);
    mimage *m = &c->img[i];
    memset(m, 0, sizeof *m);
    m->h = h;
    m->w = d.width;
    m->ht = d.height;
}

/* image_host: the whole image written from the host, texel k (row by row)
 * data_word(seed, k), then a box of it read back, which must hold the
 * same. The write first waits for the stream work that uses the image:
 * once it is done, every use is over. */
static void exec_image_host(ctx *c, const op *o, bool lost_before)
{
    int i = (int)o->a[0];
    uint32_t x = (uint32_t)o->a[1], y = (uint32_t)o->a[2], w = (uint32_t)o->a[3];
    uint32_t h = (uint32_t)o->a[4];
    uint64_t seed = (uint64_t)o->a[5];
    if (!img_live(c, i) || !box_inside(&c->img[i], x, y, w, h)) {
        fail(c, "trace names a missing image or a box outside it");
        return;
    }
    mimage *m = &c->img[i];
    uint32_t ew = box_len(w, x, m->w), eh = box_len(h, y, m->ht), total = m->w * m->ht;
    uint32_t *src = malloc(total * sizeof *src), *dst = malloc(ew * eh * sizeof *dst);
    if (!src || !dst)
        abort();
    for (uint32_t k = 0; k < total; k++)
        src[k] = data_word(seed, k);
    const unsigned flags = F_DEVICE | F_NTIMEOUT | F_PTIMEOUT | F_ERR;
    salvo_status st = salvo_image_write(m->h, NULL, src, total * 4ull);
    enum outcome r = outcome(c, "image_write", st, flags, lost_before);
    if (r == OUT_OK || r == OUT_PTIMEOUT) {
        memset(m->acc, 0, sizeof m->acc);
        memset(dst, 0xee, ew * eh * sizeof *dst);
        const salvo_image_region box = {.x = x, .y = y, .width = w, .height = h};
        st = salvo_image_read(m->h, &box, dst, ew * eh * 4ull);
        r = outcome(c, "image_read", st, flags, lost_before);
        for (uint32_t j = 0; (r == OUT_OK || r == OUT_PTIMEOUT) && j < eh; j++)
            for (uint32_t t = 0; t < ew; t++) {
                uint32_t want = data_word(seed, (y + j) * m->w + x + t);
                if (dst[j * ew + t] != want) {
                    fail(c, "image_read of i%d (%ux%u) box %u,%u %ux%u: texel (%u, %u) is %u, "
                            "image_write wrote %u", i, m->w, m->ht, x, y, ew, eh, x + t, y + j,
                         dst[j * ew + t], want);
                    j = eh;
                    break;
                }
            }
    }
    free(src);
    free(dst);
}

/* A step of image_add that writes only the image (the copy in, the
 * img_add launch) returned r: the stream's op, a use of the image (and of
 * buffer bi, which the copy in reads; -1 none). False: the image_add
 * stops here (nothing done, or a failure the stream reports). */
static bool img_step(ctx *c, int sid, int ii, int bi, enum outcome r)
{
    if (r == OUT_NTIMEOUT)
        return false;
    c->sid[sid].seq++;
    c->img[ii].acc[sid] = c->sid[sid].seq;
    if (bi >= 0)
        note_use(c, sid, bi);
    if (r != OUT_OK && r != OUT_PTIMEOUT) {
        stream_error(c, sid);
        return false;
    }
    if (g_cfg.batch == 1)
        set_boundary(c, sid, c->sid[sid].seq);
    return true;
}

/* image_copy: images i and i2 written whole from the host (texel k:
 * data_word(seed, k) and data_word(seed + 1, k); each write first waits
 * for the stream work that uses its image), a box of i copied to (x2, y2)
 * of i2 on stream s (salvo_copy_image), then i2 read back whole, which
 * waits for the copy: the box holds i's texels, the rest what was
 * written. Not on a capturing stream. */
static void exec_image_copy(ctx *c, const op *o, bool lost_before)
{
    const int64_t *a = o->a;
    int s = (int)a[0], ii = (int)a[1], i2 = (int)a[6];
    int sid = slot_sid(c, s);
    uint32_t x = (uint32_t)a[2], y = (uint32_t)a[3], w = (uint32_t)a[4], h = (uint32_t)a[5];
    uint32_t x2 = (uint32_t)a[7], y2 = (uint32_t)a[8];
    uint64_t seed = (uint64_t)a[9];
    if (sid < 0 || !img_live(c, ii) || !img_live(c, i2) || ii == i2 ||
        !box_inside(&c->img[ii], x, y, w, h) || c->sid[sid].cap) {
        fail(c, "trace names a missing image, one image twice, a box outside it or a "
                "capturing stream");
        return;
    }
    mimage *m = &c->img[ii], *m2 = &c->img[i2];
    uint32_t ew = box_len(w, x, m->w), eh = box_len(h, y, m->ht);
    if (!box_inside(m2, x2, y2, ew, eh)) {
        fail(c, "trace: image_copy's destination box outside i%d", i2);
        return;
    }
    uint32_t n = m->w * m->ht, n2 = m2->w * m2->ht;
    uint32_t *src = malloc(n * sizeof *src), *want = malloc(n2 * sizeof *want);
    uint32_t *got = malloc(n2 * sizeof *got);
    if (!src || !want || !got)
        abort();
    for (uint32_t t = 0; t < n; t++)
        src[t] = data_word(seed, t);
    for (uint32_t t = 0; t < n2; t++)
        want[t] = data_word(seed + 1, t);
    const unsigned flags = F_DEVICE | F_NTIMEOUT | F_PTIMEOUT | F_ERR;
    enum outcome r = outcome(c, "image_write", salvo_image_write(m->h, NULL, src, n * 4ull),
                             flags, lost_before);
    if (r == OUT_OK || r == OUT_PTIMEOUT)
        r = outcome(c, "image_write", salvo_image_write(m2->h, NULL, want, n2 * 4ull), flags,
                    lost_before);
    if (r != OUT_OK && r != OUT_PTIMEOUT)
        goto done;
    memset(m->acc, 0, sizeof m->acc);
    memset(m2->acc, 0, sizeof m2->acc);
    const salvo_image_region from = {.x = x, .y = y, .width = w, .height = h};
    const salvo_image_region to = {.x = x2, .y = y2, .width = ew, .height = eh};
    r = outcome(c, "copy_image", salvo_copy_image(c->sh[s], m->h, &from, m2->h, &to), flags,
                lost_before);
    bool copied = r == OUT_OK || r == OUT_PTIMEOUT;
    if (!img_step(c, sid, i2, -1, r) && r != OUT_NTIMEOUT)
        goto done; /* failed: what i2 holds is not known */
    if (copied) {
        m->acc[sid] = c->sid[sid].seq;
        for (uint32_t j = 0; j < eh; j++)
            for (uint32_t t = 0; t < ew; t++)
                want[(y2 + j) * m2->w + x2 + t] = src[(y + j) * m->w + x + t];
    }
    memset(got, 0xee, n2 * sizeof *got);
    r = outcome(c, "image_read", salvo_image_read(m2->h, NULL, got, n2 * 4ull), flags,
                lost_before);
    if (r != OUT_OK && r != OUT_PTIMEOUT)
        goto done;
    /* The read waited for the copy: i2 is idle. */
    memset(m2->acc, 0, sizeof m2->acc);
    for (uint32_t t = 0; t < n2; t++)
        if (got[t] != want[t] && !(faults_seen() && copied)) {
            fail(c, "image_copy i%d (%ux%u) box %u,%u %ux%u to i%d (%ux%u) at %u,%u: texel "
                    "(%u, %u) of i%d is %u, expected %u",
                 ii, m->w, m->ht, x, y, ew, eh, i2, m2->w, m2->ht, x2, y2, t % m2->w, t / m2->w,
                 i2, got[t], want[t]);
            break;
        }
done:
    free(src);
    free(want);
    free(got);
}

/* image_add: on stream s, words [off, off + n) of buffer b copied into a
 * box of image i (n its texels, rows one after another), v added on the
 * device, and the result back in the same words: b[off, off + n) += v, as
 * launch_add. Mode 0 adds with img_add (every texel of the storage image)
 * and copies the box back; mode 1 reads the box through a combined image
 * sampler (img_fetch_add, texelFetch) and writes texel + v to the words.
 * Each call is made only when the one before it was done. */
static void exec_image_add(ctx *c, const op *o, bool lost_before)
{
    const int64_t *a = o->a;
    int s = (int)a[0], bi = (int)a[1], ii = (int)a[3], mode = (int)a[9];
    int sid = slot_sid(c, s);
    salvo_kernel *k = mode == 0 ? g_img_add_kernel : g_img_fetch_kernel;
    uint32_t off = (uint32_t)a[2], x = (uint32_t)a[4], y = (uint32_t)a[5];
    uint32_t w = (uint32_t)a[6], h = (uint32_t)a[7], v = (uint32_t)a[8];
    if (sid < 0 || !buf_ok(c, bi) || !img_live(c, ii) || !k || (mode == 1 && !g_sampler) ||
        !box_inside(&c->img[ii], x, y, w, h)) {
        fail(c, "trace names a missing object, a box outside the image, or a kernel or "
                "sampler the device refused");
        return;
    }
    if (c->sid[sid].cap) {
        fail(c, "trace: image_add on a capturing stream (the model's graphs have no image "
                "nodes)");
        return;
    }
    mimage *m = &c->img[ii];
    uint32_t ew = box_len(w, x, m->w), eh = box_len(h, y, m->ht), n = ew * eh;
    if (off >= c->buf[bi].n || n > c->buf[bi].n - off) {
        fail(c, "trace: image_add words past the end of b%d", bi);
        return;
    }
    if (c->replay && (!ordered(c, sid, bi, NULL) || !img_ordered(c, sid, ii, NULL)))
        fprintf(stderr, "note: replayed image_add is not ordered after another stream's use\n");
    const salvo_image_region box = {.x = x, .y = y, .width = w, .height = h};
    const unsigned flags = F_DEVICE | F_PTIMEOUT | F_NTIMEOUT | F_ERR;
    salvo_stream *sh = c->sh[s];
    salvo_buffer *bh = c->buf[bi].h;
    salvo_status st = salvo_copy_buffer_to_image(sh, bh, off * 4ull, m->h, &box);
    if (!img_step(c, sid, ii, bi, outcome(c, "copy_buffer_to_image", st, flags, lost_before)))
        return;
    uint32_t seq = c->sid[sid].seq;
    if (mode == 0) {
        const salvo_binding bind = {.binding = 0, .image = m->h};
        const uint32_t groups[3] = {(m->w + 7) / 8, (m->ht + 7) / 8, 1};
        st = salvo_launch(sh, k, groups, &bind, 1, &v, sizeof v);
        if (!img_step(c, sid, ii, -1, outcome(c, "launch(img_add)", st, flags, lost_before)))
            return;
        seq = c->sid[sid].seq;
        st = salvo_copy_image_to_buffer(sh, m->h, &box, bh, off * 4ull);
        added(c, "copy_image_to_buffer", st, lost_before, sid, bi, off, n, v);
    } else {
        const salvo_binding bind[2] = {{.binding = 0, .image = m->h, .sampler = g_sampler},
                                       {.binding = 1, .buffer = bh}};
        const uint32_t groups[3] = {(ew + 7) / 8, (eh + 7) / 8, 1};
        const uint32_t push[6] = {x, y, ew, eh, off, v};
        st = salvo_launch(sh, k, groups, bind, 2, push, sizeof push);
        added(c, "launch(img_fetch_add)", st, lost_before, sid, bi, off, n, v);
    }
    if (c->sid[sid].seq != seq)
        m->acc[sid] = c->sid[sid].seq;
}

static void exec_launch_copy(ctx *c, const op *o, bool lost_before)
{
    int s = (int)o->a[0], k = (int)o->a[1], si = (int)o->a[2], di = (int)o->a[5];
    int sid = slot_sid(c, s);
    if (sid < 0 || !buf_ok(c, si) || !buf_ok(c, di) || k < 0 || k >= MAX_KERNELS ||
        !g_kern[k].h) {
        fail(c, "trace names a missing object");
        return;
    }
    uint32_t soff = (uint32_t)o->a[3], ssz = (uint32_t)o->a[4], doff = (uint32_t)o->a[6];
    uint32_t dsz = (uint32_t)o->a[7], n = (uint32_t)o->a[8], add = (uint32_t)o->a[9];
    const salvo_binding bind[2] = {
        {.binding = 0, .buffer = c->buf[si].h, .offset = soff * 4ull, .size = ssz * 4ull},
        {.binding = 1, .buffer = c->buf[di].h, .offset = doff * 4ull, .size = dsz * 4ull}};
    uint32_t local = g_kern[k].local;
    const uint32_t groups[3] = {(n + local - 1) / local, 1, 1};
    const uint32_t push[2] = {n, add};
    salvo_status st = salvo_launch(c->sh[s], g_kern[k].h, groups, bind, 2, push, sizeof push);
    if (c->sid[sid].cap) {
        mnode nd = {NK_LCOPY, local, groups[0], {si, di}, {soff, doff}, {ssz, dsz}, n, add,
                    false, 0};
        captured(c, sid, st, &nd, lost_before, "launch(copy) (captured)");
        return;
    }
    switch (outcome(c, "launch(copy)", st, F_DEVICE | F_PTIMEOUT | F_NTIMEOUT | F_ERR,
                    lost_before)) {
    case OUT_OK:
    case OUT_PTIMEOUT:
        apply_copy(c, sid, si, soff, di, doff, n, add);
        if (g_cfg.batch == 1)
            set_boundary(c, sid, c->sid[sid].seq);
        break;
    case OUT_NTIMEOUT:
        break;
    default:
        advance_unknown(c, sid, di, doff, doff + n);
        note_use(c, sid, si);
        stream_error(c, sid);
        break;
    }
}

static void exec_copy(ctx *c, const op *o, bool lost_before)
{
    int s = (int)o->a[0], si = (int)o->a[1], di = (int)o->a[3];
    int sid = slot_sid(c, s);
    if (sid < 0 || !buf_ok(c, si) || !buf_ok(c, di)) {
        fail(c, "trace names a missing object");
        return;
    }
    uint32_t soff = (uint32_t)o->a[2], doff = (uint32_t)o->a[4], n = (uint32_t)o->a[5];
    salvo_status st = salvo_copy(c->sh[s], c->buf[si].h, soff * 4ull, c->buf[di].h, doff * 4ull,
                                 n * 4ull);
    if (c->sid[sid].cap) {
        mnode nd = {NK_COPY, 0, 0, {si, di}, {soff, doff}, {n, n}, n, 0, false, 0};
        captured(c, sid, st, &nd, lost_before, "copy (captured)");
        return;
    }
    switch (outcome(c, "copy", st, F_DEVICE | F_PTIMEOUT | F_NTIMEOUT | F_ERR, lost_before)) {
    case OUT_OK:
    case OUT_PTIMEOUT:
        apply_copy(c, sid, si, soff, di, doff, n, 0);
        if (g_cfg.batch == 1)
            set_boundary(c, sid, c->sid[sid].seq);
        break;
    case OUT_NTIMEOUT:
        break;
    default:
        advance_unknown(c, sid, di, doff, doff + n);
        note_use(c, sid, si);
        stream_error(c, sid);
        break;
    }
}

static void exec_sync(ctx *c, int sid, salvo_status st, bool lost_before, const char *what)
{
    sinfo *s = &c->sid[sid];
    switch (outcome(c, what, st, F_DEVICE | F_PTIMEOUT | F_ERR, lost_before)) {
    case OUT_OK:
        s->completed = s->seq;
        set_boundary(c, sid, s->seq);
        stream_confirmed(c, sid);
        s->gated = s->replayed = s->opened = false;
        break;
    case OUT_PTIMEOUT: /* a batch an event opened may still be in flight */
        set_boundary(c, sid, s->seq);
        break;
    default:
        set_boundary(c, sid, s->seq);
        stream_error(c, sid);
        break;
    }
}

/* ------------------------------------------------------------------ */
/* Imports, traces, the default allocator, devices on own Vulkan       */
/* ------------------------------------------------------------------ */

/* What the device offers for salvo_buffer_import_host. */
static bool g_host_import;
static uint64_t g_import_align = 4096;

/* buffer_import: n words of the program's own memory (aligned_alloc,
 * filled with data_word(seed, i) first) imported as a HOST or SHARED
 * buffer in slot b. Its contents are that memory's, and its mapping is
 * that very memory. bad 1: a pointer off the alignment, 2: the DEVICE
 * domain, 3: a size off the alignment: SALVO_ERROR_INVALID_ARGUMENT, *out
 * NULL. Where the device imports nothing, SALVO_ERROR_UNSUPPORTED. The
 * memory is freed once the device is destroyed. */
static void exec_buffer_import(ctx *c, const op *o, bool lost_before)
{
    int bi = (int)o->a[0], bad = (int)o->a[4];
    salvo_domain dom = (salvo_domain)o->a[1];
    uint32_t n = (uint32_t)o->a[2];
    uint64_t seed = (uint64_t)o->a[3];
    uint64_t align = g_import_align ? g_import_align : 4096;
    if ((!bad && (bi < 0 || bi >= MAX_BUFS || c->buf[bi].h)) || n == 0 ||
        (n * 4ull) % align || dom == SALVO_DOMAIN_DEVICE) {
        fail(c, "trace: bad buffer_import (slot in use, or a size or domain that is not one)");
        return;
    }
    uint32_t *mem = aligned_alloc(align, n * 4ull + align);
    if (!mem)
        abort();
    for (uint32_t i = 0; i < n; i++)
        mem[i] = data_word(seed, i);
    void *ptr = bad == 1 ? (void *)(mem + 1) : (void *)mem;
    uint64_t size = bad == 3 ? n * 4ull - 4 : n * 4ull;
    salvo_buffer *h = (salvo_buffer *)(void *)&h; /* must come back NULL on failure */
    salvo_status st = salvo_buffer_import_host(g_dev, ptr, size,
                                               bad == 2 ? SALVO_DOMAIN_DEVICE : dom, &h);
    if (st != SALVO_OK && h) {
        fail(c, "buffer_import_host returned %s and left *out set", salvo_status_string(st));
        h = NULL;
    }
    if (!g_host_import) {
        if (st != SALVO_ERROR_UNSUPPORTED)
            fail(c, "buffer_import_host on a device without host import returned %s",
                 salvo_status_string(st));
        if (h)
            salvo_buffer_destroy(h);
        free(mem);
        return;
    }
    if (bad) {
        if (st != SALVO_ERROR_INVALID_ARGUMENT)
            fail(c, "buffer_import_host with %s returned %s, expected "
                    "SALVO_ERROR_INVALID_ARGUMENT",
                 bad == 1 ? "a pointer off the alignment" : bad == 2 ? "the DEVICE domain"
                                                                   : "a size off the alignment",
                 salvo_status_string(st));
        if (h)
            salvo_buffer_destroy(h);
        free(mem);
        return;
    }
    if (outcome(c, "buffer_import_host", st, F_DEVICE | F_ERR, lost_before) != OUT_OK || !h) {
        if (st == SALVO_OK)
            fail(c, "buffer_import_host: SALVO_OK and no buffer");
        free(mem);
        return;
    }
    if (c->nimports == c->capimports) {
        size_t cap = c->capimports ? c->capimports * 2 : 8;
        void **v = realloc(c->imports, cap * sizeof *v);
        if (!v)
            abort();
        c->imports = v;
        c->capimports = cap;
    }
    c->imports[c->nimports++] = mem;
    mbuf *b = &c->buf[bi];
    memset(b, 0, sizeof *b);
    b->h = h;
    b->gen = ++c->next_gen;
    b->dom = dom;
    b->n = n;
    b->val = malloc(n * sizeof *b->val);
    b->known = malloc(n);
    b->risk = calloc(n, sizeof *b->risk);
    if (!b->val || !b->known || !b->risk)
        abort();
    memcpy(b->val, mem, n * sizeof *b->val);
    memset(b->known, 1, n);
    b->map = mem;
    if (salvo_buffer_size(h) != n * 4ull)
        fail(c, "buffer_size %" PRIu64 " of an import of %u bytes", salvo_buffer_size(h), n * 4);
    void *p = NULL;
    st = salvo_buffer_map(h, &p);
    if (st != SALVO_OK || p != (void *)mem)
        fail(c, "buffer_map of an imported buffer returned %s, %p, not the memory imported (%p)",
             salvo_status_string(st), p, (void *)mem);
}

/* Traces: one at a time per device; the model knows whether it traces. */
static pthread_mutex_t g_trace_mu = PTHREAD_MUTEX_INITIALIZER;
static bool g_tracing;           /* [g_trace_mu] */
static bool g_trace_unsupported; /* trace_start said the device cannot */
static char g_trace_file[512];
static _Atomic uint64_t g_n_traces;

static void trace_file_init(void)
{
    const char *dir = getenv("TMPDIR");
    snprintf(g_trace_file, sizeof g_trace_file, "%s/model_random_%d.trace.json",
             dir && *dir ? dir : "/tmp", (int)getpid());
}

/* The trace file a stop (or the device's destroy) closed: JSON of the
 * Trace Event format, {"traceEvents":[...]}, its brackets balanced outside
 * strings, with the two process names every trace starts with. Removed
 * after. */
static void trace_file_check(ctx *c, const char *when)
{
    FILE *f = fopen(g_trace_file, "rb");
    if (!f) {
        fail(c, "%s: no trace file %s", when, g_trace_file);
        return;
    }
    size_t cap = 1 << 16, len = 0;
    char *t = malloc(cap + 1);
    if (!t)
        abort();
    for (size_t got; (got = fread(t + len, 1, cap - len, f)) > 0;) {
        len += got;
        if (len == cap) {
            char *u = realloc(t, cap * 2 + 1);
            if (!u)
                abort();
            t = u;
            cap *= 2;
        }
    }
    fclose(f);
    remove(g_trace_file);
    t[len] = 0;
    while (len && (t[len - 1] == '\n' || t[len - 1] == ' '))
        t[--len] = 0;
    const char *head = "{\"traceEvents\":[";
    int depth = 0, names = 0;
    bool in_str = false, broken = false;
    for (size_t i = 0; i < len && !broken; i++) {
        char ch = t[i];
        if (in_str) {
            if (ch == '\\')
                i++;
            else if (ch == '"')
                in_str = false;
        } else if (ch == '"') {
            in_str = true;
        } else if (ch == '[' || ch == '{') {
            depth++;
        } else if (ch == ']' || ch == '}') {
            broken = --depth < 0 || (depth == 0 && i + 1 != len);
        }
    }
    for (const char *q = t; (q = strstr(q, "\"process_name\"")); q++)
        names++;
    if (strncmp(t, head, strlen(head)) != 0 || len < 2 || strcmp(t + len - 2, "]}") != 0 ||
        broken || depth != 0 || in_str || names < 2)
        fail(c, "%s: the trace file (%zu bytes) is not a whole trace: %.80s ... %.40s", when, len,
             t, len > 40 ? t + len - 40 : t);
    free(t);
    atomic_fetch_add(&g_n_traces, 1);
}

static bool lost_meanwhile(const ctx *c, salvo_status st);

/* trace_start: to the model's file (bad 1: to a directory that does not
 * exist, SALVO_ERROR_INVALID_ARGUMENT). SALVO_ERROR_INVALID_STATE while
 * the device traces. */
static void exec_trace_start(ctx *c, const op *o, bool lost_before)
{
    bool bad = o->a[0] != 0;
    pthread_mutex_lock(&g_trace_mu);
    salvo_status st = salvo_trace_start(g_dev, bad ? "/nonexistent-model-dir/x/trace.json"
                                                    : g_trace_file);
    lost_before |= lost_meanwhile(c, st); /* a lost device comes before the path */
    if (g_tracing) {
        if (st != SALVO_ERROR_INVALID_STATE)
            fail(c, "trace_start while tracing returned %s, expected SALVO_ERROR_INVALID_STATE",
                 salvo_status_string(st));
    } else if (st == SALVO_ERROR_UNSUPPORTED) {
        g_trace_unsupported = true; /* a device without GPU timestamps */
    } else if (bad && !(lost_before && st == SALVO_ERROR_DEVICE_LOST)) {
        if (st != SALVO_ERROR_INVALID_ARGUMENT)
            fail(c, "trace_start to a path that cannot be created returned %s, expected "
                    "SALVO_ERROR_INVALID_ARGUMENT", salvo_status_string(st));
    } else if (outcome(c, "trace_start", st, F_DEVICE | F_ERR, lost_before) == OUT_OK) {
        if (g_trace_unsupported)
            fail(c, "trace_start: SALVO_OK, earlier SALVO_ERROR_UNSUPPORTED");
        g_tracing = true;
    }
    if (st == SALVO_OK && bad)
        g_tracing = true; /* reported above; stopped at the end */
    pthread_mutex_unlock(&g_trace_mu);
}

static void exec_trace_stop(ctx *c)
{
    pthread_mutex_lock(&g_trace_mu);
    salvo_status st = salvo_trace_stop(g_dev);
    if (!g_tracing) {
        if (st != SALVO_ERROR_INVALID_STATE)
            fail(c, "trace_stop of a device not tracing returned %s, expected "
                    "SALVO_ERROR_INVALID_STATE", salvo_status_string(st));
    } else {
        g_tracing = false;
        if (st != SALVO_OK)
            fail(c, "trace_stop returned %s", salvo_status_string(st));
        else
            trace_file_check(c, "trace_stop");
    }
    pthread_mutex_unlock(&g_trace_mu);
}

/* The process-wide default allocator. g_def_alloc counts its blocks apart
 * from g_alloc (the device's, or the device's through the default when
 * the config says defalloc): what goes through it is only what
 * salvo_device_enumerate allocates while it is the default. */
static _Atomic int64_t g_def_live;
static _Atomic uint64_t g_def_allocs;

static void *def_alloc(void *user, size_t size)
{
    (void)user;
    block_head *h = malloc(sizeof *h + size);
    if (!h)
        return NULL;
    h->size = size;
    atomic_fetch_add(&g_def_live, 1);
    atomic_fetch_add(&g_def_allocs, 1);
    return h + 1;
}

static void def_free(void *user, void *ptr)
{
    (void)user;
    if (!ptr)
        return;
    atomic_fetch_sub(&g_def_live, 1);
    free((block_head *)ptr - 1);
}

static const salvo_allocator g_def_alloc = {def_alloc, def_free, NULL};
static pthread_mutex_t g_def_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_def_now;              /* [g_def_mu] 0 malloc, 1 g_def_alloc, 2 g_alloc */
static uint64_t g_def_expected;    /* [g_def_mu] blocks enumerate took from g_def_alloc */
static _Atomic uint64_t g_n_enumerated;

/* default_allocator: mode 0 NULL (malloc again), 1 the counting
 * g_def_alloc, 2 alloc without free and 3 free without alloc (refused:
 * SALVO_ERROR_INVALID_ARGUMENT, nothing changes), 4 both NULL (malloc
 * again); then salvo_device_enumerate, whose allocations go through
 * g_def_alloc exactly when it is the default, and are all given back. The
 * device keeps the allocator it was made with, whatever the default
 * becomes (close_device: no block of g_def_alloc taken otherwise). */
static void exec_default_allocator(ctx *c, const op *o)
{
    int mode = (int)o->a[0];
    static const salvo_allocator lone_alloc = {def_alloc, NULL, NULL};
    static const salvo_allocator lone_free = {NULL, def_free, NULL};
    static const salvo_allocator none = {NULL, NULL, NULL};
    const salvo_allocator *a = mode == 1   ? &g_def_alloc
                               : mode == 2 ? &lone_alloc
                               : mode == 3 ? &lone_free
                               : mode == 4 ? &none
                                           : NULL;
    pthread_mutex_lock(&g_def_mu);
    salvo_status st = salvo_default_allocator_set(a);
    if (mode == 2 || mode == 3) {
        if (st != SALVO_ERROR_INVALID_ARGUMENT)
            fail(c, "default_allocator_set with %s returned %s, expected "
                    "SALVO_ERROR_INVALID_ARGUMENT", mode == 2 ? "alloc alone" : "free alone",
                 salvo_status_string(st));
    } else if (st != SALVO_OK) {
        fail(c, "default_allocator_set returned %s", salvo_status_string(st));
    } else {
        g_def_now = mode == 1 ? 1 : 0;
    }
    uint64_t before = atomic_load(&g_def_allocs);
    int64_t live = atomic_load(&g_def_live);
    uint32_t n = 0;
    st = salvo_device_enumerate(NULL, &n);
    uint64_t took = atomic_load(&g_def_allocs) - before;
    if (st != SALVO_OK)
        fail(c, "device_enumerate returned %s", salvo_status_string(st));
    else if (g_def_now == 1 && took == 0)
        fail(c, "device_enumerate took no block from the default allocator set");
    else if (g_def_now != 1 && took != 0)
        fail(c, "device_enumerate took %" PRIu64 " blocks from an allocator no longer the "
                "default", took);
    if (atomic_load(&g_def_live) != live)
        fail(c, "device_enumerate kept %" PRId64 " blocks of the default allocator",
             atomic_load(&g_def_live) - live);
    g_def_expected += took;
    atomic_fetch_add(&g_n_enumerated, 1);
    pthread_mutex_unlock(&g_def_mu);
}

/* g_dev's Vulkan handles, where it has them (vk_record, vk_device). */
static bool g_have_vk;
static salvo_vk_handles g_vk;
static _Atomic uint64_t g_n_vk_devices;

static void vk_lock(void *user)
{
    pthread_mutex_lock(user);
}

static void vk_unlock(void *user)
{
    pthread_mutex_unlock(user);
}

/* The instance vk_device mode 0 makes its device on: the seed device's,
 * or one of the program's own without layers (below), and the physical
 * device of the seed device's there. */
typedef struct vk_home {
    VkInstance instance;
    VkPhysicalDevice physical_device;
    PFN_vkDestroyInstance destroy; /* NULL: the seed device's instance */
} vk_home;

/* An instance of the program's own, without layers, at the seed device's
 * version, and the physical device there of the seed device's (the same
 * vendor and device ID, and name): false where it cannot be made. Call
 * under salvo_vk_loader_lock (vk_home_own). */
static bool vk_home_own_locked(vk_home *h)
{
    PFN_vkGetInstanceProcAddr gipa = g_vk.get_instance_proc_addr;
    PFN_vkCreateInstance create = (PFN_vkCreateInstance)gipa(NULL, "vkCreateInstance");
    PFN_vkGetPhysicalDeviceProperties props_of =
        (PFN_vkGetPhysicalDeviceProperties)gipa(g_vk.instance, "vkGetPhysicalDeviceProperties");
    if (!create || !props_of)
        return false;
    VkPhysicalDeviceProperties want;
    props_of(g_vk.physical_device, &want);
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                             .apiVersion = g_vk.api_version};
    VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                               .pApplicationInfo = &app};
    if (create(&ci, NULL, &h->instance) != VK_SUCCESS)
        return false;
    h->destroy = (PFN_vkDestroyInstance)gipa(h->instance, "vkDestroyInstance");
    PFN_vkEnumeratePhysicalDevices list =
        (PFN_vkEnumeratePhysicalDevices)gipa(h->instance, "vkEnumeratePhysicalDevices");
    props_of = (PFN_vkGetPhysicalDeviceProperties)gipa(h->instance,
                                                       "vkGetPhysicalDeviceProperties");
    VkPhysicalDevice pd[16];
    uint32_t n = 16;
    h->physical_device = VK_NULL_HANDLE;
    if (list && props_of && list(h->instance, &n, pd) >= VK_SUCCESS)
        for (uint32_t i = 0; i < n && !h->physical_device; i++) {
            VkPhysicalDeviceProperties p;
            props_of(pd[i], &p);
            if (p.vendorID == want.vendorID && p.deviceID == want.deviceID &&
                strcmp(p.deviceName, want.deviceName) == 0)
                h->physical_device = pd[i];
        }
    if (!h->physical_device && h->destroy)
        h->destroy(h->instance, NULL);
    return h->physical_device != VK_NULL_HANDLE;
}

/* vk_home_own under salvo_vk_loader_lock, as the program's every loader
 * call that makes or destroys an instance or a device is (vk_device_run). */
static bool vk_home_own(vk_home *h)
{
    salvo_vk_loader_lock();
    bool made = vk_home_own_locked(h);
    salvo_vk_loader_unlock();
    return made;
}

/* The program's own vkDestroyDevice, under salvo_vk_loader_lock. */
static void vk_device_destroy(PFN_vkDestroyDevice destroy, VkDevice vd)
{
    salvo_vk_loader_lock();
    destroy(vd, NULL);
    salvo_vk_loader_unlock();
}

/* The salvo device on the program's own VkDevice (vk_device mode 0), made
 * on h's instance. */
static void vk_device_on(ctx *c, uint64_t seed, const vk_home *h)
{
    PFN_vkGetInstanceProcAddr gipa = g_vk.get_instance_proc_addr;
    PFN_vkCreateDevice create = (PFN_vkCreateDevice)gipa(h->instance, "vkCreateDevice");
    PFN_vkGetDeviceProcAddr gdpa =
        (PFN_vkGetDeviceProcAddr)gipa(h->instance, "vkGetDeviceProcAddr");
    if (!create || !gdpa) {
        fail(c, "vk_device: no vkCreateDevice");
        return;
    }
    /* Timeline semaphores enabled (gates), or not, as the seed says. */
    bool timelines = (seed & 1) && g_vk.api_version >= VK_API_VERSION_1_2;
    VkPhysicalDeviceTimelineSemaphoreFeatures tl = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES,
        .timelineSemaphore = VK_TRUE};
    float priority = 1.0f;
    VkDeviceQueueCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                  .queueFamilyIndex = g_vk.queue_family_index,
                                  .queueCount = 1,
                                  .pQueuePriorities = &priority};
    VkDeviceCreateInfo di = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                             .pNext = timelines ? &tl : NULL,
                             .queueCreateInfoCount = 1,
                             .pQueueCreateInfos = &qi};
    VkDevice vd = VK_NULL_HANDLE;
    salvo_vk_loader_lock();
    bool made = create(h->physical_device, &di, NULL, &vd) == VK_SUCCESS;
    PFN_vkDestroyDevice destroy = made ? (PFN_vkDestroyDevice)gdpa(vd, "vkDestroyDevice") : NULL;
    PFN_vkGetDeviceQueue get_queue =
        made ? (PFN_vkGetDeviceQueue)gdpa(vd, "vkGetDeviceQueue") : NULL;
    salvo_vk_loader_unlock();
    if (!made) {
        fail(c, "vk_device: vkCreateDevice failed");
        return;
    }
    VkQueue vq = VK_NULL_HANDLE;
    get_queue(vd, g_vk.queue_family_index, 0, &vq);
    pthread_mutex_t qmu = PTHREAD_MUTEX_INITIALIZER;
    salvo_vk_device_import imp = {
        .get_instance_proc_addr = (seed & 2) ? gipa : NULL,
        .instance = h->instance,
        .instance_api_version = g_vk.api_version,
        .physical_device = h->physical_device,
        .device = vd,
        .timeline_semaphores = timelines,
        .queue = vq,
        .queue_family_index = 1000, /* first: a family the device does not have */
        .queue_lock = (seed & 4) ? vk_lock : NULL,
        .queue_unlock = (seed & 4) ? vk_unlock : NULL,
        .queue_lock_user = &qmu,
    };
    salvo_device_desc dd = {.log = log_cb, .allocator = &g_alloc, .batch_size = 1 + (uint32_t)(seed >> 3) % 4};
    salvo_device *sub = (salvo_device *)(void *)&sub;
    salvo_status st = salvo_device_create_vk(&imp, &dd, &sub);
    if (st != SALVO_ERROR_INVALID_ARGUMENT || sub)
        fail(c, "device_create_vk with queue family 1000 returned %s%s, expected "
                "SALVO_ERROR_INVALID_ARGUMENT", salvo_status_string(st), sub ? " and a device" : "");
    imp.queue_family_index = g_vk.queue_family_index;
    sub = NULL;
    st = salvo_device_create_vk(&imp, &dd, &sub);
    if (st != SALVO_OK || !sub) {
        fail(c, "device_create_vk on the program's own VkDevice returned %s",
             salvo_status_string(st));
        vk_device_destroy(destroy, vd);
        return;
    }
    salvo_device_info info;
    salvo_vk_handles back;
    if (salvo_device_info_get(sub, &info) != SALVO_OK || info.features.checked ||
        info.queue_count != 1 || info.transfer_queue || info.timeline_semaphores != timelines)
        fail(c, "device_create_vk: info says features checked %d, %u queues, transfer queue %d, "
                "timelines %d (given %d)", info.features.checked, info.queue_count,
             info.transfer_queue, info.timeline_semaphores, timelines);
    else if (salvo_device_vk_handles(sub, &back) != SALVO_OK || back.instance != h->instance ||
             back.physical_device != h->physical_device || back.device != vd ||
             back.queue != vq || back.queue_family_index != g_vk.queue_family_index)
        fail(c, "device_create_vk: vk_handles do not give back the handles it was made on");
    /* v added to data_word(seed, i) on its stream, copied to a HOST
     * buffer, read back and through the mapping. */
    enum { N = 256 };
    const salvo_spec_constant spec = {0, 64};
    salvo_kernel_desc kd = {.spirv = add_spv, .spirv_size = sizeof add_spv, .name = "add",
                            .spec_constants = &spec, .spec_constant_count = 1};
    salvo_kernel *k = NULL;
    salvo_buffer *bd = NULL, *bh = NULL;
    salvo_stream *sh = NULL;
    uint32_t src[N], got[N], v = 1 + (uint32_t)(seed >> 5) % 1000;
    for (uint32_t i = 0; i < N; i++)
        src[i] = data_word(seed, i);
    const char *step = "kernel_create";
    if ((st = salvo_kernel_create(sub, &kd, &k)) == SALVO_OK &&
        (step = "buffer_create", st = salvo_buffer_create(sub, N * 4, SALVO_DOMAIN_DEVICE, &bd)) ==
            SALVO_OK &&
        (st = salvo_buffer_create(sub, N * 4, SALVO_DOMAIN_HOST, &bh)) == SALVO_OK &&
        (step = "stream_create", st = salvo_stream_create(sub, NULL, &sh)) == SALVO_OK &&
        (step = "buffer_write", st = salvo_buffer_write(bd, 0, src, sizeof src)) == SALVO_OK) {
        const salvo_binding bind = {.binding = 0, .buffer = bd};
        const uint32_t groups[3] = {N / 64, 1, 1}, push[2] = {N, v};
        void *map = NULL;
        if ((step = "launch", st = salvo_launch(sh, k, groups, &bind, 1, push, sizeof push)) !=
                SALVO_OK ||
            (step = "copy", st = salvo_copy(sh, bd, 0, bh, 0, N * 4)) != SALVO_OK ||
            (step = "stream_synchronize", st = salvo_stream_synchronize(sh)) != SALVO_OK ||
            (step = "buffer_read", st = salvo_buffer_read(bh, 0, got, sizeof got)) != SALVO_OK ||
            (step = "buffer_map", st = salvo_buffer_map(bh, &map)) != SALVO_OK) {
            fail(c, "vk_device: %s returned %s", step, salvo_status_string(st));
        } else {
            for (uint32_t i = 0; i < N; i++)
                if (got[i] != src[i] + v || ((uint32_t *)map)[i] != src[i] + v) {
                    fail(c, "vk_device: word %u is %u (mapped %u), want %u", i, got[i],
                         ((uint32_t *)map)[i], src[i] + v);
                    break;
                }
        }
    } else {
        fail(c, "vk_device: %s returned %s", step, salvo_status_string(st));
    }
    salvo_stream_destroy(sh);
    salvo_buffer_destroy(bd);
    salvo_buffer_destroy(bh);
    salvo_kernel_destroy(k);
    salvo_stats stats;
    if (salvo_device_stats(sub, &stats) != SALVO_OK || stats.live_buffers || stats.live_kernels ||
        stats.live_streams)
        fail(c, "vk_device: live objects after destroying them all");
    salvo_device_destroy(sub);
    vk_device_destroy(destroy, vd);
    pthread_mutex_destroy(&qmu);
    atomic_fetch_add(&g_n_vk_devices, 1);
}

/* vk_device mode 0. The validation layer of Debian 12 (1.3.239) keeps its
 * instances and devices in a table it does not guard: one created or
 * destroyed on a layered instance while another thread calls into the
 * layer can crash it (Vulkan-ValidationLayers issue 4391; seen here as a
 * SIGSEGV inside the layer, a vkCmdFillBuffer walking a bucket of the
 * table into a freed node after another thread's vk_device). With several
 * threads, then, the device is made on an instance of the program's own
 * without layers (its commands go unvalidated), and so it is where a host
 * call or a stream read is pending (salvo's host-call thread may be in the
 * layer); otherwise on the seed device's (its validation messages fail
 * the op), the raiser held off meanwhile.
 * The Vulkan loader does not guard its lists of devices (Vulkan-Loader
 * issue 2018): the program's own vkCreateDevice or vkDestroyDevice on one
 * thread beside another thread's salvo_device_create_vk (whose table load
 * walks those lists) crashed the loader. So every loader call of the
 * program's that makes, looks up or destroys an instance or a device is
 * made under salvo_vk_loader_lock, as salvo_vulkan.h asks, and the seed's
 * threads run their vk_device ops side by side. */
static void vk_device_run(ctx *c, uint64_t seed)
{
    vk_home h = {.instance = g_vk.instance, .physical_device = g_vk.physical_device};
    /* A host call or stream read not yet passed: salvo's host-call thread
     * may be waiting for it in the layer. */
    bool worker = false;
    for (size_t i = 0; i < c->npend; i++)
        worker |= !c->pend[i]->done && c->pend[i]->kind != PK_VK;
    if (g_nctx > 1 || worker) {
        if (!vk_home_own(&h)) {
            fail(c, "vk_device: no instance of the program's own with the seed's device");
            return;
        }
        vk_device_on(c, seed, &h);
        salvo_vk_loader_lock();
        if (h.destroy)
            h.destroy(h.instance, NULL);
        salvo_vk_loader_unlock();
        return;
    }
    pthread_mutex_lock(&R.mu);
    vk_device_on(c, seed, &h);
    pthread_mutex_unlock(&R.mu);
}

/* vk_device: salvo_device_create_vk. Mode 0 (g_dev has Vulkan handles): a
 * VkDevice of the program's own on g_dev's physical device (one queue of
 * its family; timeline semaphores as the seed says), on g_dev's instance
 * or on an unlayered one of the program's (vk_device_run says when),
 * refused first with a family the device lacks, then a salvo device on it that
 * gives its handles back, checks no features, and adds on its own stream
 * (vk_device_run). Refused anywhere with SALVO_ERROR_INVALID_ARGUMENT and
 * *out NULL: 1 no import, 2 no instance, 3 a lone queue_lock, 4 extension
 * names missing; 5 (with handles) an instance of Vulkan 1.0:
 * SALVO_ERROR_UNSUPPORTED. */
static void exec_vk_device(ctx *c, const op *o)
{
    int mode = (int)o->a[0];
    uint64_t seed = (uint64_t)o->a[1];
    if ((mode == 0 || mode == 5) && !g_have_vk) {
        fail(c, "trace: vk_device mode %d on a device without Vulkan handles", mode);
        return;
    }
    if (mode == 0) {
        vk_device_run(c, seed);
        return;
    }
    /* Handles that are never used: every refusal here comes first. */
    static int dummy;
    salvo_vk_device_import imp = {
        .instance = g_have_vk ? g_vk.instance : (VkInstance)(void *)&dummy,
        .instance_api_version = VK_API_VERSION_1_1,
        .physical_device = g_have_vk ? g_vk.physical_device : (VkPhysicalDevice)(void *)&dummy,
        .device = g_have_vk ? g_vk.device : (VkDevice)(void *)&dummy,
        .queue = g_have_vk ? g_vk.queue : (VkQueue)(void *)&dummy,
        .queue_family_index = g_have_vk ? g_vk.queue_family_index : 0,
    };
    if (mode == 2)
        imp.instance = VK_NULL_HANDLE;
    if (mode == 3)
        imp.queue_lock = vk_lock;
    if (mode == 4)
        imp.device_extension_count = 2;
    if (mode == 5)
        imp.instance_api_version = VK_API_VERSION_1_0;
    salvo_device *sub = (salvo_device *)(void *)&sub;
    salvo_status st = salvo_device_create_vk(mode == 1 ? NULL : &imp, NULL, &sub);
    salvo_status want = mode == 5 ? SALVO_ERROR_UNSUPPORTED : SALVO_ERROR_INVALID_ARGUMENT;
    if (st != want || sub) {
        fail(c, "device_create_vk (mode %d) returned %s%s, expected %s", mode,
             salvo_status_string(st), sub ? " and set *out" : "", salvo_status_string(want));
        if (st == SALVO_OK && sub && sub != (salvo_device *)(void *)&sub)
            salvo_device_destroy(sub);
    }
}

/* Whether st, a DEVICE_LOST from a call that began with the device
 * working, may come from a loss by another thread during the call: the
 * call then answers as on a lost device. */
static bool lost_meanwhile(const ctx *c, salvo_status st)
{
    return st == SALVO_ERROR_DEVICE_LOST && g_lost_ok && (g_cfg.threads > 1 || c->stale_now) &&
           salvo_device_is_lost(g_dev);
}

static void exec_op(ctx *c, const op *o)
{
    if (o->kind == OP_LOST_ELSEWHERE) {
        if (!c->replay || !salvo_device_is_lost(g_dev))
            fail(c, "trace: lost_elsewhere %s", !c->replay ? "outside a replay"
                                                           : "on a device that is not lost");
        c->stale_lost = true;
        return;
    }
    c->stale_now = c->stale_lost;
    c->stale_lost = false;
    bool lost_before = !c->stale_now && salvo_device_is_lost(g_dev);
    if (lost_before)
        note_lost(c);
    const int64_t *a = o->a;
    salvo_status st;
    switch (o->kind) {
    case OP_STREAM_CREATE: {
        int s = (int)a[0];
        if (s < 0 || s >= MAX_STREAMS || c->sh[s] || c->next_sid >= MAX_SID) {
            fail(c, "trace: bad stream slot");
            return;
        }
        salvo_stream_desc d = {.first_batch = (uint32_t)a[1], .priority = (int32_t)a[2]};
        salvo_stream *h = NULL;
        st = salvo_stream_create(g_dev, &d, &h);
        if (outcome(c, "stream_create", st, F_DEVICE | F_ERR, lost_before) == OUT_OK) {
            if (!h) {
                fail(c, "stream_create: SALVO_OK and no stream");
                return;
            }
            int sid = c->next_sid++;
            c->sh[s] = h;
            c->ssid[s] = sid;
            memset(&c->sid[sid], 0, sizeof c->sid[sid]);
            c->sid[sid].live = true;
        } else if (h) {
            fail(c, "stream_create failed but set *out");
        }
        break;
    }
    case OP_STREAM_DESTROY: {
        int s = (int)a[0], sid = slot_sid(c, s);
        if (sid < 0)
            return;
        sinfo *si = &c->sid[sid];
        mcap *cp = cap_find(c, si->cap);
        if (cp && cp->origin == sid && g_nctx == 1)
            raiser_drain(NULL); /* the device lock free: see busy_destroy */
        salvo_stream_destroy(c->sh[s]);
        c->sh[s] = NULL;
        si->live = false;
        /* The stream that began a capture abandons it (no graph); one that
         * joined leaves it. */
        if (cp && cp->origin == sid)
            cap_close(c, cp);
        si->cap = 0;
        /* Failures of its pending work are only logged from now on. */
        if (g_errors_ok && si->seq > si->completed)
            stream_error(c, sid);
        break;
    }
    case OP_BUFFER_CREATE: {
        int bi = (int)a[0];
        if (bi < 0 || bi >= MAX_BUFS || c->buf[bi].h) {
            fail(c, "trace: bad buffer slot");
            return;
        }
        uint32_t n = (uint32_t)a[2];
        salvo_buffer *h = NULL;
        st = salvo_buffer_create(g_dev, n * 4ull, (salvo_domain)a[1], &h);
        if (outcome(c, "buffer_create", st, F_DEVICE | F_ERR, lost_before) != OUT_OK) {
            if (h)
                fail(c, "buffer_create failed but set *out");
            return;
        }
        mbuf *b = &c->buf[bi];
        memset(b, 0, sizeof *b);
        b->h = h;
        b->gen = ++c->next_gen;
        b->dom = (salvo_domain)a[1];
        b->n = n;
        b->val = calloc(n, sizeof *b->val);
        b->known = calloc(n, 1); /* contents undefined until written */
        b->risk = calloc(n, sizeof *b->risk);
        if (!b->val || !b->known || !b->risk)
            abort();
        if (salvo_buffer_size(h) != n * 4ull)
            fail(c, "buffer_size %" PRIu64 ", created with %u", salvo_buffer_size(h), n * 4);
        if (b->dom != SALVO_DOMAIN_DEVICE) {
            void *p = NULL;
            st = salvo_buffer_map(h, &p);
            if (st != SALVO_OK || !p)
                fail(c, "buffer_map of a %s buffer returned %s",
                     b->dom == SALVO_DOMAIN_HOST ? "HOST" : "SHARED", salvo_status_string(st));
            b->map = p;
        }
        break;
    }
    case OP_BUFFER_DESTROY: {
        int bi = (int)a[0];
        if (!buf_ok(c, bi))
            return;
        pend_revoke(c, bi);
        salvo_buffer_destroy(c->buf[bi].h);
        buf_retire(c, bi);
        break;
    }
    case OP_KERNEL_CREATE: {
        int k = (int)a[0];
        if (k < 0 || k >= MAX_KERNELS || g_kern[k].h) {
            fail(c, "trace: bad kernel slot");
            return;
        }
        int kind = (int)a[1];
        uint32_t local = (uint32_t)a[2];
        const salvo_spec_constant spec = {0, local};
        salvo_kernel_desc d = kind == 0
            ? (salvo_kernel_desc){.spirv = add_spv, .spirv_size = sizeof add_spv, .name = "add",
                                  .spec_constants = &spec, .spec_constant_count = 1}
            : (salvo_kernel_desc){.spirv = copy_spv, .spirv_size = sizeof copy_spv,
                                  .name = "copy"};
        salvo_kernel *h = NULL;
        st = salvo_kernel_create(g_dev, &d, &h);
        if (outcome(c, "kernel_create", st, F_DEVICE | F_ERR, lost_before) == OUT_OK) {
            g_kern[k] = (mkernel){h, kind, kind == 0 ? local : 64};
            salvo_kernel_info info;
            if (salvo_kernel_info_get(h, &info) != SALVO_OK ||
                info.binding_count != (kind == 0 ? 1u : 2u) || info.push_constant_size != 8)
                fail(c, "kernel_info of %s: %u bindings, push %u", d.name, info.binding_count,
                     info.push_constant_size);
        }
        break;
    }
    case OP_KERNEL_DESTROY: {
        int k = (int)a[0];
        if (k < 0 || k >= MAX_KERNELS || !g_kern[k].h)
            return;
        salvo_kernel_destroy(g_kern[k].h);
        g_kern[k].h = NULL;
        break;
    }
    case OP_EVENT_CREATE: {
        int e = (int)a[0];
        if (e < 0 || e >= MAX_EVENTS || c->ev[e].h) {
            fail(c, "trace: bad event slot");
            return;
        }
        salvo_event *h = NULL;
        bool untimed = a[1] != 0;
        st = untimed ? salvo_event_create_flags(g_dev, SALVO_EVENT_DISABLE_TIMING, &h)
                     : salvo_event_create(g_dev, &h);
        if (outcome(c, "event_create", st, F_DEVICE | F_ERR, lost_before) == OUT_OK) {
            memset(&c->ev[e], 0, sizeof c->ev[e]);
            c->ev[e].h = h;
            c->ev[e].untimed = untimed;
        }
        break;
    }
    case OP_EVENT_DESTROY: {
        int e = (int)a[0];
        if (e < 0 || e >= MAX_EVENTS || !c->ev[e].h)
            return;
        salvo_event_destroy(c->ev[e].h);
        memset(&c->ev[e], 0, sizeof c->ev[e]);
        break;
    }
    case OP_GATE_CREATE: {
        int g = (int)a[0];
        if (g < 0 || g >= MAX_GATES || c->gate[g].h) {
            fail(c, "trace: bad gate slot");
            return;
        }
        salvo_gate *h = NULL;
        st = salvo_gate_create(g_dev, &h);
        if (outcome(c, "gate_create", st, F_DEVICE | F_ERR, lost_before) == OUT_OK) {
            mgate *m = &c->gate[g];
            m->h = h;
            m->scheduled = 0;
            atomic_store(&m->raising, 0);
            atomic_store(&m->raised, 0);
            m->pending = 0;
            m->last_due = 0;
            if (salvo_gate_value(h) != 0)
                fail(c, "a new gate reads %" PRIu64, salvo_gate_value(h));
        }
        break;
    }
    case OP_GATE_DESTROY: {
        int g = (int)a[0];
        if (g < 0 || g >= MAX_GATES || !c->gate[g].h)
            return;
        if (a[1])
            raiser_withdraw(&c->gate[g]); /* the destroy releases the waiting work */
        else
            raiser_drain(&c->gate[g]);
        salvo_gate_destroy(c->gate[g].h);
        c->gate[g].h = NULL;
        break;
    }
    case OP_LAUNCH_ADD:
        exec_launch_add(c, o, lost_before);
        break;
    case OP_LAUNCH_COPY:
        exec_launch_copy(c, o, lost_before);
        break;
    case OP_LAUNCH_ADDR:
        exec_launch_addr(c, o, lost_before);
        break;
    case OP_LAUNCH_ARR:
        exec_launch_arr(c, o, lost_before);
        break;
    case OP_LAUNCH_BARE:
        exec_launch_bare(c, o, lost_before);
        break;
    case OP_FILL:
        exec_fill(c, o, lost_before);
        break;
    case OP_FILL_PATTERN:
        exec_fill_pattern(c, o, lost_before);
        break;
    case OP_LAUNCH_INDIRECT:
        exec_launch_indirect(c, o, lost_before);
        break;
    case OP_SWRITE:
        exec_swrite(c, o, lost_before);
        break;
    case OP_SREAD:
        exec_sread(c, o, lost_before);
        break;
    case OP_HOST_CALL:
        exec_host_call(c, o, lost_before);
        break;
    case OP_VK_RECORD:
        exec_vk_record(c, o, lost_before);
        break;
    case OP_COPY:
        exec_copy(c, o, lost_before);
        break;
    case OP_WRITE:
    case OP_MAP_WRITE: {
        int bi = (int)a[0];
        if (!buf_ok(c, bi)) {
            fail(c, "trace names a missing buffer");
            return;
        }
        uint32_t off = (uint32_t)a[1], n = (uint32_t)a[2];
        uint64_t seed = (uint64_t)a[3];
        uint32_t *src = malloc(n * sizeof *src);
        if (!src)
            abort();
        for (uint32_t i = 0; i < n; i++)
            src[i] = data_word(seed, i);
        if (o->kind == OP_MAP_WRITE) {
            if (!c->buf[bi].map) {
                fail(c, "trace: map_write of an unmapped buffer");
            } else {
                if (c->replay && !idle(c, bi, NULL))
                    fprintf(stderr, "note: replayed map_write of a buffer in use\n");
                memcpy(c->buf[bi].map + off, src, n * sizeof *src);
                host_wrote(c, bi, off, n, seed);
            }
            free(src);
            break;
        }
        st = salvo_buffer_write(c->buf[bi].h, off * 4ull, src, n * 4ull);
        free(src);
        switch (outcome(c, "buffer_write", st, F_DEVICE | F_NTIMEOUT | F_PTIMEOUT | F_ERR,
                        lost_before)) {
        case OUT_OK:
        case OUT_PTIMEOUT:
            host_wrote(c, bi, off, n, seed);
            memset(c->buf[bi].acc, 0, sizeof c->buf[bi].acc);
            break;
        case OUT_NTIMEOUT:
            break;
        default:
            buf_unknown(&c->buf[bi], off, off + n);
            break;
        }
        break;
    }
    case OP_READ:
    case OP_MAP_READ: {
        int bi = (int)a[0];
        if (!buf_ok(c, bi)) {
            fail(c, "trace names a missing buffer");
            return;
        }
        uint32_t off = (uint32_t)a[1], n = (uint32_t)a[2];
        uint32_t *dst = malloc(n * sizeof *dst);
        if (!dst)
            abort();
        if (o->kind == OP_MAP_READ) {
            if (!c->buf[bi].map) {
                fail(c, "trace: map_read of an unmapped buffer");
            } else {
                if (c->replay && !idle(c, bi, NULL))
                    fprintf(stderr, "note: replayed map_read of a buffer in use\n");
                memcpy(dst, c->buf[bi].map + off, n * sizeof *dst);
                check_values(c, bi, off, n, dst, "map_read");
            }
            free(dst);
            break;
        }
        memset(dst, 0xee, n * sizeof *dst);
        st = salvo_buffer_read(c->buf[bi].h, off * 4ull, dst, n * 4ull);
        if (cap_writes(c, bi)) {
            expect_refused(c, "buffer_read of a buffer a capture writes", st);
            free(dst);
            break;
        }
        switch (outcome(c, "buffer_read", st, F_DEVICE | F_NTIMEOUT | F_PTIMEOUT | F_ERR,
                        lost_before)) {
        case OUT_OK:
        case OUT_PTIMEOUT:
            check_values(c, bi, off, n, dst, st == SALVO_OK ? "read" : "read (SALVO_TIMEOUT)");
            memset(c->buf[bi].acc, 0, sizeof c->buf[bi].acc);
            break;
        default:
            break;
        }
        free(dst);
        break;
    }
    case OP_FLUSH: {
        int sid = slot_sid(c, (int)a[0]);
        if (sid < 0)
            return;
        st = salvo_stream_flush(c->sh[a[0]]);
        switch (outcome(c, "flush", st, F_DEVICE | F_PTIMEOUT | F_NTIMEOUT | F_ERR,
                        lost_before)) {
        case OUT_OK:
        case OUT_PTIMEOUT:
            set_boundary(c, sid, c->sid[sid].seq);
            break;
        case OUT_NTIMEOUT:
            break;
        default:
            stream_error(c, sid);
            break;
        }
        break;
    }
    case OP_SYNC: {
        int sid = slot_sid(c, (int)a[0]);
        if (sid < 0)
            return;
        if (c->sid[sid].cap) {
            expect_refused(c, "stream_synchronize of a capturing stream",
                           salvo_stream_synchronize(c->sh[a[0]]));
            break;
        }
        exec_sync(c, sid, salvo_stream_synchronize(c->sh[a[0]]), lost_before,
                  "stream_synchronize");
        break;
    }
    case OP_DSYNC: {
        st = salvo_device_synchronize(g_dev);
        enum outcome r = outcome(c, "device_synchronize", st, F_DEVICE | F_PTIMEOUT | F_ERR,
                                 lost_before);
        for (int t = 0; t < c->next_sid; t++) {
            sinfo *s = &c->sid[t];
            set_boundary(c, t, s->seq);
            if (r == OUT_OK || (r != OUT_PTIMEOUT && !s->live))
                s->completed = s->seq;
            if (r == OUT_OK)
                s->gated = s->replayed = false;
            if (r == OUT_OK && s->live)
                stream_confirmed(c, t);
            else if (r != OUT_OK && r != OUT_PTIMEOUT && s->live)
                stream_error(c, t);
        }
        if (r == OUT_OK && g_nctx == 1) {
            salvo_stats stats;
            if (salvo_device_stats(g_dev, &stats) != SALVO_OK)
                fail(c, "device_stats failed");
            else if (stats.launches_pending != 0)
                fail(c, "launches_pending %" PRIu64 " after device_synchronize returned SALVO_OK",
                     stats.launches_pending);
        }
        break;
    }
    case OP_EV_RECORD: {
        int e = (int)a[0], sid = slot_sid(c, (int)a[1]);
        if (e < 0 || e >= MAX_EVENTS || !c->ev[e].h || sid < 0) {
            fail(c, "trace names a missing object");
            return;
        }
        mevent *m = &c->ev[e];
        mevent before = *m;
        c->sid[sid].opened = true; /* a record may open a batch (an untimed one more rarely) */
        st = salvo_event_record(m->h, c->sh[a[1]]);
        m->recorded = true;
        m->sid = sid;
        m->point = c->sid[sid].seq;
        memcpy(m->vc, c->sid[sid].vc, sizeof m->vc);
        m->vc[sid] = m->point;
        m->state = ES_NORMAL;
        m->capn = 0;
        m->twin = false;
        for (int j = 0; j < MAX_EVENTS; j++)
            if (j != e && c->ev[j].h && c->ev[j].recorded && c->ev[j].sid == sid &&
                c->ev[j].point == m->point && !c->ev[j].capn)
                m->twin = true;
        /* A record that fails (SALVO_ERROR_TIMEOUT: no batch slot for its
         * timestamp; out of memory opening that batch; the device lost)
         * records nothing: the event is as it was, its mark on the stream
         * it had (a cancel withdraws that stream's work), a point of an
         * ended capture still one. */
        enum outcome r = outcome(c, "event_record", st, F_DEVICE | F_NTIMEOUT | F_ERR, lost_before);
        if (r != OUT_OK)
            *m = before;
        else
            m->capn = c->sid[sid].cap; /* during a capture: a point of the graph */
        break;
    }
    case OP_EV_QUERY:
    case OP_EV_WAIT:
    case OP_EV_SYNC: {
        int e = (int)a[0];
        if (e < 0 || e >= MAX_EVENTS || !c->ev[e].h)
            return;
        mevent *m = &c->ev[e];
        bool q = o->kind == OP_EV_QUERY, w = o->kind == OP_EV_WAIT;
        /* t: 0 looks, 1 waits 1 ms, 2 without bound */
        uint64_t bound = !w ? 0 : a[1] == 0 ? 0 : a[1] == 1 ? 1000 * 1000 : UINT64_MAX;
        st = q ? salvo_event_query(m->h)
             : w ? salvo_event_wait(m->h, bound)
                 : salvo_event_synchronize(m->h);
        const char *what = q ? "event_query" : w ? "event_wait" : "event_synchronize";
        lost_before |= lost_meanwhile(c, st);
        if (w && st == SALVO_TIMEOUT && bound != UINT64_MAX && m->recorded && !m->capn &&
            !lost_before) {
            set_boundary(c, m->sid, m->point); /* its batch was submitted; it goes on */
            break;
        }
        if (m->recorded && m->capn) {
            expect_refused(c, q ? "event_query of an event recorded during a capture"
                                : "event_synchronize of an event recorded during a capture",
                           st);
            break;
        }
        if (lost_before) { /* never recorded: SALVO_OK or the loss */
            outcome(c, what, st, F_DEVICE | F_LENIENT | F_ERR, true);
            break;
        }
        if (!m->recorded) {
            if (st != SALVO_OK)
                fail(c, "%s of an event never recorded returned %s, expected SALVO_OK", what,
                     salvo_status_string(st));
            break;
        }
        if (m->state == ES_CANCELLED) {
            if (st != SALVO_CANCELLED)
                fail(c, "%s of a cancelled event returned %s, expected SALVO_CANCELLED", what,
                     salvo_status_string(st));
            break;
        }
        if (st == SALVO_CANCELLED) {
            if (m->state != ES_UNCERTAIN)
                fail(c, "%s returned SALVO_CANCELLED for an event not cancelled", what);
            break;
        }
        if (st == SALVO_NOT_READY) {
            if (!q)
                fail(c, "event_synchronize returned SALVO_NOT_READY");
            set_boundary(c, m->sid, m->point);
            break;
        }
        enum outcome r = outcome(c, what, st, F_DEVICE | (q ? 0 : F_PTIMEOUT) | F_ERR, false);
        if (r == OUT_OK && m->state == ES_NORMAL)
            event_complete(c, m);
        else if (r == OUT_PTIMEOUT)
            set_boundary(c, m->sid, m->point);
        break;
    }
    case OP_EV_ELAPSED: {
        int e1 = (int)a[0], e2 = (int)a[1];
        if (e1 < 0 || e1 >= MAX_EVENTS || !c->ev[e1].h || e2 < 0 || e2 >= MAX_EVENTS ||
            !c->ev[e2].h)
            return;
        mevent *m1 = &c->ev[e1], *m2 = &c->ev[e2];
        uint64_t ns = 77;
        st = salvo_event_elapsed(m1->h, m2->h, &ns);
        if (st != SALVO_OK && ns != 0)
            fail(c, "event_elapsed returned %s and left *ns %" PRIu64, salvo_status_string(st), ns);
        /* An event without timing is refused first, whatever its state
         * or the device's. */
        if (m1->untimed || m2->untimed) {
            if (st != SALVO_ERROR_INVALID_ARGUMENT)
                fail(c, "event_elapsed of an event made with SALVO_EVENT_DISABLE_TIMING returned "
                        "%s, expected SALVO_ERROR_INVALID_ARGUMENT",
                     salvo_status_string(st));
            break;
        }
        lost_before |= lost_meanwhile(c, st);
        if (lost_before) {
            outcome(c, "event_elapsed", st, F_DEVICE, true);
            break;
        }
        if (!m1->recorded || !m2->recorded) {
            if (st != SALVO_ERROR_INVALID_ARGUMENT)
                fail(c, "event_elapsed of an event never recorded returned %s, expected "
                        "SALVO_ERROR_INVALID_ARGUMENT", salvo_status_string(st));
            break;
        }
        /* A record that failed leaves the event as it was: one never
         * recorded before still is (INVALID_ARGUMENT comes first). */
        if ((m1->state == ES_UNCERTAIN || m2->state == ES_UNCERTAIN) &&
            st == SALVO_ERROR_INVALID_ARGUMENT)
            break;
        if (m1->capn || m2->capn) {
            expect_refused(c, "event_elapsed of an event recorded during a capture", st);
            break;
        }
        if (m1->state == ES_UNCERTAIN || m2->state == ES_UNCERTAIN)
            break; /* a failed record or a cancel around it: anything goes */
        if (m1->state == ES_CANCELLED || m2->state == ES_CANCELLED) {
            if (st != SALVO_CANCELLED)
                fail(c, "event_elapsed of a cancelled event returned %s, expected "
                        "SALVO_CANCELLED", salvo_status_string(st));
            break;
        }
        if (st == SALVO_NOT_READY) {
            set_boundary(c, m1->sid, m1->point); /* both looked at: submitted */
            set_boundary(c, m2->sid, m2->point);
            break;
        }
        /* In one stream, in that order, end comes after start: a cancel
         * that recorded their batch again keeps their times, and their
         * order (those among the withdrawn work move to the batch's start,
         * in the order they were recorded). */
        bool ordered = m1->sid == m2->sid && m1->point < m2->point;
        if (st == SALVO_ERROR_INVALID_STATE && !ordered)
            break;
        if (outcome(c, "event_elapsed", st, F_DEVICE | F_ERR, false) == OUT_OK) {
            event_complete(c, m1);
            event_complete(c, m2);
        }
        break;
    }
    case OP_STREAM_QUERY: {
        int sid = slot_sid(c, (int)a[0]);
        if (sid < 0)
            return;
        sinfo *si = &c->sid[sid];
        /* Whether it is in a capture (began or joined), as the model has it. */
        bool capturing = !si->cap;
        st = salvo_stream_is_capturing(c->sh[a[0]], &capturing);
        if (st != SALVO_OK || capturing != (si->cap != 0))
            fail(c, "stream_is_capturing returned %s, *out %s; the stream is %s a capture",
                 salvo_status_string(st), capturing ? "true" : "false",
                 si->cap ? "in" : "not in");
        st = salvo_stream_query(c->sh[a[0]]);
        if (si->cap) {
            expect_refused(c, "stream_query of a capturing stream", st);
            break;
        }
        if (st == SALVO_NOT_READY) {
            /* Exact: with no fault and nothing since a synchronize, it is all over. */
            if (!lost_before && si->completed == si->seq && !faults_seen() &&
                !si->gated && !si->opened)
                fail(c, "stream_query returned SALVO_NOT_READY for a stream whose work is "
                        "complete");
            set_boundary(c, sid, si->seq); /* its open batch was submitted */
            break;
        }
        if (st == SALVO_TIMEOUT)
            fail(c, "stream_query returned SALVO_TIMEOUT");
        /* Complete: reported as a synchronize would. */
        exec_sync(c, sid, st, lost_before, "stream_query");
        if (st == SALVO_OK)
            si->opened = false;
        break;
    }
    case OP_EV_CANCEL: {
        int e = (int)a[0];
        if (e < 0 || e >= MAX_EVENTS || !c->ev[e].h)
            return;
        mevent *m = &c->ev[e];
        st = salvo_event_cancel(m->h);
        lost_before |= lost_meanwhile(c, st);
        if (lost_before) {
            outcome(c, "event_cancel", st, F_DEVICE, true);
            break;
        }
        if (m->recorded && m->capn) {
            expect_refused(c, "event_cancel of an event recorded during a capture", st);
            break;
        }
        if (!m->recorded) {
            if (st != SALVO_ERROR_INVALID_STATE)
                fail(c, "event_cancel of an event never recorded returned %s, expected "
                        "SALVO_ERROR_INVALID_STATE", salvo_status_string(st));
            break;
        }
        if (m->state == ES_CANCELLED) {
            if (st != SALVO_OK)
                fail(c, "event_cancel of a cancelled event returned %s, expected SALVO_OK",
                     salvo_status_string(st));
            break;
        }
        sinfo *si = &c->sid[m->sid];
        bool submitted = m->point <= si->boundary;
        if (st == SALVO_ERROR_INVALID_STATE)
            break; /* nothing withdrawn */
        if (st != SALVO_OK) {
            /* A failed cancel withdraws nothing: the launches still run. */
            if (st == SALVO_ERROR_DEVICE_LOST)
                outcome(c, "event_cancel", st, F_DEVICE, false);
            else if (!g_errors_ok)
                fail(c, "event_cancel returned %s", salvo_status_string(st));
            break;
        }
        if (submitted && m->state == ES_NORMAL && !(m->twin && g_avoid_cancel_twin)) {
            fail(c, "event_cancel returned SALVO_OK though the work before the event was "
                    "submitted (point %u, submitted up to %u)", m->point, si->boundary);
            break;
        }
        /* Known bug cancel_twin: taken as a cancel of whatever is pending. */
        /* Withdrawn: the stream's work since its last submission up to the
         * event. Which part of the window that is the model cannot know
         * exactly, nor what later work of the window read from it. */
        for (size_t i = 0; i < si->nwin; i++) {
            wentry *w = &si->win[i];
            if (c->buf[w->buf].h && c->buf[w->buf].gen == w->gen)
                buf_unknown(&c->buf[w->buf], w->lo, w->hi);
        }
        for (int j = 0; j < MAX_EVENTS; j++) {
            mevent *o2 = &c->ev[j];
            if (j != e && o2->h && o2->recorded && o2->sid == m->sid &&
                o2->point > si->boundary && o2->point <= m->point && o2->state == ES_NORMAL)
                o2->state = ES_UNCERTAIN;
        }
        m->state = ES_CANCELLED;
        atomic_fetch_add(&g_n_cancelled, 1);
        break;
    }
    case OP_WAIT_EVENT: {
        int sid = slot_sid(c, (int)a[0]), e = (int)a[1];
        if (sid < 0 || e < 0 || e >= MAX_EVENTS || !c->ev[e].h) {
            fail(c, "trace names a missing object");
            return;
        }
        mevent *m = &c->ev[e];
        sinfo *si = &c->sid[sid];
        si->opened = true;
        st = salvo_stream_wait_event(c->sh[a[0]], m->h);
        if (m->recorded && m->capn) {
            /* A point of a capture: the stream joins it (fork), is in it
             * already, or cannot wait (the capture is over, or the stream
             * is in another). */
            if (!cap_find(c, m->capn) || (si->cap && si->cap != m->capn)) {
                expect_refused(c, "stream_wait_event for a point of a capture it cannot join", st);
            } else if (si->cap == m->capn) {
                outcome(c, "stream_wait_event (in the capture)", st, F_DEVICE, lost_before);
            } else {
                enum outcome r = outcome(c, "stream_wait_event (join)", st,
                                         F_DEVICE | F_ERR | F_PTIMEOUT | F_NTIMEOUT, lost_before);
                if (r == OUT_OK) {
                    set_boundary(c, sid, si->seq); /* its work so far was submitted */
                    si->cap = m->capn;
                    atomic_fetch_add(&g_n_joins, 1);
                } else if (r == OUT_ERROR) {
                    stream_error(c, sid);
                }
            }
            break;
        }
        if (si->cap) {
            /* A capturing stream waits only for what is complete or an
             * event never recorded or cancelled (its own earlier points
             * too are refused while not complete: a graph is replayed
             * anywhere); else it is refused. Nothing is learnt about the
             * order either way. */
            bool must = !m->recorded || m->state == ES_CANCELLED;
            if (st == SALVO_OK || (st == SALVO_ERROR_INVALID_STATE && !must))
                break;
            if (st == SALVO_ERROR_INVALID_STATE)
                fail(c, "stream_wait_event on a capturing stream refused an event %s",
                     !m->recorded ? "never recorded" : "cancelled");
            else
                outcome(c, "stream_wait_event on a capturing stream", st, F_DEVICE, lost_before);
            break;
        }
        enum outcome r = outcome(c, "stream_wait_event", st, F_DEVICE | F_ERR | F_LENIENT | F_NTIMEOUT,
                                 lost_before);
        if (r == OUT_OK && m->recorded && m->state == ES_NORMAL) {
            for (int t = 0; t < c->next_sid; t++)
                if (m->vc[t] > c->sid[sid].vc[t])
                    c->sid[sid].vc[t] = m->vc[t];
            /* An event of the waiting stream itself is no wait: nothing of
             * that stream is submitted for it. */
            if (m->sid != sid)
                set_boundary(c, m->sid, m->point);
        } else if (r == OUT_ERROR) {
            stream_error(c, sid);
            if (m->recorded)
                stream_error(c, m->sid);
        }
        break;
    }
    case OP_WAIT_GATE: {
        int sid = slot_sid(c, (int)a[0]), g = (int)a[1];
        if (sid < 0 || g < 0 || g >= MAX_GATES || !c->gate[g].h) {
            fail(c, "trace names a missing object");
            return;
        }
        uint64_t v = (uint64_t)a[2];
        st = salvo_stream_wait_gate(c->sh[a[0]], c->gate[g].h, v);
        if (c->sid[sid].cap) {
            expect_refused(c, "stream_wait_gate on a capturing stream", st);
        } else {
            c->sid[sid].gated = true;
            if (outcome(c, "stream_wait_gate", st, F_DEVICE | F_ERR | F_LENIENT | F_NTIMEOUT,
                        lost_before) == OUT_ERROR)
                stream_error(c, sid);
        }
        if (v > c->gate[g].scheduled)
            c->gate[g].scheduled = v;
        raiser_schedule(&c->gate[g], v, (uint32_t)a[3]);
        break;
    }
    case OP_STATS: {
        salvo_stats s;
        st = salvo_device_stats(g_dev, &s);
        if (st != SALVO_OK)
            fail(c, "device_stats returned %s", salvo_status_string(st));
        else if (s.validation_messages !=
                 atomic_load(&g_validation) + atomic_load(&g_layer_timeouts))
            fail(c, "validation_messages %" PRIu64 ", the log callback saw %" PRIu64,
                 s.validation_messages,
                 atomic_load(&g_validation) + atomic_load(&g_layer_timeouts));
        for (int g = 0; g < MAX_GATES; g++) {
            mgate *m = &c->gate[g];
            if (!m->h)
                continue;
            uint64_t lo = atomic_load(&m->raised);
            uint64_t v = salvo_gate_value(m->h);
            uint64_t hi = atomic_load(&m->raising);
            if (v < lo || v > hi)
                fail(c, "gate g%d reads %" PRIu64 ", raised only to %" PRIu64 "..%" PRIu64, g, v,
                     lo, hi);
        }
        if (salvo_device_is_lost(g_dev) && !g_lost_ok)
            fail(c, "device lost with no fault that loses it");
        if (st == SALVO_OK && g_nctx == 1) {
            /* Released graphs may wait for their replays: at least those. */
            uint64_t have = 0;
            for (int g = 0; g < MAX_GRAPHS; g++)
                have += c->graph[g].h != NULL;
            for (int i = 0; i < MAX_CAPS; i++)
                have += c->cap[i].num != 0;
            if (s.live_graphs < have)
                fail(c, "live_graphs %" PRIu64 " with %" PRIu64 " graphs and captures alive",
                     s.live_graphs, have);
            /* Destroyed images wait for their work: at least the live ones. */
            uint64_t images = 0, bytes = 0;
            for (int i = 0; i < MAX_IMAGES; i++)
                if (c->img[i].h) {
                    images++;
                    bytes += c->img[i].w * c->img[i].ht * 4ull;
                }
            if (s.live_images < images || s.live_image_bytes < bytes)
                fail(c, "live_images %" PRIu64 " (%" PRIu64 " bytes) with %" PRIu64
                        " images of %" PRIu64 " bytes alive",
                     s.live_images, s.live_image_bytes, images, bytes);
            /* The heaps: the device's, and what it holds of them at least
             * the live images and DEVICE buffers (never imports). */
            salvo_memory_info mi;
            salvo_device_info di;
            uint64_t held = bytes, allocated = 0;
            for (int i = 0; i < MAX_BUFS; i++)
                if (c->buf[i].h && c->buf[i].dom == SALVO_DOMAIN_DEVICE)
                    held += c->buf[i].n * 4ull;
            salvo_status ms = salvo_device_memory_info(g_dev, &mi);
            if (ms != SALVO_OK || salvo_device_info_get(g_dev, &di) != SALVO_OK ||
                mi.heap_count != di.memory_heap_count)
                fail(c, "device_memory_info returned %s and %u heaps", salvo_status_string(ms),
                     mi.heap_count);
            for (uint32_t h = 0; ms == SALVO_OK && h < mi.heap_count && h < 16; h++) {
                const salvo_heap_usage *u = &mi.heaps[h];
                allocated += u->allocated;
                if (u->size != di.memory_heaps[h].size ||
                    u->device_local != di.memory_heaps[h].device_local ||
                    (!mi.measured && (u->budget != u->size || u->usage != u->allocated)))
                    fail(c,
                         "device_memory_info heap %u: size %" PRIu64 ", budget %" PRIu64
                         ", usage %" PRIu64 ", allocated %" PRIu64 " (the device's heap: %" PRIu64
                         " bytes)",
                         h, u->size, u->budget, u->usage, u->allocated, di.memory_heaps[h].size);
            }
            if (ms == SALVO_OK && allocated < held)
                fail(c, "device_memory_info: %" PRIu64 " bytes allocated, %" PRIu64
                        " held by live images and DEVICE buffers",
                     allocated, held);
        }
        /* The one sampler lives from the device's opening to its close. */
        if (st == SALVO_OK && s.live_samplers != (g_sampler ? 1u : 0u))
            fail(c, "live_samplers %" PRIu64 ", the program holds %u", s.live_samplers,
                 g_sampler ? 1u : 0u);
        break;
    }
    case OP_BEGIN_CAPTURE: {
        int sid = slot_sid(c, (int)a[0]);
        if (sid < 0) {
            fail(c, "trace names a missing stream");
            return;
        }
        sinfo *si = &c->sid[sid];
        mcap *cp = NULL;
        for (int i = 0; i < MAX_CAPS && !cp; i++)
            if (!c->cap[i].num)
                cp = &c->cap[i];
        if (!si->cap && !cp) {
            fail(c, "trace: more captures than the model keeps");
            return;
        }
        st = salvo_stream_begin_capture(c->sh[a[0]]);
        if (si->cap) {
            expect_refused(c, "stream_begin_capture on a stream in a capture", st);
            break;
        }
        /* The stream's work so far is submitted first; only SALVO_OK
         * begins the capture. */
        switch (outcome(c, "stream_begin_capture", st, F_DEVICE | F_PTIMEOUT | F_NTIMEOUT | F_ERR,
                        lost_before)) {
        case OUT_OK:
            set_boundary(c, sid, si->seq);
            memset(cp, 0, sizeof *cp);
            cp->num = ++c->next_capn;
            cp->origin = sid;
            cp->began = c->ops;
            cp->limit = 40;
            si->cap = cp->num;
            break;
        case OUT_PTIMEOUT:
        case OUT_NTIMEOUT:
            break;
        default:
            stream_error(c, sid);
            break;
        }
        break;
    }
    case OP_END_CAPTURE: {
        int sid = slot_sid(c, (int)a[0]), gi = (int)a[1];
        if (sid < 0 || gi < 0 || gi >= MAX_GRAPHS || c->graph[gi].h) {
            fail(c, "trace names a missing stream or a graph slot in use");
            return;
        }
        mcap *cp = cap_find(c, c->sid[sid].cap);
        salvo_graph *h = (salvo_graph *)(void *)&c->graph[gi]; /* must come back NULL on failure */
        st = salvo_stream_end_capture(c->sh[a[0]], &h);
        if (!cp || cp->origin != sid) {
            expect_refused(c, cp ? "stream_end_capture on a stream that joined a capture"
                                 : "stream_end_capture on a stream not capturing",
                           st);
            if (h)
                fail(c, "stream_end_capture refused but *out is not NULL");
            break;
        }
        /* Over for every stream in it, with a graph or not. */
        if (outcome(c, "stream_end_capture", st, F_DEVICE | F_ERR, lost_before) == OUT_OK) {
            if (!h || h == (salvo_graph *)(void *)&c->graph[gi]) {
                fail(c, "stream_end_capture: SALVO_OK and no graph");
            } else {
                mgraph *g = &c->graph[gi];
                g->h = h;
                g->nodes = cp->nodes;
                memset(&cp->nodes, 0, sizeof cp->nodes);
                if (salvo_graph_node_count(h) != g->nodes.n)
                    fail(c, "graph_node_count %u, the capture made %u nodes",
                         salvo_graph_node_count(h), g->nodes.n);
            }
        } else if (h) {
            fail(c, "stream_end_capture failed but *out is not NULL");
        }
        cap_close(c, cp);
        break;
    }
    case OP_GRAPH_LAUNCH: {
        int gi = (int)a[0], sid = slot_sid(c, (int)a[1]);
        if (sid < 0 || !graph_ok(c, gi)) {
            fail(c, "trace names a missing object");
            return;
        }
        mgraph *g = &c->graph[gi];
        sinfo *si = &c->sid[sid];
        if (c->replay && !si->cap)
            for (uint32_t i = 0; i < g->nodes.n; i++)
                for (int j = 0; j < node_nbufs(&g->nodes.v[i]); j++)
                    if (!ordered(c, sid, g->nodes.v[i].b[j], NULL))
                        fprintf(stderr, "note: replayed graph_launch is not ordered after another "
                                        "stream's use of b%d\n", g->nodes.v[i].b[j]);
        st = salvo_graph_launch(g->h, c->sh[a[1]]);
        if (si->cap) {
            expect_refused(c, "graph_launch on a capturing stream", st);
            break;
        }
        /* As if its nodes were launched on the stream here, in order. */
        enum outcome r = outcome(c, "graph_launch", st, F_DEVICE | F_PTIMEOUT | F_NTIMEOUT | F_ERR,
                                 lost_before);
        if (r == OUT_NTIMEOUT)
            break;
        bool ok = r == OUT_OK || r == OUT_PTIMEOUT;
        for (uint32_t i = 0; i < g->nodes.n; i++)
            node_apply(c, sid, &g->nodes.v[i], ok);
        /* An empty graph's replay does nothing: no point, no submission. */
        if (g->nodes.n == 0)
            break;
        if (ok)
            atomic_fetch_add(&g_n_replayed, 1);
        si->replayed = true;
        if (!ok)
            stream_error(c, sid);
        else if (g_cfg.batch == 1)
            set_boundary(c, sid, si->seq);
        break;
    }
    case OP_GRAPH_SET_PUSH: {
        int gi = (int)a[0];
        if (!graph_ok(c, gi)) {
            fail(c, "trace names a missing graph");
            return;
        }
        mgraph *g = &c->graph[gi];
        uint32_t node = (uint32_t)a[1];
        const uint32_t push[2] = {(uint32_t)a[2], (uint32_t)a[3]};
        /* A bare node takes no push constants: 8 bytes are refused. */
        mnode *nd = node < g->nodes.n && g->nodes.v[node].kind != NK_COPY &&
                            g->nodes.v[node].kind != NK_BARE
                        ? &g->nodes.v[node]
                        : NULL;
        if (nd) {
            uint32_t most = nd->groups * nd->local;
            for (int j = 0; j < node_nbufs(nd); j++) {
                uint32_t len = range_len(c, nd->b[j], nd->off[j], nd->sz[j]);
                most = len < most ? len : most;
            }
            if (push[0] == 0 || push[0] > most) {
                fail(c, "trace: graph_set_push n=%u beyond what node %u covers (%u)", push[0],
                     node, most);
                return;
            }
        }
        st = salvo_graph_set_push(g->h, node, push, sizeof push);
        if (!nd) {
            if (st != SALVO_ERROR_INVALID_ARGUMENT)
                fail(c, "graph_set_push of node %u (%s) returned %s, expected "
                        "SALVO_ERROR_INVALID_ARGUMENT", node,
                     node >= g->nodes.n                      ? "no such node"
                     : g->nodes.v[node].kind == NK_BARE ? "a launch with no push constants"
                                                             : "a copy",
                     salvo_status_string(st));
            break;
        }
        if (st != SALVO_OK) {
            fail(c, "graph_set_push returned %s", salvo_status_string(st));
            break;
        }
        nd->n = push[0];
        nd->v = push[1];
        break;
    }
    case OP_GRAPH_SET_BINDINGS: {
        int gi = (int)a[0];
        if (!graph_ok(c, gi)) {
            fail(c, "trace names a missing graph");
            return;
        }
        mgraph *g = &c->graph[gi];
        uint32_t node = (uint32_t)a[1];
        mnode *nd = node < g->nodes.n && g->nodes.v[node].kind != NK_COPY ? &g->nodes.v[node]
                                                                         : NULL;
        int nb = nd ? node_nbufs(nd) : 1;
        int bb[2] = {(int)a[2], (int)a[5]};
        uint32_t off[2] = {(uint32_t)a[3], (uint32_t)a[6]}, sz[2] = {(uint32_t)a[4], (uint32_t)a[7]};
        salvo_binding bind[2];
        bool valid = nd != NULL;
        for (int j = 0; j < nb; j++) {
            if (!buf_ok(c, bb[j])) {
                fail(c, "trace names a missing buffer");
                return;
            }
            uint32_t bn = c->buf[bb[j]].n;
            bool arr = nd && nd->kind == NK_ARR;
            bind[j] = (salvo_binding){.binding = arr ? 0 : (uint32_t)j,
                                      .element = arr ? (uint32_t)j : 0,
                                      .buffer = c->buf[bb[j]].h, .offset = off[j] * 4ull,
                                      .size = sz[j] * 4ull};
            bool ok = off[j] < bn && (sz[j] == 0 || sz[j] <= bn - off[j]) &&
                      off[j] % g_align_elems == 0;
            valid &= ok;
            if (ok && nd && range_len(c, bb[j], off[j], sz[j]) < nd->n) {
                fail(c, "trace: graph_set_bindings range shorter than node %u's n", node);
                return;
            }
        }
        st = salvo_graph_set_bindings(g->h, node, bind, (uint32_t)nb);
        if (!valid) {
            if (st != SALVO_ERROR_INVALID_ARGUMENT)
                fail(c, "graph_set_bindings of %s returned %s, expected "
                        "SALVO_ERROR_INVALID_ARGUMENT",
                     !nd ? (node < g->nodes.n ? "a copy node" : "no such node") : "a bad range",
                     salvo_status_string(st));
            break;
        }
        if (st != SALVO_OK) {
            fail(c, "graph_set_bindings returned %s", salvo_status_string(st));
            break;
        }
        for (int j = 0; j < nb; j++) {
            nd->b[j] = bb[j];
            nd->off[j] = off[j];
            nd->sz[j] = sz[j];
        }
        zombies_gc(c);
        break;
    }
    case OP_GRAPH_UPDATE: {
        int gi = (int)a[0], fi = (int)a[1];
        if (!graph_ok(c, gi) || !graph_ok(c, fi)) {
            fail(c, "trace names a missing graph");
            return;
        }
        mgraph *g = &c->graph[gi];
        const mgraph *from = &c->graph[fi];
        st = salvo_graph_update(g->h, from->h);
        /* The model knows node kinds, not kernels: of graphs with as many
         * nodes of the same kinds, either answer may come; of others,
         * only the refusal. Taken: each node is from's. */
        bool same = g->nodes.n == from->nodes.n;
        for (uint32_t i = 0; same && i < g->nodes.n; i++)
            same = g->nodes.v[i].kind == from->nodes.v[i].kind &&
                   g->nodes.v[i].indirect == from->nodes.v[i].indirect;
        if (gi == fi) {
            if (st != SALVO_OK)
                fail(c, "graph_update from itself returned %s", salvo_status_string(st));
        } else if (!same) {
            if (st != SALVO_ERROR_INVALID_ARGUMENT)
                fail(c, "graph_update of graphs of %u and %u nodes of other kinds returned %s",
                     g->nodes.n, from->nodes.n, salvo_status_string(st));
        } else if (st == SALVO_OK) {
            if (from->nodes.n) /* an empty graph's array may be NULL */
                memcpy(g->nodes.v, from->nodes.v, from->nodes.n * sizeof *from->nodes.v);
        } else if (st != SALVO_ERROR_INVALID_ARGUMENT) {
            fail(c, "graph_update returned %s", salvo_status_string(st));
        }
        break;
    }
    case OP_GRAPH_DESTROY: {
        int gi = (int)a[0];
        if (!graph_ok(c, gi))
            return;
        salvo_graph_destroy(c->graph[gi].h); /* never blocks; replays may be pending */
        c->graph[gi].h = NULL;
        nodes_free(&c->graph[gi].nodes);
        zombies_gc(c);
        break;
    }
    case OP_IMAGE_CREATE:
        exec_image_create(c, o, lost_before);
        break;
    case OP_FORMAT_QUERY:
        exec_format_query(c, o);
        break;
    case OP_IMAGE_DESTROY: {
        int i = (int)a[0];
        if (!img_live(c, i))
            return;
        salvo_image_destroy(c->img[i].h); /* never blocks; work may be pending */
        memset(&c->img[i], 0, sizeof c->img[i]);
        break;
    }
    case OP_IMAGE_ADD:
        exec_image_add(c, o, lost_before);
        break;
    case OP_IMAGE_HOST:
        exec_image_host(c, o, lost_before);
        break;
    case OP_IMAGE_COPY:
        exec_image_copy(c, o, lost_before);
        break;
    case OP_BUFFER_IMPORT:
        exec_buffer_import(c, o, lost_before);
        break;
    case OP_TRACE_START:
        exec_trace_start(c, o, lost_before);
        break;
    case OP_TRACE_STOP:
        exec_trace_stop(c);
        break;
    case OP_DEFAULT_ALLOCATOR:
        exec_default_allocator(c, o);
        break;
    case OP_VK_DEVICE:
        exec_vk_device(c, o);
        break;
    case OP_BAD:
        exec_bad(c, o, lost_before);
        break;
    case OP_LOST_ELSEWHERE:
        break; /* taken before the switch */
    case OP_END_CHECK: {
        /* Everything is destroyed: drain, then every live counter is 0. */
        if (salvo_device_is_lost(g_dev))
            break;
        for (int i = 0; i < 50; i++) {
            st = salvo_device_synchronize(g_dev);
            if (st != SALVO_TIMEOUT)
                break;
            /* A fault that fails every wait with a timeout makes this a
             * poll: give the device real time to finish. */
            struct timespec pause = {0, 5 * 1000 * 1000};
            nanosleep(&pause, NULL);
        }
        salvo_stats s;
        if (salvo_device_stats(g_dev, &s) != SALVO_OK) {
            fail(c, "device_stats failed");
            break;
        }
        /* The kernels and the sampler open_device made stay to the close. */
        uint64_t kernels = (g_addr_kernel ? 1u : 0u) + (g_arr_kernel ? 1u : 0u) +
                           (g_bare_kernel ? 1u : 0u) +
                           (g_img_add_kernel ? 1u : 0u) + (g_img_fetch_kernel ? 1u : 0u);
        if (s.live_buffers || s.live_kernels != kernels || s.live_streams || s.live_events ||
            s.live_gates || s.live_buffer_bytes || s.live_graphs || s.live_images ||
            s.live_image_bytes || s.live_samplers != (g_sampler ? 1u : 0u))
            fail(c, "after destroying everything: live buffers %" PRIu64 " kernels %" PRIu64
                    " streams %" PRIu64 " events %" PRIu64 " gates %" PRIu64 " bytes %" PRIu64
                    " graphs %" PRIu64 " images %" PRIu64 " image bytes %" PRIu64
                    " samplers %" PRIu64,
                 s.live_buffers, s.live_kernels, s.live_streams, s.live_events, s.live_gates,
                 s.live_buffer_bytes, s.live_graphs, s.live_images, s.live_image_bytes,
                 s.live_samplers);
        else if (st == SALVO_OK && s.launches_pending)
            fail(c, "launches_pending %" PRIu64 " at the end", s.launches_pending);
        break;
    }
    case OP_COUNT:
        break;
    }
}

static void exec_bad(ctx *c, const op *o, bool lost_before)
{
    const int64_t *a = o->a;
    int what = (int)a[0], s = (int)a[1], bi = (int)a[2], k = (int)a[3], e = (int)a[4];
    int g = (int)a[5], gi = (int)a[6];
    uint32_t node = (uint32_t)a[7];
    int ii = (int)a[8];
    salvo_image *ih = img_live(c, ii) ? c->img[ii].h : NULL;
    salvo_graph *gh = graph_ok(c, gi) ? c->graph[gi].h : NULL;
    salvo_stream *sh = (s >= 0 && s < MAX_STREAMS) ? c->sh[s] : NULL;
    salvo_buffer *bh = buf_ok(c, bi) ? c->buf[bi].h : NULL;
    uint64_t bsize = bh ? c->buf[bi].n * 4ull : 0;
    salvo_kernel *kh = (k >= 0 && k < MAX_KERNELS) ? g_kern[k].h : NULL;
    uint32_t push[2] = {1, 1};
    uint32_t groups[3] = {1, 1, 1};
    salvo_binding bind = {.binding = 0, .buffer = bh};
    salvo_status st = SALVO_ERROR_INVALID_ARGUMENT;
    uint32_t word = 0;
    switch (what) {
    case BAD_LAUNCH_NULL_STREAM:
        st = salvo_launch(NULL, kh, groups, &bind, 1, push, sizeof push);
        break;
    case BAD_LAUNCH_NULL_KERNEL:
        st = salvo_launch(sh, NULL, groups, &bind, 1, push, sizeof push);
        break;
    case BAD_LAUNCH_NO_BINDINGS:
        st = salvo_launch(sh, kh, groups, NULL, 0, push, sizeof push);
        break;
    case BAD_LAUNCH_PUSH_SIZE:
        st = salvo_launch(sh, kh, groups, &bind, 1, push, 4);
        break;
    case BAD_LAUNCH_RANGE:
        bind.offset = (bsize + 4096) & ~4095ull;
        bind.size = 64;
        st = salvo_launch(sh, kh, groups, &bind, 1, push, sizeof push);
        break;
    case BAD_LAUNCH_UNALIGNED:
        bind.offset = 4; /* generated only where the alignment is larger */
        bind.size = 16;
        st = salvo_launch(sh, kh, groups, &bind, 1, push, sizeof push);
        break;
    case BAD_COPY_OVERLAP:
        st = salvo_copy(sh, bh, 0, bh, 4, bsize - 4);
        break;
    case BAD_COPY_RANGE:
        st = salvo_copy(sh, bh, 0, bh, bsize / 2, bsize / 2 + 8);
        break;
    case BAD_WRITE_RANGE:
        st = salvo_buffer_write(bh, bsize - 4, &push, 8);
        break;
    case BAD_READ_RANGE:
        st = salvo_buffer_read(bh, bsize, &word, 4);
        break;
    case BAD_WRITE_NULL:
        st = salvo_buffer_write(bh, 0, NULL, 4);
        break;
    case BAD_MAP_DEVICE: {
        void *p = &word;
        st = salvo_buffer_map(bh, &p);
        break;
    }
    case BAD_BUFFER_ZERO: {
        salvo_memory_info mi;
        if (salvo_device_memory_info(NULL, &mi) != SALVO_ERROR_INVALID_ARGUMENT ||
            mi.heap_count != 0 || salvo_device_memory_info(g_dev, NULL) != SALVO_ERROR_INVALID_ARGUMENT)
            fail(c, "device_memory_info with a NULL argument not refused (out zeroed)");
        salvo_buffer *nb = NULL;
        st = salvo_buffer_create(g_dev, 0, SALVO_DOMAIN_DEVICE, &nb);
        if (nb) {
            fail(c, "buffer_create of 0 bytes gave a buffer");
            salvo_buffer_destroy(nb);
        }
        break;
    }
    case BAD_RECORD_NULL:
        st = salvo_event_record(NULL, sh);
        break;
    case BAD_WAIT_NULL:
        st = salvo_stream_wait_event(sh, NULL);
        break;
    case BAD_GATE_LOWER:
        st = (g >= 0 && g < MAX_GATES && c->gate[g].h)
                 ? salvo_gate_raise(c->gate[g].h, 0) /* generated once it is above 0 */
                 : salvo_gate_raise(NULL, 1);
        break;
    case BAD_KERNEL_SIZE: {
        salvo_kernel *nk = NULL;
        salvo_kernel_desc d = {.spirv = add_spv, .spirv_size = sizeof add_spv - 2};
        st = salvo_kernel_create(g_dev, &d, &nk);
        if (nk) {
            fail(c, "kernel_create of a truncated module gave a kernel");
            salvo_kernel_destroy(nk);
        }
        break;
    }
    case BAD_BEGIN_CAPTURE_NULL: {
        bool capturing = true;
        if (salvo_stream_is_capturing(NULL, &capturing) != SALVO_ERROR_INVALID_ARGUMENT ||
            capturing)
            fail(c, "stream_is_capturing(NULL stream) not refused with *out false");
        if (sh && salvo_stream_is_capturing(sh, NULL) != SALVO_ERROR_INVALID_ARGUMENT)
            fail(c, "stream_is_capturing(NULL out) not refused");
        st = salvo_stream_begin_capture(NULL);
        break;
    }
    case BAD_END_CAPTURE_NULL:
        /* Even on a capturing stream: the capture goes on. */
        st = salvo_stream_end_capture(sh, NULL);
        break;
    case BAD_GRAPH_LAUNCH_NULL:
        if (salvo_graph_node_count(NULL) != 0)
            fail(c, "graph_node_count(NULL) is not 0");
        st = gh ? salvo_graph_launch(gh, NULL) : salvo_graph_launch(NULL, sh);
        break;
    case BAD_GRAPH_PUSH_SIZE:
        /* A launch node given 4 bytes of its 8 (generated so). */
        st = gh ? salvo_graph_set_push(gh, node, push, 4)
                : salvo_graph_set_push(NULL, 0, push, sizeof push);
        break;
    case BAD_GRAPH_NO_BINDINGS:
        st = gh ? salvo_graph_set_bindings(gh, node, NULL, 0)
                : salvo_graph_set_bindings(NULL, 0, &bind, 1);
        break;
    case BAD_IMAGE_ZERO: {
        salvo_image *ni = NULL;
        salvo_image_desc d = {.type = SALVO_IMAGE_2D, .format = SALVO_FORMAT_R32_UINT,
                              .width = 0, .height = 4};
        st = salvo_image_create(g_dev, &d, &ni);
        if (ni) {
            fail(c, "image_create of width 0 gave an image");
            salvo_image_destroy(ni);
        }
        break;
    }
    case BAD_IMAGE_REGION: {
        /* From x = width: the box starts outside the image. */
        const salvo_image_region box = {.x = ih ? c->img[ii].w : 0, .width = 1};
        st = salvo_copy_buffer_to_image(sh, bh, 0, ih, &box);
        break;
    }
    case BAD_IMAGE_OFFSET: {
        const salvo_image_region box = {.width = 1, .height = 1};
        st = salvo_copy_image_to_buffer(sh, ih, &box, bh, 2);
        break;
    }
    case BAD_IMAGE_SIZE: {
        /* One texel is 4 bytes: 8 given (push holds them). */
        const salvo_image_region box = {.width = 1, .height = 1};
        st = salvo_image_write(ih, &box, push, sizeof push);
        break;
    }
    case BAD_IMAGE_AS_BUFFER:
        st = salvo_launch(sh, g_img_add_kernel, groups, &bind, 1, push, 4);
        break;
    case BAD_IMAGE_NO_SAMPLER: {
        const salvo_binding bd[2] = {{.binding = 0, .image = ih}, {.binding = 1, .buffer = bh}};
        const uint32_t push6[6] = {0, 0, 1, 1, 0, 1};
        st = salvo_launch(sh, g_img_fetch_kernel, groups, bd, 2, push6, sizeof push6);
        break;
    }
    case BAD_INDIRECT_OFFSET:
        /* The buffer as its own count buffer, counts at byte 2. */
        st = salvo_launch_indirect(sh, kh, bh, 2, &bind, 1, push, sizeof push);
        break;
    case BAD_FILL_PATTERN:
        st = salvo_fill_pattern(sh, bh, 0, 3, &word, 3);
        break;
    case BAD_EVENT_FLAGS: {
        salvo_event *ne = NULL;
        st = salvo_event_create_flags(g_dev, 1u << 7, &ne);
        if (ne) {
            fail(c, "event_create_flags with an unknown flag gave an event");
            salvo_event_destroy(ne);
        }
        break;
    }
    case BAD_COPY_IMAGE: {
        /* A 1 x 1 box to a 2 x 1 one (of the same image, which is also
         * refused: the regions share its one layer). */
        const salvo_image_region one = {.width = 1, .height = 1}, two = {.width = 2, .height = 1};
        st = salvo_copy_image(sh, ih, &one, ih, &two);
        break;
    }
    default:
        fail(c, "trace: unknown bad call %d", what);
        return;
    }
    (void)e;
    if (st != SALVO_ERROR_INVALID_ARGUMENT &&
        !(lost_before && st == SALVO_ERROR_DEVICE_LOST))
        fail(c, "bad call %d returned %s, expected SALVO_ERROR_INVALID_ARGUMENT", what,
             salvo_status_string(st));
}

/* ------------------------------------------------------------------ */
/* Issuing: log the line, then execute                                 */
/* ------------------------------------------------------------------ */

static void op_format(const op *o, char *line, size_t size)
{
    size_t n = (size_t)snprintf(line, size, "%s", op_names[o->kind]);
    const char *k = op_keys[o->kind];
    for (int i = 0; *k && i < MAX_ARGS && n < size; i++) {
        const char *sp = strchr(k, ' ');
        int len = sp ? (int)(sp - k) : (int)strlen(k);
        n += (size_t)snprintf(line + n, size - n, " %.*s=%" PRId64, len, k, o->a[i]);
        k += len;
        while (*k == ' ')
            k++;
    }
}

static bool op_parse(const char *line, op *o)
{
    char name[64];
    int used = 0;
    memset(o, 0, sizeof *o);
    if (sscanf(line, "%63s%n", name, &used) != 1)
        return false;
    int kind = -1;
    for (int i = 0; i < OP_COUNT; i++)
        if (strcmp(op_names[i], name) == 0)
            kind = i;
    if (kind < 0)
        return false;
    o->kind = (enum op_kind)kind;
    const char *p = line + used;
    for (int i = 0; i < MAX_ARGS; i++) {
        const char *eq = strchr(p, '=');
        if (!eq)
            break;
        char *end;
        o->a[i] = strtoll(eq + 1, &end, 10);
        p = end;
    }
    return true;
}

static void issue(ctx *c, const op *o)
{
    if (c->failed)
        return;
    char line[256];
    op_format(o, line, sizeof line);
    trace_add(c, line);
    c->ops++;
    c->counts[o->kind]++;
    uint64_t v0 = atomic_load(&g_validation);
    uint64_t i0 = g_fake ? fake_illegal_total(g_fake) : 0;
    exec_op(c, o);
    pend_scan(c);
    if (atomic_load(&g_validation) != v0)
        fail(c, "validation layer message(s) during %s", line);
    /* The fake's validation layer: what a driver would refuse. */
    if (g_fake && fake_illegal_total(g_fake) != i0)
        fail(c, "illegal use of the fake accelerator during %s (or another thread's call "
                "meanwhile): %s", line, fake_illegal_last(g_fake));
    raiser_check(c);
    if (c->lost)
        c->after_lost++;
}

#define ISSUE(c, kind_, ...)                                                                       \
    do {                                                                                           \
        op o_ = {.kind = (kind_), .a = {__VA_ARGS__}};                                             \
        issue((c), &o_);                                                                           \
    } while (0)

/* ------------------------------------------------------------------ */
/* Generating                                                          */
/* ------------------------------------------------------------------ */

static int pick_stream(ctx *c)
{
    int live[MAX_STREAMS], n = 0;
    for (int s = 0; s < MAX_STREAMS; s++)
        if (c->sh[s])
            live[n++] = s;
    if (n == 0) {
        for (int s = 0; s < MAX_STREAMS; s++)
            if (c->next_sid < MAX_SID) {
                ISSUE(c, OP_STREAM_CREATE, s, rnd(c, 3) ? 0 : 1 + rnd(c, 4), rnd(c, 4) ? 0 : 1);
                return c->sh[s] ? s : -1;
            }
        return -1;
    }
    return live[rnd(c, (uint32_t)n)];
}

static uint32_t buf_elems(ctx *c)
{
    /* A few hundred, sometimes not a multiple of the alignment. */
    return 64 + rnd(c, 540);
}

static int pick_buf(ctx *c)
{
    int live[MAX_BUFS], n = 0;
    for (int b = 0; b < MAX_BUFS; b++)
        if (c->buf[b].h)
            live[n++] = b;
    if (n == 0) {
        ISSUE(c, OP_BUFFER_CREATE, 0, rnd(c, 3), buf_elems(c));
        if (c->buf[0].h)
            ISSUE(c, OP_WRITE, 0, 0, c->buf[0].n, rnd64(c) >> 16);
        return c->buf[0].h ? 0 : -1;
    }
    return live[rnd(c, (uint32_t)n)];
}

static int pick_kernel(ctx *c, int kind)
{
    int cand[MAX_KERNELS], n = 0;
    for (int k = 0; k < MAX_KERNELS; k++)
        if (g_kern[k].h && g_kern[k].kind == kind)
            cand[n++] = k;
    if (n)
        return cand[rnd(c, (uint32_t)n)];
    if (g_nctx > 1)
        return -1;
    int k = kind == 0 ? (g_kern[0].h ? 2 : 0) : (g_kern[1].h ? 3 : 1);
    if (g_kern[k].h)
        return -1;
    static const uint32_t locals[] = {64, 32, 1, 128};
    ISSUE(c, OP_KERNEL_CREATE, k, kind, kind == 0 ? locals[rnd(c, 4)] : 64);
    return g_kern[k].h ? k : -1;
}

static int pick_event(ctx *c, bool create)
{
    int live[MAX_EVENTS], n = 0, free_slot = -1;
    for (int e = 0; e < MAX_EVENTS; e++) {
        if (c->ev[e].h)
            live[n++] = e;
        else if (free_slot < 0)
            free_slot = e;
    }
    if ((n == 0 || (create && free_slot >= 0 && rnd(c, 4) == 0)) && free_slot >= 0) {
        ISSUE(c, OP_EVENT_CREATE, free_slot, rnd(c, 3) == 0);
        if (c->ev[free_slot].h)
            return free_slot;
    }
    return n ? live[rnd(c, (uint32_t)n)] : -1;
}

/* A host read can order buffer bi: a user's buffer no capture writes,
 * with no host call or undeclared command pending on it (salvo does not
 * order the host after those). */
static bool can_read(ctx *c, int bi)
{
    return bi < MAX_BUFS && c->buf[bi].h && !cap_writes(c, bi) && host_blocker(c, bi) < 0;
}

/* The live slot of stream id t that can be synchronized or record an
 * event that orders its work (not capturing), or -1. */
static int orderable_slot(ctx *c, int t)
{
    for (int x = 0; x < MAX_STREAMS; x++)
        if (c->sh[x] && c->ssid[x] == t)
            return c->sid[t].cap ? -1 : x;
    return -1;
}

/* Order stream s after every earlier use of buffer bi on other streams:
 * the generated program must be race-free. False when that failed. A
 * capturing stream's launches are nodes, which run only when replayed
 * (a replay resolves every buffer its graph touches). */
static bool resolve(ctx *c, int s, int bi)
{
    int sid = c->ssid[s];
    if (c->sid[sid].cap)
        return true;
    for (int tries = 0; tries < 8; tries++) {
        /* The wait below joins a capture where the record before it
         * failed and left the event a point of one: the stream is
         * capturing now, and the caller's op (chosen for a stream that
         * was not) must not go. */
        if (c->sid[sid].cap)
            return false;
        int t = -1;
        if (ordered(c, sid, bi, &t))
            return true;
        if (c->failed || c->lost)
            return c->lost;
        int ts = orderable_slot(c, t);
        uint32_t r = rnd(c, 10);
        if (ts >= 0 && r < 6 && tries < 4) {
            int e = pick_event(c, true);
            if (e < 0)
                continue;
            ISSUE(c, OP_EV_RECORD, e, ts);
            ISSUE(c, OP_WAIT_EVENT, s, e);
        } else if (ts >= 0 && r < 9 && tries < 4) {
            ISSUE(c, OP_SYNC, ts);
        } else if (g_nctx == 1 && ((r == 9 && tries < 4) || !can_read(c, bi))) {
            ISSUE(c, OP_DSYNC, 0);
        } else if (can_read(c, bi)) {
            /* A host read waits for every use of the buffer. */
            ISSUE(c, OP_READ, bi, 0, c->buf[bi].n);
        } else {
            return false;
        }
    }
    return !c->sid[sid].cap && ordered(c, sid, bi, NULL);
}

/* A binding's range: offset aligned, size 0 (to the end) or a length. */
static void pick_range(ctx *c, uint32_t n, uint32_t *off, uint32_t *sz, uint32_t *len)
{
    if (rnd(c, 3) == 0) {
        *off = 0;
        *sz = 0;
        *len = n;
    } else {
        uint32_t slots = (n - 1) / g_align_elems + 1;
        *off = rnd(c, slots) * g_align_elems;
        if (*off >= n)
            *off = 0;
        *len = 1 + rnd(c, n - *off);
        *sz = rnd(c, 2) ? 0 : *len;
        if (*sz == 0)
            *len = n - *off;
    }
}

/* s: the stream, or -1 to pick one. */
static void gen_launch_add(ctx *c, int s)
{
    if (s < 0)
        s = pick_stream(c);
    int bi = pick_buf(c), k = pick_kernel(c, 0);
    if (s < 0 || bi < 0 || k < 0 || !resolve(c, s, bi))
        return;
    uint32_t off, sz, len;
    pick_range(c, c->buf[bi].n, &off, &sz, &len);
    uint32_t n = rnd(c, 4) ? len : 1 + rnd(c, len);
    ISSUE(c, OP_LAUNCH_ADD, s, k, bi, off, sz, n, 1 + rnd(c, 1000), rnd(c, 4) == 0);
}

/* The same add on one stream two to five times, each alone in its batch
 * (a synchronize or a flush after it) or followed in its batch by other
 * work of the stream: the launches salvo records ahead (core/ahead.h),
 * and the recording into the batch of one that work follows. */
static void gen_copy(ctx *c, int s);
static void gen_launch_repeat(ctx *c)
{
    int s = pick_stream(c);
    int bi = pick_buf(c), k = pick_kernel(c, 0);
    if (s < 0 || bi < 0 || k < 0 || c->sid[slot_sid(c, s)].cap || !resolve(c, s, bi))
        return;
    uint32_t off, sz, len;
    pick_range(c, c->buf[bi].n, &off, &sz, &len);
    uint32_t v = 1 + rnd(c, 1000);
    int reps = 2 + rnd(c, 4);
    for (int i = 0; i < reps; i++) {
        ISSUE(c, OP_LAUNCH_ADD, s, k, bi, off, sz, len, v, 0);
        uint32_t next = rnd(c, 8);
        if (next == 0)
            gen_copy(c, s);
        else if (next == 1)
            ISSUE(c, OP_STATS, 0);
        ISSUE(c, next < 6 ? OP_SYNC : OP_FLUSH, s);
    }
}

/* An add through a device address; not on a capturing stream (the
 * model's graphs rebind their nodes' buffers, which such a node has
 * none of). */
static void gen_launch_addr(ctx *c)
{
    int s = pick_stream(c);
    int bi = pick_buf(c);
    if (!g_addr_kernel || s < 0 || bi < 0 || c->sid[slot_sid(c, s)].cap || !resolve(c, s, bi))
        return;
    uint32_t off, sz, len;
    pick_range(c, c->buf[bi].n, &off, &sz, &len);
    (void)sz;
    uint32_t n = rnd(c, 4) ? len : 1 + rnd(c, len);
    ISSUE(c, OP_LAUNCH_ADDR, s, bi, off, n, 1 + rnd(c, 1000));
}

/* A fill of a range; not on a capturing stream (the model's graphs
 * know launches and copies). */
static void gen_fill(ctx *c)
{
    int s = pick_stream(c);
    int bi = pick_buf(c);
    if (s < 0 || bi < 0 || c->sid[slot_sid(c, s)].cap || !resolve(c, s, bi))
        return;
    uint32_t off = rnd(c, c->buf[bi].n);
    uint32_t n = 1 + rnd(c, c->buf[bi].n - off);
    ISSUE(c, OP_FILL, s, bi, off, n, rnd(c, 4) ? rnd(c, 1u << 30) : 0);
}

/* A fill of any byte offset with a 1-, 2- or 4-byte pattern; not on a
 * capturing stream (as gen_fill). Pattern bytes below 0x40: words stay
 * below 2^30, as data words and fills do. */
static void gen_fill_pattern(ctx *c)
{
    int s = pick_stream(c);
    int bi = pick_buf(c);
    if (s < 0 || bi < 0 || c->sid[slot_sid(c, s)].cap || !resolve(c, s, bi))
        return;
    uint32_t w = 1u << rnd(c, 3), bytes = c->buf[bi].n * 4;
    uint32_t off = rnd(c, 3) ? rnd(c, bytes) : rnd(c, 9);
    uint32_t room = (bytes - off) / w;
    if (room == 0)
        return;
    uint32_t count = 1 + (rnd(c, 2) ? rnd(c, room < 16 ? room : 16) : rnd(c, room));
    ISSUE(c, OP_FILL_PATTERN, s, bi, off, count * w, w, rnd(c, 1u << 30) & 0x3f3f3f3fu);
}

/* An add whose counts come from a buffer: covering n, short of it, one
 * over, or 0 (in x, y or z) now and then; on capturing streams too. */
static void gen_launch_indirect(ctx *c)
{
    int s = pick_stream(c);
    int bi = pick_buf(c), k = pick_kernel(c, 0);
    if (s < 0 || bi < 0 || k < 0 || !resolve(c, s, bi))
        return;
    uint32_t off, sz, len;
    pick_range(c, c->buf[bi].n, &off, &sz, &len);
    uint32_t n = rnd(c, 4) ? len : 1 + rnd(c, len);
    uint32_t local = g_kern[k].local, need = (n + local - 1) / local;
    uint32_t gx = rnd(c, 3) ? need : rnd(c, need + 2);
    bool capturing = c->sid[slot_sid(c, s)].cap != 0;
    ISSUE(c, OP_LAUNCH_INDIRECT, s, k, bi, off, sz, n, 1 + rnd(c, 1000), gx, rnd(c, 10) != 0,
          rnd(c, 10) != 0, capturing ? 0 : rnd(c, 2));
}

/* A stream write of a range; not on a capturing stream (refused there). */
static void gen_swrite(ctx *c)
{
    int s = pick_stream(c);
    int bi = pick_buf(c);
    if (s < 0 || bi < 0 || c->sid[slot_sid(c, s)].cap || !resolve(c, s, bi))
        return;
    uint32_t off = rnd(c, c->buf[bi].n);
    uint32_t n = 1 + rnd(c, c->buf[bi].n - off);
    ISSUE(c, OP_SWRITE, s, bi, off, n, rnd64(c) >> 16);
}

/* Two buffers as the elements of an array binding; not on a capturing
 * stream (the model's graph nodes bind one or two plain bindings). */
static void gen_launch_arr(ctx *c)
{
    int s = pick_stream(c);
    int b0 = pick_buf(c), b1 = pick_buf(c);
    if (!g_arr_kernel || s < 0 || b0 < 0 || b1 < 0 || b0 == b1)
        return;
    if (!resolve(c, s, b0) || !resolve(c, s, b1))
        return;
    uint32_t off0, sz0, len0, off1, sz1, len1;
    pick_range(c, c->buf[b0].n, &off0, &sz0, &len0);
    pick_range(c, c->buf[b1].n, &off1, &sz1, &len1);
    uint32_t n = len0 < len1 ? len0 : len1;
    if (rnd(c, 3) == 0)
        n = 1 + rnd(c, n);
    ISSUE(c, OP_LAUNCH_ARR, s, b0, off0, sz0, b1, off1, sz1, n, 1 + rnd(c, 1000));
}

static void gen_launch_copy(ctx *c, int s)
{
    if (s < 0)
        s = pick_stream(c);
    int si = pick_buf(c), di = pick_buf(c), k = pick_kernel(c, 1);
    if (s < 0 || si < 0 || di < 0 || k < 0 || si == di)
        return;
    if (!resolve(c, s, si) || !resolve(c, s, di))
        return;
    uint32_t soff, ssz, slen, doff, dsz, dlen;
    pick_range(c, c->buf[si].n, &soff, &ssz, &slen);
    pick_range(c, c->buf[di].n, &doff, &dsz, &dlen);
    uint32_t n = slen < dlen ? slen : dlen;
    if (rnd(c, 3) == 0)
        n = 1 + rnd(c, n);
    ISSUE(c, OP_LAUNCH_COPY, s, k, si, soff, ssz, di, doff, dsz, n, rnd(c, 3) ? rnd(c, 100) : 0);
}

static void gen_copy(ctx *c, int s)
{
    if (s < 0)
        s = pick_stream(c);
    int si = pick_buf(c), di = pick_buf(c);
    if (s < 0 || si < 0 || di < 0)
        return;
    if (!resolve(c, s, si) || !resolve(c, s, di))
        return;
    uint32_t sn = c->buf[si].n, dn = c->buf[di].n;
    uint32_t soff, doff, n;
    if (si == di) {
        /* Two disjoint ranges of one buffer. */
        uint32_t half = sn / 2;
        n = 1 + rnd(c, half);
        uint32_t a = rnd(c, half - n + 1), b = half + rnd(c, sn - half - n + 1);
        if (rnd(c, 2)) {
            soff = a;
            doff = b;
        } else {
            soff = b;
            doff = a;
        }
    } else {
        uint32_t m = sn < dn ? sn : dn;
        n = rnd(c, 3) == 0 ? m : 1 + rnd(c, m);
        soff = rnd(c, sn - n + 1);
        doff = rnd(c, dn - n + 1);
    }
    ISSUE(c, OP_COPY, s, si, soff, di, doff, n);
}

static void host_range(ctx *c, uint32_t n, uint32_t *off, uint32_t *len)
{
    if (rnd(c, 2)) {
        *off = 0;
        *len = n;
    } else {
        *off = rnd(c, n);
        *len = 1 + rnd(c, n - *off);
    }
}

/* Synchronize what stands between the host and a mapped access. */
static bool make_idle(ctx *c, int bi)
{
    for (int tries = 0; tries < 6; tries++) {
        int t = -1;
        if (idle(c, bi, &t))
            return true;
        if (c->failed || c->lost)
            return false;
        int ts = orderable_slot(c, t);
        if (ts >= 0 && rnd(c, 4))
            ISSUE(c, OP_SYNC, ts);
        else if (g_nctx == 1)
            ISSUE(c, OP_DSYNC, 0);
        else
            return false; /* a destroyed stream's work: only a read orders it */
    }
    return idle(c, bi, NULL);
}

static bool settle(ctx *c, int bi);

static void gen_host(ctx *c)
{
    int bi = pick_buf(c);
    if (bi < 0)
        return;
    mbuf *b = &c->buf[bi];
    uint32_t off, len;
    host_range(c, b->n, &off, &len);
    uint32_t r = rnd(c, 10);
    if ((r < 8 || !b->map) && !settle(c, bi))
        return; /* a host call or an undeclared command could race the transfer */
    if (r < 4) {
        ISSUE(c, OP_WRITE, bi, off, len, rnd64(c) >> 16);
    } else if (r < 8 || !b->map) {
        ISSUE(c, OP_READ, bi, off, len);
    } else if (make_idle(c, bi)) {
        if (rnd(c, 2))
            ISSUE(c, OP_MAP_WRITE, bi, off, len, rnd64(c) >> 16);
        else
            ISSUE(c, OP_MAP_READ, bi, off, len);
    }
}

/* Make the model know that the points keeping host access to buffer bi
 * unordered (mpend.guards) are passed; false when that failed. */
static bool settle(ctx *c, int bi)
{
    for (int tries = 0; tries < 4; tries++) {
        int t = host_blocker(c, bi);
        if (t < 0)
            return true;
        if (c->failed || c->lost)
            return false;
        int ts = orderable_slot(c, t), e;
        if (ts >= 0 && rnd(c, 3)) {
            ISSUE(c, OP_SYNC, ts);
        } else if (ts >= 0 && (e = pick_event(c, true)) >= 0) {
            ISSUE(c, OP_EV_RECORD, e, ts);
            ISSUE(c, OP_EV_SYNC, e);
        } else if (g_nctx == 1) {
            ISSUE(c, OP_DSYNC, 0);
        } else {
            return false; /* a destroyed or capturing stream's point */
        }
    }
    return host_blocker(c, bi) < 0;
}

/* Now and then, one of the ways the program learns that stream s passed
 * what it did so far. */
static void gen_pass(ctx *c, int s)
{
    if (c->failed || !c->sh[s] || c->sid[c->ssid[s]].cap)
        return;
    switch (rnd(c, 8)) {
    case 0:
        ISSUE(c, OP_SYNC, s);
        break;
    case 1: {
        int e = pick_event(c, true);
        if (e >= 0) {
            ISSUE(c, OP_EV_RECORD, e, s);
            if (rnd(c, 2))
                ISSUE(c, OP_EV_SYNC, e);
            else
                ISSUE(c, OP_EV_WAIT, e, 2);
        }
        break;
    }
    case 2:
        ISSUE(c, OP_STREAM_QUERY, s);
        break;
    case 3:
        if (g_nctx == 1)
            ISSUE(c, OP_DSYNC, 0);
        break;
    default:
        break;
    }
}

/* A stream on which to make a call that a capture refuses (now and then
 * a capturing one: refused) or that is ordered after every other
 * stream's use of buffer bi; -1: none. */
static int stream_for(ctx *c, int bi, bool order)
{
    int s = pick_stream(c);
    if (s < 0 || bi < 0 || !c->buf[bi].h)
        return -1;
    if (c->sid[c->ssid[s]].cap)
        return rnd(c, 3) == 0 ? s : -1;
    if (order && !resolve(c, s, bi))
        return -1;
    return c->sh[s] && c->buf[bi].h ? s : -1;
}

/* MODEL_AVOID=call_wait: make every use of buffer bi by streams other than
 * s's known to be over; false when that failed. */
static bool others_over(ctx *c, int s, int bi)
{
    int sid = c->ssid[s];
    for (int tries = 0; tries < 6; tries++) {
        int t = -1;
        for (int u = 0; u < c->next_sid && t < 0; u++)
            if (u != sid && c->buf[bi].acc[u] > c->sid[u].completed)
                t = u;
        if (t < 0)
            return true;
        if (c->failed || c->lost)
            return false;
        int ts = orderable_slot(c, t);
        if (ts >= 0)
            ISSUE(c, OP_SYNC, ts);
        else if (g_nctx == 1)
            ISSUE(c, OP_DSYNC, 0);
        else
            return false;
        if (!c->sh[s] || !c->buf[bi].h)
            return false;
    }
    return false;
}

/* A stream read of a range, then maybe a later write of it on the stream
 * (which must not show in what the read gives). */
/* A config where known bug worker_wait would hang a seed. */
static bool worker_wait_risk(void)
{
    return g_avoid_worker_wait && g_cfg.timeout_s == 0 && strstr(g_cfg.fault, "fence_wait") &&
           strstr(g_cfg.fault, "timeout:always");
}

static void gen_sread(ctx *c)
{
    if (g_avoid_read_timeout && g_cfg.timeout_s > 0)
        return; /* MODEL_AVOID=read_timeout */
    if (worker_wait_risk())
        return;
    int bi = pick_buf(c);
    int s = stream_for(c, bi, true);
    if (s < 0)
        return;
    uint32_t off, n;
    host_range(c, c->buf[bi].n, &off, &n);
    ISSUE(c, OP_SREAD, s, bi, off, n);
    if (c->failed || c->sid[c->ssid[s]].cap)
        return;
    switch (rnd(c, 6)) {
    case 0:
        ISSUE(c, OP_SWRITE, s, bi, off, n, rnd64(c) >> 16);
        break;
    case 1:
        ISSUE(c, OP_FILL, s, bi, off, n, rnd(c, 1u << 30));
        break;
    case 2:
        if (g_vk_fill || g_fake)
            ISSUE(c, OP_VK_RECORD, s, bi, off, n, rnd(c, 1u << 30), rnd(c, 3));
        break;
    default:
        break;
    }
    gen_pass(c, s);
}

/* A host call; where the buffer is mapped, fn reads the range there (and
 * maybe writes it), and the stream's later work may read what it wrote. */
static void gen_host_call(ctx *c)
{
    if (worker_wait_risk())
        return;
    int bi = pick_buf(c);
    if (bi < 0)
        return;
    int mode = c->buf[bi].map ? (int)rnd(c, 3) : 0;
    int s = stream_for(c, bi, mode >= 1);
    if (s < 0)
        return;
    if (mode >= 1 && g_avoid_call_wait && !c->sid[c->ssid[s]].cap && !others_over(c, s, bi))
        mode = 0; /* MODEL_AVOID=call_wait */
    uint32_t off, n;
    host_range(c, c->buf[bi].n, &off, &n);
    ISSUE(c, OP_HOST_CALL, s, bi, off, n, rnd64(c) >> 16, mode);
    if (c->failed || c->sid[c->ssid[s]].cap)
        return;
    if (mode == 2) {
        /* Later work that reads what fn wrote: it must wait for fn. */
        uint32_t r = rnd(c, 4);
        if (r == 0) {
            int k = pick_kernel(c, 0);
            if (k >= 0 && c->sh[s] && c->buf[bi].h)
                ISSUE(c, OP_LAUNCH_ADD, s, k, bi, 0, 0, off + n, 1 + rnd(c, 1000), 0);
        } else if (r == 1) {
            int di = pick_buf(c);
            if (di >= 0 && di != bi && c->buf[di].n >= n && resolve(c, s, di) && c->sh[s] &&
                c->buf[bi].h && c->buf[di].h)
                ISSUE(c, OP_COPY, s, bi, off, di, rnd(c, c->buf[di].n - n + 1), n);
        } else if (r == 2 && c->sh[s] && c->buf[bi].h &&
                   !(g_avoid_read_timeout && g_cfg.timeout_s > 0)) {
            ISSUE(c, OP_SREAD, s, bi, off, n);
        }
    }
    if (c->sh[s])
        gen_pass(c, s);
}

/* The program's own fill of a range, with its use declared or not. */
static void gen_vk_record(ctx *c)
{
    if (!g_vk_fill && !g_fake)
        return;
    int bi = pick_buf(c);
    int s = stream_for(c, bi, true);
    if (s < 0)
        return;
    uint32_t off = rnd(c, c->buf[bi].n);
    uint32_t n = 1 + rnd(c, c->buf[bi].n - off);
    uint32_t r = rnd(c, 6);
    ISSUE(c, OP_VK_RECORD, s, bi, off, n, rnd(c, 4) ? rnd(c, 1u << 30) : 0,
          r < 2 ? 0 : r < 5 ? 1 : 2);
}

/* ---- images ---- */

static void gen_image_create(ctx *c, int i)
{
    ISSUE(c, OP_IMAGE_CREATE, i, 1 + rnd(c, 48), rnd(c, 3) ? 1 + rnd(c, 4) : 1);
}

/* A live image slot, creating an image where there is none; -1: none. */
static int pick_image(ctx *c)
{
    int live[MAX_IMAGES], n = 0;
    for (int i = 0; i < MAX_IMAGES; i++)
        if (c->img[i].h)
            live[n++] = i;
    if (n)
        return live[rnd(c, (uint32_t)n)];
    if (!g_img_ok)
        return -1;
    gen_image_create(c, 0);
    return c->img[0].h ? 0 : -1;
}

/* A box of a w x h image: its origin and extents, each extent now and
 * then 0 (to the end). */
static void pick_box(ctx *c, uint32_t w, uint32_t h, uint32_t box[4])
{
    box[0] = rnd(c, w);
    box[1] = rnd(c, h);
    box[2] = rnd(c, 4) ? 1 + rnd(c, w - box[0]) : 0;
    box[3] = rnd(c, 4) ? 1 + rnd(c, h - box[1]) : 0;
}

static void gen_image_host(ctx *c, int ii)
{
    uint32_t box[4];
    pick_box(c, c->img[ii].w, c->img[ii].ht, box);
    ISSUE(c, OP_IMAGE_HOST, ii, box[0], box[1], box[2], box[3], rnd64(c) >> 16);
}

/* A box of one image into the other at a place it fits (shrunk to fit);
 * the host writes before the copy wait for the images' earlier users. */
static void gen_image_copy(ctx *c)
{
    int s = pick_stream(c);
    if (s < 0 || c->sid[slot_sid(c, s)].cap)
        return;
    for (int i = 0; i < 2; i++)
        if (!c->img[i].h)
            gen_image_create(c, i);
    if (!c->img[0].h || !c->img[1].h)
        return;
    int ii = (int)rnd(c, 2), i2 = 1 - ii;
    const mimage *m = &c->img[ii], *m2 = &c->img[i2];
    uint32_t box[4];
    pick_box(c, m->w, m->ht, box);
    uint32_t ew = box_len(box[2], box[0], m->w), eh = box_len(box[3], box[1], m->ht);
    if (ew > m2->w)
        box[2] = ew = m2->w;
    if (eh > m2->ht)
        box[3] = eh = m2->ht;
    ISSUE(c, OP_IMAGE_COPY, s, ii, box[0], box[1], box[2], box[3], i2, rnd(c, m2->w - ew + 1),
          rnd(c, m2->ht - eh + 1), rnd64(c) >> 16);
}

/* Order stream s after every other stream's use of image ii, as resolve
 * does for a buffer: an image_add overwrites it. False when that failed. */
static bool img_resolve(ctx *c, int s, int ii)
{
    int sid = c->ssid[s];
    for (int tries = 0; tries < 8; tries++) {
        int t = -1;
        if (img_ordered(c, sid, ii, &t))
            return true;
        if (c->failed || c->lost)
            return c->lost;
        int ts = orderable_slot(c, t);
        uint32_t r = rnd(c, 10);
        if (ts >= 0 && r < 5 && tries < 4) {
            int e = pick_event(c, true);
            if (e < 0)
                continue;
            ISSUE(c, OP_EV_RECORD, e, ts);
            ISSUE(c, OP_WAIT_EVENT, s, e);
        } else if (ts >= 0 && r < 8 && tries < 4) {
            ISSUE(c, OP_SYNC, ts);
        } else {
            /* A host write of the image waits for every use of it (and
             * reaches what a destroyed or capturing stream did). */
            gen_image_host(c, ii);
        }
        if (!c->sh[s] || !c->img[ii].h)
            return false;
    }
    return img_ordered(c, sid, ii, NULL);
}

static int stream_in(ctx *c, int num);

/* An image_add on a stream not in a capture (the model's graphs have no
 * image nodes), ordered after other streams' uses of the buffer and of
 * the image. */
static void gen_image_add(ctx *c)
{
    int s = pick_stream(c);
    if (s >= 0 && c->sid[c->ssid[s]].cap)
        s = stream_in(c, 0);
    int bi = pick_buf(c), ii = pick_image(c);
    bool fetch = g_img_fetch_kernel && g_sampler;
    int mode = (fetch && rnd(c, 2)) || !g_img_add_kernel ? 1 : 0;
    if (s < 0 || bi < 0 || ii < 0 || (mode == 1 && !fetch))
        return;
    if (!resolve(c, s, bi) || !img_resolve(c, s, ii))
        return;
    if (!c->sh[s] || !c->buf[bi].h || !c->img[ii].h ||
        (!c->lost && !ordered(c, c->ssid[s], bi, NULL)))
        return;
    const mimage *m = &c->img[ii];
    uint32_t box[4];
    pick_box(c, m->w, m->ht, box);
    uint32_t n = box_len(box[2], box[0], m->w) * box_len(box[3], box[1], m->ht);
    if (n > c->buf[bi].n) {
        box[3] = 1; /* a row is at most 48 texels, a buffer 64 words or more */
        n = box_len(box[2], box[0], m->w);
    }
    uint32_t off = rnd(c, c->buf[bi].n - n + 1);
    ISSUE(c, OP_IMAGE_ADD, s, bi, off, ii, box[0], box[1], box[2], box[3], 1 + rnd(c, 1000),
          mode);
    if (!c->failed && c->sh[s] && rnd(c, 3) == 0)
        gen_pass(c, s);
}

static void gen_image(ctx *c)
{
    if (!g_img_ok)
        return;
    int live = -1, free_slot = -1;
    for (int i = 0; i < MAX_IMAGES; i++) {
        if (c->img[i].h && (live < 0 || rnd(c, 2)))
            live = i;
        else if (!c->img[i].h && free_slot < 0)
            free_slot = i;
    }
    uint32_t r = rnd(c, 20);
    if (r < 2 && live >= 0)
        ISSUE(c, OP_IMAGE_DESTROY, live); /* its work may be pending */
    else if (r < 4 && free_slot >= 0)
        gen_image_create(c, free_slot);
    else if (r < 8 && (live = pick_image(c)) >= 0)
        gen_image_host(c, live);
    else if (r < 11)
        gen_image_copy(c);
    else
        gen_image_add(c);
}

static void gen_event(ctx *c)
{
    int e = pick_event(c, true);
    if (e < 0)
        return;
    uint32_t r = rnd(c, 15);
    int s;
    if (r < 3 || !c->ev[e].recorded) {
        if ((s = pick_stream(c)) >= 0)
            ISSUE(c, OP_EV_RECORD, e, s);
    } else if (r < 5) {
        ISSUE(c, OP_EV_QUERY, e);
    } else if (r < 6) {
        ISSUE(c, OP_EV_SYNC, e);
    } else if (r < 9) {
        /* Most useful right after a record with launches before it. */
        ISSUE(c, OP_EV_CANCEL, e);
    } else if (r < 11) {
        if ((s = pick_stream(c)) >= 0)
            ISSUE(c, OP_WAIT_EVENT, s, e);
    } else if (r == 12) {
        ISSUE(c, OP_EV_WAIT, e, rnd(c, 3));
    } else if (r == 13) {
        int e2 = pick_event(c, false);
        if (e2 >= 0)
            ISSUE(c, OP_EV_ELAPSED, rnd(c, 2) ? e : e2, rnd(c, 2) ? e2 : e);
    } else if (r == 14) {
        if ((s = pick_stream(c)) >= 0)
            ISSUE(c, OP_STREAM_QUERY, s);
    } else {
        ISSUE(c, OP_EVENT_DESTROY, e);
    }
}

static void gen_record_cancel(ctx *c)
{
    /* launches, record, (more launches), cancel: the cancel can succeed. */
    int s = pick_stream(c), e = pick_event(c, false);
    if (s < 0 || e < 0)
        return;
    ISSUE(c, OP_EV_RECORD, e, s);
    if (rnd(c, 2))
        ISSUE(c, OP_STATS, 0);
    /* Sometimes a launch and another event after it, before the cancel:
     * the cancel records their batch again, and that event keeps its time
     * (its elapsed to itself reads 0 once it is complete). */
    int e2 = rnd(c, 2) ? pick_event(c, true) : -1;
    if (e2 == e)
        e2 = -1;
    if (e2 >= 0) {
        gen_launch_add(c, s);
        ISSUE(c, OP_EV_RECORD, e2, s);
    }
    ISSUE(c, OP_EV_CANCEL, e);
    if (rnd(c, 2))
        ISSUE(c, rnd(c, 2) ? OP_EV_QUERY : OP_EV_SYNC, e);
    if (e2 >= 0) {
        ISSUE(c, OP_SYNC, s);
        ISSUE(c, OP_EV_ELAPSED, e2, e2);
    }
}

/* Known bug gated_replay: in threaded runs, whether a stream of this
 * thread waited on a gate (gate: true) or replayed a graph (false) since
 * it was last synchronized, so that no held batch holds a replay. */
static bool gated_replay_risk(ctx *c, bool gate)
{
    if (g_nctx == 1 || !g_avoid_gated_replay)
        return false;
    for (int t = 0; t < c->next_sid; t++)
        if (gate ? c->sid[t].gated : c->sid[t].replayed)
            return true;
    return false;
}

static void gen_gate(ctx *c)
{
    int g = -1;
    for (int i = 0; i < MAX_GATES; i++)
        if (c->gate[i].h && (g < 0 || rnd(c, 2)))
            g = i;
    if (g < 0 || rnd(c, 8) == 0) {
        for (int i = 0; i < MAX_GATES; i++)
            if (!c->gate[i].h) {
                ISSUE(c, OP_GATE_CREATE, i);
                g = c->gate[i].h ? i : g;
                break;
            }
    }
    if (g < 0)
        return;
    if (rnd(c, 10) == 0) {
        if (!g_avoid_gate_destroy)
            ISSUE(c, OP_GATE_DESTROY, g, rnd(c, 2));
        return;
    }
    int s = pick_stream(c);
    if (s < 0 || gated_replay_risk(c, false))
        return;
    uint64_t v = c->gate[g].scheduled + (rnd(c, 3) == 0 ? 0 : 1 + rnd(c, 2));
    ISSUE(c, OP_WAIT_GATE, s, g, v, rnd(c, 2001));
}

/* A buffer of the program's own memory imported into slot bi (bad: a
 * refused import, no slot). */
static void gen_import(ctx *c, int bi, bool bad)
{
    uint32_t unit = (uint32_t)(g_import_align / 4);
    ISSUE(c, OP_BUFFER_IMPORT, bi, 1 + rnd(c, 2), unit * (1 + rnd(c, 2)), rnd64(c) >> 16,
          bad ? 1 + rnd(c, 3) : 0);
}

/* Traces: start one (now and then to a path that cannot be made, or while
 * one runs: refused), stop it (now and then when none runs: refused). */
static void gen_trace(ctx *c)
{
    if (g_avoid_trace_failed_launch && strncmp(g_cfg.fault, "cmd_dispatch", 12) == 0)
        return; /* known bug trace_failed_launch */
    if (g_avoid_trace_copy_queue && g_nctx > 1 && g_cfg.fake)
        return; /* known bug trace_copy_queue */
    pthread_mutex_lock(&g_trace_mu);
    bool tracing = g_tracing;
    pthread_mutex_unlock(&g_trace_mu);
    uint32_t r = rnd(c, 8);
    if (!tracing && r < 6)
        ISSUE(c, OP_TRACE_START, r == 0);
    else if (tracing && r < 5)
        ISSUE(c, OP_TRACE_STOP, 0);
    else if (tracing)
        ISSUE(c, OP_TRACE_START, 0);
    else
        ISSUE(c, OP_TRACE_STOP, 0);
}

static void gen_lifetime(ctx *c)
{
    uint32_t r = rnd(c, 10);
    if (r < 4) {
        int live = 0;
        for (int s = 0; s < MAX_STREAMS; s++)
            live += c->sh[s] != NULL;
        int s = rnd(c, MAX_STREAMS);
        if (c->sh[s] && live > 1) {
            mcap *cp = cap_find(c, c->sid[c->ssid[s]].cap);
            if (g_nctx > 1 && g_avoid_busy_destroy && cp && cp->origin == c->ssid[s])
                return; /* known bug busy_destroy: its capture ends in its time */
            /* Points that keep host access unordered are passed first:
             * no synchronize reaches them once the stream is gone. */
            if (stream_guards(c, c->ssid[s]) && !cp)
                ISSUE(c, OP_SYNC, s);
            if (!c->sh[s] || (stream_guards(c, c->ssid[s]) && !c->lost))
                return;
            if (rnd(c, 2)) {
                /* An event after its last work keeps it reachable for waits. */
                int e = pick_event(c, true);
                if (e >= 0)
                    ISSUE(c, OP_EV_RECORD, e, s);
            }
            ISSUE(c, OP_STREAM_DESTROY, s);
        } else if (!c->sh[s] && c->next_sid < MAX_SID) {
            ISSUE(c, OP_STREAM_CREATE, s, rnd(c, 3) ? 0 : 1 + rnd(c, 4), rnd(c, 4) ? 0 : 1);
        }
    } else if (r < 8) {
        int bi = rnd(c, MAX_BUFS);
        int live = 0;
        for (int b = 0; b < MAX_BUFS; b++)
            live += c->buf[b].h != NULL;
        /* One a graph uses lives on in the model as a zombie. */
        if (c->buf[bi].h && live > 2 && (!buf_referenced(c, bi) || zombie_room(c) >= 0) &&
            settle(c, bi)) {
            ISSUE(c, OP_BUFFER_DESTROY, bi);
        } else if (!c->buf[bi].h && rnd(c, 5) == 0) {
            gen_import(c, bi, false); /* the program's own memory */
        } else if (!c->buf[bi].h) {
            ISSUE(c, OP_BUFFER_CREATE, bi, rnd(c, 3), buf_elems(c));
            if (c->buf[bi].h)
                ISSUE(c, OP_WRITE, bi, 0, c->buf[bi].n, rnd64(c) >> 16);
        }
    } else if (g_nctx == 1) {
        int k = rnd(c, MAX_KERNELS);
        if (g_kern[k].h)
            ISSUE(c, OP_KERNEL_DESTROY, k);
    }
}

static void gen_bad(ctx *c)
{
    int s = pick_stream(c), bi = pick_buf(c);
    int k = pick_kernel(c, 0);
    if (s < 0 || bi < 0 || k < 0)
        return;
    int what = (int)rnd(c, BAD_COUNT);
    int g = -1;
    if (what == BAD_LAUNCH_UNALIGNED && g_align_elems == 1)
        what = BAD_LAUNCH_RANGE;
    if (what == BAD_MAP_DEVICE && c->buf[bi].dom != SALVO_DOMAIN_DEVICE)
        what = BAD_READ_RANGE;
    if (what == BAD_COPY_OVERLAP || what == BAD_COPY_RANGE || what == BAD_WRITE_RANGE) {
        if (c->buf[bi].n < 4)
            what = BAD_READ_RANGE;
    }
    if (what == BAD_GATE_LOWER) {
        /* Only once every raise of the gate ran: then it is above 0. */
        for (int i = 0; i < MAX_GATES; i++)
            if (c->gate[i].h && c->gate[i].scheduled > 0)
                g = i;
        if (g >= 0)
            raiser_drain(&c->gate[g]);
    }
    /* The graph calls on a graph's launch node where there is one (one
     * with bindings and push constants: a bare node takes none, rightly). */
    int gi = -1, node = 0;
    for (int i = 0; i < MAX_GRAPHS; i++)
        if (c->graph[i].h && (gi < 0 || rnd(c, 2)))
            gi = i;
    if (gi >= 0) {
        const nodelist *l = &c->graph[gi].nodes;
        node = -1;
        for (uint32_t i = 0; i < l->n; i++)
            if (l->v[i].kind != NK_COPY && l->v[i].kind != NK_BARE && (node < 0 || rnd(c, 2)))
                node = (int)i;
        if (node < 0) {
            gi = -1; /* no launch node: the NULL graph variants */
            node = 0;
        }
    }
    /* The image calls on one of the thread's images (or none needed). */
    int ii = -1;
    if (what >= BAD_IMAGE_ZERO && what <= BAD_IMAGE_NO_SAMPLER) {
        bool kernel = what == BAD_IMAGE_AS_BUFFER     ? g_img_add_kernel != NULL
                      : what == BAD_IMAGE_NO_SAMPLER ? g_img_fetch_kernel != NULL
                                                     : true;
        if (g_img_ok && kernel && what != BAD_IMAGE_ZERO)
            ii = pick_image(c);
        if (!g_img_ok || !kernel || (what != BAD_IMAGE_ZERO && ii < 0) || !c->sh[s] ||
            !c->buf[bi].h)
            what = BAD_READ_RANGE;
    }
    if (what == BAD_COPY_IMAGE && g_img_ok)
        ii = pick_image(c); /* none: refused all the same (src NULL) */
    ISSUE(c, OP_BAD, what, s, bi, k, -1, g, gi, node, ii);
}

/* ---- graphs ---- */

static int slot_of_sid(ctx *c, int sid)
{
    for (int s = 0; s < MAX_STREAMS; s++)
        if (c->sh[s] && c->ssid[s] == sid)
            return s;
    return -1;
}

/* A live stream in capture num (0: in none), or -1. */
static int stream_in(ctx *c, int num)
{
    int cand[MAX_STREAMS], n = 0;
    for (int s = 0; s < MAX_STREAMS; s++)
        if (c->sh[s] && c->sid[c->ssid[s]].cap == num)
            cand[n++] = s;
    return n ? cand[rnd(c, (uint32_t)n)] : -1;
}

static mcap *pick_cap(ctx *c)
{
    mcap *cp = NULL;
    for (int i = 0; i < MAX_CAPS; i++)
        if (c->cap[i].num && (!cp || rnd(c, 2)))
            cp = &c->cap[i];
    return cp;
}

static int pick_graph(ctx *c)
{
    int cand[MAX_GRAPHS], n = 0;
    for (int g = 0; g < MAX_GRAPHS; g++)
        if (c->graph[g].h)
            cand[n++] = g;
    return n ? cand[rnd(c, (uint32_t)n)] : -1;
}

/* A free graph slot, destroying a graph to make one if need be. */
static int graph_room(ctx *c, bool make)
{
    for (int g = 0; g < MAX_GRAPHS; g++)
        if (!c->graph[g].h)
            return g;
    if (!make)
        return -1;
    int g = (int)rnd(c, MAX_GRAPHS);
    ISSUE(c, OP_GRAPH_DESTROY, g);
    return c->graph[g].h ? -1 : g;
}

/* A launch or copy on stream s (a node when s captures). */
static void gen_node(ctx *c, int s)
{
    uint32_t r = rnd(c, 11);
    if (r < 5)
        gen_launch_add(c, s);
    else if (r < 8)
        gen_launch_copy(c, s);
    else if (r < 10)
        gen_copy(c, s);
    else if (g_bare_kernel && c->sh[s])
        ISSUE(c, OP_LAUNCH_BARE, s, 1 + rnd(c, 4)); /* a node with no parameters */
}

static void gen_end_capture(ctx *c, mcap *cp)
{
    int s = slot_of_sid(c, cp->origin), g = graph_room(c, true);
    if (s >= 0 && g >= 0)
        ISSUE(c, OP_END_CAPTURE, s, g);
}

/* A capture is over within its limit of calls: ended, or now and then
 * abandoned by destroying the stream that began it. */
static bool capture_due(ctx *c)
{
    for (int i = 0; i < MAX_CAPS; i++) {
        mcap *cp = &c->cap[i];
        if (!cp->num || c->ops - cp->began < cp->limit)
            continue;
        int s = slot_of_sid(c, cp->origin), live = 0;
        for (int x = 0; x < MAX_STREAMS; x++)
            live += c->sh[x] != NULL;
        bool busy = g_nctx > 1 && g_avoid_busy_destroy; /* known bug busy_destroy */
        if (s >= 0 && live > 1 && !busy && rnd(c, 10) == 0 &&
            (c->lost || !stream_guards(c, cp->origin)))
            ISSUE(c, OP_STREAM_DESTROY, s);
        else
            gen_end_capture(c, cp);
        return true;
    }
    return false;
}

static void gen_begin_capture(ctx *c)
{
    int active = 0;
    for (int i = 0; i < MAX_CAPS; i++)
        active += c->cap[i].num != 0;
    int s = stream_in(c, 0);
    if (active >= MAX_CAPS || s < 0)
        return;
    ISSUE(c, OP_BEGIN_CAPTURE, s);
    mcap *cp = c->sh[s] ? cap_find(c, c->sid[c->ssid[s]].cap) : NULL;
    if (!cp)
        return;
    cp->limit = 3 + rnd(c, 50);
    uint32_t nodes = rnd(c, 8) == 0 ? 0 : 1 + rnd(c, 5);
    for (uint32_t i = 0; i < nodes && !c->failed; i++)
        gen_node(c, s);
    if (rnd(c, 6) == 0 && cap_find(c, c->sid[c->ssid[s]].cap) == cp)
        gen_end_capture(c, cp); /* the whole graph at once */
}

/* Fork: a stream waits for an event recorded in the capture and joins it;
 * its launches are nodes too; maybe it joins back. */
static void gen_fork(ctx *c, mcap *cp)
{
    int num = cp->num, x = stream_in(c, num), y = stream_in(c, 0);
    if (x < 0 || y < 0)
        return;
    int e = pick_event(c, true);
    if (e < 0)
        return;
    ISSUE(c, OP_EV_RECORD, e, x);
    if (rnd(c, 4) == 0)
        ISSUE(c, rnd(c, 2) ? OP_EV_QUERY : OP_EV_SYNC, e); /* refused: a point of a graph */
    ISSUE(c, OP_WAIT_EVENT, y, e);
    if (!c->sh[y] || c->sid[c->ssid[y]].cap != num)
        return;
    uint32_t nodes = 1 + rnd(c, 3);
    for (uint32_t i = 0; i < nodes && !c->failed; i++)
        gen_node(c, rnd(c, 3) ? y : x);
    if (rnd(c, 4) == 0) {
        int g = graph_room(c, false);
        if (g >= 0)
            ISSUE(c, OP_END_CAPTURE, y, g); /* refused: y only joined */
    }
    if (rnd(c, 2)) {
        int e2 = pick_event(c, true), o = slot_of_sid(c, cp->origin);
        if (e2 >= 0 && o >= 0 && cap_find(c, num) == cp) {
            ISSUE(c, OP_EV_RECORD, e2, y);
            ISSUE(c, OP_WAIT_EVENT, o, e2); /* the join back: in the capture already */
        }
    }
}

/* Calls a capture refuses (SALVO_ERROR_INVALID_STATE, nothing changes). */
static void gen_refused(ctx *c, mcap *cp)
{
    int x = stream_in(c, cp->num);
    if (x < 0)
        return;
    switch (rnd(c, 7)) {
    case 0:
        ISSUE(c, OP_SYNC, x);
        break;
    case 1: {
        int bi = -1;
        for (int b = 0; b < MAX_BUFS; b++)
            if (c->buf[b].h && list_uses(&cp->nodes, b, true))
                bi = b;
        if (bi >= 0)
            ISSUE(c, OP_READ, bi, 0, c->buf[bi].n);
        else
            ISSUE(c, OP_FLUSH, x); /* SALVO_OK, nothing to submit */
        break;
    }
    case 2: {
        int g = -1;
        for (int i = 0; i < MAX_GATES; i++)
            if (c->gate[i].h)
                g = i;
        if (g >= 0)
            ISSUE(c, OP_WAIT_GATE, x, g, c->gate[g].scheduled + 1, rnd(c, 2001));
        break;
    }
    case 3: {
        int g = pick_graph(c);
        if (g >= 0)
            ISSUE(c, OP_GRAPH_LAUNCH, g, x);
        break;
    }
    case 4:
        ISSUE(c, OP_BEGIN_CAPTURE, x);
        break;
    case 5: {
        int g = graph_room(c, false), y = stream_in(c, 0);
        if (g >= 0 && y >= 0)
            ISSUE(c, OP_END_CAPTURE, y, g); /* not capturing */
        break;
    }
    default: {
        int e = pick_event(c, false);
        if (e < 0)
            break;
        ISSUE(c, OP_EV_RECORD, e, x);
        uint32_t r = rnd(c, 3);
        ISSUE(c, r == 0 ? OP_EV_QUERY : r == 1 ? OP_EV_SYNC : OP_EV_CANCEL, e);
        break;
    }
    }
}

/* Replay graph g on stream s (-1: pick one), ordered after every other
 * stream's use of every buffer the graph touches. */
static void gen_replay(ctx *c, int g, int s)
{
    if (s < 0)
        s = pick_stream(c);
    if (s < 0 || !c->graph[g].h)
        return;
    if (c->sid[c->ssid[s]].cap) {
        if (rnd(c, 4) == 0) {
            ISSUE(c, OP_GRAPH_LAUNCH, g, s); /* refused */
            return;
        }
        if ((s = stream_in(c, 0)) < 0)
            return;
    }
    if (gated_replay_risk(c, true))
        return;
    const nodelist *l = &c->graph[g].nodes;
    if (l->n == 0 && g_avoid_empty_replay)
        return;
    for (uint32_t i = 0; i < l->n; i++)
        for (int j = 0; j < node_nbufs(&l->v[i]); j++)
            if (!resolve(c, s, l->v[i].b[j]))
                return;
    if (c->sh[s] && c->graph[g].h)
        ISSUE(c, OP_GRAPH_LAUNCH, g, s);
}

/* A node of graph g to update: a launch node, or now and then one that
 * refuses updates (a copy, or past the end). -1: none. */
static int pick_update_node(ctx *c, int g, bool *bad)
{
    const nodelist *l = &c->graph[g].nodes;
    int node = -1;
    for (uint32_t i = 0; i < l->n; i++)
        if (l->v[i].kind != NK_COPY && (node < 0 || rnd(c, 3) == 0))
            node = (int)i;
    *bad = node < 0 || rnd(c, 12) == 0;
    if (!*bad)
        return node;
    int copy = -1;
    for (uint32_t i = 0; i < l->n; i++)
        if (l->v[i].kind == NK_COPY && (copy < 0 || rnd(c, 2)))
            copy = (int)i;
    return copy >= 0 && rnd(c, 2) ? copy : (int)l->n + (int)rnd(c, 2);
}

static void gen_set_push(ctx *c, int g)
{
    bool bad;
    int node = pick_update_node(c, g, &bad);
    const nodelist *l = &c->graph[g].nodes;
    if (bad || l->v[node].kind == NK_COPY) {
        ISSUE(c, OP_GRAPH_SET_PUSH, g, node, 1, 1);
        return;
    }
    const mnode *nd = &l->v[node];
    uint32_t n = nd->n;
    if (rnd(c, 4) == 0) {
        uint32_t most = nd->groups * nd->local;
        for (int j = 0; j < node_nbufs(nd); j++) {
            uint32_t len = range_len(c, nd->b[j], nd->off[j], nd->sz[j]);
            most = len < most ? len : most;
        }
        n = 1 + rnd(c, most);
    }
    ISSUE(c, OP_GRAPH_SET_PUSH, g, node, n,
          nd->kind != NK_LCOPY ? 1 + rnd(c, 1000) : rnd(c, 3) ? rnd(c, 100) : 0);
}

/* A range of user buffer bi (aligned) that holds n elements. */
static bool pick_fit(ctx *c, int bi, uint32_t n, uint32_t *off, uint32_t *sz)
{
    uint32_t bn = c->buf[bi].n;
    if (bn < n)
        return false;
    *off = rnd(c, (bn - n) / g_align_elems + 1) * g_align_elems;
    uint32_t room = bn - *off;
    *sz = rnd(c, 2) ? 0 : n + rnd(c, room - n + 1);
    return true;
}

static void gen_set_bindings(ctx *c, int g)
{
    bool bad;
    int node = pick_update_node(c, g, &bad);
    const nodelist *l = &c->graph[g].nodes;
    int b0 = pick_buf(c);
    if (b0 < 0)
        return;
    if (bad || l->v[node].kind == NK_COPY) {
        ISSUE(c, OP_GRAPH_SET_BINDINGS, g, node, b0, 0, 0, -1, 0, 0);
        return;
    }
    const mnode *nd = &l->v[node];
    uint32_t off[2] = {0, 0}, sz[2] = {0, 0};
    int b[2] = {b0, -1};
    if (!pick_fit(c, b[0], nd->n, &off[0], &sz[0]))
        return;
    if (nd->kind == NK_LCOPY || nd->kind == NK_ARR) {
        b[1] = pick_buf(c);
        if (b[1] < 0 || b[1] == b[0] || !pick_fit(c, b[1], nd->n, &off[1], &sz[1]))
            return;
    }
    if (rnd(c, 12) == 0) {
        /* Past the end of the buffer: refused, nothing changes. */
        uint32_t bn = c->buf[b[0]].n;
        off[0] = (bn + g_align_elems - 1) / g_align_elems * g_align_elems;
        sz[0] = 0;
    }
    ISSUE(c, OP_GRAPH_SET_BINDINGS, g, node, b[0], off[0], sz[0], b[1], off[1], sz[1]);
}

/* A buffer (and sometimes a kernel) a graph uses destroyed while the graph
 * lives, then a replay: the graph keeps them. */
static void gen_graph_keeps(ctx *c, int g)
{
    const nodelist *l = &c->graph[g].nodes;
    int live = 0, bi = -1;
    for (int b = 0; b < MAX_BUFS; b++)
        live += c->buf[b].h != NULL;
    for (uint32_t i = 0; i < l->n; i++)
        for (int j = 0; j < node_nbufs(&l->v[i]); j++)
            if (l->v[i].b[j] < MAX_BUFS && (bi < 0 || rnd(c, 2)))
                bi = l->v[i].b[j];
    if (bi >= 0 && live > 2 && zombie_room(c) >= 0 && settle(c, bi) && c->buf[bi].h)
        ISSUE(c, OP_BUFFER_DESTROY, bi);
    if (g_nctx == 1 && rnd(c, 3) == 0) {
        int k = (int)rnd(c, MAX_KERNELS);
        if (g_kern[k].h)
            ISSUE(c, OP_KERNEL_DESTROY, k);
    }
    gen_replay(c, g, -1);
}

static void gen_graph(ctx *c)
{
    bool updates = !(g_avoid_pool_reset && strncmp(g_cfg.fault, "descpool_reset", 14) == 0);
    uint32_t r = rnd(c, 100);
    mcap *cp = pick_cap(c);
    int g = pick_graph(c);
    if (r < 16 || (!cp && g < 0))
        gen_begin_capture(c);
    else if (r < 26 && cp)
        gen_fork(c, cp);
    else if (r < 34 && cp)
        gen_refused(c, cp);
    else if (r < 42 && cp)
        gen_end_capture(c, cp);
    else if (g < 0)
        gen_begin_capture(c);
    else if (r < 72)
        gen_replay(c, g, -1);
    else if (r < 81 && updates)
        gen_set_push(c, g);
    else if (r < 88 && updates)
        gen_set_bindings(c, g);
    else if (r < 91 && updates) {
        /* From another graph (most often of another shape), or itself. */
        int from = pick_graph(c);
        ISSUE(c, OP_GRAPH_UPDATE, g, from >= 0 ? from : g);
    } else if (r < 95)
        ISSUE(c, OP_GRAPH_DESTROY, g);
    else
        gen_graph_keeps(c, g);
}

static void gen_step(ctx *c)
{
    if (capture_due(c))
        return;
    uint32_t r = rnd(c, 141);
    if (r == 137) {
        /* Into a free slot, or refused (a bad pointer, domain or size). */
        int bi = -1;
        for (int b = 0; b < MAX_BUFS; b++)
            if (!c->buf[b].h && bi < 0)
                bi = b;
        gen_import(c, bi, bi < 0 || rnd(c, 3) == 0);
        return;
    }
    if (r == 138) {
        gen_trace(c);
        return;
    }
    if (r == 139) {
        if (rnd(c, 3) == 0)
            ISSUE(c, OP_DEFAULT_ALLOCATOR, rnd(c, 5));
        else
            ISSUE(c, OP_STATS, 0);
        return;
    }
    if (r == 140) {
        /* A device on the program's own VkDevice now and then (it builds
         * a pipeline); else the refused calls. */
        if (g_have_vk && rnd(c, 4) == 0)
            ISSUE(c, OP_VK_DEVICE, 0, rnd64(c) >> 16);
        else
            ISSUE(c, OP_VK_DEVICE, 1 + rnd(c, g_have_vk ? 5 : 4), 0);
        return;
    }
    if (r >= 132) {
        gen_image(c);
        return;
    }
    if (r >= 129) {
        gen_vk_record(c);
        return;
    }
    if (r >= 126) {
        gen_host_call(c);
        return;
    }
    if (r >= 123) {
        gen_sread(c);
        return;
    }
    if (r >= 120) {
        gen_swrite(c);
        return;
    }
    if (r >= 116) {
        if (rnd(c, 2))
            gen_fill(c);
        else
            gen_fill_pattern(c);
        return;
    }
    if (r >= 112) {
        gen_launch_arr(c);
        return;
    }
    if (r >= 108) {
        gen_launch_addr(c);
        return;
    }
    if (r >= 100) {
        gen_graph(c);
        return;
    }
    if (r < 3)
        gen_launch_repeat(c);
    else if (r < 19)
        gen_launch_add(c, -1);
    else if (r < 22)
        gen_launch_indirect(c);
    else if (r < 30)
        gen_launch_copy(c, -1);
    else if (r < 38)
        gen_copy(c, -1);
    else if (r < 52)
        gen_host(c);
    else if (r < 57) {
        int s = pick_stream(c);
        if (s >= 0)
            ISSUE(c, OP_FLUSH, s);
    } else if (r < 62) {
        int s = pick_stream(c);
        if (s >= 0)
            ISSUE(c, OP_SYNC, s);
    } else if (r < 64) {
        if (g_nctx == 1)
            ISSUE(c, OP_DSYNC, 0);
    } else if (r < 73)
        gen_event(c);
    else if (r < 77)
        gen_record_cancel(c);
    else if (r < 82)
        gen_gate(c);
    else if (r < 89)
        gen_lifetime(c);
    else if (r < 92)
        ISSUE(c, OP_STATS, 0);
    else if (r < 93)
        /* Any format, known or not (UNDEFINED, one past the last, -1). */
        ISSUE(c, OP_FORMAT_QUERY, (int64_t)rnd(c, SALVO_FORMAT_COUNT + 2) - 1);
    else
        gen_bad(c);
}

/* ------------------------------------------------------------------ */
/* A seed                                                              */
/* ------------------------------------------------------------------ */

static void ctx_init(ctx *c, int tid, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    c->tid = tid;
    c->rng = seed * 0x2545f4914f6cdd1dull + (uint64_t)tid * 0x9e3779b97f4a7c15ull + 12345;
    for (int s = 0; s < MAX_STREAMS; s++)
        c->ssid[s] = -1;
    if (pthread_mutex_init(&c->pend_mu, NULL) != 0)
        abort();
}

static void ctx_free(ctx *c)
{
    for (int b = 0; b < NBUF; b++)
        buf_free_model(&c->buf[b]);
    for (int s = 0; s < MAX_SID; s++)
        free(c->sid[s].win);
    for (int g = 0; g < MAX_GRAPHS; g++)
        free(c->graph[g].nodes.v);
    for (int i = 0; i < MAX_CAPS; i++)
        free(c->cap[i].nodes.v);
    for (size_t i = 0; i < c->npend; i++)
        pend_free(c->pend[i]);
    free(c->pend);
    c->pend = NULL;
    c->npend = 0;
    for (size_t i = 0; i < c->nimports; i++)
        free(c->imports[i]);
    free(c->imports);
    c->imports = NULL;
    c->nimports = c->capimports = 0;
    pthread_mutex_destroy(&c->pend_mu);
    free(c->trace);
    c->trace = NULL;
}

static void setup_objects(ctx *c)
{
    int streams = 2 + (int)rnd(c, 3), bufs = 3 + (int)rnd(c, 4);
    for (int s = 0; s < streams; s++)
        ISSUE(c, OP_STREAM_CREATE, s, rnd(c, 3) ? 0 : 1 + rnd(c, 4), rnd(c, 4) ? 0 : 1);
    for (int b = 0; b < bufs; b++) {
        ISSUE(c, OP_BUFFER_CREATE, b, rnd(c, 3), buf_elems(c));
        if (c->buf[b].h)
            ISSUE(c, OP_WRITE, b, 0, c->buf[b].n, rnd64(c) >> 16);
    }
    ISSUE(c, OP_EVENT_CREATE, 0);
}

/* Synchronize, read everything back, destroy everything. */
static void finish(ctx *c)
{
    for (int i = 0; i < MAX_CAPS; i++)
        if (c->cap[i].num)
            gen_end_capture(c, &c->cap[i]);
    bool graphs_late = rnd(c, 2); /* after the buffers they hold */
    /* Images go now and then with their work still pending. */
    for (int i = 0; i < MAX_IMAGES; i++)
        if (c->img[i].h && rnd(c, 2))
            ISSUE(c, OP_IMAGE_DESTROY, i);
    for (int s = 0; s < MAX_STREAMS; s++)
        for (int i = 0; c->sh[s] && i < 20; i++) {
            ISSUE(c, OP_SYNC, s);
            sinfo *si = &c->sid[c->ssid[s]];
            if (c->failed || si->completed == si->seq || c->lost)
                break;
        }
    if (g_nctx == 1)
        ISSUE(c, OP_DSYNC, 0);
    for (int b = 0; b < MAX_BUFS; b++)
        if (c->buf[b].h && host_blocker(c, b) < 0)
            ISSUE(c, OP_READ, b, 0, c->buf[b].n);
    for (int g = 0; g < MAX_GRAPHS; g++)
        if (c->graph[g].h && !graphs_late)
            ISSUE(c, OP_GRAPH_DESTROY, g);
    for (int e = 0; e < MAX_EVENTS; e++)
        if (c->ev[e].h)
            ISSUE(c, OP_EVENT_DESTROY, e);
    for (int g = 0; g < MAX_GATES; g++)
        if (c->gate[g].h && !g_avoid_gate_destroy)
            ISSUE(c, OP_GATE_DESTROY, g, 0);
    for (int s = 0; s < MAX_STREAMS; s++)
        if (c->sh[s])
            ISSUE(c, OP_STREAM_DESTROY, s);
    /* A trace still running is stopped here, or by the device's destroy. */
    pthread_mutex_lock(&g_trace_mu);
    bool tracing = g_tracing;
    pthread_mutex_unlock(&g_trace_mu);
    if (tracing && rnd(c, 2))
        ISSUE(c, OP_TRACE_STOP, 0);
    for (int b = 0; b < MAX_BUFS; b++)
        if (c->buf[b].h)
            ISSUE(c, OP_BUFFER_DESTROY, b);
    for (int i = 0; i < MAX_IMAGES; i++)
        if (c->img[i].h) {
            gen_image_host(c, i);
            ISSUE(c, OP_IMAGE_DESTROY, i);
        }
    for (int g = 0; g < MAX_GRAPHS; g++)
        if (c->graph[g].h)
            ISSUE(c, OP_GRAPH_DESTROY, g);
    for (int g = 0; g < MAX_GATES; g++)
        if (c->gate[g].h)
            ISSUE(c, OP_GATE_DESTROY, g, 0);
}

/* Destroy whatever a failed run left, without checking anything. */
static void teardown(ctx *c)
{
    pend_revoke(c, -1);
    for (int i = 0; i < MAX_IMAGES; i++)
        if (c->img[i].h) {
            salvo_image_destroy(c->img[i].h);
            c->img[i].h = NULL;
        }
    for (int g = 0; g < MAX_GRAPHS; g++)
        if (c->graph[g].h) {
            salvo_graph_destroy(c->graph[g].h);
            c->graph[g].h = NULL;
        }
    for (int g = 0; g < MAX_GATES; g++)
        if (c->gate[g].h) {
            raiser_drain(&c->gate[g]);
            salvo_gate_destroy(c->gate[g].h);
            c->gate[g].h = NULL;
        }
    for (int e = 0; e < MAX_EVENTS; e++)
        if (c->ev[e].h) {
            salvo_event_destroy(c->ev[e].h);
            c->ev[e].h = NULL;
        }
    for (int s = 0; s < MAX_STREAMS; s++)
        if (c->sh[s]) {
            salvo_stream_destroy(c->sh[s]);
            c->sh[s] = NULL;
        }
    for (int b = 0; b < MAX_BUFS; b++)
        if (c->buf[b].h) {
            salvo_buffer_destroy(c->buf[b].h);
            c->buf[b].h = NULL;
        }
}

static void run_thread_ops(ctx *c, int ops)
{
    setup_objects(c);
    while (!c->failed && c->ops < (uint64_t)ops && c->after_lost < LOST_TAIL)
        gen_step(c);
    if (!c->failed)
        finish(c);
}

static void *thread_main(void *arg)
{
    ctx *c = arg;
    run_thread_ops(c, g_cfg.ops);
    return NULL;
}

static const struct {
    const char *op;
    unsigned max_n;
    const char *results[4];
} fault_table[] = {
    {"submit", 12, {"device_lost", "oom_device", "oom_host", "lost"}},
    {"cmd_dispatch", 120, {"oom_device", "oom_host", "device_lost", NULL}},
    {"fence_wait", 20, {"timeout", "device_lost", NULL, NULL}},
    {"cmd_begin", 10, {"oom_host", "oom_device", NULL, NULL}},
    {"cmd_end", 10, {"oom_host", "device_lost", NULL, NULL}},
    {"timeline_signal", 3, {"device_lost", NULL, NULL, NULL}},
    {"descpool_reset", 3, {"device_lost", NULL, NULL, NULL}},
    {"buffer_create", 14, {"oom_device", "oom_host", NULL, NULL}},
    /* A fence status is signalled, not ready or lost: never a timeout. */
    {"fence_status", 20, {"device_lost", "not_ready", NULL, NULL}},
    {"cmd_reset", 8, {"oom_host", NULL, NULL, NULL}},
    {"queue_wait_idle", 3, {"device_lost", NULL, NULL, NULL}},
    /* A graph's command buffers: made and recorded at the end of a
     * capture, recorded again by the replay after an update. */
    {"cmd_create_reusable", 6, {"oom_host", "oom_device", NULL, NULL}},
    {"cmd_begin_reusable", 8, {"oom_host", "device_lost", NULL, NULL}},
    /* A replay's own batch, recorded ahead (again after an update): a
     * failure leaves the replay to be recorded into its batch. */
    {"cmd_begin_resubmit", 6, {"oom_host", "oom_device", "device_lost", NULL}},
};

static void config_from_seed(uint64_t seed, config *cfg)
{
    ctx tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.rng = seed ^ 0x5a5a5a5a12345678ull;
    ctx *c = &tmp;
    static const uint32_t batches[] = {1, 2, 3, 16, 128, 0, 16, 4};
    cfg->batch = batches[rnd(c, 8)];
    cfg->staging = rnd(c, 4) == 0;
    static const double timeouts[] = {0.0005, 0.002, 0.02};
    cfg->timeout_s = rnd(c, 7) == 0 ? timeouts[rnd(c, 3)] : 0;
    cfg->fault[0] = 0;
    if (rnd(c, 3) == 0) {
        unsigned i = rnd(c, sizeof fault_table / sizeof fault_table[0]);
        unsigned nres = 0;
        while (nres < 4 && fault_table[i].results[nres])
            nres++;
        const char *res = fault_table[i].results[rnd(c, nres)];
        bool always = strcmp(res, "lost") != 0 && rnd(c, 8) == 0;
        snprintf(cfg->fault, sizeof cfg->fault, "%s:%u:%s%s", fault_table[i].op,
                 1 + rnd(c, fault_table[i].max_n), res, always ? ":always" : "");
    }
    /* Drawn apart, so that the choices above stay what they were. */
    uint64_t h = seed * 0xd1342543de82ef95ull + 0x2545f4914f6cdd1dull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    cfg->defalloc = h % 5 == 0;
    cfg->fake = g_fake_queues;
    cfg->manual = g_fake_queues && (h >> 8) % 2;
    cfg->unmappable = g_fake_queues && (h >> 16) % 4 == 0;
}

static void config_line(const config *cfg, char *line, size_t size)
{
    int n = snprintf(line, size,
                     "config batch=%u staging=%d timeout=%g fault=%s sync=%d threads=%d "
                     "defalloc=%d",
                     cfg->batch, cfg->staging, cfg->timeout_s, cfg->fault[0] ? cfg->fault : "-",
                     cfg->sync_validation, cfg->threads, cfg->defalloc);
    if (cfg->fake && n > 0 && (size_t)n < size)
        snprintf(line + n, size - (size_t)n, " fake=%d manual=%d unmappable=%d", cfg->fake,
                 cfg->manual, cfg->unmappable);
}

static bool config_parse(const char *line, config *cfg)
{
    char fault[96];
    int staging, sync, threads;
    if (sscanf(line, "config batch=%u staging=%d timeout=%lf fault=%95s sync=%d threads=%d",
               &cfg->batch, &staging, &cfg->timeout_s, fault, &sync, &threads) != 6)
        return false;
    cfg->staging = staging;
    cfg->sync_validation = sync || cfg->sync_validation;
    cfg->threads = threads;
    /* Later fields, each optional (older traces lack them). */
    const char *f;
    cfg->defalloc = (f = strstr(line, " defalloc=")) && atoi(f + 10);
    cfg->fake = (f = strstr(line, " fake=")) ? atoi(f + 6) : 0;
    cfg->manual = (f = strstr(line, " manual=")) && atoi(f + 8);
    cfg->unmappable = (f = strstr(line, " unmappable=")) && atoi(f + 12);
    if (cfg->fake < 0 || cfg->fake > ACCEL_MAX_QUEUES)
        return false;
    snprintf(cfg->fault, sizeof cfg->fault, "%s", strcmp(fault, "-") ? fault : "");
    return true;
}

static void print_failure(const char *why_extra)
{
    char cl[256];
    config_line(&g_cfg, cl, sizeof cl);
    FILE *tf = g_trace_path[0] ? fopen(g_trace_path, "w") : NULL;
    fprintf(stderr, "\n===== FAILURE: seed %" PRIu64 "\n%s\n", g_seed, cl);
    if (why_extra)
        fprintf(stderr, "%s\n", why_extra);
    for (int t = 0; t < g_nctx; t++) {
        ctx *c = g_ctx[t];
        if (c->failed)
            fprintf(stderr, "thread %d: %s\n", t, c->why);
    }
    pthread_mutex_lock(&g_log_mu);
    for (unsigned i = 0; i < 8; i++) {
        const char *m = g_log_ring[(g_log_next + i) % 8];
        if (m[0])
            fprintf(stderr, "  log: %s\n", m);
    }
    pthread_mutex_unlock(&g_log_mu);
    if (tf)
        fprintf(tf, "# seed %" PRIu64 "\n", g_seed);
    for (int t = 0; t < g_nctx; t++) {
        ctx *c = g_ctx[t];
        fprintf(stderr, "--- trace (thread %d, %" PRIu64 " calls)\n%s%s", t, c->ops,
                c->trace ? c->trace : "", c->failed ? "^^^ failed here\n" : "");
        if (tf && c->trace) {
            if (g_nctx > 1)
                fprintf(tf, "# thread %d\n", t);
            fputs(c->trace, tf);
        }
    }
    if (tf)
        fclose(tf);
    fprintf(stderr, "===== replay: model_random --replay FILE (trace written with --trace FILE)\n");
}

/* A hang (SIGALRM) or a crash: print what a failure prints, from what is
 * in memory, with write() only where it matters, then die. */
static void fatal_signal(int sig)
{
    const char *what = sig == SIGALRM ? "\n===== WATCHDOG: the seed ran too long (a hang)\n"
                                      : "\n===== CRASH: fatal signal\n";
    if (write(2, what, strlen(what)) < 0)
        _exit(3);
    char cl[256];
    config_line(&g_cfg, cl, sizeof cl);
    char head[400];
    int n = snprintf(head, sizeof head, "seed %" PRIu64 " signal %d\n%s\n", g_seed, sig, cl);
    if (write(2, head, (size_t)n) < 0)
        _exit(3);
    for (int t = 0; t < g_nctx; t++) {
        ctx *c = g_ctx[t];
        n = snprintf(head, sizeof head, "--- trace (thread %d)\n", t);
        if (write(2, head, (size_t)n) < 0 || (c->trace && write(2, c->trace, c->tlen) < 0))
            _exit(3);
    }
    if (g_trace_path[0]) {
        FILE *tf = fopen(g_trace_path, "w");
        if (tf) {
            fprintf(tf, "# seed %" PRIu64 "\n", g_seed);
            if (g_nctx == 1 && g_ctx[0]->trace)
                fputs(g_ctx[0]->trace, tf);
            fclose(tf);
        }
    }
    signal(SIGABRT, SIG_DFL);
    abort();
}

static unsigned g_watchdog_s = 120;

/* The config's fault as a script of the fake's: "op:n:result[:always]"
 * (result "lost": a device loss at call n, sticky on the fake). */
static bool fake_script_fault(const char *spec)
{
    char op[48], res[32];
    unsigned n = 0;
    if (sscanf(spec, "%47[^:]:%u:%31[^:]", op, &n, res) != 3 || n == 0)
        return false;
    bool always = strstr(spec, ":always") != NULL;
    accel_result r = ACCEL_ERROR_DEVICE_LOST;
    if (strcmp(res, "lost") == 0)
        always = false;
    else if (!accel_result_parse(res, &r) || r == ACCEL_SUCCESS)
        return false;
    if (always)
        fake_set_result_from(g_fake, op, (int)n, r);
    else
        fake_set_result(g_fake, op, (int)n, r);
    snprintf(g_fault_op, sizeof g_fault_op, "%s", op);
    g_fault_n = n;
    return true;
}

static bool open_device(ctx *c)
{
    salvo_device_desc d = {
        .batch_size = g_cfg.batch,
        .fence_timeout_s = g_cfg.timeout_s,
        .log = log_cb,
        /* defalloc: the allocator comes from the default, set just before */
        .allocator = g_cfg.defalloc ? NULL : &g_alloc,
        .flags = SALVO_DEVICE_VALIDATION | (g_cfg.staging ? SALVO_DEVICE_FORCE_STAGING : 0) |
                 (g_cfg.sync_validation ? SALVO_DEVICE_SYNC_VALIDATION : 0),
        /* On the fake, the fault is the fake's script (below). */
        .fault = g_cfg.fault[0] && !g_cfg.fake ? g_cfg.fault : NULL,
    };
    if ((g_seed >> 4) & 1)
        d.flags |= SALVO_DEVICE_BLOCKING_WAIT;
    /* A quarter of the seeds bind through descriptor pools, as on a device
     * without push descriptors: sets taken from the batches' and the
     * graphs' pools, and the pools reset when their batch retires. */
    if (((g_seed >> 5) & 3) == 0)
        d.flags |= SALVO_DEVICE_POOL_DESCRIPTORS;
    g_may_timeout = g_cfg.timeout_s > 0 || strstr(g_cfg.fault, "timeout");
    g_errors_ok = g_cfg.fault[0] && !strstr(g_cfg.fault, "timeout");
    g_lost_ok = strstr(g_cfg.fault, "lost") != NULL;
    atomic_store(&g_injected, 0);
    atomic_store(&g_validation, 0);
    atomic_store(&g_layer_timeouts, 0);
    memset(g_kern, 0, sizeof g_kern);
    g_fault_op[0] = 0;
    g_fault_n = 0;
    atomic_store(&g_fake_unknown, 0);
    atomic_store(&g_fake_fill_refused, 0);
    g_trace_unsupported = false;
    if (g_cfg.defalloc) {
        pthread_mutex_lock(&g_def_mu);
        if (salvo_default_allocator_set(&g_alloc) != SALVO_OK)
            fail(c, "default_allocator_set(the counting allocator) failed");
        g_def_now = 2;
        pthread_mutex_unlock(&g_def_mu);
    }
    salvo_status st;
    if (g_cfg.fake) {
        g_fake = fake_create();
        if (!g_fake)
            abort();
        g_fake->queue_count = (uint32_t)g_cfg.fake;
        g_fake->transfer_queue = true;
        g_fake->device_not_mappable = g_cfg.unmappable;
        /* Half the seeds push descriptors (as most drivers do): graph
         * nodes updated then are recorded into each replay's batch. */
        g_fake->push_descriptors = (g_seed >> 1) & 1;
        /* A quarter of the seeds open it as a GPU: waits poll (to their
         * end, or for the spin time and then block, where the seed asks
         * for SALVO_DEVICE_BLOCKING_WAIT below). */
        if (((g_seed >> 2) & 3) == 0)
            g_fake->device_types[0] = SALVO_DEVICE_TYPE_DISCRETE;
        g_fake->complete = g_cfg.manual ? FAKE_COMPLETE_MANUAL : FAKE_COMPLETE_AUTO;
        g_fake->dispatch_hook = fake_kernel;
        g_fake->blocking_waits = true; /* the raiser and the device thread make progress */
        if (g_cfg.fault[0] && !fake_script_fault(g_cfg.fault))
            fail(c, "fault '%s': not a script the fake takes", g_cfg.fault);
        st = model_fake_device(&d, g_fake, &g_dev);
        if (st == SALVO_OK && g_cfg.manual) {
            atomic_store(&D.stop, false);
            D.rng = g_seed * 0x9e3779b97f4a7c15ull + 77;
            if (pthread_create(&D.thread, NULL, device_main, g_fake) != 0)
                abort();
            D.running = true;
        }
    } else {
        st = salvo_device_create(&d, &g_dev);
    }
    if (st != SALVO_OK) {
        g_dev = NULL;
        if (g_fake) {
            fake_free(g_fake);
            g_fake = NULL;
        }
        pthread_mutex_lock(&g_def_mu);
        salvo_default_allocator_set(NULL);
        g_def_now = 0;
        pthread_mutex_unlock(&g_def_mu);
        return false;
    }
    g_vk_fill = NULL;
    salvo_vk_handles vk;
    g_have_vk = false;
    st = salvo_device_vk_handles(g_dev, &vk);
    if (g_fake && st != SALVO_ERROR_UNSUPPORTED)
        fail(c, "device_vk_handles on the fake returned %s, expected SALVO_ERROR_UNSUPPORTED",
             salvo_status_string(st));
    if (st == SALVO_OK && vk.get_instance_proc_addr) {
        g_vk = vk;
        g_have_vk = true;
        PFN_vkGetDeviceProcAddr gdpa = (PFN_vkGetDeviceProcAddr)vk.get_instance_proc_addr(
            vk.instance, "vkGetDeviceProcAddr");
        if (gdpa)
            g_vk_fill = (PFN_vkCmdFillBuffer)gdpa(vk.device, "vkCmdFillBuffer");
    }
    salvo_device_info info;
    g_addr_kernel = NULL;
    salvo_kernel_desc ad = {.spirv = arr_add_spv, .spirv_size = sizeof arr_add_spv,
                            .name = "arr_add"};
    if (salvo_kernel_create(g_dev, &ad, &g_arr_kernel) != SALVO_OK)
        g_arr_kernel = NULL;
    salvo_kernel_desc bd = {.spirv = empty_spv, .spirv_size = sizeof empty_spv, .name = "empty"};
    if (salvo_kernel_create(g_dev, &bd, &g_bare_kernel) != SALVO_OK)
        g_bare_kernel = NULL;
    g_host_import = false;
    g_import_align = 4096;
    if (salvo_device_info_get(g_dev, &info) == SALVO_OK) {
        g_host_import = info.host_import;
        if (info.host_import && info.host_import_alignment >= 4)
            g_import_align = info.host_import_alignment;
        /* Streams on several queues: the fake's compute queues, its copy
         * queue, and from three queues on the last for high priority. */
        const char *tq = getenv("SALVO_TRANSFER_QUEUE");
        if (g_fake && (info.queue_count != (uint32_t)g_cfg.fake ||
                       info.transfer_queue != !(tq && strcmp(tq, "0") == 0) ||
                       info.high_priority_queue != (g_cfg.fake >= 3)))
            fail(c, "device_info on a fake of %d queues and a copy queue: %u queues, transfer "
                    "queue %d, high priority queue %d",
                 g_cfg.fake, info.queue_count, info.transfer_queue, info.high_priority_queue);
        uint64_t al = info.min_storage_buffer_offset_alignment;
        g_align_elems = al > 4 ? (uint32_t)(al / 4) : 1;
        if (info.features.buffer_device_address) {
            salvo_kernel_desc kd = {.spirv = addr_add_spv, .spirv_size = sizeof addr_add_spv,
                                    .name = "addr_add"};
            if (salvo_kernel_create(g_dev, &kd, &g_addr_kernel) != SALVO_OK)
                g_addr_kernel = NULL;
        }
    }
    /* Images where the device offers R32_UINT for storage and sampling;
     * each object the image ops use stays NULL where it was refused. */
    for (int f = 0; f < SALVO_FORMAT_COUNT; f++)
        atomic_store(&g_format_usage[f], 0);
    uint32_t usage = 0;
    g_img_ok = salvo_image_format_support(g_dev, SALVO_FORMAT_R32_UINT, &usage) == SALVO_OK &&
               (usage & (SALVO_IMAGE_STORAGE | SALVO_IMAGE_SAMPLED)) ==
                   (SALVO_IMAGE_STORAGE | SALVO_IMAGE_SAMPLED);
    g_img_add_kernel = g_img_fetch_kernel = NULL;
    g_sampler = NULL;
    if (g_img_ok) {
        salvo_kernel_desc kd = {.spirv = img_add_spv, .spirv_size = sizeof img_add_spv,
                                .name = "img_add"};
        if (salvo_kernel_create(g_dev, &kd, &g_img_add_kernel) != SALVO_OK)
            g_img_add_kernel = NULL;
        kd = (salvo_kernel_desc){.spirv = img_fetch_add_spv, .spirv_size = sizeof img_fetch_add_spv,
                                 .name = "img_fetch_add"};
        if (salvo_kernel_create(g_dev, &kd, &g_img_fetch_kernel) != SALVO_OK)
            g_img_fetch_kernel = NULL;
        if (salvo_sampler_create(g_dev, NULL, &g_sampler) != SALVO_OK)
            g_sampler = NULL;
    }
    return true;
}

/* Close the device; false (with the reason printed) when it kept host
 * memory or saw validation messages. */
static bool close_device(ctx *c)
{
    bool was_tracing;
    salvo_kernel_destroy(g_addr_kernel);
    g_addr_kernel = NULL;
    salvo_kernel_destroy(g_arr_kernel);
    g_arr_kernel = NULL;
    salvo_kernel_destroy(g_bare_kernel);
    g_bare_kernel = NULL;
    salvo_kernel_destroy(g_img_add_kernel);
    salvo_kernel_destroy(g_img_fetch_kernel);
    salvo_sampler_destroy(g_sampler);
    g_img_add_kernel = g_img_fetch_kernel = NULL;
    g_sampler = NULL;
    pthread_mutex_lock(&g_trace_mu);
    was_tracing = g_tracing;
    g_tracing = false;
    pthread_mutex_unlock(&g_trace_mu);
    salvo_stats ahead;
    if (salvo_device_stats(g_dev, &ahead) == SALVO_OK) {
        atomic_fetch_add(&g_n_launches_ahead, ahead.launches_ahead);
        atomic_fetch_add(&g_n_replays_ahead, ahead.replays_ahead);
    }
    salvo_device_destroy(g_dev);
    g_dev = NULL;
    /* The destroy stopped the trace, the file whole. */
    if (was_tracing)
        trace_file_check(c, "device_destroy (tracing)");
    if (D.running) {
        atomic_store(&D.stop, true);
        pthread_join(D.thread, NULL);
        D.running = false;
    }
    if (g_fake) {
        /* Every handle given back, nothing a real driver would refuse, and
         * every dispatch a kernel of the model's. */
        if (!fake_destroyed(g_fake))
            fail(c, "the fake accelerator was not destroyed with the device");
        if (fake_illegal_total(g_fake))
            fail(c, "%" PRIu64 " illegal uses of the fake accelerator, the last: %s",
                 fake_illegal_total(g_fake), fake_illegal_last(g_fake));
        if (fake_live_total(g_fake))
            fail(c, "%" PRIu64 " handles of the fake still live after device_destroy",
                 fake_live_total(g_fake));
        if (atomic_load(&g_fake_unknown))
            fail(c, "%" PRIu64 " dispatches of a kernel the model does not know",
                 atomic_load(&g_fake_unknown));
        if (atomic_load(&g_fake_fill_refused))
            fail(c, "the fake refused %" PRIu64 " fills a vk_record recorded",
                 atomic_load(&g_fake_fill_refused));
        for (int q = 0; q <= g_cfg.fake && q <= ACCEL_MAX_QUEUES; q++)
            g_fake_submits[q] += fake_queue_submits(g_fake, (uint32_t)q);
        g_fake_seeds++;
        g_fake_manual_seeds += g_cfg.manual;
        fake_free(g_fake);
        g_fake = NULL;
    }
    /* The default allocator back to malloc; the device never took a block
     * from the counting default beyond what enumerate took and gave back. */
    pthread_mutex_lock(&g_def_mu);
    salvo_default_allocator_set(NULL);
    g_def_now = 0;
    if (atomic_load(&g_def_live) != 0 || atomic_load(&g_def_allocs) != g_def_expected)
        fail(c, "the default allocator: %" PRId64 " blocks live, %" PRIu64 " taken of which "
                "enumerate took %" PRIu64 " (the device must keep its own)",
             atomic_load(&g_def_live), atomic_load(&g_def_allocs), g_def_expected);
    atomic_store(&g_def_live, 0);
    atomic_store(&g_def_allocs, 0);
    g_def_expected = 0;
    pthread_mutex_unlock(&g_def_mu);
    raiser_check(c);
    if (atomic_load(&g_validation) != 0)
        fail(c, "%" PRIu64 " validation messages", atomic_load(&g_validation));
    int64_t live = atomic_load(&g_live_blocks);
    if (live != 0)
        fail(c, "%" PRId64 " host blocks still allocated after salvo_device_destroy", live);
    return !c->failed;
}

typedef struct totals {
    uint64_t seeds, ops, failures, faulted, lost;
    uint64_t counts[OP_COUNT];
} totals;

static void add_counts(totals *t, const ctx *c)
{
    t->ops += c->ops;
    for (int i = 0; i < OP_COUNT; i++)
        t->counts[i] += c->counts[i];
}

static bool run_seed(uint64_t seed, int threads, int ops, bool sync, totals *t)
{
    g_seed = seed;
    config_from_seed(seed, &g_cfg);
    g_cfg.sync_validation = sync;
    g_cfg.threads = threads;
    g_cfg.ops = ops;
    memset(g_log_ring, 0, sizeof g_log_ring);
    static ctx ctxs[MAX_THREADS];
    g_nctx = threads;
    for (int i = 0; i < threads; i++) {
        ctx_init(&ctxs[i], i, seed);
        g_ctx[i] = &ctxs[i];
    }
    ctx *c0 = &ctxs[0];
    char cl[256];
    config_line(&g_cfg, cl, sizeof cl);
    trace_add(c0, cl);
    alarm(g_watchdog_s);
    t->seeds++;
    if (!open_device(c0)) {
        /* Only a fault may keep the device from opening. */
        if (!g_cfg.fault[0])
            fail(c0, "device_create failed: %s", salvo_last_error());
    } else if (threads == 1) {
        ISSUE(c0, OP_KERNEL_CREATE, 0, 0, 64);
        ISSUE(c0, OP_KERNEL_CREATE, 1, 1, 64);
        run_thread_ops(c0, ops);
        if (!c0->failed) {
            for (int k = 0; k < MAX_KERNELS; k++)
                if (g_kern[k].h)
                    ISSUE(c0, OP_KERNEL_DESTROY, k);
            raiser_drain(NULL);
            ISSUE(c0, OP_END_CHECK, 0);
        }
    } else {
        ISSUE(c0, OP_KERNEL_CREATE, 0, 0, 64);
        ISSUE(c0, OP_KERNEL_CREATE, 1, 1, 64);
        ISSUE(c0, OP_KERNEL_CREATE, 2, 0, 32);
        pthread_t th[MAX_THREADS];
        for (int i = 1; i < threads; i++)
            if (pthread_create(&th[i], NULL, thread_main, &ctxs[i]) != 0)
                abort();
        thread_main(c0);
        for (int i = 1; i < threads; i++)
            pthread_join(th[i], NULL);
        bool any = false;
        for (int i = 0; i < threads; i++)
            any |= ctxs[i].failed;
        raiser_drain(NULL);
        if (!any) {
            for (int k = 0; k < MAX_KERNELS; k++)
                if (g_kern[k].h)
                    ISSUE(c0, OP_KERNEL_DESTROY, k);
            ISSUE(c0, OP_END_CHECK, 0);
        }
    }
    bool failed = false;
    for (int i = 0; i < threads; i++)
        failed |= ctxs[i].failed;
    bool lost = g_dev && salvo_device_is_lost(g_dev);
    uint64_t injected = atomic_load(&g_injected) + (faults_seen() && !atomic_load(&g_injected));
    t->lost += lost;
    t->faulted += injected > 0;
    if (g_verbose)
        fprintf(stderr, "seed %" PRIu64 ": %s: %" PRIu64 " calls, %" PRIu64
                        " injected%s%s\n", seed, cl, c0->ops, injected, lost ? ", lost" : "",
                failed ? ", FAILED" : "");
    if (g_dev) {
        if (failed)
            for (int i = 0; i < threads; i++)
                teardown(&ctxs[i]);
        raiser_drain(NULL);
        close_device(c0);
    }
    /* Every pending host call and stream read ran in the destroy. */
    for (int i = 0; i < threads; i++)
        pend_final(&ctxs[i], lost);
    alarm(0);
    for (int i = 0; i < threads; i++) {
        failed |= ctxs[i].failed;
        add_counts(t, &ctxs[i]);
    }
    if (failed) {
        t->failures++;
        print_failure(NULL);
    }
    atomic_store(&g_live_blocks, 0);
    for (int i = 0; i < threads; i++)
        ctx_free(&ctxs[i]);
    return !failed;
}

static int replay(const char *path, bool sync, totals *t)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return 2;
    }
    static ctx c;
    ctx_init(&c, 0, 0);
    c.replay = true;
    g_ctx[0] = &c;
    g_nctx = 1;
    g_cfg.sync_validation = sync;
    char line[512];
    bool have_config = false;
    alarm(g_watchdog_s);
    t->seeds++;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0] || line[0] == '#')
            continue;
        if (!have_config) {
            if (!config_parse(line, &g_cfg)) {
                fprintf(stderr, "%s: the first line must be the config line\n", path);
                fclose(f);
                return 2;
            }
            trace_add(&c, line);
            have_config = true;
            if (!open_device(&c)) {
                fprintf(stderr, "device_create failed: %s\n", salvo_last_error());
                fclose(f);
                return g_cfg.fault[0] ? 0 : 1;
            }
            continue;
        }
        op o;
        if (!op_parse(line, &o)) {
            fprintf(stderr, "%s: cannot parse: %s\n", path, line);
            continue;
        }
        issue(&c, &o);
        if (c.failed)
            break;
    }
    fclose(f);
    if (!have_config) {
        fprintf(stderr, "%s: no config line\n", path);
        return 2;
    }
    if (c.failed)
        teardown(&c);
    for (int k = 0; k < MAX_KERNELS; k++)
        if (c.failed && g_kern[k].h)
            salvo_kernel_destroy(g_kern[k].h);
    raiser_drain(NULL);
    bool lost = salvo_device_is_lost(g_dev);
    close_device(&c);
    pend_final(&c, lost);
    alarm(0);
    add_counts(t, &c);
    if (c.failed) {
        t->failures++;
        print_failure(NULL);
    }
    ctx_free(&c);
    return c.failed ? 1 : 0;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: model_random [--seed S | --seeds N [--first S] | --seconds T] [--ops M]\n"
            "                    [--threads N | --mix-threads] [--sync] [--trace FILE] [-v]\n"
            "                    [--fake-queues N]\n"
            "       model_random --replay FILE [--sync]\n");
}

static uint64_t env_u64(const char *name, uint64_t def)
{
    const char *v = getenv(name);
    return (v && *v) ? strtoull(v, NULL, 10) : def;
}

int main(int argc, char **argv)
{
    uint64_t first = 1, seeds = 0;
    int ops = (int)env_u64("MODEL_OPS", 300), threads = 1;
    double seconds = 0;
    bool sync = env_u64("MODEL_SYNC", 0) != 0, mix = false, explicit_run = false;
    const char *replay_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--seed") == 0 && v) {
            first = strtoull(v, NULL, 0);
            seeds = 1;
            explicit_run = true;
            i++;
        } else if (strcmp(a, "--seeds") == 0 && v) {
            seeds = strtoull(v, NULL, 0);
            explicit_run = true;
            i++;
        } else if (strcmp(a, "--first") == 0 && v) {
            first = strtoull(v, NULL, 0);
            i++;
        } else if (strcmp(a, "--ops") == 0 && v) {
            ops = atoi(v);
            i++;
        } else if (strcmp(a, "--threads") == 0 && v) {
            threads = atoi(v);
            if (threads < 1 || threads > MAX_THREADS) {
                usage();
                return 2;
            }
            i++;
        } else if (strcmp(a, "--mix-threads") == 0) {
            mix = true;
        } else if (strcmp(a, "--seconds") == 0 && v) {
            seconds = atof(v);
            explicit_run = true;
            i++;
        } else if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
            g_verbose = true;
        } else if (strcmp(a, "--sync") == 0) {
            sync = true;
        } else if (strcmp(a, "--replay") == 0 && v) {
            replay_path = v;
            i++;
        } else if (strcmp(a, "--trace") == 0 && v) {
            snprintf(g_trace_path, sizeof g_trace_path, "%s", v);
            i++;
        } else if (strcmp(a, "--fake-queues") == 0 && v) {
            g_fake_queues = atoi(v);
            if (g_fake_queues < 1 || g_fake_queues > ACCEL_MAX_QUEUES) {
                usage();
                return 2;
            }
            i++;
        } else {
            usage();
            return 2;
        }
    }
    if (!g_fake_queues && getenv("MODEL_FAKE_QUEUES") && *getenv("MODEL_FAKE_QUEUES")) {
        g_fake_queues = (int)env_u64("MODEL_FAKE_QUEUES", 0);
        if (g_fake_queues < 0 || g_fake_queues > ACCEL_MAX_QUEUES) {
            usage();
            return 2;
        }
    }
    g_watchdog_s = (unsigned)env_u64("MODEL_WATCHDOG", 120);
    g_strict_layer = env_u64("MODEL_STRICT_LAYER", 0) != 0;
    g_avoid_gate_destroy = getenv("MODEL_AVOID") && strstr(getenv("MODEL_AVOID"), "gate_destroy");
    /* The graph bugs below are fixed: generated unless MODEL_AVOID names
     * them (to look past one should it come back). */
    const char *avoid = getenv("MODEL_AVOID");
    g_avoid_empty_replay = avoid && strstr(avoid, "empty_replay");
    g_avoid_pool_reset = avoid && strstr(avoid, "pool_reset");
    g_avoid_gated_replay = avoid && strstr(avoid, "gated_replay");
    g_avoid_busy_destroy = avoid && strstr(avoid, "busy_destroy");
    g_avoid_call_wait = avoid && strstr(avoid, "call_wait");
    g_avoid_call_value = avoid && strstr(avoid, "call_value");
    g_avoid_read_timeout = avoid && strstr(avoid, "read_timeout");
    g_avoid_cancel_twin = avoid && strstr(avoid, "cancel_twin");
    g_avoid_trace_failed_launch = avoid && strstr(avoid, "trace_failed_launch");
    g_avoid_call_failed_batch = avoid && strstr(avoid, "call_failed_batch");
    g_avoid_worker_wait = avoid && strstr(avoid, "worker_wait");
    g_avoid_trace_copy_queue = avoid && strstr(avoid, "trace_copy_queue");
    signal(SIGALRM, fatal_signal);
    if (!MODEL_SANITIZED) { /* sanitizers print their own reports */
        signal(SIGSEGV, fatal_signal);
        signal(SIGBUS, fatal_signal);
    }

    /* The fake's dispatch_hook knows the model's kernels by their modules. */
    g_h_add = fake_module_hash(add_spv, sizeof add_spv);
    g_h_copy = fake_module_hash(copy_spv, sizeof copy_spv);
    g_h_addr = fake_module_hash(addr_add_spv, sizeof addr_add_spv);
    g_h_arr = fake_module_hash(arr_add_spv, sizeof arr_add_spv);
    g_h_img_add = fake_module_hash(img_add_spv, sizeof img_add_spv);
    g_h_img_fetch = fake_module_hash(img_fetch_add_spv, sizeof img_fetch_add_spv);
    g_h_empty = fake_module_hash(empty_spv, sizeof empty_spv);
    trace_file_init();

    uint32_t ndev = 0;
    bool fake_replay = false;
    if (replay_path) { /* a trace of a fake's seed needs no device */
        FILE *f = fopen(replay_path, "r");
        char line[512];
        while (f && fgets(line, sizeof line, f))
            if (strncmp(line, "config ", 7) == 0) {
                fake_replay = strstr(line, " fake=") != NULL;
                break;
            }
        if (f)
            fclose(f);
    }
    if (!g_fake_queues && !fake_replay &&
        (salvo_device_enumerate(NULL, &ndev) != SALVO_OK || ndev == 0)) {
        fprintf(stderr, "no Vulkan device: skipped\n");
        return SKIP_EXIT;
    }
    if (pthread_create(&R.thread, NULL, raiser_main, NULL) != 0)
        return 2;

    totals t;
    memset(&t, 0, sizeof t);
    double t0 = now_s();
    int rc = 0;
    if (replay_path) {
        rc = replay(replay_path, sync, &t);
    } else if (!explicit_run) {
        /* The ctest run: single-threaded seeds, then a few threaded ones. */
        uint64_t n1 = env_u64("MODEL_SEEDS", 120), n2 = env_u64("MODEL_THREAD_SEEDS", 10);
        double limit = (double)env_u64("MODEL_SECONDS", 0);
        first = env_u64("MODEL_FIRST", 1);
        for (uint64_t i = 0; i < n1 && (limit == 0 || now_s() - t0 < limit); i++)
            run_seed(first + i, 1, ops, sync, &t);
        for (uint64_t i = 0; i < n2 && (limit == 0 || now_s() - t0 < limit); i++)
            run_seed(first + 100000 + i, 2 + (int)(i % 3), ops / 2, sync, &t);
    } else if (seconds > 0 && seeds == 0) {
        for (uint64_t s = first; now_s() - t0 < seconds; s++) {
            int th = mix ? ((s % 4 == 3) ? 2 + (int)(s / 4 % 3) : 1) : threads;
            run_seed(s, th, th > 1 ? ops / 2 : ops, sync, &t);
        }
    } else {
        for (uint64_t i = 0; i < seeds; i++) {
            if (seconds > 0 && now_s() - t0 >= seconds)
                break;
            uint64_t s = first + i;
            int th = mix ? ((s % 4 == 3) ? 2 + (int)(s / 4 % 3) : 1) : threads;
            run_seed(s, th, th > 1 ? ops / 2 : ops, sync, &t);
        }
    }

    pthread_mutex_lock(&R.mu);
    R.stop = true;
    pthread_cond_broadcast(&R.cv);
    pthread_mutex_unlock(&R.mu);
    pthread_join(R.thread, NULL);

    printf("model_random: %" PRIu64 " seeds, %" PRIu64 " calls, %" PRIu64 " failures, %.1f s\n",
           t.seeds, t.ops, t.failures, now_s() - t0);
    printf("  seeds where a fault fired: %" PRIu64 ", device lost: %" PRIu64
           "; timeouts: %" PRIu64 ", failing statuses: %" PRIu64 ", successful cancels: %" PRIu64
           "\n", t.faulted, t.lost, atomic_load(&g_n_timeouts), atomic_load(&g_n_errors),
           atomic_load(&g_n_cancelled));
    printf("  graphs: %" PRIu64 " nodes captured, %" PRIu64 " replays, %" PRIu64
           " streams joined a capture, %" PRIu64 " calls refused during a capture, %" PRIu64
           " destroyed buffers kept by a graph\n",
           atomic_load(&g_n_nodes), atomic_load(&g_n_replayed), atomic_load(&g_n_joins),
           atomic_load(&g_n_refused), atomic_load(&g_n_zombies));
    printf("  recorded ahead: %" PRIu64 " launches, %" PRIu64 " replays\n",
           atomic_load(&g_n_launches_ahead), atomic_load(&g_n_replays_ahead));
    printf("  stream reads checked: %" PRIu64 ", host calls checked: %" PRIu64
           ", own commands recorded: %" PRIu64 "\n",
           atomic_load(&g_n_reads_checked), atomic_load(&g_n_calls_checked),
           atomic_load(&g_n_recorded));
    if (g_n_traces || g_n_enumerated || g_n_vk_devices)
        printf("  traces checked: %" PRIu64 ", enumerates under a default allocator: %" PRIu64
               ", devices on the program's own VkDevice: %" PRIu64 "\n",
               atomic_load(&g_n_traces), atomic_load(&g_n_enumerated),
               atomic_load(&g_n_vk_devices));
    if (g_fake_seeds) {
        /* Several queues must have run work, or the mode tests nothing. */
        int fq = g_fake_queues ? g_fake_queues : g_cfg.fake, busy = 0;
        printf("  fake accelerator: %" PRIu64 " seeds (%" PRIu64 " with a device thread "
               "completing queues out of order), %d compute queues and a copy queue; "
               "dispatches run by the model's kernels: %" PRIu64 "; submissions by queue:",
               g_fake_seeds, g_fake_manual_seeds, fq, atomic_load(&g_fake_ran));
        for (int q = 0; q <= fq && q <= ACCEL_MAX_QUEUES; q++) {
            printf(" %s%d=%" PRIu64, q == fq ? "copy" : "q", q, g_fake_submits[q]);
            busy += q < fq && g_fake_submits[q] > 0;
        }
        printf("\n");
        if (fq >= 2 && busy < 2 && !replay_path) {
            printf("  FAILURE: work reached %d of the fake's %d compute queues\n", busy, fq);
            t.failures++;
        }
    }
    if (atomic_load(&g_layer_timeouts_total))
        printf("  validation layer state-timeout messages (not counted): %" PRIu64 "\n",
               atomic_load(&g_layer_timeouts_total));
    printf("  calls by kind:");
    for (int i = 0; i < OP_COUNT; i++)
        if (t.counts[i])
            printf(" %s=%" PRIu64, op_names[i], t.counts[i]);
    printf("\n");
    if (replay_path)
        return rc;
    return t.failures ? 1 : 0;
}
