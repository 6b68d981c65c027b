#include "core/retire.h"

#include <stddef.h>

void retire_init(retire_queue *q, const salvo_log_sink *log)
{
    q->head = q->tail = NULL;
    atomic_init(&q->incoming, NULL);
    atomic_init(&q->count, 0);
    atomic_init(&q->bytes, 0);
    atomic_init(&q->run_total, 0);
    atomic_init(&q->abandoned_total, 0);
    atomic_init(&q->closed, false);
    q->log = log;
}

static void append(retire_queue *q, retire_entry *e)
{
    e->next = NULL;
    if (q->tail)
        q->tail->next = e;
    else
        q->head = e;
    q->tail = e;
}

static bool dropped_when_closed(retire_queue *q)
{
    if (!atomic_load(&q->closed))
        return false;
    SALVO_LOG(q->log, SALVO_LOG_WARNING,
              "release after the device was closed: dropped without running");
    return true;
}

void retire_push(retire_queue *q, retire_entry *e, uint64_t tag)
{
    if (dropped_when_closed(q))
        return;
    e->tag = tag;
    append(q, e);
    atomic_fetch_add_explicit(&q->count, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&q->bytes, e->bytes, memory_order_relaxed);
}

void retire_push_incoming(retire_queue *q, retire_entry *e, uint64_t tag)
{
    if (dropped_when_closed(q))
        return;
    e->tag = tag;
    /* Counted now so the stats and the bounds see it at once. */
    atomic_fetch_add_explicit(&q->count, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&q->bytes, e->bytes, memory_order_relaxed);
    retire_entry *old = atomic_load_explicit(&q->incoming, memory_order_relaxed);
    do {
        e->next = old;
    } while (!atomic_compare_exchange_weak_explicit(&q->incoming, &old, e, memory_order_release,
                                                    memory_order_relaxed));
}

bool retire_collect(retire_queue *q)
{
    retire_entry *list = atomic_exchange_explicit(&q->incoming, NULL, memory_order_acquire);
    bool took = list != NULL;
    /* The stack is newest first; reverse it to keep release order. */
    retire_entry *rev = NULL;
    while (list) {
        retire_entry *next = list->next;
        list->next = rev;
        rev = list;
        list = next;
    }
    while (rev) {
        retire_entry *next = rev->next;
        append(q, rev); /* already counted by retire_push_incoming */
        rev = next;
    }
    return took;
}

/* Unlink and run every entry accepted by pred; entries queued while running
 * land at the tail and are seen by the same walk. */
static uint64_t run_where(retire_queue *q, uint64_t floor, bool all, bool abandoned)
{
    uint64_t ran = 0;
    retire_collect(q);
    retire_entry *prev = NULL;
    retire_entry *e = q->head;
    while (e) {
        retire_entry *next = e->next;
        if (all || e->tag <= floor) {
            if (prev)
                prev->next = next;
            else
                q->head = next;
            if (q->tail == e)
                q->tail = prev;
            atomic_fetch_sub_explicit(&q->count, 1, memory_order_relaxed);
            atomic_fetch_sub_explicit(&q->bytes, e->bytes, memory_order_relaxed);
            e->next = NULL;
            e->fn(e, abandoned);
            ran++;
            /* The destructor may have queued more (to the tail, or to the
             * incoming stack): pick them up before reading next. */
            retire_collect(q);
            next = prev ? prev->next : q->head;
        } else {
            prev = e;
        }
        e = next;
    }
    if (abandoned)
        atomic_fetch_add_explicit(&q->abandoned_total, ran, memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&q->run_total, ran, memory_order_relaxed);
    return ran;
}

uint64_t retire_run(retire_queue *q, uint64_t floor)
{
    return run_where(q, floor, false, false);
}

uint64_t retire_drain(retire_queue *q)
{
    return run_where(q, 0, true, false);
}

uint64_t retire_abandon(retire_queue *q)
{
    return run_where(q, 0, true, true);
}

void retire_close(retire_queue *q)
{
    atomic_store(&q->closed, true);
}
