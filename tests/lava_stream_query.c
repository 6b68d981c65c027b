/* salvo_stream_query, salvo_event_wait and salvo_event_elapsed on a real
 * device with the validation layer on: work held deterministically by a
 * host gate, GPU times of kernels that do measurable work, values read
 * back. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
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
#include "spin.spv.h"
#include "support/lava.h"

#define N 256u
#define BIG (1u << 21) /* elements of the buffer the timed work adds to */

typedef struct fixture {
    salvo_device *dev;
    salvo_kernel *add, *spin;
    salvo_stream *st, *st2;
    salvo_buffer *x, *out, *big;
    salvo_event *a, *b, *c;
} fixture;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dev = lava_open(0, 0);
    f->add = lava_add_kernel(f->dev);
    salvo_kernel_desc sd = {.spirv = spin_spv, .spirv_size = sizeof spin_spv, .name = "spin"};
    assert_int_equal(salvo_kernel_create(f->dev, &sd, &f->spin), SALVO_OK);
    assert_int_equal(salvo_stream_create(f->dev, NULL, &f->st), SALVO_OK);
    assert_int_equal(salvo_stream_create(f->dev, NULL, &f->st2), SALVO_OK);
    f->x = lava_zeroed(f->dev, N, SALVO_DOMAIN_DEVICE);
    assert_int_equal(salvo_buffer_create(f->dev, N * 4, SALVO_DOMAIN_DEVICE, &f->out), SALVO_OK);
    assert_int_equal(salvo_buffer_create(f->dev, BIG * 4ull, SALVO_DOMAIN_DEVICE, &f->big),
                     SALVO_OK);
    assert_int_equal(salvo_event_create(f->dev, &f->a), SALVO_OK);
    assert_int_equal(salvo_event_create(f->dev, &f->b), SALVO_OK);
    assert_int_equal(salvo_event_create(f->dev, &f->c), SALVO_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    lava_expect_settled(f->dev);
    salvo_event_destroy(f->a);
    salvo_event_destroy(f->b);
    salvo_event_destroy(f->c);
    salvo_stream_destroy(f->st);
    salvo_stream_destroy(f->st2);
    salvo_buffer_destroy(f->x);
    salvo_buffer_destroy(f->out);
    salvo_buffer_destroy(f->big);
    salvo_kernel_destroy(f->add);
    salvo_kernel_destroy(f->spin);
    lava_close(f->dev);
    free(f);
    return 0;
}

static void add(fixture *f, salvo_stream *st, uint32_t value)
{
    salvo_binding b = {.binding = 0, .buffer = f->x};
    uint32_t push[2] = {N, value};
    uint32_t groups[3] = {N / 64, 1, 1};
    assert_int_equal(salvo_launch(st, f->add, groups, &b, 1, push, sizeof push), SALVO_OK);
}

static void spin(fixture *f, salvo_stream *st, uint32_t iterations)
{
    salvo_binding b = {.binding = 0, .buffer = f->out};
    uint32_t groups[3] = {N / 64, 1, 1};
    assert_int_equal(salvo_launch(st, f->spin, groups, &b, 1, &iterations, sizeof iterations),
                     SALVO_OK);
}

/* Measurable work: count passes over 16 MiB. */
static void add_big(fixture *f, salvo_stream *st, int count)
{
    salvo_binding b = {.binding = 0, .buffer = f->big};
    uint32_t push[2] = {BIG, 1};
    uint32_t groups[3] = {BIG / 64, 1, 1};
    for (int i = 0; i < count; i++)
        assert_int_equal(salvo_launch(st, f->add, groups, &b, 1, push, sizeof push), SALVO_OK);
}

static uint64_t elapsed_ok(salvo_event *s, salvo_event *e)
{
    uint64_t ns = 0;
    salvo_status r = salvo_event_elapsed(s, e, &ns);
    if (r != SALVO_OK)
        fail_msg("event_elapsed: %s: %s", salvo_status_string(r), salvo_last_error());
    return ns;
}

/* A gate holds the stream's work: the query says NOT_READY at once (never
 * blocks), a bounded wait times out and leaves the event usable, and both
 * say OK once the gate is raised. */
static void query_and_wait_around_a_gate(void **state)
{
    fixture *f = *state;
    assert_int_equal(salvo_stream_query(f->st), SALVO_OK); /* nothing recorded */
    assert_int_equal(salvo_event_wait(f->a, 0), SALVO_OK); /* never recorded */
    salvo_gate *g = NULL;
    assert_int_equal(salvo_gate_create(f->dev, &g), SALVO_OK);
    assert_int_equal(salvo_stream_wait_gate(f->st, g, 1), SALVO_OK);
    add(f, f->st, 3);
    assert_int_equal(salvo_event_record(f->a, f->st), SALVO_OK);
    add(f, f->st, 4);
    uint64_t t0 = now_ns();
    for (int i = 0; i < 10; i++)
        assert_int_equal(salvo_stream_query(f->st), SALVO_NOT_READY);
    assert_int_equal(salvo_event_query(f->a), SALVO_NOT_READY);
    assert_true(now_ns() - t0 < 1000ull * 1000 * 1000); /* no blocking */
    uint64_t ns = 1;
    assert_int_equal(salvo_event_elapsed(f->a, f->a, &ns), SALVO_NOT_READY);
    assert_int_equal(ns, 0);
    assert_int_equal(salvo_event_wait(f->a, 0), SALVO_TIMEOUT);
    t0 = now_ns();
    assert_int_equal(salvo_event_wait(f->a, 20ull * 1000 * 1000), SALVO_TIMEOUT);
    uint64_t waited = now_ns() - t0;
    assert_true(waited >= 19ull * 1000 * 1000);
    assert_true(waited < 5000ull * 1000 * 1000);
    assert_int_equal(salvo_stream_query(f->st), SALVO_NOT_READY);
    assert_int_equal(salvo_gate_raise(g, 1), SALVO_OK);
    assert_int_equal(salvo_event_wait(f->a, UINT64_MAX), SALVO_OK);
    assert_int_equal(salvo_event_query(f->a), SALVO_OK);
    while (salvo_stream_query(f->st) == SALVO_NOT_READY)
        ;
    assert_int_equal(salvo_stream_query(f->st), SALVO_OK);
    lava_expect_all(f->x, N, 7);
    assert_int_equal(salvo_event_elapsed(f->a, f->a, &ns), SALVO_OK);
    assert_int_equal(ns, 0);
    salvo_gate_destroy(g);
}

/* Times of kernels that do measurable work: positive, more work longer,
 * and two intervals add up to the whole. */
static void elapsed_of_kernels(void **state)
{
    fixture *f = *state;
    /* Held by a gate until the first look: that one cannot find c's work
     * complete, whenever the device would have run it. */
    salvo_gate *g = NULL;
    assert_int_equal(salvo_gate_create(f->dev, &g), SALVO_OK);
    assert_int_equal(salvo_stream_wait_gate(f->st, g, 1), SALVO_OK);
    add_big(f, f->st, 1); /* warm: the first dispatch of a batch pays more */
    assert_int_equal(salvo_event_record(f->a, f->st), SALVO_OK);
    add_big(f, f->st, 1);
    assert_int_equal(salvo_event_record(f->b, f->st), SALVO_OK);
    add_big(f, f->st, 12);
    assert_int_equal(salvo_event_record(f->c, f->st), SALVO_OK);
    uint64_t ns = 7;
    assert_int_equal(salvo_event_elapsed(f->a, f->c, &ns), SALVO_NOT_READY);
    assert_int_equal(ns, 0);
    assert_int_equal(salvo_gate_raise(g, 1), SALVO_OK);
    assert_int_equal(salvo_event_synchronize(f->c), SALVO_OK);
    salvo_gate_destroy(g);
    uint64_t ab = elapsed_ok(f->a, f->b), bc = elapsed_ok(f->b, f->c), ac = elapsed_ok(f->a, f->c);
    fprintf(stderr, "1 pass: %llu ns, 12 passes: %llu ns, both: %llu ns\n",
            (unsigned long long)ab, (unsigned long long)bc, (unsigned long long)ac);
    assert_true(ab > 0);
    assert_true(bc > ab);
    /* Each interval is rounded to the nanosecond on its own. */
    assert_true(ac + 2 >= ab + bc && ac <= ab + bc + 2);
    uint64_t ba = 0x1234; /* set to 0 by the refusal */
    assert_int_equal(salvo_event_elapsed(f->c, f->a, &ba), SALVO_ERROR_INVALID_STATE);
    assert_int_equal(ba, 0);
    /* Recorded again (after a synchronize: a batch of its own). */
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    assert_int_equal(salvo_event_record(f->a, f->st), SALVO_OK);
    spin(f, f->st, 20000);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    assert_int_equal(salvo_event_record(f->b, f->st), SALVO_OK);
    assert_int_equal(salvo_event_wait(f->b, UINT64_MAX), SALVO_OK);
    assert_true(elapsed_ok(f->a, f->b) > 0);
}

/* Events recorded among launches a cancel withdrew mark the batch's start:
 * no time passes between two of them, on any device. */
static void elapsed_among_withdrawn_launches(void **state)
{
    fixture *f = *state;
    salvo_event *d = NULL;
    assert_int_equal(salvo_event_create(f->dev, &d), SALVO_OK);
    add_big(f, f->st, 1);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    assert_int_equal(salvo_event_record(f->a, f->st), SALVO_OK);
    add_big(f, f->st, 4);
    assert_int_equal(salvo_event_record(f->b, f->st), SALVO_OK);
    add_big(f, f->st, 4);
    assert_int_equal(salvo_event_record(f->c, f->st), SALVO_OK);
    assert_int_equal(salvo_event_cancel(f->c), SALVO_OK);
    add_big(f, f->st, 4); /* kept: runs after the marks */
    assert_int_equal(salvo_event_record(d, f->st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    uint64_t ab = elapsed_ok(f->a, f->b), bd = elapsed_ok(f->b, d);
    fprintf(stderr, "withdrawn: a..b %llu ns, b..d %llu ns\n", (unsigned long long)ab,
            (unsigned long long)bd);
    assert_int_equal(ab, 0);
    assert_true(bd > 0);
    salvo_event_destroy(d);
}

/* Events of two streams ordered by an event: the interval is the other
 * stream's work. */
static void elapsed_across_streams(void **state)
{
    fixture *f = *state;
    assert_int_equal(salvo_event_record(f->a, f->st), SALVO_OK);
    add(f, f->st, 1);
    assert_int_equal(salvo_event_record(f->b, f->st), SALVO_OK);
    assert_int_equal(salvo_stream_wait_event(f->st2, f->b), SALVO_OK);
    add(f, f->st2, 2);
    spin(f, f->st2, 20000);
    assert_int_equal(salvo_event_record(f->c, f->st2), SALVO_OK);
    assert_int_equal(salvo_event_synchronize(f->c), SALVO_OK);
    assert_int_equal(salvo_stream_query(f->st2), SALVO_OK);
    uint64_t ab = elapsed_ok(f->a, f->b), bc = elapsed_ok(f->b, f->c);
    assert_true(bc > 0);
    assert_true(elapsed_ok(f->a, f->c) + 2 >= ab + bc);
    lava_expect_all(f->x, N, 3);
}

static void bad_input(void **state)
{
    fixture *f = *state;
    salvo_event *fresh = NULL;
    assert_int_equal(salvo_event_create(f->dev, &fresh), SALVO_OK);
    uint64_t ns = 5;
    assert_int_equal(salvo_stream_query(NULL), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_event_wait(NULL, 10), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_event_elapsed(NULL, f->a, &ns), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ns, 0);
    assert_int_equal(salvo_event_elapsed(f->a, NULL, &ns), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_event_elapsed(f->a, f->b, NULL), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_event_elapsed(fresh, fresh, &ns), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_event_record(f->a, f->st), SALVO_OK);
    assert_int_equal(salvo_event_elapsed(f->a, fresh, &ns), SALVO_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(salvo_last_error(), "never recorded"));
    /* A point of a graph. */
    assert_int_equal(salvo_stream_synchronize(f->st2), SALVO_OK);
    assert_int_equal(salvo_stream_begin_capture(f->st2), SALVO_OK);
    assert_int_equal(salvo_event_record(fresh, f->st2), SALVO_OK);
    assert_int_equal(salvo_stream_query(f->st2), SALVO_ERROR_INVALID_STATE);
    assert_int_equal(salvo_event_elapsed(f->a, fresh, &ns), SALVO_ERROR_INVALID_STATE);
    assert_int_equal(salvo_event_wait(fresh, 1000), SALVO_ERROR_INVALID_STATE);
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_end_capture(f->st2, &g), SALVO_OK);
    salvo_graph_destroy(g);
    salvo_event_destroy(fresh);
}

int main(void)
{
    lava_require_device();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(query_and_wait_around_a_gate, setup, teardown),
        cmocka_unit_test_setup_teardown(elapsed_of_kernels, setup, teardown),
        cmocka_unit_test_setup_teardown(elapsed_among_withdrawn_launches, setup, teardown),
        cmocka_unit_test_setup_teardown(elapsed_across_streams, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_input, setup, teardown),
    };
    return lava_run_tests(tests);
}
