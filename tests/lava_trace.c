#define _POSIX_C_SOURCE 200809L /* getpid */
/* Traces on a real device (lavapipe in CI), validation layer on: GPU
 * timestamps through two streams, two kernels and copies; the file is
 * read back by the suite's strict JSON parser and, where python3 is
 * installed, by Python's json module. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "salvo/salvo.h"
#include "support/lava.h"
#include "support/trace_json.h"

#define N 1024u
#define HOST_PID 1
#define GPU_PID 2

enum {
    ADDS = 160,   /* on stream a: x += 1 each */
    ROUNDS = 60,  /* on stream b: z = y + 2 (copy kernel), then z += 1 (add), then a copy */
    BATCH = 32
};

static const uint32_t groups[3] = {N / 64, 1, 1};

static const tj_event *gpu_batch(const tj_trace *t, int64_t serial)
{
    for (size_t i = 0; i < t->count; i++)
        if (t->events[i].pid == GPU_PID && !strcmp(t->events[i].cat, "batch") &&
            t->events[i].batch == serial)
            return &t->events[i];
    return NULL;
}

static void two_streams_two_kernels(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "/tmp/salvo_lava_trace_%ld.json", (long)getpid());
    salvo_device *dev = lava_open(0, BATCH);
    salvo_kernel *add = lava_add_kernel(dev), *copy = lava_copy_kernel(dev);
    salvo_buffer *x = lava_zeroed(dev, N, SALVO_DOMAIN_DEVICE);
    salvo_buffer *y = lava_zeroed(dev, N, SALVO_DOMAIN_DEVICE);
    salvo_buffer *z = NULL, *w = NULL;
    assert_int_equal(salvo_buffer_create(dev, N * 4, SALVO_DOMAIN_DEVICE, &z), SALVO_OK);
    assert_int_equal(salvo_buffer_create(dev, N * 4, SALVO_DOMAIN_DEVICE, &w), SALVO_OK);

    /* One stream before the trace starts, one after: both are traced. */
    salvo_stream *a = NULL, *b = NULL;
    assert_int_equal(salvo_stream_create(dev, NULL, &a), SALVO_OK);
    salvo_status r = salvo_trace_start(dev, path);
    if (r == SALVO_ERROR_UNSUPPORTED) {
        fprintf(stderr, "the device has no timestamps: skipped\n");
        exit(LAVA_SKIP);
    }
    assert_int_equal(r, SALVO_OK);
    assert_int_equal(salvo_trace_start(dev, path), SALVO_ERROR_INVALID_STATE);
    assert_int_equal(salvo_stream_create(dev, NULL, &b), SALVO_OK);

    salvo_binding bx = {.binding = 0, .buffer = x};
    salvo_binding bz = {.binding = 0, .buffer = z};
    salvo_binding yz[2] = {{.binding = 0, .buffer = y}, {.binding = 1, .buffer = z}};
    uint32_t one[2] = {N, 1}, two[2] = {N, 2};
    for (int i = 0; i < ADDS; i++) {
        assert_int_equal(salvo_launch(a, add, groups, &bx, 1, one, sizeof one), SALVO_OK);
        if (i < ROUNDS) {
            assert_int_equal(salvo_launch(b, copy, groups, yz, 2, two, sizeof two), SALVO_OK);
            assert_int_equal(salvo_launch(b, add, groups, &bz, 1, one, sizeof one), SALVO_OK);
            assert_int_equal(salvo_copy(b, z, 0, w, 0, N * 4), SALVO_OK);
        }
    }
    assert_int_equal(salvo_device_synchronize(dev), SALVO_OK);
    lava_expect_all(x, N, ADDS);
    lava_expect_all(w, N, 3);
    salvo_stats s;
    assert_int_equal(salvo_device_stats(dev, &s), SALVO_OK);
    assert_int_equal(s.validation_messages, 0);
    assert_int_equal(salvo_trace_stop(dev), SALVO_OK);
    assert_int_equal(salvo_trace_stop(dev), SALVO_ERROR_INVALID_STATE);

    /* Python's reading, where there is a python3. */
    if (system("command -v python3 >/dev/null 2>&1") == 0) {
        char cmd[512];
        snprintf(cmd, sizeof cmd,
                 "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
                 "assert isinstance(d[\"traceEvents\"], list)' %s",
                 path);
        assert_int_equal(system(cmd), 0);
    }
    tj_trace t;
    if (!tj_load(path, &t))
        fail_msg("%s: %s", path, t.error);
    size_t launches = ADDS + 3 * ROUNDS;
    assert_int_equal(tj_count(&t, "X", HOST_PID, "launch"), launches);
    assert_int_equal(tj_count(&t, "X", GPU_PID, "launch"), launches);
    assert_int_equal(tj_count(&t, "X", HOST_PID, "submit"), s.batches_submitted);
    assert_int_equal(tj_count(&t, "X", GPU_PID, "batch"), s.batches_submitted);
    size_t per_kernel[3] = {0, 0, 0};
    for (size_t i = 0; i < t.count; i++) {
        const tj_event *e = &t.events[i];
        if (e->pid != GPU_PID || strcmp(e->ph, "X") != 0)
            continue;
        if (e->dur < 0)
            fail_msg("%s of batch %lld lasts %.3f us", e->name, (long long)e->batch, e->dur);
        if (strcmp(e->cat, "launch") != 0)
            continue;
        per_kernel[!strcmp(e->name, "add") ? 0 : !strcmp(e->name, "copy") ? 1 : 2]++;
        const tj_event *bt = gpu_batch(&t, e->batch);
        if (!bt)
            fail_msg("launch of batch %lld: no batch event", (long long)e->batch);
        if (e->ts < bt->ts || e->ts + e->dur > bt->ts + bt->dur + 1e-6)
            fail_msg("%s %lld [%.3f, +%.3f] outside batch %lld [%.3f, +%.3f]", e->name,
                     (long long)e->launch, e->ts, e->dur, (long long)e->batch, bt->ts, bt->dur);
        if (e->tid != bt->tid)
            fail_msg("launch and batch on different threads");
    }
    assert_int_equal(per_kernel[0], ADDS + ROUNDS);
    assert_int_equal(per_kernel[1], ROUNDS);
    assert_int_equal(per_kernel[2], ROUNDS); /* "(copy)" */
    tj_free(&t);
    remove(path);

    salvo_stream_destroy(a);
    salvo_stream_destroy(b);
    salvo_buffer_destroy(x);
    salvo_buffer_destroy(y);
    salvo_buffer_destroy(z);
    salvo_buffer_destroy(w);
    salvo_kernel_destroy(add);
    salvo_kernel_destroy(copy);
    assert_int_equal(salvo_device_stats(dev, &s), SALVO_OK);
    assert_int_equal(s.validation_messages, 0);
    lava_close(dev);
}

/* Validation messages of the devices opened with quiet (not through
 * lava_open): lava_close cannot see them, so the test and main count them. */
static uint64_t quiet_validation;

static void quiet(void *user, salvo_log_level level, const char *file, int line,
                  const char *message)
{
    (void)user;
    (void)line;
    if (file && strcmp(file, "validation") == 0) {
        quiet_validation++;
        fprintf(stderr, "VALIDATION: %s\n", message);
    }
    (void)level;
}

/* While tracing, a launch whose dispatch could not be recorded leaves no
 * timestamp written: the next launch's, at the same place, writes a query
 * that was reset (the layer reports a write to one that was not). */
static void refused_launch_while_tracing(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "/tmp/salvo_lava_trace_refused_%ld.json", (long)getpid());
    salvo_device_desc d = {.batch_size = 8, .fault = "cmd_dispatch:1:oom_host",
                           .flags = SALVO_DEVICE_VALIDATION, .log = quiet};
    salvo_device *dev = NULL;
    assert_int_equal(salvo_device_create(&d, &dev), SALVO_OK);
    salvo_kernel *add = lava_add_kernel(dev);
    salvo_stream *st = NULL;
    salvo_buffer *x = NULL;
    assert_int_equal(salvo_stream_create(dev, NULL, &st), SALVO_OK);
    assert_int_equal(salvo_buffer_create(dev, N * 4, SALVO_DOMAIN_DEVICE, &x), SALVO_OK);
    assert_int_equal(salvo_fill(st, x, 0, N * 4, 0), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(st), SALVO_OK);
    salvo_status r = salvo_trace_start(dev, path);
    if (r == SALVO_ERROR_UNSUPPORTED)
        skip();
    assert_int_equal(r, SALVO_OK);
    salvo_binding bx = {.binding = 0, .buffer = x};
    uint32_t one[2] = {N, 1};
    assert_int_equal(salvo_launch(st, add, groups, &bx, 1, one, sizeof one),
                     SALVO_ERROR_OUT_OF_HOST_MEMORY);
    assert_int_equal(salvo_launch(st, add, groups, &bx, 1, one, sizeof one), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(st), SALVO_OK);
    lava_expect_all(x, N, 1);
    assert_int_equal(salvo_trace_stop(dev), SALVO_OK);
    lava_expect_no_validation(dev);
    salvo_stream_destroy(st);
    salvo_buffer_destroy(x);
    salvo_kernel_destroy(add);
    uint64_t before = quiet_validation;
    salvo_device_destroy(dev);
    /* What the layer finds at vkDestroyDevice (a query pool salvo leaked). */
    if (quiet_validation != before)
        fail_msg("%llu validation message(s) while the device was destroyed",
                 (unsigned long long)(quiet_validation - before));
    tj_trace t;
    if (!tj_load(path, &t))
        fail_msg("%s: %s", path, t.error);
    assert_int_equal(tj_count(&t, "X", GPU_PID, "launch"), 1);
    tj_free(&t);
    remove(path);
}

/* $SALVO_TRACE: on from create, closed (valid, complete) by destroy. */
static void environment_variable(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "/tmp/salvo_lava_trace_env_%ld.json", (long)getpid());
    setenv("SALVO_TRACE", path, 1);
    salvo_device *dev = lava_open(0, 8);
    unsetenv("SALVO_TRACE");
    salvo_kernel *add = lava_add_kernel(dev);
    salvo_stream *st = NULL;
    salvo_buffer *x = NULL;
    assert_int_equal(salvo_stream_create(dev, NULL, &st), SALVO_OK);
    assert_int_equal(salvo_buffer_create(dev, N * 4, SALVO_DOMAIN_DEVICE, &x), SALVO_OK);
    salvo_binding bx = {.binding = 0, .buffer = x};
    uint32_t one[2] = {N, 1};
    for (int i = 0; i < 20; i++)
        assert_int_equal(salvo_launch(st, add, groups, &bx, 1, one, sizeof one), SALVO_OK);
    salvo_stream_destroy(st);
    salvo_buffer_destroy(x);
    salvo_kernel_destroy(add);
    lava_expect_no_validation(dev);
    lava_close(dev); /* submits, waits, then closes the trace */
    tj_trace t;
    if (!tj_load(path, &t)) {
        if (strstr(t.error, "cannot open"))
            skip(); /* no timestamps on this device: logged, no trace */
        fail_msg("%s: %s", path, t.error);
    }
    assert_int_equal(tj_count(&t, "X", GPU_PID, "launch"), 20);
    assert_int_equal(tj_count(&t, "X", HOST_PID, "launch"), 20);
    tj_free(&t);
    remove(path);
}

/* A batch of more launches than a trace keeps GPU times for (4096): those
 * past it go to the host track at once. A cancel that records the batch
 * again notes each launch again; each is still in the trace once (those
 * past the cap were once written a second time). */
static void launches_past_the_cap_once_after_a_cancel(void **state)
{
    (void)state;
    enum { KEPT = 4100 };
    char path[256];
    snprintf(path, sizeof path, "/tmp/salvo_lava_trace_cap_%ld.json", (long)getpid());
    salvo_device *dev = lava_open(0, 0);
    salvo_kernel *add = lava_add_kernel(dev);
    salvo_buffer *x = lava_zeroed(dev, 64, SALVO_DOMAIN_DEVICE);
    salvo_stream *st = NULL;
    salvo_stream_desc sd = {.batch_size = 2 * KEPT, .first_batch = 2 * KEPT};
    assert_int_equal(salvo_stream_create(dev, &sd, &st), SALVO_OK);
    salvo_event *e = NULL;
    assert_int_equal(salvo_event_create(dev, &e), SALVO_OK);
    salvo_status r = salvo_trace_start(dev, path);
    if (r == SALVO_ERROR_UNSUPPORTED) {
        fprintf(stderr, "the device has no timestamps: skipped\n");
        exit(LAVA_SKIP);
    }
    assert_int_equal(r, SALVO_OK);
    salvo_binding bx = {.binding = 0, .buffer = x};
    uint32_t one[2] = {64, 1}, ten[2] = {64, 10};
    const uint32_t g1[3] = {1, 1, 1};
    assert_int_equal(salvo_launch(st, add, g1, &bx, 1, ten, sizeof ten), SALVO_OK); /* withdrawn */
    assert_int_equal(salvo_event_record(e, st), SALVO_OK);
    for (int i = 0; i < KEPT; i++)
        assert_int_equal(salvo_launch(st, add, g1, &bx, 1, one, sizeof one), SALVO_OK);
    assert_int_equal(salvo_event_cancel(e), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(st), SALVO_OK);
    lava_expect_all(x, 64, KEPT);
    assert_int_equal(salvo_trace_stop(dev), SALVO_OK);
    tj_trace t;
    if (!tj_load(path, &t))
        fail_msg("%s: %s", path, t.error);
    assert_int_equal(tj_count(&t, "X", HOST_PID, "launch"), KEPT);
    tj_free(&t);
    remove(path);
    salvo_event_destroy(e);
    salvo_stream_destroy(st);
    salvo_buffer_destroy(x);
    salvo_kernel_destroy(add);
    lava_close(dev);
}

int main(void)
{
    lava_require_device();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_streams_two_kernels),
        cmocka_unit_test(refused_launch_while_tracing),
        cmocka_unit_test(environment_variable),
        cmocka_unit_test(launches_past_the_cap_once_after_a_cancel),
    };
    int failed = cmocka_run_group_tests_name("lava_trace", tests, NULL, NULL);
    if (quiet_validation) {
        fprintf(stderr, "%llu validation message(s) on the quiet device\n",
                (unsigned long long)quiet_validation);
        return 1;
    }
    return lava_tests_result(failed);
}
