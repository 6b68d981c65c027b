#define _POSIX_C_SOURCE 200809L
#include "accel/accel_fault.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/diag.h"
#include "base/lock.h"

#define FAULT_OPS(X)                                                                              \
    X(enumerate) X(device_open) X(queue_wait_idle) X(buffer_create) X(pipeline_create)            \
    X(descpool_create) X(descpool_reset) X(cmd_create) X(cmd_begin) X(cmd_end) X(cmd_reset)       \
    X(cmd_create_reusable) X(cmd_begin_reusable) X(cmd_begin_resubmit) X(cmd_dispatch) X(fence_create) X(fence_reset) X(fence_status) X(fence_wait) X(submit)        \
    X(timeline_create) X(timeline_signal) X(timeline_value) X(timeline_wait)                    \
    X(image_create) X(image_view_create) X(sampler_create) X(cmd_image_init)                      \
    X(cmd_dispatch_indirect) X(cmd_fill_bytes)

enum fault_op {
#define X(name) OP_##name,
    FAULT_OPS(X)
#undef X
    OP_COUNT
};

const char *const accel_fault_ops[] = {
#define X(name) #name,
    FAULT_OPS(X)
#undef X
    NULL};

enum { MAX_RULES = 32, MAX_WAITED = 32 };

typedef struct fault_rule {
    enum fault_op op;
    uint64_t n;
    accel_result result;
    unsigned flags;
} fault_rule;

struct fault_accel {
    accel inner;
    const salvo_allocator *alloc;
    salvo_allocator alloc_copy;
    fault_rule rules[MAX_RULES];
    uint32_t rule_count;
    _Atomic bool lost;
    _Atomic uint64_t calls[OP_COUNT];
    _Atomic uint64_t injected;
    /* The device's log, learnt at device_open (set before any other call
     * can run): every injected failure is logged, so whoever set
     * SALVO_FAULT can tell that (and where) it fired. Failures injected
     * before the open (enumerate) have no log to go to. */
    salvo_log_sink log;
    /* A DEVICE_LOST was injected. Like a real loss it is sticky: every
     * later call says so (lost). The core now takes the work for over and
     * frees what it used, but the inner device is not lost and may still
     * run it: see settle_inner. */
    _Atomic bool loss_injected;
    /* The inner device, once open: an injected loss releases the gated
     * work on it at once, so no thread stays blocked in an inner wait for
     * a gate that the host can no longer raise. */
    _Atomic(accel_device *) dev;
    /* Orders every use of the inner queue (submit, wait idle, settle) and
     * guards waited: the highest value a submission waits for on each
     * timeline (a gate), so settle_inner can release that work. */
    salvo_mutex queue_lock;
    struct {
        accel_timeline *timeline;
        uint64_t value;
        /* A submission signals it (a stream's timeline, not a gate): its
         * waiters are released by that submission, never by the host. */
        bool device_signalled;
    } waited[MAX_WAITED];
    uint32_t waited_count;
};

static int op_index(const char *name)
{
    for (int i = 0; i < OP_COUNT; i++)
        if (strcmp(accel_fault_ops[i], name) == 0)
            return i;
    return -1;
}

/* Count the call and decide: ACCEL_SUCCESS to call through, else the
 * result to return; *after says to call through first and undo. */
static void release_gated(fault_accel *f);

static accel_result decide(fault_accel *f, enum fault_op op, bool *after)
{
    uint64_t n = atomic_fetch_add(&f->calls[op], 1) + 1;
    *after = false;
    if (atomic_load(&f->lost) && op != OP_enumerate) {
        atomic_fetch_add(&f->injected, 1);
        atomic_store(&f->loss_injected, true);
        SALVO_LOG(&f->log, SALVO_LOG_DEBUG, "fault injected: %s call %llu returns %s (lost before)",
                  accel_fault_ops[op], (unsigned long long)n,
                  accel_result_name(ACCEL_ERROR_DEVICE_LOST));
        return ACCEL_ERROR_DEVICE_LOST;
    }
    for (uint32_t i = 0; i < f->rule_count; i++) {
        const fault_rule *r = &f->rules[i];
        if (r->op != op || n < r->n || (n != r->n && !(r->flags & (FAULT_ALWAYS | FAULT_LOST))))
            continue;
        atomic_fetch_add(&f->injected, 1);
        /* vkResetDescriptorPool cannot fail: a result injected there once
         * is returned and ignored, and says nothing about the device
         * (":lost" still loses it from that call on). */
        bool says_lost = (r->flags & FAULT_LOST) ||
                         (r->result == ACCEL_ERROR_DEVICE_LOST && op != OP_descpool_reset);
        if (says_lost) {
            /* A lost device stays lost, as a real one does: every later
             * call says so, and no later signal reaches the inner device
             * behind a lost one. */
            atomic_store(&f->loss_injected, true);
            atomic_store(&f->lost, true);
            release_gated(f);
        }
        if (r->flags & FAULT_LOST) {
            SALVO_LOG(&f->log, SALVO_LOG_WARNING,
                      "fault injected: %s call %llu returns %s; the device is lost from now on",
                      accel_fault_ops[op], (unsigned long long)n,
                      accel_result_name(ACCEL_ERROR_DEVICE_LOST));
            return ACCEL_ERROR_DEVICE_LOST;
        }
        *after = (r->flags & FAULT_AFTER) != 0;
        SALVO_LOG(&f->log, SALVO_LOG_WARNING, "fault injected: %s call %llu returns %s",
                  accel_fault_ops[op], (unsigned long long)n, accel_result_name(r->result));
        return r->result;
    }
    return ACCEL_SUCCESS;
}

#define F(self) ((fault_accel *)(self))
#define IN(self) (F(self)->inner)
#define CALL(self, fn, ...) IN(self).vt->fn(IN(self).self, __VA_ARGS__)

/* An operation that creates nothing: fail instead of calling through. */
#define PLAIN(op, params, args)                                                                   \
    static accel_result f_##op params                                                             \
    {                                                                                             \
        bool after;                                                                               \
        accel_result r = decide(F(self), OP_##op, &after);                                        \
        return r != ACCEL_SUCCESS ? r : CALL args;                                                \
    }

/* An operation that creates *out: with FAULT_AFTER, create then destroy. */
#define CREATING(op, destroy, params, args)                                                       \
    static accel_result f_##op params                                                             \
    {                                                                                             \
        bool after;                                                                               \
        accel_result r = decide(F(self), OP_##op, &after);                                        \
        if (r != ACCEL_SUCCESS && !after)                                                         \
            return r;                                                                             \
        accel_result inner = CALL args;                                                           \
        if (r == ACCEL_SUCCESS || inner != ACCEL_SUCCESS)                                         \
            return inner;                                                                         \
        IN(self).vt->destroy(IN(self).self, dev, *out);                                           \
        *out = NULL;                                                                              \
        return r;                                                                                 \
    }

#define PASS(op, params, args)                                                                    \
    static void f_##op params { CALL args; }

/* After an injected loss the inner device keeps running what was
 * submitted, while the core, told the device is lost, destroys what that
 * work uses (legal on a really lost device, whose work is over). Make it
 * over: release what waits on a gate, then wait for the inner queue to be
 * idle, before anything is destroyed. */
/* Signal every gate the inner queue waits on up to what it waits for
 * (queue_lock held; a host raise signals under it too, so no value is
 * signalled twice). */
static void release_gated_locked(fault_accel *f, accel_device *dev)
    SALVO_REQUIRES(f->queue_lock)
{
    const accel_vtable *vt = f->inner.vt;
    for (uint32_t i = 0; i < f->waited_count; i++) {
        uint64_t v = 0;
        if (!f->waited[i].device_signalled &&
            vt->timeline_value(f->inner.self, dev, f->waited[i].timeline, &v) == ACCEL_SUCCESS &&
            v < f->waited[i].value)
            vt->timeline_signal(f->inner.self, dev, f->waited[i].timeline, f->waited[i].value);
    }
}

static void release_gated(fault_accel *f)
{
    accel_device *dev = atomic_load(&f->dev);
    if (!dev)
        return;
    salvo_mutex_lock(&f->queue_lock);
    release_gated_locked(f, dev);
    salvo_mutex_unlock(&f->queue_lock);
}

static void settle_inner(fault_accel *f, accel_device *dev)
{
    if (!dev || !atomic_load(&f->loss_injected))
        return;
    salvo_mutex_lock(&f->queue_lock);
    release_gated_locked(f, dev);
    f->inner.vt->queue_wait_idle(f->inner.self, dev);
    salvo_mutex_unlock(&f->queue_lock);
}

/* A destroy: settle first (see settle_inner). */
#define DESTROY(op, params, args)                                                                 \
    static void f_##op params                                                                     \
    {                                                                                             \
        settle_inner(F(self), dev);                                                               \
        CALL args;                                                                                \
    }

PLAIN(enumerate, (void *self, salvo_device_entry *e, uint32_t *count), (self, enumerate, e, count))

static accel_result f_device_open(void *self, const accel_open_options *opt, accel_device **out,
                                  accel_caps *caps)
{
    bool after;
    if (opt)
        F(self)->log = (salvo_log_sink){opt->log, opt->log_user};
    accel_result r = decide(F(self), OP_device_open, &after);
    if (r != ACCEL_SUCCESS && !after)
        return r;
    accel_result inner = CALL(self, device_open, opt, out, caps);
    if (r == ACCEL_SUCCESS && inner == ACCEL_SUCCESS)
        atomic_store(&F(self)->dev, *out);
    if (r == ACCEL_SUCCESS || inner != ACCEL_SUCCESS)
        return inner;
    CALL(self, device_close, *out);
    *out = NULL;
    return r;
}

static void f_device_close(void *self, accel_device *dev)
{
    settle_inner(F(self), dev);
    atomic_store(&F(self)->dev, NULL);
    CALL(self, device_close, dev);
}

static accel_result f_queue_wait_idle(void *self, accel_device *dev)
{
    bool after;
    accel_result r = decide(F(self), OP_queue_wait_idle, &after);
    if (r != ACCEL_SUCCESS)
        return r;
    salvo_mutex_lock(&F(self)->queue_lock);
    r = CALL(self, queue_wait_idle, dev);
    salvo_mutex_unlock(&F(self)->queue_lock);
    return r;
}

static accel_result f_buffer_create(void *self, accel_device *dev, const accel_buffer_desc *d,
                                    accel_buffer **out, accel_buffer_info *info)
{
    bool after;
    accel_result r = decide(F(self), OP_buffer_create, &after);
    if (r != ACCEL_SUCCESS && !after)
        return r;
    accel_result inner = CALL(self, buffer_create, dev, d, out, info);
    if (r == ACCEL_SUCCESS || inner != ACCEL_SUCCESS)
        return inner;
    CALL(self, buffer_destroy, dev, *out);
    *out = NULL;
    return r;
}

DESTROY(buffer_destroy, (void *self, accel_device *dev, accel_buffer *b),
        (self, buffer_destroy, dev, b))
CREATING(pipeline_create, pipeline_destroy,
         (void *self, accel_device *dev, const accel_pipeline_desc *d, accel_pipeline **out),
         (self, pipeline_create, dev, d, out))
DESTROY(pipeline_destroy, (void *self, accel_device *dev, accel_pipeline *p),
        (self, pipeline_destroy, dev, p))
CREATING(descpool_create, descpool_destroy,
         (void *self, accel_device *dev, uint32_t sets, uint32_t per, uint32_t images,
          accel_descpool **out),
         (self, descpool_create, dev, sets, per, images, out))
PLAIN(descpool_reset, (void *self, accel_device *dev, accel_descpool *p),
      (self, descpool_reset, dev, p))
DESTROY(descpool_destroy, (void *self, accel_device *dev, accel_descpool *p),
        (self, descpool_destroy, dev, p))
CREATING(cmd_create, cmd_destroy,
         (void *self, accel_device *dev, uint32_t queue, accel_cmd **out),
         (self, cmd_create, dev, queue, out))
DESTROY(cmd_destroy, (void *self, accel_device *dev, accel_cmd *c), (self, cmd_destroy, dev, c))
PLAIN(cmd_begin, (void *self, accel_device *dev, accel_cmd *c), (self, cmd_begin, dev, c))
CREATING(cmd_create_reusable, cmd_destroy,
         (void *self, accel_device *dev, uint32_t queue, accel_cmd **out),
         (self, cmd_create_reusable, dev, queue, out))
PLAIN(cmd_begin_reusable, (void *self, accel_device *dev, accel_cmd *c),
      (self, cmd_begin_reusable, dev, c))
/* Optional inner (absent there: refused here, and the core records each
 * time instead). */
static accel_result f_cmd_begin_resubmit(void *self, accel_device *dev, accel_cmd *c)
{
    if (!IN(self).vt->cmd_begin_resubmit)
        return ACCEL_ERROR_FEATURE_NOT_PRESENT;
    bool after;
    accel_result r = decide(F(self), OP_cmd_begin_resubmit, &after);
    return r != ACCEL_SUCCESS ? r : CALL(self, cmd_begin_resubmit, dev, c);
}
PASS(cmd_execute,
     (void *self, accel_device *dev, accel_cmd *c, accel_cmd *const *r, uint32_t n),
     (self, cmd_execute, dev, c, r, n))
PLAIN(cmd_end, (void *self, accel_device *dev, accel_cmd *c), (self, cmd_end, dev, c))
PLAIN(cmd_reset, (void *self, accel_device *dev, accel_cmd *c), (self, cmd_reset, dev, c))
PLAIN(cmd_dispatch,
      (void *self, accel_device *dev, accel_cmd *c, accel_pipeline *p, accel_descpool *pool,
       const accel_bind *b, uint32_t n, const uint32_t g[3], const void *push, uint32_t ps),
      (self, cmd_dispatch, dev, c, p, pool, b, n, g, push, ps))
PASS(cmd_barrier, (void *self, accel_device *dev, accel_cmd *c, accel_barrier k),
     (self, cmd_barrier, dev, c, k))
PASS(cmd_copy,
     (void *self, accel_device *dev, accel_cmd *c, accel_buffer *s, uint64_t so, accel_buffer *d,
      uint64_t dof, uint64_t size),
     (self, cmd_copy, dev, c, s, so, d, dof, size))
PASS(cmd_fill,
     (void *self, accel_device *dev, accel_cmd *c, accel_buffer *d, uint64_t off, uint64_t size,
      uint32_t value),
     (self, cmd_fill, dev, c, d, off, size, value))
static void *f_cmd_native(void *self, accel_device *dev, accel_cmd *c)
{
    return IN(self).vt->cmd_native ? CALL(self, cmd_native, dev, c) : NULL;
}

CREATING(fence_create, fence_destroy, (void *self, accel_device *dev, accel_fence **out),
         (self, fence_create, dev, out))
DESTROY(fence_destroy, (void *self, accel_device *dev, accel_fence *fe),
        (self, fence_destroy, dev, fe))
PLAIN(fence_reset, (void *self, accel_device *dev, accel_fence *fe), (self, fence_reset, dev, fe))
PLAIN(fence_status, (void *self, accel_device *dev, accel_fence *fe),
      (self, fence_status, dev, fe))
PLAIN(fence_wait, (void *self, accel_device *dev, accel_fence *fe, uint64_t t),
      (self, fence_wait, dev, fe, t))
static accel_result f_submit(void *self, accel_device *dev, const accel_submit_desc *d)
{
    bool after;
    fault_accel *f = F(self);
    accel_result r = decide(f, OP_submit, &after);
    if (r != ACCEL_SUCCESS)
        return r;
    salvo_mutex_lock(&f->queue_lock);
    /* Lost since decide (another thread's call): the gated work was
     * released then (release_gated, under this lock), so this submission
     * would be the one left waiting on a gate nobody raises. */
    if (atomic_load(&f->lost)) {
        salvo_mutex_unlock(&f->queue_lock);
        atomic_fetch_add(&f->injected, 1);
        SALVO_LOG(&f->log, SALVO_LOG_DEBUG,
                  "fault injected: submit returns %s (lost while the call began)",
                  accel_result_name(ACCEL_ERROR_DEVICE_LOST));
        return ACCEL_ERROR_DEVICE_LOST;
    }
    r = CALL(self, submit, dev, d);
    uint32_t n = d->wait_count + d->signal_count;
    for (uint32_t i = 0; r == ACCEL_SUCCESS && i < n; i++) {
        bool signal = i >= d->wait_count;
        const accel_sem_op *op = signal ? &d->signals[i - d->wait_count] : &d->waits[i];
        uint32_t j = 0;
        while (j < f->waited_count && f->waited[j].timeline != op->timeline)
            j++;
        if (j == f->waited_count) {
            if (j == MAX_WAITED)
                continue; /* more gates than tracked: those are not released */
            f->waited[f->waited_count++].timeline = op->timeline;
            f->waited[j].value = 0;
            f->waited[j].device_signalled = false;
        }
        if (signal)
            f->waited[j].device_signalled = true;
        else if (op->value > f->waited[j].value)
            f->waited[j].value = op->value;
    }
    salvo_mutex_unlock(&f->queue_lock);
    return r;
}
CREATING(timeline_create, timeline_destroy,
         (void *self, accel_device *dev, uint64_t initial, accel_timeline **out),
         (self, timeline_create, dev, initial, out))
static void f_timeline_destroy(void *self, accel_device *dev, accel_timeline *t)
{
    fault_accel *f = F(self);
    settle_inner(f, dev);
    salvo_mutex_lock(&f->queue_lock);
    for (uint32_t i = 0; i < f->waited_count; i++)
        if (f->waited[i].timeline == t)
            f->waited[i--] = f->waited[--f->waited_count];
    salvo_mutex_unlock(&f->queue_lock);
    CALL(self, timeline_destroy, dev, t);
}
/* Under queue_lock, as release_gated's signals: the two never signal one
 * value twice. */
static accel_result f_timeline_signal(void *self, accel_device *dev, accel_timeline *t, uint64_t v)
{
    bool after;
    fault_accel *f = F(self);
    accel_result r = decide(f, OP_timeline_signal, &after);
    if (r != ACCEL_SUCCESS)
        return r;
    salvo_mutex_lock(&f->queue_lock);
    if (atomic_load(&f->lost))
        r = ACCEL_ERROR_DEVICE_LOST;
    else
        r = CALL(self, timeline_signal, dev, t, v);
    salvo_mutex_unlock(&f->queue_lock);
    return r;
}
PLAIN(timeline_value, (void *self, accel_device *dev, accel_timeline *t, uint64_t *v),
      (self, timeline_value, dev, t, v))
PLAIN(timeline_wait, (void *self, accel_device *dev, accel_timeline *t, uint64_t v, uint64_t to),
      (self, timeline_wait, dev, t, v, to))

static void f_destroy(void *self)
{
    fault_accel *f = F(self);
    f->inner.vt->destroy(f->inner.self);
    salvo_mutex_destroy(&f->queue_lock);
    salvo_mem_free(f->alloc, f);
}

/* Images: optional in the inner accelerator (absent there, absent here). */
static uint32_t f_image_format_support(void *self, accel_device *dev, salvo_format format)
{
    return IN(self).vt->image_format_support ? CALL(self, image_format_support, dev, format) : 0;
}
CREATING(image_create, image_destroy,
         (void *self, accel_device *dev, const accel_image_desc *d, accel_image **out),
         (self, image_create, dev, d, out))
PLAIN(image_view_create, (void *self, accel_device *dev, accel_image *img),
      (self, image_view_create, dev, img))
DESTROY(image_destroy, (void *self, accel_device *dev, accel_image *img),
        (self, image_destroy, dev, img))
CREATING(sampler_create, sampler_destroy,
         (void *self, accel_device *dev, const accel_sampler_desc *d, accel_sampler **out),
         (self, sampler_create, dev, d, out))
DESTROY(sampler_destroy, (void *self, accel_device *dev, accel_sampler *smp),
        (self, sampler_destroy, dev, smp))
PLAIN(cmd_image_init, (void *self, accel_device *dev, accel_cmd *c, accel_image *img),
      (self, cmd_image_init, dev, c, img))
PASS(cmd_copy_image,
     (void *self, accel_device *dev, accel_cmd *c, accel_buffer *buf, uint64_t off,
      accel_image *img, const accel_image_region *r, bool to_image),
     (self, cmd_copy_image, dev, c, buf, off, img, r, to_image))

PLAIN(cmd_dispatch_indirect,
      (void *self, accel_device *dev, accel_cmd *c, accel_pipeline *p, accel_descpool *pool,
       const accel_bind *b, uint32_t n, accel_buffer *counts, uint64_t off, const void *push,
       uint32_t ps),
      (self, cmd_dispatch_indirect, dev, c, p, pool, b, n, counts, off, push, ps))
PLAIN(cmd_fill_bytes,
      (void *self, accel_device *dev, accel_cmd *c, accel_descpool *pool, accel_buffer *d,
       uint64_t off, uint64_t size, uint32_t word),
      (self, cmd_fill_bytes, dev, c, pool, d, off, size, word))
PASS(cmd_copy_image_to_image,
     (void *self, accel_device *dev, accel_cmd *c, accel_image *s,
      const accel_image_region *sr, accel_image *d, const accel_image_region *dr),
     (self, cmd_copy_image_to_image, dev, c, s, sr, d, dr))

/* Not a fault point: a query that cannot fail, true of the device as it
 * is (after an injected loss too: the memory stays held until freed). */
static void f_memory_info(void *self, accel_device *dev, salvo_memory_info *out)
{
    if (IN(self).vt->memory_info)
        CALL(self, memory_info, dev, out);
}

/* Not a fault point: it asks for handles and changes nothing. When the
 * inner accelerator has none, FEATURE_NOT_PRESENT: what the API makes of
 * an absent entry too (SALVO_ERROR_UNSUPPORTED). */
static accel_result f_native_handles(void *self, accel_device *dev, accel_buffer *buf,
                                     void *out_struct)
{
    if (!IN(self).vt->native_handles)
        return ACCEL_ERROR_FEATURE_NOT_PRESENT;
    return CALL(self, native_handles, dev, buf, out_struct);
}

/* Timestamp queries serve traces only: not fault points (a failure would
 * only lose GPU times from a trace, and no sweep enables tracing). They
 * call through; an inner accelerator without them has none here either. */
static accel_result f_querypool_create(void *self, accel_device *dev, uint32_t count,
                                       accel_querypool **out)
{
    *out = NULL;
    if (!IN(self).vt->querypool_create)
        return ACCEL_ERROR_FEATURE_NOT_PRESENT;
    return CALL(self, querypool_create, dev, count, out);
}
static void f_querypool_destroy(void *self, accel_device *dev, accel_querypool *q)
{
    if (!q)
        return;
    settle_inner(F(self), dev);
    CALL(self, querypool_destroy, dev, q);
}
PASS(cmd_querypool_reset,
     (void *self, accel_device *dev, accel_cmd *c, accel_querypool *q, uint32_t first,
      uint32_t count),
     (self, cmd_querypool_reset, dev, c, q, first, count))
PASS(cmd_timestamp,
     (void *self, accel_device *dev, accel_cmd *c, accel_querypool *q, uint32_t index, bool end),
     (self, cmd_timestamp, dev, c, q, index, end))
static accel_result f_querypool_results(void *self, accel_device *dev, accel_querypool *q,
                                        uint32_t first, uint32_t count, uint64_t *ticks)
{
    return CALL(self, querypool_results, dev, q, first, count, ticks);
}

static accel_result f_querypool_host_reset(void *self, accel_device *dev, accel_querypool *q,
                                           uint32_t first, uint32_t count)
{
    if (!IN(self).vt->querypool_host_reset)
        return ACCEL_ERROR_FEATURE_NOT_PRESENT;
    return CALL(self, querypool_host_reset, dev, q, first, count);
}

static const accel_vtable fault_vtable = {
    .name = "fault",
    .enumerate = f_enumerate,
    .device_open = f_device_open,
    .device_close = f_device_close,
    .queue_wait_idle = f_queue_wait_idle,
    .buffer_create = f_buffer_create,
    .buffer_destroy = f_buffer_destroy,
    .pipeline_create = f_pipeline_create,
    .pipeline_destroy = f_pipeline_destroy,
    .descpool_create = f_descpool_create,
    .descpool_reset = f_descpool_reset,
    .descpool_destroy = f_descpool_destroy,
    .cmd_create = f_cmd_create,
    .cmd_destroy = f_cmd_destroy,
    .cmd_begin = f_cmd_begin,
    .cmd_end = f_cmd_end,
    .cmd_reset = f_cmd_reset,
    .cmd_dispatch = f_cmd_dispatch,
    .cmd_barrier = f_cmd_barrier,
    .cmd_copy = f_cmd_copy,
    .cmd_fill = f_cmd_fill,
    .cmd_native = f_cmd_native,
    .cmd_create_reusable = f_cmd_create_reusable,
    .cmd_begin_reusable = f_cmd_begin_reusable,
    .cmd_begin_resubmit = f_cmd_begin_resubmit,
    .cmd_execute = f_cmd_execute,
    .fence_create = f_fence_create,
    .fence_destroy = f_fence_destroy,
    .fence_reset = f_fence_reset,
    .fence_status = f_fence_status,
    .fence_wait = f_fence_wait,
    .submit = f_submit,
    .timeline_create = f_timeline_create,
    .timeline_destroy = f_timeline_destroy,
    .timeline_signal = f_timeline_signal,
    .timeline_value = f_timeline_value,
    .timeline_wait = f_timeline_wait,
    .destroy = f_destroy,
    .native_handles = f_native_handles,
    .memory_info = f_memory_info,
    .image_format_support = f_image_format_support,
    .image_create = f_image_create,
    .image_view_create = f_image_view_create,
    .image_destroy = f_image_destroy,
    .sampler_create = f_sampler_create,
    .sampler_destroy = f_sampler_destroy,
    .cmd_image_init = f_cmd_image_init,
    .cmd_copy_image = f_cmd_copy_image,
    .querypool_create = f_querypool_create,
    .querypool_destroy = f_querypool_destroy,
    .cmd_querypool_reset = f_cmd_querypool_reset,
    .cmd_timestamp = f_cmd_timestamp,
    .querypool_results = f_querypool_results,
    .querypool_host_reset = f_querypool_host_reset,
    .cmd_dispatch_indirect = f_cmd_dispatch_indirect,
    .cmd_fill_bytes = f_cmd_fill_bytes,
    .cmd_copy_image_to_image = f_cmd_copy_image_to_image,
};

bool accel_fault_wrap(const salvo_allocator *alloc, accel inner, accel *out, fault_accel **handle)
{
    fault_accel *f = salvo_mem_calloc(alloc, 1, sizeof *f);
    if (!f)
        return false;
    if (salvo_mutex_init(&f->queue_lock) != 0) {
        salvo_mem_free(alloc, f);
        return false;
    }
    if (alloc) {
        f->alloc_copy = *alloc;
        f->alloc = &f->alloc_copy;
    }
    f->inner = inner;
    *out = (accel){&fault_vtable, f};
    if (handle)
        *handle = f;
    return true;
}

bool accel_fault_add(fault_accel *f, const char *op, uint64_t n, accel_result result,
                     unsigned flags)
{
    int i = op ? op_index(op) : -1;
    if (i < 0 || n == 0 || f->rule_count == MAX_RULES)
        return false;
    f->rules[f->rule_count++] = (fault_rule){(enum fault_op)i, n, result, flags};
    return true;
}

static bool parse_one(fault_accel *f, char *item, char *reason, size_t size)
{
    char *save = NULL;
    char *op = strtok_r(item, ":", &save);
    char *n = strtok_r(NULL, ":", &save);
    char *res = strtok_r(NULL, ":", &save);
    if (!op || !n || !res) {
        snprintf(reason, size, "fault '%s': want op:n:result", item);
        return false;
    }
    char *end = NULL;
    unsigned long long count = strtoull(n, &end, 10);
    if (*end || count == 0) {
        snprintf(reason, size, "fault '%s': n must be a positive integer", op);
        return false;
    }
    unsigned flags = 0;
    accel_result r = ACCEL_ERROR_DEVICE_LOST;
    if (strcmp(res, "lost") == 0)
        flags |= FAULT_LOST;
    else if (!accel_result_parse(res, &r) || r == ACCEL_SUCCESS) {
        snprintf(reason, size, "fault '%s': unknown result '%s'", op, res);
        return false;
    }
    for (char *flag; (flag = strtok_r(NULL, ":", &save));) {
        if (strcmp(flag, "always") == 0)
            flags |= FAULT_ALWAYS;
        else if (strcmp(flag, "after") == 0)
            flags |= FAULT_AFTER;
        else {
            snprintf(reason, size, "fault '%s': unknown flag '%s'", op, flag);
            return false;
        }
    }
    if (!accel_fault_add(f, op, count, r, flags)) {
        snprintf(reason, size, "fault: unknown operation '%s' (or too many rules)", op);
        return false;
    }
    return true;
}

bool accel_fault_parse(fault_accel *f, const char *spec, char *reason, size_t reason_size)
{
    char buf[1024];
    if (!spec || strlen(spec) >= sizeof buf) {
        snprintf(reason, reason_size, "fault spec missing or too long");
        return false;
    }
    memcpy(buf, spec, strlen(spec) + 1);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save))
        if (!parse_one(f, item, reason, reason_size))
            return false;
    return true;
}

uint64_t accel_fault_injected(const fault_accel *f)
{
    return atomic_load(&((fault_accel *)f)->injected);
}

uint64_t accel_fault_calls(const fault_accel *f, const char *op)
{
    int i = op_index(op);
    return i < 0 ? 0 : atomic_load(&((fault_accel *)f)->calls[i]);
}

void accel_fault_clear(fault_accel *f)
{
    f->rule_count = 0;
    atomic_store(&f->lost, false);
}
