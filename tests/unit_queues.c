/* Several hardware queues, on the fake accelerator (lavapipe has one):
 * streams take queues in turn, nothing orders two streams but an event or
 * a gate, an event wait across queues is a device-side timeline wait, a
 * stream's timeline outlives the batches that wait on it, and a lost
 * device abandons every queue's work. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "add.spv.h"
#include "api/internal.h"
#include "support/fake_accel.h"

typedef struct env {
    fake_accel *f;
    salvo_device *dev;
    salvo_kernel *k;
    salvo_buffer *buf[4];
    salvo_stream *st[4];
} env;

static void open_env(env *e, uint32_t queues, fake_complete_mode mode)
{
    memset(e, 0, sizeof *e);
    e->f = fake_create();
    assert_non_null(e->f);
    e->f->queue_count = queues;
    e->f->complete = mode;
    salvo_device_desc d = {.batch_size = 64};
    assert_int_equal(device_create_with_accel(&d, fake_accel_get(e->f), &e->dev), SALVO_OK);
    salvo_kernel_desc kd = {.spirv = add_spv, .spirv_size = sizeof add_spv, .name = "add"};
    assert_int_equal(salvo_kernel_create(e->dev, &kd, &e->k), SALVO_OK);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(salvo_buffer_create(e->dev, 1024, SALVO_DOMAIN_DEVICE, &e->buf[i]),
                         SALVO_OK);
        assert_int_equal(salvo_stream_create(e->dev, NULL, &e->st[i]), SALVO_OK);
    }
}

static void close_env(env *e)
{
    for (int i = 0; i < 4; i++) {
        salvo_stream_destroy(e->st[i]);
        salvo_buffer_destroy(e->buf[i]);
    }
    salvo_kernel_destroy(e->k);
    salvo_device_destroy(e->dev);
    if (fake_illegal_total(e->f))
        fail_msg("illegal use of the fake: %s", fake_illegal_last(e->f));
    assert_int_equal(fake_live_total(e->f), 0);
    fake_free(e->f);
}

static salvo_status launch(env *e, int stream, int buffer)
{
    salvo_binding b = {.binding = 0, .buffer = e->buf[buffer]};
    uint32_t push[2] = {256, 1};
    uint32_t groups[3] = {4, 1, 1};
    return salvo_launch(e->st[stream], e->k, groups, &b, 1, push, sizeof push);
}

/* Four streams on two queues: queues 0, 1, 0, 1 by creation. */
static void test_streams_take_queues_in_turn(void **state)
{
    (void)state;
    env e;
    open_env(&e, 2, FAKE_COMPLETE_AUTO);
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(e.dev, &info), SALVO_OK);
    assert_int_equal(info.queue_count, 2);
    assert_false(info.high_priority_queue); /* kept only from three queues on */
    for (int s = 0; s < 4; s++) {
        assert_int_equal(launch(&e, s, s), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(e.st[s]), SALVO_OK);
    }
    assert_int_equal(fake_queue_submits(e.f, 0), 2);
    assert_int_equal(fake_queue_submits(e.f, 1), 2);
    assert_int_equal(fake_dispatches_completed(e.f), 4);
    close_env(&e);
}

/* Three queues: the last is kept for high-priority streams; the others
 * share the first two; $SALVO_QUEUES below the count gives it up. */
static void test_high_priority_queue(void **state)
{
    (void)state;
    env e;
    open_env(&e, 3, FAKE_COMPLETE_AUTO);
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(e.dev, &info), SALVO_OK);
    assert_int_equal(info.queue_count, 3);
    assert_true(info.high_priority_queue);
    salvo_stream *high = NULL;
    salvo_stream_desc hd = {.priority = 1};
    assert_int_equal(salvo_stream_create(e.dev, &hd, &high), SALVO_OK);
    for (int s = 0; s < 4; s++) {
        assert_int_equal(launch(&e, s, s), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(e.st[s]), SALVO_OK);
    }
    salvo_binding b = {.binding = 0, .buffer = e.buf[0]};
    uint32_t push[2] = {256, 1};
    uint32_t groups[3] = {4, 1, 1};
    assert_int_equal(salvo_launch(high, e.k, groups, &b, 1, push, sizeof push), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(high), SALVO_OK);
    assert_int_equal(fake_queue_submits(e.f, 0), 2);
    assert_int_equal(fake_queue_submits(e.f, 1), 2);
    assert_int_equal(fake_queue_submits(e.f, 2), 1);
    salvo_stream_destroy(high);
    close_env(&e);

    setenv("SALVO_QUEUES", "2", 1);
    open_env(&e, 3, FAKE_COMPLETE_AUTO);
    unsetenv("SALVO_QUEUES");
    assert_int_equal(salvo_device_info_get(e.dev, &info), SALVO_OK);
    assert_int_equal(info.queue_count, 2);
    assert_false(info.high_priority_queue);
    b.buffer = e.buf[0]; /* this device's */
    assert_int_equal(salvo_stream_create(e.dev, &hd, &high), SALVO_OK);
    assert_int_equal(salvo_launch(high, e.k, groups, &b, 1, push, sizeof push), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(high), SALVO_OK);
    assert_int_equal(fake_queue_submits(e.f, 2), 0);
    salvo_stream_destroy(high);
    close_env(&e);
}

/* A stream held by a gate does not hold up a stream on another queue:
 * the second completes and synchronizes while the gate is down. */
static void test_no_false_ordering(void **state)
{
    (void)state;
    env e;
    open_env(&e, 2, FAKE_COMPLETE_AUTO);
    salvo_gate *g = NULL;
    assert_int_equal(salvo_gate_create(e.dev, &g), SALVO_OK);
    assert_int_equal(salvo_stream_wait_gate(e.st[0], g, 1), SALVO_OK);
    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    assert_int_equal(launch(&e, 1, 1), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[1]), SALVO_OK);
    assert_int_equal(fake_dispatches_completed(e.f), 1);
    assert_int_equal(salvo_gate_raise(g, 1), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(fake_dispatches_completed(e.f), 2);
    salvo_gate_destroy(g);
    close_env(&e);
}

/* An event recorded on a gated stream and waited on by a stream on
 * another queue: the waiting batch runs only after the event's batch,
 * through the device (no host wait: the calls return at once). */
static void test_event_wait_across_queues(void **state)
{
    (void)state;
    env e;
    open_env(&e, 2, FAKE_COMPLETE_MANUAL);
    salvo_gate *g = NULL;
    salvo_event *ev = NULL;
    assert_int_equal(salvo_gate_create(e.dev, &g), SALVO_OK);
    assert_int_equal(salvo_event_create(e.dev, &ev), SALVO_OK);
    assert_int_equal(salvo_stream_wait_gate(e.st[0], g, 1), SALVO_OK);
    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    assert_int_equal(salvo_event_record(ev, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_wait_event(e.st[1], ev), SALVO_OK);
    assert_int_equal(launch(&e, 1, 0), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[1]), SALVO_OK);
    assert_int_equal(fake_queue_submits(e.f, 0), 1); /* the event's batch, submitted */
    assert_int_equal(fake_queue_submits(e.f, 1), 1);
    assert_int_equal(fake_complete_all(e.f), 0); /* both held: by the gate, by the event */
    assert_int_equal(salvo_event_query(ev), SALVO_NOT_READY);
    assert_int_equal(salvo_gate_raise(g, 1), SALVO_OK);
    assert_true(fake_complete_next(e.f)); /* the event's batch first */
    assert_int_equal(fake_dispatches_completed(e.f), 1);
    assert_true(fake_complete_next(e.f)); /* then the waiting one */
    assert_int_equal(fake_dispatches_completed(e.f), 2);
    assert_int_equal(salvo_stream_synchronize(e.st[1]), SALVO_OK);
    assert_int_equal(salvo_event_query(ev), SALVO_OK);
    salvo_event_destroy(ev);
    salvo_gate_destroy(g);
    e.f->complete = FAKE_COMPLETE_AUTO;
    close_env(&e);
}

/* The stream an event belongs to is destroyed while another stream's
 * batch still waits on its timeline: the timeline is freed only once that
 * batch is over (the fake counts a destroy of a semaphore pending work
 * uses as illegal). */
static void test_timeline_outlives_its_stream(void **state)
{
    (void)state;
    env e;
    open_env(&e, 2, FAKE_COMPLETE_MANUAL);
    salvo_event *ev = NULL;
    assert_int_equal(salvo_event_create(e.dev, &ev), SALVO_OK);
    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    assert_int_equal(salvo_event_record(ev, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_wait_event(e.st[1], ev), SALVO_OK);
    assert_int_equal(launch(&e, 1, 0), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[1]), SALVO_OK);
    uint64_t timelines = fake_live(e.f, FAKE_TIMELINE);
    salvo_stream_destroy(e.st[0]);
    e.st[0] = NULL;
    assert_true(fake_complete_next(e.f)); /* stream 0's batch */
    assert_int_equal(salvo_device_synchronize(e.dev), SALVO_TIMEOUT); /* the fake never blocks */
    assert_int_equal(fake_live(e.f, FAKE_TIMELINE), timelines); /* still waited on */
    assert_true(fake_complete_next(e.f));
    assert_int_equal(salvo_device_synchronize(e.dev), SALVO_OK);
    assert_int_equal(fake_live(e.f, FAKE_TIMELINE), timelines - 1);
    assert_int_equal(fake_dispatches_completed(e.f), 2);
    salvo_event_destroy(ev);
    e.f->complete = FAKE_COMPLETE_AUTO;
    close_env(&e);
}

/* A cancel records its batch again: the batch still signals its
 * stream's timeline, so a stream on another queue waiting for a later
 * event of it goes on. */
static void test_cancelled_batch_still_signals(void **state)
{
    (void)state;
    env e;
    open_env(&e, 2, FAKE_COMPLETE_AUTO);
    salvo_event *before = NULL, *after = NULL;
    assert_int_equal(salvo_event_create(e.dev, &before), SALVO_OK);
    assert_int_equal(salvo_event_create(e.dev, &after), SALVO_OK);
    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    assert_int_equal(salvo_event_record(before, e.st[0]), SALVO_OK);
    assert_int_equal(launch(&e, 0, 1), SALVO_OK);
    assert_int_equal(salvo_event_record(after, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_event_cancel(before), SALVO_OK);
    assert_int_equal(salvo_stream_wait_event(e.st[1], after), SALVO_OK);
    assert_int_equal(launch(&e, 1, 2), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[1]), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(fake_dispatches_completed(e.f), 2); /* the withdrawn one never ran */
    salvo_event_destroy(before);
    salvo_event_destroy(after);
    close_env(&e);
}

/* A lost device abandons the work on every queue. */
static void test_loss_abandons_every_queue(void **state)
{
    (void)state;
    env e;
    open_env(&e, 2, FAKE_COMPLETE_MANUAL);
    for (int s = 0; s < 2; s++) {
        assert_int_equal(launch(&e, s, s), SALVO_OK);
        assert_int_equal(salvo_stream_flush(e.st[s]), SALVO_OK);
    }
    assert_int_equal(fake_queue_submits(e.f, 0), 1);
    assert_int_equal(fake_queue_submits(e.f, 1), 1);
    fake_lose_device(e.f);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_ERROR_DEVICE_LOST);
    assert_int_equal(salvo_stream_synchronize(e.st[1]), SALVO_ERROR_DEVICE_LOST);
    salvo_stats s;
    assert_int_equal(salvo_device_stats(e.dev, &s), SALVO_OK);
    assert_int_equal(s.launches_pending, 0);
    close_env(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_streams_take_queues_in_turn),
        cmocka_unit_test(test_high_priority_queue),
        cmocka_unit_test(test_no_false_ordering),
        cmocka_unit_test(test_event_wait_across_queues),
        cmocka_unit_test(test_timeline_outlives_its_stream),
        cmocka_unit_test(test_cancelled_batch_still_signals),
        cmocka_unit_test(test_loss_abandons_every_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
