/* The queue: submission, the retire clock, waits, device loss. See
 * queue.h for what it owns and the locking order. */
#define _POSIX_C_SOURCE 200809L
#include "core/queue.h"

#include <string.h>
#include <time.h>

#include "core/stream_engine.h"
#include "core/timing.h"
#include "core/wait.h"

salvo_status queue_init(queue *q)
{
    q->env = (slot_env){q->acc, q->adev, q->log, &q->batches};
    if (salvo_mutex_init(&q->lock) != 0)
        return SALVO_FAIL(q->log, SALVO_ERROR_OUT_OF_HOST_MEMORY, "cannot create the device lock");
    if (pthread_cond_init(&q->slot_cv, NULL) != 0) {
        salvo_mutex_destroy(&q->lock);
        return SALVO_FAIL(q->log, SALVO_ERROR_OUT_OF_HOST_MEMORY, "cannot create the device lock");
    }
    atomic_init(&q->next_serial, 1);
    atomic_init(&q->lost, false);
    retire_init(&q->retire, q->log);
    return SALVO_OK;
}

void queue_settle_for_destroy_locked(queue *q)
{
    if (queue_is_lost(q))
        return;
    salvo_status st = queue_quiesce_locked(q, UINT64_MAX);
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

void queue_release_all_locked(queue *q)
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

void queue_fini_locked(queue *q)
{
    retire_close(&q->retire);
    slot_table_free(&q->batches, q->alloc);
}

void queue_destroy_lock(queue *q)
{
    pthread_cond_destroy(&q->slot_cv);
    salvo_mutex_destroy(&q->lock);
}

stream_engine *queue_batch_owner_locked(queue *q, uint64_t serial, slot **out)
{
    slot *s = slot_table_find(&q->batches, serial);
    if (!s)
        return NULL;
    if (out)
        *out = s;
    return s->owner;
}

void queue_submit_batch_locked(queue *q, uint64_t serial)
{
    slot *s = NULL;
    stream_engine *owner = queue_batch_owner_locked(q, serial, &s);
    if (owner && s->state == SLOT_RECORDING) {
        salvo_mutex_same(&q->lock, &owner->q->lock);
        stream_submit_locked(owner, false);
    }
}

salvo_status queue_wait_batch_locked(queue *q, uint64_t serial)
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

salvo_status queue_synchronize_locked(queue *q, char msg[SALVO_ERROR_MAX])
{
    salvo_status r = queue_quiesce_locked(q, UINT64_MAX);
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
    queue_reap_locked(q);
    return first;
}

salvo_status queue_loss_wins_locked(queue *q, salvo_status first, char msg[SALVO_ERROR_MAX])
{
    if (!queue_is_lost(q) || first == SALVO_ERROR_DEVICE_LOST)
        return first;
    char earlier[SALVO_ERROR_MAX];
    memcpy(earlier, msg, SALVO_ERROR_MAX);
    earlier[SALVO_ERROR_MAX - 1] = '\0';
    if (first == SALVO_OK || !earlier[0])
        first = queue_lost_error(q);
    else
        first = QUEUE_FAIL(q, SALVO_ERROR_DEVICE_LOST, "the device is lost (before the loss: %s)",
                           earlier);
    memcpy(msg, salvo_last_error(), SALVO_ERROR_MAX);
    return first;
}

void queue_note_refused_locked(queue *q, uint64_t serial, salvo_status why)
{
    q->refused[q->refused_next].serial = serial;
    q->refused[q->refused_next].why = why;
    q->refused_next = (q->refused_next + 1) % QUEUE_REFUSED_KEPT;
}

salvo_status queue_batch_outcome_locked(const queue *q, uint64_t serial)
{
    for (uint32_t i = 0; serial && i < QUEUE_REFUSED_KEPT; i++)
        if (q->refused[i].serial == serial)
            return q->refused[i].why;
    return SALVO_OK;
}

bool queue_is_lost(const queue *q)
{
    return atomic_load_explicit(&q->lost, memory_order_acquire);
}

salvo_status queue_lost_error(queue *q)
{
    return QUEUE_FAIL(q, SALVO_ERROR_DEVICE_LOST, "the device is lost");
}

/* Lowest serial that may still reference a resource: the oldest batch
 * recording or in flight, or the next serial when the device is idle. */
static uint64_t floor_locked(queue *q) SALVO_REQUIRES(q->lock)
{
    uint64_t floor = atomic_load(&q->next_serial);
    for (const queue_pin *p = q->pins; p; p = p->next)
        if (p->serial < floor)
            floor = p->serial;
    for (stream_engine *st = q->streams; st; st = st->next) {
        for (int i = 0; i < STREAM_SLOTS; i++)
            if (slot_active(&st->slots[i]) && st->slots[i].serial < floor)
                floor = st->slots[i].serial;
    }
    return floor;
}

void queue_advance_locked(queue *q)
{
    if (queue_is_lost(q))
        queue_mark_lost_locked(q);
    if (queue_is_lost(q) && !q->pins)
        retire_abandon(&q->retire);
    else if (queue_is_lost(q))
        return; /* the last pin out abandons them */
    else
        retire_run(&q->retire, floor_locked(q));
}

void queue_release(queue *q, retire_entry *e)
{
    uint64_t tag = atomic_load(&q->next_serial);
    bool locked = salvo_mutex_trylock(&q->lock);
    if (!locked) {
        /* Held, by another thread (the host-call thread, which looks at
         * the list as it lets go) or by this very one (a log callback):
         * stay queued, never wait. */
        retire_push_incoming(&q->retire, e, tag);
        /* Another thread that let go meanwhile may not have seen it (the
         * host-call thread looks at the list after it lets go): once more. */
        if (!salvo_mutex_trylock(&q->lock))
            return;
        retire_collect(&q->retire);
        queue_advance_locked(q);
        salvo_mutex_unlock(&q->lock);
        return;
    }
    retire_push(&q->retire, e, tag);
    queue_advance_locked(q);
    salvo_mutex_unlock(&q->lock);
}

void queue_mark_lost_locked(queue *q)
{
    atomic_store(&q->lost, true);
    if (q->abandoned)
        return;
    q->abandoned = true;
    SALVO_LOG(q->log, SALVO_LOG_ERROR, "device lost: abandoning all work");
    for (stream_engine *st = q->streams; st; st = st->next) {
        for (int i = 0; i < STREAM_SLOTS; i++) {
            slot *s = &st->slots[i];
            if (slot_active(s))
                COUNTER_SUB(&q->n, launches_pending, s->launches);
            slot_abandon(s, &q->env);
        }
        st->open = NULL;
    }
    /* A gate poll in progress still uses its timeline: the last one out
     * abandons the releases (queue_advance_locked). */
    if (!q->pins)
        retire_abandon(&q->retire);
}

/* Whether host gate d (serial 0) is raised. A value that cannot be read
 * counts as raised: the device then waits for it, as without holding. */
static bool gate_open_locked(queue *q, const slot_dep *d) SALVO_REQUIRES(q->lock)
{
    if (d->op.timeline && d->op.timeline == q->host_timeline)
        return atomic_load(&q->host_raised) >= d->op.value;
    uint64_t value = 0;
    return q->acc->vt->timeline_value(q->acc->self, q->adev, d->op.timeline, &value) !=
               ACCEL_SUCCESS ||
           value >= d->op.value;
}

/* Whether other work goes to hardware queue qi than st's batches. */
static bool queue_shared_locked(queue *q, uint32_t qi, const stream_engine *st)
    SALVO_REQUIRES(q->lock)
{
    /* Staged transfers copy on queue 0 where there is no copy queue. */
    if (qi == q->copy_queue || q->hw_queues <= 1 || (q->copy_queue == NO_COPY_QUEUE && qi == 0))
        return true;
    for (const stream_engine *o = q->streams; o; o = o->next)
        if (o != st && o->hwq == qi)
            return true;
    return false;
}

bool queue_must_hold_locked(queue *q, stream_engine *st, const slot *s)
{
    /* Behind an earlier held batch of its own stream: in order. */
    for (int i = 0; i < STREAM_SLOTS; i++) {
        const slot *o = &st->slots[i];
        if (o != s && o->state == SLOT_HELD && o->serial < s->serial)
            return true;
    }
    int shared = -1; /* not looked at yet */
    for (uint32_t w = 0; w < s->wait_count; w++) {
        const slot_dep *d = &s->waits[w];
        if (d->serial) {
            /* Another batch: held, it has not been submitted yet. */
            slot *o = NULL;
            if (queue_batch_owner_locked(q, d->serial, &o) && o->state == SLOT_HELD)
                return true;
        } else if (d->op.timeline) {
            if (shared < 0)
                shared = queue_shared_locked(q, s->queue, st);
            if ((shared || d->op.timeline == q->host_timeline) && !gate_open_locked(q, d))
                return true;
        }
    }
    return false;
}

/* The oldest held batch with a serial above after, or NULL. */
static slot *next_held_locked(queue *q, uint64_t after, stream_engine **owner)
    SALVO_REQUIRES(q->lock)
{
    slot *best = NULL;
    for (stream_engine *st = q->streams; st; st = st->next)
        for (int i = 0; i < STREAM_SLOTS; i++) {
            slot *s = &st->slots[i];
            if (s->state == SLOT_HELD && s->serial > after &&
                (!best || s->serial < best->serial)) {
                best = s;
                *owner = st;
            }
        }
    return best;
}

void queue_pump_locked(queue *q)
{
    bool progress = true;
    while (progress && !queue_is_lost(q)) {
        progress = false;
        stream_engine *st = NULL;
        for (slot *s = next_held_locked(q, 0, &st); s; s = next_held_locked(q, s->serial, &st)) {
            if (queue_must_hold_locked(q, st, s))
                continue;
            uint32_t n = s->launches;
            salvo_status r = slot_send_held(s, &q->env);
            progress = true;
            if (r == SALVO_OK)
                continue;
            /* Refused or lost: the stream's next synchronize hears of it. */
            if (!slot_active(s)) {
                COUNTER_SUB(&q->n, launches_pending, n);
                if (s->state == SLOT_IDLE)
                    queue_note_refused_locked(q, s->serial, r);
            }
            if (r == SALVO_ERROR_DEVICE_LOST)
                queue_mark_lost_locked(q);
            salvo_mutex_same(&q->lock, &st->q->lock);
            stream_defer_locked(st, r);
            break;
        }
    }
}

/* A gate not raised that holds s back: its own, or one holding a held
 * batch it is behind (of its stream, or one it waits for); NULL if none. */
static const slot_dep *blocking_gate_locked(queue *q, stream_engine *st, const slot *s, int depth)
    SALVO_REQUIRES(q->lock)
{
    if (depth > 4 * STREAM_SLOTS)
        return NULL;
    for (uint32_t w = 0; w < s->wait_count; w++) {
        const slot_dep *d = &s->waits[w];
        if (!d->serial && d->op.timeline && !gate_open_locked(q, d))
            return d;
    }
    for (int i = 0; i < STREAM_SLOTS; i++) {
        const slot *o = &st->slots[i];
        const slot_dep *g = NULL;
        if (o != s && o->state == SLOT_HELD && o->serial < s->serial &&
            (g = blocking_gate_locked(q, st, o, depth + 1)))
            return g;
    }
    for (uint32_t w = 0; w < s->wait_count; w++) {
        slot *o = NULL;
        stream_engine *owner = s->waits[w].serial
                                   ? queue_batch_owner_locked(q, s->waits[w].serial, &o)
                                   : NULL;
        const slot_dep *g = NULL;
        if (owner && o->state == SLOT_HELD && (g = blocking_gate_locked(q, owner, o, depth + 1)))
            return g;
    }
    return NULL;
}

/* Wait on the host, the lock dropped, for the gate that holds st's slot s
 * back to be raised, or the fence timeout: then pump. SALVO_OK (look
 * again), SALVO_TIMEOUT, or the device lost. */
static salvo_status wait_held_locked(queue *q, stream_engine *st, slot *s) SALVO_REQUIRES(q->lock)
{
    const slot_dep *gate = blocking_gate_locked(q, st, s, 0);
    if (gate) {
        /* The gate's timeline lives while a batch that waits on it is
         * active; the batch may complete (and the gate be destroyed) while
         * this polls, so the pin keeps the release from running. */
        uint64_t serial = s->serial;
        wait_spec w = {.gate = gate->op, .batch = s, .pin = serial,
                       .deadline_ns = wait_deadline(q)};
        accel_result r = wait_locked(q, &w);
        if (r == ACCEL_ERROR_DEVICE_LOST)
            queue_mark_lost_locked(q);
        /* Releases held back by the pin may run now. */
        queue_advance_locked(q);
        if (queue_is_lost(q))
            return queue_lost_error(q);
        if (r == ACCEL_TIMEOUT && s->state == SLOT_HELD && s->serial == serial)
            return QUEUE_FAIL(q, SALVO_TIMEOUT,
                              "batch of %u launches held by a gate not raised within the fence "
                              "timeout",
                              s->launches);
    }
    queue_pump_locked(q);
    return SALVO_OK;
}

static salvo_status observed_locked(queue *q, stream_engine *st, slot *s, accel_result r,
                                    bool report) SALVO_REQUIRES(q->lock);

salvo_status queue_wait_slot_locked(queue *q, stream_engine *st, slot *s, bool report)
{
    if (!slot_submitted(s))
        return SALVO_OK;
    /* Seen lost elsewhere (a gate raise, another stream): the work is over,
     * and a fence wait could block on work that will never run. */
    if (queue_is_lost(q)) {
        queue_mark_lost_locked(q);
        return queue_lost_error(q);
    }
    if (s->state == SLOT_HELD)
        queue_pump_locked(q);
    for (uint64_t serial = s->serial; s->state == SLOT_HELD && s->serial == serial;) {
        salvo_status r = wait_held_locked(q, st, s);
        if (r != SALVO_OK)
            return r;
    }
    if (s->state != SLOT_IN_FLIGHT)
        return queue_is_lost(q) ? queue_lost_error(q) : SALVO_OK;
    uint64_t serial = s->serial;
    wait_spec w = {.spin = true, .batch = s, .deadline_ns = wait_deadline(q)};
    if (!slot_done_on_timeline(s, &w.until))
        w.fence = s->fence;
    accel_result r = wait_locked(q, &w);
    if (s->state != SLOT_IN_FLIGHT || s->serial != serial)
        return queue_is_lost(q) ? queue_lost_error(q) : SALVO_OK; /* someone else saw it */
    return observed_locked(q, st, s, r, report);
}

/* What a wait for st's in-flight batch s observed (r), applied: done,
 * still running, failed or lost. */
static salvo_status observed_locked(queue *q, stream_engine *st, slot *s, accel_result r,
                                    bool report)
{
    salvo_mutex_same(&q->lock, &st->q->lock);
    uint64_t serial = s->serial;
    uint32_t n = s->launches;
    salvo_status res = slot_complete(s, &q->env, r);
    if (!slot_active(s))
        COUNTER_SUB(&q->n, launches_pending, n);
    if (res == SALVO_OK) {
        stream_trace_retired_locked(st, s);
        timing_batch_done_locked(q, serial);
        queue_advance_locked(q);
        return SALVO_OK;
    }
    if (res == SALVO_ERROR_DEVICE_LOST)
        queue_mark_lost_locked(q);
    /* Kept for the stream only when the work is over (the device is lost).
     * A wait that merely failed leaves the batch in flight for the stream's
     * next wait to observe: the failure is this caller's (a read, an event
     * or device wait that could not finish), and keeping it as well would
     * report it twice. */
    if (!report && res != SALVO_TIMEOUT && s->state != SLOT_IN_FLIGHT)
        stream_defer_locked(st, res);
    return res;
}

void queue_reap_locked(queue *q)
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
            salvo_status r = slot_poll(s, &q->env);
            if (!slot_active(s))
                COUNTER_SUB(&q->n, launches_pending, n);
            if (r == SALVO_OK) {
                stream_trace_retired_locked(st, s);
                timing_batch_done_locked(q, s->serial);
            } else if (r < 0) {
                if (r == SALVO_ERROR_DEVICE_LOST)
                    queue_mark_lost_locked(q);
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

salvo_status queue_quiesce_locked(queue *q, uint64_t limit)
{
    return queue_quiesce_for_locked(q, limit, NULL);
}

salvo_status queue_quiesce_for_locked(queue *q, uint64_t limit, const accel_buffer *ab)
{
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
        if (!ws)
            return SALVO_OK;
        salvo_status r = queue_wait_slot_locked(q, wst, ws, false);
        if (r == SALVO_ERROR_DEVICE_LOST || r == SALVO_TIMEOUT)
            return r;
        if (r < 0 && slot_submitted(ws))
            return r; /* the wait itself keeps failing: no progress possible */
    }
}

/* Whether some batch in flight waits on a host gate not raised yet. The
 * queue runs in order, so every later batch waits behind it too: a wait
 * for any of them could last until the host raises the gate, which may be
 * this very thread. */
static bool slot_gated_locked(queue *q, const slot *s, bool on_device) SALVO_REQUIRES(q->lock)
{
    if (on_device ? s->state != SLOT_IN_FLIGHT : !slot_submitted(s))
        return false;
    for (uint32_t w = 0; w < s->wait_count; w++) {
        const slot_dep *d = &s->waits[w];
        uint64_t value = 0;
        /* Host gates only (serial 0): another stream's batch ends by itself. */
        if (d->op.timeline && d->serial == 0 &&
            (q->acc->vt->timeline_value(q->acc->self, q->adev, d->op.timeline, &value) !=
                 ACCEL_SUCCESS ||
             value < d->op.value))
            return true;
    }
    return false;
}

static bool gated_locked(queue *q) SALVO_REQUIRES(q->lock)
{
    for (stream_engine *st = q->streams; st; st = st->next)
        for (int i = 0; i < STREAM_SLOTS; i++)
            if (slot_gated_locked(q, &st->slots[i], false))
                return true;
    return false;
}

uint32_t queue_unblocked_compute_locked(queue *q)
{
    uint32_t queues = q->hw_queues ? q->hw_queues : 1;
    for (uint32_t qi = 0; qi < queues; qi++) {
        bool blocked = false;
        for (stream_engine *st = q->streams; st && !blocked; st = st->next)
            for (int i = 0; i < STREAM_SLOTS && !blocked; i++) {
                const slot *s = &st->slots[i];
                if (s->state != SLOT_IN_FLIGHT || s->queue != qi)
                    continue;
                /* Any wait not met yet: a gate, or another batch that may
                 * itself wait for one. */
                for (uint32_t w = 0; w < s->wait_count && !blocked; w++) {
                    const slot_dep *d = &s->waits[w];
                    uint64_t value = 0;
                    blocked = d->op.timeline &&
                              (q->acc->vt->timeline_value(q->acc->self, q->adev, d->op.timeline,
                                                          &value) != ACCEL_SUCCESS ||
                               value < d->op.value);
                }
            }
        if (!blocked)
            return qi;
    }
    return UINT32_MAX;
}

salvo_status queue_wait_ungated_locked(queue *q)
{
    for (;;) {
        if (queue_is_lost(q)) {
            queue_mark_lost_locked(q);
            return queue_lost_error(q);
        }
        stream_engine *wst = NULL;
        slot *ws = NULL;
        for (stream_engine *st = q->streams; st && !ws; st = st->next)
            for (int i = 0; i < STREAM_SLOTS && !ws; i++)
                if (slot_gated_locked(q, &st->slots[i], true)) {
                    ws = &st->slots[i];
                    wst = st;
                }
        if (!ws)
            return SALVO_OK;
        salvo_status r = queue_wait_slot_locked(q, wst, ws, false);
        if (r == SALVO_ERROR_DEVICE_LOST || r == SALVO_TIMEOUT)
            return r;
        if (r < 0 && slot_submitted(ws))
            return r;
    }
}

void queue_relieve_locked(queue *q)
{
    if (retire_collect(&q->retire))
        queue_advance_locked(q);
    if (retire_pending(&q->retire) <= q->release_max_count &&
        atomic_load(&q->retire.bytes) <= q->release_max_bytes)
        return;
    queue_reap_locked(q);
    if (retire_pending(&q->retire) <= q->release_max_count &&
        atomic_load(&q->retire.bytes) <= q->release_max_bytes)
        return;
    /* Still over: wait for what the oldest releases wait on, unless that
     * work is held by a gate (the bound is then exceeded until it opens). */
    if (gated_locked(q))
        return;
    uint64_t limit = 0;
    for (retire_entry *e = q->retire.head; e; e = e->next)
        if (e->tag > limit)
            limit = e->tag;
    if (limit > 0 && queue_quiesce_locked(q, limit - 1) == SALVO_OK)
        queue_advance_locked(q);
}

accel_result queue_wait_idle_locked(queue *q)
{
    accel_result r = ACCEL_SUCCESS;
    for (int attempt = 0; attempt < RECOVERY_ATTEMPTS; attempt++) {
        r = q->acc->vt->queue_wait_idle(q->acc->self, q->adev);
        if (r != ACCEL_ERROR_OUT_OF_HOST_MEMORY && r != ACCEL_ERROR_OUT_OF_DEVICE_MEMORY)
            break;
    }
    return r;
}

accel_result queue_buffer_create_locked(queue *q, const accel_buffer_desc *d,
                                         accel_buffer **out, accel_buffer_info *info)
{
    accel_result r = q->acc->vt->buffer_create(q->acc->self, q->adev, d, out, info);
    if (r != ACCEL_ERROR_OUT_OF_DEVICE_MEMORY)
        return r;
    /* Memory may be held by releases waiting on work: run them and retry once. */
    queue_reap_locked(q);
    if (retire_pending(&q->retire) > 0 && !gated_locked(q) &&
        queue_quiesce_locked(q, UINT64_MAX) == SALVO_OK)
        queue_advance_locked(q);
    return q->acc->vt->buffer_create(q->acc->self, q->adev, d, out, info);
}


uint64_t queue_now_ns(void)
{
    return wait_now_ns();
}

salvo_status queue_wait_batch_until_locked(queue *q, uint64_t serial, uint64_t deadline_ns)
{
    if (deadline_ns == UINT64_MAX && q->fence_timeout_ns == UINT64_MAX)
        return queue_wait_batch_locked(q, serial);
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
        queue_reap_locked(q); /* completes it if it is over; pumps held batches */
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
            observed_locked(q, owner, s, r, false);
        if (r == ACCEL_SUCCESS || r == ACCEL_TIMEOUT)
            continue; /* the next look completes it, or sees the bound expired */
        if (s->state == SLOT_IN_FLIGHT && s->serial == serial)
            return QUEUE_FAIL(q, salvo_status_from_accel(r),
                              "waiting for the batch (serial %llu) failed (%s); it goes on",
                              (unsigned long long)serial, accel_result_name(r));
    }
}
