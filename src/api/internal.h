/*
 * The public objects as the library sees them, and the device's internal
 * entry points shared by the api/ files.
 *
 * Locking (the whole order, written once):
 *   device->lock, the batch lock, is the only lock a call blocks on. It
 *   guards the stream list, every slot's state and the stream fields marked
 *   [lock], the retire queue's list, the queue (submissions) and the
 *   transfer objects. It is never held across a fence wait: waits drop it
 *   and re-check the slot (state and serial) when they take it back; a
 *   staged transfer keeps the transfer objects through xfer_busy while it
 *   waits without the lock.
 *   The free path only try-locks it; when that fails the release goes to
 *   the retire queue's lock-free incoming stack.
 *   The log callback may run with the lock held.
 */
#ifndef SALVO_API_INTERNAL_H
#define SALVO_API_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "accel/accel.h"
#include "base/alloc.h"
#include "base/diag.h"
#include "core/batch.h"
#include "core/hazard.h"
#include "core/reflect.h"
#include "core/retire.h"
#include "core/slot.h"
#include "core/trace.h"
#include "salvo/salvo.h"

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
     * let the device copy it (buffer.c, import_middle_locked). */
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

/* Membership in the device's list of objects the user has not released,
 * so device destroy can reclaim what was never destroyed [lock]. */
typedef struct live_link {
    struct live_link *prev, *next;
    retire_entry *release;
} live_link;

typedef struct salvo_counters {
    _Atomic uint64_t live_buffers, live_kernels, live_streams, live_events, live_gates;
    _Atomic uint64_t live_buffer_bytes;
    _Atomic uint64_t launches_pending, launches_total, batches_submitted, barriers_emitted;
    _Atomic uint64_t transfer_bytes, direct_bindings, validation_messages;
    _Atomic uint64_t transfer_bytes_imported;
} salvo_counters;

struct salvo_device {
    salvo_allocator allocator_copy;
    const salvo_allocator *alloc; /* &allocator_copy or NULL */
    salvo_log_sink log;
    salvo_log_fn user_log;
    void *user_log_user;

    accel acc;
    accel_device *adev;
    accel_caps caps;
    slot_env env;
    salvo_device_info info;

    uint32_t batch_size;
    uint64_t fence_timeout_ns; /* UINT64_MAX: unbounded */
    uint64_t spin_ns;          /* polling before a blocking fence wait */
    uint64_t release_max_count;
    uint64_t release_max_bytes;
    bool force_staging;
    bool transfer_import; /* large staged transfers import the caller's memory */

    pthread_mutex_t lock;         /* the batch lock; see the top of this file */
    _Atomic uint64_t next_serial; /* the next batch's serial; read by the free path */
    _Atomic bool lost;            /* sticky; set by whoever first sees the loss */
    bool abandoned;               /* [lock] the work of a lost device was let go */
    retire_queue retire;          /* list [lock]; counters atomic */
    salvo_stream *streams;        /* [lock] every stream, destroyed ones until idle */
    _Atomic int waiters;          /* threads in a fence wait with the lock dropped */
    pthread_cond_t slot_cv;       /* with lock: a slot's last waiter left, or a
                                     transfer let go of the transfer objects */
    live_link live;               /* [lock] sentinel of the live objects' ring */
    trace_session *trace;         /* [lock] the trace being written, or NULL */
    uint32_t stream_count;        /* [lock] streams created: the next one's number */
    int trace_env_slot;           /* [lock] which $SALVO_TRACE name it writes (1..), or 0 */

    /* Staged transfers [lock]. */
    accel_buffer *staging;
    accel_buffer_info staging_info;
    accel_cmd *xfer_cmd;
    accel_fence *xfer_fence;
    /* A transfer owns the objects above while it waits with the lock
     * dropped; others wait on slot_cv for it to finish. */
    bool xfer_busy;

    salvo_counters n;
};

struct salvo_stream {
    salvo_device *dev;
    salvo_stream *next, *prev; /* [lock] */
    slot slots[STREAM_SLOTS];  /* states [lock] */
    uint32_t cur;              /* [lock] index of the slot recorded next */
    slot *open;                /* [lock] the slot recording, or NULL */
    uint32_t batch_size;
    uint32_t first_batch;  /* min(desc's or FIRST_BATCH, batch_size) */
    uint32_t batch_limit;  /* [lock] launches the open batch may take: grows from
                              FIRST_BATCH to batch_size after each sync point */
    uint64_t batch_groups; /* [lock] workgroups recorded in the open batch */
    /* The first failure found by someone other than this stream's own wait
     * [lock]; given to the stream's next synchronize. */
    salvo_status deferred;
    char deferred_msg[SALVO_ERROR_MAX];
    _Atomic bool destroyed; /* the user let go; freed once idle */
    uint64_t last_serial; /* [lock] serial of the last batch submitted */
    hazard_set hazards;   /* [lock] ranges touched since the last barrier */
    bool copied;          /* [lock] a copy was recorded since the last barrier */
    /* [lock] Ranges dispatches touched since the last barrier that also
     * covered the transfer stage: a compute-only barrier orders them for
     * later dispatches, not for a copy. Full: every copy gets a barrier. */
    hazard_set compute_unordered;
    bool compute_overflow;
    /* [lock] Device-side waits (gates) asked for while no batch was open:
     * the next batch of the stream begins with them. */
    uint32_t pending_wait_count;
    slot_dep pending_waits[SLOT_MAX_WAITS];
    batch_log log;        /* [lock] what the open batch holds, for cancel */
    uint32_t number;      /* [lock] 1, 2, ... by creation: its threads in a trace */
    trace_stream *trace;  /* [lock] its trace records from when it was first traced, or NULL */
};

/* A point in a stream: the batch holding it. serial 0: nothing to wait for. */
struct salvo_event {
    salvo_device *dev;
    uint64_t serial;          /* [lock] */
    salvo_stream *stream;     /* [lock] valid while the batch is active */
    size_t log_offset;        /* [lock] where the point is in its batch's log */
    bool cancelled;           /* [lock] the launches before it were withdrawn */
    live_link live;
    retire_entry release;
};

struct salvo_gate {
    salvo_device *dev;
    accel_timeline *timeline;
    _Atomic uint64_t value; /* highest value raised */
    live_link live;
    retire_entry release;
};

struct salvo_buffer {
    salvo_device *dev;
    accel_buffer *ab;
    accel_buffer_info ai;
    uint64_t size;
    salvo_domain domain;
    bool imported;
    /* Highest serial of a batch that bound it (fetch-max). */
    _Atomic uint64_t last_serial;
    live_link live;
    retire_entry release;
};

struct salvo_kernel {
    salvo_device *dev;
    accel_pipeline *pipe;
    reflect_module refl;
    char *name;
    live_link live;
    retire_entry release;
};

/* device.c */
salvo_status device_create_with_accel(const salvo_device_desc *desc, accel acc,
                                      salvo_device **out);
/* As device_create_with_accel, on the application's own objects when
 * import is non-NULL (accel_open_options.import; no device is chosen). */
salvo_status device_create_on(const salvo_device_desc *desc, accel acc, const void *import,
                              salvo_device **out);
bool device_is_lost(const salvo_device *dev);
/* Give identical devices distinct names (" #2", ...), in enumeration order. */
void device_entries_disambiguate(salvo_device_entry *e, uint32_t n);
salvo_status device_lost_error(salvo_device *dev);
/* The one place the retire clock advances: after a slot was seen complete. */
void device_advance_locked(salvo_device *dev);
/* Observe device loss: abandon every slot and every queued release. */
void device_mark_lost_locked(salvo_device *dev);
/* Queue or run a release: the free path. Never blocks. */
void device_release(salvo_device *dev, retire_entry *e);
/* Poll every in-flight slot of every stream; finish destroyed streams.
 * Failures go to their stream's deferred error. */
void device_reap_locked(salvo_device *dev);
/* Wait (dropping the lock meanwhile) for stream's slot s if it is still the
 * same submission. report: return a failure to the caller; otherwise keep
 * it as the stream's deferred error. */
salvo_status device_wait_slot_locked(salvo_device *dev, salvo_stream *st, slot *s, bool report);
/* Submit every open batch with serial <= limit and wait for every batch
 * with serial <= limit, on all streams. Failures are kept on their streams
 * (never consumed); returns SALVO_OK, or DEVICE_LOST / TIMEOUT when the
 * wait could not finish. */
salvo_status device_quiesce_locked(salvo_device *dev, uint64_t limit);
/* Wait (dropping the lock meanwhile) until no batch in flight waits on
 * a gate not raised yet: work submitted after that point is then not held
 * behind a gate on the queue. SALVO_OK, TIMEOUT, DEVICE_LOST, or the
 * error of a wait that keeps failing. */
salvo_status device_wait_ungated_locked(salvo_device *dev);
/* When the release bounds are exceeded, run what completed, then wait. */
void device_relieve_locked(salvo_device *dev);
/* Wait for the queue to be idle: the last resort of a recovery. Out of
 * memory is retried RECOVERY_ATTEMPTS times; returns the last result. */
accel_result device_wait_idle_locked(salvo_device *dev);
/* Keep err (and this thread's message) as st's deferred error, first wins. */
void stream_defer_locked(salvo_stream *st, salvo_status err);
/* Make a buffer allocation, retrying once after running releases when
 * device memory ran out. */
accel_result device_buffer_create_locked(salvo_device *dev, const accel_buffer_desc *d,
                                         accel_buffer **out, accel_buffer_info *info);

/* Link an object (whose release entry is set) into the live ring; unlink
 * it (from its release function). Both under the lock. */
void live_link_locked(salvo_device *dev, live_link *l, retire_entry *release);
void live_unlink_locked(salvo_device *dev, live_link *l);

/* trace.c */
/* While the device traces: give st its trace records (once) and name it
 * in the trace. */
void stream_trace_attach_locked(salvo_stream *st);
/* st's batch in slot s was seen complete: write its events. Called before
 * the retire clock advances (the batch's kernels, whose names it writes,
 * are alive until then). */
void device_trace_retired_locked(salvo_device *dev, salvo_stream *st, slot *s);
/* Start tracing to $SALVO_TRACE (device create; a failure is logged). */
void device_trace_env_start(salvo_device *dev);
/* Close the trace if one is open; false when writing it failed. */
bool device_trace_stop_locked(salvo_device *dev);
static inline uint32_t slot_index(const salvo_stream *st, const slot *s)
{
    return (uint32_t)(s - st->slots);
}

/* stream.c */
/* Whether the batch with this serial is over (not recording, not in flight). */
bool batch_done_locked(salvo_device *dev, uint64_t serial);
/* The stream whose open or in-flight slot has this serial, or NULL. */
salvo_stream *batch_owner_locked(salvo_device *dev, uint64_t serial, slot **out);
/* Open a batch on st if none is (waiting for the ring slot if needed). */
salvo_status stream_open_locked(salvo_stream *st);
/* Withdraw the launches of st's open batch logged before offset: record
 * the batch again with only the ones after. */
salvo_status stream_withdraw_locked(salvo_stream *st, size_t offset);
/* Make the next launches of st wait for w on the device: the launches
 * already recorded are submitted first, so only later ones wait. */
salvo_status stream_add_wait_locked(salvo_stream *st, const slot_dep *w);
/* Submit st's open batch. report as for device_wait_slot_locked. */
salvo_status stream_submit_locked(salvo_stream *st, bool report);
/* Free a destroyed stream whose slots are all idle or abandoned. */
void stream_free_locked(salvo_stream *st);
bool stream_idle_locked(const salvo_stream *st);

/* Log where, return the code; a DEVICE_LOST status makes the loss sticky
 * at once (the work is abandoned at the next locked step). */
#define DEV_FAIL(dev, status, ...) device_noted((dev), SALVO_FAIL(&(dev)->log, (status), __VA_ARGS__))
/* Pass st through; when it says the device is lost, record that. */
salvo_status device_noted(salvo_device *dev, salvo_status st);
#define COUNT_ADD(dev, field, v) atomic_fetch_add_explicit(&(dev)->n.field, (v), memory_order_relaxed)
#define COUNT_SUB(dev, field, v) atomic_fetch_sub_explicit(&(dev)->n.field, (v), memory_order_relaxed)

#endif
