/* Looks at completion that never block (salvo_stream_query) or block for a
 * bounded time (salvo_event_wait). */
#include <string.h>

#include "api/internal.h"

salvo_status salvo_stream_query(salvo_stream *st)
{
    if (!st)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "stream_query: stream is NULL");
    salvo_device *dev = stream_device(st);
    char msg[SALVO_ERROR_MAX];
    msg[0] = '\0';
    salvo_mutex_lock(&dev->q.lock);
    graph_captures_settle_locked(dev);
    salvo_status r = SALVO_OK;
    stream_engine *e = &st->e;
    salvo_mutex_same(&dev->q.lock, &e->q->lock);
    if (device_is_lost(dev)) {
        r = device_lost_error(dev);
    } else if (st->capture) {
        r = DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE,
                     "stream_query: the stream is capturing into %s; its work runs when the "
                     "graph is replayed",
                     st->capture->g.label);
    } else {
        /* Submitted, so that a polling loop ends (as salvo_event_query
         * does); a refusal is kept for the stream and reported below.
         * Where the stream follows another stream's batch by queue order
         * alone, an empty batch of its own goes too, whose end covers
         * that one (unless that would wait). */
        stream_submit_covering_nowait_locked(e);
        sched_reap_locked(&dev->q);
        if (device_is_lost(dev)) {
            r = device_lost_error(dev);
        } else if (!stream_idle_locked(e)) {
            r = SALVO_NOT_READY;
        } else if (e->deferred != SALVO_OK) {
            /* All over: a failure kept for the stream is this call's, once. */
            r = e->deferred;
            memcpy(msg, e->deferred_msg, sizeof msg);
            e->deferred = SALVO_OK;
        } else if (e->queue_ordered) {
            r = SALVO_NOT_READY; /* the empty batch could not go yet */
        }
    }
    salvo_mutex_unlock(&dev->q.lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    else if (msg[0])
        salvo_set_error(msg);
    return r;
}

salvo_status salvo_event_wait(salvo_event *ev, uint64_t timeout_ns)
{
    if (!ev)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "event_wait: event is NULL");
    salvo_device *dev = ev->dev;
    uint64_t now = queue_now_ns();
    uint64_t deadline = timeout_ns == UINT64_MAX ? UINT64_MAX
                        : timeout_ns > UINT64_MAX - 1 - now ? UINT64_MAX - 1
                                                             : now + timeout_ns;
    salvo_mutex_lock(&dev->q.lock);
    salvo_status r;
    if (ev->capture_id)
        r = DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE,
                     "event_wait: the event was recorded during a capture; it marks a point of "
                     "the graph, not of a stream");
    else if (ev->cancelled)
        r = SALVO_CANCELLED;
    /* Refused already: said at once, not after the batch's stand-in. */
    else if (device_is_lost(dev) || (r = event_refused_locked(dev, ev, "event_wait")) == SALVO_OK)
        r = sched_wait_batch_until_locked(&dev->q, ev->serial, deadline);
    if (r == SALVO_OK && !ev->capture_id && !ev->cancelled)
        r = event_refused_locked(dev, ev, "event_wait");
    if (r == SALVO_OK)
        sched_reap_locked(&dev->q);
    salvo_mutex_unlock(&dev->q.lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}
