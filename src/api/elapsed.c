/* salvo_event_elapsed: GPU time between two events, from the timestamps
 * their records wrote (core/timing.c). */
#include "api/internal.h"

static bool timed_device(const salvo_device *dev)
{
    const accel_vtable *vt = dev->acc.vt;
    return dev->caps.timestamps && vt->querypool_create && vt->querypool_destroy &&
           vt->cmd_querypool_reset && vt->cmd_timestamp && vt->querypool_results;
}

/* Whether ev's point is complete; submits its batch if it is open, so a
 * polling loop ends. */
static bool point_done_locked(salvo_device *dev, const salvo_event *ev) SALVO_REQUIRES(dev->q.lock)
{
    if (queue_batch_done_locked(&dev->q, ev->serial))
        return true;
    sched_reap_locked(&dev->q);
    sched_submit_batch_locked(&dev->q, ev->serial);
    return queue_batch_done_locked(&dev->q, ev->serial);
}

static salvo_status point_lost(salvo_device *dev, const salvo_event *ev, const char *which)
{
    salvo_status why = ev->time.lost;
    switch (why) {
    case SALVO_ERROR_INVALID_STATE:
        return DEV_FAIL(dev, why,
                        "event_elapsed: %s's batch was recorded again by an event cancel, "
                        "which drops its timestamps; record the event again",
                        which);
    case SALVO_ERROR_BATCH_FAILED:
        return DEV_FAIL(dev, why,
                        "event_elapsed: %s's batch did not run (its failure is reported to "
                        "its stream); record the event again",
                        which);
    default:
        return DEV_FAIL(dev, why < 0 ? why : SALVO_ERROR_UNKNOWN,
                        "event_elapsed: %s's last record wrote no timestamp (%s)", which,
                        salvo_status_string(why));
    }
}

salvo_status salvo_event_elapsed(salvo_event *start, salvo_event *end, uint64_t *ns)
{
    if (ns)
        *ns = 0;
    if (!start || !end || !ns)
        return SALVO_FAIL(start ? &start->dev->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "event_elapsed: %s is NULL",
                          !start ? "start" : !end ? "end" : "ns");
    salvo_device *dev = start->dev;
    if (end->dev != dev)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "event_elapsed: the events belong to different devices");
    if (start->untimed || end->untimed)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "event_elapsed: %s was made with SALVO_EVENT_DISABLE_TIMING: it has no "
                        "times",
                        start->untimed ? "start" : "end");
    salvo_mutex_lock(&dev->q.lock);
    salvo_status r = SALVO_OK;
    salvo_event *ev[2] = {start, end};
    const char *name[2] = {"start", "end"};
    if (device_is_lost(dev)) {
        r = device_lost_error(dev);
    } else if (!timed_device(dev)) {
        r = DEV_FAIL(dev, SALVO_ERROR_UNSUPPORTED,
                     "event_elapsed: %s has no GPU timestamps on its compute queue",
                     dev->info.name);
    } else if (!start->stream || !end->stream) {
        r = DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "event_elapsed: %s was never recorded",
                     !start->stream ? "start" : "end");
    } else if (start->capture_id || end->capture_id) {
        r = DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE,
                     "event_elapsed: %s was recorded during a capture; it marks a point of the "
                     "graph, not of a stream",
                     start->capture_id ? "start" : "end");
    } else if (start->cancelled || end->cancelled) {
        r = SALVO_CANCELLED;
    } else {
        /* Both looked at (and submitted) before saying not ready. */
        bool done0 = point_done_locked(dev, start), done1 = point_done_locked(dev, end);
        if (device_is_lost(dev))
            r = device_lost_error(dev);
        else if (!done0 || !done1)
            r = SALVO_NOT_READY;
        for (int i = 0; i < 2 && r == SALVO_OK; i++) {
            timing_point_settle_locked(&dev->q, &ev[i]->time);
            if (ev[i]->time.state == TIMING_LOST)
                r = point_lost(dev, ev[i], name[i]);
            else if (ev[i]->time.state != TIMING_READY)
                r = DEV_FAIL(dev, SALVO_ERROR_UNKNOWN,
                             "event_elapsed: %s is complete but has no time", name[i]);
        }
        if (r == SALVO_OK) {
            uint32_t bits = dev->caps.timestamp_valid_bits ? dev->caps.timestamp_valid_bits : 64;
            int64_t ticks = trace_ticks_delta(start->time.ticks, end->time.ticks, bits);
            double period = dev->caps.timestamp_period_ns > 0 ? dev->caps.timestamp_period_ns
                                                              : 1.0;
            if (ticks < 0)
                r = DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE,
                             "event_elapsed: end's point came %.0f ns before start's on the "
                             "device (events of streams not ordered by each other?)",
                             -(double)ticks * period);
            else
                *ns = (uint64_t)((double)ticks * period + 0.5);
        }
    }
    salvo_mutex_unlock(&dev->q.lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}
