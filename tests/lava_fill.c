/* salvo_fill on a real device with synchronization validation on: exact
 * values in every domain, ordering against launches and copies on the
 * stream (read-after-fill, fill-after-read, fill-after-write), fills in
 * graphs, and bad input. */
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

#define N 4096u

typedef lava_fixture fixture;

/* Every domain; the whole buffer, a middle range, a single word. */
static void fills_every_domain(void **state)
{
    fixture *f = *state;
    const salvo_domain domains[] = {SALVO_DOMAIN_DEVICE, SALVO_DOMAIN_HOST, SALVO_DOMAIN_SHARED};
    static uint32_t got[N], want[N];
    for (size_t d = 0; d < 3; d++) {
        salvo_buffer *b = NULL;
        assert_int_equal(salvo_buffer_create(f->dev, N * 4, domains[d], &b), SALVO_OK);
        assert_int_equal(salvo_fill(f->st, b, 0, N * 4, 0xdeadbeefu), SALVO_OK);
        assert_int_equal(salvo_fill(f->st, b, 100 * 4, 1000 * 4, 7u + (uint32_t)d), SALVO_OK);
        assert_int_equal(salvo_fill(f->st, b, (N - 1) * 4, 4, 0x01010101u * 0xab), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
        for (uint32_t i = 0; i < N; i++)
            want[i] = i >= 100 && i < 1100 ? 7u + (uint32_t)d
                      : i == N - 1        ? 0xababababu
                                          : 0xdeadbeefu;
        assert_int_equal(salvo_buffer_read(b, 0, got, sizeof got), SALVO_OK);
        assert_memory_equal(got, want, sizeof got);
        salvo_buffer_destroy(b);
    }
}

/* On one stream, with no synchronize between: fill, add, fill part,
 * add again. Each step sees the one before (the hazards are read after
 * fill, fill after read and write). */
static void ordered_with_launches(void **state)
{
    fixture *f = *state;
    salvo_buffer *b = NULL, *c = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, N * 4, SALVO_DOMAIN_DEVICE, &b), SALVO_OK);
    assert_int_equal(salvo_buffer_create(f->dev, N * 4, SALVO_DOMAIN_DEVICE, &c), SALVO_OK);
    for (int round = 0; round < 20; round++) {
        assert_int_equal(salvo_fill(f->st, b, 0, N * 4, 10), SALVO_OK);
        lava_add(f->st, f->add, b, 0, N, 5);                              /* 15 */
        assert_int_equal(salvo_fill(f->st, b, 0, 64 * 4, 100), SALVO_OK); /* first 64: 100 */
        lava_add(f->st, f->add, b, 0, N, 1); /* 16, first 64: 101 */
        assert_int_equal(salvo_copy(f->st, b, 0, c, 0, N * 4), SALVO_OK);
        assert_int_equal(salvo_fill(f->st, b, 0, N * 4, 0), SALVO_OK); /* after the copy read it */
    }
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    static uint32_t got[N];
    assert_int_equal(salvo_buffer_read(c, 0, got, sizeof got), SALVO_OK);
    for (uint32_t i = 0; i < N; i++)
        if (got[i] != (i < 64 ? 101u : 16u))
            fail_msg("c[%u] = %u", i, got[i]);
    assert_int_equal(salvo_buffer_read(b, 0, got, sizeof got), SALVO_OK);
    for (uint32_t i = 0; i < N; i++)
        if (got[i] != 0)
            fail_msg("b[%u] = %u", i, got[i]);
    salvo_buffer_destroy(b);
    salvo_buffer_destroy(c);
}

/* A fill captured is a node: replays fill again, after the adds before
 * it and before those after it. */
static void fill_in_graph(void **state)
{
    fixture *f = *state;
    salvo_buffer *b = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, N * 4, SALVO_DOMAIN_DEVICE, &b), SALVO_OK);
    assert_int_equal(salvo_buffer_write(b, 0, (uint32_t[N]){0}, N * 4), SALVO_OK);
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    lava_add(f->st, f->add, b, 0, N, 3);
    assert_int_equal(salvo_fill(f->st, b, 0, N * 2, 40), SALVO_OK); /* the first half */
    lava_add(f->st, f->add, b, 0, N, 2);
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_OK);
    assert_int_equal(salvo_graph_node_count(g), 3);
    assert_int_equal(salvo_graph_set_push(g, 1, (uint32_t[2]){0, 0}, 8), SALVO_ERROR_INVALID_ARGUMENT);
    if (!strstr(salvo_last_error(), "fill"))
        fail_msg("'%s' does not say the node is a fill", salvo_last_error());
    for (int r = 0; r < 3; r++)
        assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    static uint32_t got[N];
    assert_int_equal(salvo_buffer_read(b, 0, got, sizeof got), SALVO_OK);
    /* first half: 40 + 2 each time; second half: 5 per replay */
    for (uint32_t i = 0; i < N; i++)
        if (got[i] != (i < N / 2 ? 42u : 15u))
            fail_msg("b[%u] = %u", i, got[i]);
    salvo_graph_destroy(g);
    salvo_buffer_destroy(b);
}

static void bad_input(void **state)
{
    fixture *f = *state;
    salvo_buffer *b = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, 256, SALVO_DOMAIN_DEVICE, &b), SALVO_OK);
    assert_int_equal(salvo_fill(f->st, b, 0, 256, 9), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    assert_int_equal(salvo_fill(NULL, b, 0, 4, 0), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_fill(f->st, NULL, 0, 4, 0), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_fill(f->st, b, 0, 0, 0), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_fill(f->st, b, 2, 4, 0), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_fill(f->st, b, 0, 6, 0), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_fill(f->st, b, 252, 8, 0), SALVO_ERROR_INVALID_ARGUMENT);
    if (!strstr(salvo_last_error(), "outside the buffer"))
        fail_msg("'%s'", salvo_last_error());
    assert_int_equal(salvo_fill(f->st, b, 256, 4, 0), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_fill(f->st, b, UINT64_MAX - 3, 4, 0), SALVO_ERROR_INVALID_ARGUMENT);
    /* Nothing was recorded: the buffer keeps the 9s it had (the refused
     * fills were all of 0). */
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    uint32_t got[64];
    assert_int_equal(salvo_buffer_read(b, 0, got, sizeof got), SALVO_OK);
    for (int i = 0; i < 64; i++)
        assert_int_equal(got[i], 9);
    salvo_buffer_destroy(b);
}

int main(void)
{
    lava_require_device();
    const struct CMUnitTest tests[] = {
        lava_test(fills_every_domain),
        lava_test(ordered_with_launches),
        lava_test(fill_in_graph),
        lava_test(bad_input),
    };
    return lava_run_tests(tests);
}
