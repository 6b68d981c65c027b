/* The stream engine: batches recorded into a ring of slots, submitted
 * when full, at flush and at synchronize; barriers only where the hazards
 * ask for them. See stream_engine.h. */
#include "core/stream_engine.h"

#include "core/timing.h"

#include <stdio.h>

#include "core/graph.h"
#include <string.h>

#define VT(q) ((q)->acc->vt)
#define SELF(q) ((q)->acc->self)

/* A stream's timeline, apart from the stream so that it can outlive it
 * in the retire queue (allocated with the stream: freeing needs no
 * memory). */
struct stream_timeline {
    retire_entry release;
    queue *q;
    accel_timeline *t;
};

static void timeline_release(retire_entry *e, bool abandoned)
{
    (void)abandoned;
    struct stream_timeline *tl = (struct stream_timeline *)e;
    queue *q = tl->q;
    q->acc->vt->timeline_destroy(q->acc->self, q->adev, tl->t);
    salvo_mem_free(q->alloc, tl);
}

static void barrier(queue *q, slot *s, accel_barrier kind)
{
    VT(q)->cmd_barrier(SELF(q), q->adev, s->cmd, kind);
    COUNTER_ADD(&q->n, barriers_emitted, 1);
}

bool stream_idle_locked(const stream_engine *st)
{
    if (st->open)
        return false;
    for (int i = 0; i < STREAM_SLOTS; i++)
        if (slot_active(&st->slots[i]))
            return false;
    return true;
}

void stream_release_kept_locked(stream_engine *st)
{
    st->kept = false;
    if (atomic_load(&st->destroyed) && stream_idle_locked(st) && atomic_load(&st->q->waiters) == 0)
        stream_free_locked(st);
}

void stream_free_locked(stream_engine *st)
{
    queue *q = st->q;
    if (st->prev)
        st->prev->next = st->next;
    else
        q->streams = st->next;
    if (st->next)
        st->next->prev = st->prev;
    if (st->deferred != SALVO_OK)
        SALVO_LOG(q->log, SALVO_LOG_ERROR, "failure on a destroyed stream: %s",
                  st->deferred_msg);
    trace_stream_destroy(st->trace, &q->env);
    /* Other streams' batches may still wait on its timeline. */
    if (st->timeline)
        retire_push(&q->retire, &st->timeline->release, atomic_load(&q->next_serial));
    for (int i = 0; i < STREAM_SLOTS; i++)
        slot_destroy(&st->slots[i], &q->env);
    batch_log_free(&st->log);
    salvo_mem_free(q->alloc, st);
}

/* The buffers st's open batch s binds, from its log, for a batch that
 * waits on a gate. */
static void note_buffers(stream_engine *st, slot *s)
{
    s->buffers_noted = true;
    s->noted_count = st->log.broken || s->host_reads > 1 ? SLOT_MAX_NOTED_BUFFERS + 1 : 0;
    if (s->host_reads == 1)
        s->noted_buffers[s->noted_count++] = s->host_read;
    for (size_t o = st->log.start; s->noted_count <= SLOT_MAX_NOTED_BUFFERS;) {
        const batch_entry *e = batch_log_at(&st->log, o);
        if (!e)
            break;
        /* A graph's buffers are not listed; a kernel using buffer
         * addresses, or commands of the program's declaring nothing, may
         * touch any: any. */
        if (e->graph || (e->native && e->bind_count == 0) ||
            (!e->native && e->kernel &&
             ((const engine_kernel *)e->kernel)->refl.buffer_addresses)) {
            s->noted_count = SLOT_MAX_NOTED_BUFFERS + 1;
            break;
        }
        const accel_bind *b = batch_entry_binds(e);
        for (uint32_t i = 0; i < e->bind_count && s->noted_count <= SLOT_MAX_NOTED_BUFFERS;
             i++) {
            uint32_t k = 0;
            const void *target = accel_bind_target(&b[i]);
            while (k < s->noted_count && s->noted_buffers[k] != target)
                k++;
            if (k == s->noted_count) {
                if (k < SLOT_MAX_NOTED_BUFFERS)
                    s->noted_buffers[k] = target;
                s->noted_count++; /* past the table: any */
            }
        }
        o += e->size;
    }
}

salvo_status stream_submit_locked(stream_engine *st, bool report)
{
    queue *q = st->q;
    slot *s = st->open;
    if (!s)
        return SALVO_OK;
    st->open = NULL;
    if (queue_is_lost(q) || s->state == SLOT_ABANDONED)
        return queue_lost_error(q);
    /* The host may read what this batch wrote once its fence signals. */
    barrier(q, s, ACCEL_BARRIER_ALL_HOST);
    uint32_t n = s->launches;
    uint64_t t0 = trace_submit_begin(st->trace, slot_index(st, s), &q->env, s->cmd);
    queue_pump_locked(q);
    /* Sending held batches may have found the device lost (and abandoned
     * this one). */
    if (queue_is_lost(q) || s->state == SLOT_ABANDONED) {
        trace_submit_end(st->trace, slot_index(st, s), t0, false);
        return queue_lost_error(q);
    }
    bool hold = queue_must_hold_locked(q, st, s);
    bool gated = hold;
    for (uint32_t w = 0; w < s->wait_count && !gated; w++)
        gated = s->waits[w].serial == 0 && s->waits[w].op.timeline;
    if (gated)
        note_buffers(st, s);
    salvo_status r = slot_submit(s, &q->env, hold);
    trace_submit_end(st->trace, slot_index(st, s), t0, r == SALVO_OK);
    if (r == SALVO_OK) {
        COUNTER_ADD(&q->n, batches_submitted, 1);
        st->last_serial = s->serial;
        st->last_queue = s->queue;
        st->queue_ordered = false; /* after, on the one queue: covers it */
        st->cur = (st->cur + 1) % STREAM_SLOTS;
        return SALVO_OK;
    }
    if (!slot_active(s))
        COUNTER_SUB(&q->n, launches_pending, n);
    if (r == SALVO_ERROR_DEVICE_LOST)
        queue_mark_lost_locked(q);
    if (!report)
        stream_defer_locked(st, r);
    return r;
}

salvo_status stream_submit_covering_locked(stream_engine *st)
{
    salvo_status r = stream_submit_locked(st, true);
    if (r != SALVO_OK || !st->queue_ordered)
        return r;
    /* On the queue after the batch st waited for, st's empty batch ends
     * after it (its fence covers all work submitted before it there). */
    r = stream_open_locked(st);
    return r == SALVO_OK ? stream_submit_locked(st, true) : r;
}

void stream_submit_covering_nowait_locked(stream_engine *st)
{
    stream_submit_locked(st, false);
    /* The empty batch only where its slot is free: opening it would wait
     * for the slot's batch (in flight: st is not idle anyway), or for a
     * thread still inside a wait on the slot's fence. */
    const slot *s = &st->slots[st->cur];
    if (!st->queue_ordered || s->state == SLOT_IN_FLIGHT || s->waiters)
        return;
    salvo_status r = stream_open_locked(st);
    if (r == SALVO_OK)
        stream_submit_locked(st, false);
    else
        stream_defer_locked(st, r);
}

/* A batch begins with a barrier over everything before it: nothing of
 * the batch is unordered yet. */
static void order_reset(stream_engine *st)
{
    hazard_reset(&st->hazards);
    st->copied = false;
    hazard_reset(&st->compute_unordered);
    st->compute_overflow = false;
    st->address_fence = false;
}

/* Begin s as st's open batch with this serial: it signals st's timeline
 * with it, and starts with a barrier, since earlier batches (and staged
 * transfers) wrote what it may read. */
static salvo_status begin_locked(stream_engine *st, slot *s, uint64_t serial)
{
    queue *q = st->q;
    accel_sem_op signal = {st->timeline ? st->timeline->t : NULL, serial};
    salvo_status r = slot_begin(s, &q->env, serial, signal);
    if (r != SALVO_OK) {
        if (queue_noted(q, r) == SALVO_ERROR_DEVICE_LOST)
            queue_mark_lost_locked(q);
        return r;
    }
    st->open = s;
    barrier(q, s, ACCEL_BARRIER_WORK);
    return SALVO_OK;
}

/* Make the stream's next slot ready to record: wait for its previous
 * submission if it is still in flight, then begin. */
salvo_status stream_open_locked(stream_engine *st)
{
    return stream_open_on_locked(st, false);
}

salvo_status stream_open_on_locked(stream_engine *st, bool copy)
{
    queue *q = st->q;
    if (st->open)
        return SALVO_OK;
    slot *s = &st->slots[st->cur];
    if (s->state == SLOT_IN_FLIGHT) {
        salvo_status r = queue_wait_slot_locked(q, st, s, true);
        /* Without a free slot nothing can be recorded: the caller's work
         * did not happen, which a positive status would not say. */
        if (r == SALVO_TIMEOUT)
            return QUEUE_FAIL(q, SALVO_ERROR_TIMEOUT,
                            "no free batch slot: the stream's oldest batch (serial %llu) did not "
                            "complete within the fence timeout; nothing was recorded",
                            (unsigned long long)s->serial);
        if (r != SALVO_OK)
            return r;
    }
    /* Another thread may still be inside a wait on this slot's fence (it
     * saw the work end, or is about to): begin resets the fence. */
    while (s->waiters)
        pthread_cond_wait(&q->slot_cv, &q->lock);
    if (queue_is_lost(q) || s->state == SLOT_ABANDONED)
        return queue_lost_error(q);
    /* Without a command buffer for the copy queue (out of memory) the
     * batch stays on the stream's own: slower, as correct. */
    bool on_copy = copy && q->copy_queue != NO_COPY_QUEUE && st->timeline &&
                   slot_use_queue(s, &q->env, q->copy_queue) == SALVO_OK;
    if (!on_copy)
        slot_use_queue(s, &q->env, st->hwq); /* its own: made, cannot fail */
    salvo_status r = begin_locked(st, s, atomic_fetch_add(&q->next_serial, 1));
    if (r != SALVO_OK)
        return r;
    /* One queue runs the stream's batches in order; across two, this
     * batch waits for the previous one (which waited for its own). */
    if (s->queue != st->last_queue && queue_batch_owner_locked(q, st->last_serial, NULL) == st) {
        slot_dep w = {.op = {st->timeline->t, st->last_serial}, .serial = st->last_serial,
                      .owner = st};
        slot_add_wait(s, &q->env, &w); /* the first wait of a fresh batch: fits */
    }
    trace_batch_open(st->trace, slot_index(st, s), s->serial, q->trace, &q->env, s->cmd);
    order_reset(st);
    batch_log_clear(&st->log);
    st->batch_groups = 0;
    return SALVO_OK;
}

salvo_status stream_add_wait_locked(stream_engine *st, const slot_dep *w)
{
    if (st->open && st->open->launches > 0) {
        salvo_status r = stream_submit_locked(st, true);
        if (r != SALVO_OK)
            return r;
    }
    /* The wait goes into the next batch, opened now: it may wait for a
     * free slot (SALVO_ERROR_TIMEOUT: nothing registered). */
    salvo_status r = stream_open_locked(st);
    if (r != SALVO_OK)
        return r;
    return slot_add_wait(st->open, &st->q->env, w);
}

salvo_status stream_wait_batch_locked(stream_engine *st, stream_engine *owner, uint64_t serial)
{
    queue *q = st->q;
    slot *s = NULL;
    /* Submitted now, the batch cannot end up waiting for one that waits
     * for it: waits between streams never form a cycle. */
    if (queue_batch_owner_locked(q, serial, &s) == owner && s->state == SLOT_RECORDING)
        stream_submit_locked(owner, false);
    if (queue_is_lost(q))
        return queue_lost_error(q);
    if (owner == st || queue_batch_owner_locked(q, serial, &s) != owner)
        return SALVO_OK; /* in order in one stream, or over already */
    /* Where st's next batch surely goes to st's queue (no copy queue to
     * take a copy elsewhere), it is in order with the owner's batch on the
     * same queue once the device has that; a batch held on the host is
     * sent before st's next (an ordering-only wait). Otherwise a timeline
     * wait, even on the same queue: st's next batch may be a copy on the
     * copy queue. */
    if (!owner->timeline || (s->queue == st->hwq && q->copy_queue == NO_COPY_QUEUE)) {
        if (!s->held) {
            /* Nothing of st's says so: what waits on the host for st's
             * batches must look further (stream_submit_covering_locked). */
            st->queue_ordered = true;
            return SALVO_OK;
        }
        slot_dep w = {.serial = serial, .owner = owner};
        return stream_add_wait_locked(st, &w);
    }
    slot_dep w = {.op = {owner->timeline->t, serial}, .serial = serial, .owner = owner};
    return stream_add_wait_locked(st, &w);
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
static void order_work_locked(stream_engine *st, const access *a, uint32_t n, bool copy,
                              bool addresses)
{
    hazard_set *h = &st->hazards;
    /* A barrier between dispatches only needs the compute stage; one that
     * involves a copy covers the transfer stage too, and one around work
     * that may touch any memory covers both. */
    bool fence = addresses || st->address_fence;
    accel_barrier kind = copy || st->copied || fence ? ACCEL_BARRIER_WORK
                                                     : ACCEL_BARRIER_COMPUTE_COMPUTE;
    if (fence) {
        barrier(st->q, st->open, kind);
        order_reset(st);
        st->address_fence = addresses;
    }
    bool conflict = conflicts(h, a, n) ||
                    (copy && (st->compute_overflow || conflicts(&st->compute_unordered, a, n)));
    for (int pass = 0; pass < 2; pass++) {
        if (conflict) {
            barrier(st->q, st->open, kind);
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

static void order_launch_locked(stream_engine *st, const engine_kernel *k, const accel_bind *binds)
{
    access a[SALVO_MAX_BINDINGS];
    uint32_t n = k->refl.binding_count;
    for (uint32_t i = 0; i < n; i++)
        a[i] = (access){accel_bind_target(&binds[i]), binds[i].offset,
                        binds[i].offset + binds[i].size,
                        binds[i].uniform ? SALVO_ACCESS_READ : k->refl.bindings[i].access};
    order_work_locked(st, a, n, false, k->refl.buffer_addresses);
}

/* Record one dispatch into the open slot, submitting first when its
 * descriptor pool is full. */
static salvo_status record_locked(stream_engine *st, const engine_kernel *k, const uint32_t groups[3],
                                  const accel_bind *binds, const void *push, uint32_t push_size)
{
    queue *q = st->q;
    /* Kernels do not run on the copy queue: a batch of copies open there
     * goes now, and the launch opens the next one on the stream's queue. */
    if (st->open && st->open->queue == q->copy_queue) {
        salvo_status r = stream_submit_locked(st, true);
        if (r != SALVO_OK)
            return r;
    }
    for (int attempt = 0;; attempt++) {
        salvo_status r = stream_open_locked(st);
        if (r != SALVO_OK)
            return r;
        slot *s = st->open;
        order_launch_locked(st, k, binds);
        trace_launch_mark(st->trace, slot_index(st, s), &q->env, s->cmd, false);
        accel_result ar = VT(q)->cmd_dispatch(SELF(q), q->adev, s->cmd, k->pipe, s->pool,
                                                binds, k->refl.binding_count, groups, push,
                                                push_size);
        if (ar == ACCEL_SUCCESS) {
            trace_launch_mark(st->trace, slot_index(st, s), &q->env, s->cmd, true);
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
            queue_mark_lost_locked(q);
        return QUEUE_FAIL(q, salvo_status_from_accel(ar), "launch of kernel '%s': not recorded (%s)",
                        k->name, accel_result_name(ar));
    }
}

static const char copy_name[] = "(copy)";
static const char fill_name[] = "(fill)";

/* Record the execution of graph g's recordings (cmds) into st's open
 * batch: a barrier first if g touches what the batch's earlier work
 * wrote, or writes what it read (as for a launch, with g's touches); then
 * what g touches joins the batch's hazards. Names and counts its nodes in
 * the slot. */
static void record_graph_locked(stream_engine *st, const engine_graph *g, accel_cmd *const *cmds,
                                uint32_t count)
{
    queue *q = st->q;
    slot *s = st->open;
    bool copy = g->has_copy;
    bool fence = g->addresses || st->address_fence;
    bool conflict = fence || (copy && st->compute_overflow);
    for (uint32_t i = 0; i < g->touch_count && !conflict; i++) {
        const graph_touch *t = &g->touch[i];
        bool r = t->how & SALVO_ACCESS_READ, w = t->how & SALVO_ACCESS_WRITE;
        conflict = hazard_conflicts(&st->hazards, t->buffer, t->begin, t->end, r, w) ||
                   (copy && hazard_conflicts(&st->compute_unordered, t->buffer, t->begin, t->end,
                                             r, w));
    }
    if (conflict) {
        accel_barrier kind = copy || st->copied || fence ? ACCEL_BARRIER_WORK
                                                         : ACCEL_BARRIER_COMPUTE_COMPUTE;
        barrier(q, s, kind);
        st->address_fence = false;
        hazard_reset(&st->hazards);
        st->copied = false;
        if (kind == ACCEL_BARRIER_WORK) {
            hazard_reset(&st->compute_unordered);
            st->compute_overflow = false;
        }
    }
    trace_launch_mark(st->trace, slot_index(st, s), &q->env, s->cmd, false);
    if (count)
        VT(q)->cmd_execute(SELF(q), q->adev, s->cmd, cmds, count);
    trace_launch_mark(st->trace, slot_index(st, s), &q->env, s->cmd, true);
    for (uint32_t i = 0; i < g->touch_count; i++) {
        const graph_touch *t = &g->touch[i];
        bool w = t->how & SALVO_ACCESS_WRITE;
        if (!hazard_add(&st->hazards, t->buffer, t->begin, t->end, w)) {
            /* More than the set holds: order everything so far instead. */
            barrier(q, s, ACCEL_BARRIER_WORK);
            order_reset(st);
            break;
        }
        if (!copy && !st->compute_overflow)
            st->compute_overflow = !hazard_add(&st->compute_unordered, t->buffer, t->begin,
                                               t->end, w);
    }
    st->copied |= copy;
    st->address_fence = g->addresses;
    slot_note_name(s, g->label);
    for (uint32_t i = 0; i < g->name_count; i++)
        slot_note_name(s, g->names[i]);
    /* A replay counts each of its nodes as a launch (an empty one none). */
    s->launches += g->node_count;
    COUNTER_ADD(&q->n, launches_pending, g->node_count);
}

/* Record a copy (a[0] its source range, a[1] its destination) and log it. */
static void record_copy_locked(stream_engine *st, const access a[2])
{
    queue *q = st->q;
    slot *s = st->open;
    order_work_locked(st, a, 2, true, false);
    uint64_t size = a[0].end - a[0].begin;
    trace_launch_mark(st->trace, slot_index(st, s), &q->env, s->cmd, false);
    VT(q)->cmd_copy(SELF(q), q->adev, s->cmd, (accel_buffer *)a[0].buffer, a[0].begin,
                      (accel_buffer *)a[1].buffer, a[1].begin, size);
    trace_launch_mark(st->trace, slot_index(st, s), &q->env, s->cmd, true);
    slot_note_launch(s, copy_name);
    accel_bind ends[2] = {{.buffer = (accel_buffer *)a[0].buffer, .offset = a[0].begin, .size = size},
                          {.buffer = (accel_buffer *)a[1].buffer, .offset = a[1].begin, .size = size}};
    static const uint32_t none[3] = {0, 0, 0};
    batch_log_append(&st->log, NULL, none, ends, 2, NULL, 0);
}

/* Record a fill of range a (a write) with value, and log it: a copy-like
 * entry with one range and the value as its push data. */
static void record_fill_locked(stream_engine *st, const access *a, uint32_t value)
{
    queue *q = st->q;
    slot *s = st->open;
    order_work_locked(st, a, 1, true, false);
    uint64_t size = a->end - a->begin;
    trace_launch_mark(st->trace, slot_index(st, s), &q->env, s->cmd, false);
    VT(q)->cmd_fill(SELF(q), q->adev, s->cmd, (accel_buffer *)a->buffer, a->begin, size, value);
    trace_launch_mark(st->trace, slot_index(st, s), &q->env, s->cmd, true);
    slot_note_launch(s, fill_name);
    accel_bind end = {.buffer = (accel_buffer *)a->buffer, .offset = a->begin, .size = size};
    static const uint32_t none[3] = {0, 0, 0};
    batch_log_append(&st->log, NULL, none, &end, 1, &value, sizeof value);
}

static const char image_copy_name[] = "(image copy)";

/* Record a copy between a buffer and an image (a[0] the source, a[1] the
 * destination; the image's end is its identity, range [0, 1)) and log it,
 * the region as its push data. */
static void record_image_copy_locked(stream_engine *st, const access a[2], accel_buffer *buf,
                                     uint64_t offset, accel_image *img,
                                     const accel_image_region *region, bool to_image)
{
    queue *q = st->q;
    slot *s = st->open;
    order_work_locked(st, a, 2, true, false);
    trace_launch_mark(st->trace, slot_index(st, s), &q->env, s->cmd, false);
    VT(q)->cmd_copy_image(SELF(q), q->adev, s->cmd, buf, offset, img, region, to_image);
    trace_launch_mark(st->trace, slot_index(st, s), &q->env, s->cmd, true);
    slot_note_launch(s, image_copy_name);
    accel_bind ends[2];
    for (int i = 0; i < 2; i++) {
        bool image_end = (i == 1) == to_image;
        ends[i] = image_end ? (accel_bind){.image = img, .offset = 0, .size = 1}
                            : (accel_bind){.buffer = buf, .offset = a[i].begin,
                                           .size = a[i].end - a[i].begin};
    }
    static const uint32_t none[3] = {0, 0, 0};
    batch_log_append(&st->log, NULL, none, ends, 2, region, sizeof *region);
}

/* What a native entry keeps to record its commands again. */
typedef struct native_push {
    stream_native_fn fn;
    void (*record)(void);
    void *user;
    uint8_t how[SALVO_MAX_BINDINGS]; /* salvo_access of each range */
} native_push;

static const char native_name[] = "(vulkan)";

/* Order the program's commands by the ranges they declared (as a copy:
 * any stage), then let it record them. */
static void record_native_locked(stream_engine *st, const access *a, uint32_t n,
                                 const native_push *np)
{
    queue *q = st->q;
    slot *s = st->open;
    /* Nothing declared: ordered after everything earlier in the batch. */
    order_work_locked(st, a, n, true, n == 0);
    trace_launch_mark(st->trace, slot_index(st, s), &q->env, s->cmd, false);
    np->fn(VT(q)->cmd_native(SELF(q), q->adev, s->cmd), np->record, np->user);
    trace_launch_mark(st->trace, slot_index(st, s), &q->env, s->cmd, true);
    st->address_fence |= n == 0;
    slot_note_launch(s, native_name);
}

/* Record st's open batch again from scratch, with the log's entries from
 * offset on: its waits, then those entries. Same serial, so events and
 * releases keyed on it stay right. On failure the slot holds part of the
 * entries and is still open. */
static salvo_status rerecord_locked(stream_engine *st, size_t offset)
{
    queue *q = st->q;
    slot *s = st->open;
    slot_dep waits[SLOT_MAX_WAITS];
    uint32_t wait_count = s->wait_count;
    memcpy(waits, s->waits, wait_count * sizeof *waits);
    const void *host_read = s->host_read;
    uint32_t host_reads = s->host_reads;
    uint64_t serial = s->serial;
    uint32_t withdrawn = 0;
    const batch_entry *w;
    for (size_t o = st->log.start; o < offset && (w = batch_log_at(&st->log, o)); o += w->size)
        withdrawn += !w->mark;
    COUNTER_SUB(&q->n, launches_pending, s->launches);
    slot_discard(s, &q->env);
    st->open = NULL;
    salvo_status r = begin_locked(st, s, serial);
    if (r != SALVO_OK)
        return r;
    /* The trace keeps the host records of the launches that stay. */
    if (st->trace)
        trace_batch_reopen(st->trace, slot_index(st, s), withdrawn, &q->env, s->cmd);
    order_reset(st);
    st->batch_groups = 0;
    for (uint32_t i = 0; i < wait_count; i++)
        slot_add_wait(s, &q->env, &waits[i]);
    s->host_read = host_read;
    s->host_reads = host_reads;
    /* Events recorded among the withdrawn work (now or by an earlier
     * cancel) mark the batch's start: their timestamps go first. */
    struct timing_mark *start = NULL;
    for (size_t o = 0; o < offset && (w = batch_log_at(&st->log, o)); o += w->size) {
        if (!w->mark)
            continue;
        if (start)
            timing_rewrite_same_locked(batch_entry_mark(w), start);
        else
            timing_rewrite_locked(q, start = batch_entry_mark(w), s);
    }
    for (const batch_entry *e; (e = batch_log_at(&st->log, offset)); offset += e->size) {
        if (e->mark) {
            timing_rewrite_locked(q, batch_entry_mark(e), s);
            continue;
        }
        const accel_bind *b = batch_entry_binds(e);
        const char *name = e->bind_count == 1 && !e->kernel ? fill_name : copy_name;
        if (e->graph) {
            const engine_graph *g = e->kernel;
            /* Entries are 8-byte aligned, the pointers right after the header. */
            accel_cmd *const *cmds = (accel_cmd *const *)batch_entry_push(e);
            record_graph_locked(st, g, cmds, e->push_size / (uint32_t)sizeof *cmds);
            trace_launch_note(q->trace, st->trace, slot_index(st, s), g->label, 0);
            st->batch_groups += g->groups_total;
            continue;
        }
        if (e->native) {
            native_push np;
            memcpy(&np, batch_entry_push(e), sizeof np);
            access a[SALVO_MAX_BINDINGS];
            for (uint32_t i = 0; i < e->bind_count; i++)
                a[i] = (access){accel_bind_target(&b[i]), b[i].offset, b[i].offset + b[i].size,
                                np.how[i]};
            record_native_locked(st, a, e->bind_count, &np);
            trace_launch_note(q->trace, st->trace, slot_index(st, s), native_name, 0);
            COUNTER_ADD(&q->n, launches_pending, 1);
            continue;
        }
        if (!e->kernel && e->push_size == sizeof(accel_image_region)) {
            accel_image_region region;
            memcpy(&region, batch_entry_push(e), sizeof region);
            bool to_image = b[1].image != NULL;
            const accel_bind *buf = to_image ? &b[0] : &b[1];
            access a[2] = {
                {accel_bind_target(&b[0]), b[0].offset, b[0].offset + b[0].size, SALVO_ACCESS_READ},
                {accel_bind_target(&b[1]), b[1].offset, b[1].offset + b[1].size, SALVO_ACCESS_WRITE}};
            order_work_locked(st, a, 2, true, false);
            trace_launch_mark(st->trace, slot_index(st, s), &q->env, s->cmd, false);
            VT(q)->cmd_copy_image(SELF(q), q->adev, s->cmd, buf->buffer, buf->offset,
                                  to_image ? b[1].image : b[0].image, &region, to_image);
            name = image_copy_name;
        } else if (!e->kernel && e->bind_count == 1) {
            access a = {b[0].buffer, b[0].offset, b[0].offset + b[0].size, SALVO_ACCESS_WRITE};
            uint32_t value;
            memcpy(&value, batch_entry_push(e), sizeof value);
            order_work_locked(st, &a, 1, true, false);
            trace_launch_mark(st->trace, slot_index(st, s), &q->env, s->cmd, false);
            VT(q)->cmd_fill(SELF(q), q->adev, s->cmd, b[0].buffer, b[0].offset, b[0].size, value);
        } else if (!e->kernel) {
            access a[2] = {{b[0].buffer, b[0].offset, b[0].offset + b[0].size, SALVO_ACCESS_READ},
                           {b[1].buffer, b[1].offset, b[1].offset + b[1].size, SALVO_ACCESS_WRITE}};
            order_work_locked(st, a, 2, true, false);
            trace_launch_mark(st->trace, slot_index(st, s), &q->env, s->cmd, false);
            VT(q)->cmd_copy(SELF(q), q->adev, s->cmd, b[0].buffer, b[0].offset, b[1].buffer,
                              b[1].offset, b[0].size);
        } else {
            const engine_kernel *k = e->kernel;
            name = k->name;
            order_launch_locked(st, k, b);
            trace_launch_mark(st->trace, slot_index(st, s), &q->env, s->cmd, false);
            accel_result ar = VT(q)->cmd_dispatch(SELF(q), q->adev, s->cmd, k->pipe, s->pool,
                                                    b, e->bind_count, e->groups,
                                                    batch_entry_push(e), e->push_size);
            if (ar != ACCEL_SUCCESS)
                return QUEUE_FAIL(q, salvo_status_from_accel(ar),
                                "cancel: launch of kernel '%s' could not be recorded again (%s)",
                                k->name, accel_result_name(ar));
            st->batch_groups += (uint64_t)e->groups[0] * e->groups[1] * e->groups[2];
        }
        trace_launch_mark(st->trace, slot_index(st, s), &q->env, s->cmd, true);
        slot_note_launch(s, name);
        trace_launch_note(q->trace, st->trace, slot_index(st, s), name, 0);
        COUNTER_ADD(&q->n, launches_pending, 1);
    }
    return SALVO_OK;
}

bool stream_work_before_locked(const stream_engine *st, size_t offset)
{
    const batch_entry *e;
    for (size_t o = st->log.start; o < offset && (e = batch_log_at(&st->log, o)); o += e->size)
        if (!e->mark)
            return true;
    return false;
}

salvo_status stream_withdraw_locked(stream_engine *st, size_t offset)
{
    queue *q = st->q;
    if (!st->open)
        return QUEUE_FAIL(q, SALVO_ERROR_INVALID_STATE, "cancel: the batch was submitted");
    /* A launch did without its log entry (out of memory, absorbed): the
     * batch cannot be recorded again. Memory is the reason; say so. */
    if (st->log.broken)
        return QUEUE_FAIL(q, SALVO_ERROR_OUT_OF_HOST_MEMORY,
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
    if (!queue_is_lost(q) && st->open && rerecord_locked(st, st->log.start) == SALVO_OK) {
        salvo_set_error(msg);
        return r;
    }
    /* Not even that: the batch's launches are gone. Say so to whoever
     * waits for the stream next, not only to this caller. */
    if (st->open) {
        slot *s = st->open;
        COUNTER_SUB(&q->n, launches_pending, s->launches);
        slot_discard(s, &q->env);
        st->open = NULL;
    }
    if (!queue_is_lost(q)) {
        salvo_status lost = QUEUE_FAIL(q, SALVO_ERROR_BATCH_FAILED,
                                     "cancel: the batch could not be recorded again; its launches "
                                     "were dropped (%s)",
                                     msg);
        stream_defer_locked(st, lost);
    }
    salvo_set_error(msg);
    return r;
}

void stream_defer_locked(stream_engine *st, salvo_status err)
{
    if (err >= 0 || st->deferred != SALVO_OK)
        return;
    st->deferred = err;
    memcpy(st->deferred_msg, salvo_last_error(), sizeof st->deferred_msg);
    st->deferred_msg[sizeof st->deferred_msg - 1] = '\0';
}

salvo_status stream_engine_init(stream_engine *st, queue *q, uint32_t batch_size,
                                uint32_t first_batch, bool high_priority)
{
    st->q = q;
    batch_log_init(&st->log, q->alloc);
    st->batch_size = batch_size;
    uint32_t first = first_batch ? first_batch : FIRST_BATCH;
    st->first_batch = first < st->batch_size ? first : st->batch_size;
    st->batch_limit = st->first_batch;
    atomic_init(&st->destroyed, false);
    uint32_t sets = st->batch_size < POOL_MAX_SETS ? st->batch_size : POOL_MAX_SETS;
    /* Room for at least one launch of the widest kernel. */
    uint32_t per_set = POOL_BINDINGS_PER_SET;
    if (sets * per_set < SALVO_MAX_BINDINGS)
        per_set = (SALVO_MAX_BINDINGS + sets - 1) / sets;
    if (q->hw_queues > 1 || q->copy_queue != NO_COPY_QUEUE) {
        st->timeline = salvo_mem_calloc(q->alloc, 1, sizeof *st->timeline);
        if (!st->timeline)
            return QUEUE_FAIL(q, SALVO_ERROR_OUT_OF_HOST_MEMORY,
                              "stream_create: out of host memory");
        st->timeline->q = q;
        st->timeline->release.fn = timeline_release;
        accel_result ar = q->acc->vt->timeline_create(q->acc->self, q->adev, 0, &st->timeline->t);
        if (ar != ACCEL_SUCCESS) {
            salvo_mem_free(q->alloc, st->timeline);
            st->timeline = NULL;
            return QUEUE_FAIL(q, salvo_status_from_accel(ar), "stream_create: timeline: %s",
                              accel_result_name(ar));
        }
    }
    for (int i = 0; i < STREAM_SLOTS; i++) {
        salvo_status r = queue_noted(q, slot_init(&st->slots[i], &q->env, sets, per_set));
        if (r != SALVO_OK) {
            for (int j = 0; j < i; j++)
                slot_destroy(&st->slots[j], &q->env);
            if (st->timeline)
                timeline_release(&st->timeline->release, false);
            return r;
        }
    }
    pthread_mutex_lock(&q->lock);
    st->next = q->streams;
    if (q->streams)
        q->streams->prev = st;
    q->streams = st;
    st->number = ++q->stream_count;
    /* Queues in turn, by creation; the high-priority one, where kept,
     * only for the streams that ask for it. */
    uint32_t shared = q->hw_queues ? q->hw_queues : 1;
    if (q->high_queue && shared > 1)
        shared--;
    st->hwq = q->high_queue && high_priority && q->hw_queues > 1 ? q->hw_queues - 1
                                                                   : (st->number - 1) % shared;
    for (int i = 0; i < STREAM_SLOTS; i++)
        st->slots[i].queue = st->hwq;
    st->last_queue = st->hwq;
    stream_trace_attach_locked(st);
    pthread_mutex_unlock(&q->lock);
    COUNTER_ADD(&q->n, live_streams, 1);
    return SALVO_OK;
}

void stream_engine_destroy(stream_engine *st)
{
    /* Once destroyed is set without the lock, any drain point on another
     * thread may free the stream: it is the last thing done to st. */
    queue *q = st->q;
    if (pthread_mutex_trylock(&q->lock) != 0) {
        if (!atomic_exchange(&st->destroyed, true))
            COUNTER_SUB(&q->n, live_streams, 1);
        return;
    }
    if (!atomic_exchange(&st->destroyed, true)) {
        COUNTER_SUB(&q->n, live_streams, 1);
        if (stream_idle_locked(st) && !st->kept && atomic_load(&q->waiters) == 0) {
            stream_free_locked(st);
            queue_advance_locked(q); /* its timeline's release, if nothing waits on it */
        }
    }
    pthread_mutex_unlock(&q->lock);
}

/* The one epilogue of every command recorded into a batch: submit it when
 * full (growing the next towards the full size), and with a batch size of
 * 1 wait for it, whatever the command. */
static salvo_status batch_check_locked(stream_engine *st, slot *s)
{
    if (s->launches < st->batch_limit && st->batch_groups < BATCH_MAX_GROUPS)
        return SALVO_OK;
    /* Grow towards the full batch while work keeps coming. */
    st->batch_limit = st->batch_limit > st->batch_size / 2 ? st->batch_size : st->batch_limit * 2;
    salvo_status r = stream_submit_locked(st, true);
    if (r == SALVO_OK && st->batch_size == 1)
        r = queue_wait_slot_locked(st->q, st, s, true);
    return r;
}

salvo_status stream_dispatch_locked(stream_engine *st, const engine_kernel *k,
                                    const uint32_t groups[3], const accel_bind *binds,
                                    const void *push, uint32_t push_size, uint64_t *serial)
{
    queue *q = st->q;
    uint64_t t0 = st->trace && q->trace ? trace_now_ns() : 0;
    queue_relieve_locked(q);
    salvo_status r = record_locked(st, k, groups, binds, push, push_size);
    if (r != SALVO_OK)
        return r;
    slot *s = st->open;
    slot_note_launch(s, k->name);
    trace_launch_note(q->trace, st->trace, slot_index(st, s), k->name, t0);
    COUNTER_ADD(&q->n, launches_pending, 1);
    COUNTER_ADD(&q->n, launches_total, 1);
    *serial = s->serial;
    st->batch_groups += (uint64_t)groups[0] * groups[1] * groups[2];
    return batch_check_locked(st, s);
}

salvo_status stream_copy_locked(stream_engine *st, accel_buffer *src, uint64_t so,
                                accel_buffer *dst, uint64_t dof, uint64_t size, bool host_side,
                                uint64_t *serial)
{
    queue *q = st->q;
    uint64_t t0 = st->trace && q->trace ? trace_now_ns() : 0;
    queue_relieve_locked(q);
    /* Host memory to or from the device: the copy engine's work, beside
     * kernels. Not while tracing (a copy queue cannot reset the trace's
     * queries). */
    salvo_status r = stream_open_on_locked(st, host_side && !q->trace);
    if (r != SALVO_OK)
        return r;
    slot *s = st->open;
    access a[2] = {{src, so, so + size, SALVO_ACCESS_READ}, {dst, dof, dof + size, SALVO_ACCESS_WRITE}};
    record_copy_locked(st, a);
    trace_launch_note(q->trace, st->trace, slot_index(st, s), copy_name, t0);
    COUNTER_ADD(&q->n, launches_pending, 1);
    COUNTER_ADD(&q->n, transfer_bytes, size);
    *serial = s->serial;
    return batch_check_locked(st, s);
}

salvo_status stream_fill_locked(stream_engine *st, accel_buffer *dst, uint64_t offset,
                                uint64_t size, uint32_t value, bool host_side, uint64_t *serial)
{
    queue *q = st->q;
    uint64_t t0 = st->trace && q->trace ? trace_now_ns() : 0;
    queue_relieve_locked(q);
    salvo_status r = stream_open_on_locked(st, host_side && !q->trace);
    if (r != SALVO_OK)
        return r;
    slot *s = st->open;
    access a = {dst, offset, offset + size, SALVO_ACCESS_WRITE};
    record_fill_locked(st, &a, value);
    trace_launch_note(q->trace, st->trace, slot_index(st, s), fill_name, t0);
    COUNTER_ADD(&q->n, launches_pending, 1);
    *serial = s->serial;
    return batch_check_locked(st, s);
}

/* Open a batch on st's own queue for work that does not run on the copy
 * queue (kernels, images, the program's own commands): a batch of copies
 * open there goes first. */
static salvo_status open_on_compute_locked(stream_engine *st)
{
    if (st->open && st->open->queue == st->q->copy_queue) {
        salvo_status r = stream_submit_locked(st, true);
        if (r != SALVO_OK)
            return r;
    }
    return stream_open_locked(st);
}

salvo_status stream_copy_image_locked(stream_engine *st, accel_buffer *buf, uint64_t offset,
                                      uint64_t bytes, accel_image *img,
                                      const accel_image_region *region, bool to_image,
                                      uint64_t *serial)
{
    queue *q = st->q;
    uint64_t t0 = st->trace && q->trace ? trace_now_ns() : 0;
    queue_relieve_locked(q);
    /* Images live on the streams' queue family only: never the copy queue. */
    salvo_status r = open_on_compute_locked(st);
    if (r != SALVO_OK)
        return r;
    slot *s = st->open;
    access buffer_end = {buf, offset, offset + bytes, to_image ? SALVO_ACCESS_READ : SALVO_ACCESS_WRITE};
    access image_end = {img, 0, 1, to_image ? SALVO_ACCESS_WRITE : SALVO_ACCESS_READ};
    access a[2] = {to_image ? buffer_end : image_end, to_image ? image_end : buffer_end};
    record_image_copy_locked(st, a, buf, offset, img, region, to_image);
    trace_launch_note(q->trace, st->trace, slot_index(st, s), image_copy_name, t0);
    COUNTER_ADD(&q->n, launches_pending, 1);
    COUNTER_ADD(&q->n, transfer_bytes, bytes);
    *serial = s->serial;
    return batch_check_locked(st, s);
}

salvo_status stream_native_locked(stream_engine *st, const accel_bind *ranges,
                                  const salvo_access *how, uint32_t n, stream_native_fn fn,
                                  void (*record)(void), void *user, uint64_t *serial)
{
    queue *q = st->q;
    if (n > SALVO_MAX_BINDINGS)
        return QUEUE_FAIL(q, SALVO_ERROR_INVALID_ARGUMENT, "more than %d buffer uses",
                          SALVO_MAX_BINDINGS);
    uint64_t t0 = st->trace && q->trace ? trace_now_ns() : 0;
    queue_relieve_locked(q);
    salvo_status r = open_on_compute_locked(st);
    if (r != SALVO_OK)
        return r;
    slot *s = st->open;
    access a[SALVO_MAX_BINDINGS];
    native_push np = {.fn = fn, .record = record, .user = user};
    for (uint32_t i = 0; i < n; i++) {
        a[i] = (access){ranges[i].buffer, ranges[i].offset, ranges[i].offset + ranges[i].size,
                        how[i]};
        np.how[i] = (uint8_t)how[i];
    }
    record_native_locked(st, a, n, &np);
    batch_log_append_native(&st->log, ranges, n, &np, sizeof np);
    trace_launch_note(q->trace, st->trace, slot_index(st, s), native_name, t0);
    COUNTER_ADD(&q->n, launches_pending, 1);
    *serial = s->serial;
    return batch_check_locked(st, s);
}

salvo_status stream_synchronize_locked(stream_engine *st, char msg[SALVO_ERROR_MAX])
{
    queue *q = st->q;
    salvo_status first = SALVO_OK;
    msg[0] = '\0';
    /* A failure kept earlier came first: it is this wait's to report. */
    if (st->deferred != SALVO_OK) {
        first = st->deferred;
        memcpy(msg, st->deferred_msg, SALVO_ERROR_MAX);
        st->deferred = SALVO_OK;
    }
    salvo_status r = stream_submit_locked(st, true);
    if (r != SALVO_OK && first == SALVO_OK) {
        first = r;
        memcpy(msg, salvo_last_error(), SALVO_ERROR_MAX);
    }
    /* Oldest first: after a submit, cur is the slot submitted longest ago. */
    bool expired = false;
    for (int k = 0; k < STREAM_SLOTS && !expired; k++) {
        slot *s = &st->slots[(st->cur + k) % STREAM_SLOTS];
        r = queue_wait_slot_locked(q, st, s, true);
        if (r != SALVO_OK && first == SALVO_OK) {
            first = r;
            memcpy(msg, salvo_last_error(), SALVO_ERROR_MAX);
        }
        expired = r == SALVO_TIMEOUT;
    }
    /* Ordered after another stream's batch by queue order alone: an empty
     * batch ends after it. Sent once st's own are over, so that its slot
     * is free: opening it waits for nothing (a wait that expired there
     * would be an error, nothing recorded, not SALVO_TIMEOUT). */
    if (st->queue_ordered && !expired && !queue_is_lost(q)) {
        r = stream_submit_covering_locked(st);
        slot *cover = &st->slots[(st->cur + STREAM_SLOTS - 1) % STREAM_SLOTS];
        if (r == SALVO_OK)
            r = queue_wait_slot_locked(q, st, cover, true);
        if (r != SALVO_OK && first == SALVO_OK) {
            first = r;
            memcpy(msg, salvo_last_error(), SALVO_ERROR_MAX);
        }
    }
    /* A held batch the device refused while this waited: this wait's. */
    if (first == SALVO_OK && st->deferred != SALVO_OK) {
        first = st->deferred;
        memcpy(msg, st->deferred_msg, SALVO_ERROR_MAX);
        st->deferred = SALVO_OK;
    }
    first = queue_loss_wins_locked(q, first, msg);
    if (!queue_is_lost(q))
        queue_reap_locked(q);
    /* The stream is idle: the next batch starts small so the device starts early. */
    st->batch_limit = st->first_batch;
    return first;
}

void stream_trace_attach_locked(stream_engine *st)
{
    queue *q = st->q;
    if (!q->trace)
        return;
    if (!st->trace) {
        bool gpu = false;
        st->trace = trace_stream_create(q->alloc, &q->env, STREAM_SLOTS, st->batch_size,
                                        st->number, &gpu);
        if (!st->trace) {
            SALVO_LOG(q->log, SALVO_LOG_WARNING,
                      "trace: out of host memory; stream %u is left out", st->number);
            return;
        }
        if (!gpu)
            SALVO_LOG(q->log, SALVO_LOG_WARNING,
                      "trace: no timestamp queries for stream %u; its GPU times are left out",
                      st->number);
    }
    char name[32];
    snprintf(name, sizeof name, "stream %u", st->number);
    trace_write_name(q->trace->w, TRACE_HOST_PID, st->number, name);
    trace_write_name(q->trace->w, TRACE_GPU_PID, st->number, name);
    trace_writer_flush(q->trace->w);
}

void stream_trace_retired_locked(stream_engine *st, slot *s)
{
    if (st->trace)
        trace_batch_retire(st->q->trace, st->trace, slot_index(st, s), &st->q->env);
}

salvo_status stream_graph_locked(stream_engine *st, engine_graph *g, uint64_t *serial)
{
    queue *q = st->q;
    *serial = 0;
    if (g->node_count == 0)
        return SALVO_OK; /* nothing to run, nothing to order */
    uint64_t t0 = st->trace && q->trace ? trace_now_ns() : 0;
    queue_relieve_locked(q);
    /* Kernels do not run on the copy queue (see record_locked). */
    if (st->open && st->open->queue == q->copy_queue) {
        salvo_status r = stream_submit_locked(st, true);
        if (r != SALVO_OK)
            return r;
    }
    salvo_status r = stream_open_locked(st);
    if (r != SALVO_OK)
        return r;
    /* After the open, which may drop the lock: what is executed is what
     * the graph holds now. */
    r = graph_prepare_locked(g, st->number);
    if (r != SALVO_OK)
        return r;
    slot *s = st->open;
    record_graph_locked(st, g, g->cmds, g->chunk_count);
    batch_log_append_graph(&st->log, g, g->cmds, g->chunk_count);
    trace_launch_note(q->trace, st->trace, slot_index(st, s), g->label, t0);
    COUNTER_ADD(&q->n, launches_total, g->node_count);
    graph_note_replay_locked(g, st->number, s->serial);
    *serial = s->serial;
    st->batch_groups += g->groups_total;
    return batch_check_locked(st, s);
}
