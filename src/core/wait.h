/*
 * The wait: the one way the engine waits for the device. Slots (a batch's
 * fence), held batches (a host gate's timeline), events, host calls and
 * staged transfers all wait through wait_locked.
 *
 * Called with the device lock held; it is let go for the wait and taken
 * back before the return. Meanwhile a thread that looks at a batch's fence
 * or timeline is counted in the batch's waiters (so that nobody resets a
 * fence it may still be looking at, and its stream, busy while any slot
 * is waited on, is not freed under it), and, when asked, pins the retire
 * clock: nothing tagged past the pin is released (a gate's timeline it
 * polls, say). On
 * return the caller looks again at whatever it waited for: the lock was
 * dropped, and another thread may have seen the work end first.
 *
 * A wait is bounded by its deadline: the device's fence timeout from now
 * unless the caller gives a nearer one (wait_deadline).
 */
#ifndef SALVO_CORE_WAIT_H
#define SALVO_CORE_WAIT_H

#include <stdint.h>

#include "core/queue.h"

typedef struct wait_spec {
    /* What is waited for: a fence; else a timeline value a batch signals
     * (until.timeline not NULL: spun on, then waited for); else a host
     * gate's timeline value (gate.timeline not NULL), polled with naps;
     * else nothing: a nap of nap_ns. */
    accel_fence *fence;
    accel_sem_op until;
    accel_sem_op gate;
    uint64_t nap_ns;
    /* Poll the fence (or until's timeline) before blocking: for the
     * device's spin time, or to the end where the device polls whole
     * waits and a CPU is free (wait.c, poll). */
    bool spin;
    /* The batch whose fence or gate this is (its waiters count), or NULL. */
    slot *batch;
    /* Nonzero: the retire clock is held below this serial meanwhile. The
     * caller advances the clock after the return (queue_advance_locked). */
    uint64_t pin;
    /* Absolute, monotonic (wait_now_ns); UINT64_MAX: none. */
    uint64_t deadline_ns;
    /* How the lock is let go (NULL: unlocked plainly); the host-call
     * thread takes in releases queued meanwhile as it lets go. */
    void (*unlock)(queue *q);
} wait_spec;

/* ACCEL_SUCCESS (signalled, reached, or napped), ACCEL_TIMEOUT (the
 * deadline came first), ACCEL_ERROR_DEVICE_LOST (the driver's word, or a
 * gate poll that saw the device marked lost), or the error of a wait the
 * driver refused. */
accel_result wait_locked(queue *q, const wait_spec *w) SALVO_REQUIRES(q->lock);
/* The monotonic clock in nanoseconds. */
uint64_t wait_now_ns(void);
/* now + the device's fence timeout, or UINT64_MAX when it has none. */
uint64_t wait_deadline(const queue *q);
/* The nearer of a and b. */
static inline uint64_t wait_sooner(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

#endif
