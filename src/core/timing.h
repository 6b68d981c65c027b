/*
 * Event timestamps: the GPU time of points in streams, for
 * salvo_event_elapsed.
 *
 * A point (kept by an event) gets a mark each time it is recorded with
 * timestamps: one query, reset and then written (bottom of pipe: once all
 * work submitted before it on its queue is complete) in the command
 * buffer of the batch that holds the point. When that batch completes
 * successfully (timing_batch_done_locked, called by the queue right where
 * a slot is seen complete) the point has run; the mark's ticks are read
 * into it when its time is first asked for (timing_point_settle_locked),
 * not on the way of whatever saw the batch complete (a query or a wait
 * whose latency is its caller's), and the mark is then free for another
 * record, as it is when the point lets go of it unread. A batch that
 * never ran (refused, dropped, abandoned) leaves its marks unread, and
 * their points say the time is lost, and why. A batch whose commands are
 * recorded again (an event cancel) writes its marks again
 * (timing_rewrite_locked, from the batch log's mark entries): those of
 * withdrawn work at its start, as one write whose time they all take (no
 * time passes between them).
 *
 *   point:  NONE --record--> PENDING --its batch completed--> RAN --read--> READY
 *                              |  \--batch did not run--> LOST        \--no time--> LOST
 *           any --record again--> PENDING (the old mark is let go: still
 *                                 pending on its batch, then freed unread)
 *
 * Cost: nothing until the first timed record of the device; then query
 * pools of TIMING_CHUNK queries, made as marks run out (a mark is busy
 * while its batch is active) and kept until the device is destroyed. A
 * record in steady state allocates nothing and adds two commands.
 *
 * Every function runs under the queue's lock.
 */
#ifndef SALVO_CORE_TIMING_H
#define SALVO_CORE_TIMING_H

#include <stdbool.h>
#include <stdint.h>

#include "accel/accel.h"
#include "core/queue.h"
#include "core/slot.h"

struct timing_mark;
typedef struct timing_table timing_table; /* the queue's: pools and marks */

enum { TIMING_CHUNK = 64 };

typedef enum timing_state {
    TIMING_NONE = 0, /* never recorded with timestamps */
    TIMING_PENDING,  /* written into a batch that has not completed */
    TIMING_RAN,      /* its batch completed: the time is in the mark, unread */
    TIMING_READY,    /* ticks hold the time of the latest record */
    TIMING_LOST      /* the latest record has no time: see lost */
} timing_state;

/* What an event keeps [lock]. Zeroed: NONE. */
typedef struct timing_point {
    timing_state state;
    struct timing_mark *mark; /* PENDING: the write in flight; RAN: the write to read */
    uint64_t ticks;           /* READY: masked to the valid bits */
    salvo_status lost;        /* LOST: why (a negative status, or SALVO_CANCELLED) */
} timing_point;

/* Make sure a mark is free for the next timing_write_locked (makes the
 * first query pool, or another one). A failure changes nothing. */
salvo_status timing_reserve_locked(struct queue *q) SALVO_REQUIRES(q->lock);
/* Write p's timestamp at the end of what s (a RECORDING slot on a queue
 * that computes) holds so far. After timing_reserve_locked; cannot fail.
 * Returns the mark written, for the batch log (timing_rewrite_locked). */
struct timing_mark *timing_write_locked(struct queue *q, timing_point *p, slot *s)
    SALVO_REQUIRES(q->lock);
/* Write mark m again, at the end of what s holds so far: s is its batch,
 * recorded again. The mark stays pending on that batch until it is over,
 * whoever owns it now (none: the write is harmless). */
void timing_rewrite_locked(struct queue *q, struct timing_mark *m, slot *s) SALVO_REQUIRES(q->lock);
/* Mark m, of the same batch as `as`, recorded again at the same point
 * (marks of withdrawn work, all at the batch's start): it takes as's
 * time, exactly, and writes nothing of its own. */
void timing_rewrite_same_locked(struct queue *q, struct timing_mark *m,
                                const struct timing_mark *as) SALVO_REQUIRES(q->lock);
/* p's latest record has no timestamp: why. Lets go of its mark. */
void timing_point_lose_locked(struct queue *q, timing_point *p, salvo_status why)
    SALVO_REQUIRES(q->lock);
/* The owner of p is going away: its mark (if any) is let go. */
void timing_point_release_locked(struct queue *q, timing_point *p) SALVO_REQUIRES(q->lock);
/* The batch with this serial completed successfully: read its marks (ran:
 * its commands ran; false for a refused batch that stood in empty, whose
 * marks are lost). Marks of batches over without completing are found
 * here too, and lost. */
void timing_batch_done_locked(struct queue *q, uint64_t serial, bool ran)
    SALVO_REQUIRES(q->lock);
/* Before a point's state is looked at: a PENDING point whose batch is
 * over without completing is lost; a RAN one's time is read (READY, or
 * LOST where the driver has none) and its mark freed. */
void timing_point_settle_locked(struct queue *q, timing_point *p) SALVO_REQUIRES(q->lock);
/* Device destroy: free the pools and the marks. */
void timing_free_locked(struct queue *q) SALVO_REQUIRES(q->lock);

#endif
