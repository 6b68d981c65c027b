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
#include "core/command.h"

/* One command, as recorded: its kind and object, then its ranges and
 * payload bytes copied in after the header. */
typedef struct batch_entry {
    command_kind kind;
    const void *object;
    uint32_t groups[3];
    uint32_t bind_count;
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
/* Append c (its ranges and payload copied); on failure to grow, mark the
 * log broken. */
void batch_log_append(batch_log *log, const command *c);
/* An event's timestamp written here (the timing mark), so that a cancel
 * that records the batch again writes it again. */
void batch_log_append_mark(batch_log *log, const void *mark);

/* The entry at offset (NULL at the end), and its parts. */
const batch_entry *batch_log_at(const batch_log *log, size_t offset);
/* Whether an entry from offset on writes the timing mark `mark`. */
bool batch_log_has_mark(const batch_log *log, size_t offset, const void *mark);
static inline const accel_bind *batch_entry_binds(const batch_entry *e)
{
    return (const accel_bind *)(e + 1);
}
static inline const void *batch_entry_push(const batch_entry *e)
{
    return (const unsigned char *)(batch_entry_binds(e) + e->bind_count);
}
/* The command an entry holds (pointing into the entry). */
static inline command batch_entry_command(const batch_entry *e)
{
    return (command){.kind = e->kind,
                     .object = e->object,
                     .groups = {e->groups[0], e->groups[1], e->groups[2]},
                     .binds = batch_entry_binds(e),
                     .bind_count = e->bind_count,
                     .push = batch_entry_push(e),
                     .push_size = e->push_size};
}
/* The timing mark of a mark entry. */
static inline void *batch_entry_mark(const batch_entry *e)
{
    void *m;
    memcpy(&m, batch_entry_push(e), sizeof m);
    return m;
}

#endif
