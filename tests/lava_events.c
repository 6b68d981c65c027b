#define _POSIX_C_SOURCE 200809L
/* Events across streams, host gates and imported host memory on a real
 * device, validation layer and synchronization validation on. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "salvo/salvo.h"
#include "support/lava.h"

#define N 1024u

typedef struct fixture {
    salvo_device *dev;
    salvo_kernel *add, *copy;
    salvo_stream *a, *b;
    salvo_buffer *x, *y;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    /* Synchronization validation on: the suite is about order across
     * streams; large batches: nothing submits by itself. */
    f->dev = lava_open(SALVO_DEVICE_SYNC_VALIDATION, 1000);
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(f->dev, &info), SALVO_OK);
    assert_int_equal(info.validation, 2);
    f->add = lava_add_kernel(f->dev);
    f->copy = lava_copy_kernel(f->dev);
    assert_int_equal(salvo_stream_create(f->dev, NULL, &f->a), SALVO_OK);
    assert_int_equal(salvo_stream_create(f->dev, NULL, &f->b), SALVO_OK);
    f->x = lava_zeroed(f->dev, N, SALVO_DOMAIN_DEVICE);
    f->y = lava_zeroed(f->dev, N, SALVO_DOMAIN_HOST);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    salvo_stats s;
    lava_expect_settled(f->dev);
    salvo_stream_destroy(f->a);
    salvo_stream_destroy(f->b);
    salvo_buffer_destroy(f->x);
    salvo_buffer_destroy(f->y);
    salvo_kernel_destroy(f->add);
    salvo_kernel_destroy(f->copy);
    assert_int_equal(salvo_device_stats(f->dev, &s), SALVO_OK);
    assert_int_equal(s.live_buffers + s.live_kernels + s.live_streams + s.live_events +
                         s.live_gates,
                     0);
    lava_close(f->dev);
    free(f);
    return 0;
}

static const uint32_t groups[3] = {N / 64, 1, 1};

static void add_n(fixture *f, salvo_stream *st, salvo_buffer *buf, int times, uint32_t value)
{
    salvo_binding b = {.binding = 0, .buffer = buf};
    uint32_t push[2] = {N, value};
    for (int i = 0; i < times; i++)
        assert_int_equal(salvo_launch(st, f->add, groups, &b, 1, push, sizeof push), SALVO_OK);
}

static void copy_to(fixture *f, salvo_stream *st, salvo_buffer *src, salvo_buffer *dst,
                    uint32_t add)
{
    salvo_binding b[2] = {{.binding = 0, .buffer = src}, {.binding = 1, .buffer = dst}};
    uint32_t push[2] = {N, add};
    assert_int_equal(salvo_launch(st, f->copy, groups, b, 2, push, sizeof push), SALVO_OK);
}

static void expect_all(salvo_buffer *buf, uint32_t want)
{
    uint32_t *p = NULL;
    assert_int_equal(salvo_buffer_map(buf, (void **)&p), SALVO_OK);
    for (uint32_t i = 0; i < N; i++)
        if (p[i] != want)
            fail_msg("element %u: %u, want %u", i, p[i], want);
}

/* B's batch is submitted before A's open batch would be, unless the event
 * wait pulls A's work in first: B must still see all of A's writes. */
static void consumer_waits_for_producer(void **state)
{
    fixture *f = *state;
    salvo_event *e = NULL;
    assert_int_equal(salvo_event_create(f->dev, &e), SALVO_OK);
    add_n(f, f->a, f->x, 100, 1);
    assert_int_equal(salvo_event_record(e, f->a), SALVO_OK);
    assert_int_equal(salvo_stream_wait_event(f->b, e), SALVO_OK);
    copy_to(f, f->b, f->x, f->y, 0);
    assert_int_equal(salvo_stream_synchronize(f->b), SALVO_OK);
    expect_all(f->y, 100);
    assert_int_equal(salvo_event_query(e), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->a), SALVO_OK);
    salvo_event_destroy(e);
}

static void unrecorded_event_is_no_wait(void **state)
{
    fixture *f = *state;
    salvo_event *e = NULL;
    assert_int_equal(salvo_event_create(f->dev, &e), SALVO_OK);
    assert_int_equal(salvo_event_query(e), SALVO_OK);
    assert_int_equal(salvo_event_synchronize(e), SALVO_OK);
    assert_int_equal(salvo_stream_wait_event(f->b, e), SALVO_OK);
    add_n(f, f->b, f->y, 3, 2);
    assert_int_equal(salvo_stream_synchronize(f->b), SALVO_OK);
    expect_all(f->y, 6);
    salvo_event_destroy(e);
}

static void query_then_synchronize(void **state)
{
    fixture *f = *state;
    salvo_event *e = NULL;
    assert_int_equal(salvo_event_create(f->dev, &e), SALVO_OK);
    add_n(f, f->a, f->x, 200, 1);
    assert_int_equal(salvo_event_record(e, f->a), SALVO_OK);
    salvo_status q = salvo_event_query(e); /* submits the open batch */
    assert_true(q == SALVO_OK || q == SALVO_NOT_READY);
    /* Poll for up to a minute: slow machines and sanitizers included. */
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        q = salvo_event_query(e);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (q == SALVO_NOT_READY && now.tv_sec - t0.tv_sec < 60);
    assert_int_equal(q, SALVO_OK);
    assert_int_equal(salvo_event_synchronize(e), SALVO_OK);
    salvo_stats s;
    assert_int_equal(salvo_device_stats(f->dev, &s), SALVO_OK);
    assert_int_equal(s.launches_pending, 0);
    uint32_t out[N];
    assert_int_equal(salvo_buffer_read(f->x, 0, out, sizeof out), SALVO_OK);
    assert_int_equal(out[0], 200);
    assert_int_equal(out[N - 1], 200);
    salvo_event_destroy(e);
}

/* Chains that ping-pong between two streams through events: each link
 * reads what the other stream wrote. */
static void ping_pong(void **state)
{
    fixture *f = *state;
    salvo_event *ea = NULL, *eb = NULL;
    assert_int_equal(salvo_event_create(f->dev, &ea), SALVO_OK);
    assert_int_equal(salvo_event_create(f->dev, &eb), SALVO_OK);
    for (int i = 0; i < 50; i++) {
        add_n(f, f->a, f->x, 1, 1); /* x += 1 */
        assert_int_equal(salvo_event_record(ea, f->a), SALVO_OK);
        assert_int_equal(salvo_stream_wait_event(f->b, ea), SALVO_OK);
        copy_to(f, f->b, f->x, f->y, 0); /* y = x */
        assert_int_equal(salvo_event_record(eb, f->b), SALVO_OK);
        assert_int_equal(salvo_stream_wait_event(f->a, eb), SALVO_OK);
    }
    assert_int_equal(salvo_device_synchronize(f->dev), SALVO_OK);
    expect_all(f->y, 50);
    salvo_event_destroy(ea);
    salvo_event_destroy(eb);
}

/* The same with events made with SALVO_EVENT_DISABLE_TIMING (no
 * timestamps), some recorded on a stream synchronized just before (the
 * mark is then its last batch, already complete): every link still reads
 * what the other stream wrote, and elapsed refuses them. */
static void untimed_events_order_streams(void **state)
{
    fixture *f = *state;
    salvo_event *ea = NULL, *eb = NULL;
    assert_int_equal(salvo_event_create_flags(f->dev, SALVO_EVENT_DISABLE_TIMING, &ea), SALVO_OK);
    assert_int_equal(salvo_event_create_flags(f->dev, SALVO_EVENT_DISABLE_TIMING, &eb), SALVO_OK);
    for (int i = 0; i < 30; i++) {
        add_n(f, f->a, f->x, 1, 1); /* x += 1 */
        if (i % 10 == 9)
            assert_int_equal(salvo_stream_synchronize(f->a), SALVO_OK);
        assert_int_equal(salvo_event_record(ea, f->a), SALVO_OK);
        assert_int_equal(salvo_stream_wait_event(f->b, ea), SALVO_OK);
        copy_to(f, f->b, f->x, f->y, 0); /* y = x */
        assert_int_equal(salvo_event_record(eb, f->b), SALVO_OK);
        assert_int_equal(salvo_stream_wait_event(f->a, eb), SALVO_OK);
    }
    assert_int_equal(salvo_event_synchronize(eb), SALVO_OK);
    expect_all(f->y, 30);
    uint64_t ns = 1;
    assert_int_equal(salvo_event_elapsed(ea, eb, &ns), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ns, 0);
    assert_int_equal(salvo_device_synchronize(f->dev), SALVO_OK);
    salvo_event_destroy(ea);
    salvo_event_destroy(eb);
}

static void *aligned(salvo_device *dev, size_t bytes, size_t *rounded)
{
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(dev, &info), SALVO_OK);
    size_t al = info.host_import_alignment ? info.host_import_alignment : 4096;
    *rounded = (bytes + al - 1) / al * al;
    return aligned_alloc(al, *rounded);
}

/* Launch, flush, then write the inputs, then raise: the device reads what
 * the host wrote after the flush. */
static void gate_holds_work_until_raised(void **state)
{
    fixture *f = *state;
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(f->dev, &info), SALVO_OK);
    if (!info.timeline_semaphores || !info.host_import)
        skip();
    size_t bytes;
    uint32_t *host = aligned(f->dev, N * 4, &bytes);
    memset(host, 0, bytes);
    salvo_buffer *in = NULL;
    assert_int_equal(salvo_buffer_import_host(f->dev, host, bytes, SALVO_DOMAIN_HOST, &in),
                     SALVO_OK);
    salvo_gate *g = NULL;
    assert_int_equal(salvo_gate_create(f->dev, &g), SALVO_OK);
    salvo_stats before;
    assert_int_equal(salvo_device_stats(f->dev, &before), SALVO_OK);
    assert_int_equal(salvo_stream_wait_gate(f->a, g, 1), SALVO_OK);
    copy_to(f, f->a, in, f->y, 7);
    assert_int_equal(salvo_stream_flush(f->a), SALVO_OK);
    for (uint32_t i = 0; i < N; i++)
        host[i] = i * 3;
    assert_int_equal(salvo_gate_raise(g, 1), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->a), SALVO_OK);
    uint32_t *y = NULL;
    assert_int_equal(salvo_buffer_map(f->y, (void **)&y), SALVO_OK);
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(y[i], i * 3 + 7);
    salvo_stats after;
    assert_int_equal(salvo_device_stats(f->dev, &after), SALVO_OK);
    assert_int_equal(after.transfer_bytes, before.transfer_bytes); /* no explicit transfer */
    assert_true(after.direct_bindings >= 1);
    /* monotonic */
    assert_int_equal(salvo_gate_raise(g, 0), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_gate_raise(g, 1), SALVO_OK);
    assert_int_equal(salvo_gate_value(g), 1);
    salvo_gate_destroy(g);
    salvo_buffer_destroy(in);
    assert_int_equal(salvo_device_synchronize(f->dev), SALVO_OK);
    free(host);
}

struct raiser {
    salvo_gate *g;
    uint64_t value;
};

static void *raise_later(void *arg)
{
    struct raiser *r = arg;
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    salvo_gate_raise(r->g, r->value);
    return NULL;
}

static void gate_raised_from_another_thread(void **state)
{
    fixture *f = *state;
    salvo_gate *g = NULL;
    if (salvo_gate_create(f->dev, &g) == SALVO_ERROR_UNSUPPORTED)
        skip();
    assert_non_null(g);
    assert_int_equal(salvo_stream_wait_gate(f->a, g, 3), SALVO_OK);
    add_n(f, f->a, f->y, 4, 1);
    assert_int_equal(salvo_stream_flush(f->a), SALVO_OK);
    struct raiser r = {g, 3};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, raise_later, &r), 0);
    assert_int_equal(salvo_stream_synchronize(f->a), SALVO_OK);
    /* Through the mapping, which waits for nothing: had synchronize
     * returned before the raise, the gated launches could not have run. */
    const uint32_t *p = NULL;
    assert_int_equal(salvo_buffer_map(f->y, (void **)&p), SALVO_OK);
    for (uint32_t i = 0; i < N; i++)
        if (p[i] != 4)
            fail_msg("y[%u] = %u when synchronize returned", i, p[i]);
    assert_int_equal(salvo_stream_query(f->a), SALVO_OK);
    pthread_join(t, NULL);
    expect_all(f->y, 4);
    salvo_gate_destroy(g);
}

typedef struct recorder {
    salvo_event *ev;
    salvo_stream *st;
    salvo_status got;
} recorder;

static void *record_now(void *user)
{
    recorder *r = user;
    r->got = salvo_event_record(r->ev, r->st);
    return NULL;
}

/* A timed record that waits for a batch slot (the lock let go) while
 * another stream's record takes the last free timestamp query: both are
 * recorded and timed. The first once took the query it had reserved
 * before the wait, found none left, and crashed. */
static void timed_records_race_for_the_last_query(void **state)
{
    fixture *f = *state;
    salvo_gate *g = NULL;
    if (salvo_gate_create(f->dev, &g) == SALVO_ERROR_UNSUPPORTED)
        skip();
    /* Queries come 64 to a pool, and stay taken while their events are
     * unread: after 63 records one is free. */
    salvo_event *taken[63];
    for (int i = 0; i < 63; i++) {
        assert_int_equal(salvo_event_create(f->dev, &taken[i]), SALVO_OK);
        assert_int_equal(salvo_event_record(taken[i], f->b), SALVO_OK);
    }
    assert_int_equal(salvo_stream_synchronize(f->b), SALVO_OK);
    /* Stream a's three batch slots, all behind the gate. */
    assert_int_equal(salvo_stream_wait_gate(f->a, g, 1), SALVO_OK);
    for (int i = 0; i < 3; i++) {
        add_n(f, f->a, f->y, 1, 1);
        assert_int_equal(salvo_stream_flush(f->a), SALVO_OK);
    }
    salvo_event *ea = NULL, *eb = NULL;
    assert_int_equal(salvo_event_create(f->dev, &ea), SALVO_OK);
    assert_int_equal(salvo_event_create(f->dev, &eb), SALVO_OK);
    recorder r = {.ev = ea, .st = f->a, .got = SALVO_ERROR_UNKNOWN};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, record_now, &r), 0);
    nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL); /* r waits for a slot */
    assert_int_equal(salvo_event_record(eb, f->b), SALVO_OK);
    assert_int_equal(salvo_gate_raise(g, 1), SALVO_OK);
    pthread_join(t, NULL);
    assert_int_equal(r.got, SALVO_OK);
    assert_int_equal(salvo_device_synchronize(f->dev), SALVO_OK);
    uint64_t ns = 0;
    assert_int_equal(salvo_event_elapsed(taken[0], eb, &ns), SALVO_OK);
    assert_int_equal(salvo_event_query(ea), SALVO_OK);
    assert_int_equal(salvo_event_elapsed(ea, ea, &ns), SALVO_OK); /* timed */
    assert_int_equal(ns, 0);
    for (int i = 0; i < 63; i++)
        salvo_event_destroy(taken[i]);
    salvo_event_destroy(ea);
    salvo_event_destroy(eb);
    salvo_gate_destroy(g);
    expect_all(f->y, 3);
}

/* Destroying a gate that pending work waits on releases that work. */
static void destroying_a_gate_releases_waiters(void **state)
{
    fixture *f = *state;
    salvo_gate *g = NULL;
    if (salvo_gate_create(f->dev, &g) == SALVO_ERROR_UNSUPPORTED)
        skip();
    assert_int_equal(salvo_stream_wait_gate(f->a, g, 5), SALVO_OK);
    add_n(f, f->a, f->y, 2, 10);
    assert_int_equal(salvo_stream_flush(f->a), SALVO_OK);
    salvo_gate_destroy(g);
    assert_int_equal(salvo_stream_synchronize(f->a), SALVO_OK);
    expect_all(f->y, 20);
    salvo_stats s;
    assert_int_equal(salvo_device_stats(f->dev, &s), SALVO_OK);
    assert_int_equal(s.live_gates, 0);
}

static void misaligned_import_is_refused(void **state)
{
    fixture *f = *state;
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(f->dev, &info), SALVO_OK);
    if (!info.host_import)
        skip();
    size_t bytes;
    char *host = aligned(f->dev, 2 * info.host_import_alignment, &bytes);
    salvo_buffer *b = (salvo_buffer *)1;
    assert_int_equal(salvo_buffer_import_host(f->dev, host + 4, info.host_import_alignment,
                                              SALVO_DOMAIN_HOST, &b),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_null(b);
    assert_int_equal(salvo_buffer_import_host(f->dev, host, 100, SALVO_DOMAIN_HOST, &b),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_buffer_import_host(f->dev, host, bytes, SALVO_DOMAIN_DEVICE, &b),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(salvo_last_error(), "HOST or SHARED"));
    free(host);
}

int main(void)
{
    lava_require_device();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(consumer_waits_for_producer, setup, teardown),
        cmocka_unit_test_setup_teardown(unrecorded_event_is_no_wait, setup, teardown),
        cmocka_unit_test_setup_teardown(query_then_synchronize, setup, teardown),
        cmocka_unit_test_setup_teardown(ping_pong, setup, teardown),
        cmocka_unit_test_setup_teardown(untimed_events_order_streams, setup, teardown),
        cmocka_unit_test_setup_teardown(gate_holds_work_until_raised, setup, teardown),
        cmocka_unit_test_setup_teardown(gate_raised_from_another_thread, setup, teardown),
        cmocka_unit_test_setup_teardown(destroying_a_gate_releases_waiters, setup, teardown),
        cmocka_unit_test_setup_teardown(timed_records_race_for_the_last_query, setup, teardown),
        cmocka_unit_test_setup_teardown(misaligned_import_is_refused, setup, teardown),
    };
    return lava_run_tests(tests);
}
