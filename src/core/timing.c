/* Event timestamps: marks written into batches, read once their batch
 * completed and their time is asked for. See timing.h. */
#include "core/timing.h"

#include "core/queue.h"

typedef struct timing_mark {
    struct timing_mark *next; /* in the table's pending, ran or free list */
    struct timing_mark *prev; /* in the ran list: the one before (NULL: first) */
    timing_point *owner;      /* NULL: let go (recorded again, or released) */
    uint64_t serial;          /* the batch it is written in, while pending */
    accel_querypool *pool;
    uint32_t query;
    /* Not written itself: its time is that of `same` (a mark of the same
     * batch written at the same point). NULL: its own query. */
    const struct timing_mark *same;
} timing_mark;

typedef struct timing_chunk {
    struct timing_chunk *next;
    accel_querypool *pool;
    timing_mark marks[TIMING_CHUNK];
} timing_chunk;

struct timing_table {
    timing_chunk *chunks;
    timing_mark *free;
    /* Marks written into batches not seen complete yet, newest first. */
    timing_mark *pending;
    /* Marks of completed batches whose points have not read them yet. */
    timing_mark *ran;
};

salvo_status timing_reserve_locked(queue *q)
{
    if (!q->timing) {
        q->timing = salvo_mem_calloc(q->alloc, 1, sizeof *q->timing);
        if (!q->timing)
            return QUEUE_FAIL(q, SALVO_ERROR_OUT_OF_HOST_MEMORY,
                              "event_record: no timestamp: out of host memory");
    }
    timing_table *t = q->timing;
    if (t->free)
        return SALVO_OK;
    timing_chunk *c = salvo_mem_calloc(q->alloc, 1, sizeof *c);
    if (!c)
        return QUEUE_FAIL(q, SALVO_ERROR_OUT_OF_HOST_MEMORY,
                          "event_record: no timestamp: out of host memory");
    accel_result ar = q->acc->vt->querypool_create(q->acc->self, q->adev, TIMING_CHUNK, &c->pool);
    if (ar != ACCEL_SUCCESS) {
        salvo_mem_free(q->alloc, c);
        return QUEUE_FAIL(q, salvo_status_from_accel(ar),
                          "event_record: no timestamp: the query pool could not be made (%s)",
                          accel_result_name(ar));
    }
    c->next = t->chunks;
    t->chunks = c;
    for (uint32_t i = 0; i < TIMING_CHUNK; i++) {
        timing_mark *m = &c->marks[i];
        m->pool = c->pool;
        m->query = i;
        m->next = t->free;
        t->free = m;
    }
    return SALVO_OK;
}

static void ran_unlink(timing_table *t, timing_mark *m)
{
    if (m->prev)
        m->prev->next = m->next;
    else
        t->ran = m->next;
    if (m->next)
        m->next->prev = m->prev;
    m->prev = NULL;
}

/* m, of the ran list, free for another record. */
static void free_ran(timing_table *t, timing_mark *m)
{
    ran_unlink(t, m);
    m->owner = NULL;
    m->next = t->free;
    t->free = m;
}

/* p lets go of its mark: one still pending stays so until its batch is
 * over (then freed unread); one of a completed batch is free now. */
static void let_go(timing_table *t, timing_point *p)
{
    timing_mark *m = p->mark;
    p->mark = NULL;
    if (m && p->state == TIMING_RAN)
        free_ran(t, m);
    else if (m)
        m->owner = NULL;
}

/* Write m's timestamp into s's batch. Its query is reset first: from the
 * host where the device can (reset_on_host: no pending work uses it, the
 * mark was free), which spares the device a reset command on its way to
 * the write; else by a command recorded before the write. */
static void write_mark(queue *q, timing_mark *m, slot *s, bool reset_on_host)
{
    const accel_vtable *vt = q->acc->vt;
    m->same = NULL;
    if (!reset_on_host || !vt->querypool_host_reset ||
        vt->querypool_host_reset(q->acc->self, q->adev, m->pool, m->query, 1) != ACCEL_SUCCESS)
        vt->cmd_querypool_reset(q->acc->self, q->adev, s->cmd, m->pool, m->query, 1);
    vt->cmd_timestamp(q->acc->self, q->adev, s->cmd, m->pool, m->query, true);
}

timing_mark *timing_write_locked(queue *q, timing_point *p, slot *s)
{
    timing_table *t = q->timing;
    timing_mark *m = p->mark;
    /* Recorded again in the same batch: the same query, reset and written
     * again further on (by the batch: it was written there already). */
    bool fresh = !m || m->serial != s->serial;
    if (fresh) {
        let_go(t, p);
        m = t->free;
        t->free = m->next;
        m->owner = p;
        m->serial = s->serial;
        m->next = t->pending;
        t->pending = m;
        p->mark = m;
    }
    write_mark(q, m, s, fresh);
    p->state = TIMING_PENDING;
    return m;
}

void timing_rewrite_locked(queue *q, timing_mark *m, slot *s)
{
    write_mark(q, m, s, false);
}

void timing_rewrite_same_locked(queue *q, timing_mark *m, const timing_mark *as)
{
    (void)q;
    if (m != as)
        m->same = as;
}

void timing_point_lose_locked(queue *q, timing_point *p, salvo_status why)
{
    let_go(q->timing, p);
    p->state = TIMING_LOST;
    p->lost = why;
}

void timing_point_release_locked(queue *q, timing_point *p)
{
    let_go(q->timing, p);
}

static void unlink_free(timing_table *t, timing_mark **pm)
{
    timing_mark *m = *pm;
    *pm = m->next;
    if (m->owner)
        m->owner->mark = NULL;
    m->owner = NULL;
    m->next = t->free;
    t->free = m;
}

/* p's time read from its mark m (or from the mark m takes its time from):
 * READY, or LOST where the driver gives none. */
static void read_mark(queue *q, timing_point *p, const timing_mark *m)
{
    uint64_t ticks = 0;
    const timing_mark *src = m->same ? m->same : m;
    accel_result ar =
        q->acc->vt->querypool_results(q->acc->self, q->adev, src->pool, src->query, 1, &ticks);
    if (ar == ACCEL_SUCCESS) {
        p->state = TIMING_READY;
        p->ticks = ticks;
    } else {
        /* Not written though its batch completed: a driver's fault. */
        p->state = TIMING_LOST;
        p->lost = queue_noted(q, ar == ACCEL_NOT_READY ? SALVO_ERROR_UNKNOWN
                                                       : salvo_status_from_accel(ar));
    }
}

void timing_batch_done_locked(queue *q, uint64_t serial, bool ran)
{
    timing_table *t = q->timing;
    if (!t)
        return;
    for (timing_mark **pm = &t->pending; *pm;) {
        timing_mark *m = *pm;
        timing_point *p = m->owner;
        if (m->serial == serial && ran && p && !m->same) {
            /* Read when its time is asked for (timing_point_settle_locked),
             * not here, on the way of whoever saw the batch complete. */
            *pm = m->next;
            p->state = TIMING_RAN;
            m->prev = NULL;
            m->next = t->ran;
            if (t->ran)
                t->ran->prev = m;
            t->ran = m;
        } else if (m->serial == serial && ran) {
            /* One that takes another's time reads it now: that one may
             * be freed and written again before this is asked for. */
            if (p)
                read_mark(q, p, m);
            unlink_free(t, pm);
        } else if (queue_batch_done_locked(q, m->serial)) {
            /* Over without completing (refused, dropped): it never ran. */
            if (p) {
                p->state = TIMING_LOST;
                p->lost = SALVO_ERROR_BATCH_FAILED;
            }
            unlink_free(t, pm);
        } else {
            pm = &m->next;
        }
    }
}

void timing_point_settle_locked(queue *q, timing_point *p)
{
    /* Serial 0 is no batch's: only marks of batches over are looked at. */
    if (p->state == TIMING_PENDING && p->mark && queue_batch_done_locked(q, p->mark->serial))
        timing_batch_done_locked(q, 0, true);
    if (p->state == TIMING_RAN) {
        timing_mark *m = p->mark;
        p->mark = NULL;
        read_mark(q, p, m);
        free_ran(q->timing, m);
    }
}

void timing_free_locked(queue *q)
{
    timing_table *t = q->timing;
    if (!t)
        return;
    for (timing_mark *m = t->pending; m; m = m->next)
        if (m->owner)
            m->owner->mark = NULL;
    for (timing_mark *m = t->ran; m; m = m->next)
        m->owner->mark = NULL;
    while (t->chunks) {
        timing_chunk *c = t->chunks;
        t->chunks = c->next;
        q->acc->vt->querypool_destroy(q->acc->self, q->adev, c->pool);
        salvo_mem_free(q->alloc, c);
    }
    salvo_mem_free(q->alloc, t);
    q->timing = NULL;
}
