/* Streams and the batch recorder: launches go into the stream's open slot,
 * which is submitted when full, at flush and at synchronize. */
#include <string.h>

#include "api/internal.h"

#define VT(dev) ((dev)->acc.vt)
#define SELF(dev) ((dev)->acc.self)

static void barrier(salvo_device *dev, slot *s, accel_barrier kind)
{
    VT(dev)->cmd_barrier(SELF(dev), dev->adev, s->cmd, kind);
    COUNT_ADD(dev, barriers_emitted, 1);
}

salvo_status salvo_stream_create(salvo_device *dev, const salvo_stream_desc *desc,
                                 salvo_stream **out)
{
    if (!out)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "stream_create: out is NULL");
    *out = NULL;
    if (!dev)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "stream_create: device is NULL");
    if (device_is_lost(dev))
        return device_lost_error(dev);
    salvo_stream *st = salvo_mem_calloc(dev->alloc, 1, sizeof *st);
    if (!st)
        return DEV_FAIL(dev, SALVO_ERROR_OUT_OF_HOST_MEMORY, "stream_create: out of host memory");
    st->dev = dev;
    batch_log_init(&st->log, dev->alloc);
    st->batch_size = desc && desc->batch_size ? desc->batch_size : dev->batch_size;
    uint32_t first = desc && desc->first_batch ? desc->first_batch : FIRST_BATCH;
    st->first_batch = first < st->batch_size ? first : st->batch_size;
    st->batch_limit = st->first_batch;
    atomic_init(&st->destroyed, false);
    uint32_t sets = st->batch_size < POOL_MAX_SETS ? st->batch_size : POOL_MAX_SETS;
    /* Room for at least one launch of the widest kernel. */
    uint32_t per_set = POOL_BINDINGS_PER_SET;
    if (sets * per_set < SALVO_MAX_BINDINGS)
        per_set = (SALVO_MAX_BINDINGS + sets - 1) / sets;
    for (int i = 0; i < STREAM_SLOTS; i++) {
        salvo_status r = device_noted(dev, slot_init(&st->slots[i], &dev->env, sets, per_set));
        if (r != SALVO_OK) {
            for (int j = 0; j < i; j++)
                slot_destroy(&st->slots[j], &dev->env);
            salvo_mem_free(dev->alloc, st);
            return r;
        }
    }
    pthread_mutex_lock(&dev->lock);
    st->next = dev->streams;
    if (dev->streams)
        dev->streams->prev = st;
    dev->streams = st;
    st->number = ++dev->stream_count;
    stream_trace_attach_locked(st);
    pthread_mutex_unlock(&dev->lock);
    COUNT_ADD(dev, live_streams, 1);
    salvo_clear_error();
    *out = st;
    return SALVO_OK;
}

bool stream_idle_locked(const salvo_stream *st)
{
    if (st->open)
        return false;
    for (int i = 0; i < STREAM_SLOTS; i++)
        if (slot_active(&st->slots[i]))
            return false;
    return true;
}

void stream_free_locked(salvo_stream *st)
{
    salvo_device *dev = st->dev;
    if (st->prev)
        st->prev->next = st->next;
    else
        dev->streams = st->next;
    if (st->next)
        st->next->prev = st->prev;
    if (st->deferred != SALVO_OK)
        SALVO_LOG(&dev->log, SALVO_LOG_ERROR, "failure on a destroyed stream: %s",
                  st->deferred_msg);
    trace_stream_destroy(st->trace, &dev->env);
    for (int i = 0; i < STREAM_SLOTS; i++)
        slot_destroy(&st->slots[i], &dev->env);
    batch_log_free(&st->log);
    salvo_mem_free(dev->alloc, st);
}

bool batch_done_locked(salvo_device *dev, uint64_t serial)
{
    return serial == 0 || batch_owner_locked(dev, serial, NULL) == NULL;
}

salvo_stream *batch_owner_locked(salvo_device *dev, uint64_t serial, slot **out)
{
    for (salvo_stream *st = dev->streams; st; st = st->next)
        for (int i = 0; i < STREAM_SLOTS; i++)
            if (slot_active(&st->slots[i]) && st->slots[i].serial == serial) {
                if (out)
                    *out = &st->slots[i];
                return st;
            }
    return NULL;
}

void salvo_stream_destroy(salvo_stream *st)
{
    if (!st)
        return;
    /* The free path: try-lock only, submit nothing. A stream with work
     * left is finished by the next drain point. Once destroyed is set
     * without the lock, any drain point on another thread may free the
     * stream: it is the last thing this call does to st. */
    salvo_device *dev = st->dev;
    if (pthread_mutex_trylock(&dev->lock) != 0) {
        if (!atomic_exchange(&st->destroyed, true))
            COUNT_SUB(dev, live_streams, 1);
        return;
    }
    if (!atomic_exchange(&st->destroyed, true)) {
        COUNT_SUB(dev, live_streams, 1);
        if (stream_idle_locked(st) && atomic_load(&dev->waiters) == 0)
            stream_free_locked(st);
    }
    pthread_mutex_unlock(&dev->lock);
}

salvo_status stream_submit_locked(salvo_stream *st, bool report)
{
    salvo_device *dev = st->dev;
    slot *s = st->open;
    if (!s)
        return SALVO_OK;
    st->open = NULL;
    if (device_is_lost(dev) || s->state == SLOT_ABANDONED)
        return device_lost_error(dev);
    /* The host may read what this batch wrote once its fence signals. */
    barrier(dev, s, ACCEL_BARRIER_ALL_HOST);
    uint32_t n = s->launches;
    uint64_t t0 = trace_submit_begin(st->trace, slot_index(st, s), &dev->env, s->cmd);
    salvo_status r = slot_submit(s, &dev->env);
    trace_submit_end(st->trace, slot_index(st, s), t0, r == SALVO_OK);
    if (r == SALVO_OK) {
        COUNT_ADD(dev, batches_submitted, 1);
        st->last_serial = s->serial;
        st->cur = (st->cur + 1) % STREAM_SLOTS;
        return SALVO_OK;
    }
    if (!slot_active(s))
        COUNT_SUB(dev, launches_pending, n);
    if (r == SALVO_ERROR_DEVICE_LOST)
        device_mark_lost_locked(dev);
    if (!report)
        stream_defer_locked(st, r);
    return r;
}

/* A batch begins with a barrier over everything before it: nothing of
 * the batch is unordered yet. */
static void order_reset(salvo_stream *st)
{
    hazard_reset(&st->hazards);
    st->copied = false;
    hazard_reset(&st->compute_unordered);
    st->compute_overflow = false;
}

/* Make the stream's next slot ready to record: wait for its previous
 * submission if it is still in flight, then begin. */
salvo_status stream_open_locked(salvo_stream *st)
{
    salvo_device *dev = st->dev;
    if (st->open)
        return SALVO_OK;
    slot *s = &st->slots[st->cur];
    if (s->state == SLOT_IN_FLIGHT) {
        salvo_status r = device_wait_slot_locked(dev, st, s, true);
        /* Without a free slot nothing can be recorded: the caller's work
         * did not happen, which a positive status would not say. */
        if (r == SALVO_TIMEOUT)
            return DEV_FAIL(dev, SALVO_ERROR_TIMEOUT,
                            "no free batch slot: the stream's oldest batch (serial %llu) did not "
                            "complete within the fence timeout; nothing was recorded",
                            (unsigned long long)s->serial);
        if (r != SALVO_OK)
            return r;
    }
    /* Another thread may still be inside a wait on this slot's fence (it
     * saw the work end, or is about to): begin resets the fence. */
    while (s->waiters)
        pthread_cond_wait(&dev->slot_cv, &dev->lock);
    if (device_is_lost(dev) || s->state == SLOT_ABANDONED)
        return device_lost_error(dev);
    accel_sem_op none = {NULL, 0};
    salvo_status r = slot_begin(s, &dev->env, atomic_fetch_add(&dev->next_serial, 1), none);
    if (r != SALVO_OK) {
        if (device_noted(dev, r) == SALVO_ERROR_DEVICE_LOST)
            device_mark_lost_locked(dev);
        return r;
    }
    st->open = s;
    /* Earlier batches (and staged transfers) wrote what this one may read:
     * order against everything submitted before. */
    barrier(dev, s, ACCEL_BARRIER_WORK);
    trace_batch_open(st->trace, slot_index(st, s), s->serial, dev->trace, &dev->env, s->cmd);
    order_reset(st);
    batch_log_clear(&st->log);
    st->batch_groups = 0;
    /* Waits asked for while no batch was open: the slot has room for as
     * many as the pending list holds. */
    for (uint32_t i = 0; i < st->pending_wait_count; i++)
        slot_add_wait(s, &dev->env, &st->pending_waits[i]);
    st->pending_wait_count = 0;
    return SALVO_OK;
}

salvo_status stream_add_wait_locked(salvo_stream *st, const slot_dep *w)
{
    if (st->open && st->open->launches > 0) {
        salvo_status r = stream_submit_locked(st, true);
        if (r != SALVO_OK)
            return r;
    }
    if (st->open)
        return slot_add_wait(st->open, &st->dev->env, w);
    /* No batch open: keep the wait for the next one rather than open one
     * now, which could mean waiting for a free slot. A wait is therefore
     * always registered when this succeeds. One entry per timeline, the
     * higher value kept, as the slot does. */
    for (uint32_t i = 0; i < st->pending_wait_count; i++) {
        slot_dep *p = &st->pending_waits[i];
        if (p->op.timeline == w->op.timeline && p->serial == w->serial) {
            if (w->op.value > p->op.value)
                p->op.value = w->op.value;
            return SALVO_OK;
        }
    }
    if (st->pending_wait_count == SLOT_MAX_WAITS)
        return DEV_FAIL(st->dev, SALVO_ERROR_INVALID_STATE,
                        "stream_wait_gate: a batch waits for at most %d gates; launch or flush "
                        "before waiting for another",
                        SLOT_MAX_WAITS);
    st->pending_waits[st->pending_wait_count++] = *w;
    return SALVO_OK;
}

/* Check a launch against what the kernel declares; fill binds in the
 * kernel's binding order. Touches no state. */
static salvo_status check_launch(salvo_stream *st, salvo_kernel *k, const uint32_t groups[3],
                                 const salvo_binding *bindings, uint32_t count, const void *push,
                                 uint32_t push_size, accel_bind *binds, salvo_buffer **bufs)
{
    salvo_device *dev = st->dev;
    const salvo_device_info *info = &dev->info;
    if (k->dev != dev)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "launch of kernel '%s': the kernel belongs to another device", k->name);
    if (!groups)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "launch of kernel '%s': groups is NULL",
                        k->name);
    for (int i = 0; i < 3; i++)
        if (groups[i] == 0 || groups[i] > info->max_workgroup_count[i])
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "launch of kernel '%s': groups[%d] = %u is outside 1..%u", k->name, i,
                            groups[i], info->max_workgroup_count[i]);
    if (push_size != k->refl.push_constant_size)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "launch of kernel '%s': push_size %u, the kernel declares %u", k->name,
                        push_size, k->refl.push_constant_size);
    if (push_size && !push)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "launch of kernel '%s': push is NULL",
                        k->name);
    if (count && !bindings)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "launch of kernel '%s': bindings is NULL", k->name);
    if (count < k->refl.binding_count) {
        /* Name the first declared binding that is missing. */
        for (uint32_t j = 0; j < k->refl.binding_count; j++) {
            uint32_t i = 0;
            while (i < count && bindings[i].binding != k->refl.bindings[j].binding)
                i++;
            if (i == count)
                return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                                "launch of kernel '%s': binding %u is missing (%u given, the "
                                "kernel declares %u)",
                                k->name, k->refl.bindings[j].binding, count,
                                k->refl.binding_count);
        }
    }
    if (count > k->refl.binding_count) {
        /* Name one that the kernel does not declare (or a repeat). */
        for (uint32_t i = 0; i < count; i++) {
            uint32_t j = 0;
            while (j < k->refl.binding_count && k->refl.bindings[j].binding != bindings[i].binding)
                j++;
            if (j == k->refl.binding_count)
                return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                                "launch of kernel '%s': binding %u is not declared by the kernel",
                                k->name, bindings[i].binding);
        }
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "launch of kernel '%s': %u bindings given, the kernel declares %u; one "
                        "is given twice",
                        k->name, count, k->refl.binding_count);
    }
    for (uint32_t i = 0; i < count; i++)
        binds[i].buffer = NULL;
    for (uint32_t i = 0; i < count; i++) {
        const salvo_binding *b = &bindings[i];
        uint32_t j = 0;
        while (j < count && k->refl.bindings[j].binding != b->binding)
            j++;
        if (j == count)
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "launch of kernel '%s': binding %u is not declared by the kernel",
                            k->name, b->binding);
        if (binds[j].buffer)
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "launch of kernel '%s': binding %u given twice", k->name, b->binding);
        salvo_buffer *buf = b->buffer;
        if (!buf)
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "launch of kernel '%s': binding %u has no buffer", k->name, b->binding);
        if (buf->dev != dev)
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "launch of kernel '%s': binding %u: buffer of another device", k->name,
                            b->binding);
        uint64_t size = b->size ? b->size : (b->offset < buf->size ? buf->size - b->offset : 0);
        if (b->offset >= buf->size || size == 0 || size > buf->size - b->offset)
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "launch of kernel '%s': binding %u: range [%llu, +%llu) outside the "
                            "buffer of %llu bytes",
                            k->name, b->binding, (unsigned long long)b->offset,
                            (unsigned long long)b->size, (unsigned long long)buf->size);
        bool uniform = k->refl.bindings[j].uniform;
        uint64_t align = uniform ? info->min_uniform_buffer_offset_alignment
                                 : info->min_storage_buffer_offset_alignment;
        if (align > 1 && b->offset % align)
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "launch of kernel '%s': binding %u: offset %llu is not a multiple of "
                            "%llu (the device's %s buffer offset alignment)",
                            k->name, b->binding, (unsigned long long)b->offset,
                            (unsigned long long)align, uniform ? "uniform" : "storage");
        uint32_t range = uniform ? info->max_uniform_buffer_range : info->max_storage_buffer_range;
        if (size > range)
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "launch of kernel '%s': binding %u: %llu bytes exceed the device's "
                            "%s buffer range %u",
                            k->name, b->binding, (unsigned long long)size,
                            uniform ? "uniform" : "storage", range);
        binds[j] = (accel_bind){
            .binding = b->binding,
            .uniform = k->refl.bindings[j].uniform,
            .buffer = buf->ab,
            .offset = b->offset,
            .size = size,
        };
        bufs[j] = buf;
    }
    return SALVO_OK;
}

static void note_use(salvo_buffer *buf, uint64_t serial)
{
    uint64_t old = atomic_load_explicit(&buf->last_serial, memory_order_relaxed);
    while (old < serial && !atomic_compare_exchange_weak_explicit(
                               &buf->last_serial, &old, serial, memory_order_relaxed,
                               memory_order_relaxed)) {
    }
}

/* One range a launch or copy touches. */
typedef struct access {
    const void *buffer;
    uint64_t begin, end;
    salvo_access how;
} access;

static bool conflicts(const hazard_set *h, const access *a, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (hazard_conflicts(h, a[i].buffer, a[i].begin, a[i].end, a[i].how & SALVO_ACCESS_READ,
                             a[i].how & SALVO_ACCESS_WRITE))
            return true;
    return false;
}

/* Put a barrier before this work only if it touches what earlier work of
 * the batch wrote, or writes what earlier work read. A copy also waits
 * for dispatches that only a compute-only barrier stands between. */
static void order_work_locked(salvo_stream *st, const access *a, uint32_t n, bool copy)
{
    hazard_set *h = &st->hazards;
    /* A barrier between dispatches only needs the compute stage; one that
     * involves a copy covers the transfer stage too. */
    accel_barrier kind = copy || st->copied ? ACCEL_BARRIER_WORK : ACCEL_BARRIER_COMPUTE_COMPUTE;
    bool conflict = conflicts(h, a, n) ||
                    (copy && (st->compute_overflow || conflicts(&st->compute_unordered, a, n)));
    for (int pass = 0; pass < 2; pass++) {
        if (conflict) {
            barrier(st->dev, st->open, kind);
            hazard_reset(h);
            st->copied = false;
            if (kind == ACCEL_BARRIER_WORK) {
                hazard_reset(&st->compute_unordered);
                st->compute_overflow = false;
            }
        }
        conflict = false;
        /* a full set is treated as a conflict: barrier, then start over */
        for (uint32_t i = 0; i < n && !conflict; i++)
            conflict = !hazard_add(h, a[i].buffer, a[i].begin, a[i].end,
                                   a[i].how & SALVO_ACCESS_WRITE);
        if (!conflict) {
            st->copied |= copy;
            for (uint32_t i = 0; i < n && !copy && !st->compute_overflow; i++)
                st->compute_overflow = !hazard_add(&st->compute_unordered, a[i].buffer,
                                                   a[i].begin, a[i].end,
                                                   a[i].how & SALVO_ACCESS_WRITE);
            return;
        }
    }
}

static void order_launch_locked(salvo_stream *st, const salvo_kernel *k, const accel_bind *binds)
{
    access a[SALVO_MAX_BINDINGS];
    uint32_t n = k->refl.binding_count;
    for (uint32_t i = 0; i < n; i++)
        a[i] = (access){binds[i].buffer, binds[i].offset, binds[i].offset + binds[i].size,
                        binds[i].uniform ? SALVO_ACCESS_READ : k->refl.bindings[i].access};
    order_work_locked(st, a, n, false);
}

/* Record one dispatch into the open slot, submitting first when its
 * descriptor pool is full. */
static salvo_status record_locked(salvo_stream *st, salvo_kernel *k, const uint32_t groups[3],
                                  const accel_bind *binds, const void *push, uint32_t push_size)
{
    salvo_device *dev = st->dev;
    for (int attempt = 0;; attempt++) {
        salvo_status r = stream_open_locked(st);
        if (r != SALVO_OK)
            return r;
        slot *s = st->open;
        order_launch_locked(st, k, binds);
        trace_launch_mark(st->trace, slot_index(st, s), &dev->env, s->cmd, false);
        accel_result ar = VT(dev)->cmd_dispatch(SELF(dev), dev->adev, s->cmd, k->pipe, s->pool,
                                                binds, k->refl.binding_count, groups, push,
                                                push_size);
        if (ar == ACCEL_SUCCESS) {
            trace_launch_mark(st->trace, slot_index(st, s), &dev->env, s->cmd, true);
            batch_log_append(&st->log, k, groups, binds, k->refl.binding_count, push, push_size);
            return SALVO_OK;
        }
        if (ar == ACCEL_ERROR_OUT_OF_POOL_MEMORY && attempt == 0 && s->launches > 0) {
            r = stream_submit_locked(st, true);
            if (r != SALVO_OK)
                return r;
            continue;
        }
        if (ar == ACCEL_ERROR_DEVICE_LOST)
            device_mark_lost_locked(dev);
        return DEV_FAIL(dev, salvo_status_from_accel(ar), "launch of kernel '%s': not recorded (%s)",
                        k->name, accel_result_name(ar));
    }
}

salvo_status salvo_launch(salvo_stream *st, salvo_kernel *k, const uint32_t groups[3],
                          const salvo_binding *bindings, uint32_t binding_count, const void *push,
                          uint32_t push_size)
{
    if (!st || !k)
        return SALVO_FAIL(st ? &st->dev->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "launch: %s is NULL", st ? "kernel" : "stream");
    salvo_device *dev = st->dev;
    accel_bind binds[SALVO_MAX_BINDINGS];
    salvo_buffer *bufs[SALVO_MAX_BINDINGS];
    salvo_status r = check_launch(st, k, groups, bindings, binding_count, push, push_size, binds,
                                  bufs);
    if (r != SALVO_OK)
        return r;
    pthread_mutex_lock(&dev->lock);
    if (device_is_lost(dev)) {
        pthread_mutex_unlock(&dev->lock);
        return device_lost_error(dev);
    }
    uint64_t t0 = st->trace && dev->trace ? trace_now_ns() : 0;
    device_relieve_locked(dev);
    r = record_locked(st, k, groups, binds, push, push_size);
    if (r == SALVO_OK) {
        slot *s = st->open;
        slot_note_launch(s, k->name);
        trace_launch_note(dev->trace, st->trace, slot_index(st, s), k->name, t0);
        COUNT_ADD(dev, launches_pending, 1);
        COUNT_ADD(dev, launches_total, 1);
        for (uint32_t i = 0; i < binding_count; i++)
            note_use(bufs[i], s->serial);
        st->batch_groups += (uint64_t)groups[0] * groups[1] * groups[2];
        if (s->launches >= st->batch_limit || st->batch_groups >= BATCH_MAX_GROUPS) {
            /* Grow towards the full batch while work keeps coming. */
            st->batch_limit = st->batch_limit > st->batch_size / 2 ? st->batch_size
                                                                   : st->batch_limit * 2;
            r = stream_submit_locked(st, true);
            if (r == SALVO_OK && st->batch_size == 1)
                r = device_wait_slot_locked(dev, st, s, true);
        }
    }
    pthread_mutex_unlock(&dev->lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}

static const char copy_name[] = "(copy)";

/* Record a copy (a[0] its source range, a[1] its destination) and log it. */
static void record_copy_locked(salvo_stream *st, const access a[2])
{
    salvo_device *dev = st->dev;
    slot *s = st->open;
    order_work_locked(st, a, 2, true);
    uint64_t size = a[0].end - a[0].begin;
    trace_launch_mark(st->trace, slot_index(st, s), &dev->env, s->cmd, false);
    VT(dev)->cmd_copy(SELF(dev), dev->adev, s->cmd, (accel_buffer *)a[0].buffer, a[0].begin,
                      (accel_buffer *)a[1].buffer, a[1].begin, size);
    trace_launch_mark(st->trace, slot_index(st, s), &dev->env, s->cmd, true);
    slot_note_launch(s, copy_name);
    accel_bind ends[2] = {{.buffer = (accel_buffer *)a[0].buffer, .offset = a[0].begin, .size = size},
                          {.buffer = (accel_buffer *)a[1].buffer, .offset = a[1].begin, .size = size}};
    static const uint32_t none[3] = {0, 0, 0};
    batch_log_append(&st->log, NULL, none, ends, 2, NULL, 0);
}

/* Record st's open batch again from scratch, with the log's entries from
 * offset on: its waits, then those entries. Same serial, so events and
 * releases keyed on it stay right. On failure the slot holds part of the
 * entries and is still open. */
static salvo_status rerecord_locked(salvo_stream *st, size_t offset)
{
    salvo_device *dev = st->dev;
    slot *s = st->open;
    slot_dep waits[SLOT_MAX_WAITS];
    uint32_t wait_count = s->wait_count;
    memcpy(waits, s->waits, wait_count * sizeof *waits);
    uint64_t serial = s->serial;
    uint32_t withdrawn = 0;
    const batch_entry *w;
    for (size_t o = st->log.start; o < offset && (w = batch_log_at(&st->log, o)); o += w->size)
        withdrawn++;
    COUNT_SUB(dev, launches_pending, s->launches);
    slot_discard(s, &dev->env);
    st->open = NULL;
    accel_sem_op none = {NULL, 0};
    salvo_status r = slot_begin(s, &dev->env, serial, none);
    if (r != SALVO_OK) {
        if (device_noted(dev, r) == SALVO_ERROR_DEVICE_LOST)
            device_mark_lost_locked(dev);
        return r;
    }
    st->open = s;
    barrier(dev, s, ACCEL_BARRIER_WORK);
    /* The trace keeps the host records of the launches that stay. */
    if (st->trace)
        trace_batch_reopen(st->trace, slot_index(st, s), withdrawn, &dev->env, s->cmd);
    order_reset(st);
    st->batch_groups = 0;
    for (uint32_t i = 0; i < wait_count; i++)
        slot_add_wait(s, &dev->env, &waits[i]);
    for (const batch_entry *e; (e = batch_log_at(&st->log, offset)); offset += e->size) {
        const accel_bind *b = batch_entry_binds(e);
        const char *name = copy_name;
        if (!e->kernel) {
            access a[2] = {{b[0].buffer, b[0].offset, b[0].offset + b[0].size, SALVO_ACCESS_READ},
                           {b[1].buffer, b[1].offset, b[1].offset + b[1].size, SALVO_ACCESS_WRITE}};
            order_work_locked(st, a, 2, true);
            trace_launch_mark(st->trace, slot_index(st, s), &dev->env, s->cmd, false);
            VT(dev)->cmd_copy(SELF(dev), dev->adev, s->cmd, b[0].buffer, b[0].offset, b[1].buffer,
                              b[1].offset, b[0].size);
        } else {
            const salvo_kernel *k = e->kernel;
            name = k->name;
            order_launch_locked(st, k, b);
            trace_launch_mark(st->trace, slot_index(st, s), &dev->env, s->cmd, false);
            accel_result ar = VT(dev)->cmd_dispatch(SELF(dev), dev->adev, s->cmd, k->pipe, s->pool,
                                                    b, e->bind_count, e->groups,
                                                    batch_entry_push(e), e->push_size);
            if (ar != ACCEL_SUCCESS)
                return DEV_FAIL(dev, salvo_status_from_accel(ar),
                                "cancel: launch of kernel '%s' could not be recorded again (%s)",
                                k->name, accel_result_name(ar));
            st->batch_groups += (uint64_t)e->groups[0] * e->groups[1] * e->groups[2];
        }
        trace_launch_mark(st->trace, slot_index(st, s), &dev->env, s->cmd, true);
        slot_note_launch(s, name);
        trace_launch_note(dev->trace, st->trace, slot_index(st, s), name, 0);
        COUNT_ADD(dev, launches_pending, 1);
    }
    return SALVO_OK;
}

salvo_status stream_withdraw_locked(salvo_stream *st, size_t offset)
{
    salvo_device *dev = st->dev;
    if (!st->open)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE, "cancel: the batch was submitted");
    /* A launch did without its log entry (out of memory, absorbed): the
     * batch cannot be recorded again. Memory is the reason; say so. */
    if (st->log.broken)
        return DEV_FAIL(dev, SALVO_ERROR_OUT_OF_HOST_MEMORY,
                        "cancel: this batch's log could not be kept (out of host memory)");
    if (offset <= st->log.start)
        return SALVO_OK; /* withdrawn already */
    salvo_status r = rerecord_locked(st, offset);
    if (r == SALVO_OK) {
        st->log.start = offset;
        return SALVO_OK;
    }
    /* A failed cancel withdraws nothing: record the whole batch again. */
    char msg[SALVO_ERROR_MAX];
    memcpy(msg, salvo_last_error(), sizeof msg);
    if (!device_is_lost(dev) && st->open && rerecord_locked(st, st->log.start) == SALVO_OK) {
        salvo_set_error(msg);
        return r;
    }
    /* Not even that: the batch's launches are gone. Say so to whoever
     * waits for the stream next, not only to this caller. */
    if (st->open) {
        slot *s = st->open;
        COUNT_SUB(dev, launches_pending, s->launches);
        slot_discard(s, &dev->env);
        st->open = NULL;
    }
    if (!device_is_lost(dev)) {
        salvo_status lost = DEV_FAIL(dev, SALVO_ERROR_BATCH_FAILED,
                                     "cancel: the batch could not be recorded again; its launches "
                                     "were dropped (%s)",
                                     msg);
        stream_defer_locked(st, lost);
    }
    salvo_set_error(msg);
    return r;
}

static salvo_status check_copy_range(salvo_device *dev, const char *which, salvo_buffer *b,
                                     uint64_t offset, uint64_t size)
{
    if (!b)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "copy: %s is NULL", which);
    if (b->dev != dev)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "copy: %s belongs to another device",
                        which);
    if (offset >= b->size || size > b->size - offset)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "copy: %s range [%llu, +%llu) outside the buffer of %llu bytes", which,
                        (unsigned long long)offset, (unsigned long long)size,
                        (unsigned long long)b->size);
    return SALVO_OK;
}

salvo_status salvo_copy(salvo_stream *st, salvo_buffer *src, uint64_t src_offset,
                        salvo_buffer *dst, uint64_t dst_offset, uint64_t size)
{
    if (!st)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "copy: stream is NULL");
    salvo_device *dev = st->dev;
    if (size == 0)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "copy: size is 0");
    salvo_status r = check_copy_range(dev, "source", src, src_offset, size);
    if (r == SALVO_OK)
        r = check_copy_range(dev, "destination", dst, dst_offset, size);
    if (r == SALVO_OK && src == dst && src_offset < dst_offset + size &&
        dst_offset < src_offset + size)
        r = DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "copy: the ranges overlap");
    if (r != SALVO_OK)
        return r;
    pthread_mutex_lock(&dev->lock);
    if (device_is_lost(dev)) {
        pthread_mutex_unlock(&dev->lock);
        return device_lost_error(dev);
    }
    uint64_t t0 = st->trace && dev->trace ? trace_now_ns() : 0;
    device_relieve_locked(dev);
    r = stream_open_locked(st);
    if (r == SALVO_OK) {
        slot *s = st->open;
        access a[2] = {{src->ab, src_offset, src_offset + size, SALVO_ACCESS_READ},
                       {dst->ab, dst_offset, dst_offset + size, SALVO_ACCESS_WRITE}};
        record_copy_locked(st, a);
        trace_launch_note(dev->trace, st->trace, slot_index(st, s), copy_name, t0);
        COUNT_ADD(dev, launches_pending, 1);
        COUNT_ADD(dev, transfer_bytes, size);
        note_use(src, s->serial);
        note_use(dst, s->serial);
        if (s->launches >= st->batch_limit)
            r = stream_submit_locked(st, true);
    }
    pthread_mutex_unlock(&dev->lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}

salvo_status salvo_stream_flush(salvo_stream *st)
{
    if (!st)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "flush: stream is NULL");
    salvo_device *dev = st->dev;
    pthread_mutex_lock(&dev->lock);
    salvo_status r = device_is_lost(dev) ? device_lost_error(dev) : stream_submit_locked(st, true);
    if (r == SALVO_OK)
        device_reap_locked(dev);
    pthread_mutex_unlock(&dev->lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}

salvo_status salvo_stream_synchronize(salvo_stream *st)
{
    if (!st)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "synchronize: stream is NULL");
    salvo_device *dev = st->dev;
    char msg[SALVO_ERROR_MAX] = "";
    salvo_status first = SALVO_OK;
    pthread_mutex_lock(&dev->lock);
    /* A failure kept earlier came first: it is this wait's to report. */
    if (st->deferred != SALVO_OK) {
        first = st->deferred;
        memcpy(msg, st->deferred_msg, sizeof msg);
        st->deferred = SALVO_OK;
    }
    salvo_status r = stream_submit_locked(st, true);
    if (r != SALVO_OK && first == SALVO_OK) {
        first = r;
        memcpy(msg, salvo_last_error(), sizeof msg);
    }
    /* Oldest first: after a submit, cur is the slot submitted longest ago. */
    for (int k = 0; k < STREAM_SLOTS; k++) {
        slot *s = &st->slots[(st->cur + k) % STREAM_SLOTS];
        r = device_wait_slot_locked(dev, st, s, true);
        if (r != SALVO_OK && first == SALVO_OK) {
            first = r;
            memcpy(msg, salvo_last_error(), sizeof msg);
        }
        if (r == SALVO_TIMEOUT)
            break;
    }
    if (first == SALVO_OK && device_is_lost(dev)) {
        first = device_lost_error(dev);
        memcpy(msg, salvo_last_error(), sizeof msg);
    }
    if (!device_is_lost(dev))
        device_reap_locked(dev);
    /* The stream is idle: the next batch starts small so the device starts early. */
    st->batch_limit = st->first_batch;
    pthread_mutex_unlock(&dev->lock);
    if (first != SALVO_OK)
        salvo_set_error(msg);
    else
        salvo_clear_error();
    return first;
}
