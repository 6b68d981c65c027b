/* The stream engine: batches recorded into a ring of slots, submitted
 * when full, at flush and at synchronize; barriers only where the hazards
 * ask for them. See stream_engine.h. */
#include "core/stream_engine.h"
#include "base/inline.h"

#include "core/scheduler.h"

#include <stdio.h>
#include <string.h>

#include "core/graph.h"
#include "core/timing.h"

#define VT(q) ((q)->acc->vt)
#define SELF(q) ((q)->acc->self)

static void timeline_release(retire_entry *e, bool abandoned)
{
    (void)abandoned;
    struct stream_timeline *tl =
        (struct stream_timeline *)((char *)e - offsetof(struct stream_timeline, release));
    queue *q = tl->q;
    q->acc->vt->timeline_destroy(q->acc->self, q->adev, tl->t);
    salvo_mem_free(q->alloc, tl);
}

static void barrier(queue *q, slot *s, accel_barrier kind)
{
    VT(q)->cmd_barrier(SELF(q), q->adev, s->cmd, kind);
    COUNTER_ADD(&q->n, barriers_emitted, 1);
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
    if (!st->queue_ordered || slot_submitted(s) || s->waiters)
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
    SALVO_REQUIRES(st->q->lock)
{
    queue *q = st->q;
    accel_sem_op signal = {st->timeline ? st->timeline->t : NULL, serial};
    bool led = s->prepared; /* the barrier below is in it already */
    salvo_status r = slot_begin(s, &q->env, serial, signal);
    if (r != SALVO_OK) {
        if (queue_noted(q, r) == SALVO_ERROR_DEVICE_LOST)
            queue_mark_lost_locked(st->q);
        return r;
    }
    st->open = s;
    if (!st->busy) {
        st->busy = true;
        stream_hold_locked(st);
    }
    if (led)
        COUNTER_ADD(&q->n, barriers_emitted, 1);
    else
        barrier(q, s, STREAM_BATCH_LEAD);
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
    if (slot_submitted(s)) {
        salvo_status r = queue_wait_slot_locked(st->q, st, s, true);
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
        salvo_cond_wait(&st->q->slot_cv, &st->q->lock);
    if (queue_is_lost(q) || s->state == SLOT_ABANDONED)
        return queue_lost_error(q);
    /* Without a command buffer for the copy queue (out of memory) the
     * batch stays on the stream's own: slower, as correct. */
    /* Decided here, after any wait for the slot (the lock was dropped): a
     * trace started meanwhile stamps every batch's start with a query
     * reset, which the copy queue cannot run. */
    bool on_copy = copy && !q->trace && q->copy_queue != NO_COPY_QUEUE && st->timeline &&
                   slot_use_queue(s, &q->env, q->copy_queue) == SALVO_OK;
    if (!on_copy)
        slot_use_queue(s, &q->env, st->hwq); /* its own: made, cannot fail */
    salvo_status r = begin_locked(st, s, atomic_fetch_add(&q->next_serial, 1));
    if (r != SALVO_OK)
        return r;
    /* One queue runs the stream's batches in order; across two, this
     * batch waits for the previous one (which waited for its own). */
    if (s->queue != st->last_queue &&
        queue_batch_owner_locked(st->q, st->last_serial, NULL) == st) {
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
    if (st->open && (st->open->launches > 0 || st->open->pointed)) {
        salvo_status r = stream_submit_locked(st, true);
        if (r != SALVO_OK)
            return r;
    }
    /* Into the next batch, opened now (it may wait for a free slot). */
    salvo_status r = stream_open_locked(st);
    if (r != SALVO_OK)
        return r;
    /* That wait lets go of the lock: the batch waited for may have ended
     * meanwhile, and its stream, destroyed, been freed (its timeline's
     * release tagged below the serial just taken): nothing to wait for. */
    if (w->serial && queue_batch_owner_locked(st->q, w->serial, NULL) != w->owner)
        return SALVO_OK;
    return slot_add_wait(st->open, &st->q->env, w);
}

salvo_status stream_wait_batch_locked(stream_engine *st, stream_engine *owner, uint64_t serial)
{
    queue *q = st->q;
    salvo_mutex_same(&st->q->lock, &owner->q->lock);
    slot *s = NULL;
    /* Submitted now, the batch cannot end up waiting for one that waits
     * for it: waits between streams never form a cycle. */
    if (queue_batch_owner_locked(st->q, serial, &s) == owner && s->state == SLOT_RECORDING)
        stream_submit_locked(owner, false);
    if (queue_is_lost(q))
        return queue_lost_error(q);
    if (owner == st || queue_batch_owner_locked(st->q, serial, &s) != owner)
        return SALVO_OK; /* in order in one stream, or over already */
    /* Where st's next batch surely goes to st's queue (no copy queue to
     * take a copy elsewhere), it is in order with the owner's batch on the
     * same queue once the device has that; a batch held on the host is
     * sent before st's next (an ordering-only wait). Otherwise a timeline
     * wait, even on the same queue: st's next batch may be a copy on the
     * copy queue. */
    if (!owner->timeline || (s->queue == st->hwq && q->copy_queue == NO_COPY_QUEUE)) {
        if (s->state != SLOT_HELD) {
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

static inline bool conflicts(const hazard_set *h, const access *a, uint32_t n)
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
                              bool addresses) SALVO_REQUIRES(st->q->lock)
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

/* Order c after what it depends on in st's open batch (see
 * order_work_locked): the ranges it declares, as command_access says.
 * Notes in the batch whether c may write memory the host maps
 * (command_writes_host). Inline in its one caller: every launch's path
 * (a call would cost more than most of the work). */
static SALVO_ALWAYS_INLINE void order_command_locked(stream_engine *st, const command *c)
    SALVO_REQUIRES(st->q->lock)
{
    access a[SALVO_MAX_BINDINGS];
    const accel_bind *b = c->binds;
    bool touches_any = command_touches_any(c);
    if (c->kind == COMMAND_DISPATCH) {
        /* Every launch's path: the kernel's reflection read directly, and
         * command_writes_host's answer from the same accesses. */
        const engine_kernel *k = c->object;
        bool to_host = touches_any;
        for (uint32_t i = 0; i < c->bind_count; i++) {
            salvo_access how = b[i].uniform ? SALVO_ACCESS_READ : k->refl.bindings[i].access;
            a[i] = (access){accel_bind_target(&b[i]), b[i].offset, b[i].offset + b[i].size, how};
            to_host |= (how & SALVO_ACCESS_WRITE) && !b[i].unmapped;
        }
        st->open->to_host |= to_host;
    } else {
        for (uint32_t i = 0; i < c->bind_count; i++)
            a[i] = (access){accel_bind_target(&b[i]), b[i].offset, b[i].offset + b[i].size,
                            command_access(c, i)};
        st->open->to_host |= command_writes_host(c);
    }
    order_work_locked(st, a, c->bind_count, !command_is_dispatch(c), touches_any);
}

/* A replay recorded into st's open batch (or standing for it, direct):
 * the graph's touches join the batch's hazards, its kernels its names,
 * its nodes its launches. */
static accel_result graph_recorded_locked(stream_engine *st, const engine_graph *g, bool stale)
    SALVO_REQUIRES(st->q->lock)
{
    queue *q = st->q;
    slot *s = st->open;
    bool copy = g->has_copy;
    bool owed = stale; /* its touches unknown: owes the next work a barrier */
    for (uint32_t i = 0; i < g->touch_count && !stale; i++) {
        const graph_touch *t = &g->touch[i];
        bool w = t->how & SALVO_ACCESS_WRITE;
        if (!hazard_add(&st->hazards, t->buffer, t->begin, t->end, w)) {
            /* More than the set holds: order everything so far instead
             * (a direct batch: owed by the work that records it in). */
            if (!s->direct)
                barrier(q, s, ACCEL_BARRIER_WORK);
            order_reset(st);
            owed = s->direct;
            break;
        }
        if (!copy && !st->compute_overflow)
            st->compute_overflow = !hazard_add(&st->compute_unordered, t->buffer, t->begin,
                                               t->end, w);
    }
    st->copied |= copy;
    st->address_fence = g->addresses || owed;
    slot_note_name(s, g->label);
    for (uint32_t i = 0; i < g->name_count; i++)
        slot_note_name(s, g->names[i]);
    /* A replay counts each of its nodes as a launch (an empty one none). */
    s->launches += g->node_count;
    COUNTER_ADD(&q->n, launches_pending, g->node_count);
    return ACCEL_SUCCESS;
}

/* Whether st's open batch holds nothing yet (its lead barrier only, and
 * waits): a replay may then be the whole batch (graph_direct_locked). Not
 * where a cancel's re-record or a trace writes into it. */
static SALVO_ALWAYS_INLINE bool open_bare_locked(const stream_engine *st)
    SALVO_REQUIRES(st->q->lock)
{
    const slot *s = st->open;
    return s->launches == 0 && st->log.used == 0 && !st->log.broken && s->queue == st->hwq &&
           !trace_batch_traced(st->trace, slot_index(st, s));
}

/* Record the execution of graph c->object's recordings (c->push) into
 * st's open batch, after a barrier where the graph's touches conflict with
 * the batch's hazards (as a launch's ranges do), which they then join.
 * Into a bare batch, where the graph has one free, its direct recording
 * is the batch instead (recorded ahead, with the parameters c holds: the
 * graph's own, as graph_prepare_locked left them), recording nothing. */
static accel_result record_graph_locked(stream_engine *st, const command *c, bool direct,
                                        bool *partial) SALVO_REQUIRES(st->q->lock)
{
    queue *q = st->q;
    slot *s = st->open;
    engine_graph *g = (engine_graph *)c->object;
    salvo_mutex_same(&st->q->lock, &g->q->lock);
    if (direct && open_bare_locked(st))
        s->direct = graph_direct_locked(g, STREAM_BATCH_LEAD, s->serial);
    if (s->direct) {
        COUNTER_ADD(&q->n, replays_ahead, 1);
        return graph_recorded_locked(st, g, false);
    }
    bool copy = g->has_copy, stale = !graph_replay_current(g, c); /* a cancel's, after updates */
    bool fence = g->addresses || st->address_fence || stale;
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
    accel_result ar = command_record_graph(q->acc, q->adev, s->cmd, s->pool, c, partial);
    if (ar != ACCEL_SUCCESS) {
        /* Where part of it was recorded, the caller records the batch
         * again without it. */
        trace_launch_unmark(st->trace, slot_index(st, s), &q->env, s->cmd);
        return ar;
    }
    trace_launch_mark(st->trace, slot_index(st, s), &q->env, s->cmd, true);
    return graph_recorded_locked(st, g, stale);
}


/* Record c (not a mark) into st's open batch, the one path of every
 * command: ordered, recorded, counted and named in the slot, and logged
 * when log is set (a cancel's re-record reads the log it keeps). A
 * failure (a dispatch the driver refused) leaves the batch as it was
 * but for its trace mark; a graph's may leave part of the replay
 * recorded (*partial; stream_graph_locked mends the batch). */
static accel_result record_command_locked(stream_engine *st, const command *c, bool log,
                                          bool *partial)
    SALVO_REQUIRES(st->q->lock)
{
    queue *q = st->q;
    slot *s = st->open;
    if (c->kind == COMMAND_GRAPH) {
        const engine_graph *g = c->object;
        s->to_host |= g->to_host || !graph_replay_current(g, c);
        bool part = false;
        accel_result ar = record_graph_locked(st, c, log, &part);
        if (partial)
            *partial = part;
        if (ar != ACCEL_SUCCESS)
            return ar;
    } else {
        /* A launch alone in its batch that repeats the one before it: the
         * batch is its recording made ahead (ahead_launch_take_locked),
         * ordered (nothing before it in the batch: no barrier) and
         * counted here as any. */
        salvo_mutex_same(&st->q->lock, &q->lock);
        if (log && command_is_dispatch(c) && open_bare_locked(st))
            s->direct = ahead_launch_take_locked(&st->ahead, q, s->serial, STREAM_BATCH_LEAD, c);
        SALVO_CHECK(!s->direct || (!st->hazards.count && !st->address_fence),
                    "a launch made ahead in a batch with work before it");
        order_command_locked(st, c); /* and s->to_host */
        if (s->direct) {
            COUNTER_ADD(&q->n, launches_ahead, 1);
        } else {
            /* The marks only where st is traced (they do nothing else). */
            if (st->trace)
                trace_launch_mark(st->trace, slot_index(st, s), &q->env, s->cmd, false);
            accel_result ar = command_record(q->acc, q->adev, s->cmd, s->pool, c);
            if (ar != ACCEL_SUCCESS) {
                trace_launch_unmark(st->trace, slot_index(st, s), &q->env, s->cmd);
                return ar;
            }
            if (st->trace)
                trace_launch_mark(st->trace, slot_index(st, s), &q->env, s->cmd, true);
        }
        /* Commands that declared nothing: ordered after everything later
         * in the batch too. */
        if (command_touches_any(c) && c->kind == COMMAND_NATIVE)
            st->address_fence = true;
        slot_note_launch(s, c->kind == COMMAND_DISPATCH
                                ? ((const engine_kernel *)c->object)->name
                                : command_name(c));
        COUNTER_ADD(&q->n, launches_pending, 1);
    }
    if (c->kind == COMMAND_DISPATCH)
        st->batch_groups += (uint64_t)c->groups[0] * c->groups[1] * c->groups[2];
    else if (c->kind == COMMAND_GRAPH)
        st->batch_groups += ((const engine_graph *)c->object)->groups_total;
    if (log)
        batch_log_append(&st->log, c);
    return ACCEL_SUCCESS;
}

/* Open a batch on st's own queue for work that does not run on the copy
 * queue (kernels, images, the program's own commands): a batch of copies
 * open there goes first. */
static inline salvo_status open_on_compute_locked(stream_engine *st) SALVO_REQUIRES(st->q->lock)
{
    if (st->open && st->open->queue == st->q->copy_queue) {
        salvo_status r = stream_submit_locked(st, true);
        if (r != SALVO_OK)
            return r;
    }
    salvo_status r = st->open ? SALVO_OK : stream_open_locked(st);
    return r == SALVO_OK && st->open->direct ? stream_undirect_locked(st) : r;
}

/* Record a dispatch (or another command that takes a descriptor set)
 * into the open slot, submitting first when its descriptor pool is full. */
static salvo_status record_dispatch_locked(stream_engine *st, const command *c)
    SALVO_REQUIRES(st->q->lock)
{
    queue *q = st->q;
    for (int attempt = 0;; attempt++) {
        salvo_status r = open_on_compute_locked(st);
        if (r != SALVO_OK)
            return r;
        slot *s = st->open;
        accel_result ar = record_command_locked(st, c, true, NULL);
        if (ar == ACCEL_SUCCESS)
            return SALVO_OK;
        if (ar == ACCEL_ERROR_OUT_OF_POOL_MEMORY && attempt == 0 && s->launches > 0) {
            r = stream_submit_locked(st, true);
            if (r != SALVO_OK)
                return r;
            continue;
        }
        if (ar == ACCEL_ERROR_DEVICE_LOST)
            queue_mark_lost_locked(st->q);
        return QUEUE_FAIL(q, salvo_status_from_accel(ar),
                          command_is_dispatch(c) ? "launch of kernel '%s': not recorded (%s)"
                                                 : "%s: not recorded (%s)",
                          command_name(c), accel_result_name(ar));
    }
}

/* Record st's open batch again from scratch, with the log's entries from
 * offset on: its waits, then those entries. Same serial, so events and
 * releases keyed on it stay right. On failure the slot holds part of the
 * entries and is still open. */
static salvo_status rerecord_locked(stream_engine *st, size_t offset, const char *what)
    SALVO_REQUIRES(st->q->lock)
{
    queue *q = st->q;
    slot *s = st->open;
    slot_dep waits[SLOT_MAX_WAITS];
    uint32_t wait_count = s->wait_count;
    memcpy(waits, s->waits, wait_count * sizeof *waits);
    const void *host_read = s->host_read;
    uint32_t host_reads = s->host_reads;
    bool pointed = s->pointed;
    uint64_t serial = s->serial;
    uint32_t withdrawn = 0;
    const batch_entry *w;
    for (size_t o = st->log.start; o < offset && (w = batch_log_at(&st->log, o)); o += w->size)
        withdrawn += w->kind != COMMAND_MARK;
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
    s->pointed = pointed;
    /* Events recorded among the withdrawn work (now or by an earlier
     * cancel) and not again after it mark the batch's start, first. */
    struct timing_mark *start = NULL;
    for (size_t o = 0; o < offset && (w = batch_log_at(&st->log, o)); o += w->size) {
        if (w->kind != COMMAND_MARK || batch_log_has_mark(&st->log, offset, batch_entry_mark(w)))
            continue;
        if (start)
            timing_rewrite_same_locked(st->q, batch_entry_mark(w), start);
        else
            timing_rewrite_locked(st->q, start = batch_entry_mark(w), s);
    }
    for (const batch_entry *e; (e = batch_log_at(&st->log, offset)); offset += e->size) {
        if (e->kind == COMMAND_MARK) {
            timing_rewrite_locked(st->q, batch_entry_mark(e), s);
            continue;
        }
        command c = batch_entry_command(e);
        accel_result ar = record_command_locked(st, &c, false, NULL);
        if (ar != ACCEL_SUCCESS)
            return QUEUE_FAIL(q, salvo_status_from_accel(ar),
                              "%s: launch of kernel '%s' could not be recorded again (%s)", what,
                              command_name(&c), accel_result_name(ar));
        trace_launch_note(q->trace, st->trace, slot_index(st, s),
                          c.kind == COMMAND_GRAPH ? ((const engine_graph *)c.object)->label
                                                  : command_name(&c),
                          0);
    }
    return SALVO_OK;
}

/* What st's open batch is beyond its work (its slot, serial, signal and
 * waits), kept before it is recorded again: a recording that fails may
 * leave the slot idle. */
typedef struct batch_place {
    slot *s; /* NULL: no open batch */
    uint64_t serial;
    accel_sem_op signal;
    uint32_t wait_count;
    slot_dep waits[SLOT_MAX_WAITS];
} batch_place;

static void place_of(const stream_engine *st, batch_place *p) SALVO_REQUIRES(st->q->lock)
{
    p->s = st->open;
    if (!p->s)
        return;
    p->serial = p->s->serial;
    p->signal = p->s->signal;
    p->wait_count = p->s->wait_count;
    memcpy(p->waits, p->s->waits, p->wait_count * sizeof *p->waits);
}

/* After failure r (its message set) left st's open batch half recorded
 * (or, a recording again having failed, idle: place says what it was):
 * record it again from its log, all of what it held before, and return r
 * with its message. Where even that cannot be done (a log that could not
 * be kept, a device lost, a recording refused again), the batch's
 * launches are dropped, and whoever waits for the stream next is told so
 * (with status dropped) as well as this caller; the batch still holds its
 * place in the stream's order (as a refused one: slot_submit), and its
 * events say it failed. */
static salvo_status mend_locked(stream_engine *st, salvo_status r, const char *what,
                                salvo_status dropped, const batch_place *place)
    SALVO_REQUIRES(st->q->lock)
{
    queue *q = st->q;
    char msg[SALVO_ERROR_MAX], why[SALVO_ERROR_MAX];
    memcpy(msg, salvo_last_error(), sizeof msg);
    memcpy(why, msg, sizeof why);
    if (!queue_is_lost(q) && st->open && !st->log.broken) {
        if (rerecord_locked(st, st->log.start, what) == SALVO_OK) {
            salvo_set_error(msg);
            return r;
        }
        memcpy(why, salvo_last_error(), sizeof why); /* what refused it this time */
    }
    if (st->open) {
        COUNTER_SUB(&q->n, launches_pending, st->open->launches);
        slot_discard(st->open, &q->env);
        st->open = NULL;
    }
    if (!queue_is_lost(q)) {
        salvo_status lost = QUEUE_FAIL(q, dropped,
                                       "%s: the batch could not be recorded again; its launches "
                                       "were dropped (%s)",
                                       what, why);
        stream_defer_locked(st, lost);
        if (place->s && place->s->state == SLOT_IDLE) {
            slot_reopen_empty(place->s, &q->env, place->serial, place->signal, place->waits,
                              place->wait_count);
            queue_note_refused_locked(st->q, place->serial, dropped);
            st->open = place->s;
            stream_submit_locked(st, false);
        }
    }
    salvo_set_error(msg);
    return r;
}

salvo_status stream_undirect_locked(stream_engine *st)
{
    slot *s = st->open;
    if (!s || !s->direct)
        return SALVO_OK;
    queue *q = st->q;
    char what[96] = "the work recorded ahead";
    /* The batch's work is the log's one entry, as it was made. */
    const batch_entry *e = st->log.broken ? NULL : batch_log_at(&st->log, st->log.start);
    accel_result ar = e ? slot_direct_cmd(s, &q->env, STREAM_BATCH_LEAD)
                        : ACCEL_ERROR_OUT_OF_HOST_MEMORY;
    if (e) {
        command c = batch_entry_command(e);
        bool graph = c.kind == COMMAND_GRAPH;
        if (graph)
            snprintf(what, sizeof what, "%s", ((const engine_graph *)c.object)->label);
        else
            snprintf(what, sizeof what, "the launch of kernel '%s'", command_name(&c));
        bool partial = false;
        if (ar == ACCEL_SUCCESS)
            ar = graph ? command_record_graph(q->acc, q->adev, s->cmd, s->pool, &c, &partial)
                       : command_record(q->acc, q->adev, s->cmd, s->pool, &c);
        if (ar == ACCEL_SUCCESS) {
            s->direct = NULL;
            /* Submitted as recorded into the batch after all: the stats
             * count only what goes as the recording made ahead. */
            if (graph)
                COUNTER_SUB(&q->n, replays_ahead, 1);
            else
                COUNTER_SUB(&q->n, launches_ahead, 1);
            return SALVO_OK;
        }
        s->direct_dirty = true;
    }
    /* The work still runs as it is; what was to follow it is refused. */
    if (ar == ACCEL_ERROR_DEVICE_LOST)
        queue_mark_lost_locked(st->q);
    return QUEUE_FAIL(q, salvo_status_from_accel(ar),
                      "%s, the batch so far, could not be recorded for work to follow it in "
                      "the batch (%s); it runs, this call's work was not recorded",
                      what, accel_result_name(ar));
}

bool stream_work_before_locked(const stream_engine *st, size_t offset)
{
    /* A point inside what a cancel withdrew looks at that work. */
    size_t from = offset > st->log.start ? st->log.start : 0;
    const batch_entry *e;
    for (size_t o = from; o < offset && (e = batch_log_at(&st->log, o)); o += e->size)
        if (e->kind != COMMAND_MARK)
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
    batch_place place;
    place_of(st, &place);
    salvo_status r = rerecord_locked(st, offset, "cancel");
    if (r == SALVO_OK) {
        st->log.start = offset;
        return SALVO_OK;
    }
    /* A failed cancel withdraws nothing: record the whole batch again. */
    return mend_locked(st, r, "cancel", SALVO_ERROR_BATCH_FAILED, &place);
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
    st->refs = 1;
    st->handle_held = true;
    uint32_t sets = st->batch_size < POOL_MAX_SETS ? st->batch_size : POOL_MAX_SETS;
    /* Room for at least one launch of the widest kernel. */
    uint32_t per_set = POOL_BINDINGS_PER_SET;
    if (sets * per_set < SALVO_MAX_BINDINGS)
        per_set = (SALVO_MAX_BINDINGS + sets - 1) / sets;
    if (q->timelines) {
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
        salvo_status r = queue_noted(
            q, slot_init(&st->slots[i], &q->env, sets, per_set, st->timeline == NULL));
        if (r != SALVO_OK) {
            for (int j = 0; j < i; j++)
                slot_destroy(&st->slots[j], &q->env);
            if (st->timeline)
                timeline_release(&st->timeline->release, false);
            return r;
        }
    }
    salvo_mutex_lock(&q->lock);
    /* Room in the batch table for every slot of every stream, this one's
     * included: a batch never allocates as it begins. */
    uint32_t streams = 1;
    for (const stream_engine *o = q->streams; o; o = o->next)
        streams++;
    if (slot_table_reserve(&q->batches, q->alloc, streams * STREAM_SLOTS) != SALVO_OK) {
        salvo_mutex_unlock(&q->lock);
        for (int i = 0; i < STREAM_SLOTS; i++)
            slot_destroy(&st->slots[i], &q->env);
        if (st->timeline)
            timeline_release(&st->timeline->release, false);
        return QUEUE_FAIL(q, SALVO_ERROR_OUT_OF_HOST_MEMORY, "stream_create: out of host memory");
    }
    for (int i = 0; i < STREAM_SLOTS; i++)
        st->slots[i].owner = st;
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
    salvo_mutex_same(&q->lock, &st->q->lock);
    stream_trace_attach_locked(st);
    salvo_mutex_unlock(&q->lock);
    COUNTER_ADD(&q->n, live_streams, 1);
    return SALVO_OK;
}

void stream_engine_destroy(stream_engine *st)
{
    /* Once destroyed is set without the lock, any drain point on another
     * thread may free the stream: it is the last thing done to st. */
    queue *q = st->q;
    if (!salvo_mutex_trylock(&q->lock)) {
        if (!atomic_exchange(&st->destroyed, true))
            COUNTER_SUB(&q->n, live_streams, 1);
        return;
    }
    salvo_mutex_same(&q->lock, &st->q->lock);
    if (!atomic_exchange(&st->destroyed, true)) {
        COUNTER_SUB(&q->n, live_streams, 1);
        if (stream_settle_locked(st))
            queue_advance_locked(q); /* its timeline's release, if nothing waits on it */
    }
    salvo_mutex_unlock(&q->lock);
}

/* The one epilogue of every command recorded into a batch: submit it when
 * full (growing the next towards the full size), and with a batch size of
 * 1 wait for it, whatever the command. */
static salvo_status batch_check_locked(stream_engine *st, slot *s) SALVO_REQUIRES(st->q->lock)
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

/* What traces call c's work. */
static const char *trace_name(const command *c)
{
    return c->kind == COMMAND_GRAPH ? ((const engine_graph *)c->object)->label : command_name(c);
}

/* After c went into st's open batch s: its trace note, then the batch
 * policy (the one epilogue). */
static inline salvo_status command_done_locked(stream_engine *st, slot *s, const command *c,
                                               uint64_t t0, uint64_t *serial)
    SALVO_REQUIRES(st->q->lock)
{
    queue *q = st->q;
    if (st->trace)
        trace_launch_note(q->trace, st->trace, slot_index(st, s), trace_name(c), t0);
    *serial = s->serial;
    return batch_check_locked(st, s);
}

static uint64_t trace_start(const stream_engine *st)
{
    return st->trace && st->q->trace ? trace_now_ns() : 0;
}

void stream_set_recorder_locked(stream_engine *st, stream_recorder_fn fn, void *ctx)
{
    st->recorder = fn;
    st->recorder_ctx = fn ? ctx : NULL;
}

salvo_status stream_command_locked(stream_engine *st, const command *c, const stream_call *call,
                                   uint64_t *serial)
{
    queue *q = st->q;
    *serial = 0;
    if (st->recorder)
        return st->recorder(st->recorder_ctx, c, call->holds);
    uint64_t t0 = trace_start(st);
    sched_relieve_locked(st->q);
    salvo_status r;
    if (command_takes_set(c)) {
        r = record_dispatch_locked(st, c);
    } else {
        /* Copies and fills go into the open batch, whatever its queue;
         * host memory to or from the device is the copy engine's work,
         * beside kernels (not while tracing: see stream_open_on_locked).
         * Images live on the streams' queue family only, and the
         * program's own commands on st's queue. */
        bool any = c->kind == COMMAND_COPY || c->kind == COMMAND_FILL;
        r = any ? stream_open_on_locked(st, call->host_side) : open_on_compute_locked(st);
        if (r == SALVO_OK && any && st->open->direct)
            r = stream_undirect_locked(st);
        if (r == SALVO_OK)
            record_command_locked(st, c, true, NULL); /* cannot fail: only a set can */
    }
    if (r != SALVO_OK)
        return r;
    if (command_is_dispatch(c))
        COUNTER_ADD(&q->n, launches_total, 1);
    if (call->bytes)
        COUNTER_ADD(&q->n, transfer_bytes, call->bytes);
    return command_done_locked(st, st->open, c, t0, serial);
}

salvo_status stream_synchronize_locked(stream_engine *st, char msg[SALVO_ERROR_MAX],
                                       bool *expired_out)
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
        r = queue_wait_slot_locked(st->q, st, s, true);
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
            r = queue_wait_slot_locked(st->q, st, cover, true);
        expired = r == SALVO_TIMEOUT;
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
    first = queue_loss_wins_locked(st->q, first, msg);
    if (!queue_is_lost(q))
        sched_reap_locked(st->q);
    /* The stream is idle: the next batch starts small so the device starts early. */
    st->batch_limit = st->first_batch;
    *expired_out = expired;
    return first;
}

salvo_status stream_graph_locked(stream_engine *st, engine_graph *g, uint64_t *serial)
{
    queue *q = st->q;
    *serial = 0;
    if (g->node_count == 0)
        return SALVO_OK; /* nothing to run, nothing to order */
    uint64_t t0 = trace_start(st);
    sched_relieve_locked(st->q);
    salvo_status r = open_on_compute_locked(st);
    if (r != SALVO_OK)
        return r;
    /* After the open, which may drop the lock: what is executed is what
     * the graph holds now. */
    salvo_mutex_same(&st->q->lock, &g->q->lock);
    r = graph_prepare_locked(g, st->number);
    if (r != SALVO_OK)
        return r;
    slot *s = st->open;
    command c = graph_replay_command(g);
    bool partial = false;
    accel_result ar = record_command_locked(st, &c, true, &partial);
    if (ar != ACCEL_SUCCESS) {
        if (ar == ACCEL_ERROR_DEVICE_LOST)
            queue_mark_lost_locked(st->q);
        char names[256];
        graph_failure_names(g, names, sizeof names);
        r = QUEUE_FAIL(q, salvo_status_from_accel(ar),
                       "replay of %s could not be recorded (%s); nothing of the replay runs; %s",
                       g->label, accel_result_name(ar), names);
        /* The launches before it, should they be dropped, for the same
         * reason (a recording refused again). */
        if (!partial)
            return r;
        batch_place place;
        place_of(st, &place);
        return mend_locked(st, r, "replay", r, &place);
    }
    COUNTER_ADD(&q->n, launches_total, g->node_count);
    graph_note_replay_locked(g, st->number, s->serial);
    return command_done_locked(st, s, &c, t0, serial);
}
