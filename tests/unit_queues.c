/* Several hardware queues, on the fake accelerator (lavapipe has one):
 * streams take queues in turn, nothing orders two streams but an event or
 * a gate, an event wait across queues is a device-side timeline wait, a
 * stream's timeline outlives the batches that wait on it, and a lost
 * device abandons every queue's work. On one queue, where the queue's
 * order alone puts a stream after the event it waits for, the stream's
 * synchronize, query and later event records still cover that event's
 * work. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "add.spv.h"
#include "api/internal.h"
#include "accel/accel_fault.h"
#include "core/wait.h"
#include "support/fake_accel.h"

typedef struct env {
    fake_accel *f;
    salvo_device *dev;
    salvo_kernel *k;
    salvo_buffer *buf[4];
    salvo_stream *st[4];
} env;

/* The fake alone: queues compute queues, and a copy queue (index queues)
 * when copy. A test may change more of its settings, then open_device. */
static void open_fake(env *e, uint32_t queues, fake_complete_mode mode, bool copy)
{
    memset(e, 0, sizeof *e);
    e->f = fake_create();
    assert_non_null(e->f);
    e->f->queue_count = queues;
    e->f->transfer_queue = copy;
    e->f->complete = mode;
}

/* The device over e's fake, with the add kernel, four DEVICE buffers of
 * 1 KiB and four streams. */
static void open_device(env *e, const salvo_device_desc *d)
{
    assert_int_equal(device_create_with_accel(d, fake_accel_get(e->f), &e->dev), SALVO_OK);
    salvo_kernel_desc kd = {.spirv = add_spv, .spirv_size = sizeof add_spv, .name = "add"};
    assert_int_equal(salvo_kernel_create(e->dev, &kd, &e->k), SALVO_OK);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(salvo_buffer_create(e->dev, 1024, SALVO_DOMAIN_DEVICE, &e->buf[i]),
                         SALVO_OK);
        assert_int_equal(salvo_stream_create(e->dev, NULL, &e->st[i]), SALVO_OK);
    }
}

static void open_env_copy(env *e, uint32_t queues, fake_complete_mode mode, bool copy)
{
    open_fake(e, queues, mode, copy);
    open_device(e, &(salvo_device_desc){.batch_size = 64});
}

static void open_env(env *e, uint32_t queues, fake_complete_mode mode)
{
    open_env_copy(e, queues, mode, false);
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

/* Streams 0 and 1 only, each alone on its queue (of two): a gated batch
 * then goes to the device, since it holds up no other stream. */
static void two_streams_only(env *e)
{
    for (int i = 2; i < 4; i++) {
        salvo_stream_destroy(e->st[i]);
        e->st[i] = NULL;
    }
}

static salvo_status launch(env *e, int stream, int buffer)
{
    salvo_binding b = {.binding = 0, .buffer = e->buf[buffer]};
    uint32_t push[2] = {256, 1};
    uint32_t groups[3] = {4, 1, 1};
    return salvo_launch(e->st[stream], e->k, groups, &b, 1, push, sizeof push);
}

/* Every command passes the one epilogue: batches grow towards the full
 * size whichever command fills them. One fill, then 2,000 times a fill
 * and a launch, takes as many batches as 4,001 launches (the first small,
 * each next doubling up to 64). */
static uint64_t batches_for(bool fills)
{
    env e;
    open_env(&e, 1, FAKE_COMPLETE_AUTO);
    salvo_stats s0, s1;
    assert_int_equal(salvo_device_stats(e.dev, &s0), SALVO_OK);
    if (fills)
        assert_int_equal(salvo_fill(e.st[0], e.buf[1], 0, 1024, 0), SALVO_OK);
    else
        assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    for (int i = 0; i < 2000; i++) {
        if (fills)
            assert_int_equal(salvo_fill(e.st[0], e.buf[1], 0, 1024, (uint32_t)i), SALVO_OK);
        else
            assert_int_equal(launch(&e, 0, 0), SALVO_OK);
        assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    }
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(salvo_device_stats(e.dev, &s1), SALVO_OK);
    close_env(&e);
    return s1.batches_submitted - s0.batches_submitted;
}

static void test_batches_grow_after_any_command(void **state)
{
    (void)state;
    uint64_t launches = batches_for(false), mixed = batches_for(true);
    print_message("4,001 launches: %llu batches; fill + 2,000 (fill + launch): %llu\n",
                  (unsigned long long)launches, (unsigned long long)mixed);
    assert_true(launches < 80);
    assert_int_equal(mixed, launches);
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
/* The highest level the log was given, and how many messages. */
static _Atomic int top_level = -1;
static void note_level(void *user, salvo_log_level level, const char *file, int line,
                       const char *message)
{
    (void)user;
    (void)file;
    (void)line;
    (void)message;
    if ((int)level > atomic_load(&top_level))
        atomic_store(&top_level, (int)level);
}

/* SALVO_TIMEOUT is not an error (the header): a bounded wait that expires
 * logs no error, though salvo_last_error() says what expired. It was
 * once logged at the error level, and a program polling an event with
 * short bounds saw an error line a poll. Errors still log as errors. */
static void test_expired_wait_logs_no_error(void **state)
{
    (void)state;
    env e;
    open_fake(&e, 1, FAKE_COMPLETE_MANUAL, false);
    open_device(&e, &(salvo_device_desc){.log = note_level});
    salvo_event *ev = NULL;
    assert_int_equal(salvo_event_create(e.dev, &ev), SALVO_OK);
    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    assert_int_equal(salvo_event_record(ev, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    atomic_store(&top_level, -1);
    assert_int_equal(salvo_event_wait(ev, 1000), SALVO_TIMEOUT);
    assert_true(atomic_load(&top_level) < SALVO_LOG_ERROR);
    assert_true(strlen(salvo_last_error()) > 0);
    uint32_t word;
    assert_int_equal(salvo_buffer_read(e.buf[1], 1u << 20, &word, 4),
                     SALVO_ERROR_INVALID_ARGUMENT); /* past the end */
    assert_int_equal(atomic_load(&top_level), SALVO_LOG_ERROR);
    fake_complete_all(e.f);
    assert_int_equal(salvo_event_synchronize(ev), SALVO_OK);
    salvo_event_destroy(ev);
    fake_set_complete(e.f, FAKE_COMPLETE_AUTO);
    close_env(&e);
}

static void test_event_wait_across_queues(void **state)
{
    (void)state;
    env e;
    open_env_copy(&e, 2, FAKE_COMPLETE_MANUAL, true); /* queue 0: no staged copies */
    two_streams_only(&e);
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
    fake_set_complete(e.f, FAKE_COMPLETE_AUTO);
    close_env(&e);
}

/* An event's point does not take the waits added after it: recorded on a
 * batch that holds only a gate's wait, the event is complete once that
 * gate is raised, though the stream's later work waits for a second gate
 * (that wait once went into the event's batch). Likewise a stream that
 * waits for another stream's event after recording one of its own. */
static void test_event_point_keeps_out_later_waits(void **state)
{
    (void)state;
    env e;
    open_env(&e, 1, FAKE_COMPLETE_AUTO);
    salvo_gate *g1 = NULL, *g2 = NULL;
    salvo_event *ev = NULL, *other = NULL;
    assert_int_equal(salvo_gate_create(e.dev, &g1), SALVO_OK);
    assert_int_equal(salvo_gate_create(e.dev, &g2), SALVO_OK);
    assert_int_equal(salvo_event_create(e.dev, &ev), SALVO_OK);
    assert_int_equal(salvo_event_create(e.dev, &other), SALVO_OK);
    assert_int_equal(salvo_stream_wait_gate(e.st[0], g1, 1), SALVO_OK);
    assert_int_equal(salvo_event_record(ev, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_wait_gate(e.st[0], g2, 1), SALVO_OK);
    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    assert_int_equal(salvo_event_query(ev), SALVO_NOT_READY);
    assert_int_equal(salvo_gate_raise(g1, 1), SALVO_OK);
    assert_int_equal(salvo_event_query(ev), SALVO_OK);
    assert_int_equal(salvo_event_wait(ev, 0), SALVO_OK);
    assert_int_equal(fake_dispatches_completed(e.f), 0); /* behind g2 */
    assert_int_equal(salvo_stream_query(e.st[0]), SALVO_NOT_READY);

    /* Across streams: stream 1 records after a wait for gate g1 (raised:
     * nothing holds it), then waits for stream 0's event behind g2. */
    assert_int_equal(salvo_event_record(other, e.st[0]), SALVO_OK); /* behind g2 */
    salvo_gate *g3 = NULL;
    assert_int_equal(salvo_gate_create(e.dev, &g3), SALVO_OK);
    assert_int_equal(salvo_stream_wait_gate(e.st[1], g3, 1), SALVO_OK);
    assert_int_equal(salvo_event_record(ev, e.st[1]), SALVO_OK);
    assert_int_equal(salvo_stream_wait_event(e.st[1], other), SALVO_OK);
    assert_int_equal(launch(&e, 1, 1), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[1]), SALVO_OK);
    assert_int_equal(salvo_gate_raise(g3, 1), SALVO_OK);
    assert_int_equal(salvo_event_query(ev), SALVO_OK); /* not behind g2 */
    assert_int_equal(salvo_event_query(other), SALVO_NOT_READY);
    assert_int_equal(salvo_gate_raise(g2, 1), SALVO_OK);
    assert_int_equal(salvo_device_synchronize(e.dev), SALVO_OK);
    assert_int_equal(fake_dispatches_completed(e.f), 2);
    assert_int_equal(salvo_event_query(other), SALVO_OK);
    salvo_event_destroy(ev);
    salvo_event_destroy(other);
    salvo_gate_destroy(g1);
    salvo_gate_destroy(g2);
    salvo_gate_destroy(g3);
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
    fake_set_complete(e.f, FAKE_COMPLETE_AUTO);
    close_env(&e);
}

/* The hook of test_wait_opens_after_owner_freed: at the first poll the
 * device runs everything submitted so far, and another thread asks after
 * the event, which sees the destroyed stream's work over and frees the
 * stream, while the polling thread's wait goes on. */
static salvo_event *asked_event;

static void *query_event(void *user)
{
    (void)user;
    salvo_status *r = malloc(sizeof *r);
    if (r)
        *r = salvo_event_query(asked_event);
    return r;
}

static salvo_status query_status;

static void complete_all_once(void *user)
{
    env *e = user;
    e->f->timeline_value_hook = NULL;
    e->f->fence_status_hook = NULL;
    fake_complete_all(e->f);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, query_event, NULL), 0);
    void *r = NULL;
    pthread_join(t, &r);
    assert_non_null(r);
    query_status = *(salvo_status *)r;
    free(r);
}

/* An event wait opens the waiting stream's next batch, which may wait for
 * a free slot; while it waits, the event's batch can end and its stream,
 * destroyed, be freed, its timeline's release tagged below the serial of
 * the batch then opened. That batch must not wait on the timeline: it
 * would be gone before the batch is submitted, or while it is pending. */
static void test_wait_opens_after_owner_freed(void **state)
{
    (void)state;
    env e;
    setenv("SALVO_SPIN_US", "1000", 1); /* waits poll the timeline: the hook runs */
    open_env(&e, 2, FAKE_COMPLETE_MANUAL);
    unsetenv("SALVO_SPIN_US");
    two_streams_only(&e);
    salvo_event *ev = NULL;
    assert_int_equal(salvo_event_create(e.dev, &ev), SALVO_OK);
    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    assert_int_equal(salvo_event_record(ev, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    /* Every slot of stream 1's ring in flight: its next batch waits. */
    for (int i = 0; i < STREAM_SLOTS; i++) {
        assert_int_equal(launch(&e, 1, 1), SALVO_OK);
        assert_int_equal(salvo_stream_flush(e.st[1]), SALVO_OK);
    }
    uint64_t timelines = fake_live(e.f, FAKE_TIMELINE);
    salvo_stream_destroy(e.st[0]); /* busy: freed once its batch is over */
    e.st[0] = NULL;
    assert_int_equal(fake_live(e.f, FAKE_TIMELINE), timelines);
    e.f->hook_user = &e;
    e.f->timeline_value_hook = complete_all_once;
    e.f->fence_status_hook = complete_all_once;
    query_status = SALVO_ERROR_INVALID_STATE;
    asked_event = ev;
    assert_int_equal(salvo_stream_wait_event(e.st[1], ev), SALVO_OK);
    assert_null(e.f->timeline_value_hook); /* the wait for a slot happened */
    assert_int_equal(query_status, SALVO_OK);
    assert_int_equal(launch(&e, 1, 1), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[1]), SALVO_OK);
    if (fake_illegal_total(e.f))
        fail_msg("illegal use of the fake: %s", fake_illegal_last(e.f));
    assert_int_equal(fake_complete_all(e.f), 1); /* waits for nothing */
    assert_int_equal(salvo_stream_synchronize(e.st[1]), SALVO_OK);
    if (fake_illegal_total(e.f))
        fail_msg("illegal use of the fake: %s", fake_illegal_last(e.f));
    /* Stream 0 was freed, its timeline with it. */
    assert_int_equal(fake_live(e.f, FAKE_TIMELINE), timelines - 1);
    assert_int_equal(fake_dispatches_completed(e.f), 2 + STREAM_SLOTS);
    salvo_event_destroy(ev);
    fake_set_complete(e.f, FAKE_COMPLETE_AUTO);
    close_env(&e);
}

/* A stream destroyed while busy is freed by the drain point that finds
 * its work over; its timeline's release, queued by that free, runs within
 * the same call: afterwards nothing is left pending that waits for
 * nothing, and the timeline is gone. An idle stream's goes at once. */
static void test_busy_stream_freed_at_drain_point(void **state)
{
    (void)state;
    env e;
    open_env(&e, 2, FAKE_COMPLETE_MANUAL);
    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    uint64_t timelines = fake_live(e.f, FAKE_TIMELINE);
    salvo_stream_destroy(e.st[0]); /* busy: freed later */
    e.st[0] = NULL;
    assert_int_equal(fake_live(e.f, FAKE_TIMELINE), timelines);
    assert_true(fake_complete_next(e.f));
    assert_int_equal(salvo_device_synchronize(e.dev), SALVO_OK);
    assert_int_equal(fake_live(e.f, FAKE_TIMELINE), timelines - 1);
    salvo_stats s;
    assert_int_equal(salvo_device_stats(e.dev, &s), SALVO_OK);
    assert_int_equal(s.live_streams, 3);
    assert_int_equal(s.releases_pending, 0);
    /* An idle stream's timeline goes with its destroy. */
    salvo_stream_destroy(e.st[1]);
    e.st[1] = NULL;
    assert_int_equal(fake_live(e.f, FAKE_TIMELINE), timelines - 2);
    fake_set_complete(e.f, FAKE_COMPLETE_AUTO);
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

static salvo_buffer *host_buffer(env *e, uint32_t seed)
{
    salvo_buffer *h = NULL;
    assert_int_equal(salvo_buffer_create(e->dev, 1024, SALVO_DOMAIN_HOST, &h), SALVO_OK);
    uint32_t *p = NULL;
    assert_int_equal(salvo_buffer_map(h, (void **)&p), SALVO_OK);
    for (uint32_t i = 0; i < 256; i++)
        p[i] = seed + i * 7;
    return h;
}

static void expect_contents(salvo_buffer *b, uint32_t seed)
{
    uint32_t got[256];
    assert_int_equal(salvo_buffer_read(b, 0, got, sizeof got), SALVO_OK);
    for (uint32_t i = 0; i < 256; i++)
        assert_int_equal(got[i], seed + i * 7);
}

/* A copy of HOST memory picks the copy queue when the device is not
 * tracing, but may first wait for a batch slot with the lock dropped: a
 * trace started meanwhile by another thread must find the batch the copy
 * then opens on the stream's own queue (the trace stamps each batch's
 * start with a query reset, which a copy-only queue cannot run; the fake
 * counts that as illegal). Deterministic: the other thread starts the
 * trace, then raises the gate the copy's slot wait is held behind. */
static struct {
    salvo_device *dev;
    salvo_gate *gate;
    pthread_t thread;
    bool started;
    _Atomic bool armed;
    char path[96];
    salvo_status traced, raised;
} tracer;

static void *trace_then_raise(void *arg)
{
    (void)arg;
    tracer.traced = salvo_trace_start(tracer.dev, tracer.path);
    tracer.raised = salvo_gate_raise(tracer.gate, 1);
    return NULL;
}

static void start_tracer(void *user)
{
    (void)user;
    if (atomic_exchange(&tracer.armed, false))
        tracer.started = pthread_create(&tracer.thread, NULL, trace_then_raise, NULL) == 0;
}

static void test_trace_started_during_copy_slot_wait(void **state)
{
    (void)state;
    env e;
    open_env_copy(&e, 1, FAKE_COMPLETE_AUTO, true);
    salvo_buffer *h = host_buffer(&e, 9);
    salvo_gate *g = NULL;
    assert_int_equal(salvo_gate_create(e.dev, &g), SALVO_OK);
    assert_int_equal(salvo_stream_wait_gate(e.st[0], g, 1), SALVO_OK);
    for (int i = 0; i < 3; i++) { /* the ring's three slots, held behind the gate */
        assert_int_equal(launch(&e, 0, 0), SALVO_OK);
        assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    }
    tracer.dev = e.dev;
    tracer.gate = g;
    tracer.started = false;
    snprintf(tracer.path, sizeof tracer.path, "/tmp/salvo_unit_queues_trace_%ld.json",
             (long)getpid());
    atomic_store(&tracer.armed, true);
    e.f->timeline_value_hook = start_tracer;
    assert_int_equal(salvo_copy(e.st[0], h, 0, e.buf[1], 0, 1024), SALVO_OK);
    e.f->timeline_value_hook = NULL;
    assert_true(tracer.started);
    pthread_join(tracer.thread, NULL);
    assert_int_equal(tracer.traced, SALVO_OK);
    assert_int_equal(tracer.raised, SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(salvo_trace_stop(e.dev), SALVO_OK);
    expect_contents(e.buf[1], 9);
    if (fake_illegal_total(e.f))
        fail_msg("illegal use of the fake: %s", fake_illegal_last(e.f));
    remove(tracer.path);
    salvo_gate_destroy(g);
    salvo_buffer_destroy(h);
    close_env(&e);
}

/* A copy to or from a HOST buffer that starts a batch goes to the copy
 * queue; a launch after it opens the next batch on the stream's queue;
 * a device-only copy stays there. The data arrives. */
static void test_host_copies_on_copy_queue(void **state)
{
    (void)state;
    env e;
    open_env_copy(&e, 1, FAKE_COMPLETE_AUTO, true);
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(e.dev, &info), SALVO_OK);
    assert_int_equal(info.queue_count, 1);
    assert_true(info.transfer_queue);
    salvo_buffer *h = host_buffer(&e, 11);
    assert_int_equal(salvo_copy(e.st[0], h, 0, e.buf[0], 0, 1024), SALVO_OK);
    assert_int_equal(launch(&e, 0, 1), SALVO_OK);
    assert_int_equal(salvo_copy(e.st[0], e.buf[0], 0, e.buf[2], 0, 1024), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(fake_queue_submits(e.f, 1), 1); /* the copy */
    assert_int_equal(fake_queue_submits(e.f, 0), 1); /* the launch and the device copy */
    expect_contents(e.buf[2], 11);
    /* A device-only copy that starts a batch stays on the stream's queue. */
    assert_int_equal(salvo_copy(e.st[0], e.buf[2], 0, e.buf[3], 0, 1024), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(fake_queue_submits(e.f, 0), 2);
    assert_int_equal(fake_queue_submits(e.f, 1), 1);
    salvo_buffer_destroy(h);
    close_env(&e);

    /* $SALVO_TRANSFER_QUEUE=0: none, every copy on the stream's queue. */
    setenv("SALVO_TRANSFER_QUEUE", "0", 1);
    open_env_copy(&e, 1, FAKE_COMPLETE_AUTO, true);
    unsetenv("SALVO_TRANSFER_QUEUE");
    assert_int_equal(salvo_device_info_get(e.dev, &info), SALVO_OK);
    assert_false(info.transfer_queue);
    h = host_buffer(&e, 5);
    assert_int_equal(salvo_copy(e.st[0], h, 0, e.buf[0], 0, 1024), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(fake_queue_submits(e.f, 0), 1);
    assert_int_equal(fake_queue_submits(e.f, 1), 0);
    expect_contents(e.buf[0], 5);
    salvo_buffer_destroy(h);
    close_env(&e);
}

/* A submitted batch has the stream's next one begun while the device runs
 * it: the launch after it begins nothing, and the barrier that batch opens
 * with is counted once, when it begins. */
static void test_next_batch_begun_while_device_runs(void **state)
{
    (void)state;
    env e;
    open_env(&e, 1, FAKE_COMPLETE_MANUAL);
    salvo_stats s0, s1;
    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    uint64_t begins = fake_calls(e.f, "cmd_begin");
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    /* Begun at the flush, with the device still running the batch. */
    assert_int_equal(fake_calls(e.f, "cmd_begin"), begins + 1);
    assert_int_equal(fake_queue_submits(e.f, 0), 1);
    assert_int_equal(salvo_device_stats(e.dev, &s0), SALVO_OK);
    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    assert_int_equal(fake_calls(e.f, "cmd_begin"), begins + 1);
    assert_int_equal(salvo_device_stats(e.dev, &s1), SALVO_OK);
    assert_int_equal(s1.barriers_emitted, s0.barriers_emitted + 1);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    assert_int_equal(fake_queue_submits(e.f, 0), 2);
    fake_complete_all(e.f);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    close_env(&e);
}

/* A batch begun ahead on the stream's queue that a copy then takes to the
 * copy queue: the command buffer begun is put back (reset), the copy's
 * batch is begun on the copy queue's, and the data arrives. */
static void test_begun_ahead_then_copy_queue(void **state)
{
    (void)state;
    env e;
    open_env_copy(&e, 1, FAKE_COMPLETE_AUTO, true);
    salvo_buffer *h = host_buffer(&e, 23);
    assert_int_equal(launch(&e, 0, 1), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    uint64_t resets = fake_calls(e.f, "cmd_reset");
    assert_int_equal(salvo_copy(e.st[0], h, 0, e.buf[0], 0, 1024), SALVO_OK);
    assert_int_equal(fake_calls(e.f, "cmd_reset"), resets + 1);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(fake_queue_submits(e.f, 1), 1);
    expect_contents(e.buf[0], 23);
    salvo_buffer_destroy(h);
    close_env(&e); /* fails on any illegal use: a begin while recording */
}

/* A stream stays in order across its two queues: a copy-queue batch
 * waits for the stream's batch before it, and the launch after it waits
 * for it, on the device (the fake runs one queue ahead when asked). */
static void test_copy_queue_keeps_stream_order(void **state)
{
    (void)state;
    env e;
    open_env_copy(&e, 2, FAKE_COMPLETE_MANUAL, true);
    two_streams_only(&e);
    salvo_gate *g = NULL;
    assert_int_equal(salvo_gate_create(e.dev, &g), SALVO_OK);
    salvo_buffer *h = host_buffer(&e, 3);
    assert_int_equal(salvo_stream_wait_gate(e.st[0], g, 1), SALVO_OK);
    assert_int_equal(launch(&e, 0, 1), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    assert_int_equal(salvo_copy(e.st[0], h, 0, e.buf[0], 0, 1024), SALVO_OK);
    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    assert_int_equal(fake_queue_submits(e.f, 0), 2);
    assert_int_equal(fake_queue_submits(e.f, 2), 1);
    assert_int_equal(fake_complete_all(e.f), 0); /* all behind the gate */
    assert_int_equal(salvo_gate_raise(g, 1), SALVO_OK);
    assert_false(fake_complete_on(e.f, 2)); /* the copy waits for the gated launch */
    assert_true(fake_complete_on(e.f, 0));  /* the gated launch */
    assert_false(fake_complete_on(e.f, 0)); /* the launch after waits for the copy */
    assert_true(fake_complete_on(e.f, 2));
    assert_int_equal(fake_copy_bytes(e.f), 1024);
    assert_true(fake_complete_on(e.f, 0));
    assert_int_equal(fake_dispatches_completed(e.f), 2);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    fake_set_complete(e.f, FAKE_COMPLETE_AUTO);
    expect_contents(e.buf[0], 3);
    salvo_buffer_destroy(h);
    salvo_gate_destroy(g);
    close_env(&e);
}

/* An event recorded after a copy-queue batch, waited on by a stream that
 * shares the recording stream's compute queue: the waiting batch must
 * wait for the copy on the device (the queue's order does not give it). */
static void test_event_after_copy_on_shared_queue(void **state)
{
    (void)state;
    env e;
    open_env_copy(&e, 2, FAKE_COMPLETE_MANUAL, true); /* streams 0 and 2 share queue 0 */
    salvo_gate *g = NULL;
    salvo_event *ev = NULL;
    assert_int_equal(salvo_gate_create(e.dev, &g), SALVO_OK);
    assert_int_equal(salvo_event_create(e.dev, &ev), SALVO_OK);
    salvo_buffer *h = host_buffer(&e, 9);
    assert_int_equal(salvo_stream_wait_gate(e.st[0], g, 1), SALVO_OK);
    assert_int_equal(launch(&e, 0, 1), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    assert_int_equal(salvo_copy(e.st[0], h, 0, e.buf[0], 0, 1024), SALVO_OK);
    assert_int_equal(salvo_event_record(ev, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_wait_event(e.st[2], ev), SALVO_OK);
    assert_int_equal(salvo_copy(e.st[2], e.buf[0], 0, e.buf[3], 0, 1024), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[2]), SALVO_OK);
    assert_int_equal(salvo_gate_raise(g, 1), SALVO_OK);
    assert_true(fake_complete_on(e.f, 0));  /* stream 0's launch */
    assert_false(fake_complete_on(e.f, 0)); /* stream 2's copy waits for stream 0's */
    assert_true(fake_complete_on(e.f, 2));
    assert_true(fake_complete_on(e.f, 0));
    fake_set_complete(e.f, FAKE_COMPLETE_AUTO);
    assert_int_equal(salvo_stream_synchronize(e.st[2]), SALVO_OK);
    assert_int_equal(salvo_event_query(ev), SALVO_OK);
    expect_contents(e.buf[3], 9);
    salvo_event_destroy(ev);
    salvo_gate_destroy(g);
    salvo_buffer_destroy(h);
    close_env(&e);
}

/* Staged transfers (a GPU whose device memory the host cannot map) copy
 * on the copy queue, and do not wait for a gate that holds another
 * stream's work on a compute queue. Without a command buffer for the copy
 * queue (out of memory), a stream's copy runs on its own queue. */
static void test_staged_and_fallback(void **state)
{
    (void)state;
    env e;
    open_fake(&e, 1, FAKE_COMPLETE_AUTO, true);
    e.f->device_not_mappable = true;
    open_device(&e, &(salvo_device_desc){.batch_size = 64});
    salvo_gate *g = NULL;
    assert_int_equal(salvo_gate_create(e.dev, &g), SALVO_OK);
    assert_int_equal(salvo_stream_wait_gate(e.st[0], g, 1), SALVO_OK);
    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    uint32_t data[256];
    for (uint32_t i = 0; i < 256; i++)
        data[i] = 4 + i * 7;
    uint64_t before = fake_queue_submits(e.f, 1);
    assert_int_equal(salvo_buffer_write(e.buf[1], 0, data, sizeof data), SALVO_OK);
    assert_true(fake_queue_submits(e.f, 1) > before);
    expect_contents(e.buf[1], 4);
    assert_int_equal(fake_dispatches_completed(e.f), 0); /* the gate is still down */
    assert_int_equal(salvo_gate_raise(g, 1), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(fake_dispatches_completed(e.f), 1);

    /* Stream 1's slots have no copy-queue command buffers yet: refuse the
     * first one. */
    salvo_buffer *h = host_buffer(&e, 6);
    before = fake_queue_submits(e.f, 1);
    fake_set_result(e.f, "cmd_create", 1, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    assert_int_equal(salvo_copy(e.st[1], h, 0, e.buf[2], 0, 1024), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[1]), SALVO_OK);
    assert_int_equal(fake_queue_submits(e.f, 1), before); /* on its own queue */
    expect_contents(e.buf[2], 6);
    salvo_buffer_destroy(h);
    salvo_gate_destroy(g);
    close_env(&e);
}

/* A batch ends with a barrier to the host only where it may write memory
 * the host maps: a launch that writes device memory the host never maps
 * (its read goes through staging) ends without one; a launch or a copy
 * that writes a HOST buffer ends with one, as does a batch that mixes
 * both. */
static void test_host_barrier_only_for_mapped_writes(void **state)
{
    (void)state;
    env e;
    open_fake(&e, 1, FAKE_COMPLETE_AUTO, false);
    e.f->device_not_mappable = true;
    open_device(&e, &(salvo_device_desc){.batch_size = 64});
    salvo_buffer *h = host_buffer(&e, 3);
    uint32_t push[2] = {256, 1};
    uint32_t groups[3] = {4, 1, 1};
    salvo_binding to_host = {.binding = 0, .buffer = h};
    uint64_t n = fake_barriers(e.f, ACCEL_BARRIER_ALL_HOST);

    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(fake_barriers(e.f, ACCEL_BARRIER_ALL_HOST), n);

    assert_int_equal(salvo_launch(e.st[0], e.k, groups, &to_host, 1, push, sizeof push), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(fake_barriers(e.f, ACCEL_BARRIER_ALL_HOST), n + 1);

    assert_int_equal(salvo_copy(e.st[0], e.buf[1], 0, h, 0, 1024), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(fake_barriers(e.f, ACCEL_BARRIER_ALL_HOST), n + 2);

    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    assert_int_equal(salvo_launch(e.st[0], e.k, groups, &to_host, 1, push, sizeof push), SALVO_OK);
    assert_int_equal(launch(&e, 0, 1), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(fake_barriers(e.f, ACCEL_BARRIER_ALL_HOST), n + 3);

    /* A replay of a graph that writes only device memory: none. */
    assert_int_equal(salvo_stream_begin_capture(e.st[0]), SALVO_OK);
    assert_int_equal(launch(&e, 0, 2), SALVO_OK);
    salvo_graph *gr = NULL;
    assert_int_equal(salvo_stream_end_capture(e.st[0], &gr), SALVO_OK);
    assert_int_equal(salvo_graph_launch(gr, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(fake_barriers(e.f, ACCEL_BARRIER_ALL_HOST), n + 3);
    salvo_graph_destroy(gr);
    salvo_buffer_destroy(h);
    close_env(&e);
}

/* One queue for every stream (lavapipe's case): a batch waiting on a gate
 * that is down stays on the host, so another stream's work goes ahead and
 * a single thread can synchronize it before raising the gate (on the
 * device the queue would run it only after the gated batch: a deadlock).
 * A batch that waits for an event of a held batch is held too; the raise
 * sends both, in order. */
static void test_gated_batch_held_on_shared_queue(void **state)
{
    (void)state;
    env e;
    open_env(&e, 1, FAKE_COMPLETE_AUTO);
    salvo_gate *g = NULL;
    salvo_event *ev = NULL;
    assert_int_equal(salvo_gate_create(e.dev, &g), SALVO_OK);
    assert_int_equal(salvo_event_create(e.dev, &ev), SALVO_OK);
    assert_int_equal(salvo_stream_wait_gate(e.st[0], g, 1), SALVO_OK);
    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    assert_int_equal(salvo_event_record(ev, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    assert_int_equal(fake_queue_submits(e.f, 0), 0); /* held */
    assert_int_equal(salvo_stream_wait_event(e.st[2], ev), SALVO_OK);
    assert_int_equal(launch(&e, 2, 2), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[2]), SALVO_OK);
    assert_int_equal(fake_queue_submits(e.f, 0), 0); /* behind the held one */
    assert_int_equal(launch(&e, 1, 1), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[1]), SALVO_OK);
    assert_int_equal(fake_dispatches_completed(e.f), 1);
    assert_int_equal(salvo_event_query(ev), SALVO_NOT_READY);
    salvo_stats s;
    assert_int_equal(salvo_device_stats(e.dev, &s), SALVO_OK);
    assert_int_equal(s.launches_pending, 2);
    assert_int_equal(salvo_gate_raise(g, 1), SALVO_OK); /* sends both */
    assert_int_equal(fake_queue_submits(e.f, 0), 3);
    assert_int_equal(salvo_event_query(ev), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[2]), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(fake_dispatches_completed(e.f), 3);
    salvo_event_destroy(ev);
    salvo_gate_destroy(g);
    close_env(&e);
}

/* A synchronize of the held stream itself waits on the host for the gate
 * (bounded by the fence timeout), and a device refusing the held batch
 * once it is sent is reported by that stream's synchronize. */
static void test_held_batch_wait_and_refusal(void **state)
{
    (void)state;
    env e;
    open_fake(&e, 1, FAKE_COMPLETE_AUTO, false);
    open_device(&e, &(salvo_device_desc){.batch_size = 64, .fence_timeout_s = 0.01});
    salvo_gate *g = NULL;
    assert_int_equal(salvo_gate_create(e.dev, &g), SALVO_OK);
    assert_int_equal(salvo_stream_wait_gate(e.st[0], g, 1), SALVO_OK);
    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_TIMEOUT); /* the gate is down */
    assert_non_null(strstr(salvo_last_error(), "gate"));
    assert_int_equal(fake_queue_submits(e.f, 0), 0);
    fake_set_result(e.f, "submit", 1, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_int_equal(salvo_gate_raise(g, 1), SALVO_OK); /* the send is refused */
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_non_null(strstr(salvo_last_error(), "add"));
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK); /* reported once */
    assert_int_equal(fake_dispatches_completed(e.f), 0);
    salvo_stats s;
    assert_int_equal(salvo_device_stats(e.dev, &s), SALVO_OK);
    assert_int_equal(s.launches_pending, 0);
    salvo_gate_destroy(g);
    close_env(&e);
}

/* Streams on queues of their own: a gated batch goes to the device (the
 * device waits for the gate). A host read of a buffer it does not bind
 * does not wait for it; a read of one it binds does (the fake never
 * blocks: a timeout, nothing read). */
static void test_read_not_behind_unrelated_gate(void **state)
{
    (void)state;
    env e;
    open_env_copy(&e, 2, FAKE_COMPLETE_AUTO, true);
    two_streams_only(&e);
    salvo_gate *g = NULL;
    assert_int_equal(salvo_gate_create(e.dev, &g), SALVO_OK);
    assert_int_equal(salvo_stream_wait_gate(e.st[0], g, 1), SALVO_OK);
    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    assert_int_equal(fake_queue_submits(e.f, 0), 1); /* on the device */
    assert_int_equal(launch(&e, 1, 1), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[1]), SALVO_OK);
    uint32_t v[4];
    assert_int_equal(salvo_buffer_read(e.buf[1], 0, v, sizeof v), SALVO_OK);
    assert_int_equal(salvo_buffer_read(e.buf[0], 0, v, sizeof v), SALVO_ERROR_TIMEOUT);
    assert_int_equal(salvo_gate_raise(g, 1), SALVO_OK);
    assert_int_equal(salvo_buffer_read(e.buf[0], 0, v, sizeof v), SALVO_OK);
    assert_int_equal(fake_dispatches_completed(e.f), 2);
    salvo_gate_destroy(g);
    close_env(&e);
}

/* A host write waits for a held batch that binds its buffer by polling
 * the batch's gate with the lock dropped. Meanwhile (the fake calls the
 * hook from that poll) the gate is raised and destroyed and another
 * stream's synchronize sees the batch complete: the gate's release must
 * still wait until the poll is over, or the poll reads a destroyed
 * timeline (found by the random tester with a graph replay in the held
 * batch, 3 threads: "invalid VkSemaphore", then a crash). */
typedef struct held_hook {
    env *e;
    salvo_gate *gate;
    int calls;
} held_hook;

static void raise_destroy_and_reap(void *user)
{
    held_hook *h = user;
    /* Only from the poll, which runs without salvo's lock (the lock's
     * holders read gate timelines too). */
    if (!salvo_mutex_trylock(&h->e->dev->q.lock))
        return;
    salvo_mutex_unlock(&h->e->dev->q.lock);
    if (h->calls++ != 0)
        return;
    assert_int_equal(salvo_gate_raise(h->gate, 1), SALVO_OK);
    salvo_gate_destroy(h->gate);
    assert_int_equal(salvo_stream_synchronize(h->e->st[1]), SALVO_OK);
}

static void test_gate_destroyed_during_held_wait(void **state)
{
    (void)state;
    env e;
    open_env(&e, 1, FAKE_COMPLETE_AUTO);
    salvo_gate *g = NULL;
    assert_int_equal(salvo_gate_create(e.dev, &g), SALVO_OK);
    assert_int_equal(salvo_stream_wait_gate(e.st[0], g, 1), SALVO_OK);
    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    assert_int_equal(fake_queue_submits(e.f, 0), 0); /* held on the host */
    held_hook h = {&e, g, 0};
    e.f->hook_user = &h;
    e.f->timeline_value_hook = raise_destroy_and_reap;
    uint32_t v[4] = {0};
    assert_int_equal(salvo_buffer_write(e.buf[0], 0, v, sizeof v), SALVO_OK);
    e.f->timeline_value_hook = NULL;
    assert_true(h.calls >= 1);
    assert_int_equal(fake_illegal_total(e.f), 0);
    assert_int_equal(fake_dispatches_completed(e.f), 1);
    close_env(&e);
}

/* A destroy that finds the lock busy leaves its release on the lock-free
 * list, and the lock's holder takes it in. Here it lands there while a
 * drain point (an event query) is under way, after the query began and
 * before it took the list in; the held batch that the query then sends is
 * refused, so nothing completes in that call. The release waits for no
 * work, and must run before the query returns, not sit in the queue until
 * a later call. The hook (in the held batch's gate poll) runs on the thread
 * that holds the lock, so the destroy's trylock fails as another thread's
 * would. */
typedef struct late_release {
    env *e;
    salvo_buffer *victim;
} late_release;

static void destroy_under_the_lock(void *user)
{
    late_release *l = user;
    if (!l->victim)
        return;
    if (salvo_mutex_trylock(&l->e->dev->q.lock)) {
        salvo_mutex_unlock(&l->e->dev->q.lock);
        return; /* only from under the lock */
    }
    salvo_buffer_destroy(l->victim);
    l->victim = NULL;
}

static void test_release_taken_in_during_a_drain_point(void **state)
{
    (void)state;
    env e;
    open_fake(&e, 1, FAKE_COMPLETE_AUTO, false);
    accel wrapped;
    fault_accel *fh = NULL;
    assert_true(accel_fault_wrap(NULL, fake_accel_get(e.f), &wrapped, &fh));
    char reason[128];
    /* The held batch's send is the first submit of this device. */
    if (!accel_fault_parse(fh, "submit:1:VK_ERROR_OUT_OF_HOST_MEMORY", reason, sizeof reason))
        fail_msg("%s", reason);
    assert_int_equal(device_create_with_accel(&(salvo_device_desc){.batch_size = 64}, wrapped,
                                              &e.dev),
                     SALVO_OK);
    salvo_kernel_desc kd = {.spirv = add_spv, .spirv_size = sizeof add_spv, .name = "add"};
    assert_int_equal(salvo_kernel_create(e.dev, &kd, &e.k), SALVO_OK);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(salvo_buffer_create(e.dev, 1024, SALVO_DOMAIN_DEVICE, &e.buf[i]),
                         SALVO_OK);
        assert_int_equal(salvo_stream_create(e.dev, NULL, &e.st[i]), SALVO_OK);
    }
    salvo_gate *g = NULL;
    salvo_event *ev = NULL;
    assert_int_equal(salvo_gate_create(e.dev, &g), SALVO_OK);
    assert_int_equal(salvo_event_create(e.dev, &ev), SALVO_OK);
    assert_int_equal(salvo_stream_wait_gate(e.st[0], g, 1), SALVO_OK);
    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    assert_int_equal(salvo_event_record(ev, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    assert_int_equal(fake_queue_submits(e.f, 0), 0); /* held on the host */
    /* The gate raised without a pump (salvo_gate_raise would send the
     * batch itself): the next pump finds it up and sends the batch. */
    accel fa = fake_accel_get(e.f);
    assert_int_equal(fa.vt->timeline_signal(fa.self, e.dev->adev, g->timeline, 1), ACCEL_SUCCESS);
    atomic_store(&g->value, 1); /* as salvo_gate_raise leaves it */
    salvo_buffer *victim = NULL;
    assert_int_equal(salvo_buffer_create(e.dev, 4096, SALVO_DOMAIN_DEVICE, &victim), SALVO_OK);
    salvo_stats before;
    assert_int_equal(salvo_device_stats(e.dev, &before), SALVO_OK);
    late_release l = {&e, victim};
    e.f->hook_user = &l;
    e.f->timeline_value_hook = destroy_under_the_lock;
    (void)salvo_event_query(ev); /* the batch is refused: over, not complete */
    e.f->timeline_value_hook = NULL;
    assert_null(l.victim); /* the hook ran */
    salvo_stats after;
    assert_int_equal(salvo_device_stats(e.dev, &after), SALVO_OK);
    if (after.live_buffers != before.live_buffers - 1 || after.releases_pending != 0)
        fail_msg("after the query: live buffers %llu (before the destroy %llu), releases "
                 "pending %llu",
                 (unsigned long long)after.live_buffers, (unsigned long long)before.live_buffers,
                 (unsigned long long)after.releases_pending);
    /* The refusal is the stream's to report, once. */
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_ERROR_OUT_OF_HOST_MEMORY);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    salvo_event_destroy(ev);
    salvo_gate_destroy(g);
    if (fake_illegal_total(e.f))
        fail_msg("illegal use of the fake: %s", fake_illegal_last(e.f));
    close_env(&e);
}

/* Two streams on one compute queue and a copy queue: a stream waits for
 * an event of the other, then copies to a HOST buffer. The wait must
 * order the copy wherever it runs: it opens a batch on the stream's
 * queue, with a device wait, and the copy joins it (it went to the copy
 * queue, unordered, when the shared compute queue's order was taken for
 * enough). Found by the random tester on an H200 (seed 24004, 3 threads). */
static void test_event_then_copy_on_copy_queue(void **state)
{
    (void)state;
    env e;
    open_env_copy(&e, 1, FAKE_COMPLETE_MANUAL, true);
    salvo_event *ev = NULL;
    assert_int_equal(salvo_event_create(e.dev, &ev), SALVO_OK);
    salvo_buffer *h = host_buffer(&e, 2);
    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    assert_int_equal(salvo_event_record(ev, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_wait_event(e.st[1], ev), SALVO_OK);
    assert_int_equal(salvo_copy(e.st[1], e.buf[0], 0, h, 0, 1024), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[1]), SALVO_OK);
    assert_int_equal(fake_queue_submits(e.f, 1), 0); /* not on the copy queue */
    assert_int_equal(fake_queue_submits(e.f, 0), 2);
    assert_true(fake_complete_on(e.f, 0)); /* stream 0's launch, then the copy */
    assert_int_equal(fake_copy_bytes(e.f), 0);
    assert_true(fake_complete_on(e.f, 0));
    assert_int_equal(fake_copy_bytes(e.f), 1024);
    fake_set_complete(e.f, FAKE_COMPLETE_AUTO);
    assert_int_equal(salvo_stream_synchronize(e.st[1]), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    salvo_event_destroy(ev);
    salvo_buffer_destroy(h);
    close_env(&e);
}

/* One queue, nothing completing until the test says so: stream 0 waits
 * for stream 1's event, an ordering by the queue alone (no semaphore),
 * and has nothing of its own. Stream 1's launch is submitted; stream 0
 * has no batch. timestamps: whether records write timestamps (a timed
 * record opens a batch of its own). */
static void open_queue_ordered(env *e, salvo_event **ev, bool timestamps)
{
    open_fake(e, 1, FAKE_COMPLETE_MANUAL, false);
    e->f->timestamps = timestamps;
    open_device(e, &(salvo_device_desc){.batch_size = 64});
    assert_int_equal(salvo_event_create(e->dev, ev), SALVO_OK);
    assert_int_equal(launch(e, 1, 0), SALVO_OK);
    assert_int_equal(salvo_event_record(*ev, e->st[1]), SALVO_OK);
    assert_int_equal(salvo_stream_wait_event(e->st[0], *ev), SALVO_OK);
    assert_int_equal(fake_pending(e->f), 1); /* stream 1's launch */
}

/* After stream_wait_event on the shared queue, stream 0's synchronize
 * covers stream 1's launch (as cudaStreamSynchronize after
 * cudaStreamWaitEvent): it waits (here: the fake's wait expires at once,
 * SALVO_TIMEOUT), and once the queue has run, it is over. Deterministic:
 * nothing completes until the test says so. */
static void test_queue_ordered_synchronize(void **state)
{
    (void)state;
    env e;
    salvo_event *ev = NULL;
    open_queue_ordered(&e, &ev, true);
    salvo_status r = salvo_stream_synchronize(e.st[0]);
    if (r == SALVO_OK)
        fail_msg("synchronize returned before the work its stream waited for (%llu "
                 "dispatches completed)",
                 (unsigned long long)fake_dispatches_completed(e.f));
    assert_int_equal(r, SALVO_TIMEOUT);
    assert_int_equal(fake_pending(e.f), 2); /* stream 0's empty batch behind stream 1's */
    assert_true(fake_complete_next(e.f));
    assert_int_equal(fake_dispatches_completed(e.f), 1);
    assert_true(fake_complete_next(e.f));
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    /* Covered now: no more empty batches. */
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(fake_queue_submits(e.f, 0), 2);
    assert_int_equal(salvo_stream_synchronize(e.st[1]), SALVO_OK);
    salvo_event_destroy(ev);
    close_env(&e);
}

/* The same for a query: SALVO_NOT_READY while the stream waits on the
 * event (as cudaStreamQuery), SALVO_OK once the queue has run; never
 * blocking (the fake never blocks anyway: the test counts waits). */
static void test_queue_ordered_query(void **state)
{
    (void)state;
    env e;
    salvo_event *ev = NULL;
    open_queue_ordered(&e, &ev, true);
    uint64_t waits = fake_calls(e.f, "fence_wait");
    salvo_status r = salvo_stream_query(e.st[0]);
    if (r == SALVO_OK)
        fail_msg("query said SALVO_OK with the work its stream waited for pending");
    assert_int_equal(r, SALVO_NOT_READY);
    assert_int_equal(salvo_stream_query(e.st[0]), SALVO_NOT_READY);
    assert_int_equal(fake_calls(e.f, "fence_wait"), waits);
    assert_int_equal(fake_pending(e.f), 2); /* one empty batch, however many queries */
    assert_true(fake_complete_next(e.f));
    assert_int_equal(salvo_stream_query(e.st[0]), SALVO_NOT_READY);
    assert_true(fake_complete_next(e.f));
    assert_int_equal(salvo_stream_query(e.st[0]), SALVO_OK);
    assert_int_equal(fake_dispatches_completed(e.f), 1);
    assert_int_equal(salvo_stream_query(e.st[1]), SALVO_OK);
    salvo_event_destroy(ev);
    close_env(&e);
}

/* The same for an event recorded on stream 0 then: it completes only
 * after stream 1's launch (as cudaEventRecord after cudaStreamWaitEvent),
 * with and without timestamps (a timed record opens a batch anyway). A
 * stream that waits for that event is ordered after the launch too. */
static void test_queue_ordered_event_record(void **state)
{
    (void)state;
    for (int timed = 0; timed < 2; timed++) {
        env e;
        salvo_event *ev = NULL, *after = NULL;
        open_queue_ordered(&e, &ev, timed);
        assert_int_equal(salvo_event_create(e.dev, &after), SALVO_OK);
        assert_int_equal(salvo_event_record(after, e.st[0]), SALVO_OK);
        salvo_status r = salvo_event_query(after);
        if (r == SALVO_OK)
            fail_msg("an event recorded after a wait completed before the waited-for work "
                     "(timestamps %d)",
                     timed);
        assert_int_equal(r, SALVO_NOT_READY);
        assert_int_equal(salvo_stream_wait_event(e.st[2], after), SALVO_OK);
        assert_int_equal(salvo_stream_query(e.st[2]), SALVO_NOT_READY);
        assert_true(fake_complete_next(e.f));
        assert_int_equal(fake_dispatches_completed(e.f), 1);
        assert_int_equal(salvo_event_query(after), SALVO_NOT_READY);
        assert_int_equal(fake_complete_all(e.f), 2); /* stream 0's, stream 2's */
        assert_int_equal(salvo_event_query(after), SALVO_OK);
        assert_int_equal(salvo_stream_query(e.st[2]), SALVO_OK);
        fake_set_complete(e.f, FAKE_COMPLETE_AUTO);
        assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
        salvo_event_destroy(after);
        salvo_event_destroy(ev);
        close_env(&e);
    }
}

/* A staged copy slower than the fence timeout is waited for to the end,
 * as the header promises (a copy left running would race with what the
 * program does next): the write succeeds with its bytes in place, and a
 * buffer destroyed afterwards is released at once. */
static void test_staged_copy_waited_to_the_end(void **state)
{
    (void)state;
    env e;
    open_fake(&e, 1, FAKE_COMPLETE_MANUAL, false);
    e.f->device_not_mappable = true;
    open_device(&e, &(salvo_device_desc){.batch_size = 64, .fence_timeout_s = 0.02});
    uint32_t data[256];
    for (uint32_t i = 0; i < 256; i++)
        data[i] = 11 + i * 7;
    /* The fake never completes the copy by itself: only the wait for the
     * queue, the last resort once the fence waits keep expiring, does. */
    assert_int_equal(salvo_buffer_write(e.buf[1], 0, data, sizeof data), SALVO_OK);
    assert_true(fake_calls(e.f, "queue_wait_idle") >= 1);
    fake_set_complete(e.f, FAKE_COMPLETE_AUTO);
    expect_contents(e.buf[1], 11);
    if (fake_illegal_total(e.f))
        fail_msg("illegal use of the fake: %s", fake_illegal_last(e.f));
    close_env(&e);
}

/* Host bytes are copied with the device lock let go: the program's memory
 * is made unreadable (write) or unwritable (read), and the fault handler
 * looks at the lock from the faulting thread before it lets the copy go
 * on. Through a mapping (HOST buffer) and through the staging buffer. */
static salvo_mutex *fault_lock;
static void *fault_page;
static volatile sig_atomic_t faults, faults_locked;

static void on_fault(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    (void)si;
    (void)ctx;
    faults++;
    /* A default mutex the faulting thread holds cannot be taken again. */
    if (salvo_mutex_trylock(fault_lock))
        salvo_mutex_unlock(fault_lock);
    else
        faults_locked++;
    mprotect(fault_page, 4096, PROT_READ | PROT_WRITE);
}

static void copies_outside_lock(bool staged)
{
    env e;
    open_fake(&e, 1, FAKE_COMPLETE_AUTO, false);
    e.f->device_not_mappable = staged;
    open_device(&e, &(salvo_device_desc){.batch_size = 64});
    salvo_buffer *b = e.buf[1];
    if (!staged)
        assert_int_equal(salvo_buffer_create(e.dev, 1024, SALVO_DOMAIN_HOST, &b), SALVO_OK);
    fault_lock = &e.dev->q.lock;
    fault_page = aligned_alloc(4096, 4096); /* a page of its own */
    assert_non_null(fault_page);
    uint32_t *host = fault_page;
    for (uint32_t i = 0; i < 256; i++)
        host[i] = 21 + i * 7;
    struct sigaction sa = {0}, old_segv, old_bus;
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGSEGV, &sa, &old_segv), 0);
    assert_int_equal(sigaction(SIGBUS, &sa, &old_bus), 0);
    faults = faults_locked = 0;
    assert_int_equal(mprotect(fault_page, 4096, PROT_NONE), 0);
    assert_int_equal(salvo_buffer_write(b, 0, host, 1024), SALVO_OK);
    assert_int_equal(faults, 1);
    assert_int_equal(faults_locked, 0);
    memset(host, 0, 1024);
    assert_int_equal(mprotect(fault_page, 4096, PROT_READ), 0);
    assert_int_equal(salvo_buffer_read(b, 0, host, 1024), SALVO_OK);
    assert_int_equal(faults, 2);
    assert_int_equal(faults_locked, 0);
    for (uint32_t i = 0; i < 256; i++)
        assert_int_equal(host[i], 21 + i * 7);
    sigaction(SIGSEGV, &old_segv, NULL);
    sigaction(SIGBUS, &old_bus, NULL);
    mprotect(fault_page, 4096, PROT_READ | PROT_WRITE);
    free(fault_page);
    if (b != e.buf[1])
        salvo_buffer_destroy(b);
    close_env(&e);
}

static void test_host_bytes_copied_outside_the_lock(void **state)
{
    (void)state;
    copies_outside_lock(false);
    copies_outside_lock(true);
}

/* A new image is brought into use on a queue no gate holds: with stream
 * 0's gated batch on the device on queue 0 (alone there, so not held on
 * the host), salvo_image_create neither waits for the gate (it used to,
 * and ran into the fence timeout) nor queues behind it: its layout change
 * goes to queue 1. An image write likewise; once every queue holds gated
 * work, the write waits (and times out, nothing copied). */
static void test_image_create_beside_gated_work(void **state)
{
    (void)state;
    env e;
    /* A copy queue for staged transfers: queue 0 is then stream 0's alone. */
    open_fake(&e, 2, FAKE_COMPLETE_AUTO, true);
    open_device(&e, &(salvo_device_desc){.batch_size = 64, .fence_timeout_s = 0.01});
    two_streams_only(&e);
    salvo_gate *g = NULL;
    assert_int_equal(salvo_gate_create(e.dev, &g), SALVO_OK);
    assert_int_equal(salvo_stream_wait_gate(e.st[0], g, 1), SALVO_OK);
    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    assert_int_equal(fake_queue_submits(e.f, 0), 1); /* on the device, waiting */
    uint64_t on1 = fake_queue_submits(e.f, 1);
    salvo_image_desc d = {.type = SALVO_IMAGE_2D, .format = SALVO_FORMAT_R32_UINT,
                          .width = 8, .height = 8};
    salvo_image *img = NULL;
    uint64_t after_compute = fake_barriers(e.f, ACCEL_BARRIER_COMPUTE_TRANSFER);
    assert_int_equal(salvo_image_create(e.dev, &d, &img), SALVO_OK);
    assert_int_equal(fake_queue_submits(e.f, 0), 1);
    assert_int_equal(fake_queue_submits(e.f, 1), on1 + 1);
    /* Nor behind the queue's other work: a new image's first layout is no
     * earlier work's, and is recorded with no barrier after it (which
     * would have it wait for every kernel on that queue). */
    assert_int_equal(fake_barriers(e.f, ACCEL_BARRIER_COMPUTE_TRANSFER), after_compute);
    uint32_t texels[64];
    for (uint32_t i = 0; i < 64; i++)
        texels[i] = 3 * i + 1;
    assert_int_equal(salvo_image_write(img, NULL, texels, sizeof texels), SALVO_OK);
    uint32_t back[64] = {0};
    assert_int_equal(salvo_image_read(img, NULL, back, sizeof back), SALVO_OK);
    assert_memory_equal(back, texels, sizeof back);
    /* Stream 1 gated on queue 1 too: no queue is free, the write waits
     * for the gates and gives up within the fence timeout. */
    assert_int_equal(salvo_stream_wait_gate(e.st[1], g, 1), SALVO_OK);
    assert_int_equal(launch(&e, 1, 1), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[1]), SALVO_OK);
    assert_int_equal(salvo_image_write(img, NULL, texels, sizeof texels), SALVO_ERROR_TIMEOUT);
    assert_int_equal(salvo_gate_raise(g, 1), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[1]), SALVO_OK);
    assert_int_equal(salvo_image_write(img, NULL, texels, sizeof texels), SALVO_OK);
    salvo_image_destroy(img);
    salvo_gate_destroy(g);
    if (fake_illegal_total(e.f))
        fail_msg("illegal use of the fake: %s", fake_illegal_last(e.f));
    close_env(&e);
}

/* A log callback may destroy objects, the gate whose raise it is told
 * about included: the raise logs its failure with no lock held and does
 * not touch the gate after (it held the gate's raise lock while logging,
 * and the destroy, which raises the gate, took it again: a deadlock). The
 * raise runs on a thread of its own, so that a hang fails the test. */
typedef struct destroy_on_log {
    salvo_gate *gate;
    int destroyed;
} destroy_on_log;

static void destroy_gate_on_error(void *user, salvo_log_level level, const char *file, int line,
                                  const char *message)
{
    (void)file;
    (void)line;
    destroy_on_log *d = user;
    if (level == SALVO_LOG_ERROR && strstr(message, "gate_raise") && d->gate) {
        salvo_gate *g = d->gate;
        d->gate = NULL;
        salvo_gate_destroy(g);
        d->destroyed++;
    }
}

typedef struct raise_args {
    salvo_gate *gate;
    _Atomic int done;
    salvo_status status;
} raise_args;

static void *raise_below(void *p)
{
    raise_args *a = p;
    a->status = salvo_gate_raise(a->gate, 1); /* below its value: refused, logged */
    atomic_store(&a->done, 1);
    return NULL;
}

static void test_log_callback_destroys_the_raised_gate(void **state)
{
    (void)state;
    env e;
    destroy_on_log d = {0};
    open_fake(&e, 1, FAKE_COMPLETE_AUTO, false);
    open_device(&e, &(salvo_device_desc){.batch_size = 64, .log = destroy_gate_on_error,
                                         .log_user = &d});
    assert_int_equal(salvo_gate_create(e.dev, &d.gate), SALVO_OK);
    assert_int_equal(salvo_gate_raise(d.gate, 5), SALVO_OK);
    raise_args a = {.gate = d.gate};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, raise_below, &a), 0);
    for (int i = 0; i < 500 && !atomic_load(&a.done); i++)
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    if (!atomic_load(&a.done))
        fail_msg("salvo_gate_raise did not return: the log callback's destroy of the gate "
                 "deadlocked");
    pthread_join(t, NULL);
    assert_int_equal(a.status, SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(d.destroyed, 1);
    salvo_stats st;
    assert_int_equal(salvo_device_synchronize(e.dev), SALVO_OK);
    assert_int_equal(salvo_device_stats(e.dev, &st), SALVO_OK);
    assert_int_equal(st.live_gates, 0);
    close_env(&e);
}

/* The wait's polling on a GPU. A synchronize whose batch the fake
 * completes only once the wait has polled for 5 ms (fifty times the
 * spin time): polled to its end, it never calls the blocking wait (which
 * the fake answers with a timeout, the device never having run it). */
typedef struct late_work {
    env *e;
    uint64_t first_ns, after_ns;
    uint64_t looks;
} late_work;

static void complete_late(void *user)
{
    late_work *l = user;
    uint64_t now = wait_now_ns();
    if (l->looks++ == 0)
        l->first_ns = now;
    else if (now - l->first_ns >= l->after_ns)
        fake_complete_all(l->e->f);
}

static void open_gpu(env *e, uint32_t flags)
{
    open_fake(e, 1, FAKE_COMPLETE_MANUAL, false);
    e->f->device_types[0] = SALVO_DEVICE_TYPE_DISCRETE;
    open_device(e, &(salvo_device_desc){.batch_size = 64, .flags = flags});
}

static void test_gpu_wait_polls_to_the_end(void **state)
{
    (void)state;
    unsetenv("SALVO_SPIN_US");
    env e;
    open_gpu(&e, 0);
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(e.dev, &info), SALVO_OK);
    assert_true(info.poll_whole_wait);
    assert_int_equal(info.spin_us, DEFAULT_SPIN_US);

    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    uint64_t blocking = fake_calls(e.f, "timeline_wait") + fake_calls(e.f, "fence_wait");
    late_work l = {.e = &e, .after_ns = 5ull * 1000 * 1000};
    e.f->timeline_value_hook = e.f->fence_status_hook = complete_late;
    e.f->hook_user = &l;
    uint64_t t0 = wait_now_ns();
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    uint64_t took = wait_now_ns() - t0;
    e.f->timeline_value_hook = e.f->fence_status_hook = NULL;
    assert_int_equal(fake_calls(e.f, "timeline_wait") + fake_calls(e.f, "fence_wait"), blocking);
    assert_true(took >= l.after_ns);
    assert_true(l.looks > 2);
    /* Nobody polls any more: the place is given back. */
    assert_int_equal(atomic_load(&e.dev->q.pollers), 0);
    close_env(&e);
}

/* Where the wait may not poll to its end it polls the spin time, then
 * blocks: with SALVO_DEVICE_BLOCKING_WAIT, with $SALVO_SPIN_US set, and
 * when as many threads poll as the machine has CPUs. A thread of the
 * test completes the work 5 ms on; the fake's waits block as a driver's. */
static void *complete_after_5ms(void *user)
{
    env *e = user;
    nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
    fake_complete_all(e->f);
    return NULL;
}

static void test_gpu_wait_blocks_when_asked_or_crowded(void **state)
{
    (void)state;
    for (int c = 0; c < 3; c++) {
        unsetenv("SALVO_SPIN_US");
        if (c == 1)
            setenv("SALVO_SPIN_US", "100", 1);
        env e;
        open_gpu(&e, c == 0 ? SALVO_DEVICE_BLOCKING_WAIT : 0);
        salvo_device_info info;
        assert_int_equal(salvo_device_info_get(e.dev, &info), SALVO_OK);
        assert_int_equal(info.poll_whole_wait, c == 2);
        assert_int_equal(info.spin_us, 100);
        if (c == 2) /* every CPU taken by a poller */
            atomic_store(&e.dev->q.pollers, e.dev->q.pollers_max);
        e.f->blocking_waits = true;

        assert_int_equal(launch(&e, 0, 0), SALVO_OK);
        assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
        uint64_t blocking = fake_calls(e.f, "timeline_wait") + fake_calls(e.f, "fence_wait");
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, complete_after_5ms, &e), 0);
        assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
        pthread_join(t, NULL);
        assert_int_equal(fake_calls(e.f, "timeline_wait") + fake_calls(e.f, "fence_wait"),
                         blocking + 1);
        if (c == 2) {
            assert_int_equal(atomic_load(&e.dev->q.pollers), e.dev->q.pollers_max);
            atomic_store(&e.dev->q.pollers, 0);
        }
        close_env(&e);
    }
    unsetenv("SALVO_SPIN_US");
}

/* A wait polled to its end still ends at the fence timeout: 20 ms on
 * work that never completes gives SALVO_TIMEOUT after 20 ms. */
static void test_gpu_poll_ends_at_the_timeout(void **state)
{
    (void)state;
    unsetenv("SALVO_SPIN_US");
    env e;
    open_fake(&e, 1, FAKE_COMPLETE_MANUAL, false);
    e.f->device_types[0] = SALVO_DEVICE_TYPE_DISCRETE;
    open_device(&e, &(salvo_device_desc){.batch_size = 64, .fence_timeout_s = 0.02});
    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    uint64_t t0 = wait_now_ns();
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_TIMEOUT);
    uint64_t took = wait_now_ns() - t0;
    assert_true(took >= 20ull * 1000 * 1000);
    assert_true(took < 2000ull * 1000 * 1000);
    assert_int_equal(atomic_load(&e.dev->q.pollers), 0);
    fake_complete_all(e.f);
    close_env(&e);
}

/* A bound too long to count in nanoseconds is no bound: fence_timeout_s
 * of 1e11 s or INFINITY waits for work that ends 5 ms on (it once came to
 * 0 ns, and every wait expired at once), and the device says it has no
 * bound. A negative or NaN bound is refused, with nothing opened. */
static void test_endless_timeout_is_no_bound(void **state)
{
    (void)state;
    unsetenv("SALVO_FENCE_TIMEOUT_S");
    const double endless[] = {1e11, (double)INFINITY, 1e9};
    for (int c = 0; c < 3; c++) {
        env e;
        open_fake(&e, 1, FAKE_COMPLETE_MANUAL, false);
        e.f->blocking_waits = true;
        open_device(&e, &(salvo_device_desc){.batch_size = 64, .fence_timeout_s = endless[c]});
        salvo_device_info info;
        assert_int_equal(salvo_device_info_get(e.dev, &info), SALVO_OK);
        assert_true(info.fence_timeout_s == (c == 2 ? 1e9 : 0));
        assert_int_equal(launch(&e, 0, 0), SALVO_OK);
        assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, complete_after_5ms, &e), 0);
        assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
        pthread_join(t, NULL);
        close_env(&e);
    }
    const double bad[] = {-1, (double)NAN, -(double)INFINITY};
    for (int c = 0; c < 3; c++) {
        fake_accel *f = fake_create();
        assert_non_null(f);
        salvo_device *dev = NULL;
        assert_int_equal(
            device_create_with_accel(&(salvo_device_desc){.fence_timeout_s = bad[c]},
                                     fake_accel_get(f), &dev),
            SALVO_ERROR_INVALID_ARGUMENT);
        assert_null(dev);
        assert_non_null(strstr(salvo_last_error(), "fence_timeout_s"));
        assert_true(fake_destroyed(f));
        assert_int_equal(fake_live_total(f), 0);
        fake_free(f);
    }
}

/* A thread of the test's: after delay_ms, unless told the call under test
 * returned, does what ends that call's wait (raises a gate, completes the
 * fake's work) and says so. A call that needed it waited for it. */
typedef struct rescue {
    env *e;
    salvo_gate *gate; /* raised to 1; NULL: fake_complete_all instead */
    int delay_ms;
    _Atomic bool done;    /* the call under test returned */
    _Atomic bool rescued; /* the thread had to end its wait */
} rescue;

static void *rescue_after(void *user)
{
    rescue *r = user;
    for (int ms = 0; ms < r->delay_ms && !atomic_load(&r->done); ms++)
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    if (atomic_load(&r->done))
        return NULL;
    atomic_store(&r->rescued, true);
    if (r->gate)
        salvo_gate_raise(r->gate, 1);
    else
        fake_complete_all(r->e->f);
    return NULL;
}

static int host_calls_ran;
static void count_host_call(void *user)
{
    (void)user;
    host_calls_ran++;
}

/* A synchronize whose wait ran into the fence timeout returns, even when a
 * failure kept earlier is what it reports: it once took that status for
 * a wait that ended and then waited, with no bound, for a host call held
 * behind a gate nobody raised. Stream and device synchronize alike. */
static void test_expired_synchronize_with_a_kept_failure(void **state)
{
    (void)state;
    for (int device = 0; device < 2; device++) {
        env e;
        open_fake(&e, 1, FAKE_COMPLETE_AUTO, false);
        e.f->blocking_waits = true;
        open_device(&e, &(salvo_device_desc){.batch_size = 64, .fence_timeout_s = 0.05});
        salvo_gate *g = NULL;
        salvo_event *ev = NULL;
        assert_int_equal(salvo_gate_create(e.dev, &g), SALVO_OK);
        assert_int_equal(salvo_event_create(e.dev, &ev), SALVO_OK);
        fake_set_result(e.f, "submit", 1, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
        assert_int_equal(launch(&e, 0, 0), SALVO_OK);
        assert_int_equal(salvo_event_record(ev, e.st[0]), SALVO_OK);
        /* The batch is refused: the event says so, the stream keeps it. */
        assert_int_equal(salvo_event_query(ev), SALVO_ERROR_OUT_OF_DEVICE_MEMORY);
        assert_int_equal(salvo_stream_wait_gate(e.st[0], g, 1), SALVO_OK);
        assert_int_equal(launch(&e, 0, 0), SALVO_OK);
        host_calls_ran = 0;
        assert_int_equal(salvo_stream_host_call(e.st[0], count_host_call, NULL), SALVO_OK);
        rescue r = {.e = &e, .gate = g, .delay_ms = 2000};
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, rescue_after, &r), 0);
        salvo_status got = device ? salvo_device_synchronize(e.dev)
                                  : salvo_stream_synchronize(e.st[0]);
        atomic_store(&r.done, true);
        pthread_join(t, NULL);
        assert_false(atomic_load(&r.rescued));
        assert_int_equal(got, SALVO_ERROR_OUT_OF_DEVICE_MEMORY);
        assert_int_equal(host_calls_ran, 0); /* behind the gate still */
        assert_int_equal(salvo_gate_raise(g, 1), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
        assert_int_equal(host_calls_ran, 1);
        salvo_event_destroy(ev);
        salvo_gate_destroy(g);
        close_env(&e);
    }
}

/* salvo_device_destroy with work and a host call behind a gate that is
 * never raised (nor destroyed): the gate is opened as its reclaim would
 * open it, the work runs, then the call, and the destroy returns. It
 * once waited for the raise for ever, fence timeout or not. */
static void test_destroy_opens_live_gates(void **state)
{
    (void)state;
    for (int bounded = 0; bounded < 2; bounded++) {
        env e;
        open_fake(&e, 1, FAKE_COMPLETE_AUTO, false);
        e.f->blocking_waits = true;
        open_device(&e, &(salvo_device_desc){.batch_size = 64,
                                             .fence_timeout_s = bounded ? 0.05 : 0});
        salvo_gate *g = NULL;
        assert_int_equal(salvo_gate_create(e.dev, &g), SALVO_OK);
        assert_int_equal(salvo_stream_wait_gate(e.st[0], g, 1), SALVO_OK);
        assert_int_equal(launch(&e, 0, 0), SALVO_OK);
        host_calls_ran = 0;
        assert_int_equal(salvo_stream_host_call(e.st[0], count_host_call, NULL), SALVO_OK);
        assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
        rescue r = {.e = &e, .gate = g, .delay_ms = 2000};
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, rescue_after, &r), 0);
        uint64_t ran_before = fake_dispatches_completed(e.f);
        for (int i = 0; i < 4; i++) {
            salvo_stream_destroy(e.st[i]);
            salvo_buffer_destroy(e.buf[i]);
            e.st[i] = NULL;
            e.buf[i] = NULL;
        }
        salvo_kernel_destroy(e.k);
        e.k = NULL;
        salvo_device_destroy(e.dev); /* the gate: never destroyed */
        e.dev = NULL;
        atomic_store(&r.done, true);
        pthread_join(t, NULL);
        assert_false(atomic_load(&r.rescued));
        assert_int_equal(host_calls_ran, 1);
        assert_int_equal(fake_dispatches_completed(e.f), ran_before + 1);
        if (fake_illegal_total(e.f))
            fail_msg("illegal use of the fake: %s", fake_illegal_last(e.f));
        assert_int_equal(fake_live_total(e.f), 0);
        fake_free(e.f);
    }
}

/* A gate destroyed while work is pending is released once that work is
 * over (its release waits on the retire list): the device's destroy,
 * raising the gates still alive, must not take it for one. It once held
 * such a gate again and queued its release a second time (a double free,
 * or a retire list that looped and never ended). With and without work
 * waiting on the gate. */
static void test_destroy_after_a_gate_destroyed_with_work_pending(void **state)
{
    (void)state;
    for (int waited = 0; waited < 2; waited++) {
        env e;
        open_fake(&e, 1, FAKE_COMPLETE_AUTO, false);
        e.f->blocking_waits = true;
        open_device(&e, &(salvo_device_desc){.batch_size = 64});
        salvo_gate *g = NULL;
        assert_int_equal(salvo_gate_create(e.dev, &g), SALVO_OK);
        if (waited)
            assert_int_equal(salvo_stream_wait_gate(e.st[0], g, 1), SALVO_OK);
        assert_int_equal(launch(&e, 0, 0), SALVO_OK);
        salvo_gate_destroy(g);
        salvo_stats s;
        assert_int_equal(salvo_device_stats(e.dev, &s), SALVO_OK);
        assert_int_equal(s.live_gates, 1); /* its release waits for the launch */
        uint64_t ran_before = fake_dispatches_completed(e.f);
        for (int i = 0; i < 4; i++) {
            salvo_stream_destroy(e.st[i]);
            salvo_buffer_destroy(e.buf[i]);
        }
        salvo_kernel_destroy(e.k);
        salvo_device_destroy(e.dev);
        assert_int_equal(fake_dispatches_completed(e.f), ran_before + 1);
        if (fake_illegal_total(e.f))
            fail_msg("illegal use of the fake: %s", fake_illegal_last(e.f));
        assert_int_equal(fake_live_total(e.f), 0);
        fake_free(e.f);
    }
}

/* The device's destroy raises the live gates without taking memory (a
 * destroy needs none): with an allocator that refuses everything by
 * then, work behind a gate never raised still ends. It once waited for
 * ever: the list of gates to raise could not be allocated. */
static _Atomic bool refuse_alloc;
static void *refusing_alloc(void *user, size_t size)
{
    (void)user;
    return atomic_load(&refuse_alloc) ? NULL : malloc(size);
}
static void plain_free(void *user, void *p)
{
    (void)user;
    free(p);
}

static void test_destroy_opens_gates_without_memory(void **state)
{
    (void)state;
    env e;
    open_fake(&e, 1, FAKE_COMPLETE_AUTO, false);
    e.f->blocking_waits = true;
    salvo_allocator a = {.alloc = refusing_alloc, .free = plain_free};
    open_device(&e, &(salvo_device_desc){.batch_size = 64, .allocator = &a});
    salvo_gate *g = NULL;
    assert_int_equal(salvo_gate_create(e.dev, &g), SALVO_OK);
    assert_int_equal(salvo_stream_wait_gate(e.st[0], g, 1), SALVO_OK);
    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    rescue r = {.e = &e, .gate = g, .delay_ms = 2000};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, rescue_after, &r), 0);
    uint64_t ran_before = fake_dispatches_completed(e.f);
    atomic_store(&refuse_alloc, true);
    salvo_device_destroy(e.dev); /* the gate, streams and buffers: reclaimed */
    atomic_store(&refuse_alloc, false);
    atomic_store(&r.done, true);
    pthread_join(t, NULL);
    assert_false(atomic_load(&r.rescued));
    assert_int_equal(fake_dispatches_completed(e.f), ran_before + 1);
    if (fake_illegal_total(e.f))
        fail_msg("illegal use of the fake: %s", fake_illegal_last(e.f));
    assert_int_equal(fake_live_total(e.f), 0);
    fake_free(e.f);
}

/* A device synchronize whose wait for one stream's batch fails once goes
 * on to the others (and that one again): every stream is drained when it
 * returns the failure. It once returned at the first failed wait, with
 * another stream's work still running. */
static void test_device_synchronize_drains_past_a_failed_wait(void **state)
{
    (void)state;
    env e;
    open_fake(&e, 2, FAKE_COMPLETE_MANUAL, false);
    e.f->blocking_waits = true;
    open_device(&e, &(salvo_device_desc){.batch_size = 64});
    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    assert_int_equal(launch(&e, 1, 1), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[1]), SALVO_OK);
    assert_true(fake_complete_next(e.f)); /* stream 0's; stream 1's still runs */
    fake_set_result(e.f, "timeline_wait", 1, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    fake_set_result(e.f, "fence_wait", 1, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    rescue r = {.e = &e, .delay_ms = 300};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, rescue_after, &r), 0);
    salvo_status got = salvo_device_synchronize(e.dev);
    salvo_stats s = {0};
    assert_int_equal(salvo_device_stats(e.dev, &s), SALVO_OK);
    atomic_store(&r.done, true);
    pthread_join(t, NULL);
    assert_int_equal(got, SALVO_ERROR_OUT_OF_HOST_MEMORY);
    assert_true(atomic_load(&r.rescued)); /* it waited for stream 1's batch */
    assert_int_equal(s.launches_pending, 0);
    assert_int_equal(salvo_stream_query(e.st[1]), SALVO_OK);
    assert_int_equal(salvo_device_synchronize(e.dev), SALVO_OK); /* reported once */
    close_env(&e);
}

/* A look at a batch's progress that fails while the batch runs on (a
 * flush's reap) is no failure of the batch: the synchronize after, whose
 * own wait succeeds, returns SALVO_OK (it once returned the look's). */
static void test_failed_look_is_not_the_batchs_failure(void **state)
{
    (void)state;
    env e;
    open_env(&e, 1, FAKE_COMPLETE_MANUAL);
    assert_int_equal(launch(&e, 0, 0), SALVO_OK);
    /* Every way to look fails: the timeline's value and the wait that
     * does not block (or the fence's status). */
    uint64_t looks = fake_calls(e.f, "timeline_value") + fake_calls(e.f, "fence_status");
    fake_set_result_from(e.f, "timeline_value", 1, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    fake_set_result_from(e.f, "timeline_wait", 1, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    fake_set_result_from(e.f, "fence_status", 1, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    assert_true(fake_calls(e.f, "timeline_value") + fake_calls(e.f, "fence_status") > looks);
    fake_clear_results(e.f);
    fake_complete_all(e.f);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(fake_dispatches_completed(e.f), 1);
    close_env(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_streams_take_queues_in_turn),
        cmocka_unit_test(test_endless_timeout_is_no_bound),
        cmocka_unit_test(test_expired_synchronize_with_a_kept_failure),
        cmocka_unit_test(test_destroy_opens_live_gates),
        cmocka_unit_test(test_destroy_after_a_gate_destroyed_with_work_pending),
        cmocka_unit_test(test_destroy_opens_gates_without_memory),
        cmocka_unit_test(test_device_synchronize_drains_past_a_failed_wait),
        cmocka_unit_test(test_failed_look_is_not_the_batchs_failure),
        cmocka_unit_test(test_high_priority_queue),
        cmocka_unit_test(test_no_false_ordering),
        cmocka_unit_test(test_event_wait_across_queues),
        cmocka_unit_test(test_expired_wait_logs_no_error),
        cmocka_unit_test(test_event_point_keeps_out_later_waits),
        cmocka_unit_test(test_timeline_outlives_its_stream),
        cmocka_unit_test(test_wait_opens_after_owner_freed),
        cmocka_unit_test(test_busy_stream_freed_at_drain_point),
        cmocka_unit_test(test_cancelled_batch_still_signals),
        cmocka_unit_test(test_loss_abandons_every_queue),
        cmocka_unit_test(test_batches_grow_after_any_command),
        cmocka_unit_test(test_trace_started_during_copy_slot_wait),
        cmocka_unit_test(test_host_copies_on_copy_queue),
        cmocka_unit_test(test_next_batch_begun_while_device_runs),
        cmocka_unit_test(test_begun_ahead_then_copy_queue),
        cmocka_unit_test(test_copy_queue_keeps_stream_order),
        cmocka_unit_test(test_event_after_copy_on_shared_queue),
        cmocka_unit_test(test_staged_and_fallback),
        cmocka_unit_test(test_host_barrier_only_for_mapped_writes),
        cmocka_unit_test(test_gated_batch_held_on_shared_queue),
        cmocka_unit_test(test_held_batch_wait_and_refusal),
        cmocka_unit_test(test_read_not_behind_unrelated_gate),
        cmocka_unit_test(test_gate_destroyed_during_held_wait),
        cmocka_unit_test(test_release_taken_in_during_a_drain_point),
        cmocka_unit_test(test_event_then_copy_on_copy_queue),
        cmocka_unit_test(test_queue_ordered_synchronize),
        cmocka_unit_test(test_queue_ordered_query),
        cmocka_unit_test(test_queue_ordered_event_record),
        cmocka_unit_test(test_staged_copy_waited_to_the_end),
        cmocka_unit_test(test_image_create_beside_gated_work),
        cmocka_unit_test(test_log_callback_destroys_the_raised_gate),
        cmocka_unit_test(test_host_bytes_copied_outside_the_lock),
        cmocka_unit_test(test_gpu_wait_polls_to_the_end),
        cmocka_unit_test(test_gpu_wait_blocks_when_asked_or_crowded),
        cmocka_unit_test(test_gpu_poll_ends_at_the_timeout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
