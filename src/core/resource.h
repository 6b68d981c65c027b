/*
 * The resource: the header every object the engine keeps alive begins
 * with (buffers, images, samplers, kernels, events, gates, graphs). It
 * holds what their lifetimes have in common:
 *
 * - kind: what the object is. An object is reached from its header only
 *   through a checked cast (resource_check, and the casts beside the
 *   public objects in api/internal.h), never by "the first member is".
 * - holds: the user's handle (1) plus each graph that uses it. The
 *   release goes to the retire queue when the last one lets go
 *   (resource_let_go), tagged after every batch that could still use it.
 * - release: the retire entry that frees it; its fn is the kind's own.
 * - last_use: the highest serial of a batch that used it (fetch-max), for
 *   host transfers that must wait for that work.
 * - live: membership in the owner's list of objects not yet released (the
 *   device's live ring, reclaimed at device destroy) [owner's lock].
 *
 * Holds and last use change without the lock; the rest is set once.
 */
#ifndef SALVO_CORE_RESOURCE_H
#define SALVO_CORE_RESOURCE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/check.h"
#include "core/queue.h"
#include "core/retire.h"

typedef enum resource_kind {
    RESOURCE_NONE = 0, /* never a live object's: a zeroed header */
    RESOURCE_BUFFER,
    RESOURCE_IMAGE,
    RESOURCE_SAMPLER,
    RESOURCE_KERNEL,
    RESOURCE_EVENT,
    RESOURCE_GATE,
    RESOURCE_GRAPH,
    RESOURCE_KIND_COUNT
} resource_kind;

typedef struct resource_link {
    struct resource_link *prev, *next;
} resource_link;

typedef struct resource {
    resource_kind kind;
    _Atomic uint32_t holds;
    _Atomic uint64_t last_use;
    retire_entry release;
    resource_link live; /* [owner's lock] NULL links: not in a list */
} resource;

/* "buffer", "image", ...; "not a resource" for anything else. */
const char *resource_kind_name(resource_kind kind);

/* A fresh header: kind, one hold (the user's handle), no use yet; release
 * runs fn, freeing bytes of device memory (for the bounds and the stats). */
void resource_init(resource *r, resource_kind kind, retire_fn fn, uint64_t bytes);

/* The header whose retire entry e is: a release function's way back. */
static inline resource *resource_of_release(retire_entry *e)
{
    return (resource *)((char *)e - offsetof(resource, release));
}

/* The header whose live link l is. */
static inline resource *resource_of_link(resource_link *l)
{
    return (resource *)((char *)l - offsetof(resource, live));
}

/* Abort (in checked builds) unless r is of kind want, naming both kinds;
 * elsewhere nothing. The library's own build decides, not its includer's. */
#ifdef SALVO_CHECKS
void resource_check_kind(const resource *r, resource_kind want);
#define resource_check(r, want) resource_check_kind((r), (want))
#else
#define resource_check(r, want) ((void)0)
#endif

/* One more hold (a graph that uses r). */
static inline void resource_hold(resource *r)
{
    atomic_fetch_add_explicit(&r->holds, 1, memory_order_relaxed);
}

/* Let go of one hold; the last one queues the release (the free path:
 * try-lock only, queue_release). */
void resource_let_go(resource *r, queue *q);
/* The same under the lock: the release is queued, tagged past every batch
 * begun so far; the caller advances the clock when it may run now. */
void resource_let_go_locked(resource *r, queue *q) SALVO_REQUIRES(q->lock);

/* Raise r's last use to serial. */
static inline void resource_note_use(resource *r, uint64_t serial)
{
    uint64_t old = atomic_load_explicit(&r->last_use, memory_order_relaxed);
    while (old < serial &&
           !atomic_compare_exchange_weak_explicit(&r->last_use, &old, serial,
                                                  memory_order_relaxed, memory_order_relaxed)) {
    }
}

static inline uint64_t resource_last_use(const resource *r)
{
    return atomic_load_explicit(&r->last_use, memory_order_relaxed);
}

/* Link r into the list whose sentinel is head; unlink it (a second unlink
 * does nothing). Under the owner's lock. */
void resource_link_into(resource_link *head, resource *r);
void resource_unlink(resource *r);

#endif
