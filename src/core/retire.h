/*
 * The retire queue: frees deferred until the work that could use them has
 * completed.
 *
 * The clock is completed batches, not calls. Every batch takes a serial
 * from the device when it begins recording. A release queued when the
 * device's next serial is T is tagged T: every batch that could still name
 * the resource has a serial below T. The owner computes the floor (the
 * lowest serial still recording or in flight, or the next serial when none
 * is) at exactly one place, right after a fence was seen signalled, and
 * calls retire_run(floor): every entry with tag <= floor runs.
 *
 * Entries are intrusive (the released object carries its own), so queuing
 * a release allocates nothing and cannot fail.
 *
 * The retire queue solves lifetime only. Rewriting a descriptor that
 * pending work still reads is another hazard, not handled here.
 *
 * Locking: everything but retire_push_incoming runs under the owner's lock.
 * retire_push_incoming is lock-free (a free that could not take the lock
 * leaves its entry there); retire_collect moves those into the queue.
 */
#ifndef SALVO_CORE_RETIRE_H
#define SALVO_CORE_RETIRE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/diag.h"

typedef struct retire_entry retire_entry;

/* Run a release. abandoned: the device is lost and the work will never be
 * observed; the destructor still frees host memory and handles (Vulkan
 * keeps destroy commands working on a lost device) but must not wait. */
typedef void (*retire_fn)(retire_entry *e, bool abandoned);

struct retire_entry {
    retire_entry *next;
    uint64_t tag;
    uint64_t bytes; /* device bytes it frees, for the bounds and the stats */
    retire_fn fn;
};

typedef struct retire_queue {
    retire_entry *head; /* FIFO; tags are not necessarily sorted */
    retire_entry *tail;
    _Atomic(retire_entry *) incoming;
    /* Counters read without the lock by the stats and the bounds check. */
    _Atomic uint64_t count;
    _Atomic uint64_t bytes;
    _Atomic uint64_t run_total;
    _Atomic uint64_t abandoned_total;
    _Atomic bool closed; /* read by the lock-free push */
    const salvo_log_sink *log;
} retire_queue;

void retire_init(retire_queue *q, const salvo_log_sink *log);
/* Queue e with tag. On a closed queue e is dropped (not run) with a warning. */
void retire_push(retire_queue *q, retire_entry *e, uint64_t tag);
/* Lock-free push from any thread. */
void retire_push_incoming(retire_queue *q, retire_entry *e, uint64_t tag);
/* Move the lock-free pushes into the queue. True when it took any in:
 * the caller then runs what can run (retire_run), as a push under the lock
 * would have; an entry taken in and left there waits for the next drain
 * point, which may never come. */
bool retire_collect(retire_queue *q);
/* Run every entry with tag <= floor, including ones queued by the entries
 * run. Returns how many ran. */
uint64_t retire_run(retire_queue *q, uint64_t floor);
/* Run everything now (the caller guarantees the device is idle). */
uint64_t retire_drain(retire_queue *q);
/* Device loss: hand every entry to its destructor as abandoned. */
uint64_t retire_abandon(retire_queue *q);
/* No more releases: later pushes are dropped with a warning. */
void retire_close(retire_queue *q);

static inline uint64_t retire_pending(const retire_queue *q)
{
    return atomic_load_explicit(&q->count, memory_order_relaxed);
}

/* Whether lock-free pushes wait for retire_collect: a glance, which one
 * landing right after does not change (the next glance sees it). */
static inline bool retire_has_incoming(const retire_queue *q)
{
    return atomic_load_explicit(&q->incoming, memory_order_relaxed) != NULL;
}

#endif
