/*
 * Traces (salvo_trace_start, $SALVO_TRACE) on the fake accelerator, whose
 * timestamps are a counter: a dispatch lasts FAKE_DISPATCH_TICKS + 1 ticks
 * between its two timestamps, a copy 1, at 1 ns a tick. Every file written
 * is read back with a strict JSON parser (support/trace_json.c).
 *
 * Every test ends with the device destroyed and checks that the fake has
 * no live handle left (query pools included) and saw no illegal use (a
 * timestamp written to a query not reset counts as one).
 */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv, getpid, fork, waitpid */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "api/internal.h"
#include "core/trace.h"
#include "support/fake_accel.h"
#include "support/trace_json.h"

#include "add.spv.h"

enum {
    BUF_BYTES = 1024
};

typedef struct env {
    fake_accel *f;
    salvo_device *dev;
    salvo_stream *st;
    salvo_kernel *k;
    salvo_buffer *buf;
    int warnings;
    int errors;
} env;

static void on_log(void *user, salvo_log_level level, const char *file, int line,
                   const char *message)
{
    (void)file;
    (void)line;
    (void)message;
    env *e = user;
    if (level == SALVO_LOG_WARNING)
        e->warnings++;
    if (level == SALVO_LOG_ERROR)
        e->errors++;
}

static void temp_path(char *buf, size_t size, const char *tag)
{
    snprintf(buf, size, "/tmp/salvo_unit_trace_%ld_%s.json", (long)getpid(), tag);
}

static salvo_kernel *make_kernel(salvo_device *dev, const char *name)
{
    salvo_kernel_desc kd = {.spirv = add_spv, .spirv_size = sizeof add_spv, .name = name};
    salvo_kernel *k = NULL;
    salvo_status r = salvo_kernel_create(dev, &kd, &k);
    if (r != SALVO_OK)
        fail_msg("kernel_create: %s: %s", salvo_status_string(r), salvo_last_error());
    return k;
}

static salvo_buffer *make_buffer(salvo_device *dev, uint64_t size)
{
    salvo_buffer *b = NULL;
    salvo_status r = salvo_buffer_create(dev, size, SALVO_DOMAIN_DEVICE, &b);
    if (r != SALVO_OK)
        fail_msg("buffer_create: %s: %s", salvo_status_string(r), salvo_last_error());
    return b;
}

/* A device on e->f (made here unless the test configured one), one
 * stream, the kernel "adder" and one buffer. */
static void open_env(env *e, const salvo_device_desc *desc)
{
    if (!e->f)
        e->f = fake_create();
    assert_non_null(e->f);
    salvo_device_desc d = desc ? *desc : (salvo_device_desc){0};
    d.log = on_log;
    d.log_user = e;
    salvo_status r = device_create_with_accel(&d, fake_accel_get(e->f), &e->dev);
    if (r != SALVO_OK)
        fail_msg("device_create_with_accel: %s: %s", salvo_status_string(r), salvo_last_error());
    assert_int_equal(salvo_stream_create(e->dev, NULL, &e->st), SALVO_OK);
    e->k = make_kernel(e->dev, "adder");
    e->buf = make_buffer(e->dev, BUF_BYTES);
}

static void close_env(env *e)
{
    salvo_buffer_destroy(e->buf);
    salvo_kernel_destroy(e->k);
    salvo_stream_destroy(e->st);
    salvo_device_destroy(e->dev);
    uint64_t live = fake_live_total(e->f);
    uint64_t illegal = fake_illegal_total(e->f);
    char last[256];
    snprintf(last, sizeof last, "%s", fake_illegal_last(e->f));
    fake_free(e->f);
    memset(e, 0, sizeof *e);
    if (illegal)
        fail_msg("%llu illegal use(s) of the accelerator; last: %s", (unsigned long long)illegal,
                 last);
    assert_int_equal(live, 0);
}

static salvo_status launch_on(salvo_stream *st, salvo_kernel *k, salvo_buffer *b)
{
    const uint32_t groups[3] = {1, 1, 1};
    const salvo_binding bind = {.binding = 0, .buffer = b};
    const uint32_t push[2] = {BUF_BYTES / 4, 1};
    return salvo_launch(st, k, groups, &bind, 1, push, sizeof push);
}

static void launch_ok(salvo_stream *st, salvo_kernel *k, salvo_buffer *b)
{
    salvo_status r = launch_on(st, k, b);
    if (r != SALVO_OK)
        fail_msg("launch: %s: %s", salvo_status_string(r), salvo_last_error());
}

static void load_ok(const char *path, tj_trace *t)
{
    if (!tj_load(path, t))
        fail_msg("%s is not a valid trace: %s", path, t->error);
}

static bool has_name(const tj_trace *t, const char *ph, int64_t pid, const char *name)
{
    for (size_t i = 0; i < t->count; i++)
        if (!strcmp(t->events[i].ph, ph) && t->events[i].pid == pid &&
            !strcmp(t->events[i].name, name))
            return true;
    return false;
}

/* The GPU batch event of a batch serial, or NULL. */
static const tj_event *gpu_batch(const tj_trace *t, int64_t serial)
{
    for (size_t i = 0; i < t->count; i++)
        if (t->events[i].pid == TRACE_GPU_PID && !strcmp(t->events[i].cat, "batch") &&
            t->events[i].batch == serial)
            return &t->events[i];
    return NULL;
}

/* Every GPU launch lies within its batch and lasts what the fake says. */
static void check_gpu_launches(const tj_trace *t)
{
    for (size_t i = 0; i < t->count; i++) {
        const tj_event *e = &t->events[i];
        if (e->pid != TRACE_GPU_PID || strcmp(e->cat, "launch") != 0)
            continue;
        const tj_event *b = gpu_batch(t, e->batch);
        if (!b)
            fail_msg("launch %lld of batch %lld: no batch event", (long long)e->launch,
                     (long long)e->batch);
        double want = strcmp(e->name, "(copy)") == 0 ? 0.001 : (FAKE_DISPATCH_TICKS + 1) / 1000.0;
        if (e->dur < want - 1e-9 || e->dur > want + 1e-9)
            fail_msg("launch '%s' lasts %.3f us, want %.3f", e->name, e->dur, want);
        if (e->ts < b->ts || e->ts + e->dur > b->ts + b->dur + 1e-9)
            fail_msg("launch %lld [%.3f, +%.3f] outside its batch [%.3f, +%.3f]",
                     (long long)e->launch, e->ts, e->dur, b->ts, b->dur);
    }
}

static const char *const SALVO_VARS[] = {
    "SALVO_BATCH",      "SALVO_FENCE_TIMEOUT_S", "SALVO_RELEASE_MAX_COUNT",
    "SALVO_RELEASE_MAX_BYTES", "SALVO_DEVICE",   "SALVO_VALIDATION",
    "SALVO_FAULT",      "SALVO_TRACE",           "SALVO_SPIN_US",
};

static int clear_salvo_env(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof SALVO_VARS / sizeof SALVO_VARS[0]; i++)
        unsetenv(SALVO_VARS[i]);
    return 0;
}

/* ------------------------------------------------------------------ */
/* The writer                                                          */
/* ------------------------------------------------------------------ */

static void test_escape(void **state)
{
    (void)state;
    char buf[64];
    trace_escape("plain", buf, sizeof buf);
    assert_string_equal(buf, "plain");
    trace_escape("a\"b\\c\n\x01", buf, sizeof buf);
    assert_string_equal(buf, "a\\\"b\\\\c\\u000a\\u0001");
    /* Valid UTF-8 passes; a stray byte, an overlong form or a surrogate
     * becomes U+FFFD. */
    trace_escape("\xc3\xa9\xe6\x97\xa5", buf, sizeof buf);
    assert_string_equal(buf, "\xc3\xa9\xe6\x97\xa5");
    trace_escape("x\xffy\xc0\xafz\xed\xa0\x80", buf, sizeof buf);
    assert_string_equal(buf, "x\\ufffdy\\ufffd\\ufffdz\\ufffd\\ufffd\\ufffd");
    /* Truncated at a whole character, always terminated. */
    assert_int_equal(trace_escape("ab\"cd", buf, 4), 2);
    assert_string_equal(buf, "ab");
    assert_int_equal(trace_escape(NULL, buf, sizeof buf), 0);
}

static void test_ticks_delta_unwraps(void **state)
{
    (void)state;
    assert_int_equal(trace_ticks_delta(100, 150, 64), 50);
    assert_int_equal(trace_ticks_delta(150, 100, 64), -50);
    assert_int_equal(trace_ticks_delta(UINT64_MAX - 9, 10, 64), 20);
    /* 36 valid bits: past the wrap, and backwards across it. */
    uint64_t top = (1ull << 36) - 5;
    assert_int_equal(trace_ticks_delta(top, 5, 36), 10);
    assert_int_equal(trace_ticks_delta(5, top, 36), -10);
    /* Bits above the valid ones are ignored. */
    assert_int_equal(trace_ticks_delta(7 | 1ull << 40, 9, 36), 2);
}

static void test_writer_valid_after_each_flush(void **state)
{
    (void)state;
    char path[256];
    temp_path(path, sizeof path, "writer");
    bool no_memory = true;
    char reason[256];
    trace_writer *w = trace_writer_open(NULL, path, &no_memory, reason, sizeof reason);
    assert_non_null(w);
    assert_false(no_memory);
    tj_trace t;
    trace_writer_flush(w);
    load_ok(path, &t);
    assert_int_equal(t.count, 0);
    tj_free(&t);
    uint64_t now = trace_now_ns();
    trace_write_name(w, 1, 0, "a \"host\"");
    for (int i = 0; i < 3; i++) {
        trace_event e = {.name = "k\\1", .cat = "launch", .pid = 1, .tid = 2,
                         .ts_ns = (int64_t)now + i * 1500, .dur_ns = -7,
                         .args = {{"batch", 9}, {"launch", i}}};
        trace_write_complete(w, &e);
        trace_writer_flush(w);
        load_ok(path, &t);
        assert_int_equal(t.count, 2 + i);
        assert_string_equal(t.events[0].name, "a \"host\"");
        assert_string_equal(t.events[1 + i].name, "k\\1");
        assert_int_equal(t.events[1 + i].launch, i);
        assert_true(t.events[1 + i].dur < 0); /* signed, as given */
        tj_free(&t);
    }
    assert_true(trace_writer_close(w));
    load_ok(path, &t);
    assert_int_equal(t.count, 4);
    /* ts in microseconds: 1.5 us apart. */
    assert_true(t.events[2].ts - t.events[1].ts > 1.499 && t.events[2].ts - t.events[1].ts < 1.501);
    tj_free(&t);
    remove(path);
    assert_null(trace_writer_open(NULL, "/nonexistent-dir/x.json", &no_memory, reason,
                                  sizeof reason));
    assert_false(no_memory);
    assert_non_null(strstr(reason, "/nonexistent-dir/x.json"));
}

/* ------------------------------------------------------------------ */
/* Traces of a device                                                  */
/* ------------------------------------------------------------------ */

/* Two streams, two kernels (one named to need escaping), copies: every
 * launch appears once on each track, every batch once, names intact. */
static void test_trace_counts_and_names(void **state)
{
    (void)state;
    char path[256];
    temp_path(path, sizeof path, "counts");
    env e = {0};
    salvo_device_desc d = {.batch_size = 8};
    open_env(&e, &d);
    const char *odd = "sc\"ale\\\n\xc3\xa9";
    salvo_kernel *k2 = make_kernel(e.dev, odd);
    salvo_stream *s2 = NULL;
    assert_int_equal(salvo_stream_create(e.dev, NULL, &s2), SALVO_OK);
    salvo_buffer *b2 = make_buffer(e.dev, BUF_BYTES);
    salvo_buffer *b3 = make_buffer(e.dev, BUF_BYTES);

    assert_int_equal(salvo_trace_start(e.dev, path), SALVO_OK);
    for (int i = 0; i < 50; i++)
        launch_ok(e.st, e.k, e.buf);
    for (int i = 0; i < 30; i++) {
        launch_ok(s2, i % 2 ? k2 : e.k, b2);
        if (i % 10 == 0)
            assert_int_equal(salvo_copy(s2, b2, 0, b3, 0, 64), SALVO_OK);
    }
    assert_int_equal(salvo_device_synchronize(e.dev), SALVO_OK);
    salvo_stats s;
    assert_int_equal(salvo_device_stats(e.dev, &s), SALVO_OK);
    assert_int_equal(salvo_trace_stop(e.dev), SALVO_OK);

    tj_trace t;
    load_ok(path, &t);
    size_t launches = 50 + 30 + 3;
    assert_int_equal(s.launches_total + 3, launches); /* copies are not launches there */
    assert_int_equal(tj_count(&t, "X", TRACE_HOST_PID, "launch"), launches);
    assert_int_equal(tj_count(&t, "X", TRACE_GPU_PID, "launch"), launches);
    assert_int_equal(tj_count(&t, "X", TRACE_HOST_PID, "submit"), s.batches_submitted);
    assert_int_equal(tj_count(&t, "X", TRACE_GPU_PID, "batch"), s.batches_submitted);
    /* Named processes and a thread per stream on each. */
    assert_int_equal(tj_count(&t, "M", TRACE_HOST_PID, NULL), 3);
    assert_int_equal(tj_count(&t, "M", TRACE_GPU_PID, NULL), 3);
    assert_true(has_name(&t, "M", TRACE_HOST_PID, "salvo host (fake0)"));
    assert_true(has_name(&t, "M", TRACE_GPU_PID, "stream 2"));
    assert_true(has_name(&t, "X", TRACE_GPU_PID, "adder"));
    assert_true(has_name(&t, "X", TRACE_GPU_PID, odd));
    assert_true(has_name(&t, "X", TRACE_HOST_PID, odd));
    assert_true(has_name(&t, "X", TRACE_GPU_PID, "(copy)"));
    check_gpu_launches(&t);
    /* Launch indices run 0..n-1 in each batch; host times in order. */
    for (size_t i = 1; i < t.count; i++) {
        const tj_event *a = &t.events[i - 1], *b = &t.events[i];
        if (a->pid == TRACE_HOST_PID && b->pid == TRACE_HOST_PID && !strcmp(a->cat, "launch") &&
            !strcmp(b->cat, "launch") && a->batch == b->batch) {
            assert_int_equal(b->launch, a->launch + 1);
            assert_true(b->ts >= a->ts);
        }
    }
    tj_free(&t);
    remove(path);

    salvo_buffer_destroy(b2);
    salvo_buffer_destroy(b3);
    salvo_kernel_destroy(k2);
    salvo_stream_destroy(s2);
    close_env(&e);
}

static void test_start_stop_states(void **state)
{
    (void)state;
    char path[256], other[256];
    temp_path(path, sizeof path, "states");
    temp_path(other, sizeof other, "states2");
    env e = {0};
    open_env(&e, NULL);
    assert_int_equal(salvo_trace_start(NULL, path), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_trace_start(e.dev, NULL), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_trace_start(e.dev, ""), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_trace_stop(NULL), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_trace_stop(e.dev), SALVO_ERROR_INVALID_STATE);
    assert_int_equal(salvo_trace_start(e.dev, "/nonexistent-dir/t.json"),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(salvo_last_error(), "/nonexistent-dir/t.json"));

    assert_int_equal(salvo_trace_start(e.dev, path), SALVO_OK);
    assert_int_equal(salvo_trace_start(e.dev, other), SALVO_ERROR_INVALID_STATE);
    for (int i = 0; i < 20; i++)
        launch_ok(e.st, e.k, e.buf);
    /* Submitted, not waited for: stop writes what is complete (the fake
     * completes at once) and leaves the open batch out. */
    assert_int_equal(salvo_stream_flush(e.st), SALVO_OK);
    for (int i = 0; i < 3; i++)
        launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_trace_stop(e.dev), SALVO_OK);
    tj_trace t;
    load_ok(path, &t);
    assert_int_equal(tj_count(&t, "X", TRACE_GPU_PID, "launch"), 20);
    tj_free(&t);

    /* Again, to another file: the stream is named there too; the batch
     * open at the start is not traced, later ones are. */
    assert_int_equal(salvo_trace_start(e.dev, other), SALVO_OK);
    for (int i = 0; i < 5; i++)
        launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    for (int i = 0; i < 4; i++)
        launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    assert_int_equal(salvo_trace_stop(e.dev), SALVO_OK);
    load_ok(other, &t);
    assert_true(has_name(&t, "M", TRACE_HOST_PID, "stream 1"));
    assert_int_equal(tj_count(&t, "X", TRACE_GPU_PID, "launch"), 4);
    assert_int_equal(tj_count(&t, "X", TRACE_HOST_PID, "launch"), 4);
    tj_free(&t);
    remove(path);
    remove(other);
    assert_int_equal(e.warnings, 0);
    close_env(&e);
}

static void test_unsupported_without_timestamps(void **state)
{
    (void)state;
    char path[256];
    temp_path(path, sizeof path, "unsupported");
    remove(path);
    env e = {0};
    e.f = fake_create();
    e.f->timestamps = false;
    open_env(&e, NULL);
    assert_int_equal(salvo_trace_start(e.dev, path), SALVO_ERROR_UNSUPPORTED);
    FILE *f = fopen(path, "r");
    assert_null(f); /* nothing created */
    launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    assert_int_equal(fake_calls(e.f, "querypool_create"), 0);
    close_env(&e);
}

/* $SALVO_TRACE: from device create to device destroy; a second device
 * tracing at the same time writes NAME.2.json. */
static void test_environment_starts_and_destroy_stops(void **state)
{
    (void)state;
    char path[256], second[256];
    temp_path(path, sizeof path, "env");
    snprintf(second, sizeof second, "%.*s.2.json", (int)(strlen(path) - 5), path);
    setenv("SALVO_TRACE", path, 1);
    env a = {0}, b = {0};
    open_env(&a, NULL);
    open_env(&b, NULL);
    unsetenv("SALVO_TRACE");
    for (int i = 0; i < 7; i++) {
        launch_ok(a.st, a.k, a.buf);
        launch_ok(b.st, b.k, b.buf);
    }
    launch_ok(b.st, b.k, b.buf);
    /* Not synchronized: destroy waits, then the trace has it all. */
    close_env(&a);
    close_env(&b);
    tj_trace t;
    load_ok(path, &t);
    assert_int_equal(tj_count(&t, "X", TRACE_GPU_PID, "launch"), 7);
    tj_free(&t);
    load_ok(second, &t);
    assert_int_equal(tj_count(&t, "X", TRACE_GPU_PID, "launch"), 8);
    tj_free(&t);
    remove(path);
    remove(second);

    /* One at a time again: the plain name is free. */
    setenv("SALVO_TRACE", path, 1);
    env c = {0};
    open_env(&c, NULL);
    unsetenv("SALVO_TRACE");
    launch_ok(c.st, c.k, c.buf);
    assert_int_equal(salvo_trace_start(c.dev, second), SALVO_ERROR_INVALID_STATE);
    close_env(&c);
    load_ok(path, &t);
    assert_int_equal(tj_count(&t, "X", TRACE_HOST_PID, "launch"), 1);
    tj_free(&t);
    remove(path);

    /* A device that cannot trace still opens (the failure is logged). */
    setenv("SALVO_TRACE", path, 1);
    env d = {0};
    d.f = fake_create();
    d.f->timestamps = false;
    open_env(&d, NULL);
    unsetenv("SALVO_TRACE");
    assert_true(d.warnings > 0);
    launch_ok(d.st, d.k, d.buf);
    close_env(&d);
    assert_null(fopen(path, "r"));
}

/* The file is valid JSON while tracing goes on: after each batch, and
 * after the names of a stream created meanwhile. */
static void test_valid_json_before_stop(void **state)
{
    (void)state;
    char path[256];
    temp_path(path, sizeof path, "early");
    env e = {0};
    open_env(&e, NULL);
    assert_int_equal(salvo_trace_start(e.dev, path), SALVO_OK);
    tj_trace t;
    load_ok(path, &t); /* the header and names alone */
    assert_int_equal(t.count, 4);
    tj_free(&t);
    for (int i = 0; i < 10; i++)
        launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    load_ok(path, &t);
    assert_int_equal(tj_count(&t, "X", TRACE_GPU_PID, "launch"), 10);
    tj_free(&t);
    salvo_stream *s2 = NULL;
    assert_int_equal(salvo_stream_create(e.dev, NULL, &s2), SALVO_OK);
    load_ok(path, &t);
    assert_true(has_name(&t, "M", TRACE_GPU_PID, "stream 2"));
    tj_free(&t);
    for (int i = 0; i < 10; i++)
        launch_ok(s2, e.k, e.buf);
    assert_int_equal(salvo_stream_synchronize(s2), SALVO_OK);
    load_ok(path, &t);
    assert_int_equal(tj_count(&t, "X", TRACE_GPU_PID, "launch"), 20);
    tj_free(&t);
    salvo_stream_destroy(s2);
    close_env(&e); /* destroy stops the trace */
    load_ok(path, &t);
    assert_int_equal(tj_count(&t, "X", TRACE_GPU_PID, "launch"), 20);
    tj_free(&t);
    remove(path);
}

/* A process that exits without stopping the trace or destroying the
 * device (exit flushes stdio buffers) leaves valid JSON. */
static void test_exit_without_stop(void **state)
{
    (void)state;
    char path[256];
    temp_path(path, sizeof path, "exit");
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        fake_accel *f = fake_create();
        salvo_device *dev = NULL;
        salvo_stream *st = NULL;
        salvo_kernel *k = NULL;
        salvo_buffer *b = NULL;
        salvo_kernel_desc kd = {.spirv = add_spv, .spirv_size = sizeof add_spv, .name = "adder"};
        if (!f || device_create_with_accel(NULL, fake_accel_get(f), &dev) != SALVO_OK ||
            salvo_trace_start(dev, path) != SALVO_OK ||
            salvo_stream_create(dev, NULL, &st) != SALVO_OK ||
            salvo_kernel_create(dev, &kd, &k) != SALVO_OK ||
            salvo_buffer_create(dev, BUF_BYTES, SALVO_DOMAIN_DEVICE, &b) != SALVO_OK)
            exit(2);
        for (int i = 0; i < 40; i++)
            if (launch_on(st, k, b) != SALVO_OK)
                exit(3);
        if (salvo_stream_synchronize(st) != SALVO_OK)
            exit(4);
        for (int i = 0; i < 5; i++) /* an open batch, never written */
            if (launch_on(st, k, b) != SALVO_OK)
                exit(5);
        exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    tj_trace t;
    load_ok(path, &t);
    assert_int_equal(tj_count(&t, "X", TRACE_GPU_PID, "launch"), 40);
    tj_free(&t);
    remove(path);
}

/* Past TRACE_MAX_LAUNCHES in one batch: host events for all, GPU times for
 * the first TRACE_MAX_LAUNCHES. Copies, as the fake's descriptor pool
 * would end a batch of launches at POOL_MAX_SETS. */
static void test_launches_past_the_cap(void **state)
{
    (void)state;
    char path[256];
    temp_path(path, sizeof path, "cap");
    enum { N = TRACE_MAX_LAUNCHES + 10 };
    env e = {0};
    salvo_device_desc d = {.batch_size = N + 100};
    open_env(&e, &d);
    salvo_stream *big = NULL;
    salvo_stream_desc sd = {.first_batch = N + 100};
    assert_int_equal(salvo_trace_start(e.dev, path), SALVO_OK);
    assert_int_equal(salvo_stream_create(e.dev, &sd, &big), SALVO_OK);
    salvo_buffer *to = make_buffer(e.dev, BUF_BYTES);
    for (int i = 0; i < N; i++)
        assert_int_equal(salvo_copy(big, e.buf, 0, to, (uint64_t)(i % 16) * 64, 64), SALVO_OK);
    salvo_stats s;
    assert_int_equal(salvo_device_stats(e.dev, &s), SALVO_OK);
    assert_int_equal(s.batches_submitted, 0); /* one open batch */
    assert_int_equal(salvo_stream_synchronize(big), SALVO_OK);
    assert_int_equal(salvo_trace_stop(e.dev), SALVO_OK);
    tj_trace t;
    load_ok(path, &t);
    assert_int_equal(tj_count(&t, "X", TRACE_HOST_PID, "launch"), N);
    assert_int_equal(tj_count(&t, "X", TRACE_GPU_PID, "launch"), TRACE_MAX_LAUNCHES);
    assert_int_equal(tj_count(&t, "X", TRACE_GPU_PID, "batch"), 1);
    for (size_t i = 0; i < t.count; i++)
        if (!strcmp(t.events[i].cat, "submit"))
            assert_int_equal(t.events[i].launches, N);
    check_gpu_launches(&t);
    tj_free(&t);
    remove(path);
    salvo_buffer_destroy(to);
    salvo_stream_destroy(big);
    close_env(&e);
}

/* An event cancel records the batch again without the launches before
 * it: the trace shows the ones that ran, with their first host times. */
static void test_cancel_keeps_the_rest(void **state)
{
    (void)state;
    char path[256];
    temp_path(path, sizeof path, "cancel");
    env e = {0};
    salvo_device_desc d = {.batch_size = 64};
    open_env(&e, &d);
    salvo_kernel *kb = make_kernel(e.dev, "after");
    salvo_event *ev = NULL;
    assert_int_equal(salvo_event_create(e.dev, &ev), SALVO_OK);
    assert_int_equal(salvo_trace_start(e.dev, path), SALVO_OK);
    for (int i = 0; i < 5; i++)
        launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_event_record(ev, e.st), SALVO_OK);
    for (int i = 0; i < 3; i++)
        launch_ok(e.st, kb, e.buf);
    assert_int_equal(salvo_event_cancel(ev), SALVO_OK);
    launch_ok(e.st, kb, e.buf);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    assert_int_equal(salvo_trace_stop(e.dev), SALVO_OK);
    tj_trace t;
    load_ok(path, &t);
    assert_int_equal(tj_count(&t, "X", TRACE_GPU_PID, "launch"), 4);
    assert_int_equal(tj_count(&t, "X", TRACE_HOST_PID, "launch"), 4);
    assert_false(has_name(&t, "X", TRACE_GPU_PID, "adder"));
    /* The three re-recorded launches kept their first host records (a
     * time and how long the call took), in order, before the fourth. */
    double ts[4] = {-1, -1, -1, -1};
    for (size_t i = 0; i < t.count; i++) {
        const tj_event *x = &t.events[i];
        if (x->pid == TRACE_HOST_PID && !strcmp(x->cat, "launch")) {
            assert_string_equal(x->name, "after");
            assert_true(x->launch >= 0 && x->launch < 4);
            assert_true(x->dur > 0);
            ts[x->launch] = x->ts;
        }
    }
    for (int i = 1; i < 4; i++)
        assert_true(ts[i] > ts[i - 1]);
    check_gpu_launches(&t);
    tj_free(&t);
    remove(path);
    salvo_event_destroy(ev);
    salvo_kernel_destroy(kb);
    close_env(&e);
}

/* Tracing is best effort: no query pool for a slot, or its results
 * missing, leave GPU times out; calls still succeed. */
static void test_missing_timestamps_degrade(void **state)
{
    (void)state;
    char path[256];
    temp_path(path, sizeof path, "degrade");
    env e = {0};
    salvo_device_desc d = {.batch_size = 4};
    open_env(&e, &d);
    fake_set_result(e.f, "querypool_create", 2, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_int_equal(salvo_trace_start(e.dev, path), SALVO_OK);
    assert_int_equal(e.warnings, 1); /* stream 1: slot 1 has no pool */
    /* Batches go to slots 0, 1, 2, 0, 1, 2: slot 1's two lack GPU times. */
    for (int i = 0; i < 24; i++)
        launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    fake_set_result(e.f, "querypool_results", 1, ACCEL_NOT_READY);
    for (int i = 0; i < 4; i++)
        launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    assert_int_equal(salvo_trace_stop(e.dev), SALVO_OK);
    tj_trace t;
    load_ok(path, &t);
    assert_int_equal(tj_count(&t, "X", TRACE_HOST_PID, "launch"), 28);
    assert_int_equal(tj_count(&t, "X", TRACE_HOST_PID, "submit"), 7);
    assert_int_equal(tj_count(&t, "X", TRACE_GPU_PID, "batch"), 7 - 2 - 1);
    assert_int_equal(tj_count(&t, "X", TRACE_GPU_PID, "launch"), 28 - 8 - 4);
    check_gpu_launches(&t);
    tj_free(&t);
    remove(path);
    close_env(&e);
}

/* A lost device: what completed is written, destroy closes a valid file,
 * nothing leaks. */
static void test_device_loss_while_tracing(void **state)
{
    (void)state;
    char path[256];
    temp_path(path, sizeof path, "lost");
    env e = {0};
    salvo_device_desc d = {.batch_size = 4};
    e.f = fake_create();
    fake_set_complete(e.f, FAKE_COMPLETE_MANUAL);
    open_env(&e, &d);
    assert_int_equal(salvo_trace_start(e.dev, path), SALVO_OK);
    for (int i = 0; i < 4; i++)
        launch_ok(e.st, e.k, e.buf);
    fake_complete_all(e.f);
    for (int i = 0; i < 4; i++)
        launch_ok(e.st, e.k, e.buf);
    fake_lose_device(e.f);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_ERROR_DEVICE_LOST);
    close_env(&e);
    tj_trace t;
    load_ok(path, &t);
    assert_int_equal(tj_count(&t, "X", TRACE_GPU_PID, "launch"), 4);
    tj_free(&t);
    remove(path);
}

/* ------------------------------------------------------------------ */
/* No allocation per launch                                            */
/* ------------------------------------------------------------------ */

typedef struct counting {
    long live;
    long total;
} counting;

static void *count_alloc(void *user, size_t size)
{
    counting *c = user;
    c->live++;
    c->total++;
    return malloc(size);
}

static void count_free(void *user, void *ptr)
{
    counting *c = user;
    c->live--;
    free(ptr);
}

/* 1000 launches (with their submits and retires) after a warm-up
 * allocate nothing through the device's allocator: tracing off, and
 * tracing on (everything it needs was allocated when the stream became
 * traced). */
static void allocations_per_launch(bool tracing)
{
    char path[256];
    temp_path(path, sizeof path, "alloc");
    counting c = {0, 0};
    salvo_allocator a = {count_alloc, count_free, &c};
    env e = {0};
    salvo_device_desc d = {.allocator = &a, .batch_size = 32};
    open_env(&e, &d);
    if (tracing)
        assert_int_equal(salvo_trace_start(e.dev, path), SALVO_OK);
    for (int i = 0; i < 200; i++)
        launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    long before = c.total;
    for (int i = 0; i < 1000; i++) {
        launch_ok(e.st, e.k, e.buf);
        if (i % 250 == 249)
            assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    }
    assert_int_equal(c.total - before, 0);
    if (tracing) {
        assert_int_equal(salvo_trace_stop(e.dev), SALVO_OK);
        tj_trace t;
        load_ok(path, &t);
        assert_int_equal(tj_count(&t, "X", TRACE_GPU_PID, "launch"), 1200);
        tj_free(&t);
        remove(path);
    } else {
        assert_int_equal(fake_calls(e.f, "querypool_create"), 0);
        assert_int_equal(fake_calls(e.f, "cmd_timestamp"), 0);
    }
    close_env(&e);
    assert_int_equal(c.live, 0);
}

static void test_no_allocation_per_launch_when_off(void **state)
{
    (void)state;
    allocations_per_launch(false);
}

static void test_no_allocation_per_launch_when_on(void **state)
{
    (void)state;
    allocations_per_launch(true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_ticks_delta_unwraps),
        cmocka_unit_test(test_writer_valid_after_each_flush),
        cmocka_unit_test(test_trace_counts_and_names),
        cmocka_unit_test(test_start_stop_states),
        cmocka_unit_test(test_unsupported_without_timestamps),
        cmocka_unit_test(test_environment_starts_and_destroy_stops),
        cmocka_unit_test(test_valid_json_before_stop),
        cmocka_unit_test(test_exit_without_stop),
        cmocka_unit_test(test_launches_past_the_cap),
        cmocka_unit_test(test_cancel_keeps_the_rest),
        cmocka_unit_test(test_missing_timestamps_degrade),
        cmocka_unit_test(test_device_loss_while_tracing),
        cmocka_unit_test(test_no_allocation_per_launch_when_off),
        cmocka_unit_test(test_no_allocation_per_launch_when_on),
    };
    return cmocka_run_group_tests_name("trace", tests, clear_salvo_env, NULL);
}
