/*
 * Host calls and stream-ordered host transfers (host_call.c,
 * stream_transfer.c): a device's host work.
 *
 * A host call is a point in a stream: the stream's work before it is
 * submitted and its serial kept (with an empty batch where the stream
 * follows another stream's batch by queue order alone: its end then
 * covers that batch too); the stream's later work waits on the
 * device's host-call timeline for the call's value (a host gate: held on
 * the host where the queue is shared). One worker thread per device,
 * started at the first call and joined at device destroy, takes the calls
 * in the order they were made (across streams too: values go up in that
 * order, so the timeline only goes up; a call takes its value only after
 * whatever may let go of the lock), waits for the kept batch to be
 * over (completed, failed, or abandoned with the device), copies a stream
 * read out of its staging memory, runs fn, raises the timeline to the
 * call's value and sends the batches held for it. Should it stop waiting
 * with the batch not over (device destroy, a wait that keeps failing), a
 * read's dst is left alone and its staging goes to the retire queue.
 *
 * Without timeline semaphores there is no gate: the caller of a host call
 * (or stream read) waits until the worker has run it.
 *
 * Locking: host_work.mu guards the list, stop and the finished count; it
 * is taken with the queue's lock held (enqueue) or alone (the worker),
 * never the other way round: the order is queue.lock, then mu. The
 * worker holds neither while it runs fn.
 */
#ifndef SALVO_API_HOST_CALL_H
#define SALVO_API_HOST_CALL_H

#include "api/internal.h"

/* Writes up to this size go through the device's shared staging block
 * (one allocation for many writes); larger ones get a staging buffer of
 * their own. Both are copied at the call. */
#define STREAM_WRITE_SMALL_MAX (64u * 1024u)
#define STREAM_WRITE_BLOCK_BYTES (1u << 20)

typedef struct host_call host_call;

/* Host-visible staging memory released through the retire queue (or by the
 * worker once the batch that used it is over). */
typedef struct staging_block {
    retire_entry release;
    queue *q;
    accel_buffer *ab;
    accel_buffer_info info;
    uint64_t size, used;
    /* [q.lock] Writes that reserved a slice and have not recorded their
     * copy yet (recording may drop the lock); a block let go meanwhile
     * (dropped) is released by the last of them, so its release is tagged
     * after their batches. */
    uint32_t writers;
    bool dropped;
} staging_block;

typedef struct host_work {
    retire_entry release; /* device destroy: the timeline, then this */
    salvo_device *dev;
    pthread_mutex_t mu;
    pthread_cond_t cv;     /* with mu: a call arrived, stop, a call finished */
    host_call *head, *tail;      /* [mu] FIFO */
    bool stop;                   /* [mu] */
    uint64_t finished;           /* [mu] calls run so far (the fallback waits on it) */
    uint32_t run_waiters;        /* [mu] threads in host_work_wait_run (for tests) */
    bool started;                /* [q.lock] the worker runs */
    pthread_t thread;
    accel_timeline *timeline;    /* NULL: no timeline semaphores */
    uint64_t issued;             /* [q.lock] calls made so far: the last value given */
    staging_block *block;        /* [q.lock] the small writes' current block */
} host_work;

/* Set while this thread runs a host call's fn. */
extern _Thread_local bool host_call_running;

/* SALVO_ERROR_INVALID_STATE (logged) when called from a host call's fn:
 * what would wait for work queued behind that very call. */
salvo_status host_call_refuse(salvo_device *dev, const char *what);
#define HOST_CALL_CHECK(dev, what) (host_call_running ? host_call_refuse((dev), (what)) : SALVO_OK)

/* The device's host work, made at first use [q.lock]. */
salvo_status host_work_get_locked(salvo_device *dev, host_work **out) SALVO_REQUIRES(dev->q.lock);
/* Make a host call at this point of st (not capturing, device not lost)
 * [q.lock]. A read's copy-out (staging, its mapping, dst, size) runs
 * before fn; fn may be NULL. On failure nothing is queued (the staging
 * buffer then is the caller's to release). *call_index is the call's
 * number, for a fallback wait (host_work_wait_run). */
salvo_status host_call_enqueue_locked(salvo_stream *st, void (*fn)(void *), void *user,
                                      staging_block *read_staging, void *dst, uint64_t *call_index)
    SALVO_REQUIRES(st->e.q->lock);
/* A read straight from a buffer the host sees coherently (src->ai.mapped,
 * host_coherent): at this point of st, size bytes at offset are copied
 * to dst by the worker, with no staging and no device copy. The call holds
 * src (a hold, let go by the worker) so that a destroy meanwhile waits for
 * it. On failure nothing is queued and no hold is kept [q.lock]. */
salvo_status host_call_enqueue_mapped_read_locked(salvo_stream *st, salvo_buffer *src,
                                                  uint64_t offset, void *dst, uint64_t size,
                                                  uint64_t *call_index)
    SALVO_REQUIRES(st->e.q->lock);
/* Without timelines: wait, the queue's lock not held, until the worker has
 * run call number index. */
void host_work_wait_run(host_work *hw, uint64_t index);
/* A synchronize's host calls [q.lock]: the number of the last one it
 * must see run (of st, or of the device where st is NULL; 0: none, or the
 * synchronize expired with work still going). The gated batch behind a
 * call orders it, but one refused, abandoned or lost does not: the
 * synchronize then waits, the lock let go, with host_work_wait_run, so
 * that no fn runs, nor buffer a read holds stays held, after it returned.
 * The calls' work is over by then (or failed), so they run at once. */
uint64_t host_work_sync_calls_locked(salvo_device *dev, const salvo_stream *st, bool expired)
    SALVO_REQUIRES(dev->q.lock);
/* Device destroy, before it takes the queue's lock: run what is pending,
 * join the worker, queue the release of the rest. */
void host_work_device_destroy(salvo_device *dev) SALVO_EXCLUDES(dev->q.lock);
/* Release a staging block once the batches recorded so far are over (once
 * its last writer has recorded its copy); at once where they are [q.lock]. */
void staging_block_release_locked(queue *q, staging_block *b) SALVO_REQUIRES(q->lock);
/* A host-visible staging block of size bytes [q.lock]. */
salvo_status staging_block_create_locked(salvo_device *dev, uint64_t size, staging_block **out)
    SALVO_REQUIRES(dev->q.lock);

#endif
