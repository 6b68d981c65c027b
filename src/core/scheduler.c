/* The scheduler: when a stream's batch goes to the device, and the walks
 * over every stream of the device that submit, wait for and finish their
 * batches (reap, quiesce, the release bounds, device-wide waits and
 * synchronize, the end of streams). See scheduler.h. */
#include "core/scheduler.h"

#include <string.h>

#include "core/graph.h"
#include "core/timing.h"
#include "core/wait.h"

/* target among s's noted buffers (past the table: any). */
static void note_buffer(slot *s, const void *target)
{
    uint32_t k = 0;
    while (k < s->noted_count && s->noted_buffers[k] != target)
        k++;
    if (k == s->noted_count) {
        if (k < SLOT_MAX_NOTED_BUFFERS)
            s->noted_buffers[k] = target;
        s->noted_count++;
    }
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
        /* A kernel using buffer addresses, or commands of the program's
         * declaring nothing, may touch any: any. So may a replay whose
         * graph reaches memory through addresses or was planned again
         * since (its buffers known to no one); else the graph's. */
        command c = batch_entry_command(e);
        const engine_graph *g = e->kind == COMMAND_GRAPH ? c.object : NULL;
        if (command_touches_any(&c) || (g && (g->addresses || !graph_replay_current(g, &c)))) {
            s->noted_count = SLOT_MAX_NOTED_BUFFERS + 1;
            break;
        }
        for (uint32_t i = 0; g && i < g->touch_count; i++)
            note_buffer(s, g->touch[i].buffer);
        const accel_bind *b = batch_entry_binds(e);
        for (uint32_t i = 0; !g && i < e->bind_count; i++)
            note_buffer(s, accel_bind_target(&b[i]));
        o += e->size;
    }
}

/* Begin st's next slot ahead (slot_prepare) while the device runs the
 * batch just submitted: the next batch's begin then costs nothing. Not
 * where that batch may go to another queue (a slot last used for the copy
 * queue) or where a trace stamps each batch's start first. */
static void prepare_next(stream_engine *st) SALVO_REQUIRES(st->q->lock)
{
    slot *s = &st->slots[st->cur];
    if (!st->open && !s->waiters && s->queue == st->hwq && !st->q->trace)
        slot_prepare(s, &st->q->env, STREAM_BATCH_LEAD);
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
    /* What the host maps and the batch wrote, made visible to the host. */
    if (s->to_host && !s->direct) { /* a direct batch has its own */
        q->acc->vt->cmd_barrier(q->acc->self, q->adev, s->cmd, ACCEL_BARRIER_ALL_HOST);
        COUNTER_ADD(&q->n, barriers_emitted, 1);
    }
    uint32_t n = s->launches;
    /* A batch that stands in empty (its work dropped) has no command
     * buffer begun to stamp: not traced, as a refused one. */
    uint64_t t0 =
        s->empty ? 0 : trace_submit_begin(st->trace, slot_index(st, s), &q->env, s->cmd);
    queue_pump_locked(st->q);
    /* Sending held batches may have found the device lost (and abandoned
     * this one). */
    if (queue_is_lost(q) || s->state == SLOT_ABANDONED) {
        trace_submit_end(st->trace, slot_index(st, s), t0, false);
        return queue_lost_error(q);
    }
    bool hold = queue_must_hold_locked(st->q, st, s);
    bool gated = hold;
    for (uint32_t w = 0; w < s->wait_count && !gated; w++)
        gated = s->waits[w].serial == 0 && s->waits[w].op.timeline;
    if (gated)
        note_buffers(st, s);
    salvo_status r = slot_submit(s, &q->env, hold);
    trace_submit_end(st->trace, slot_index(st, s), t0, r == SALVO_OK && !s->empty);
    /* Refused, it may stand in empty (slot_submit): in the stream's order
     * as a submitted batch, its failure reported all the same. */
    bool stand_in = r != SALVO_OK && s->empty && slot_submitted(s);
    if (r == SALVO_OK || stand_in) {
        COUNTER_ADD(&q->n, batches_submitted, r == SALVO_OK);
        st->last_serial = s->serial;
        st->last_queue = s->queue;
        st->queue_ordered = false; /* after, on the one queue: covers it */
        st->cur = (st->cur + 1) % STREAM_SLOTS;
        prepare_next(st);
        if (r == SALVO_OK)
            return SALVO_OK;
    }
    if (!slot_active(s) || stand_in) {
        COUNTER_SUB(&q->n, launches_pending, n);
        if (s->state == SLOT_IDLE || stand_in)
            queue_note_refused_locked(st->q, s->serial, r);
    }
    if (r == SALVO_ERROR_DEVICE_LOST)
        queue_mark_lost_locked(st->q);
    if (!report)
        stream_defer_locked(st, r);
    return r;
}

void sched_settle_for_destroy_locked(queue *q)
{
    if (queue_is_lost(q))
        return;
    salvo_status st = sched_quiesce_locked(q, UINT64_MAX);
    if (st == SALVO_OK || queue_is_lost(q))
        return;
    /* A wait that would not finish: the queue is the last resort. */
    accel_result r = queue_wait_idle_locked(q);
    if (r != ACCEL_SUCCESS) {
        queue_mark_lost_locked(q);
        return;
    }
    for (stream_engine *s = q->streams; s; s = s->next)
        for (int i = 0; i < STREAM_SLOTS; i++) {
            if (s->slots[i].state == SLOT_IN_FLIGHT)
                slot_complete(&s->slots[i], &q->env, ACCEL_SUCCESS);
            else if (s->slots[i].state == SLOT_HELD)
                slot_abandon(&s->slots[i], &q->env); /* never given to the device */
        }
}

void sched_release_all_locked(queue *q)
{
    /* Streams first: freeing one queues the release of its timeline. */
    if (queue_is_lost(q))
        queue_mark_lost_locked(q);
    while (q->streams) {
        salvo_mutex_same(&q->lock, &q->streams->q->lock);
        stream_free_locked(q->streams);
    }
    if (queue_is_lost(q))
        retire_abandon(&q->retire);
    else
        retire_drain(&q->retire);
}

void sched_submit_batch_locked(queue *q, uint64_t serial)
{
    slot *s = NULL;
    stream_engine *owner = queue_batch_owner_locked(q, serial, &s);
    if (owner && s->state == SLOT_RECORDING) {
        salvo_mutex_same(&q->lock, &owner->q->lock);
        stream_submit_locked(owner, false);
    }
}

salvo_status sched_wait_batch_locked(queue *q, uint64_t serial)
{
    for (;;) {
        if (queue_is_lost(q))
            return queue_lost_error(q);
        slot *s = NULL;
        stream_engine *owner = queue_batch_owner_locked(q, serial, &s);
        if (!owner)
            return SALVO_OK;
        salvo_mutex_same(&q->lock, &owner->q->lock);
        salvo_status r = s->state == SLOT_RECORDING ? stream_submit_locked(owner, false)
                                                    : queue_wait_slot_locked(q, owner, s, false);
        if (r != SALVO_OK && queue_batch_owner_locked(q, serial, NULL))
            return r;
    }
}

salvo_status sched_synchronize_locked(queue *q, char msg[SALVO_ERROR_MAX], bool *expired)
{
    salvo_status r = sched_quiesce_locked(q, UINT64_MAX);
    *expired = r == SALVO_TIMEOUT;
    memcpy(msg, salvo_last_error(), SALVO_ERROR_MAX);
    salvo_status first = SALVO_OK;
    /* Each stream's kept failure belongs to this caller now; the first wins. */
    for (stream_engine *st = q->streams; st; st = st->next) {
        if (st->deferred == SALVO_OK)
            continue;
        if (first == SALVO_OK) {
            first = st->deferred;
            memcpy(msg, st->deferred_msg, SALVO_ERROR_MAX);
        }
        st->deferred = SALVO_OK;
    }
    if (first == SALVO_OK)
        first = r;
    first = queue_loss_wins_locked(q, first, msg);
    sched_reap_locked(q);
    return first;
}

void sched_reap_locked(queue *q)
{
    if (queue_is_lost(q))
        queue_mark_lost_locked(q);
    queue_pump_locked(q);
    /* Releases left on the lock-free list by a destroy that found the lock
     * busy are taken in after the pump: a destroy may land there while the
     * pump runs (another thread's, or one from inside a gate poll). */
    retire_collect(&q->retire);
    for (stream_engine *st = q->streams; st; st = st->next) {
        salvo_mutex_same(&q->lock, &st->q->lock);
        if (atomic_load(&st->destroyed) && st->open && !queue_is_lost(q))
            stream_submit_locked(st, false);
        for (int i = 0; i < STREAM_SLOTS && !queue_is_lost(q); i++) {
            slot *s = &st->slots[i];
            if (s->state != SLOT_IN_FLIGHT)
                continue; /* held: pumped above, not on the device */
            uint32_t n = s->launches;
            bool ran = !s->empty; /* a refused batch's stand-in runs nothing */
            salvo_status r = slot_poll(s, &q->env);
            if (!slot_active(s))
                COUNTER_SUB(&q->n, launches_pending, n);
            if (r == SALVO_OK) {
                stream_trace_retired_locked(st, s);
                timing_batch_done_locked(q, s->serial, ran);
            } else if (r < 0) {
                if (r == SALVO_ERROR_DEVICE_LOST)
                    queue_mark_lost_locked(q);
                /* A look that failed with the batch still in flight is no
                 * failure of the batch's: its stream's next wait sees how
                 * it ends (queue_observed_locked). */
                if (s->state != SLOT_IN_FLIGHT || r == SALVO_ERROR_DEVICE_LOST)
                    stream_defer_locked(st, r);
            }
        }
    }
    /* Each stream takes in a destroy made without the lock and work that
     * is over; one whose count reaches zero goes now, before the releases
     * run, since a free queues its timeline's release. */
    for (stream_engine *st = q->streams, *next; st; st = next) {
        next = st->next;
        salvo_mutex_same(&q->lock, &st->q->lock);
        stream_settle_locked(st);
    }
    /* Whatever can run now runs, whatever made it runnable: a batch seen
     * complete, one the pump sent and the device refused (over, never
     * completing), a release taken in above, a stream freed. A drain point
     * that left a runnable release queued would leave it to a later call
     * that may never come. Not in the launch path: the walk is cheap. */
    queue_advance_locked(q);
}

/* Whether slot s, its buffers noted, may bind ab. */
static bool noted_uses(const slot *s, const accel_buffer *ab)
{
    if (s->noted_count > SLOT_MAX_NOTED_BUFFERS)
        return true;
    for (uint32_t i = 0; i < s->noted_count; i++)
        if (s->noted_buffers[i] == ab)
            return true;
    return false;
}

salvo_status sched_quiesce_locked(queue *q, uint64_t limit)
{
    return sched_quiesce_for_locked(q, limit, NULL);
}

salvo_status sched_quiesce_for_locked(queue *q, uint64_t limit, const accel_buffer *ab)
{
    /* A wait that failed (not a loss, not the timeout) leaves its batch
     * running: the others are still waited for, that one again (up to
     * RECOVERY_ATTEMPTS times in a row), and the first failure returned
     * once all are over, its message kept. */
    salvo_status failed = SALVO_OK;
    char failed_msg[SALVO_ERROR_MAX];
    uint64_t failing = 0;
    int failures = 0;
    for (;;) {
        if (queue_is_lost(q)) {
            queue_mark_lost_locked(q);
            return queue_lost_error(q);
        }
        stream_engine *wst = NULL;
        slot *ws = NULL;
        for (stream_engine *st = q->streams; st; st = st->next) {
            salvo_mutex_same(&q->lock, &st->q->lock);
            if (st->open && st->open->serial <= limit)
                stream_submit_locked(st, false);
            for (int i = 0; i < STREAM_SLOTS; i++) {
                slot *s = &st->slots[i];
                if (slot_submitted(s) && s->serial <= limit &&
                    !(ab && s->buffers_noted && !noted_uses(s, ab)) &&
                    (!ws || s->serial < ws->serial)) {
                    ws = s;
                    wst = st;
                }
            }
        }
        if (queue_is_lost(q))
            return queue_lost_error(q);
        if (!ws) {
            if (failed != SALVO_OK)
                salvo_set_error(failed_msg);
            return failed;
        }
        salvo_status r = queue_wait_slot_locked(q, wst, ws, false);
        if (r == SALVO_ERROR_DEVICE_LOST || r == SALVO_TIMEOUT)
            return r;
        if (r < 0 && slot_submitted(ws)) {
            if (failed == SALVO_OK) {
                failed = r;
                memcpy(failed_msg, salvo_last_error(), SALVO_ERROR_MAX);
            }
            failures = ws->serial == failing ? failures + 1 : 1;
            failing = ws->serial;
            if (failures >= RECOVERY_ATTEMPTS)
                return r; /* the wait itself keeps failing: no progress possible */
        }
    }
}

void sched_relieve_run_locked(queue *q)
{
    if (retire_collect(&q->retire))
        queue_advance_locked(q);
    if (retire_pending(&q->retire) <= q->release_max_count &&
        atomic_load(&q->retire.bytes) <= q->release_max_bytes)
        return;
    sched_reap_locked(q);
    if (retire_pending(&q->retire) <= q->release_max_count &&
        atomic_load(&q->retire.bytes) <= q->release_max_bytes)
        return;
    /* Still over: wait for what the oldest releases wait on, unless that
     * work is held by a gate (the bound is then exceeded until it opens). */
    if (queue_gated_locked(q))
        return;
    uint64_t limit = 0;
    for (retire_entry *e = q->retire.head; e; e = e->next)
        if (e->tag > limit)
            limit = e->tag;
    if (limit > 0 && sched_quiesce_locked(q, limit - 1) == SALVO_OK)
        queue_advance_locked(q);
}

accel_result sched_buffer_create_locked(queue *q, const accel_buffer_desc *d,
                                         accel_buffer **out, accel_buffer_info *info)
{
    accel_result r = q->acc->vt->buffer_create(q->acc->self, q->adev, d, out, info);
    if (r != ACCEL_ERROR_OUT_OF_DEVICE_MEMORY)
        return r;
    /* Memory may be held by releases waiting on work: run them and retry once. */
    sched_reap_locked(q);
    if (retire_pending(&q->retire) > 0 && !queue_gated_locked(q) &&
        sched_quiesce_locked(q, UINT64_MAX) == SALVO_OK)
        queue_advance_locked(q);
    return q->acc->vt->buffer_create(q->acc->self, q->adev, d, out, info);
}

salvo_status sched_wait_batch_until_locked(queue *q, uint64_t serial, uint64_t deadline_ns)
{
    if (deadline_ns == UINT64_MAX && q->fence_timeout_ns == UINT64_MAX)
        return sched_wait_batch_locked(q, serial);
    /* The device's fence timeout bounds this wait too. */
    deadline_ns = wait_sooner(deadline_ns, wait_deadline(q));
    uint64_t nap = 20 * 1000;
    for (;;) {
        if (queue_is_lost(q)) {
            queue_mark_lost_locked(q);
            return queue_lost_error(q);
        }
        slot *s = NULL;
        stream_engine *owner = queue_batch_owner_locked(q, serial, &s);
        if (!owner)
            return SALVO_OK;
        if (s->state == SLOT_RECORDING) {
            /* A refusal is its stream's to report; the batch is over then. */
            salvo_mutex_same(&q->lock, &owner->q->lock);
            stream_submit_locked(owner, false);
            continue;
        }
        sched_reap_locked(q); /* completes it if it is over; pumps held batches */
        if (queue_is_lost(q) || queue_batch_done_locked(q, serial))
            continue;
        if (wait_now_ns() >= deadline_ns)
            return QUEUE_FAIL(q, SALVO_TIMEOUT,
                              "the batch (serial %llu) did not complete within the wait's bound; "
                              "it goes on",
                              (unsigned long long)serial);
        /* Held on the host for a gate: look again after a nap (the next
         * look pumps it once the gate is up). On the device: its fence. */
        bool held = s->state == SLOT_HELD;
        wait_spec w = {.nap_ns = nap, .batch = held ? NULL : s, .deadline_ns = deadline_ns};
        if (!held && !slot_done_on_timeline(s, &w.until))
            w.fence = s->fence;
        accel_result r = wait_locked(q, &w);
        if (held) {
            nap = nap * 2 < HELD_WAIT_NAP_MAX_NS ? nap * 2 : HELD_WAIT_NAP_MAX_NS;
            continue;
        }
        if (r == ACCEL_ERROR_DEVICE_LOST) {
            queue_mark_lost_locked(q);
            return queue_lost_error(q);
        }
        /* Seen done: done now (a later look might not see it again: a
         * timeline that cannot be read, say). */
        if (r == ACCEL_SUCCESS && s->state == SLOT_IN_FLIGHT && s->serial == serial)
            queue_observed_locked(q, owner, s, r, false);
        if (r == ACCEL_SUCCESS || r == ACCEL_TIMEOUT)
            continue; /* the next look completes it, or sees the bound expired */
        if (s->state == SLOT_IN_FLIGHT && s->serial == serial)
            return QUEUE_FAIL(q, salvo_status_from_accel(r),
                              "waiting for the batch (serial %llu) failed (%s); it goes on",
                              (unsigned long long)serial, accel_result_name(r));
    }
}
