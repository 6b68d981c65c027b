/* A stream's lifetime: one count (stream_engine.refs), the free at one
 * place where it reaches zero, and what the count stands for taken in at
 * drain points (stream_settle_locked). See stream_engine.h. */
#include "core/stream_engine.h"

#include "core/trace.h"

bool stream_idle_locked(const stream_engine *st)
{
    if (st->open)
        return false;
    for (int i = 0; i < STREAM_SLOTS; i++)
        if (slot_active(&st->slots[i]))
            return false;
    return true;
}

void stream_hold_locked(stream_engine *st)
{
    SALVO_CHECK(st->refs > 0, "a stream held after it was freed");
    st->refs++;
}

bool stream_let_go_locked(stream_engine *st)
{
    SALVO_CHECK(st->refs > 0, "a stream let go of more often than held");
    if (--st->refs > 0)
        return false;
    stream_free_locked(st);
    return true;
}

bool stream_settle_locked(stream_engine *st)
{
    /* The handle first: while the work's reference is held, letting go of
     * the handle frees nothing, and the stream is still there to look at. */
    if (st->handle_held && atomic_load(&st->destroyed)) {
        st->handle_held = false;
        if (stream_let_go_locked(st))
            return true;
    }
    if (!st->busy || !stream_idle_locked(st))
        return false;
    /* A thread may still look at a fence of a slot whose work is over. */
    for (int i = 0; i < STREAM_SLOTS; i++)
        if (st->slots[i].waiters)
            return false;
    st->busy = false;
    return stream_let_go_locked(st);
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
    ahead_fini(&st->ahead.ring, q);
    batch_log_free(&st->log);
    salvo_mem_free(q->alloc, st);
}
