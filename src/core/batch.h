/*
 * The batch log: what was recorded into a stream's open batch, kept so the
 * batch can be recorded again without some of its work (an event cancel
 * withdraws the launches before the event and keeps the ones after).
 *
 * Entries are packed into one arena that grows by doubling and is reused
 * from batch to batch, so a steady stream allocates nothing per launch.
 * When growing fails the log is marked broken: the batch still runs, only
 * cancelling inside it is refused.
 */
#ifndef SALVO_CORE_BATCH_H
#define SALVO_CORE_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "accel/accel.h"

typedef struct batch_entry {
    /* the launch's kernel, NULL for a copy, or (graph) the graph replayed */
    const void *kernel;
    bool graph; /* a graph replay: its push bytes hold the command buffers executed */
    bool native; /* commands of the program's own (batch_native_push in its push bytes) */
    bool mark;   /* an event's timestamp, no work: its timing mark in the push bytes */
    uint32_t groups[3];
    uint32_t bind_count; /* a copy: binds[0] source, binds[1] destination */
    uint32_t push_size;
    uint32_t size; /* bytes of the whole entry, header included */
    /* accel_bind binds[bind_count]; then push_size bytes */
} batch_entry;

typedef struct batch_log {
    unsigned char *arena;
    size_t used, cap;
    size_t start;  /* entries before this offset were withdrawn */
    bool broken;   /* an append failed since the batch opened */
    const salvo_allocator *alloc;
} batch_log;

void batch_log_init(batch_log *log, const salvo_allocator *alloc);
void batch_log_free(batch_log *log);
/* Forget every entry (a new batch). */
void batch_log_clear(batch_log *log);
/* Append one entry; on failure to grow, mark the log broken. */
void batch_log_append(batch_log *log, const void *kernel, const uint32_t groups[3],
                      const accel_bind *binds, uint32_t bind_count, const void *push,
                      uint32_t push_size);
/* Append a graph replay: the graph, and the reusable command buffers it
 * executed (count of them). */
/* Commands the program records itself: the ranges they touch, and the
 * push bytes the stream engine keeps to record them again. */
void batch_log_append_native(batch_log *log, const accel_bind *ranges, uint32_t count,
                             const void *push, uint32_t push_size);
void batch_log_append_graph(batch_log *log, const void *graph, accel_cmd *const *cmds,
                            uint32_t count);
/* An event's timestamp written here (the timing mark), so that a cancel
 * that records the batch again writes it again. */
void batch_log_append_mark(batch_log *log, const void *mark);

/* The entry at offset (NULL at the end), and its parts. */
const batch_entry *batch_log_at(const batch_log *log, size_t offset);
static inline const accel_bind *batch_entry_binds(const batch_entry *e)
{
    return (const accel_bind *)(e + 1);
}
static inline const void *batch_entry_push(const batch_entry *e)
{
    return (const unsigned char *)(batch_entry_binds(e) + e->bind_count);
}
/* The timing mark of a mark entry. */
static inline void *batch_entry_mark(const batch_entry *e)
{
    void *m;
    memcpy(&m, batch_entry_push(e), sizeof m);
    return m;
}

#endif
