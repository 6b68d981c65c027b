/*
 * The stream engine: one in-order stream of work on a queue. It owns its
 * recorder (where its commands go: its batches, or a capture's recorder
 * while it is in one) and the one entry of every command
 * (stream_command_locked), a ring of slots (record one batch while the
 * others run), the batch policy (a first batch of first_batch launches
 * after every synchronisation point, doubling to batch_size; a cap on
 * workgroups per batch), the hazard sets that decide where barriers go,
 * the batch log that lets an event cancel withdraw work, the waits the
 * next batch starts with, and the failure kept for the stream's next
 * synchronize. When a batch goes to the device, and the walks over all
 * streams, are the scheduler's (core/scheduler.h).
 *
 * Memory: the engine is the FIRST member of whatever the caller allocates
 * for a stream, through the queue's allocator, and is freed by freeing the
 * engine's address. Its lifetime is one count (refs): the user's handle,
 * each capture it is in, and its work (while a batch of it is active or a
 * thread waits on one). It is freed at one place, stream_let_go_locked,
 * when the count reaches zero (the device's end frees what is left).
 *
 * Every function named _locked runs under the queue's lock.
 */
#ifndef SALVO_CORE_STREAM_ENGINE_H
#define SALVO_CORE_STREAM_ENGINE_H

#include "core/ahead.h"
#include "core/batch.h"
#include "core/command.h"
#include "core/hazard.h"
#include "core/queue.h"
#include "core/reflect.h"

#include <string.h>

/* Where a stream's commands go instead of its batch: a capture. fn(ctx,
 * c, holds) appends c (or refuses it: its status is the call's) and keeps
 * alive what holds names. Called under the queue's lock. */
typedef salvo_status (*stream_recorder_fn)(void *ctx, const command *c, const void *holds);

/* A stream's timeline, apart from the stream so that it can outlive it
 * in the retire queue (allocated with the stream: freeing needs no
 * memory). */
struct stream_timeline {
    retire_entry release;
    queue *q;
    accel_timeline *t;
};

struct stream_engine {
    queue *q;
    stream_engine *next, *prev; /* [lock] */
    slot slots[STREAM_SLOTS];   /* states [lock] */
    uint32_t cur;               /* [lock] index of the slot recorded next */
    slot *open;                 /* [lock] the slot recording, or NULL */
    uint32_t batch_size;
    uint32_t first_batch;  /* min(desc's or FIRST_BATCH, batch_size) */
    uint32_t batch_limit;  /* [lock] launches the open batch may take: grows from
                              FIRST_BATCH to batch_size after each sync point */
    uint64_t batch_groups; /* [lock] workgroups recorded in the open batch */
    /* The first failure found by someone other than this stream's own wait
     * [lock]; given to the stream's next synchronize. */
    salvo_status deferred;
    char deferred_msg[SALVO_ERROR_MAX];
    /* The user let go of the handle. Set without the lock where the
     * destroy found it busy: the next drain point takes the destroy in
     * (stream_settle_locked). Not a lifetime: refs is. */
    _Atomic bool destroyed;
    /* [lock] The count that keeps the stream: 1 for the handle (until the
     * destroy is taken in), 1 for each capture it is in, 1 for its work
     * while busy. Freed where it reaches zero. */
    uint32_t refs;
    bool handle_held; /* [lock] refs counts the user's handle */
    /* [lock] refs counts its work: a batch of it began, and the stream was
     * not seen since with every slot inactive and unwaited
     * (stream_settle_locked looks). */
    bool busy;
    uint64_t last_serial;   /* [lock] serial of the last batch submitted */
    uint32_t last_queue;    /* [lock] the queue it went to */
    /* [lock] Since its last submission the stream was ordered after
     * another stream's batch by queue order alone (stream_wait_batch_locked):
     * the end of last_serial does not cover that batch; the end of the
     * stream's next batch will (stream_submit_covering_locked: host calls
     * and synchronize; its _nowait form: query; an event record opens
     * one). */
    bool queue_ordered;
    hazard_set hazards;     /* [lock] ranges touched since the last barrier */
    bool copied;            /* [lock] a copy was recorded since the last barrier */
    /* [lock] Ranges dispatches touched since the last barrier that also
     * covered the transfer stage: a compute-only barrier orders them for
     * later dispatches, not for a copy. Full: every copy gets a barrier. */
    hazard_set compute_unordered;
    bool compute_overflow;
    /* [lock] Work that reaches memory through buffer addresses was
     * recorded since the last full barrier: whatever comes next waits for
     * it with one. */
    bool address_fence;
    batch_log log;        /* [lock] what the open batch holds, for cancel */
    /* [lock] A launch that repeats the one before it, alone in its batch,
     * is submitted as recorded ahead (core/ahead.h). */
    ahead_launch ahead;
    uint32_t number;      /* [lock] 1, 2, ... by creation: its threads in a trace */
    uint32_t hwq;         /* the hardware queue its batches go to */
    /* Where streams have queues of their own: a timeline each batch
     * signals with its serial when it completes, which other streams' waits
     * (events) name. Freed through the retire queue, once no batch that
     * may wait on it is left. NULL on one queue. */
    struct stream_timeline *timeline;
    trace_stream *trace;  /* [lock] its trace records from when it was first traced, or NULL */
    /* [lock] Where its commands go instead of its batch (a capture it is
     * in), or NULL: chosen once, when that begins, not at every command. */
    stream_recorder_fn recorder;
    void *recorder_ctx;
};

/* Make the slots of a zeroed engine (no lock needed), then link it into
 * the queue (takes the lock). batch_size 0: default; first_batch 0:
 * FIRST_BATCH; high_priority: on the queue's high-priority hardware queue
 * where it has one. On failure nothing is left allocated. */
salvo_status stream_engine_init(stream_engine *st, queue *q, uint32_t batch_size,
                                uint32_t first_batch, bool high_priority) SALVO_EXCLUDES(q->lock);
/* The free path: try-lock only, submit nothing. The handle's reference
 * goes now, or (the lock busy) at the next drain point; work left is
 * finished, and the stream freed, by later drain points. */
void stream_engine_destroy(stream_engine *st);
/* One more reference (a capture the stream is in). */
void stream_hold_locked(stream_engine *st) SALVO_REQUIRES(st->q->lock);
/* Let go of one reference; the last one frees the stream (the one place
 * a stream is freed while the device lives). True when it was freed: the
 * caller advances the retire clock (its timeline's release). */
bool stream_let_go_locked(stream_engine *st) SALVO_REQUIRES(st->q->lock);
/* Take in what st's references no longer stand for: a destroy made
 * without the lock (the handle's), work that is over and that no thread
 * waits on (the work's). True when st was freed. */
bool stream_settle_locked(stream_engine *st) SALVO_REQUIRES(st->q->lock);
/* Whether st has no open batch and no active one. */
bool stream_idle_locked(const stream_engine *st) SALVO_REQUIRES(st->q->lock);
/* Free st: out of the queue's list, its timeline's release queued (its
 * count reached zero, or the device's end, its work settled). */
void stream_free_locked(stream_engine *st) SALVO_REQUIRES(st->q->lock);

/* The barrier every batch opens with, over everything before it. */
#define STREAM_BATCH_LEAD ACCEL_BARRIER_WORK

/* Open a batch on st if none is (waiting for the ring slot if needed;
 * SALVO_ERROR_TIMEOUT when that wait expired: nothing opened), on st's
 * hardware queue. */
salvo_status stream_open_locked(stream_engine *st) SALVO_REQUIRES(st->q->lock);
/* The same, on the copy queue when copy is true and the queue has one
 * (else on st's). A batch that goes to another queue than st's previous
 * one waits for that one on the device (st's timeline): a stream stays in
 * order across its queues. */
salvo_status stream_open_on_locked(stream_engine *st, bool copy) SALVO_REQUIRES(st->q->lock);
/* Submit st's open batch so that the end of its last batch (last_serial)
 * is the end of everything st is ordered after, other streams' batches it
 * waited for included: where st follows one by queue order alone and has
 * no batch to submit, an empty one goes (it may wait for a free slot, as
 * stream_open_locked). For what must run after all of that on the host (a
 * host call). */
salvo_status stream_submit_covering_locked(stream_engine *st) SALVO_REQUIRES(st->q->lock);
/* The same for a caller that must not wait (a query), failures kept for
 * st (report false). Where the empty batch cannot go without waiting (for
 * its slot: st is not idle then) or could not be opened, nothing goes and
 * st->queue_ordered stays set. */
void stream_submit_covering_nowait_locked(stream_engine *st) SALVO_REQUIRES(st->q->lock);
/* Make the next launches of st wait for w on the device: the launches
 * already recorded are submitted first, so only later ones wait. Opens
 * the next batch, which may wait for a free slot (SALVO_ERROR_TIMEOUT:
 * nothing registered). */
salvo_status stream_add_wait_locked(stream_engine *st, const slot_dep *w)
    SALVO_REQUIRES(st->q->lock);
/* Make st's next launches wait on the device for the batch with this
 * serial of stream owner (another stream's, still active): through its
 * timeline where the two are on different queues, else by submitting
 * that batch first (one queue runs in order and every batch opens with a
 * barrier over what came before). Never waits itself. */
salvo_status stream_wait_batch_locked(stream_engine *st, stream_engine *owner, uint64_t serial)
    SALVO_REQUIRES(st->q->lock);
/* Where st's open batch is a replay or a launch recorded ahead
 * (slot.direct, core/ahead.h): record it into the batch after all (from
 * its log, as it was), so that more
 * can be recorded after it. On failure as stream_withdraw_locked's mend:
 * the batch dropped, the failure kept for the stream and returned. */
salvo_status stream_undirect_locked(stream_engine *st) SALVO_REQUIRES(st->q->lock);
/* Withdraw the launches of st's open batch logged before offset: record
 * the batch again with only the ones after. A failure withdraws nothing
 * (or, where even that cannot be recorded, drops the batch and keeps the
 * failure for the stream). */
salvo_status stream_withdraw_locked(stream_engine *st, size_t offset) SALVO_REQUIRES(st->q->lock);
/* Whether st's open batch logs work (not only event timestamps) between
 * the last withdrawal and offset; for an offset inside what was withdrawn,
 * before it among that. */
bool stream_work_before_locked(const stream_engine *st, size_t offset) SALVO_REQUIRES(st->q->lock);
/* Keep err (and this thread's message) as st's deferred error, first
 * wins. Inline: the queue keeps a failure its waits and pump find for the
 * stream, and calls no function of the stream's. */
static inline void stream_defer_locked(stream_engine *st, salvo_status err)
    SALVO_REQUIRES(st->q->lock)
{
    if (err >= 0 || st->deferred != SALVO_OK)
        return;
    st->deferred = err;
    memcpy(st->deferred_msg, salvo_last_error(), sizeof st->deferred_msg);
    st->deferred_msg[sizeof st->deferred_msg - 1] = '\0';
}

/* What a call adds to the command it passes (stream_command_locked). */
typedef struct stream_call {
    uint64_t bytes; /* counted in transfer_bytes */
    /* A copy or fill with an end in host memory: a batch it opens goes on
     * the copy queue, where there is one (a dispatch then submits that
     * batch and opens the next on st's queue). */
    bool host_side;
    const void *holds; /* what a capture keeps alive for it: the recorder's to read */
} stream_call;

/* From now on st's commands go to fn(ctx, ...); fn NULL: to its batches
 * again. Set when a capture takes the stream in, cleared when it ends. */
void stream_set_recorder_locked(stream_engine *st, stream_recorder_fn fn, void *ctx)
    SALVO_REQUIRES(st->q->lock);

/* The one entry of every command a call makes on st (all kinds but a
 * graph replay, stream_graph_locked, and an event's mark): to st's
 * recorder where one is set, else into a batch (on the copy queue for a
 * copy or fill with call->host_side, else on st's own queue; a command
 * whose recording takes a descriptor set, command_takes_set, that finds
 * the pool full submits the batch and goes into the next). Every command
 * recorded then passes the batch policy. *serial is the batch it went
 * into (which may be submitted already), 0 where none (a capture). */
salvo_status stream_command_locked(stream_engine *st, const command *c, const stream_call *call,
                                   uint64_t *serial) SALVO_REQUIRES(st->q->lock);
/* Submit and wait for every batch of st; the first failure (a kept one
 * first), its message in msg. *expired: a wait ran into the fence timeout
 * (whatever the status says: a kept failure outranks SALVO_TIMEOUT), the
 * work still going. */
salvo_status stream_synchronize_locked(stream_engine *st, char msg[SALVO_ERROR_MAX],
                                       bool *expired) SALVO_REQUIRES(st->q->lock);

/* While the queue traces: give st its trace records (once) and name it in
 * the trace. */
void stream_trace_attach_locked(stream_engine *st) SALVO_REQUIRES(st->q->lock);
/* st's batch in slot s was seen complete: write its events (before the
 * retire clock advances: the names it writes live until then). */
void stream_trace_retired_locked(stream_engine *st, slot *s) SALVO_REQUIRES(st->q->lock);

static inline uint32_t slot_index(const stream_engine *st, const slot *s)
{
    return (uint32_t)(s - st->slots);
}

#endif
