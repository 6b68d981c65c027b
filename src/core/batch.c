#include "core/batch.h"
#include "base/inline.h"

#include <string.h>

#include "base/alloc.h"

/* Entries start on this boundary so their binds (with 64-bit fields) are
 * aligned. */
#define ENTRY_ALIGN 8u

void batch_log_init(batch_log *log, const salvo_allocator *alloc)
{
    memset(log, 0, sizeof *log);
    log->alloc = alloc;
}

void batch_log_free(batch_log *log)
{
    salvo_mem_free(log->alloc, log->arena);
    log->arena = NULL;
    log->used = log->cap = log->start = 0;
}

void batch_log_clear(batch_log *log)
{
    log->used = log->start = 0;
    log->broken = false;
}

/* c's entry at the end of the log, whose arena has room for its need
 * bytes. */
static inline void put(batch_log *log, const command *c, size_t need)
{
    batch_entry *e = (batch_entry *)(log->arena + log->used);
    log->used += need;
    *e = (batch_entry){
        .kind = c->kind,
        .object = c->object,
        .groups = {c->groups[0], c->groups[1], c->groups[2]},
        .bind_count = c->bind_count,
        .push_size = c->push_size,
        .size = (uint32_t)need,
    };
    /* One by one: a launch has a few, which a call to memcpy would cost
     * more than. */
    accel_bind *binds = (accel_bind *)(e + 1);
    for (uint32_t i = 0; i < c->bind_count; i++)
        binds[i] = c->binds[i];
    if (c->push_size)
        memcpy(binds + c->bind_count, c->push, c->push_size);
}

/* The arena doubled until need more bytes fit, then c put there; where
 * memory runs out, the log marked broken instead. Out of the append's
 * way (not inlined, so that the append saves no registers for it): a
 * steady stream never grows. */
static SALVO_NOINLINE void grow_and_put(batch_log *log, const command *c, size_t need)
{
    size_t cap = log->cap ? log->cap : 4096;
    while (cap < log->used + need)
        cap *= 2;
    unsigned char *grown = salvo_mem_alloc(log->alloc, cap);
    if (!grown) {
        log->broken = true;
        return;
    }
    if (log->used)
        memcpy(grown, log->arena, log->used);
    salvo_mem_free(log->alloc, log->arena);
    log->arena = grown;
    log->cap = cap;
    put(log, c, need);
}

void batch_log_append(batch_log *log, const command *c)
{
    if (log->broken)
        return;
    size_t need = sizeof(batch_entry) + c->bind_count * sizeof(accel_bind) + c->push_size;
    need = (need + ENTRY_ALIGN - 1) / ENTRY_ALIGN * ENTRY_ALIGN;
    if (log->used + need > log->cap)
        grow_and_put(log, c, need);
    else
        put(log, c, need);
}

void batch_log_append_mark(batch_log *log, const void *mark)
{
    command c = {.kind = COMMAND_MARK, .push = &mark, .push_size = (uint32_t)sizeof mark};
    batch_log_append(log, &c);
}

const batch_entry *batch_log_at(const batch_log *log, size_t offset)
{
    return offset < log->used ? (const batch_entry *)(log->arena + offset) : NULL;
}

bool batch_log_has_mark(const batch_log *log, size_t offset, const void *mark)
{
    for (const batch_entry *e; (e = batch_log_at(log, offset)); offset += e->size)
        if (e->kind == COMMAND_MARK && batch_entry_mark(e) == mark)
            return true;
    return false;
}
