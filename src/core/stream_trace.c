/* A stream's part of a trace (core/trace.c): its records, made when a
 * trace starts or the stream is created during one, and each completed
 * batch's times written as it retires. */
#include <stdio.h>

#include "core/stream_engine.h"

void stream_trace_attach_locked(stream_engine *st)
{
    queue *q = st->q;
    if (!q->trace)
        return;
    if (!st->trace) {
        bool gpu = false;
        st->trace = trace_stream_create(q->alloc, &q->env, STREAM_SLOTS, st->batch_size,
                                        st->number, &gpu);
        if (!st->trace) {
            SALVO_LOG(q->log, SALVO_LOG_WARNING,
                      "trace: out of host memory; stream %u is left out", st->number);
            return;
        }
        if (!gpu)
            SALVO_LOG(q->log, SALVO_LOG_WARNING,
                      "trace: no timestamp queries for stream %u; its GPU times are left out",
                      st->number);
    }
    char name[32];
    snprintf(name, sizeof name, "stream %u", st->number);
    trace_write_name(q->trace->w, TRACE_HOST_PID, st->number, name);
    trace_write_name(q->trace->w, TRACE_GPU_PID, st->number, name);
    trace_writer_flush(q->trace->w);
}

void stream_trace_retired_locked(stream_engine *st, slot *s)
{
    if (st->trace)
        trace_batch_retire(st->q->trace, st->trace, slot_index(st, s), &st->q->env);
}
