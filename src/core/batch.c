#include "core/batch.h"

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

void batch_log_append(batch_log *log, const void *kernel, const uint32_t groups[3],
                      const accel_bind *binds, uint32_t bind_count, const void *push,
                      uint32_t push_size)
{
    if (log->broken)
        return;
    size_t need = sizeof(batch_entry) + bind_count * sizeof(accel_bind) + push_size;
    need = (need + ENTRY_ALIGN - 1) / ENTRY_ALIGN * ENTRY_ALIGN;
    if (log->used + need > log->cap) {
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
    }
    batch_entry *e = (batch_entry *)(log->arena + log->used);
    *e = (batch_entry){
        .kernel = kernel,
        .groups = {groups[0], groups[1], groups[2]},
        .bind_count = bind_count,
        .push_size = push_size,
        .size = (uint32_t)need,
    };
    if (bind_count)
        memcpy((void *)batch_entry_binds(e), binds, bind_count * sizeof *binds);
    if (push_size)
        memcpy((void *)batch_entry_push(e), push, push_size);
    log->used += need;
}

void batch_log_append_graph(batch_log *log, const void *graph, accel_cmd *const *cmds,
                            uint32_t count)
{
    static const uint32_t none[3] = {0, 0, 0};
    size_t at = log->used;
    batch_log_append(log, graph, none, NULL, 0, cmds, count * (uint32_t)sizeof *cmds);
    if (!log->broken)
        ((batch_entry *)(log->arena + at))->graph = true;
}

void batch_log_append_native(batch_log *log, const accel_bind *ranges, uint32_t count,
                             const void *push, uint32_t push_size)
{
    static const uint32_t none[3] = {0, 0, 0};
    size_t at = log->used;
    batch_log_append(log, NULL, none, ranges, count, push, push_size);
    if (!log->broken)
        ((batch_entry *)(log->arena + at))->native = true;
}

void batch_log_append_mark(batch_log *log, const void *mark)
{
    static const uint32_t none[3] = {0, 0, 0};
    size_t at = log->used;
    batch_log_append(log, NULL, none, NULL, 0, &mark, (uint32_t)sizeof mark);
    if (!log->broken)
        ((batch_entry *)(log->arena + at))->mark = true;
}

const batch_entry *batch_log_at(const batch_log *log, size_t offset)
{
    return offset < log->used ? (const batch_entry *)(log->arena + offset) : NULL;
}
