/* Events: a point in a stream that other streams (on the device) and the
 * host can wait for. */
#include <string.h>

#include "api/internal.h"
#include "api/host_call.h"

static void event_release(retire_entry *e, bool abandoned)
{
    (void)abandoned;
    salvo_event *ev = resource_as_event(resource_of_release(e));
    salvo_mutex_held(&ev->dev->q.lock); /* releases run under the lock */
    timing_point_release_locked(&ev->dev->q, &ev->time);
    live_unlink_locked(ev->dev, &ev->res);
    COUNT_SUB(ev->dev, live_events, 1);
    salvo_mem_free(ev->dev->alloc, ev);
}

/* An event recorded during a capture marks a point of a graph. */
static salvo_status captured_event(salvo_device *dev, const char *what)
{
    return DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE,
                    "%s: the event was recorded during a capture; it marks a point of the graph, "
                    "not of a stream",
                    what);
}

/* Whether records write GPU timestamps (salvo_event_elapsed). */
static bool timed_device(const salvo_device *dev)
{
    const accel_vtable *vt = dev->acc.vt;
    return dev->caps.timestamps && vt->querypool_create && vt->querypool_destroy &&
           vt->cmd_querypool_reset && vt->cmd_timestamp && vt->querypool_results;
}

/* Make st's open batch one on its own queue (not on the copy queue),
 * opening one as a launch would when none is. An error (out of memory for
 * the batch, no free batch slot, device lost): nothing may be recorded,
 * and the record says so, as a launch would. */
static salvo_status record_open_locked(salvo_device *dev, stream_engine *e)
    SALVO_REQUIRES(dev->q.lock, e->q->lock)
{
    if (e->open && e->open->queue == dev->q.copy_queue)
        stream_submit_locked(e, false); /* a refusal is the stream's to report */
    if (!e->open) {
        /* The oldest batch holds the slot: wait for it as a launch would,
         * its failure kept for the stream. */
        slot *s = &e->slots[e->cur];
        if (slot_submitted(s)) {
            salvo_status r = queue_wait_slot_locked(&dev->q, e, s, false);
            if (device_is_lost(dev))
                return device_lost_error(dev);
            if (slot_submitted(s))
                return r == SALVO_TIMEOUT
                           ? DEV_FAIL(dev, SALVO_ERROR_TIMEOUT,
                                      "event_record: no free batch slot: the stream's oldest "
                                      "batch did not complete within the fence timeout; "
                                      "nothing was recorded")
                           : r;
        }
        salvo_status r = stream_open_locked(e);
        if (device_is_lost(dev))
            return device_lost_error(dev);
        if (r != SALVO_OK)
            return r;
    }
    return SALVO_OK;
}

/* Before a timed record: make st's open batch one a timestamp can go in
 * (the copy queue cannot reset queries; record_open_locked). SALVO_OK
 * with *timed: write it there; an error (out of memory for the queries,
 * or as record_open_locked): nothing may be recorded. *why: kept for a
 * record that goes on untimed (none yet). */
static salvo_status timed_open_locked(salvo_device *dev, stream_engine *e, bool *timed,
                                      salvo_status *why) SALVO_REQUIRES(dev->q.lock, e->q->lock)
{
    *timed = false;
    *why = SALVO_OK;
    salvo_status r = record_open_locked(dev, e);
    /* The timestamp goes after what the batch holds: a replay recorded
     * ahead is recorded into it first. */
    if (r == SALVO_OK)
        r = stream_undirect_locked(e);
    /* A query is reserved last: opening the batch may wait for a slot with
     * the lock let go, and another thread's record take the last free one
     * meanwhile. */
    if (r == SALVO_OK) {
        r = timing_reserve_locked(&dev->q);
        if (r != SALVO_OK && device_is_lost(dev))
            r = device_lost_error(dev);
    }
    *timed = r == SALVO_OK;
    return r;
}

salvo_status salvo_event_create(salvo_device *dev, salvo_event **out)
{
    return salvo_event_create_flags(dev, 0, out);
}

salvo_status salvo_event_create_flags(salvo_device *dev, uint32_t flags, salvo_event **out)
{
    if (!out)
        return SALVO_FAIL(dev ? &dev->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "event_create: out is NULL");
    *out = NULL;
    if (!dev)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "event_create: device is NULL");
    uint32_t unknown = flags & ~(uint32_t)SALVO_EVENT_DISABLE_TIMING;
    if (unknown)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "event_create: unknown flags 0x%x",
                        unknown);
    if (device_is_lost(dev))
        return device_lost_error(dev);
    salvo_event *ev = salvo_mem_calloc(dev->alloc, 1, sizeof *ev);
    if (!ev)
        return DEV_FAIL(dev, SALVO_ERROR_OUT_OF_HOST_MEMORY, "event_create: out of host memory");
    ev->dev = dev;
    ev->untimed = flags & SALVO_EVENT_DISABLE_TIMING;
    resource_init(&ev->res, RESOURCE_EVENT, event_release, 0);
    salvo_mutex_lock(&dev->q.lock);
    live_link_locked(dev, &ev->res);
    salvo_mutex_unlock(&dev->q.lock);
    COUNT_ADD(dev, live_events, 1);
    salvo_clear_error();
    *out = ev;
    return SALVO_OK;
}

void salvo_event_destroy(salvo_event *ev)
{
    /* Waits copy what they need, so nothing pending refers to the event;
     * it still goes through the free path for the live ring's lock. */
    if (ev)
        device_let_go(ev->dev, &ev->res);
}

salvo_status salvo_event_record(salvo_event *ev, salvo_stream *st)
{
    if (!ev || !st)
        return SALVO_FAIL(device_sink(ev ? ev->dev : st ? stream_device(st) : NULL),
                          SALVO_ERROR_INVALID_ARGUMENT, "event_record: %s is NULL",
                          ev ? "stream" : "event");
    salvo_device *dev = ev->dev;
    if (stream_device(st) != dev)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "event_record: the stream belongs to another device");
    salvo_mutex_lock(&dev->q.lock);
    salvo_mutex_same(&dev->q.lock, &st->e.q->lock);
    salvo_status r = SALVO_OK;
    bool timed = false, timestamps = !ev->untimed && timed_device(dev);
    salvo_status why = SALVO_OK;
    if (timestamps && !device_is_lost(dev) && !stream_capture_locked(st))
        r = timed_open_locked(dev, &st->e, &timed, &why);
    else if (st->e.queue_ordered && !st->e.open && !device_is_lost(dev) &&
             !stream_capture_locked(st))
        /* The stream follows another stream's batch by queue order alone:
         * the end of its last batch is not past that one, the end of the
         * batch opened now will be (stream_wait_batch_locked). */
        r = record_open_locked(dev, &st->e);
    if (r == SALVO_OK && device_is_lost(dev))
        r = device_lost_error(dev);
    if (r == SALVO_OK) {
        ev->cancelled = false;
        ev->capture_id = 0;
    }
    if (r != SALVO_OK) {
        /* Nothing recorded: the event is as it was (its mark, cancelled
         * or not, a capture's point or not). */
    } else if (stream_capture_locked(st)) {
        /* A point of the capture: a stream that waits for it joins. An
         * event is no command (a point between them, its timestamp a mark
         * the batch log keeps), so it is not the recorder's. */
        ev->capture_id = st->capture->capture_id;
        ev->serial = 0;
        ev->stream = &st->e;
        ev->log_offset = 0;
    } else if (st->e.open) {
        ev->serial = st->e.open->serial;
        st->e.open->pointed = true;
        ev->stream = &st->e;
        /* A log that could not be kept (out of memory) has no position to
         * give: past its end when work is before the point, so a cancel
         * reports the lack of memory rather than "nothing to cancel". */
        ev->log_offset = !st->e.log.broken ? st->e.log.used : st->e.open->launches ? SIZE_MAX : 0;
    } else {
        /* Nothing open: the point is the end of the last batch submitted. */
        ev->serial = st->e.last_serial;
        ev->stream = &st->e;
        ev->log_offset = 0;
    }
    if (r == SALVO_OK && ev->capture_id) {
        timing_point_lose_locked(&dev->q, &ev->time, SALVO_ERROR_INVALID_STATE);
    } else if (r == SALVO_OK && timed) {
        /* A batch that holds only the event's timestamp so far is named
         * after it: a failure of that batch names what it held. */
        if (st->e.open->name_count == 0)
            slot_note_name(st->e.open, "(event)");
        batch_log_append_mark(&st->e.log, timing_write_locked(&dev->q, &ev->time, st->e.open));
    } else if (r == SALVO_OK && timestamps) {
        timing_point_lose_locked(&dev->q, &ev->time, why);
    }
    salvo_mutex_unlock(&dev->q.lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}

salvo_status event_refused_locked(salvo_device *dev, const salvo_event *ev, const char *what)
{
    salvo_status why = queue_batch_outcome_locked(&dev->q, ev->serial);
    if (why == SALVO_OK)
        return SALVO_OK;
    return DEV_FAIL(dev, why,
                    "%s: the event's batch was refused when submitted (%s) and did not run; its "
                    "stream's next synchronize reports it",
                    what, salvo_status_string(why));
}

salvo_status salvo_event_query(salvo_event *ev)
{
    if (!ev)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "event_query: event is NULL");
    salvo_device *dev = ev->dev;
    salvo_mutex_lock(&dev->q.lock);
    salvo_status r = SALVO_OK;
    if (ev->capture_id) {
        r = captured_event(dev, "event_query");
    } else if (ev->cancelled) {
        r = SALVO_CANCELLED;
    } else if (device_is_lost(dev)) {
        r = device_lost_error(dev);
    } else if ((r = event_refused_locked(dev, ev, "event_query")) != SALVO_OK) {
        /* Refused: said at once, though the batch may still stand in
         * (slot_submit) for what it waited for. */
    } else if (!queue_batch_done_locked(&dev->q, ev->serial)) {
        sched_reap_locked(&dev->q);
        sched_submit_batch_locked(&dev->q, ev->serial);
        if (device_is_lost(dev))
            r = device_lost_error(dev);
        else if (!queue_batch_done_locked(&dev->q, ev->serial))
            r = SALVO_NOT_READY;
        if (r == SALVO_NOT_READY) { /* refused by the submit just made? */
            salvo_status refused = event_refused_locked(dev, ev, "event_query");
            if (refused != SALVO_OK)
                r = refused;
        }
    }
    if (r == SALVO_OK && !ev->capture_id && !ev->cancelled)
        r = event_refused_locked(dev, ev, "event_query");
    salvo_mutex_unlock(&dev->q.lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}

salvo_status salvo_event_synchronize(salvo_event *ev)
{
    if (!ev)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "event_synchronize: event is NULL");
    salvo_device *dev = ev->dev;
    if (host_call_running)
        return host_call_refuse(dev, "event_synchronize");
    salvo_mutex_lock(&dev->q.lock);
    salvo_status r = ev->capture_id ? captured_event(dev, "event_synchronize")
                     : ev->cancelled      ? SALVO_CANCELLED
                     : device_is_lost(dev) ? SALVO_OK /* the wait says so */
                                           : event_refused_locked(dev, ev, "event_synchronize");
    /* Refused already: said at once, not after the batch's stand-in. */
    if (r == SALVO_OK)
        r = sched_wait_batch_locked(&dev->q, ev->serial);
    if (r == SALVO_OK && !ev->capture_id && !ev->cancelled)
        r = event_refused_locked(dev, ev, "event_synchronize");
    if (r == SALVO_OK)
        sched_reap_locked(&dev->q);
    salvo_mutex_unlock(&dev->q.lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}

salvo_status salvo_stream_wait_event(salvo_stream *st, salvo_event *ev)
{
    if (!ev || !st)
        return SALVO_FAIL(device_sink(st ? stream_device(st) : ev ? ev->dev : NULL),
                          SALVO_ERROR_INVALID_ARGUMENT, "stream_wait_event: %s is NULL",
                          ev ? "stream" : "event");
    salvo_device *dev = stream_device(st);
    if (ev->dev != dev)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "stream_wait_event: the event belongs to another device");
    salvo_mutex_lock(&dev->q.lock);
    salvo_mutex_same(&dev->q.lock, &st->e.q->lock);
    graph_captures_settle_locked(dev);
    salvo_status r = SALVO_OK;
    if (device_is_lost(dev)) {
        r = device_lost_error(dev);
    } else if (ev->capture_id) {
        salvo_graph *gr = graph_capture_find_locked(dev, ev->capture_id);
        if (!gr)
            r = DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE,
                         "stream_wait_event: the event was recorded during a capture that has "
                         "ended; record it again on a stream");
        else if (st->capture && st->capture != gr)
            r = DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE,
                         "stream_wait_event: the stream is in %s, the event in %s",
                         st->capture->g.label, gr->g.label);
        else if (!st->capture) {
            salvo_mutex_same(&dev->q.lock, &gr->dev->q.lock);
            r = graph_capture_join_locked(gr, st); /* fork: it joins the capture */
        }
        /* else: in the same capture, ordered by capture order already */
    } else if (st->capture && !ev->cancelled && !queue_batch_done_locked(&dev->q, ev->serial)) {
        /* The stream's own earlier work too: the graph is replayed on any
         * stream, where nothing orders it after that work. */
        r = DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE,
                     "stream_wait_event: the stream is capturing (%s) and the event marks work "
                     "outside the capture that is not complete; a graph cannot wait for it",
                     st->capture->g.label);
    } else if (ev->cancelled || queue_batch_done_locked(&dev->q, ev->serial) || ev->stream == &st->e) {
        /* Never recorded, withdrawn, already over, or the same stream (in
         * order anyway). */
    } else {
        /* A device-side wait: no host thread blocks. */
        stream_engine *owner = queue_batch_owner_locked(&dev->q, ev->serial, NULL);
        r = owner ? stream_wait_batch_locked(&st->e, owner, ev->serial) : SALVO_OK;
    }
    salvo_mutex_unlock(&dev->q.lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}

salvo_status salvo_event_cancel(salvo_event *ev)
{
    if (!ev)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "event_cancel: event is NULL");
    salvo_device *dev = ev->dev;
    salvo_mutex_lock(&dev->q.lock);
    salvo_status r = SALVO_OK;
    slot *s = NULL;
    stream_engine *owner = ev->serial ? queue_batch_owner_locked(&dev->q, ev->serial, &s) : NULL;
    if (device_is_lost(dev)) {
        r = device_lost_error(dev);
    } else if (ev->capture_id) {
        r = captured_event(dev, "event_cancel");
    } else if (ev->cancelled) {
        /* withdrawn already */
    } else if (ev->serial == 0 || ev->log_offset == 0) {
        r = DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE,
                     "event_cancel: no launch before the event is waiting to be submitted");
    } else if (!owner || s->state != SLOT_RECORDING) {
        r = DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE,
                     "event_cancel: the launches before the event were submitted already");
    } else {
        salvo_mutex_same(&dev->q.lock, &owner->q->lock);
        if (!owner->log.broken && !stream_work_before_locked(owner, ev->log_offset)) {
            /* Only other events' timestamps before it (pending, or among
             * what a cancel withdrew). */
            r = DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE,
                         "event_cancel: no launch before the event is waiting to be submitted");
        } else {
            /* The batch is recorded again from its log, timestamps
             * included: the other events of the batch keep their times
             * (those among the withdrawn work mark the batch's start). */
            r = stream_withdraw_locked(owner, ev->log_offset);
            if (r == SALVO_OK)
                ev->cancelled = true;
        }
    }
    salvo_mutex_unlock(&dev->q.lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}
