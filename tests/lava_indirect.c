/* salvo_launch_indirect on a real device with synchronization validation
 * on: counts a kernel, a fill or a copy wrote earlier in the same stream
 * (and batch), counts read before a later write of them, zero counts, a
 * graph replayed after its counts changed (and its bindings updated), and
 * refusals that record nothing. Each dispatch runs group_mark, which adds
 * to one word per workgroup, so the words read back say which workgroups
 * ran. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "add.spv.h"
#include "group_mark.spv.h"
#include "salvo/salvo.h"
#include "support/lava.h"
#include "write_counts.spv.h"

/* The marks: W x H x D workgroups and the word for any beyond them. */
enum { W = 8, H = 4, D = 2, MARKS = W * H * D + 1 };

typedef struct fixture {
    salvo_device *dev;
    salvo_kernel *mark, *write, *add;
    salvo_stream *st;
    salvo_buffer *marks, *counts;
} fixture;

static salvo_kernel *kernel(salvo_device *dev, const uint32_t *spv, size_t size, const char *name)
{
    salvo_kernel *k = NULL;
    salvo_spec_constant sc = {0, 64};
    salvo_kernel_desc kd = {.spirv = spv, .spirv_size = size, .name = name,
                            .spec_constants = &sc, .spec_constant_count = spv == add_spv};
    assert_int_equal(salvo_kernel_create(dev, &kd, &k), SALVO_OK);
    return k;
}

static int setup_with(void **state, uint32_t batch)
{
    fixture *f = calloc(1, sizeof *f);
    f->dev = lava_open(SALVO_DEVICE_SYNC_VALIDATION, batch);
    f->mark = kernel(f->dev, group_mark_spv, sizeof group_mark_spv, "group_mark");
    f->write = kernel(f->dev, write_counts_spv, sizeof write_counts_spv, "write_counts");
    f->add = kernel(f->dev, add_spv, sizeof add_spv, "add");
    assert_int_equal(salvo_stream_create(f->dev, NULL, &f->st), SALVO_OK);
    assert_int_equal(salvo_buffer_create(f->dev, MARKS * 4, SALVO_DOMAIN_DEVICE, &f->marks),
                     SALVO_OK);
    assert_int_equal(salvo_buffer_create(f->dev, 64, SALVO_DOMAIN_DEVICE, &f->counts), SALVO_OK);
    assert_int_equal(salvo_fill(f->st, f->marks, 0, MARKS * 4, 0), SALVO_OK);
    assert_int_equal(salvo_fill(f->st, f->counts, 0, 64, 0), SALVO_OK);
    *state = f;
    return 0;
}

static int setup(void **state)
{
    return setup_with(state, 0);
}

static int teardown(void **state)
{
    fixture *f = *state;
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    salvo_stats s;
    assert_int_equal(salvo_device_stats(f->dev, &s), SALVO_OK);
    assert_int_equal(s.validation_messages, 0);
    salvo_buffer_destroy(f->counts);
    salvo_buffer_destroy(f->marks);
    salvo_stream_destroy(f->st);
    salvo_kernel_destroy(f->add);
    salvo_kernel_destroy(f->write);
    salvo_kernel_destroy(f->mark);
    lava_close(f->dev);
    free(f);
    return 0;
}

/* The counts (x, y, z) at word `at` of the count buffer, by a kernel. */
static void write_counts(fixture *f, uint32_t at, uint32_t x, uint32_t y, uint32_t z)
{
    salvo_binding b = {.binding = 0, .buffer = f->counts};
    const uint32_t push[4] = {at, x, y, z};
    const uint32_t one[3] = {1, 1, 1};
    assert_int_equal(salvo_launch(f->st, f->write, one, &b, 1, push, sizeof push), SALVO_OK);
}

static salvo_status mark_indirect(fixture *f, salvo_buffer *marks, uint64_t offset,
                                  uint32_t value)
{
    salvo_binding b = {.binding = 0, .buffer = marks};
    const uint32_t push[4] = {W, H, D, value};
    return salvo_launch_indirect(f->st, f->mark, f->counts, offset, &b, 1, push, sizeof push);
}

/* Each workgroup's word in want (MARKS words): += value for a box of
 * x by y by z workgroups. */
static void expect_box(uint32_t *want, uint32_t x, uint32_t y, uint32_t z, uint32_t value)
{
    for (uint32_t k = 0; k < z; k++)
        for (uint32_t j = 0; j < y; j++)
            for (uint32_t i = 0; i < x; i++)
                want[(k * H + j) * W + i] += value;
}

static void check_marks(fixture *f, salvo_buffer *marks, const uint32_t *want)
{
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    uint32_t got[MARKS];
    assert_int_equal(salvo_buffer_read(marks, 0, got, sizeof got), SALVO_OK);
    for (uint32_t i = 0; i < MARKS; i++)
        if (got[i] != want[i])
            fail_msg("mark %u: %u, expected %u", i, got[i], want[i]);
}

/* A kernel writes the counts and the indirect launch reads them, in one
 * batch (no synchronize between); then the counts change again and again
 * within the batch, each launch seeing the counts written just before it. */
static void counts_from_a_kernel(void **state)
{
    fixture *f = *state;
    uint32_t want[MARKS] = {0};
    static const uint32_t boxes[][3] = {{3, 2, 1}, {8, 4, 2}, {1, 1, 1}, {5, 1, 2}, {2, 3, 1}};
    for (uint32_t i = 0; i < 5; i++) {
        write_counts(f, 4, boxes[i][0], boxes[i][1], boxes[i][2]);
        assert_int_equal(mark_indirect(f, f->marks, 16, 1u << i), SALVO_OK);
        expect_box(want, boxes[i][0], boxes[i][1], boxes[i][2], 1u << i);
    }
    check_marks(f, f->marks, want);
    salvo_stats s;
    assert_int_equal(salvo_device_stats(f->dev, &s), SALVO_OK);
    /* Every dispatch waited for its counts: a barrier before each. */
    assert_true(s.barriers_emitted >= 10);
}

/* The counts written by a fill and by a copy (transfer writes), and read
 * before a kernel overwrites them (the write waits for the read). */
static void counts_from_transfers(void **state)
{
    fixture *f = *state;
    uint32_t want[MARKS] = {0};
    salvo_buffer *src = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, 12, SALVO_DOMAIN_HOST, &src), SALVO_OK);
    const uint32_t box[3] = {4, 3, 2};
    assert_int_equal(salvo_buffer_write(src, 0, box, sizeof box), SALVO_OK);
    for (int round = 0; round < 3; round++) {
        assert_int_equal(salvo_fill(f->st, f->counts, 0, 12, 2), SALVO_OK);
        assert_int_equal(mark_indirect(f, f->marks, 0, 1), SALVO_OK);
        expect_box(want, 2, 2, 2, 1);
        assert_int_equal(salvo_copy(f->st, src, 0, f->counts, 0, 12), SALVO_OK);
        assert_int_equal(mark_indirect(f, f->marks, 0, 100), SALVO_OK);
        expect_box(want, 4, 3, 2, 100);
        write_counts(f, 0, 1, 1, 1); /* after the launch above read (4, 3, 2) */
        assert_int_equal(mark_indirect(f, f->marks, 0, 10000), SALVO_OK);
        expect_box(want, 1, 1, 1, 10000);
    }
    check_marks(f, f->marks, want);
    salvo_buffer_destroy(src);
}

/* A HOST count buffer written through its mapping before the launches. */
static void counts_in_a_mapped_buffer(void **state)
{
    fixture *f = *state;
    salvo_buffer *host = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, 24, SALVO_DOMAIN_HOST, &host), SALVO_OK);
    uint32_t *p = NULL;
    assert_int_equal(salvo_buffer_map(host, (void **)&p), SALVO_OK);
    p[0] = 6, p[1] = 1, p[2] = 1, p[3] = 2, p[4] = 2, p[5] = 2;
    salvo_binding b = {.binding = 0, .buffer = f->marks};
    const uint32_t push[4] = {W, H, D, 1};
    assert_int_equal(salvo_launch_indirect(f->st, f->mark, host, 0, &b, 1, push, sizeof push),
                     SALVO_OK);
    assert_int_equal(salvo_launch_indirect(f->st, f->mark, host, 12, &b, 1, push, sizeof push),
                     SALVO_OK);
    uint32_t want[MARKS] = {0};
    expect_box(want, 6, 1, 1, 1);
    expect_box(want, 2, 2, 2, 1);
    check_marks(f, f->marks, want);
    salvo_buffer_destroy(host);
}

/* A count of 0 in any dimension runs no workgroup; the stream goes on. */
static void zero_counts(void **state)
{
    fixture *f = *state;
    static const uint32_t zeros[][3] = {{0, 0, 0}, {0, 1, 1}, {4, 0, 1}, {4, 2, 0}};
    for (int i = 0; i < 4; i++) {
        write_counts(f, 0, zeros[i][0], zeros[i][1], zeros[i][2]);
        assert_int_equal(mark_indirect(f, f->marks, 0, 1), SALVO_OK);
    }
    write_counts(f, 0, 2, 1, 1);
    assert_int_equal(mark_indirect(f, f->marks, 0, 7), SALVO_OK);
    uint32_t want[MARKS] = {0};
    expect_box(want, 2, 1, 1, 7);
    check_marks(f, f->marks, want);
}

/* A graph holding the indirect launch: each replay reads the counts as
 * they are then (written by the host, or by a kernel before the replay);
 * a graph whose own node writes the counts orders the launch after it. */
static void graph_replayed_after_counts_change(void **state)
{
    fixture *f = *state;
    uint32_t want[MARKS] = {0};
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    assert_int_equal(mark_indirect(f, f->marks, 8, 1), SALVO_OK);
    assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_OK);
    assert_int_equal(salvo_graph_node_count(g), 1);

    const uint32_t host_box[3] = {3, 3, 1};
    assert_int_equal(salvo_buffer_write(f->counts, 8, host_box, sizeof host_box), SALVO_OK);
    assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
    expect_box(want, 3, 3, 1, 1);
    write_counts(f, 2, 7, 2, 2); /* same stream, same batch as the next replay */
    assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
    expect_box(want, 7, 2, 2, 1);
    check_marks(f, f->marks, want);

    /* Push constants and bindings update as a launch's; the counts stay. */
    salvo_buffer *other = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, MARKS * 4, SALVO_DOMAIN_DEVICE, &other),
                     SALVO_OK);
    assert_int_equal(salvo_fill(f->st, other, 0, MARKS * 4, 0), SALVO_OK);
    const uint32_t push[4] = {W, H, D, 5};
    assert_int_equal(salvo_graph_set_push(g, 0, push, sizeof push), SALVO_OK);
    salvo_binding b = {.binding = 0, .buffer = other};
    assert_int_equal(salvo_graph_set_bindings(g, 0, &b, 1), SALVO_OK);
    assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
    uint32_t want_other[MARKS] = {0};
    expect_box(want_other, 7, 2, 2, 5);
    check_marks(f, other, want_other);
    check_marks(f, f->marks, want); /* untouched by the updated graph */
    salvo_graph_destroy(g);

    /* Counts written by a node of the graph itself. */
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    write_counts(f, 0, 2, 2, 2);
    assert_int_equal(mark_indirect(f, f->marks, 0, 1000), SALVO_OK);
    write_counts(f, 0, 1, 4, 1); /* after the launch read (2, 2, 2) */
    assert_int_equal(mark_indirect(f, f->marks, 0, 100000), SALVO_OK);
    assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_OK);
    for (int r = 0; r < 2; r++) {
        assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
        expect_box(want, 2, 2, 2, 1000);
        expect_box(want, 1, 4, 1, 100000);
    }
    check_marks(f, f->marks, want);
    salvo_graph_destroy(g);
    salvo_buffer_destroy(other);
}

/* Refusals name what is wrong and record nothing. */
static void bad_offsets(void **state)
{
    fixture *f = *state;
    write_counts(f, 0, 1, 1, 1);
    salvo_binding b = {.binding = 0, .buffer = f->marks};
    const uint32_t push[4] = {W, H, D, 1};
    static const uint64_t offsets[] = {2, 3, 53, 56, 60, 64, 1000, UINT64_MAX - 3};
    for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; i++) {
        assert_int_equal(mark_indirect(f, f->marks, offsets[i], 1), SALVO_ERROR_INVALID_ARGUMENT);
        const char *why = offsets[i] % 4 ? "not a multiple of 4" : "outside the count buffer";
        if (!strstr(salvo_last_error(), why))
            fail_msg("offset %llu: '%s'", (unsigned long long)offsets[i], salvo_last_error());
    }
    assert_int_equal(salvo_launch_indirect(NULL, f->mark, f->counts, 0, &b, 1, push, sizeof push),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_launch_indirect(f->st, NULL, f->counts, 0, &b, 1, push, sizeof push),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_launch_indirect(f->st, f->mark, NULL, 0, &b, 1, push, sizeof push),
                     SALVO_ERROR_INVALID_ARGUMENT);
    if (!strstr(salvo_last_error(), "count_buffer"))
        fail_msg("'%s'", salvo_last_error());
    assert_int_equal(salvo_launch_indirect(f->st, f->mark, f->counts, 0, &b, 1, push, 8),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_launch_indirect(f->st, f->mark, f->counts, 0, NULL, 0, push, sizeof push),
                     SALVO_ERROR_INVALID_ARGUMENT);
    /* Nothing of those ran: only this one marks (52: the last 12 bytes
     * of the 64 fit). */
    const uint32_t box[3] = {1, 1, 1};
    assert_int_equal(salvo_buffer_write(f->counts, 52, box, sizeof box), SALVO_OK);
    assert_int_equal(mark_indirect(f, f->marks, 52, 3), SALVO_OK);
    uint32_t want[MARKS] = {0};
    want[0] = 3;
    check_marks(f, f->marks, want);
}

/* A kernel whose buffer is also the count buffer (counts past its data):
 * the launch reads the counts and writes the data. */
static void counts_beside_the_data(void **state)
{
    fixture *f = *state;
    enum { N = 1024 };
    salvo_buffer *b = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, N * 4 + 12, SALVO_DOMAIN_DEVICE, &b), SALVO_OK);
    assert_int_equal(salvo_fill(f->st, b, 0, N * 4, 1), SALVO_OK);
    const uint32_t groups[3] = {3, 1, 1}; /* 3 of the N / 64 */
    assert_int_equal(salvo_buffer_write(b, N * 4, groups, sizeof groups), SALVO_OK);
    salvo_binding bd = {.binding = 0, .buffer = b, .size = N * 4};
    const uint32_t push[2] = {N, 5};
    assert_int_equal(salvo_launch_indirect(f->st, f->add, b, N * 4, &bd, 1, push, sizeof push),
                     SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    static uint32_t got[N];
    assert_int_equal(salvo_buffer_read(b, 0, got, sizeof got), SALVO_OK);
    for (uint32_t i = 0; i < N; i++)
        if (got[i] != (i < 3 * 64 ? 6u : 1u))
            fail_msg("[%u] = %u", i, got[i]);
    salvo_buffer_destroy(b);
}

int main(void)
{
    lava_require_device();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(counts_from_a_kernel, setup, teardown),
        cmocka_unit_test_setup_teardown(counts_from_transfers, setup, teardown),
        cmocka_unit_test_setup_teardown(counts_in_a_mapped_buffer, setup, teardown),
        cmocka_unit_test_setup_teardown(zero_counts, setup, teardown),
        cmocka_unit_test_setup_teardown(graph_replayed_after_counts_change, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_offsets, setup, teardown),
        cmocka_unit_test_setup_teardown(counts_beside_the_data, setup, teardown),
    };
    return lava_run_tests(tests);
}
