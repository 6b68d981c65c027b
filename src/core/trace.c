/* Traces: the Trace Event JSON writer and the per-batch recording. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "core/trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"

/* ------------------------------------------------------------------ */
/* The writer                                                          */
/* ------------------------------------------------------------------ */

enum {
    WRITER_BUFFER = 64 * 1024
};

/* What closes the file; written at each flush and overwritten after. */
static const char TAIL[] = "\n]}\n";

struct trace_writer {
    FILE *f;
    const salvo_allocator *alloc;
    uint64_t epoch_ns;  /* ts 0 */
    bool any;           /* an event was written: the next one needs a comma */
    bool seekable;      /* the tail can be written and stepped back over */
    bool tail_written;  /* the file ends with TAIL right now */
    bool failed;        /* a write failed: nothing more is written */
    char buffer[WRITER_BUFFER];
};

uint64_t trace_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Length of the UTF-8 sequence at s (1..4), or 0 when it is not one. */
static size_t utf8_length(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        min = 0x10000;
    } else {
        return 0;
    }
    uint32_t cp = c & (0x7Fu >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

size_t trace_escape(const char *s, char *buf, size_t size)
{
    size_t used = 0;
    if (size == 0)
        return 0;
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        char piece[8];
        size_t len;
        size_t step = 1;
        unsigned c = *p;
        if (c == '"' || c == '\\') {
            piece[0] = '\\';
            piece[1] = (char)c;
            len = 2;
        } else if (c < 0x20) {
            len = (size_t)snprintf(piece, sizeof piece, "\\u%04x", c);
        } else if (c < 0x80) {
            piece[0] = (char)c;
            len = 1;
        } else if ((step = utf8_length(p)) != 0) {
            memcpy(piece, p, step);
            len = step;
        } else {
            memcpy(piece, "\\ufffd", 6); /* not UTF-8: the replacement character */
            len = 6;
            step = 1;
        }
        if (used + len >= size)
            break;
        memcpy(buf + used, piece, len);
        used += len;
        p += step;
    }
    buf[used] = '\0';
    return used;
}

trace_writer *trace_writer_open(const salvo_allocator *alloc, const char *path, bool *no_memory,
                                char *reason, size_t reason_size)
{
    *no_memory = false;
    trace_writer *w = salvo_mem_calloc(alloc, 1, sizeof *w);
    if (!w) {
        *no_memory = true;
        snprintf(reason, reason_size, "out of host memory");
        return NULL;
    }
    w->alloc = alloc;
    w->f = fopen(path, "w");
    if (!w->f) {
        snprintf(reason, reason_size, "cannot create '%s': %s", path, strerror(errno));
        salvo_mem_free(alloc, w);
        return NULL;
    }
    setvbuf(w->f, w->buffer, _IOFBF, sizeof w->buffer);
    /* A pipe or a terminal cannot take the tail back: it gets it at close. */
    w->seekable = ftell(w->f) >= 0;
    w->epoch_ns = trace_now_ns();
    if (fputs("{\"traceEvents\":[", w->f) < 0)
        w->failed = true;
    return w;
}

/* Step back over the tail a flush left, so events continue the array. */
static void untail(trace_writer *w)
{
    if (!w->tail_written)
        return;
    w->tail_written = false;
    if (fseek(w->f, -(long)(sizeof TAIL - 1), SEEK_CUR) != 0)
        w->failed = true;
}

void trace_writer_flush(trace_writer *w)
{
    if (!w || w->failed)
        return;
    if (w->seekable && !w->tail_written) {
        if (fputs(TAIL, w->f) < 0)
            w->failed = true;
        w->tail_written = true;
    }
    if (fflush(w->f) != 0)
        w->failed = true;
}

bool trace_writer_close(trace_writer *w)
{
    if (!w)
        return true;
    if (!w->failed && !w->tail_written && fputs(TAIL, w->f) < 0)
        w->failed = true;
    if (fclose(w->f) != 0)
        w->failed = true;
    bool ok = !w->failed;
    salvo_mem_free(w->alloc, w);
    return ok;
}

/* ts in microseconds with nanosecond digits, signed, locale-free. */
static void put_us(trace_writer *w, int64_t ns)
{
    const char *sign = ns < 0 ? "-" : "";
    uint64_t m = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    fprintf(w->f, "%s%" PRIu64 ".%03u", sign, m / 1000, (unsigned)(m % 1000));
}

static void begin_event(trace_writer *w)
{
    untail(w);
    fputs(w->any ? ",\n" : "\n", w->f);
    w->any = true;
}

void trace_write_complete(trace_writer *w, const trace_event *e)
{
    if (!w || w->failed)
        return;
    char name[3 * SALVO_NAME_MAX];
    trace_escape(e->name, name, sizeof name);
    begin_event(w);
    fprintf(w->f, "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":",
            name, e->cat, e->pid, e->tid);
    put_us(w, e->ts_ns - (int64_t)w->epoch_ns);
    fputs(",\"dur\":", w->f);
    put_us(w, e->dur_ns);
    fputs(",\"args\":{", w->f);
    for (int i = 0; i < 2 && e->args[i].name; i++)
        fprintf(w->f, "%s\"%s\":%" PRId64, i ? "," : "", e->args[i].name, e->args[i].value);
    if (fputs("}}", w->f) < 0)
        w->failed = true;
}

void trace_write_name(trace_writer *w, uint32_t pid, uint32_t tid, const char *name)
{
    if (!w || w->failed)
        return;
    char escaped[3 * SALVO_NAME_MAX];
    trace_escape(name, escaped, sizeof escaped);
    begin_event(w);
    if (fprintf(w->f,
                "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":\"%s\"}}",
                tid ? "thread_name" : "process_name", pid, tid, escaped) < 0)
        w->failed = true;
}

/* ------------------------------------------------------------------ */
/* The session                                                         */
/* ------------------------------------------------------------------ */

salvo_status trace_session_open(const salvo_allocator *alloc, const char *path,
                                const accel_caps *caps, const char *device_name,
                                trace_session **out, char *reason, size_t reason_size)
{
    *out = NULL;
    trace_session *ses = salvo_mem_calloc(alloc, 1, sizeof *ses);
    if (!ses) {
        snprintf(reason, reason_size, "out of host memory");
        return SALVO_ERROR_OUT_OF_HOST_MEMORY;
    }
    static _Atomic uint64_t next_id = 1;
    ses->id = atomic_fetch_add(&next_id, 1);
    ses->alloc = alloc;
    bool no_memory = false;
    ses->w = trace_writer_open(alloc, path, &no_memory, reason, reason_size);
    if (!ses->w) {
        salvo_mem_free(alloc, ses);
        return no_memory ? SALVO_ERROR_OUT_OF_HOST_MEMORY : SALVO_ERROR_INVALID_ARGUMENT;
    }
    ses->period_ns = caps->timestamp_period_ns > 0 ? caps->timestamp_period_ns : 1.0;
    ses->valid_bits = caps->timestamp_valid_bits ? caps->timestamp_valid_bits : 64;
    char name[SALVO_NAME_MAX + 32];
    snprintf(name, sizeof name, "salvo host (%s)", device_name);
    trace_write_name(ses->w, TRACE_HOST_PID, 0, name);
    snprintf(name, sizeof name, "salvo GPU (%s)", device_name);
    trace_write_name(ses->w, TRACE_GPU_PID, 0, name);
    trace_writer_flush(ses->w);
    *out = ses;
    return SALVO_OK;
}

bool trace_session_close(trace_session *ses)
{
    if (!ses)
        return true;
    bool ok = trace_writer_close(ses->w);
    salvo_mem_free(ses->alloc, ses);
    return ok;
}

int64_t trace_ticks_delta(uint64_t a, uint64_t b, uint32_t valid_bits)
{
    uint64_t d = b - a;
    if (valid_bits >= 64)
        return (int64_t)d;
    uint64_t range = 1ull << valid_bits;
    d &= range - 1;
    /* Past half the range, b is behind a. */
    return d >= range / 2 ? (int64_t)d - (int64_t)range : (int64_t)d;
}

/* Host nanoseconds of a batch that started at `ticks` and whose submit
 * returned at submitted_ns: the first batch sets the offset, a batch that
 * would start before its submit returned raises it (see Clocks in
 * trace.h). */
static int64_t batch_start_ns(trace_session *ses, uint64_t ticks, uint64_t submitted_ns)
{
    if (!ses->aligned) {
        ses->aligned = true;
        ses->origin_ticks = ses->last_ticks = ticks;
        ses->origin_ns = (int64_t)submitted_ns;
        ses->last_rel = 0;
    }
    int64_t rel = ses->last_rel + trace_ticks_delta(ses->last_ticks, ticks, ses->valid_bits);
    ses->last_ticks = ticks;
    ses->last_rel = rel;
    int64_t ns = ses->origin_ns + (int64_t)((double)rel * ses->period_ns);
    if (ns < (int64_t)submitted_ns) {
        ses->origin_ns += (int64_t)submitted_ns - ns;
        ns = (int64_t)submitted_ns;
    }
    return ns;
}

static int64_t ticks_ns(const trace_session *ses, uint64_t from, uint64_t to)
{
    return (int64_t)((double)trace_ticks_delta(from, to, ses->valid_bits) * ses->period_ns);
}

/* ------------------------------------------------------------------ */
/* Streams                                                             */
/* ------------------------------------------------------------------ */

void trace_stream_destroy(trace_stream *t, const slot_env *env)
{
    if (!t)
        return;
    for (uint32_t i = 0; t->batches && i < t->slot_count; i++) {
        trace_batch *b = &t->batches[i];
        if (b->pool)
            env->acc->vt->querypool_destroy(env->acc->self, env->dev, b->pool);
        salvo_mem_free(t->alloc, b->host_ns);
        salvo_mem_free(t->alloc, b->host_dur_ns);
        salvo_mem_free(t->alloc, (void *)b->names);
    }
    salvo_mem_free(t->alloc, t->batches);
    salvo_mem_free(t->alloc, t->ticks);
    salvo_mem_free(t->alloc, t);
}

trace_stream *trace_stream_create(const salvo_allocator *alloc, const slot_env *env,
                                  uint32_t slot_count, uint32_t batch_size, uint32_t id, bool *gpu)
{
    *gpu = false;
    trace_stream *t = salvo_mem_calloc(alloc, 1, sizeof *t);
    if (!t)
        return NULL;
    t->alloc = alloc;
    t->id = id;
    t->slot_count = slot_count;
    t->cap = batch_size < TRACE_MAX_LAUNCHES ? batch_size : TRACE_MAX_LAUNCHES;
    if (t->cap == 0)
        t->cap = 1;
    t->batches = salvo_mem_calloc(alloc, slot_count, sizeof *t->batches);
    t->ticks = salvo_mem_calloc(alloc, 2 * (size_t)t->cap + 2, sizeof *t->ticks);
    bool ok = t->batches && t->ticks;
    for (uint32_t i = 0; ok && i < slot_count; i++) {
        trace_batch *b = &t->batches[i];
        b->host_ns = salvo_mem_calloc(alloc, t->cap, sizeof *b->host_ns);
        b->host_dur_ns = salvo_mem_calloc(alloc, t->cap, sizeof *b->host_dur_ns);
        b->names = salvo_mem_calloc(alloc, t->cap, sizeof *b->names);
        ok = b->host_ns && b->host_dur_ns && b->names;
    }
    if (!ok) {
        trace_stream_destroy(t, env);
        return NULL;
    }
    /* A slot without a pool still traces its batches, host side. */
    const accel_vtable *vt = env->acc->vt;
    *gpu = vt->querypool_create != NULL;
    for (uint32_t i = 0; vt->querypool_create && i < slot_count; i++)
        if (vt->querypool_create(env->acc->self, env->dev, 2 * t->cap + 2,
                                 &t->batches[i].pool) != ACCEL_SUCCESS) {
            t->batches[i].pool = NULL;
            *gpu = false;
        }
    return t;
}

static trace_batch *traced_batch(trace_stream *t, uint32_t slot)
{
    if (!t || slot >= t->slot_count || !t->batches[slot].traced)
        return NULL;
    return &t->batches[slot];
}

bool trace_batch_traced(trace_stream *t, uint32_t slot)
{
    return traced_batch(t, slot) != NULL;
}

static void stamp(trace_stream *t, trace_batch *b, const slot_env *env, accel_cmd *cmd)
{
    const accel_vtable *vt = env->acc->vt;
    vt->cmd_querypool_reset(env->acc->self, env->dev, cmd, b->pool, 0, 2 * t->cap + 2);
    vt->cmd_timestamp(env->acc->self, env->dev, cmd, b->pool, 0, false);
}

void trace_batch_open(trace_stream *t, uint32_t slot, uint64_t serial, const trace_session *ses,
                      const slot_env *env, accel_cmd *cmd)
{
    if (!t || slot >= t->slot_count)
        return;
    trace_batch *b = &t->batches[slot];
    bool traced = ses != NULL;
    b->traced = traced;
    b->session = ses ? ses->id : 0;
    b->serial = serial;
    b->launches = 0;
    b->kept = 0;
    b->submit_ns = b->submit_dur_ns = 0;
    if (traced && b->pool)
        stamp(t, b, env, cmd);
}

void trace_batch_reopen(trace_stream *t, uint32_t slot, uint32_t withdrawn, const slot_env *env,
                        accel_cmd *cmd)
{
    trace_batch *b = traced_batch(t, slot);
    if (!b)
        return;
    uint32_t recorded = b->launches < t->cap ? b->launches : t->cap;
    uint32_t kept = withdrawn < recorded ? recorded - withdrawn : 0;
    if (kept) {
        memmove(b->host_ns, b->host_ns + withdrawn, kept * sizeof *b->host_ns);
        memmove(b->host_dur_ns, b->host_dur_ns + withdrawn, kept * sizeof *b->host_dur_ns);
        memmove((void *)b->names, b->names + withdrawn, kept * sizeof *b->names);
    }
    b->launches = 0;
    b->kept = kept;
    if (b->pool)
        stamp(t, b, env, cmd);
}

void trace_launch_mark(trace_stream *t, uint32_t slot, const slot_env *env, accel_cmd *cmd,
                       bool end)
{
    trace_batch *b = traced_batch(t, slot);
    if (!b || !b->pool || b->launches >= t->cap)
        return;
    env->acc->vt->cmd_timestamp(env->acc->self, env->dev, cmd, b->pool, 2 + 2 * b->launches + end,
                                end);
}

void trace_launch_unmark(trace_stream *t, uint32_t slot, const slot_env *env, accel_cmd *cmd)
{
    trace_batch *b = traced_batch(t, slot);
    if (!b || !b->pool || b->launches >= t->cap)
        return;
    env->acc->vt->cmd_querypool_reset(env->acc->self, env->dev, cmd, b->pool,
                                      2 + 2 * b->launches, 1);
}

/* A host record's duration that says it was written already (see
 * trace_launch_note); real ones stop short of it. */
#define HOST_WRITTEN UINT32_MAX

void trace_launch_note(trace_session *ses, trace_stream *t, uint32_t slot, const char *name,
                       uint64_t t0_ns)
{
    trace_batch *b = traced_batch(t, slot);
    if (!b)
        return;
    uint32_t i = b->launches++;
    uint64_t now = trace_now_ns();
    if (i < t->cap) {
        if (t0_ns == 0 && i < b->kept)
            return; /* re-recorded: its first record stands */
        /* Re-recorded past those: it was past the cap when first made, so
         * its host record was written then; only its GPU times are left. */
        b->host_ns[i] = t0_ns ? t0_ns : now;
        b->host_dur_ns[i] = t0_ns == 0 ? HOST_WRITTEN
                                       : (uint32_t)(now - t0_ns < UINT32_MAX ? now - t0_ns : 0);
        b->names[i] = name;
        return;
    }
    if (t0_ns == 0)
        return; /* re-recorded: written when first made */
    /* No room to keep it for the batch's end: on the host track now. */
    if (!ses || ses->id != b->session)
        return;
    trace_event e = {
        .name = name,
        .cat = "launch",
        .pid = TRACE_HOST_PID,
        .tid = t->id,
        .ts_ns = (int64_t)(t0_ns ? t0_ns : now),
        .dur_ns = (int64_t)(t0_ns ? now - t0_ns : 0),
        .args = {{"batch", (int64_t)b->serial}, {"launch", (int64_t)i}},
    };
    trace_write_complete(ses->w, &e);
    trace_writer_flush(ses->w);
    ses->launches++;
}

uint64_t trace_submit_begin(trace_stream *t, uint32_t slot, const slot_env *env, accel_cmd *cmd)
{
    trace_batch *b = traced_batch(t, slot);
    if (!b)
        return 0;
    if (b->pool)
        env->acc->vt->cmd_timestamp(env->acc->self, env->dev, cmd, b->pool, 1, true);
    return trace_now_ns();
}

void trace_submit_end(trace_stream *t, uint32_t slot, uint64_t t0_ns, bool ok)
{
    trace_batch *b = traced_batch(t, slot);
    if (!b)
        return;
    if (!ok) {
        b->traced = false; /* refused: none of it ran */
        return;
    }
    b->submit_ns = t0_ns;
    b->submit_dur_ns = trace_now_ns() - t0_ns;
}

void trace_batch_retire(trace_session *ses, trace_stream *t, uint32_t slot, const slot_env *env)
{
    trace_batch *b = traced_batch(t, slot);
    if (!b)
        return;
    b->traced = false;
    if (!ses || ses->id != b->session || !b->submit_ns)
        return;
    uint32_t n = b->launches < t->cap ? b->launches : t->cap;
    /* Host track: each launch kept for this moment, then the submit. */
    for (uint32_t i = 0; i < n; i++) {
        if (b->host_dur_ns[i] == HOST_WRITTEN)
            continue;
        ses->launches++;
        trace_event e = {
            .name = b->names[i],
            .cat = "launch",
            .pid = TRACE_HOST_PID,
            .tid = t->id,
            .ts_ns = (int64_t)b->host_ns[i],
            .dur_ns = b->host_dur_ns[i],
            .args = {{"batch", (int64_t)b->serial}, {"launch", (int64_t)i}},
        };
        trace_write_complete(ses->w, &e);
    }
    trace_event submit = {
        .name = "submit",
        .cat = "submit",
        .pid = TRACE_HOST_PID,
        .tid = t->id,
        .ts_ns = (int64_t)b->submit_ns,
        .dur_ns = (int64_t)b->submit_dur_ns,
        .args = {{"batch", (int64_t)b->serial}, {"launches", b->launches}},
    };
    trace_write_complete(ses->w, &submit);
    ses->batches++;

    /* GPU track: the batch, and in it each launch with GPU times. */
    const accel_vtable *vt = env->acc->vt;
    uint32_t queries = 2 + 2 * n;
    if (b->pool && vt->querypool_results(env->acc->self, env->dev, b->pool, 0, queries,
                                         t->ticks) == ACCEL_SUCCESS) {
        const uint64_t *q = t->ticks;
        int64_t start = batch_start_ns(ses, q[0], b->submit_ns + b->submit_dur_ns);
        trace_event batch = {
            .name = "batch",
            .cat = "batch",
            .pid = TRACE_GPU_PID,
            .tid = t->id,
            .ts_ns = start,
            .dur_ns = ticks_ns(ses, q[0], q[1]),
            .args = {{"batch", (int64_t)b->serial}, {"launches", b->launches}},
        };
        trace_write_complete(ses->w, &batch);
        for (uint32_t i = 0; i < n; i++) {
            trace_event e = {
                .name = b->names[i],
                .cat = "launch",
                .pid = TRACE_GPU_PID,
                .tid = t->id,
                .ts_ns = start + ticks_ns(ses, q[0], q[2 + 2 * i]),
                .dur_ns = ticks_ns(ses, q[2 + 2 * i], q[3 + 2 * i]),
                .args = {{"batch", (int64_t)b->serial}, {"launch", (int64_t)i}},
            };
            trace_write_complete(ses->w, &e);
        }
    }
    trace_writer_flush(ses->w);
}
