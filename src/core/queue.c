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
            bool reported = s->empty; /* a stand-in: its refusal was */
            salvo_status r = slot_send_held(s, &q->env);
            progress = true;
            if (r == SALVO_OK || (reported && r != SALVO_ERROR_DEVICE_LOST))
                continue;
            /* Refused or lost: the stream's next synchronize hears of it. A
             * refused batch may stand in empty (slot_submit), in flight. */
            bool stand_in = s->empty && slot_submitted(s);
            if (!slot_active(s) || stand_in) {
                COUNTER_SUB(&q->n, launches_pending, n);
                if (s->state == SLOT_IDLE || stand_in)
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
    return queue_observed_locked(q, st, s, r, report);
}

salvo_status queue_observed_locked(queue *q, stream_engine *st, slot *s, accel_result r,
                                   bool report)
{
    salvo_mutex_same(&q->lock, &st->q->lock);
    uint64_t serial = s->serial;
    uint32_t n = s->launches;
    bool ran = !s->empty; /* a refused batch's stand-in runs nothing */
    salvo_status res = slot_complete(s, &q->env, r);
    if (!slot_active(s))
        COUNTER_SUB(&q->n, launches_pending, n);
    if (res == SALVO_OK) {
        stream_trace_retired_locked(st, s);
        timing_batch_done_locked(q, serial, ran);
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

bool queue_gated_locked(queue *q)
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

uint64_t queue_now_ns(void)
{
    return wait_now_ns();
}

