/*
 * The public objects as the library sees them: each holds what the engine
 * in core/ works on (the device its queue, a stream its stream engine, a
 * kernel what batches record) and adds what the public contracts need.
 * Locking: the queue's (core/queue.h has the whole order).
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
#include "core/queue.h"
#include "core/reflect.h"
#include "core/retire.h"
#include "core/stream_engine.h"
#include "core/trace.h"
#include "core/transfer.h"
#include "salvo/salvo.h"

/* Membership in the device's list of objects the user has not released,
 * so device destroy can reclaim what was never destroyed [lock]. */
typedef struct live_link {
    struct live_link *prev, *next;
    retire_entry *release;
} live_link;

struct salvo_device {
    salvo_allocator allocator_copy;
    const salvo_allocator *alloc; /* &allocator_copy or NULL */
    salvo_log_sink log;
    salvo_log_fn user_log;
    void *user_log_user;

    accel acc;
    accel_device *adev;
    accel_caps caps;
    salvo_device_info info;

    uint32_t batch_size; /* streams' default */
    bool force_staging;

    queue q;                /* the engine: lock, serials, streams, waits, transfers */
    live_link live;         /* [q.lock] sentinel of the live objects' ring */
    int trace_env_slot;     /* [q.lock] which $SALVO_TRACE name it writes (1..), or 0 */
};

/* A stream is its engine; the engine is first so that the engine, which
 * frees destroyed streams, frees this whole allocation. */
struct salvo_stream {
    stream_engine e;
};

static inline salvo_device *stream_device(const salvo_stream *st)
{
    return (salvo_device *)((char *)st->e.q - offsetof(salvo_device, q));
}

/* A point in a stream: the batch holding it. serial 0: nothing to wait for. */
struct salvo_event {
    salvo_device *dev;
    uint64_t serial;          /* [lock] */
    stream_engine *stream;    /* [lock] valid while the batch is active */
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
    engine_kernel ek; /* what batches record */
    salvo_device *dev;
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
/* Give identical devices distinct names (" #2", ...), in enumeration order. */
void device_entries_disambiguate(salvo_device_entry *e, uint32_t n);

/* Link an object (whose release entry is set) into the live ring; unlink
 * it (from its release function). Both under the lock. */
void live_link_locked(salvo_device *dev, live_link *l, retire_entry *release);
void live_unlink_locked(salvo_device *dev, live_link *l);

/* trace.c */
/* Start tracing to $SALVO_TRACE (device create; a failure is logged). */
void device_trace_env_start(salvo_device *dev);
/* Close the trace if one is open; false when writing it failed. */
bool device_trace_stop_locked(salvo_device *dev);

#define device_is_lost(dev) queue_is_lost(&(dev)->q)
#define device_lost_error(dev) queue_lost_error(&(dev)->q)
#define device_release(dev, e) queue_release(&(dev)->q, (e))
/* Log where, return the code; a DEVICE_LOST status makes the loss sticky. */
#define DEV_FAIL(dev, status, ...) queue_noted(&(dev)->q, SALVO_FAIL(&(dev)->log, (status), __VA_ARGS__))
#define COUNT_ADD(dev, field, v) COUNTER_ADD(&(dev)->q.n, field, v)
#define COUNT_SUB(dev, field, v) COUNTER_SUB(&(dev)->q.n, field, v)

#endif
