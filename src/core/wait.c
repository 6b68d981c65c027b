/* The wait. See wait.h. */
#define _POSIX_C_SOURCE 200809L
#include "core/wait.h"

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

/* A short work often ends within microseconds: the fence is polled for a
 * bounded time before a blocking wait, whose wake-up costs tens of
 * microseconds. */
static accel_result on_fence(queue *q, const wait_spec *w)
{
    const accel_vtable *vt = q->acc->vt;
    if (w->spin && q->spin_ns) {
        uint64_t end = wait_sooner(wait_now_ns() + q->spin_ns, w->deadline_ns);
        do {
            accel_result r = vt->fence_status(q->acc->self, q->adev, w->fence);
            if (r != ACCEL_NOT_READY)
                return r;
        } while (wait_now_ns() < end);
    }
    uint64_t timeout = UINT64_MAX;
    if (w->deadline_ns != UINT64_MAX) {
        uint64_t now = wait_now_ns();
        timeout = w->deadline_ns > now ? w->deadline_ns - now : 0;
    }
    return vt->fence_wait(q->acc->self, q->adev, w->fence, timeout);
}

/* As on_fence, on the timeline value a batch signals. */
static accel_result on_timeline(queue *q, const wait_spec *w)
{
    const accel_vtable *vt = q->acc->vt;
    if (w->spin && q->spin_ns) {
        uint64_t end = wait_sooner(wait_now_ns() + q->spin_ns, w->deadline_ns);
        do {
            uint64_t value = 0;
            accel_result r = vt->timeline_value(q->acc->self, q->adev, w->until.timeline, &value);
            if (r != ACCEL_SUCCESS || value >= w->until.value)
                return r;
        } while (wait_now_ns() < end);
    }
    uint64_t timeout = UINT64_MAX;
    if (w->deadline_ns != UINT64_MAX) {
        uint64_t now = wait_now_ns();
        timeout = w->deadline_ns > now ? w->deadline_ns - now : 0;
    }
    return vt->timeline_wait(q->acc->self, q->adev, w->until.timeline, w->until.value, timeout);
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
