/*
 * The scheduler: when a stream's batch goes to the device, and every walk
 * over the device's streams that submits, waits for or finishes their
 * batches. A stream's submit (stream_submit_locked: the batch held on the
 * host or given to the device), the device's drain points (reap: poll
 * what is in flight, submit and free destroyed streams; quiesce: submit
 * and wait up to a serial), the release bounds (relieve), the waits for a
 * batch by serial, device-wide synchronize, and the end of streams (free,
 * device destroy).
 *
 * Calls go one way: the stream engine (core/stream_engine.c) calls the
 * scheduler, the scheduler calls the queue (core/queue.c), and neither
 * calls back up. The queue looks at the streams' slots (the retire
 * clock's floor, loss, held batches and their pump) but calls no function
 * of theirs.
 *
 * Every function named _locked runs under the queue's lock.
 */
#ifndef SALVO_CORE_SCHEDULER_H
#define SALVO_CORE_SCHEDULER_H

#include "core/queue.h"
#include "core/stream_engine.h"

/* Submit st's open batch (held on the host where queue_must_hold_locked
 * says so). report as for queue_wait_slot_locked. */
salvo_status stream_submit_locked(stream_engine *st, bool report) SALVO_REQUIRES(st->q->lock);

/* Device destroy, in order, the lock held: wait for all work (the queue
 * idle as a last resort, else the device taken for lost); then
 * sched_release_all_locked runs or abandons every queued release and
 * frees every stream; then queue_fini_locked (core/queue.h). */
void sched_settle_for_destroy_locked(queue *q) SALVO_REQUIRES(q->lock);
void sched_release_all_locked(queue *q) SALVO_REQUIRES(q->lock);

/* If the batch with this serial is still being recorded, submit it: it
 * would otherwise never complete (a query loop), and once submitted it
 * orders every batch submitted after it on the queue (a stream's wait).
 * A failure of that submission is its own stream's to report. */
void sched_submit_batch_locked(queue *q, uint64_t serial) SALVO_REQUIRES(q->lock);

/* Wait on the host until the batch with this serial is over (submitting
 * it first if it is open). Failures of that batch stay with its stream
 * (they are that stream's to report); the caller gets the status. */
salvo_status sched_wait_batch_locked(queue *q, uint64_t serial) SALVO_REQUIRES(q->lock);

/* Poll every in-flight slot of every stream; finish destroyed streams.
 * Failures go to their stream's deferred error. */
void sched_reap_locked(queue *q) SALVO_REQUIRES(q->lock);

/* Submit every open batch with serial <= limit and wait for every batch
 * with serial <= limit, on all streams. Failures are kept on their streams
 * (never consumed); returns SALVO_OK, or DEVICE_LOST / TIMEOUT when the
 * wait could not finish. */
salvo_status sched_quiesce_locked(queue *q, uint64_t limit) SALVO_REQUIRES(q->lock);

/* sched_quiesce_locked for a host transfer of buffer ab: a batch waiting
 * on a gate that does not bind ab is not waited for (the gate may stay
 * down for long; the transfer does not need it, and its own copy is not
 * queued behind it: such a batch on the transfer's queue is held). */
salvo_status sched_quiesce_for_locked(queue *q, uint64_t limit, const accel_buffer *ab)
    SALVO_REQUIRES(q->lock);

/* sched_wait_batch_locked with a bound: wait until the monotonic clock
 * reads deadline_ns at most (UINT64_MAX: no bound; at or before now: a
 * query that still submits the batch if it is open). SALVO_OK once the
 * batch is over, SALVO_TIMEOUT when the bound expired first (the work goes
 * on), DEVICE_LOST, or the error of a wait that could not be made. The
 * lock is dropped while it waits or sleeps; the batch's failure stays with
 * its stream. */
salvo_status sched_wait_batch_until_locked(queue *q, uint64_t serial, uint64_t deadline_ns)
    SALVO_REQUIRES(q->lock);

/* When the release bounds are exceeded, run what completed, then wait.
 * Inline, a glance first: every command asks, and there is seldom
 * anything to take in or run (sched_relieve_run_locked does that). */
void sched_relieve_run_locked(queue *q) SALVO_REQUIRES(q->lock);
static inline void sched_relieve_locked(queue *q) SALVO_REQUIRES(q->lock)
{
    if (retire_has_incoming(&q->retire) || retire_pending(&q->retire) > q->release_max_count ||
        atomic_load(&q->retire.bytes) > q->release_max_bytes)
        sched_relieve_run_locked(q);
}

/* Make a buffer allocation, retrying once after running releases when
 * device memory ran out. */
accel_result sched_buffer_create_locked(queue *q, const accel_buffer_desc *d, accel_buffer **out,
                                        accel_buffer_info *info) SALVO_REQUIRES(q->lock);

/* Submit and wait for everything, then hand over the first failure kept on
 * any stream (all are taken) or of the wait itself; its message in msg.
 * *expired: the wait ran into the fence timeout (as stream_synchronize_locked). */
salvo_status sched_synchronize_locked(queue *q, char msg[SALVO_ERROR_MAX], bool *expired)
    SALVO_REQUIRES(q->lock);

#endif
