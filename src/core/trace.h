/*
 * Traces: batches and launches in the Trace Event JSON format that
 * Perfetto (ui.perfetto.dev) and chrome://tracing open.
 *
 * The file is {"traceEvents":[ ... ]}: "M" metadata events name the two
 * processes and their threads, "X" complete events carry "ts" and "dur" in
 * microseconds since the trace started. Two processes:
 *
 *   pid 1, "salvo host": a thread per stream (tid = the stream's number):
 *        one event per launch or copy (kernel name; from when the launch
 *        call had the device lock to when it was recorded) and one
 *        "submit" per batch;
 *   pid 2, "salvo GPU": a thread per stream: one "batch" event per batch
 *        (the device's start to end of its command buffer) and, nested in
 *        it, one event per launch (the device's start and end of it).
 *
 * Every event carries args "batch" (the device-wide batch serial) and, for
 * launches, "launch" (its index in the batch).
 *
 * How it is recorded. A stream that is traced owns a trace_stream: per
 * slot, arrays sized by its batch size (capped at TRACE_MAX_LAUNCHES) for
 * each launch's host time and kernel name, and a pool of 2 * cap + 2
 * timestamp queries: 0 and 1 are the batch's start and end, 2 + 2i and
 * 3 + 2i launch i's. All of it is allocated when the stream starts being
 * traced, so recording allocates nothing; a stream never traced has none
 * of it and pays one branch per hook. Launches past the cap are traced on
 * the host only, when they are recorded. When a batch is seen complete
 * (its fence signalled), trace_batch_retire reads its timestamps and
 * writes its events, to the trace that was open when the batch was opened
 * (a batch whose trace was stopped meanwhile is dropped).
 *
 * Clocks. Host times are CLOCK_MONOTONIC. GPU ticks are put on the host
 * clock with one offset per trace, taken from the first traced batch: its
 * GPU start is taken to be the host time its submit returned. Without
 * VK_EXT_calibrated_timestamps this is an approximation (the device may
 * start the batch later, behind earlier work, or a little before the
 * call returns, and the clocks may drift); it keeps GPU events in order
 * and their durations exact, not their absolute placement against host
 * events. So that no batch appears to start on the GPU before its submit
 * returned, a batch that would is placed there and the offset raised to
 * match, for it and every later batch (the offset only grows, towards
 * the tightest bound the submits give). Tick counts that wrap (fewer than
 * 64 valid bits) are unwrapped as long as consecutive batches start
 * within half a wrap of each other.
 *
 * Validity. Every group of events (a batch's, a stream's names, a launch
 * past the cap) ends with a flush that writes the closing brackets, which
 * the next events overwrite: a file that can seek is valid JSON between
 * groups, so a process that exits or dies without closing the trace
 * leaves a readable file, and nothing is left in the stdio buffer for the
 * exit to write after the brackets. The cost is a write per batch. Kernel
 * names are escaped (and bytes that are not UTF-8 replaced).
 *
 * Nothing here locks: the device's lock guards the session and every
 * trace_stream.
 */
#ifndef SALVO_CORE_TRACE_H
#define SALVO_CORE_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "accel/accel.h"
#include "core/slot.h"

enum {
    TRACE_MAX_LAUNCHES = 4096, /* launches per batch with GPU times */
    TRACE_HOST_PID = 1,
    TRACE_GPU_PID = 2
};

/* ------------------------------------------------------------------ */
/* The writer                                                          */
/* ------------------------------------------------------------------ */

typedef struct trace_writer trace_writer;

typedef struct trace_arg {
    const char *name; /* NULL: no argument */
    int64_t value;
} trace_arg;

typedef struct trace_event {
    const char *name;
    const char *cat;
    uint32_t pid, tid;
    int64_t ts_ns;  /* on the host clock (trace_now_ns) */
    int64_t dur_ns; /* a complete ("X") event's length */
    trace_arg args[2];
} trace_event;

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t trace_now_ns(void);

/* Create (or truncate) path and write the header; NULL with a reason on
 * failure (*no_memory: for lack of host memory). The stdio buffer comes
 * from alloc. */
trace_writer *trace_writer_open(const salvo_allocator *alloc, const char *path, bool *no_memory,
                                char *reason, size_t reason_size);
/* Flush, close and free; returns false when any write failed. NULL: true. */
bool trace_writer_close(trace_writer *w);
/* Write out what is buffered, ending the file with the closing brackets
 * (see Validity above). */
void trace_writer_flush(trace_writer *w);
/* A complete event. */
void trace_write_complete(trace_writer *w, const trace_event *e);
/* "M" events naming a process (tid 0) or a thread. */
void trace_write_name(trace_writer *w, uint32_t pid, uint32_t tid, const char *name);
/* Write s as a JSON string body (no quotes) into buf of size; returns the
 * length written (always NUL-terminated; truncated at a whole character). */
size_t trace_escape(const char *s, char *buf, size_t size);

/* ------------------------------------------------------------------ */
/* A trace of a device                                                 */
/* ------------------------------------------------------------------ */

typedef struct trace_session {
    uint64_t id; /* unique in the process: batches know which trace they are for */
    trace_writer *w;
    const salvo_allocator *alloc;
    double period_ns;    /* of a GPU tick */
    uint32_t valid_bits; /* of a GPU tick count */
    /* GPU to host: the first traced batch's start (raw ticks, host ns),
     * and the last batch start seen, unwrapped (ticks since the first). */
    bool aligned;
    uint64_t origin_ticks;
    int64_t origin_ns;
    uint64_t last_ticks;
    int64_t last_rel;
    uint64_t batches, launches; /* written so far */
} trace_session;

/* Open path and name the processes after device_name. On failure *out
 * is NULL and reason says why: SALVO_ERROR_OUT_OF_HOST_MEMORY, or
 * SALVO_ERROR_INVALID_ARGUMENT when the file cannot be created. */
salvo_status trace_session_open(const salvo_allocator *alloc, const char *path,
                                const accel_caps *caps, const char *device_name,
                                trace_session **out, char *reason, size_t reason_size);
/* Flush, close, free. Returns false when a write failed. NULL: true. */
bool trace_session_close(trace_session *ses);
/* b - a in ticks of valid_bits bits, as the shorter way round the wrap. */
int64_t trace_ticks_delta(uint64_t a, uint64_t b, uint32_t valid_bits);

/* ------------------------------------------------------------------ */
/* A stream's recording state                                          */
/* ------------------------------------------------------------------ */

typedef struct trace_batch {
    bool traced;      /* opened while tracing: its events will be written */
    uint64_t session; /* the id of that trace (to no other is it written) */
    uint64_t serial;
    uint32_t launches; /* recorded, past the cap included */
    uint32_t kept;     /* after a withdraw: host records already in place */
    uint64_t submit_ns, submit_dur_ns;
    uint64_t *host_ns;     /* [cap] when launch i's call had the lock */
    uint32_t *host_dur_ns; /* [cap] how long until it was recorded */
    const char **names;    /* [cap] its kernel's name (outlives the batch) */
    accel_querypool *pool; /* 2 * cap + 2 queries; NULL: no GPU times */
} trace_batch;

typedef struct trace_stream {
    uint32_t id;  /* the thread id in the trace */
    uint32_t cap; /* launches per batch with host records and GPU times */
    uint32_t slot_count;
    trace_batch *batches; /* [slot_count] */
    uint64_t *ticks;      /* [2 * cap + 2] scratch for reading a pool */
    const salvo_allocator *alloc;
} trace_stream;

/* Everything a stream of batch_size launches per batch needs, for
 * slot_count slots. NULL when out of host memory. A query pool that
 * cannot be made leaves that slot without GPU times (*gpu false). */
trace_stream *trace_stream_create(const salvo_allocator *alloc, const slot_env *env,
                                  uint32_t slot_count, uint32_t batch_size, uint32_t id,
                                  bool *gpu);
/* The pools must not be in use by pending work. NULL is a no-op. */
void trace_stream_destroy(trace_stream *t, const slot_env *env);

/* Whether the batch open in slot is traced (its queries stamped into its
 * command buffer). */
bool trace_batch_traced(trace_stream *t, uint32_t slot);
/* The hooks. t NULL (a stream never traced) or a batch not traced: no-ops. */
/* A batch opened in slot (recording into cmd): when ses is not NULL (the
 * device traces), reset its queries and stamp its start. */
void trace_batch_open(trace_stream *t, uint32_t slot, uint64_t serial, const trace_session *ses,
                      const slot_env *env, accel_cmd *cmd);
/* The open batch was recorded again without its first `withdrawn`
 * launches (an event cancel): keep the host records of the rest, and
 * stamp the start again. Re-recorded launches then call trace_launch_mark
 * and trace_launch_note(t0 0). */
void trace_batch_reopen(trace_stream *t, uint32_t slot, uint32_t withdrawn, const slot_env *env,
                        accel_cmd *cmd);
/* Around each dispatch or copy: end false just before, true just after. */
void trace_launch_mark(trace_stream *t, uint32_t slot, const slot_env *env, accel_cmd *cmd,
                       bool end);
/* The launch whose start was just marked was not recorded after all:
 * reset that query, so the next launch's start writes one that is. */
void trace_launch_unmark(trace_stream *t, uint32_t slot, const slot_env *env, accel_cmd *cmd);
/* A launch of kernel `name` was recorded; its call had the lock at t0_ns
 * (0: a re-recorded launch keeps its first record). A launch past the cap
 * is written now, to ses (NULL: tracing stopped, dropped). */
void trace_launch_note(trace_session *ses, trace_stream *t, uint32_t slot, const char *name,
                       uint64_t t0_ns);
/* Before the batch is submitted: stamp its end. Returns the time to give
 * trace_submit_end (0 when not traced). */
uint64_t trace_submit_begin(trace_stream *t, uint32_t slot, const slot_env *env, accel_cmd *cmd);
/* After the submit: ok false drops the batch from the trace. */
void trace_submit_end(trace_stream *t, uint32_t slot, uint64_t t0_ns, bool ok);
/* The batch in slot was seen complete (its fence signalled): read its
 * timestamps and write its events to ses (NULL, or another trace than the
 * one the batch was opened in: the batch is dropped). */
void trace_batch_retire(trace_session *ses, trace_stream *t, uint32_t slot, const slot_env *env);

#endif
