/* Event cancel: withdrawing launches that were not submitted yet, and
 * refusing once they were. Values read back, validation on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "salvo/salvo.h"
#include "support/lava.h"

#define N 256u

typedef struct fixture {
    salvo_device *dev;
    salvo_kernel *add;
    salvo_stream *st;
    salvo_buffer *x;
    salvo_event *ev;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dev = lava_open(SALVO_DEVICE_SYNC_VALIDATION, 1000);
    f->add = lava_add_kernel(f->dev);
    salvo_stream_desc sd = {.first_batch = 1000};
    assert_int_equal(salvo_stream_create(f->dev, &sd, &f->st), SALVO_OK);
    f->x = lava_zeroed(f->dev, N, SALVO_DOMAIN_DEVICE);
    assert_int_equal(salvo_event_create(f->dev, &f->ev), SALVO_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    lava_expect_settled(f->dev);
    salvo_event_destroy(f->ev);
    salvo_stream_destroy(f->st);
    salvo_buffer_destroy(f->x);
    salvo_kernel_destroy(f->add);
    lava_close(f->dev);
    free(f);
    return 0;
}

static void add(fixture *f, salvo_stream *st, int times, uint32_t value)
{
    salvo_binding b = {.binding = 0, .buffer = f->x};
    uint32_t push[2] = {N, value};
    uint32_t groups[3] = {N / 64, 1, 1};
    for (int i = 0; i < times; i++)
        assert_int_equal(salvo_launch(st, f->add, groups, &b, 1, push, sizeof push), SALVO_OK);
}

/* Five launches before the event are withdrawn; three after it still run. */
static void withdraws_what_came_before(void **state)
{
    fixture *f = *state;
    add(f, f->st, 5, 1);
    assert_int_equal(salvo_event_record(f->ev, f->st), SALVO_OK);
    add(f, f->st, 3, 10);
    salvo_stats s;
    assert_int_equal(salvo_device_stats(f->dev, &s), SALVO_OK);
    assert_int_equal(s.launches_pending, 8);
    assert_int_equal(salvo_event_cancel(f->ev), SALVO_OK);
    assert_int_equal(salvo_device_stats(f->dev, &s), SALVO_OK);
    assert_int_equal(s.launches_pending, 3);
    assert_int_equal(salvo_event_query(f->ev), SALVO_CANCELLED);
    assert_int_equal(salvo_event_cancel(f->ev), SALVO_OK); /* twice is fine */
    add(f, f->st, 1, 100); /* and the stream goes on, in order */
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    lava_expect_all(f->x, N, 130);
    assert_int_equal(salvo_event_synchronize(f->ev), SALVO_CANCELLED);
    /* recorded again, it is an ordinary event (on a device with timestamps
     * its point is a batch of its own here, complete once that ran) */
    assert_int_equal(salvo_event_record(f->ev, f->st), SALVO_OK);
    assert_int_equal(salvo_event_synchronize(f->ev), SALVO_OK);
    assert_int_equal(salvo_event_query(f->ev), SALVO_OK);
}

/* Inside what a cancel withdrew, an event with no launch before it has
 * nothing to cancel: refused, like the first event of a batch; one with a
 * launch before it (withdrawn with the rest) reads cancelled. */
static void twin_events_inside_a_withdrawn_batch(void **state)
{
    fixture *f = *state;
    salvo_event *e[4] = {NULL};
    for (int i = 0; i < 4; i++)
        assert_int_equal(salvo_event_create(f->dev, &e[i]), SALVO_OK);
    assert_int_equal(salvo_event_record(e[0], f->st), SALVO_OK);
    assert_int_equal(salvo_event_record(e[1], f->st), SALVO_OK); /* no launch between */
    add(f, f->st, 1, 1);
    assert_int_equal(salvo_event_record(e[2], f->st), SALVO_OK);
    add(f, f->st, 1, 10);
    assert_int_equal(salvo_event_record(f->ev, f->st), SALVO_OK);
    assert_int_equal(salvo_event_cancel(f->ev), SALVO_OK); /* withdraws both launches */
    assert_int_equal(salvo_event_cancel(e[0]), SALVO_ERROR_INVALID_STATE);
    assert_int_equal(salvo_event_cancel(e[1]), SALVO_ERROR_INVALID_STATE);
    assert_int_equal(salvo_event_cancel(e[2]), SALVO_OK); /* its launch was withdrawn */
    assert_int_equal(salvo_event_query(e[2]), SALVO_CANCELLED);
    add(f, f->st, 1, 100);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    assert_int_equal(salvo_event_query(e[0]), SALVO_OK);
    assert_int_equal(salvo_event_query(e[1]), SALVO_OK);
    lava_expect_all(f->x, N, 100);
    for (int i = 0; i < 4; i++)
        salvo_event_destroy(e[i]);
}

/* Once the launches were submitted, cancel is refused and changes nothing. */
static void refused_once_submitted(void **state)
{
    fixture *f = *state;
    add(f, f->st, 5, 1);
    assert_int_equal(salvo_event_record(f->ev, f->st), SALVO_OK);
    add(f, f->st, 2, 10);
    assert_int_equal(salvo_stream_flush(f->st), SALVO_OK);
    assert_int_equal(salvo_event_cancel(f->ev), SALVO_ERROR_INVALID_STATE);
    assert_non_null(strstr(salvo_last_error(), "submitted"));
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    lava_expect_all(f->x, N, 25);
    assert_int_equal(salvo_event_query(f->ev), SALVO_OK);
    /* an event never recorded has nothing to withdraw */
    salvo_event *fresh = NULL;
    assert_int_equal(salvo_event_create(f->dev, &fresh), SALVO_OK);
    assert_int_equal(salvo_event_cancel(fresh), SALVO_ERROR_INVALID_STATE);
    salvo_event_destroy(fresh);
}

/* A host read of the buffer submits the batch: too late to cancel. */
static void refused_after_a_read_submitted_it(void **state)
{
    fixture *f = *state;
    add(f, f->st, 4, 1);
    assert_int_equal(salvo_event_record(f->ev, f->st), SALVO_OK);
    lava_expect_all(f->x, N, 4);
    assert_int_equal(salvo_event_cancel(f->ev), SALVO_ERROR_INVALID_STATE);
}

/* Copies are withdrawn and replayed like launches; another stream's wait
 * on a cancelled event is no wait. Every buffer holds a value of its own
 * before the work, none of them 0: a withdrawn copy that ran anyway would
 * leave x's value in y, a kept copy that did not run would leave z's
 * sentinel, and one that ran after the kept add would leave 12 in z. */
static void fill_all(salvo_buffer *b, uint32_t value)
{
    uint32_t v[N];
    for (uint32_t i = 0; i < N; i++)
        v[i] = value;
    assert_int_equal(salvo_buffer_write(b, 0, v, sizeof v), SALVO_OK);
}

static void copies_and_waiters(void **state)
{
    fixture *f = *state;
    salvo_buffer *y = NULL, *z = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, N * 4, SALVO_DOMAIN_DEVICE, &y), SALVO_OK);
    assert_int_equal(salvo_buffer_create(f->dev, N * 4, SALVO_DOMAIN_DEVICE, &z), SALVO_OK);
    fill_all(f->x, 5);
    fill_all(y, 99);
    fill_all(z, 0xdeadbeefu);
    add(f, f->st, 2, 1);                                           /* x = 7, withdrawn */
    assert_int_equal(salvo_copy(f->st, f->x, 0, y, 0, N * 4), SALVO_OK); /* y = 7, withdrawn */
    assert_int_equal(salvo_event_record(f->ev, f->st), SALVO_OK);
    assert_int_equal(salvo_copy(f->st, f->x, 0, z, 0, N * 4), SALVO_OK); /* z = x = 5 */
    add(f, f->st, 1, 7);                                           /* x = 12 */
    assert_int_equal(salvo_event_cancel(f->ev), SALVO_OK);
    salvo_stream *other = NULL;
    assert_int_equal(salvo_stream_create(f->dev, NULL, &other), SALVO_OK);
    assert_int_equal(salvo_stream_wait_event(other, f->ev), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(other), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    lava_expect_all(f->x, N, 12);
    lava_expect_all(z, N, 5);
    lava_expect_all(y, N, 99); /* the withdrawn copy never ran */
    salvo_stream_destroy(other);
    salvo_buffer_destroy(y);
    salvo_buffer_destroy(z);
}

/* Events that stay after a cancel still keep out the waits added after
 * them: the batch recorded again is still their point (it once forgot
 * that, and a gate waited for next held the surviving event too). Timed
 * and untimed events alike. */
static void survivors_keep_out_later_waits(void **state)
{
    fixture *f = *state;
    for (int untimed = 0; untimed < 2; untimed++) {
        salvo_gate *g = NULL;
        if (salvo_gate_create(f->dev, &g) == SALVO_ERROR_UNSUPPORTED)
            skip();
        uint32_t flags = untimed ? SALVO_EVENT_DISABLE_TIMING : 0;
        salvo_event *e = NULL, *survivor = NULL;
        assert_int_equal(salvo_event_create_flags(f->dev, flags, &e), SALVO_OK);
        assert_int_equal(salvo_event_create_flags(f->dev, flags, &survivor), SALVO_OK);
        add(f, f->st, 1, 1);
        assert_int_equal(salvo_event_record(e, f->st), SALVO_OK);
        assert_int_equal(salvo_event_record(survivor, f->st), SALVO_OK);
        assert_int_equal(salvo_event_cancel(e), SALVO_OK);
        assert_int_equal(salvo_stream_wait_gate(f->st, g, 1), SALVO_OK);
        add(f, f->st, 1, 10);
        assert_int_equal(salvo_stream_flush(f->st), SALVO_OK);
        assert_int_equal(salvo_event_wait(survivor, 2000ull * 1000 * 1000), SALVO_OK);
        assert_int_equal(salvo_stream_query(f->st), SALVO_NOT_READY); /* behind the gate */
        assert_int_equal(salvo_gate_raise(g, 1), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
        salvo_event_destroy(e);
        salvo_event_destroy(survivor);
        salvo_gate_destroy(g);
    }
    lava_expect_all(f->x, N, 20); /* the withdrawn adds of 1 never ran */
}

/* An event recorded among the withdrawn work and again among what stays
 * has the later time; the other withdrawn events keep the batch's start
 * (they once took their time from the first of them, the one recorded
 * again, and so read as later than what came after them). */
static void withdrawn_event_recorded_again(void **state)
{
    fixture *f = *state;
    salvo_event *s = NULL, *t = NULL, *k = NULL;
    assert_int_equal(salvo_event_create(f->dev, &s), SALVO_OK);
    assert_int_equal(salvo_event_create(f->dev, &t), SALVO_OK);
    assert_int_equal(salvo_event_create(f->dev, &k), SALVO_OK);
    assert_int_equal(salvo_event_record(s, f->st), SALVO_OK);
    assert_int_equal(salvo_event_record(t, f->st), SALVO_OK);
    add(f, f->st, 1, 1);
    assert_int_equal(salvo_event_record(f->ev, f->st), SALVO_OK);
    assert_int_equal(salvo_event_record(k, f->st), SALVO_OK);
    add(f, f->st, 20, 10);
    assert_int_equal(salvo_event_record(s, f->st), SALVO_OK); /* s again, after the adds */
    assert_int_equal(salvo_event_cancel(f->ev), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    lava_expect_all(f->x, N, 200);
    uint64_t t_to_k = 0, k_to_s = 0, t_to_s = 0;
    assert_int_equal(salvo_event_elapsed(t, k, &t_to_k), SALVO_OK);
    assert_int_equal(salvo_event_elapsed(k, s, &k_to_s), SALVO_OK);
    assert_int_equal(salvo_event_elapsed(t, s, &t_to_s), SALVO_OK);
    assert_true(k_to_s > 0); /* twenty launches between */
    assert_true(t_to_s >= k_to_s);
    assert_int_equal(t_to_s, t_to_k + k_to_s);
    salvo_event_destroy(s);
    salvo_event_destroy(t);
    salvo_event_destroy(k);
}

static void add_to(fixture *f, salvo_buffer *b, uint32_t value)
{
    salvo_binding bd = {.binding = 0, .buffer = b};
    uint32_t push[2] = {N, value};
    uint32_t groups[3] = {N / 64, 1, 1};
    assert_int_equal(salvo_launch(f->st, f->add, groups, &bd, 1, push, sizeof push), SALVO_OK);
}

/* A replay a cancel keeps is recorded again with the buffers it was made
 * with, whatever salvo_graph_set_bindings or salvo_graph_update changed
 * since, and so are the barriers around it: they were once worked out
 * from the graph as changed, and the launch after the replay that reads
 * its buffer raced it (synchronization validation: read after write). */
static void replay_recorded_again_after_new_bindings(void **state)
{
    fixture *f = *state;
    salvo_kernel *copy = lava_copy_kernel(f->dev);
    for (int how = 0; how < 2; how++) { /* set_bindings, graph_update */
        salvo_buffer *x = lava_zeroed(f->dev, N, SALVO_DOMAIN_DEVICE);
        salvo_buffer *y = lava_zeroed(f->dev, N, SALVO_DOMAIN_DEVICE);
        salvo_buffer *z = lava_zeroed(f->dev, N, SALVO_DOMAIN_DEVICE);
        salvo_graph *g = NULL, *g2 = NULL;
        assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
        add_to(f, x, 1);
        assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_OK);
        assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
        add_to(f, y, 1);
        assert_int_equal(salvo_stream_end_capture(f->st, &g2), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
        add(f, f->st, 1, 1000); /* withdrawn */
        assert_int_equal(salvo_event_record(f->ev, f->st), SALVO_OK);
        assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK); /* x += 1, kept */
        salvo_binding to_y = {.binding = 0, .buffer = y};
        if (how == 0)
            assert_int_equal(salvo_graph_set_bindings(g, 0, &to_y, 1), SALVO_OK);
        else
            assert_int_equal(salvo_graph_update(g, g2), SALVO_OK);
        salvo_binding xz[2] = {{.binding = 0, .buffer = x}, {.binding = 1, .buffer = z}};
        uint32_t push[2] = {N, 0};
        uint32_t groups[3] = {N / 64, 1, 1};
        assert_int_equal(salvo_launch(f->st, copy, groups, xz, 2, push, sizeof push), SALVO_OK);
        assert_int_equal(salvo_event_cancel(f->ev), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
        lava_expect_all(x, N, 1);
        lava_expect_all(z, N, 1); /* read after the replay's write */
        lava_expect_all(y, N, 0);
        salvo_graph_destroy(g);
        salvo_graph_destroy(g2);
        salvo_buffer_destroy(x);
        salvo_buffer_destroy(y);
        salvo_buffer_destroy(z);
    }
    lava_expect_all(f->x, N, 0); /* the withdrawn adds never ran */
    salvo_kernel_destroy(copy);
}

int main(void)
{
    lava_require_device();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(withdraws_what_came_before, setup, teardown),
        cmocka_unit_test_setup_teardown(twin_events_inside_a_withdrawn_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(refused_once_submitted, setup, teardown),
        cmocka_unit_test_setup_teardown(refused_after_a_read_submitted_it, setup, teardown),
        cmocka_unit_test_setup_teardown(copies_and_waiters, setup, teardown),
        cmocka_unit_test_setup_teardown(survivors_keep_out_later_waits, setup, teardown),
        cmocka_unit_test_setup_teardown(withdrawn_event_recorded_again, setup, teardown),
        cmocka_unit_test_setup_teardown(replay_recorded_again_after_new_bindings, setup, teardown),
    };
    return lava_run_tests(tests);
}
