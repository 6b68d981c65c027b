/* The wait. See wait.h. */
#define _POSIX_C_SOURCE 200809L
#include "core/wait.h"

#include <sched.h>
#include <time.h>

/* A gate poll naps this long first, doubling up to HELD_WAIT_NAP_MAX_NS:
 * a gate whose raise found the device lost is never raised (only the host
 * would notice), and a blocking semaphore wait may keep the raise itself
 * out (a lock some validation layers hold across it). */
#define GATE_NAP_MIN_NS (20ull * 1000)

uint64_t wait_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t wait_deadline(const queue *q)
{
    if (q->fence_timeout_ns == UINT64_MAX)
        return UINT64_MAX;
    uint64_t now = wait_now_ns();
    return q->fence_timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + q->fence_timeout_ns;
}

static void nap(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
    nanosleep(&ts, NULL);
}

static bool lost(const queue *q)
{
    return atomic_load_explicit(&q->lost, memory_order_acquire);
}

/* One look at what w waits for, a fence or a timeline value:
 * ACCEL_NOT_READY while it is still to come. */
static accel_result look(queue *q, const wait_spec *w)
{
    const accel_vtable *vt = q->acc->vt;
    if (w->fence)
        return vt->fence_status(q->acc->self, q->adev, w->fence);
    uint64_t value = 0;
    accel_result r = vt->timeline_value(q->acc->self, q->adev, w->until.timeline, &value);
    return r == ACCEL_SUCCESS && value < w->until.value ? ACCEL_NOT_READY : r;
}

/* A place among the threads that poll a whole wait, if one is free. */
static bool take_poller(queue *q)
{
    uint32_t n = atomic_fetch_add_explicit(&q->pollers, 1, memory_order_relaxed);
    if (n < q->pollers_max)
        return true;
    atomic_fetch_sub_explicit(&q->pollers, 1, memory_order_relaxed);
    return false;
}

/* A short work often ends within microseconds, and a blocking wait's
 * wake-up costs tens of them (and leaves the host slow to submit for a
 * while after): w is polled for the device's spin time, or to its end
 * where the device polls whole waits and a CPU is free for it. Past the
 * spin time each look yields the CPU first, so that a thread with work
 * to do gets it. ACCEL_NOT_READY when the polling ended unanswered. */
static accel_result poll(queue *q, const wait_spec *w)
{
    if (!w->spin || !q->spin_ns)
        return ACCEL_NOT_READY;
    bool whole = q->poll_whole && take_poller(q);
    uint64_t end = wait_sooner(wait_now_ns() + q->spin_ns, w->deadline_ns);
    accel_result r;
    for (;;) {
        r = look(q, w);
        if (r != ACCEL_NOT_READY)
            break;
        uint64_t now = wait_now_ns();
        if (now < end)
            continue;
        if (!whole || now >= w->deadline_ns || lost(q))
            break;
        sched_yield();
    }
    if (whole)
        atomic_fetch_sub_explicit(&q->pollers, 1, memory_order_relaxed);
    return r;
}

/* What is left of w's time: the blocking wait's timeout. */
static uint64_t time_left(const wait_spec *w)
{
    if (w->deadline_ns == UINT64_MAX)
        return UINT64_MAX;
    uint64_t now = wait_now_ns();
    return w->deadline_ns > now ? w->deadline_ns - now : 0;
}

static accel_result on_fence(queue *q, const wait_spec *w)
{
    accel_result r = poll(q, w);
    if (r != ACCEL_NOT_READY)
        return r;
    return q->acc->vt->fence_wait(q->acc->self, q->adev, w->fence, time_left(w));
}

static accel_result on_timeline(queue *q, const wait_spec *w)
{
    accel_result r = poll(q, w);
    if (r != ACCEL_NOT_READY)
        return r;
    return q->acc->vt->timeline_wait(q->acc->self, q->adev, w->until.timeline, w->until.value,
                                     time_left(w));
}

static accel_result on_gate(queue *q, const wait_spec *w)
{
    uint64_t gap = GATE_NAP_MIN_NS;
    for (;;) {
        uint64_t value = 0;
        accel_result r = q->acc->vt->timeline_value(q->acc->self, q->adev, w->gate.timeline, &value);
        if (r != ACCEL_SUCCESS)
            return r;
        if (value >= w->gate.value)
            return ACCEL_SUCCESS;
        if (lost(q))
            return ACCEL_ERROR_DEVICE_LOST;
        uint64_t now = wait_now_ns();
        if (now >= w->deadline_ns)
            return ACCEL_TIMEOUT;
        nap(wait_sooner(gap, w->deadline_ns - now));
        gap = gap * 2 < HELD_WAIT_NAP_MAX_NS ? gap * 2 : HELD_WAIT_NAP_MAX_NS;
    }
}

/* Let go of q's lock as w asks. Not analysed: the analysis cannot follow
 * a call through w->unlock, a function pointer (the host-call thread's
 * worker_unlock, which says SALVO_RELEASE where it is defined). */
static void let_go(queue *q, const wait_spec *w) SALVO_RELEASE(q->lock)
    SALVO_NO_THREAD_SAFETY_ANALYSIS
{
    if (w->unlock)
        w->unlock(q);
    else
        salvo_mutex_unlock(&q->lock);
}

accel_result wait_locked(queue *q, const wait_spec *w)
{
    queue_pin pin = {w->pin, q->pins};
    if (w->pin)
        q->pins = &pin;
    if (w->batch)
        w->batch->waiters++;
    let_go(q, w);

    accel_result r;
    if (w->fence) {
        r = on_fence(q, w);
    } else if (w->until.timeline) {
        r = on_timeline(q, w);
    } else if (w->gate.timeline) {
        r = on_gate(q, w);
    } else {
        uint64_t now = wait_now_ns();
        r = now >= w->deadline_ns ? ACCEL_TIMEOUT : ACCEL_SUCCESS;
        if (r == ACCEL_SUCCESS)
            nap(wait_sooner(w->nap_ns, w->deadline_ns - now));
    }

    salvo_mutex_lock(&q->lock);
    if (w->pin)
        for (queue_pin **p = &q->pins; *p; p = &(*p)->next)
            if (*p == &pin) {
                *p = pin.next;
                break;
            }
    if (w->batch && --w->batch->waiters == 0)
        pthread_cond_broadcast(&q->slot_cv);
    return r;
}
