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
#include "core/graph.h"
#include "core/queue.h"
#include "core/reflect.h"
#include "core/resource.h"
#include "core/retire.h"
#include "core/scheduler.h"
#include "core/stream_engine.h"
#include "core/timing.h"
#include "core/trace.h"
#include "core/transfer.h"
#include "salvo/salvo.h"

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
    /* salvo_kernel_create validates given SPIR-V with SPIRV-Tools. */
    bool spirv_validate;

    queue q;                /* the engine: lock, serials, streams, waits, transfers */
    /* [q.lock] Sentinel of the live ring: every resource not yet
     * released, so device destroy can reclaim what was never destroyed. */
    resource_link live;
    /* [q.lock] Captures in progress (salvo_graph.next_capture), and the
     * graphs made so far (a graph's number and capture id). */
    salvo_graph *captures;
    uint32_t graph_count;
    /* [q.lock] Device destroy reclaims what the user never destroyed:
     * graphs then drop no holds (what they hold is reclaimed too). */
    bool reclaiming;
    int trace_env_slot;     /* [q.lock] which $SALVO_TRACE name it writes (1..), or 0 */
    /* [q.lock] Host calls and stream transfers (api/host_call.h), made at
     * first use; NULL before. */
    struct host_work *host_work;
};

/* A stream is its engine; the engine is first so that the engine, which
 * frees destroyed streams, frees this whole allocation. */
struct salvo_stream {
    stream_engine e;
    salvo_graph *capture; /* [lock] the capture its calls go to, or NULL */
    uint64_t last_call;   /* [lock] number of its latest host call (0: none) */
};

static inline salvo_device *stream_device(const salvo_stream *st)
{
    return (salvo_device *)((char *)st->e.q - offsetof(salvo_device, q));
}

/* Where a refusal goes before a call's objects are checked: the log of
 * the device of whichever object was given, stderr's sink where none was. */
static inline salvo_log_sink *device_sink(salvo_device *dev)
{
    return dev ? &dev->log : NULL;
}

/* Every object from here on begins with its resource header
 * (core/resource.h): holds, release, last use and the live ring are the
 * header's, and each is reached from it through its checked cast
 * (resource_as_*, below). */

/* A point in a stream: the batch holding it. serial 0: nothing to wait for. */
struct salvo_event {
    resource res;
    salvo_device *dev;
    uint64_t serial;          /* [lock] */
    stream_engine *stream;    /* [lock] valid while the batch is active */
    size_t log_offset;        /* [lock] where the point is in its batch's log */
    bool cancelled;           /* [lock] the launches before it were withdrawn */
    /* [lock] Recorded on a capturing stream: a point in that capture (its
     * id), not in a stream; 0 otherwise. */
    uint64_t capture_id;
    /* [lock] The GPU time of its latest record (salvo_event_elapsed);
     * NONE where the device has no timestamps. */
    timing_point time;
    bool untimed; /* SALVO_EVENT_DISABLE_TIMING: no timestamps; set once, at creation */
};

struct salvo_gate {
    resource res;
    salvo_device *dev;
    accel_timeline *timeline;
    _Atomic uint64_t value; /* highest value raised */
};

struct salvo_buffer {
    resource res;
    salvo_device *dev;
    accel_buffer *ab;
    accel_buffer_info ai;
    uint64_t size;
    salvo_domain domain;
    bool imported;
    /* Its device address was given out: kernels may reach it unbound. */
    _Atomic bool address_taken;
};

/* An image and a sampler are resources of their own kinds: no accel
 * buffer, nothing a buffer path may take for one. */
struct salvo_image {
    resource res;
    salvo_device *dev;
    uint64_t size; /* bytes of its texels, packed (the stats, the bounds) */
    accel_image *ai;
    salvo_image_desc desc; /* usage resolved; height, depth, layers at least 1 */
    uint32_t texel;        /* bytes a texel */
};

struct salvo_sampler {
    resource res;
    salvo_device *dev;
    accel_sampler *as;
    salvo_sampler_desc desc;
};

struct salvo_kernel {
    resource res;
    engine_kernel ek; /* what batches record */
    salvo_device *dev;
};

/* A graph: the engine's part, and what the public contract adds (the
 * capture's streams, the objects it keeps alive). */
typedef struct graph_hold {
    resource *res;      /* a buffer, an image or a sampler */
    const void *target; /* what the nodes' binds name it by (accel_bind_target, or a
                         * sampler beside an image) */
    uint32_t uses;      /* binds of the nodes that name it: at 0 it is let go */
    bool written;       /* some node writes it (or did) */
} graph_hold;

struct salvo_graph {
    resource res;
    engine_graph g; /* batch logs name it */
    salvo_device *dev;
    uint64_t capture_id;
    /* [lock] While capturing: the stream that began it, the streams that
     * joined it (an event of the capture waited for), the next capture. */
    salvo_stream *origin;
    salvo_stream **members;
    size_t member_count, member_cap;
    salvo_graph *next_capture;
    graph_hold *held; /* [lock] distinct: the buffers, images and samplers its nodes bind */
    size_t held_count, held_cap;
    salvo_kernel **kernels; /* [lock] distinct */
    size_t kernel_count, kernel_cap;
};

/* The checked casts from a header to its object: a header of another kind
 * aborts checked builds, naming both kinds. */
#define RESOURCE_CAST(type, name, kind)                                        \
    static inline type *resource_as_##name(resource *r)                       \
    {                                                                          \
        resource_check(r, kind);                                               \
        return (type *)((char *)r - offsetof(type, res));                      \
    }
RESOURCE_CAST(salvo_buffer, buffer, RESOURCE_BUFFER)
RESOURCE_CAST(salvo_image, image, RESOURCE_IMAGE)
RESOURCE_CAST(salvo_sampler, sampler, RESOURCE_SAMPLER)
RESOURCE_CAST(salvo_kernel, kernel, RESOURCE_KERNEL)
RESOURCE_CAST(salvo_event, event, RESOURCE_EVENT)
RESOURCE_CAST(salvo_gate, gate, RESOURCE_GATE)
RESOURCE_CAST(salvo_graph, graph, RESOURCE_GRAPH)
#undef RESOURCE_CAST

/* The kernel whose engine kernel batches record is ek. */
static inline salvo_kernel *kernel_of_engine(const engine_kernel *ek)
{
    salvo_kernel *k = (salvo_kernel *)((char *)ek - offsetof(salvo_kernel, ek));
    resource_check(&k->res, RESOURCE_KERNEL);
    return k;
}

/* launch_check.c: check a launch against what the kernel declares; fill
 * binds in the kernel's binding order, and held (LAUNCH_HELD_MAX of them)
 * with the resource each binds: held[j] its buffer, image or lone
 * sampler, and held[SALVO_MAX_BINDINGS + j] the sampler beside an image
 * (else NULL). Touches no state. */
enum { LAUNCH_HELD_MAX = 2 * SALVO_MAX_BINDINGS };
salvo_status launch_check(salvo_device *dev, salvo_kernel *k, const uint32_t groups[3],
                          const salvo_binding *bindings, uint32_t count, const void *push,
                          uint32_t push_size, accel_bind *binds, resource **held);
/* The same without the groups (an indirect launch's come from a buffer). */
salvo_status launch_check_bindings(salvo_device *dev, salvo_kernel *k,
                                   const salvo_binding *bindings, uint32_t count, const void *push,
                                   uint32_t push_size, accel_bind *binds, resource **held);
/* image.c: the region as a box (zero extents resolved) or a refusal
 * naming what (call names the caller); *bytes its packed size. */
salvo_status image_region_resolve(salvo_image *img, const salvo_image_region *in,
                                  const char *call, accel_image_region *out, uint64_t *bytes);
/* format.c: whether format is one of salvo's (not UNDEFINED); what its
 * texels read as in a kernel (REFLECT_TEXEL_*); the SALVO_IMAGE_* bits
 * the device offers for it. */
bool format_known(salvo_format format);
uint8_t image_texel_class(salvo_format format);
uint32_t image_support(salvo_device *dev, salvo_format format);

/* graph.c (all [lock]) */
/* The capture in progress with this id, or NULL. */
salvo_graph *graph_capture_find_locked(salvo_device *dev, uint64_t id) SALVO_REQUIRES(dev->q.lock);
/* st leaves its capture: a joined stream simply leaves; the stream that
 * began it abandons it (no graph is made). */
void graph_capture_leave_locked(salvo_stream *st) SALVO_REQUIRES(st->e.q->lock);
/* st (not capturing) joins capture gr: its work so far is submitted. */
salvo_status graph_capture_join_locked(salvo_graph *gr, salvo_stream *st)
    SALVO_REQUIRES(gr->dev->q.lock);
/* Take streams destroyed while the lock was busy out of their captures
 * (the stream that began one abandons it): at every capture call and
 * synchronize. */
void graph_captures_settle_locked(salvo_device *dev) SALVO_REQUIRES(dev->q.lock);
/* The capture st's calls go to (settled first), or NULL. */
salvo_graph *stream_capture_locked(salvo_stream *st) SALVO_REQUIRES(st->e.q->lock);
/* Whether a capture in progress has a node that writes r. */
bool graph_capture_writes_locked(salvo_device *dev, const resource *r)
    SALVO_REQUIRES(dev->q.lock);

/* The objects a command uses (stream_call.holds): of[i] the object of
 * the command's range i (a buffer, image or sampler; NULL: none); for a
 * kernel's work the kernel, and of[SALVO_MAX_BINDINGS + j] the sampler
 * beside image binding j (launch_check's bufs, LAUNCH_HELD_MAX). A
 * capture keeps them alive; each remembers the batch that uses it. */
typedef struct command_holds {
    salvo_kernel *kernel;
    resource *const *of;
} command_holds;

/* stream.c: the one way a call puts a command on st: under the lock, the
 * device's loss first, the captures settled (st may have left one), then
 * st's recorder or batch (stream_command_locked); each object of
 * call->holds (a command_holds) remembers the batch. */
salvo_status stream_call_command(salvo_stream *st, const command *c, const stream_call *call);

/* device.c */
salvo_status device_create_with_accel(const salvo_device_desc *desc, accel acc,
                                      salvo_device **out);
/* As device_create_with_accel, on the application's own objects when
 * import is non-NULL (accel_open_options.import; no device is chosen). */
salvo_status device_create_on(const salvo_device_desc *desc, accel acc, const void *import,
                              salvo_device **out);
/* Give identical devices distinct names (" #2", ...), in enumeration order. */
void device_entries_disambiguate(salvo_device_entry *e, uint32_t n);

/* Link a resource (its release set) into the live ring; unlink it (from
 * its release function). Both under the lock. */
void live_link_locked(salvo_device *dev, resource *r) SALVO_REQUIRES(dev->q.lock);
void live_unlink_locked(salvo_device *dev, resource *r) SALVO_REQUIRES(dev->q.lock);

/* gate.c: salvo_device_destroy, first: every live gate raised to the
 * highest value a stream waits for, as its destroy would. */
void gate_open_all_for_destroy(salvo_device *dev) SALVO_EXCLUDES(dev->q.lock);

/* trace.c */
/* Start tracing to $SALVO_TRACE (device create; a failure is logged). */
void device_trace_env_start(salvo_device *dev) SALVO_EXCLUDES(dev->q.lock);
/* Close the trace if one is open; false when writing it failed. */
bool device_trace_stop_locked(salvo_device *dev) SALVO_REQUIRES(dev->q.lock);

#define device_is_lost(dev) queue_is_lost(&(dev)->q)
#define device_lost_error(dev) queue_lost_error(&(dev)->q)
#define device_release(dev, e) queue_release(&(dev)->q, (e))
/* Let go of one hold on r (the free path; the last one queues the release). */
#define device_let_go(dev, r) resource_let_go((r), &(dev)->q)
/* Log where, return the code; a DEVICE_LOST status makes the loss sticky. */
#define DEV_FAIL(dev, status, ...) queue_noted(&(dev)->q, SALVO_FAIL(&(dev)->log, (status), __VA_ARGS__))
#define COUNT_ADD(dev, field, v) COUNTER_ADD(&(dev)->q.n, field, v)
#define COUNT_SUB(dev, field, v) COUNTER_SUB(&(dev)->q.n, field, v)

/* The failure of ev's batch where it was refused at its submit (it never
 * ran), logged for what; SALVO_OK otherwise. Events report it without
 * taking it from the batch's stream [q.lock]. */
salvo_status event_refused_locked(salvo_device *dev, const salvo_event *ev, const char *what)
    SALVO_REQUIRES(dev->q.lock);


#endif
