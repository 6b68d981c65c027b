/* Host gates: a timeline semaphore the host raises, that launches wait on
 * on the device. */
#include "api/internal.h"

#define VT(dev) ((dev)->acc.vt)
#define SELF(dev) ((dev)->acc.self)

struct gate_ext {
    salvo_gate gate;
    pthread_mutex_t raise_lock; /* orders signals: a timeline only goes up */
    _Atomic uint64_t max_waited; /* highest value a stream waits for */
};

/* The whole gate around the public part every call is given. */
static struct gate_ext *gate_ext_of(salvo_gate *gate)
{
    return (struct gate_ext *)((char *)gate - offsetof(struct gate_ext, gate));
}

static void gate_release(retire_entry *e, bool abandoned)
{
    (void)abandoned;
    salvo_gate *gate = resource_as_gate(resource_of_release(e));
    struct gate_ext *g = gate_ext_of(gate);
    salvo_device *dev = g->gate.dev;
    salvo_mutex_held(&dev->q.lock); /* releases run under the lock */
    live_unlink_locked(dev, &g->gate.res);
    VT(dev)->timeline_destroy(SELF(dev), dev->adev, g->gate.timeline);
    pthread_mutex_destroy(&g->raise_lock);
    COUNT_SUB(dev, live_gates, 1);
    salvo_mem_free(dev->alloc, g);
}

salvo_status salvo_gate_create(salvo_device *dev, salvo_gate **out)
{
    if (!out)
        return SALVO_FAIL(dev ? &dev->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "gate_create: out is NULL");
    *out = NULL;
    if (!dev)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "gate_create: device is NULL");
    if (!dev->info.timeline_semaphores)
        return DEV_FAIL(dev, SALVO_ERROR_UNSUPPORTED,
                        "gate_create: the device has no timeline semaphores");
    if (device_is_lost(dev))
        return device_lost_error(dev);
    struct gate_ext *g = salvo_mem_calloc(dev->alloc, 1, sizeof *g);
    if (!g)
        return DEV_FAIL(dev, SALVO_ERROR_OUT_OF_HOST_MEMORY, "gate_create: out of host memory");
    accel_result r = VT(dev)->timeline_create(SELF(dev), dev->adev, 0, &g->gate.timeline);
    if (r != ACCEL_SUCCESS || pthread_mutex_init(&g->raise_lock, NULL) != 0) {
        VT(dev)->timeline_destroy(SELF(dev), dev->adev, g->gate.timeline);
        salvo_mem_free(dev->alloc, g);
        return DEV_FAIL(dev, r ? salvo_status_from_accel(r) : SALVO_ERROR_OUT_OF_HOST_MEMORY,
                        "gate_create: %s", accel_result_name(r));
    }
    g->gate.dev = dev;
    resource_init(&g->gate.res, RESOURCE_GATE, gate_release, 0);
    atomic_init(&g->gate.value, 0);
    atomic_init(&g->max_waited, 0);
    salvo_mutex_lock(&dev->q.lock);
    live_link_locked(dev, &g->gate.res);
    salvo_mutex_unlock(&dev->q.lock);
    COUNT_ADD(dev, live_gates, 1);
    salvo_clear_error();
    *out = &g->gate;
    return SALVO_OK;
}

/* Signal g's timeline up to value (a value not above the gate's does
 * nothing); *cur: the gate's value before. Takes no other lock: callable
 * with the device's held. */
static accel_result signal_up(struct gate_ext *g, uint64_t value, uint64_t *cur)
{
    salvo_device *dev = g->gate.dev;
    pthread_mutex_lock(&g->raise_lock);
    *cur = atomic_load(&g->gate.value);
    accel_result r = ACCEL_SUCCESS;
    if (value > *cur) {
        r = VT(dev)->timeline_signal(SELF(dev), dev->adev, g->gate.timeline, value);
        if (r == ACCEL_SUCCESS)
            atomic_store(&g->gate.value, value);
    }
    pthread_mutex_unlock(&g->raise_lock);
    return r;
}

static salvo_status raise_to(struct gate_ext *g, uint64_t value, bool strict)
{
    salvo_device *dev = g->gate.dev;
    uint64_t cur;
    accel_result r = signal_up(g, value, &cur);
    bool below = value < cur && strict;
    /* Failures are logged with no lock held, and g is not touched after:
     * the log callback may destroy this very gate (destroys are what it
     * may call), which raises it too and may free it at once. */
    if (below)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "gate_raise: %llu is below the gate's value %llu", (unsigned long long)value,
                        (unsigned long long)cur);
    if (r != ACCEL_SUCCESS)
        return DEV_FAIL(dev, salvo_status_from_accel(r), "gate_raise: %s", accel_result_name(r));
    /* Batches held on the host for this gate go to the device now, unless
     * the lock is busy (its holder, or the next submit or wait, sends
     * them): a raise never waits for the lock. */
    if (value > cur && salvo_mutex_trylock(&dev->q.lock)) {
        queue_pump_locked(&dev->q);
        salvo_mutex_unlock(&dev->q.lock);
    }
    return SALVO_OK;
}

salvo_status salvo_gate_raise(salvo_gate *gate, uint64_t value)
{
    if (!gate)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "gate_raise: gate is NULL");
    if (device_is_lost(gate->dev))
        return device_lost_error(gate->dev);
    salvo_status r = raise_to(gate_ext_of(gate), value, true);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}

uint64_t salvo_gate_value(const salvo_gate *gate)
{
    return gate ? atomic_load(&((salvo_gate *)gate)->value) : 0;
}

salvo_status salvo_stream_wait_gate(salvo_stream *st, salvo_gate *gate, uint64_t value)
{
    if (!st || !gate)
        return SALVO_FAIL(device_sink(st ? stream_device(st) : gate ? gate->dev : NULL),
                          SALVO_ERROR_INVALID_ARGUMENT, "stream_wait_gate: %s is NULL",
                          st ? "gate" : "stream");
    salvo_device *dev = stream_device(st);
    if (gate->dev != dev)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "stream_wait_gate: the gate belongs to another device");
    struct gate_ext *g = gate_ext_of(gate);
    uint64_t seen = atomic_load(&g->max_waited);
    while (seen < value && !atomic_compare_exchange_weak(&g->max_waited, &seen, value)) {
    }
    salvo_mutex_lock(&dev->q.lock);
    salvo_mutex_same(&dev->q.lock, &st->e.q->lock);
    salvo_status r = SALVO_OK;
    if (device_is_lost(dev)) {
        r = device_lost_error(dev);
    } else if (stream_capture_locked(st)) {
        /* Not a command (a wait the next batch starts with), so not the
         * recorder's: a capture is refused here. */
        r = DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE,
                     "stream_wait_gate: the stream is capturing (%s); a graph cannot wait on a "
                     "gate",
                     st->capture->g.label);
    } else if (value > atomic_load(&gate->value)) {
        slot_dep w = {.op = {gate->timeline, value}};
        r = stream_add_wait_locked(&st->e, &w);
    }
    salvo_mutex_unlock(&dev->q.lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}

void gate_open_all_for_destroy(salvo_device *dev)
{
    if (device_is_lost(dev))
        return;
    /* Each gate on the live list signalled in place, under the lock, which
     * keeps them all from being released meanwhile (releases run under
     * it): no hold taken (a gate destroyed already, its release waiting
     * for work, must not be brought back), no memory needed (a destroy
     * needs none). One destroyed already was raised this far by its
     * destroy: nothing to do. A failed signal leaves that work to the
     * destroy's wait, bounded or not as ever. */
    salvo_mutex_lock(&dev->q.lock);
    for (resource_link *l = dev->live.next; l != &dev->live; l = l->next) {
        resource *r = resource_of_link(l);
        if (r->kind != RESOURCE_GATE)
            continue;
        struct gate_ext *g = gate_ext_of(resource_as_gate(r));
        uint64_t cur;
        (void)signal_up(g, atomic_load(&g->max_waited), &cur);
    }
    queue_pump_locked(&dev->q); /* batches held on the host for them */
    salvo_mutex_unlock(&dev->q.lock);
}

void salvo_gate_destroy(salvo_gate *gate)
{
    if (!gate)
        return;
    struct gate_ext *g = gate_ext_of(gate);
    /* Work still waiting on the gate must not wait forever: open it as far
     * as anyone asked, then free it once that work is over. */
    if (!device_is_lost(gate->dev))
        raise_to(g, atomic_load(&g->max_waited), false);
    device_let_go(gate->dev, &gate->res);
}
