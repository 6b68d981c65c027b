/* Queries of a device and its streams on a real device with the
 * validation layer on: salvo_stream_is_capturing through a capture's
 * whole life (begun, joined, refused calls, ended, abandoned). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "add.spv.h"
#include "salvo/salvo.h"
#include "support/lava.h"

#define N 256u

static bool capturing(salvo_stream *st)
{
    bool out = !true; /* overwritten either way */
    assert_int_equal(salvo_stream_is_capturing(st, &out), SALVO_OK);
    return out;
}

/* Begun on one stream, joined by another through an event, ended: each
 * stream says so at every step, refused calls leave the capture going,
 * and the graph made runs the captured launch. */
static void test_is_capturing(void **state)
{
    (void)state;
    salvo_device *dev = lava_open(0, 0);
    salvo_spec_constant sc = {0, 64};
    salvo_kernel_desc kd = {.spirv = add_spv, .spirv_size = sizeof add_spv, .name = "add",
                            .spec_constants = &sc, .spec_constant_count = 1};
    salvo_kernel *add = NULL;
    assert_int_equal(salvo_kernel_create(dev, &kd, &add), SALVO_OK);
    salvo_stream *a = NULL, *b = NULL, *c = NULL;
    assert_int_equal(salvo_stream_create(dev, NULL, &a), SALVO_OK);
    assert_int_equal(salvo_stream_create(dev, NULL, &b), SALVO_OK);
    assert_int_equal(salvo_stream_create(dev, NULL, &c), SALVO_OK);
    salvo_buffer *x = NULL;
    assert_int_equal(salvo_buffer_create(dev, N * 4, SALVO_DOMAIN_DEVICE, &x), SALVO_OK);
    uint32_t host[N] = {0};
    assert_int_equal(salvo_buffer_write(x, 0, host, sizeof host), SALVO_OK);
    salvo_event *fork = NULL;
    assert_int_equal(salvo_event_create(dev, &fork), SALVO_OK);

    assert_false(capturing(a));
    assert_int_equal(salvo_stream_begin_capture(a), SALVO_OK);
    assert_true(capturing(a));
    assert_false(capturing(b));
    /* A refused call: the capture goes on. */
    assert_int_equal(salvo_stream_synchronize(a), SALVO_ERROR_INVALID_STATE);
    assert_true(capturing(a));

    struct { uint32_t n, value; } push = {N, 5};
    salvo_binding bind = {.binding = 0, .buffer = x};
    const uint32_t groups[3] = {N / 64, 1, 1};
    assert_int_equal(salvo_launch(a, add, groups, &bind, 1, &push, sizeof push), SALVO_OK);
    /* b joins through an event of the capture. */
    assert_int_equal(salvo_event_record(fork, a), SALVO_OK);
    assert_int_equal(salvo_stream_wait_event(b, fork), SALVO_OK);
    assert_true(capturing(b));
    assert_false(capturing(c));

    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_end_capture(a, &g), SALVO_OK);
    assert_false(capturing(a));
    assert_false(capturing(b));
    assert_int_equal(salvo_graph_node_count(g), 1);
    /* The captured launch ran only now: 0 + 5. */
    assert_int_equal(salvo_graph_launch(g, c), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(c), SALVO_OK);
    assert_int_equal(salvo_buffer_read(x, 0, host, sizeof host), SALVO_OK);
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(host[i], 5);

    /* A capture whose stream is destroyed is abandoned: the stream that
     * joined it is out of it. */
    assert_int_equal(salvo_stream_begin_capture(c), SALVO_OK);
    assert_int_equal(salvo_event_record(fork, c), SALVO_OK);
    assert_int_equal(salvo_stream_wait_event(b, fork), SALVO_OK);
    assert_true(capturing(b));
    salvo_stream_destroy(c);
    assert_false(capturing(b));

    /* Bad arguments: refused, *out false. */
    bool out = true;
    assert_int_equal(salvo_stream_is_capturing(NULL, &out), SALVO_ERROR_INVALID_ARGUMENT);
    assert_false(out);
    assert_int_equal(salvo_stream_is_capturing(a, NULL), SALVO_ERROR_INVALID_ARGUMENT);

    salvo_graph_destroy(g);
    salvo_event_destroy(fork);
    salvo_buffer_destroy(x);
    salvo_stream_destroy(b);
    salvo_stream_destroy(a);
    salvo_kernel_destroy(add);
    assert_int_equal(lava_validation_messages(), 0);
    lava_close(dev);
}

int main(void)
{
    lava_require_device();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_is_capturing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
