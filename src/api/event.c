/* Events: a point in a stream that other streams (on the device) and the
 * host can wait for. */
#include <string.h>

#include "api/internal.h"

static void event_release(retire_entry *e, bool abandoned)
{
    (void)abandoned;
    salvo_event *ev = (salvo_event *)((char *)e - offsetof(salvo_event, release));
    live_unlink_locked(ev->dev, &ev->live);
    COUNT_SUB(ev->dev, live_events, 1);
    salvo_mem_free(ev->dev->alloc, ev);
}

salvo_status salvo_event_create(salvo_device *dev, salvo_event **out)
{
    if (!out)
        return SALVO_FAIL(dev ? &dev->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "event_create: out is NULL");
    *out = NULL;
    if (!dev)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "event_create: device is NULL");
    if (device_is_lost(dev))
        return device_lost_error(dev);
    salvo_event *ev = salvo_mem_calloc(dev->alloc, 1, sizeof *ev);
    if (!ev)
        return DEV_FAIL(dev, SALVO_ERROR_OUT_OF_HOST_MEMORY, "event_create: out of host memory");
    ev->dev = dev;
    ev->release.fn = event_release;
    pthread_mutex_lock(&dev->lock);
    live_link_locked(dev, &ev->live, &ev->release);
    pthread_mutex_unlock(&dev->lock);
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
        device_release(ev->dev, &ev->release);
}

salvo_status salvo_event_record(salvo_event *ev, salvo_stream *st)
{
    if (!ev || !st)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "event_record: %s is NULL",
                          ev ? "stream" : "event");
    salvo_device *dev = ev->dev;
    if (st->dev != dev)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "event_record: the stream belongs to another device");
    pthread_mutex_lock(&dev->lock);
    salvo_status r = SALVO_OK;
    ev->cancelled = false;
    if (device_is_lost(dev)) {
        r = device_lost_error(dev);
    } else if (st->open) {
        ev->serial = st->open->serial;
        ev->stream = st;
        /* A log that could not be kept (out of memory) has no position to
         * give: past its end when work is before the point, so a cancel
         * reports the lack of memory rather than "nothing to cancel". */
        ev->log_offset = !st->log.broken ? st->log.used : st->open->launches ? SIZE_MAX : 0;
    } else {
        /* Nothing open: the point is the end of the last batch submitted. */
        ev->serial = st->last_serial;
        ev->stream = st;
        ev->log_offset = 0;
    }
    pthread_mutex_unlock(&dev->lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}

/* If the event's point is in a batch still being recorded, submit that
 * batch: it would otherwise never complete (a query loop), and once
 * submitted it orders every batch submitted after it (a stream's wait).
 * A failure of that submission is its own stream's to report. */
static void submit_event_batch_locked(salvo_event *ev)
{
    slot *s = NULL;
    salvo_stream *owner = batch_owner_locked(ev->dev, ev->serial, &s);
    if (owner && s->state == SLOT_RECORDING)
        stream_submit_locked(owner, false);
}

salvo_status salvo_event_query(salvo_event *ev)
{
    if (!ev)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "event_query: event is NULL");
    salvo_device *dev = ev->dev;
    pthread_mutex_lock(&dev->lock);
    salvo_status r = SALVO_OK;
    if (ev->cancelled) {
        r = SALVO_CANCELLED;
    } else if (device_is_lost(dev)) {
        r = device_lost_error(dev);
    } else if (!batch_done_locked(dev, ev->serial)) {
        device_reap_locked(dev);
        submit_event_batch_locked(ev);
        if (device_is_lost(dev))
            r = device_lost_error(dev);
        else if (!batch_done_locked(dev, ev->serial))
            r = SALVO_NOT_READY;
    }
    pthread_mutex_unlock(&dev->lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}

/* Wait on the host until the event's batch is over. Failures of that batch
 * stay with its stream (they are that stream's to report); the caller gets
 * the status. */
static salvo_status event_wait_locked(salvo_event *ev)
{
    salvo_device *dev = ev->dev;
    for (;;) {
        if (device_is_lost(dev))
            return device_lost_error(dev);
        slot *s = NULL;
        salvo_stream *owner = batch_owner_locked(dev, ev->serial, &s);
        if (!owner)
            return SALVO_OK;
        salvo_status r = s->state == SLOT_RECORDING ? stream_submit_locked(owner, false)
                                                    : device_wait_slot_locked(dev, owner, s, false);
        if (r != SALVO_OK && batch_owner_locked(dev, ev->serial, NULL))
            return r;
    }
}

salvo_status salvo_event_synchronize(salvo_event *ev)
{
    if (!ev)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "event_synchronize: event is NULL");
    salvo_device *dev = ev->dev;
    pthread_mutex_lock(&dev->lock);
    salvo_status r = ev->cancelled ? SALVO_CANCELLED : event_wait_locked(ev);
    if (r == SALVO_OK)
        device_reap_locked(dev);
    pthread_mutex_unlock(&dev->lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}

salvo_status salvo_stream_wait_event(salvo_stream *st, salvo_event *ev)
{
    if (!ev || !st)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "stream_wait_event: %s is NULL",
                          ev ? "stream" : "event");
    salvo_device *dev = st->dev;
    if (ev->dev != dev)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "stream_wait_event: the event belongs to another device");
    pthread_mutex_lock(&dev->lock);
    salvo_status r = SALVO_OK;
    if (device_is_lost(dev)) {
        r = device_lost_error(dev);
    } else if (ev->cancelled || batch_done_locked(dev, ev->serial) || ev->stream == st) {
        /* Never recorded, withdrawn, already over, or the same stream (in
         * order anyway). */
    } else {
        /* One queue serves every stream, and every batch opens with a
         * barrier over all work submitted before it. Submitting the event's
         * batch now therefore orders every batch this stream submits later
         * after it, on the device, with no host thread blocking. Doing it
         * now (not when the waiting batch is submitted) keeps waits from
         * ever pointing at batches still recording, so waits between
         * streams cannot form a cycle. */
        submit_event_batch_locked(ev);
        if (device_is_lost(dev))
            r = device_lost_error(dev);
    }
    pthread_mutex_unlock(&dev->lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}

salvo_status salvo_event_cancel(salvo_event *ev)
{
    if (!ev)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "event_cancel: event is NULL");
    salvo_device *dev = ev->dev;
    pthread_mutex_lock(&dev->lock);
    salvo_status r = SALVO_OK;
    slot *s = NULL;
    salvo_stream *owner = ev->serial ? batch_owner_locked(dev, ev->serial, &s) : NULL;
    if (device_is_lost(dev)) {
        r = device_lost_error(dev);
    } else if (ev->cancelled) {
        /* withdrawn already */
    } else if (ev->serial == 0 || ev->log_offset == 0) {
        r = DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE,
                     "event_cancel: no launch before the event is waiting to be submitted");
    } else if (!owner || s->state != SLOT_RECORDING) {
        r = DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE,
                     "event_cancel: the launches before the event were submitted already");
    } else {
        r = stream_withdraw_locked(owner, ev->log_offset);
        if (r == SALVO_OK)
            ev->cancelled = true;
    }
    pthread_mutex_unlock(&dev->lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}
