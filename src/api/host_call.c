/* Host calls: fn run on salvo's worker thread at a point of a stream,
 * the stream's later work held until it returns. See host_call.h. */
#define _POSIX_C_SOURCE 200809L /* POSIX threads */
#include "api/host_call.h"

#include "core/wait.h"

#include <string.h>
#include <time.h>

#define VT(dev) ((dev)->acc.vt)
#define SELF(dev) ((dev)->acc.self)


struct host_call {
    host_call *next;
    void (*fn)(void *user);
    void *user;
    uint64_t serial;  /* the batch before the call (0: nothing to wait for) */
    uint64_t value;   /* the timeline value raised after it (0: none) */
    uint64_t index;   /* its number among the device's calls (1, 2, ...) */
    staging_block *read; /* a stream read's staging, copied out to dst first */
    salvo_buffer *mapped; /* or a read straight from this buffer (held) */
    uint64_t mapped_offset, mapped_size;
    void *dst;
    bool copy_out;    /* false: the read failed after its copy was recorded */
};


static void block_release(retire_entry *e, bool abandoned)
{
    (void)abandoned;
    staging_block *b = (staging_block *)e;
    queue *q = b->q;
    q->acc->vt->buffer_destroy(q->acc->self, q->adev, b->ab);
    salvo_mem_free(q->alloc, b);
}

salvo_status staging_block_create_locked(salvo_device *dev, uint64_t size, staging_block **out)
{
    *out = NULL;
    staging_block *b = salvo_mem_calloc(dev->alloc, 1, sizeof *b);
    if (!b)
        return DEV_FAIL(dev, SALVO_ERROR_OUT_OF_HOST_MEMORY, "stream transfer: out of host memory");
    accel_buffer_desc d = {.size = size, .domain = SALVO_DOMAIN_HOST, .transfer = true};
    accel_result r = sched_buffer_create_locked(&dev->q, &d, &b->ab, &b->info);
    if (r != ACCEL_SUCCESS || !b->info.mapped) {
        VT(dev)->buffer_destroy(SELF(dev), dev->adev, b->ab);
        salvo_mem_free(dev->alloc, b);
        if (r == ACCEL_ERROR_DEVICE_LOST)
            queue_mark_lost_locked(&dev->q);
        return DEV_FAIL(dev, r ? salvo_status_from_accel(r) : SALVO_ERROR_UNKNOWN,
                        "stream transfer: cannot create a staging buffer of %llu bytes (%s)",
                        (unsigned long long)size, accel_result_name(r));
    }
    b->q = &dev->q;
    b->size = size;
    b->release.fn = block_release;
    b->release.bytes = size;
    *out = b;
    return SALVO_OK;
}

void staging_block_release_locked(queue *q, staging_block *b)
{
    if (!b)
        return;
    b->dropped = true;
    if (b->writers == 0) {
        retire_push(&q->retire, &b->release, atomic_load(&q->next_serial));
        /* Where no copy from it was recorded (a transfer that failed),
         * nothing waits for it: it goes now, not at a later drain point. */
        queue_advance_locked(q);
    }
}

static void work_release(retire_entry *e, bool abandoned)
{
    (void)abandoned;
    host_work *hw = (host_work *)e;
    salvo_device *dev = hw->dev;
    VT(dev)->timeline_destroy(SELF(dev), dev->adev, hw->timeline);
    pthread_cond_destroy(&hw->cv);
    pthread_mutex_destroy(&hw->mu);
    salvo_mem_free(dev->alloc, hw);
}

salvo_status host_work_get_locked(salvo_device *dev, host_work **out)
{
    if (dev->host_work) {
        *out = dev->host_work;
        return SALVO_OK;
    }
    *out = NULL;
    host_work *hw = salvo_mem_calloc(dev->alloc, 1, sizeof *hw);
    if (!hw)
        return DEV_FAIL(dev, SALVO_ERROR_OUT_OF_HOST_MEMORY, "host call: out of host memory");
    if (pthread_mutex_init(&hw->mu, NULL) != 0) {
        salvo_mem_free(dev->alloc, hw);
        return DEV_FAIL(dev, SALVO_ERROR_OUT_OF_HOST_MEMORY, "host call: out of host memory");
    }
    if (pthread_cond_init(&hw->cv, NULL) != 0) {
        pthread_mutex_destroy(&hw->mu);
        salvo_mem_free(dev->alloc, hw);
        return DEV_FAIL(dev, SALVO_ERROR_OUT_OF_HOST_MEMORY, "host call: out of host memory");
    }
    hw->dev = dev;
    hw->release.fn = work_release;
    dev->host_work = hw;
    *out = hw;
    return SALVO_OK;
}

/* Let go of the queue's lock from the worker. A destroy on another thread
 * only tries the lock; finding it held by this thread, it leaves its
 * release on the retire queue's incoming list, which this thread then
 * takes in (and runs what can run) rather than leave it for the program's
 * next call. */
static void worker_unlock(queue *q) SALVO_RELEASE(q->lock)
{
    /* Ends: each pass takes in what was there; destroys are finite. */
    for (;;) {
        if (atomic_load(&q->retire.incoming))
            sched_reap_locked(q);
        salvo_mutex_unlock(&q->lock);
        if (!atomic_load(&q->retire.incoming))
            return;
        salvo_mutex_lock(&q->lock);
    }
}

/* Wait, q's lock held (dropped meanwhile; q is hw's device's queue),
 * until the batch with this serial is over: completed, refused or failed
 * (its stream reports that), or abandoned with the device. A wait that
 * expires or fails otherwise is tried again: the work is still going
 * (within bounds, below). False when it stopped waiting with the batch
 * not over. */
static bool wait_batch_locked(queue *q, host_work *hw, uint64_t serial) SALVO_REQUIRES(q->lock)
{
    int failures = 0;
    uint64_t nap = 20 * 1000;
    for (;;) {
        slot *s = NULL;
        stream_engine *owner = queue_batch_owner_locked(q, serial, &s);
        if (queue_is_lost(q) || !owner)
            return true;
        salvo_status r = SALVO_OK;
        if (s->state == SLOT_RECORDING) {
            sched_submit_batch_locked(q, serial);
            continue;
        }
        if (s->state != SLOT_HELD) {
            nap = 20 * 1000;
            r = queue_wait_slot_locked(q, owner, s, false);
            if (r == SALVO_OK || queue_is_lost(q))
                continue;
            /* A wait the driver keeps failing (timing out): a look at the
             * fence, as a reap takes, may still see the batch over. */
            sched_reap_locked(q);
            if (queue_is_lost(q) || !queue_batch_owner_locked(q, serial, NULL))
                continue;
        } else {
            /* Held on the host behind a gate: polled here, not through the
             * queue's held wait, which keeps releases back (a pin) while it
             * runs: the worker must never be what a lost device's releases
             * wait for. */
            queue_pump_locked(q);
            if (s->state != SLOT_HELD)
                continue;
        }
        /* A driver that keeps refusing the wait (or, once the device is
         * being destroyed, keeps timing out) does not get to hold the
         * stream, or the destroy, for ever: the call runs (the stream's
         * waits report the failure). */
        if (r != SALVO_OK) {
            pthread_mutex_lock(&hw->mu);
            bool stopping = hw->stop;
            pthread_mutex_unlock(&hw->mu);
            if ((r < 0 || stopping) && ++failures >= RECOVERY_ATTEMPTS) {
                SALVO_LOG(q->log, SALVO_LOG_ERROR,
                          "host call: the work before it could not be waited for (%s); it runs "
                          "now",
                          salvo_status_string(r));
                return false;
            }
        }
        wait_spec w = {.nap_ns = nap, .deadline_ns = UINT64_MAX, .unlock = worker_unlock};
        wait_locked(q, &w);
        nap = nap * 2 < HELD_WAIT_NAP_MAX_NS ? nap * 2 : HELD_WAIT_NAP_MAX_NS;
    }
}

static void run_call(host_work *hw, host_call *c)
{
    salvo_device *dev = hw->dev;
    queue *q = &dev->q;
    salvo_mutex_lock(&q->lock);
    bool over = wait_batch_locked(q, hw, c->serial);
    bool lost = queue_is_lost(q);
    if (c->read && !over && !lost) {
        /* The copy into staging may still run: dst is left alone, and the
         * staging goes once the batches recorded so far are over (the
         * retire queue), not now, under the copy. */
        staging_block_release_locked(q, c->read);
        c->read = NULL;
    }
    worker_unlock(q);
    if (c->read) {
        /* The copy into staging is over (or never will be: then dst is
         * left alone). */
        if (c->copy_out && !lost)
            memcpy(c->dst, c->read->info.mapped, c->read->size);
        block_release(&c->read->release, lost);
    }
    if (c->mapped) {
        /* The work before it is over: the buffer holds what it left.
         * Not when the wait gave up (that work may still write it). */
        if (over && !lost)
            memcpy(c->dst, (const char *)c->mapped->ai.mapped + c->mapped_offset,
                   c->mapped_size);
        device_let_go(c->mapped->dev, &c->mapped->res);
    }
    if (c->fn) {
        host_call_running = true;
        c->fn(c->user);
        host_call_running = false;
    }
    if (c->value && hw->timeline && !queue_is_lost(q)) {
        accel_result r = ACCEL_ERROR_UNKNOWN;
        for (int attempt = 0; attempt < RECOVERY_ATTEMPTS && r != ACCEL_SUCCESS &&
                              r != ACCEL_ERROR_DEVICE_LOST;
             attempt++)
            r = VT(dev)->timeline_signal(SELF(dev), dev->adev, hw->timeline, c->value);
        /* The stream's later work waits for this value (on the device, or
         * held on the host by threads polling it) and nothing else can
         * give it: a timeline the driver will not signal is a device that
         * cannot go on. */
        if (r != ACCEL_SUCCESS) {
            SALVO_LOG(&dev->log, SALVO_LOG_ERROR,
                      "host call: its gate could not be raised (%s); the device is taken for lost",
                      accel_result_name(r));
            queue_noted(q, SALVO_ERROR_DEVICE_LOST);
        } else {
            atomic_store(&q->host_raised, c->value);
        }
    }
    /* Batches held on the host for this call go to the device now; and
     * releases that found the lock busy while this thread held it (a
     * destroy only tries the lock) are not left waiting for a later call:
     * looked at until none is left. */
    salvo_mutex_lock(&q->lock);
    /* From the raise on, the program may go ahead (and destroy things):
     * releases that meet this section stay on the incoming list, which
     * worker_unlock takes in before it lets go. */
    sched_reap_locked(q);
    worker_unlock(q);
}

static void *worker(void *arg)
{
    host_work *hw = arg;
    pthread_mutex_lock(&hw->mu);
    for (;;) {
        while (!hw->head && !hw->stop)
            pthread_cond_wait(&hw->cv, &hw->mu);
        host_call *c = hw->head;
        if (!c)
            break; /* stopping, nothing left */
        hw->head = c->next;
        if (!hw->head)
            hw->tail = NULL;
        pthread_mutex_unlock(&hw->mu);
        run_call(hw, c);
        salvo_mem_free(hw->dev->alloc, c);
        pthread_mutex_lock(&hw->mu);
        hw->finished++;
        pthread_cond_broadcast(&hw->cv);
    }
    pthread_mutex_unlock(&hw->mu);
    return NULL;
}

static salvo_status enqueue_locked(salvo_stream *st, const host_call *what, uint64_t *call_index)
    SALVO_REQUIRES(st->e.q->lock)
{
    salvo_device *dev = stream_device(st);
    queue *q = &dev->q;
    salvo_mutex_same(&st->e.q->lock, &dev->q.lock);
    host_work *hw;
    salvo_status r = host_work_get_locked(dev, &hw);
    if (r != SALVO_OK)
        return r;
    if (!hw->timeline && dev->info.timeline_semaphores) {
        accel_result ar = VT(dev)->timeline_create(SELF(dev), dev->adev, 0, &hw->timeline);
        if (ar != ACCEL_SUCCESS) {
            hw->timeline = NULL;
            if (ar == ACCEL_ERROR_DEVICE_LOST)
                queue_mark_lost_locked(st->e.q);
            return DEV_FAIL(dev, salvo_status_from_accel(ar), "host call: timeline: %s",
                            accel_result_name(ar));
        }
        q->host_timeline = hw->timeline;
    }
    host_call *c = salvo_mem_calloc(dev->alloc, 1, sizeof *c);
    if (!c)
        return DEV_FAIL(dev, SALVO_ERROR_OUT_OF_HOST_MEMORY, "host call: out of host memory");
    if (!hw->started) {
        if (pthread_create(&hw->thread, NULL, worker, hw) != 0) {
            salvo_mem_free(dev->alloc, c);
            return DEV_FAIL(dev, SALVO_ERROR_OUT_OF_HOST_MEMORY,
                            "host call: cannot start the host-call thread");
        }
        hw->started = true;
    }
    /* Everything before the call, waits included (other streams' batches
     * too), goes now: the worker waits for that batch. */
    r = stream_submit_covering_locked(&st->e);
    if (r != SALVO_OK) {
        salvo_mem_free(dev->alloc, c);
        return r;
    }
    uint64_t serial = st->e.last_serial;
    uint64_t value = 0;
    if (hw->timeline) {
        /* The batch that waits for the call is opened first: the open may
         * wait for a free slot with the lock dropped, and another thread's
         * call meanwhile takes the next value. From the value on, the lock
         * is not let go until the call is in the worker's list: values go
         * up in the order the worker raises them. */
        r = stream_open_locked(&st->e);
        if (r == SALVO_OK) {
            value = hw->issued + 1;
            slot_dep w = {.op = {hw->timeline, value}};
            r = slot_add_wait(st->e.open, &q->env, &w);
        }
        if (r != SALVO_OK) {
            salvo_mem_free(dev->alloc, c);
            return r;
        }
        /* A failure of the batch that holds only this wait names it. */
        slot_note_name(st->e.open, "(host call)");
    }
    hw->issued++;
    st->last_call = hw->issued;
    *c = *what;
    c->value = value;
    c->index = hw->issued;
    c->serial = queue_batch_done_locked(st->e.q, serial) ? 0 : serial;
    c->copy_out = true;
    if (c->mapped) {
        /* Later host access to the buffer (salvo_buffer_write, _read)
         * waits for the batch behind the call, hence for the call: the
         * batch counts as one that binds it. */
        resource_hold(&c->mapped->res);
        if (value) {
            slot *s = st->e.open;
            resource_note_use(&c->mapped->res, s->serial);
            s->host_read = c->mapped->ab;
            s->host_reads++;
        }
    }
    pthread_mutex_lock(&hw->mu);
    if (hw->tail)
        hw->tail->next = c;
    else
        hw->head = c;
    hw->tail = c;
    pthread_cond_broadcast(&hw->cv);
    pthread_mutex_unlock(&hw->mu);
    if (call_index)
        *call_index = c->index;
    return SALVO_OK;
}

salvo_status host_call_enqueue_locked(salvo_stream *st, void (*fn)(void *), void *user,
                                      staging_block *read_staging, void *dst, uint64_t *call_index)
{
    host_call what = {.fn = fn, .user = user, .read = read_staging, .dst = dst};
    return enqueue_locked(st, &what, call_index);
}

salvo_status host_call_enqueue_mapped_read_locked(salvo_stream *st, salvo_buffer *src,
                                                  uint64_t offset, void *dst, uint64_t size,
                                                  uint64_t *call_index)
{
    host_call what = {.mapped = src, .mapped_offset = offset, .mapped_size = size, .dst = dst};
    salvo_status r = enqueue_locked(st, &what, call_index);
    if (r == SALVO_OK)
        COUNTER_ADD(&stream_device(st)->q.n, transfer_bytes, size);
    return r;
}

void host_work_wait_run(host_work *hw, uint64_t index)
{
    pthread_mutex_lock(&hw->mu);
    hw->run_waiters++;
    while (hw->finished < index)
        pthread_cond_wait(&hw->cv, &hw->mu);
    hw->run_waiters--;
    pthread_mutex_unlock(&hw->mu);
}

uint64_t host_work_sync_calls_locked(salvo_device *dev, const salvo_stream *st, bool expired)
{
    host_work *hw = dev->host_work;
    if (!hw || !hw->started || expired)
        return 0;
    return st ? st->last_call : hw->issued;
}

void host_work_device_destroy(salvo_device *dev)
{
    host_work *hw = dev->host_work;
    if (!hw)
        return;
    if (hw->started) {
        /* The pending calls run (once their work is over, as the destroy
         * waits for all work anyway); then the worker ends. */
        pthread_mutex_lock(&hw->mu);
        hw->stop = true;
        pthread_cond_broadcast(&hw->cv);
        pthread_mutex_unlock(&hw->mu);
        pthread_join(hw->thread, NULL);
    }
    salvo_mutex_lock(&dev->q.lock);
    staging_block_release_locked(&dev->q, hw->block);
    hw->block = NULL;
    /* Batches that waited on the timeline may still be in flight: it goes
     * with the releases, after the destroy has waited for all work. */
    retire_push(&dev->q.retire, &hw->release, atomic_load(&dev->q.next_serial));
    dev->host_work = NULL;
    salvo_mutex_unlock(&dev->q.lock);
}

salvo_status salvo_stream_host_call(salvo_stream *st, void (*fn)(void *user), void *user)
{
    if (!st || !fn)
        return SALVO_FAIL(st ? &stream_device(st)->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "stream_host_call: %s is NULL", st ? "fn" : "stream");
    salvo_device *dev = stream_device(st);
    /* Queuing may wait for a batch slot that work behind this very call
     * holds (and the fallback waits for the call itself). */
    salvo_status r = HOST_CALL_CHECK(dev, "stream_host_call");
    if (r != SALVO_OK)
        return r;
    uint64_t index = 0;
    salvo_mutex_lock(&dev->q.lock);
    salvo_mutex_same(&dev->q.lock, &st->e.q->lock);
    if (device_is_lost(dev))
        r = device_lost_error(dev);
    /* Not a command (work for the host-call thread, not for a batch), so
     * not the recorder's: a capture is refused here. */
    else if (stream_capture_locked(st))
        r = DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE,
                     "stream_host_call: the stream is capturing (%s); a graph cannot hold a "
                     "host call",
                     st->capture->g.label);
    else
        r = host_call_enqueue_locked(st, fn, user, NULL, NULL, &index);
    host_work *hw = dev->host_work;
    salvo_mutex_unlock(&dev->q.lock);
    if (r == SALVO_OK && !hw->timeline)
        host_work_wait_run(hw, index);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}
