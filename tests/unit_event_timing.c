/*
 * salvo_event_elapsed, salvo_event_wait and salvo_stream_query on the fake
 * accelerator, whose timestamps are a counter: a dispatch advances it by
 * FAKE_DISPATCH_TICKS, every timestamp by 1, at 1 ns a tick. So the time
 * between two events with n dispatches between them is exactly
 * n * FAKE_DISPATCH_TICKS + 1 ns.
 *
 * Every test ends with the device destroyed and checks that the fake has
 * no live handle left (the query pools included) and saw no illegal use
 * (a timestamp written to a query not reset counts as one).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api/internal.h"
#include "support/fake_accel.h"

#include "add.spv.h"

enum { BUF_BYTES = 1024 };

typedef struct env {
    fake_accel *f;
    salvo_device *dev;
    salvo_stream *st;
    salvo_kernel *k;
    salvo_buffer *buf;
} env;

static void open_env(env *e)
{
    if (!e->f)
        e->f = fake_create();
    assert_non_null(e->f);
    salvo_device_desc d = {0};
    salvo_status r = device_create_with_accel(&d, fake_accel_get(e->f), &e->dev);
    if (r != SALVO_OK)
        fail_msg("device_create_with_accel: %s: %s", salvo_status_string(r), salvo_last_error());
    assert_int_equal(salvo_stream_create(e->dev, NULL, &e->st), SALVO_OK);
    salvo_kernel_desc kd = {.spirv = add_spv, .spirv_size = sizeof add_spv, .name = "adder"};
    assert_int_equal(salvo_kernel_create(e->dev, &kd, &e->k), SALVO_OK);
    assert_int_equal(salvo_buffer_create(e->dev, BUF_BYTES, SALVO_DOMAIN_DEVICE, &e->buf),
                     SALVO_OK);
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

static void launch_ok(salvo_stream *st, salvo_kernel *k, salvo_buffer *b)
{
    const uint32_t groups[3] = {1, 1, 1};
    const salvo_binding bind = {.binding = 0, .buffer = b};
    const uint32_t push[2] = {BUF_BYTES / 4, 1};
    salvo_status r = salvo_launch(st, k, groups, &bind, 1, push, sizeof push);
    if (r != SALVO_OK)
        fail_msg("launch: %s: %s", salvo_status_string(r), salvo_last_error());
}

static salvo_event *event_new(salvo_device *dev)
{
    salvo_event *ev = NULL;
    assert_int_equal(salvo_event_create(dev, &ev), SALVO_OK);
    return ev;
}

static uint64_t elapsed_ok(salvo_event *a, salvo_event *b)
{
    uint64_t ns = 12345;
    salvo_status r = salvo_event_elapsed(a, b, &ns);
    if (r != SALVO_OK)
        fail_msg("event_elapsed: %s: %s", salvo_status_string(r), salvo_last_error());
    return ns;
}

/* Exact times from the fake's clock; intervals add up; a record on an
 * idle stream is a point too. */
static void test_elapsed_exact(void **state)
{
    (void)state;
    env e = {0};
    open_env(&e);
    salvo_event *a = event_new(e.dev), *b = event_new(e.dev), *c = event_new(e.dev);
    assert_int_equal(salvo_event_record(a, e.st), SALVO_OK); /* idle stream: opens a batch */
    for (int i = 0; i < 3; i++)
        launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_event_record(b, e.st), SALVO_OK);
    launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    assert_int_equal(salvo_event_record(c, e.st), SALVO_OK); /* after a sync */
    assert_int_equal(salvo_event_synchronize(c), SALVO_OK);
    uint64_t ab = elapsed_ok(a, b), bc = elapsed_ok(b, c), ac = elapsed_ok(a, c);
    assert_int_equal(ab, 3 * FAKE_DISPATCH_TICKS + 1);
    assert_int_equal(bc, FAKE_DISPATCH_TICKS + 1);
    assert_int_equal(ac, ab + bc);
    assert_int_equal(elapsed_ok(a, a), 0);
    /* end before start */
    uint64_t ns = 7;
    assert_int_equal(salvo_event_elapsed(c, a, &ns), SALVO_ERROR_INVALID_STATE);
    assert_int_equal(ns, 0);
    /* Recorded again: the new time replaces the old. */
    launch_ok(e.st, e.k, e.buf);
    launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_event_record(b, e.st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    assert_int_equal(elapsed_ok(c, b), 2 * FAKE_DISPATCH_TICKS + 1);
    salvo_event_destroy(a);
    salvo_event_destroy(b);
    salvo_event_destroy(c);
    close_env(&e);
}

/* Where the device resets queries from the host, a record's batch holds
 * the timestamp alone (no reset command on the device's way to it); a
 * query written once already in the same batch, or one the host could
 * not reset, is reset by the batch; the times are exact either way and
 * the fake sees no reset of a query pending work uses. */
static void test_queries_reset_on_host(void **state)
{
    (void)state;
    env e = {0};
    e.f = fake_create();
    e.f->host_query_reset = true;
    open_env(&e);
    salvo_event *a = event_new(e.dev), *b = event_new(e.dev);
    for (int round = 0; round < 3; round++) {
        assert_int_equal(salvo_event_record(a, e.st), SALVO_OK);
        launch_ok(e.st, e.k, e.buf);
        launch_ok(e.st, e.k, e.buf);
        assert_int_equal(salvo_event_record(b, e.st), SALVO_OK);
        launch_ok(e.st, e.k, e.buf);
        /* The next round's batch is recorded while this one may still run. */
        assert_int_equal(salvo_stream_flush(e.st), SALVO_OK);
    }
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    assert_int_equal(elapsed_ok(a, b), 2 * FAKE_DISPATCH_TICKS + 1);
    assert_int_equal(fake_calls(e.f, "cmd_querypool_reset"), 0);
    assert_int_equal(fake_calls(e.f, "querypool_host_reset"), 6);

    /* b twice in one batch: the second write is reset by the batch. */
    assert_int_equal(salvo_event_record(a, e.st), SALVO_OK);
    launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_event_record(b, e.st), SALVO_OK);
    launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_event_record(b, e.st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    assert_int_equal(elapsed_ok(a, b), 2 * FAKE_DISPATCH_TICKS + 2);
    assert_int_equal(fake_calls(e.f, "cmd_querypool_reset"), 1);

    /* The host reset refused: the batch resets the query instead. */
    fake_set_result(e.f, "querypool_host_reset", 1, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    assert_int_equal(salvo_event_record(a, e.st), SALVO_OK);
    launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_event_record(b, e.st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    assert_int_equal(elapsed_ok(a, b), FAKE_DISPATCH_TICKS + 1);
    assert_int_equal(fake_calls(e.f, "cmd_querypool_reset"), 2);
    salvo_event_destroy(a);
    salvo_event_destroy(b);
    close_env(&e);
}

/* A point's time is read from its query when it is asked for, not when
 * its batch is seen complete (on the way of the query or wait that saw
 * it): a record, a synchronize and a query read nothing; an elapsed reads
 * each point once; a point recorded again, or destroyed, before its time
 * was asked for frees its query unread, so records without elapsed never
 * need a second pool. */
static void test_read_when_asked(void **state)
{
    (void)state;
    env e = {0};
    open_env(&e);
    salvo_event *a = event_new(e.dev), *b = event_new(e.dev);
    assert_int_equal(salvo_event_record(a, e.st), SALVO_OK);
    launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_event_record(b, e.st), SALVO_OK);
    assert_int_equal(salvo_event_synchronize(b), SALVO_OK);
    assert_int_equal(salvo_event_query(a), SALVO_OK);
    assert_int_equal(salvo_stream_query(e.st), SALVO_OK);
    assert_int_equal(fake_calls(e.f, "querypool_results"), 0);
    assert_int_equal(elapsed_ok(a, b), FAKE_DISPATCH_TICKS + 1);
    assert_int_equal(fake_calls(e.f, "querypool_results"), 2);
    assert_int_equal(elapsed_ok(a, b), FAKE_DISPATCH_TICKS + 1);
    assert_int_equal(fake_calls(e.f, "querypool_results"), 2);
    for (int i = 0; i < 3 * TIMING_CHUNK; i++) {
        assert_int_equal(salvo_event_record(a, e.st), SALVO_OK);
        launch_ok(e.st, e.k, e.buf);
        assert_int_equal(salvo_event_record(b, e.st), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    }
    assert_int_equal(fake_calls(e.f, "querypool_results"), 2);
    assert_int_equal(fake_calls(e.f, "querypool_create"), 1);
    assert_int_equal(elapsed_ok(a, b), FAKE_DISPATCH_TICKS + 1);
    assert_int_equal(fake_calls(e.f, "querypool_results"), 4);
    /* Destroyed with their time unread. */
    assert_int_equal(salvo_event_record(a, e.st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    salvo_event_destroy(a);
    salvo_event_destroy(b);
    assert_int_equal(fake_calls(e.f, "querypool_results"), 4);
    close_env(&e);
}

/* NOT_READY until both are complete; the open batch is submitted by the
 * look, so polling ends. */
static void test_elapsed_not_ready(void **state)
{
    (void)state;
    env e = {0};
    e.f = fake_create();
    fake_set_complete(e.f, FAKE_COMPLETE_MANUAL);
    open_env(&e);
    salvo_event *a = event_new(e.dev), *b = event_new(e.dev);
    assert_int_equal(salvo_event_record(a, e.st), SALVO_OK);
    launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_event_record(b, e.st), SALVO_OK);
    uint64_t ns = 99;
    assert_int_equal(salvo_event_elapsed(a, b, &ns), SALVO_NOT_READY);
    assert_int_equal(ns, 0);
    assert_int_equal(fake_pending(e.f), 1); /* submitted by the look */
    assert_int_equal(salvo_event_query(b), SALVO_NOT_READY);
    assert_int_equal(salvo_event_wait(b, 0), SALVO_TIMEOUT);
    assert_int_equal(salvo_event_wait(b, 2 * 1000 * 1000), SALVO_TIMEOUT);
    assert_true(fake_complete_all(e.f) >= 1);
    assert_int_equal(salvo_event_wait(b, 0), SALVO_OK);
    assert_int_equal(elapsed_ok(a, b), FAKE_DISPATCH_TICKS + 1);
    salvo_event_destroy(a);
    salvo_event_destroy(b);
    fake_set_complete(e.f, FAKE_COMPLETE_AUTO);
    close_env(&e);
}

/* No timestamps: UNSUPPORTED, and a record writes nothing (an idle
 * stream's event is complete at once, as before). */
static void test_unsupported(void **state)
{
    (void)state;
    env e = {0};
    e.f = fake_create();
    e.f->timestamps = false;
    open_env(&e);
    salvo_event *a = event_new(e.dev), *b = event_new(e.dev);
    assert_int_equal(salvo_event_record(a, e.st), SALVO_OK);
    assert_int_equal(salvo_event_query(a), SALVO_OK);
    launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_event_record(b, e.st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    uint64_t ns = 5;
    assert_int_equal(salvo_event_elapsed(a, b, &ns), SALVO_ERROR_UNSUPPORTED);
    assert_int_equal(ns, 0);
    assert_int_equal(fake_calls(e.f, "querypool_create"), 0);
    salvo_event_destroy(a);
    salvo_event_destroy(b);
    close_env(&e);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    env e = {0};
    open_env(&e);
    salvo_event *a = event_new(e.dev), *b = event_new(e.dev);
    uint64_t ns = 1;
    assert_int_equal(salvo_event_elapsed(NULL, b, &ns), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ns, 0);
    assert_int_equal(salvo_event_elapsed(a, NULL, &ns), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_event_elapsed(a, b, NULL), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_event_elapsed(a, b, &ns), SALVO_ERROR_INVALID_ARGUMENT); /* never recorded */
    assert_int_equal(salvo_event_record(a, e.st), SALVO_OK);
    assert_int_equal(salvo_event_elapsed(a, b, &ns), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_event_wait(NULL, 0), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_stream_query(NULL), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_event_wait(b, 0), SALVO_OK); /* never recorded: nothing to wait for */
    /* Another device's event. */
    env o = {0};
    open_env(&o);
    salvo_event *x = event_new(o.dev);
    assert_int_equal(salvo_event_record(x, o.st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(o.st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    assert_int_equal(salvo_event_elapsed(a, x, &ns), SALVO_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(salvo_last_error(), "different devices"));
    salvo_event_destroy(x);
    close_env(&o);
    salvo_event_destroy(a);
    salvo_event_destroy(b);
    close_env(&e);
}

/* Captured events are points of a graph; cancelled ones read CANCELLED,
 * and their batch's other events keep their times: those among the
 * withdrawn work mark the batch's start, the others stay where they were
 * among the work that remains. */
static void test_capture_and_cancel(void **state)
{
    (void)state;
    env e = {0};
    open_env(&e);
    salvo_event *a = event_new(e.dev), *b = event_new(e.dev), *c = event_new(e.dev);
    assert_int_equal(salvo_event_record(a, e.st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    assert_int_equal(salvo_stream_begin_capture(e.st), SALVO_OK);
    assert_int_equal(salvo_stream_query(e.st), SALVO_ERROR_INVALID_STATE);
    assert_int_equal(salvo_event_record(b, e.st), SALVO_OK);
    uint64_t ns = 0;
    assert_int_equal(salvo_event_elapsed(a, b, &ns), SALVO_ERROR_INVALID_STATE);
    assert_int_equal(salvo_event_wait(b, 0), SALVO_ERROR_INVALID_STATE);
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_end_capture(e.st, &g), SALVO_OK);
    salvo_graph_destroy(g);

    /* a, launch, c, launch, b; cancel b: both launches are withdrawn, a
     * and c both mark the batch's start, at the same time (the fake's
     * clock: a dispatch is FAKE_DISPATCH_TICKS, a timestamp 1). */
    uint64_t dispatched = fake_dispatches_completed(e.f);
    assert_int_equal(salvo_event_record(a, e.st), SALVO_OK);
    launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_event_record(c, e.st), SALVO_OK);
    launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_event_record(b, e.st), SALVO_OK);
    assert_int_equal(salvo_event_cancel(b), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    assert_int_equal(fake_dispatches_completed(e.f), dispatched);
    assert_int_equal(salvo_event_elapsed(a, b, &ns), SALVO_CANCELLED);
    assert_int_equal(elapsed_ok(a, c), 0);
    assert_int_equal(salvo_event_wait(b, 0), SALVO_CANCELLED);
    /* a, launch, b, launch, c; cancel b: the first launch is withdrawn;
     * a marks the start, then b's timestamp, the second launch, c. */
    assert_int_equal(salvo_event_record(a, e.st), SALVO_OK);
    launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_event_record(b, e.st), SALVO_OK);
    launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_event_record(c, e.st), SALVO_OK);
    assert_int_equal(salvo_event_cancel(b), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    assert_int_equal(fake_dispatches_completed(e.f), dispatched + 1);
    assert_int_equal(elapsed_ok(a, c), FAKE_DISPATCH_TICKS + 2);
    /* Only timestamps before an event: nothing to cancel. */
    assert_int_equal(salvo_event_record(a, e.st), SALVO_OK);
    assert_int_equal(salvo_event_record(b, e.st), SALVO_OK);
    assert_int_equal(salvo_event_cancel(b), SALVO_ERROR_INVALID_STATE);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    assert_int_equal(elapsed_ok(a, b), 1);
    /* Recorded again, they time again. */
    assert_int_equal(salvo_event_record(a, e.st), SALVO_OK);
    launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_event_record(c, e.st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    assert_int_equal(elapsed_ok(a, c), FAKE_DISPATCH_TICKS + 1);
    salvo_event_destroy(a);
    salvo_event_destroy(b);
    salvo_event_destroy(c);
    close_env(&e);
}

/* The query pool cannot be made: the record fails and changes nothing; a
 * later record times again. A refused submit: BATCH_FAILED. */
static void test_failures(void **state)
{
    (void)state;
    env e = {0};
    open_env(&e);
    salvo_event *a = event_new(e.dev), *b = event_new(e.dev);
    fake_set_result(e.f, "querypool_create", 1, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_int_equal(salvo_event_record(a, e.st), SALVO_ERROR_OUT_OF_DEVICE_MEMORY);
    uint64_t ns = 0;
    assert_int_equal(salvo_event_elapsed(a, a, &ns), SALVO_ERROR_INVALID_ARGUMENT); /* not recorded */
    assert_int_equal(salvo_event_record(a, e.st), SALVO_OK);
    launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_event_record(b, e.st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    assert_int_equal(elapsed_ok(a, b), FAKE_DISPATCH_TICKS + 1);

    /* The batch holding b is refused at submit. */
    launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_event_record(b, e.st), SALVO_OK);
    fake_set_result(e.f, "submit", 1, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_int_equal(salvo_stream_query(e.st), SALVO_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_int_equal(salvo_stream_query(e.st), SALVO_OK); /* reported once */
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    assert_int_equal(salvo_event_elapsed(a, b, &ns), SALVO_ERROR_BATCH_FAILED);
    salvo_event_destroy(a);
    salvo_event_destroy(b);
    close_env(&e);
}

/* A record that fails records nothing: the event keeps its mark. Here a
 * record on a second stream cannot open that stream's batch; the event is
 * still the first stream's point after a launch not yet submitted, so a
 * cancel withdraws that launch (the random tester's seed 9125746 met
 * this, and its model wrongly took the event as moved). */
static void test_failed_record_keeps_mark(void **state)
{
    (void)state;
    env e = {0};
    open_env(&e);
    salvo_stream *other = NULL;
    assert_int_equal(salvo_stream_create(e.dev, NULL, &other), SALVO_OK);
    salvo_event *ev = event_new(e.dev);
    uint64_t done = fake_dispatches_completed(e.f);
    launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_event_record(ev, e.st), SALVO_OK);
    fake_set_result(e.f, "cmd_begin", 1, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_int_equal(salvo_event_record(ev, other), SALVO_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_int_equal(salvo_event_cancel(ev), SALVO_OK);
    assert_int_equal(salvo_event_query(ev), SALVO_CANCELLED);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(other), SALVO_OK);
    assert_int_equal(fake_dispatches_completed(e.f), done); /* withdrawn: never ran */

    /* A cancelled event stays cancelled through a failed record. */
    fake_set_result(e.f, "cmd_begin", 1, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_int_equal(salvo_event_record(ev, other), SALVO_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_int_equal(salvo_event_query(ev), SALVO_CANCELLED);
    /* And one recorded again where it can be is a point as any. */
    launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_event_record(ev, e.st), SALVO_OK);
    assert_int_equal(salvo_event_synchronize(ev), SALVO_OK);
    assert_int_equal(fake_dispatches_completed(e.f), done + 1);

    /* A record on a lost device records nothing either: a cancelled event
     * stays cancelled (before, the record cleared that and the query
     * said the loss). */
    launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_event_record(ev, e.st), SALVO_OK);
    assert_int_equal(salvo_event_cancel(ev), SALVO_OK);
    fake_lose_device(e.f);
    assert_int_equal(salvo_stream_synchronize(other), SALVO_OK); /* idle: nothing lost */
    launch_ok(other, e.k, e.buf);
    assert_int_equal(salvo_stream_synchronize(other), SALVO_ERROR_DEVICE_LOST);
    assert_int_equal(salvo_event_record(ev, e.st), SALVO_ERROR_DEVICE_LOST);
    assert_int_equal(salvo_event_query(ev), SALVO_CANCELLED);
    salvo_event_destroy(ev);
    salvo_stream_destroy(other);
    close_env(&e);
}

/* More events pending than one pool holds; events recorded again while
 * their earlier batch is pending; destroyed while pending. */
static void test_many_pending(void **state)
{
    (void)state;
    env e = {0};
    e.f = fake_create();
    fake_set_complete(e.f, FAKE_COMPLETE_MANUAL);
    open_env(&e);
    enum { N = 150 };
    /* One batch for them all (nothing completes meanwhile). */
    salvo_stream_destroy(e.st);
    salvo_stream_desc sd = {.batch_size = 4 * N, .first_batch = 4 * N};
    assert_int_equal(salvo_stream_create(e.dev, &sd, &e.st), SALVO_OK);
    salvo_event *ev[N];
    for (int i = 0; i < N; i++) {
        ev[i] = event_new(e.dev);
        assert_int_equal(salvo_event_record(ev[i], e.st), SALVO_OK);
        launch_ok(e.st, e.k, e.buf);
    }
    assert_int_equal(salvo_stream_flush(e.st), SALVO_OK);
    /* Again, into the next batch, while the first is pending. */
    for (int i = 0; i < N; i += 2)
        assert_int_equal(salvo_event_record(ev[i], e.st), SALVO_OK);
    salvo_event *gone = event_new(e.dev);
    assert_int_equal(salvo_event_record(gone, e.st), SALVO_OK);
    salvo_event_destroy(gone); /* while its mark is pending */
    assert_int_equal(salvo_stream_query(e.st), SALVO_NOT_READY);
    fake_complete_all(e.f);
    assert_int_equal(salvo_stream_query(e.st), SALVO_OK);
    for (int i = 1; i + 2 < N; i += 2)
        assert_int_equal(elapsed_ok(ev[i], ev[i + 2]), 2 * FAKE_DISPATCH_TICKS + 2);
    for (int i = 0; i + 2 < N; i += 2)
        assert_int_equal(elapsed_ok(ev[i], ev[i + 2]), 1);
    for (int i = 0; i < N; i++)
        salvo_event_destroy(ev[i]);
    fake_set_complete(e.f, FAKE_COMPLETE_AUTO);
    close_env(&e);
}

/* stream_query: NOT_READY while work runs (the open batch submitted), OK
 * after; a stream held by a gate stays NOT_READY and never blocks. */
static void test_stream_query(void **state)
{
    (void)state;
    env e = {0};
    e.f = fake_create();
    fake_set_complete(e.f, FAKE_COMPLETE_MANUAL);
    open_env(&e);
    assert_int_equal(salvo_stream_query(e.st), SALVO_OK);
    launch_ok(e.st, e.k, e.buf);
    assert_int_equal(fake_pending(e.f), 0);
    assert_int_equal(salvo_stream_query(e.st), SALVO_NOT_READY);
    assert_int_equal(fake_pending(e.f), 1);
    fake_complete_all(e.f);
    assert_int_equal(salvo_stream_query(e.st), SALVO_OK);
    salvo_gate *g = NULL;
    assert_int_equal(salvo_gate_create(e.dev, &g), SALVO_OK);
    assert_int_equal(salvo_stream_wait_gate(e.st, g, 1), SALVO_OK);
    launch_ok(e.st, e.k, e.buf);
    salvo_event *ev = event_new(e.dev);
    assert_int_equal(salvo_event_record(ev, e.st), SALVO_OK);
    assert_int_equal(salvo_stream_query(e.st), SALVO_NOT_READY);
    fake_complete_all(e.f);
    assert_int_equal(salvo_stream_query(e.st), SALVO_NOT_READY);
    assert_int_equal(salvo_event_wait(ev, 1000 * 1000), SALVO_TIMEOUT);
    assert_int_equal(salvo_gate_raise(g, 1), SALVO_OK);
    fake_complete_all(e.f);
    assert_int_equal(salvo_stream_query(e.st), SALVO_OK);
    assert_int_equal(salvo_event_wait(ev, 0), SALVO_OK);
    salvo_event_destroy(ev);
    salvo_gate_destroy(g);
    fake_set_complete(e.f, FAKE_COMPLETE_AUTO);
    close_env(&e);
}

/* A lost device: every one of the calls says so. */
static void test_lost(void **state)
{
    (void)state;
    env e = {0};
    open_env(&e);
    salvo_event *a = event_new(e.dev), *b = event_new(e.dev);
    assert_int_equal(salvo_event_record(a, e.st), SALVO_OK);
    launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_event_record(b, e.st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    fake_lose_device(e.f);
    launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_ERROR_DEVICE_LOST);
    uint64_t ns = 0;
    assert_int_equal(salvo_event_elapsed(a, b, &ns), SALVO_ERROR_DEVICE_LOST);
    assert_int_equal(salvo_event_wait(a, 1000), SALVO_ERROR_DEVICE_LOST);
    assert_int_equal(salvo_stream_query(e.st), SALVO_ERROR_DEVICE_LOST);
    salvo_event_destroy(a);
    salvo_event_destroy(b);
    close_env(&e);
}

/* An event made with SALVO_EVENT_DISABLE_TIMING: a record on a stream
 * with nothing open opens no batch (its mark is the last batch
 * submitted, complete once that is) and writes no timestamp, it orders
 * another stream as a timed one does, and salvo_event_elapsed refuses
 * it, first among its errors. An unknown flag is refused.
 * (unit_launch_ahead: a launch recorded ahead stays so with one.) */
static void test_untimed(void **state)
{
    (void)state;
    env e = {0};
    open_env(&e);
    salvo_event *u = NULL, *t = event_new(e.dev), *bad = (salvo_event *)&e;
    assert_int_equal(salvo_event_create_flags(e.dev, 1u << 5, &bad), SALVO_ERROR_INVALID_ARGUMENT);
    assert_null(bad);
    assert_int_equal(salvo_event_create_flags(e.dev, SALVO_EVENT_DISABLE_TIMING, &u), SALVO_OK);
    assert_non_null(u);

    launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_OK);
    uint64_t submits = fake_calls(e.f, "submit"), stamps = fake_calls(e.f, "cmd_timestamp");
    assert_int_equal(salvo_event_record(u, e.st), SALVO_OK); /* nothing open */
    assert_int_equal(salvo_event_query(u), SALVO_OK);        /* the last batch: done */
    assert_int_equal(salvo_stream_query(e.st), SALVO_OK);
    assert_int_equal(fake_calls(e.f, "submit"), submits);
    /* The timed one opens a batch for its timestamp, which a query submits. */
    assert_int_equal(salvo_event_record(t, e.st), SALVO_OK);
    assert_int_equal(salvo_event_synchronize(t), SALVO_OK);
    assert_int_equal(fake_calls(e.f, "submit"), submits + 1);
    assert_int_equal(fake_calls(e.f, "cmd_timestamp"), stamps + 1);

    /* Another stream waits for it: the wait goes in before its launch. */
    salvo_stream *other = NULL;
    assert_int_equal(salvo_stream_create(e.dev, NULL, &other), SALVO_OK);
    launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_event_record(u, e.st), SALVO_OK);
    assert_int_equal(salvo_stream_wait_event(other, u), SALVO_OK);
    launch_ok(other, e.k, e.buf);
    assert_int_equal(salvo_stream_synchronize(other), SALVO_OK);
    assert_int_equal(salvo_event_query(u), SALVO_OK); /* the other stream's work followed it */

    /* elapsed: refused with either end untimed, before the other checks. */
    uint64_t ns = 9;
    assert_int_equal(salvo_event_elapsed(t, u, &ns), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ns, 0);
    assert_int_equal(salvo_event_elapsed(u, t, &ns), SALVO_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(salvo_last_error(), "SALVO_EVENT_DISABLE_TIMING"));
    assert_int_equal(salvo_event_elapsed(t, t, &ns), SALVO_OK);
    fake_lose_device(e.f);
    launch_ok(e.st, e.k, e.buf);
    assert_int_equal(salvo_stream_synchronize(e.st), SALVO_ERROR_DEVICE_LOST);
    assert_int_equal(salvo_event_elapsed(u, u, &ns), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_event_elapsed(t, t, &ns), SALVO_ERROR_DEVICE_LOST);
    salvo_stream_destroy(other);
    salvo_event_destroy(u);
    salvo_event_destroy(t);
    close_env(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_elapsed_exact),   cmocka_unit_test(test_elapsed_not_ready),
        cmocka_unit_test(test_unsupported),     cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_capture_and_cancel), cmocka_unit_test(test_failures),
        cmocka_unit_test(test_many_pending),    cmocka_unit_test(test_stream_query),
        cmocka_unit_test(test_lost),            cmocka_unit_test(test_failed_record_keeps_mark),
        cmocka_unit_test(test_queries_reset_on_host),
        cmocka_unit_test(test_read_when_asked),
        cmocka_unit_test(test_untimed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
