/*
 * The queue: a device's submission engine. It owns the batch lock, the
 * serials batches take, the retire clock, the list of stream engines, the
 * waits (with the bounded spin), held batches and their pump, device loss
 * and the abandoning of work, and the staged-transfer objects
 * (core/transfer.c). The public objects (api/) call it; it never calls
 * them: it knows accelerators, slots and stream engines, not devices,
 * buffers or kernels. It looks at the streams' slots but calls no
 * function of a stream's: what submits a stream's batch, or walks the
 * streams to submit, wait for or free them, is the scheduler's
 * (core/scheduler.h), between the stream engine and the queue.
 *
 * Locks: every lock in src/, in the order they may be taken (written once,
 * here). A thread holding one takes only locks further down the list;
 * the two of 2 are never held together.
 *
 *  1. queue.lock, the device lock (a salvo_mutex, base/lock.h): the batch
 *     lock the public calls take. It guards the stream list, every
 *     slot's state and the stream fields marked [lock], the batch table,
 *     the retire queue's list, the submissions, the transfer objects and
 *     the public objects' fields marked [lock] or [q.lock]
 *     (api/internal.h, api/host_call.h). A function that needs it says so
 *     (SALVO_REQUIRES; clang checks it with SALVO_THREAD_SAFETY). It is
 *     never held across a fence wait: waits drop it and re-check the slot
 *     (state and serial) when they take it back; a staged transfer keeps
 *     the transfer objects through xfer_busy while it waits without it.
 *     The free path only try-locks it; when that fails the release goes
 *     to the retire queue's lock-free incoming stack. slot_cv goes with
 *     it: a slot's last waiter left, or a transfer let go of the transfer
 *     objects.
 *  2. host_work.mu (api/host_call.h, one per device): the host calls'
 *     list, stop and finished count, and its cv; taken under queue.lock
 *     (a call queued, the worker's wait for a batch) or alone (the worker
 *     between calls, a wait for a call to have run). The trace env_lock
 *     (api/trace.c, one per process): which $SALVO_TRACE names are in
 *     use; under queue.lock (a trace stop) or alone.
 *  3. A gate's raise_lock (api/gate.c): orders the gate's signals, so its
 *     timeline only goes up. A raise (and a gate destroy, which raises)
 *     takes it holding no other lock but for a destroy from a log
 *     callback, and lets go of it before it only try-locks queue.lock to
 *     send the batches held for the gate: a thread can always raise a
 *     gate that another thread's wait depends on.
 *  4. The fault decorator's queue_lock (accel/accel_fault.c, one per
 *     decorated accelerator): every use of the inner queue, and the gate
 *     values it waits for; inside accelerator calls, made under queue.lock
 *     or a raise_lock or neither.
 *  5. The application's lock on a queue it shares with salvo
 *     (salvo_vk_device_import.queue_lock, accel/vulkan/queue.c): around
 *     each submit and idle wait on that queue, in the accelerator.
 *
 * Taken alone (no other lock held, none taken under them): the Vulkan
 * accelerator's instance_lock (accel/vulkan/instance.c, one per process:
 * volk's instance-level globals; enumerate, device open and import, before
 * the device lock exists), the default allocator's default_lock
 * (base/alloc.c) and SALVO_LOG's log_env_lock (base/diag.c). One-time
 * initialisations run under pthread_once: volk's loader
 * (accel/vulkan/instance.c), glslang (api/glsl.c).
 *
 * The log callback may run with any of these held: it may only destroy
 * objects, and a destroy only try-locks queue.lock (a gate's destroy
 * also takes that gate's raise_lock, 3).
 */
#ifndef SALVO_CORE_QUEUE_H
#define SALVO_CORE_QUEUE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "accel/accel.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "base/lock.h"
#include "core/retire.h"
#include "core/slot.h"
#include "core/trace.h"

enum { NO_COPY_QUEUE = UINT32_MAX };
/* A host wait for a gate that holds a batch back polls the gate, napping
 * up to this long between looks. */
#define HELD_WAIT_NAP_MAX_NS (1000ull * 1000)

enum {
    STREAM_SLOTS = 3,             /* ring: record one while two run */
    DEFAULT_BATCH = 128,
    FIRST_BATCH = 16,             /* after a synchronisation point: start the device early */
    DEFAULT_SPIN_US = 100,        /* bounded spin on a fence before blocking (GPUs) */
    POOL_MAX_SETS = 1024,         /* descriptor sets per slot pool */
    POOL_BINDINGS_PER_SET = 8,    /* average budget; a fuller pool just submits early */
    DEFAULT_RELEASE_MAX_COUNT = 1024,
    STAGING_BYTES = 16u << 20,
    /* Staged transfers from this size on import the caller's memory and
     * let the device copy it (transfer.c, import_middle_locked). */
    IMPORT_MIN_BYTES = 8u << 20,
    /* Tries of a recovery step the driver refused for lack of memory
     * (waiting for the queue to be idle, resetting the transfer command
     * buffer) before the step is given up. */
    RECOVERY_ATTEMPTS = 3
};
#define DEFAULT_RELEASE_MAX_BYTES (256ull << 20)
/* Workgroups one batch may carry: a bound on how long a single submission
 * can run, so no batch of large launches trips a driver's watchdog. */
#define BATCH_MAX_GROUPS (1ull << 24)

/* What the device counts; the stats read them without the lock. */
typedef struct queue_counters {
    _Atomic uint64_t live_buffers, live_kernels, live_streams, live_events, live_gates;
    _Atomic uint64_t live_graphs;
    _Atomic uint64_t live_images, live_image_bytes, live_samplers;
    _Atomic uint64_t live_buffer_bytes;
    _Atomic uint64_t launches_pending, launches_total, batches_submitted, barriers_emitted;
    _Atomic uint64_t transfer_bytes, direct_bindings, validation_messages;
    _Atomic uint64_t transfer_bytes_imported;
    _Atomic uint64_t replays_ahead, launches_ahead;
} queue_counters;

#define COUNTER_ADD(n, field, v) atomic_fetch_add_explicit(&(n)->field, (v), memory_order_relaxed)
#define COUNTER_SUB(n, field, v) atomic_fetch_sub_explicit(&(n)->field, (v), memory_order_relaxed)

typedef struct stream_engine stream_engine;

/* A thread polling a gate's timeline with the lock dropped (a held
 * batch's wait): the retire queue runs no release tagged past serial
 * (the gate's among them) until it is out. On the waiter's stack. */
typedef struct queue_pin {
    uint64_t serial;
    struct queue_pin *next;
} queue_pin;

enum { QUEUE_REFUSED_KEPT = 16 };

typedef struct queue {
    const accel *acc;
    accel_device *adev;
    slot_env env;
    /* [lock] Every active batch by serial (core/slot.h), room for every
     * slot of every stream. */
    slot_table batches;
    const salvo_log_sink *log;
    const salvo_allocator *alloc;

    uint64_t fence_timeout_ns; /* UINT64_MAX: unbounded */
    uint64_t spin_ns;          /* polling before a blocking fence wait */
    /* A wait polls to its end (wait.c, poll) while fewer than pollers_max
     * threads do so; pollers counts them. */
    bool poll_whole;
    uint32_t pollers_max;
    _Atomic uint32_t pollers;
    uint64_t release_max_count;
    uint64_t release_max_bytes;
    /* Hardware queues streams take in turn (1..ACCEL_MAX_QUEUES); more
     * than one only with timeline semaphores, which order streams then. */
    uint32_t hw_queues;
    /* The last hardware queue is kept for high-priority streams (where
     * hw_queues >= 3 and the device made it so). */
    bool high_queue;
    /* The copy engine's queue (the accelerator's transfer queue), or
     * NO_COPY_QUEUE: a stream's batch that starts with a copy to or from
     * host memory goes there, so it runs beside kernels; staged
     * transfers use it too. */
    uint32_t copy_queue;

    salvo_mutex lock;             /* the batch lock; see the top of this file */
    pthread_cond_t slot_cv;       /* with lock: a slot's last waiter left, or a
                                     transfer let go of the transfer objects */
    _Atomic uint64_t next_serial; /* the next batch's serial; read by the free path */
    /* Buffers, images, samplers and kernels whose release was queued so
     * far (resource_let_go): part of the key of a launch recorded ahead
     * (core/ahead.h), since a released object's handles may name a later
     * one. */
    _Atomic uint64_t released;
    /* [lock] The latest batch holding work that reaches memory through
     * buffer addresses: a host transfer of a buffer whose address was
     * taken waits for it. 0 = none. */
    uint64_t address_serial;
    _Atomic bool lost;            /* sticky; set by whoever first sees the loss */
    bool abandoned;               /* [lock] the work of a lost device was let go */
    retire_queue retire;          /* list [lock]; counters atomic */
    stream_engine *streams;       /* [lock] every stream, destroyed ones until idle */
    queue_pin *pins;              /* [lock] gate polls in progress */
    trace_session *trace;         /* [lock] the trace being written, or NULL */
    /* [lock] Event timestamps (core/timing.c): NULL until the first timed
     * record. */
    struct timing_table *timing;
    uint32_t stream_count;        /* [lock] streams created: the next one's number */

    /* Staged transfers (transfer.c) [lock]. */
    bool transfer_import; /* large staged transfers import the caller's memory */
    bool host_import;
    /* Dispatches push their descriptors: recording one takes nothing from
     * a pool, so it cannot run out (set at open, read-only after). */
    bool push_descriptors;
    /* The device has timeline semaphores: every stream signals one of its
     * own, and its batches are known done by it (no fence); set at open,
     * read-only after. */
    bool timelines;
    uint64_t host_import_alignment;
    accel_buffer *staging;
    accel_buffer_info staging_info;
    accel_cmd *xfer_cmd;
    accel_fence *xfer_fence;
    /* Image transfers' own, on a compute queue (transfer_image_locked). */
    accel_cmd *image_cmd;
    accel_fence *image_fence;
    /* A transfer owns the objects above while it waits with the lock
     * dropped, or copies host memory; others wait on slot_cv for it to
     * finish. */
    bool xfer_busy;
    uint32_t xfer_queue; /* the queue the staged transfer under way copies on */

    /* Host calls (api/host_call.c): the timeline the work after a call
     * waits on, and the value raised so far. A batch waiting on it is
     * always held on the host until that value is raised (the device never
     * waits for a host thread), and whether it is raised is known without
     * reading the timeline. host_timeline [lock], set once. */
    accel_timeline *host_timeline;
    _Atomic uint64_t host_raised;

    /* [lock] The last batches refused at their submit (back to IDLE, never
     * run), for the events that mark them: their stream keeps the failure
     * too, an event's wait reports it without taking it. A ring: older
     * refusals read as complete. */
    struct {
        uint64_t serial;
        salvo_status why;
    } refused[QUEUE_REFUSED_KEPT];
    uint32_t refused_next;

    queue_counters n;
} queue;

/* Set up the lock, the clock and the retire queue over an open device;
 * the caller fills acc, adev, log, alloc and the settings first.
 * SALVO_ERROR_OUT_OF_HOST_MEMORY when the lock cannot be made. */
salvo_status queue_init(queue *q);

/* Device destroy, after sched_settle_for_destroy_locked and
 * sched_release_all_locked (core/scheduler.h), once the caller has
 * reclaimed its own objects: close the retire queue and the batch table
 * (the caller frees the timing table and the transfer objects, which sit
 * above the queue: timing_free_locked, transfer_free_locked).
 * queue_destroy_lock after the lock is released. */
void queue_fini_locked(queue *q) SALVO_REQUIRES(q->lock);
void queue_destroy_lock(queue *q);

/* Batch serial was refused at its submit (refused, with why): note it for
 * the events that mark it. */
void queue_note_refused_locked(queue *q, uint64_t serial, salvo_status why) SALVO_REQUIRES(q->lock);
/* How batch serial, done (queue_batch_done_locked), ended: SALVO_OK, or
 * the failure that refused it (among the last QUEUE_REFUSED_KEPT). */
salvo_status queue_batch_outcome_locked(const queue *q, uint64_t serial) SALVO_REQUIRES(q->lock);

/* Inline: every call asks first. */
static inline bool queue_is_lost(const queue *q)
{
    return atomic_load_explicit(&q->lost, memory_order_acquire);
}
salvo_status queue_lost_error(queue *q);
/* The outcome of a synchronization point: once the device is lost, the
 * loss, whatever first failure was kept before it (msg, that failure's
 * text on entry, then names it as having come before the loss). */
salvo_status queue_loss_wins_locked(queue *q, salvo_status first, char msg[SALVO_ERROR_MAX])
    SALVO_REQUIRES(q->lock);
/* Pass st through; when it says the device is lost, record that. */
static inline salvo_status queue_noted(queue *q, salvo_status st)
{
    if (st == SALVO_ERROR_DEVICE_LOST)
        atomic_store(&q->lost, true);
    return st;
}
/* Observe device loss: abandon every slot and every queued release. */
void queue_mark_lost_locked(queue *q) SALVO_REQUIRES(q->lock);
/* The one place the retire clock advances: after a slot was seen complete. */
void queue_advance_locked(queue *q) SALVO_REQUIRES(q->lock);
/* Queue or run a release: the free path. Never blocks. */
void queue_release(queue *q, retire_entry *e);

/* Whether the batch with this serial is over (not recording, held or in
 * flight): asked of the batch table, never of serial order. */
static inline bool queue_batch_done_locked(const queue *q, uint64_t serial)
    SALVO_REQUIRES(q->lock)
{
    return serial == 0 || slot_table_find(&q->batches, serial) == NULL;
}
/* The stream whose active batch has this serial (and the batch, in
 * *out), or NULL: the batch table's answer. */
stream_engine *queue_batch_owner_locked(queue *q, uint64_t serial, slot **out)
    SALVO_REQUIRES(q->lock);

/* Held batches. A batch that waits on a host gate not raised yet, going
 * to a queue that other work shares (one queue for all streams, a queue
 * two streams share, the copy queue), is kept on the host rather than
 * given to the device, where it would hold up every later submission to
 * that queue: a single thread could then synchronize another stream
 * before raising the gate and wait for ever. So is a batch behind a held
 * one: a later batch of the same stream, or one that waits for a held
 * batch. queue_must_hold_locked says whether st's slot s, about to be
 * submitted, must be held; queue_pump_locked submits, oldest first, the
 * held batches that need not be held any more. Pumped at every submit,
 * wait, reap and gate raise. */
bool queue_must_hold_locked(queue *q, stream_engine *st, const slot *s) SALVO_REQUIRES(q->lock);
void queue_pump_locked(queue *q) SALVO_REQUIRES(q->lock);
/* Wait (dropping the lock meanwhile) for stream st's slot s if it is still
 * the same submission. report: return a failure to the caller; otherwise
 * keep it as the stream's deferred error. */
salvo_status queue_wait_slot_locked(queue *q, stream_engine *st, slot *s, bool report)
    SALVO_REQUIRES(q->lock);
/* What a wait for st's in-flight batch s observed (r), applied: done
 * (the retire clock advances), still running, failed or lost. report as
 * for queue_wait_slot_locked. */
salvo_status queue_observed_locked(queue *q, stream_engine *st, slot *s, accel_result r,
                                   bool report) SALVO_REQUIRES(q->lock);
/* Whether some submitted batch waits on a host gate not raised yet (a
 * wait for any later work on its queue could last until the host raises
 * it). */
bool queue_gated_locked(queue *q) SALVO_REQUIRES(q->lock);
/* The monotonic clock, in nanoseconds (deadlines). */
uint64_t queue_now_ns(void);
/* A compute queue (0 .. hw_queues - 1) where no batch on the device waits
 * for anything not signalled yet (a gate, or another batch), so that work
 * given to it now runs without waiting for the host; UINT32_MAX when
 * every one has such a batch. */
uint32_t queue_unblocked_compute_locked(queue *q) SALVO_REQUIRES(q->lock);
/* Wait (dropping the lock meanwhile) until no batch in flight waits on
 * a gate not raised yet: work submitted after that point is then not held
 * behind a gate on the queue. SALVO_OK, TIMEOUT, DEVICE_LOST, or the
 * error of a wait that keeps failing. */
salvo_status queue_wait_ungated_locked(queue *q) SALVO_REQUIRES(q->lock);
/* Wait for the queue to be idle: the last resort of a recovery. Out of
 * memory is retried RECOVERY_ATTEMPTS times; returns the last result. */
accel_result queue_wait_idle_locked(queue *q) SALVO_REQUIRES(q->lock);

/* Log where, return the code; a DEVICE_LOST status makes the loss sticky
 * at once (the work is abandoned at the next locked step). */
#define QUEUE_FAIL(q, status, ...) queue_noted((q), SALVO_FAIL((q)->log, (status), __VA_ARGS__))

#endif
