/* Barriers only where a hazard exists, checked on a real device with
 * synchronization validation on: the counts of barriers emitted, and the
 * values read back. */
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

#define N 64u       /* elements per slice */
#define SLICES 100u /* launches */

/* Every batch brings two barriers of its own: one at its start (order
 * against earlier batches and transfers) and one at its end (host reads). */
#define PER_BATCH 2

typedef struct fixture {
    salvo_device *dev;
    salvo_kernel *add, *copy;
    salvo_stream *st;
    uint64_t slice; /* bytes between slices, aligned for binding offsets */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dev = lava_open(SALVO_DEVICE_SYNC_VALIDATION, 4096);
    f->add = lava_add_kernel(f->dev);
    f->copy = lava_copy_kernel(f->dev);
    /* Full batches from the first launch, so batch boundaries (which bring
     * barriers of their own) do not fall among the counted launches. */
    salvo_stream_desc sd = {.first_batch = 4096};
    assert_int_equal(salvo_stream_create(f->dev, &sd, &f->st), SALVO_OK);
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(f->dev, &info), SALVO_OK);
    uint64_t al = info.min_storage_buffer_offset_alignment ? info.min_storage_buffer_offset_alignment : 4;
    f->slice = (N * 4 + al - 1) / al * al;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    lava_expect_no_validation(f->dev);
    salvo_stream_destroy(f->st);
    salvo_kernel_destroy(f->add);
    salvo_kernel_destroy(f->copy);
    lava_close(f->dev);
    free(f);
    return 0;
}

/* Barriers beyond the two every batch brings along. */
static uint64_t barriers(fixture *f)
{
    salvo_stats s;
    assert_int_equal(salvo_device_stats(f->dev, &s), SALVO_OK);
    return s.barriers_emitted - PER_BATCH * s.batches_submitted;
}

static salvo_buffer *filled(fixture *f, uint32_t value)
{
    salvo_buffer *b = NULL;
    uint64_t bytes = f->slice * SLICES;
    assert_int_equal(salvo_buffer_create(f->dev, bytes, SALVO_DOMAIN_DEVICE, &b), SALVO_OK);
    uint32_t *v = malloc(bytes);
    for (uint64_t i = 0; i < bytes / 4; i++)
        v[i] = value;
    assert_int_equal(salvo_buffer_write(b, 0, v, bytes), SALVO_OK);
    free(v);
    return b;
}

static void expect_slices(fixture *f, salvo_buffer *b, uint32_t want)
{
    uint64_t bytes = f->slice * SLICES;
    uint32_t *v = malloc(bytes);
    assert_int_equal(salvo_buffer_read(b, 0, v, bytes), SALVO_OK);
    for (uint32_t s = 0; s < SLICES; s++)
        for (uint32_t i = 0; i < N; i++)
            if (v[s * f->slice / 4 + i] != want)
                fail_msg("slice %u element %u: %u, want %u", s, i, v[s * f->slice / 4 + i], want);
    free(v);
}

static void launch_add(fixture *f, salvo_buffer *b, uint64_t offset, uint32_t value)
{
    salvo_binding bd = {.binding = 0, .buffer = b, .offset = offset, .size = N * 4};
    uint32_t push[2] = {N, value};
    uint32_t groups[3] = {1, 1, 1};
    assert_int_equal(salvo_launch(f->st, f->add, groups, &bd, 1, push, sizeof push), SALVO_OK);
}

static void launch_copy(fixture *f, salvo_buffer *src, uint64_t so, salvo_buffer *dst, uint64_t dof,
                        uint32_t add)
{
    salvo_binding bd[2] = {{.binding = 0, .buffer = src, .offset = so, .size = N * 4},
                           {.binding = 1, .buffer = dst, .offset = dof, .size = N * 4}};
    uint32_t push[2] = {N, add};
    uint32_t groups[3] = {1, 1, 1};
    assert_int_equal(salvo_launch(f->st, f->copy, groups, bd, 2, push, sizeof push), SALVO_OK);
}

/* Launches over disjoint slices: no barrier between any of them. */
static void independent_launches_get_no_barrier(void **state)
{
    fixture *f = *state;
    salvo_buffer *b = filled(f, 5);
    uint64_t before = barriers(f);
    for (uint32_t s = 0; s < SLICES; s++)
        launch_add(f, b, s * f->slice, 1);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    assert_int_equal(barriers(f) - before, 0);
    expect_slices(f, b, 6);
    salvo_buffer_destroy(b);
}

/* The same slice again and again: a barrier before every launch but the first. */
static void dependent_chain_gets_one_per_launch(void **state)
{
    fixture *f = *state;
    salvo_buffer *b = filled(f, 0);
    uint64_t before = barriers(f);
    for (uint32_t s = 0; s < SLICES; s++)
        for (uint32_t k = 0; k < 3; k++)
            launch_add(f, b, s * f->slice, 1);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    /* per slice the 2nd and 3rd launch wait; across slices nothing does */
    assert_int_equal(barriers(f) - before, 2 * SLICES);
    expect_slices(f, b, 3);
    salvo_buffer_destroy(b);
}

/* Many readers of one buffer, each writing its own slice: read after read
 * needs nothing. Then a write to what they read must wait (WAR), and the
 * readers must have seen the old value. */
static void shared_reads_then_write_after_read(void **state)
{
    fixture *f = *state;
    salvo_buffer *src = filled(f, 40), *dst = filled(f, 0);
    uint64_t before = barriers(f);
    for (uint32_t s = 0; s < SLICES; s++)
        launch_copy(f, src, 0, dst, s * f->slice, 2);
    launch_add(f, src, 0, 1000); /* WAR on slice 0 of src */
    launch_copy(f, src, 0, dst, 0, 0); /* RAW on src and WAW on dst slice 0 */
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    assert_int_equal(barriers(f) - before, 2);
    uint32_t first[N];
    assert_int_equal(salvo_buffer_read(dst, 0, first, sizeof first), SALVO_OK);
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(first[i], 1040);
    uint32_t later[N];
    assert_int_equal(salvo_buffer_read(dst, f->slice, later, sizeof later), SALVO_OK);
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(later[i], 42);
    salvo_buffer_destroy(src);
    salvo_buffer_destroy(dst);
}

/* Across batches of one stream, and across streams: the batch-start
 * barrier orders them, whatever the hazard set said. The last add is left
 * in small's open batch; a second stream, ordered after it by an event
 * alone (small is not synchronized first), reads the same slice. */
static void ordered_across_batches(void **state)
{
    fixture *f = *state;
    salvo_stream *small = NULL, *other = NULL;
    salvo_stream_desc sd = {.batch_size = 3};
    assert_int_equal(salvo_stream_create(f->dev, &sd, &small), SALVO_OK);
    assert_int_equal(salvo_stream_create(f->dev, NULL, &other), SALVO_OK);
    salvo_event *ev = NULL;
    assert_int_equal(salvo_event_create(f->dev, &ev), SALVO_OK);
    salvo_buffer *b = filled(f, 0), *out = filled(f, 0xdeadbeefu);
    salvo_binding bd = {.binding = 0, .buffer = b, .offset = 0, .size = N * 4};
    uint32_t push[2] = {N, 1};
    uint32_t groups[3] = {1, 1, 1};
    for (int i = 0; i < 31; i++)
        assert_int_equal(salvo_launch(small, f->add, groups, &bd, 1, push, sizeof push), SALVO_OK);
    assert_int_equal(salvo_event_record(ev, small), SALVO_OK);
    /* out's slice 0 = b's slice 0 + 1000, on the other stream */
    assert_int_equal(salvo_stream_wait_event(other, ev), SALVO_OK);
    salvo_binding cd[2] = {{.binding = 0, .buffer = b, .offset = 0, .size = N * 4},
                           {.binding = 1, .buffer = out, .offset = 0, .size = N * 4}};
    uint32_t cpush[2] = {N, 1000};
    assert_int_equal(salvo_launch(other, f->copy, groups, cd, 2, cpush, sizeof cpush), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(other), SALVO_OK);
    uint32_t v[N];
    assert_int_equal(salvo_buffer_read(out, 0, v, sizeof v), SALVO_OK);
    for (uint32_t i = 0; i < N; i++)
        if (v[i] != 1031)
            fail_msg("the other stream read %u at %u, want 31 (+1000)", v[i] - 1000, i);
    assert_int_equal(salvo_stream_synchronize(small), SALVO_OK);
    assert_int_equal(salvo_buffer_read(b, 0, v, sizeof v), SALVO_OK);
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(v[i], 31);
    salvo_event_destroy(ev);
    salvo_stream_destroy(other);
    salvo_stream_destroy(small);
    salvo_buffer_destroy(b);
    salvo_buffer_destroy(out);
}

/* Copies take part in the same ordering: in from a mapped HOST buffer,
 * launches on the copy, out again, and a copy over data a launch still
 * reads. */
static void copies_are_ordered_with_launches(void **state)
{
    fixture *f = *state;
    uint64_t bytes = f->slice * SLICES;
    salvo_buffer *in = NULL, *out = NULL, *dev = filled(f, 0);
    assert_int_equal(salvo_buffer_create(f->dev, bytes, SALVO_DOMAIN_HOST, &in), SALVO_OK);
    assert_int_equal(salvo_buffer_create(f->dev, bytes, SALVO_DOMAIN_HOST, &out), SALVO_OK);
    uint32_t *pin = NULL, *pout = NULL;
    assert_int_equal(salvo_buffer_map(in, (void **)&pin), SALVO_OK);
    assert_int_equal(salvo_buffer_map(out, (void **)&pout), SALVO_OK);
    for (uint64_t i = 0; i < bytes / 4; i++)
        pin[i] = (uint32_t)i;
    salvo_stats before;
    assert_int_equal(salvo_device_stats(f->dev, &before), SALVO_OK);
    uint64_t barriers_before = barriers(f);
    assert_int_equal(salvo_copy(f->st, in, 0, dev, 0, bytes), SALVO_OK);
    for (uint32_t s = 0; s < SLICES; s++)
        launch_add(f, dev, s * f->slice, 100); /* RAW on the copy */
    assert_int_equal(salvo_copy(f->st, dev, 0, out, 0, bytes), SALVO_OK); /* RAW */
    assert_int_equal(salvo_copy(f->st, in, 0, dev, 0, bytes), SALVO_OK); /* WAR + WAW */
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    /* one before the launches (RAW on the copy), one before the copy out
     * (RAW), one before the copy in again (WAR on what was copied out).
     * Where the first copy ran on the copy engine's queue, the launches
     * start the next batch, after it through a semaphore: no barrier. */
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(f->dev, &info), SALVO_OK);
    assert_int_equal(barriers(f) - barriers_before, info.transfer_queue ? 2 : 3);
    for (uint32_t s = 0; s < SLICES; s++)
        for (uint32_t i = 0; i < N; i++) {
            uint64_t w = s * f->slice / 4 + i;
            assert_int_equal(pout[w], (uint32_t)w + 100);
        }
    uint32_t back[N];
    assert_int_equal(salvo_buffer_read(dev, f->slice, back, sizeof back), SALVO_OK);
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(back[i], f->slice / 4 + i);
    salvo_stats after;
    assert_int_equal(salvo_device_stats(f->dev, &after), SALVO_OK);
    assert_int_equal(after.transfer_bytes - before.transfer_bytes, 3 * bytes + sizeof back);
    /* bad ranges and overlap are refused, and change nothing */
    assert_int_equal(salvo_copy(f->st, in, 8, in, 0, 16), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_copy(f->st, in, bytes - 4, out, 0, 8), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_copy(f->st, in, 0, out, 0, 0), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_copy(f->st, NULL, 0, out, 0, 4), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    for (uint64_t i = 0; i < bytes / 4; i++)
        if (pin[i] != (uint32_t)i || pout[i] != (uint32_t)i + (i % (f->slice / 4) < N ? 100 : 0))
            fail_msg("word %llu: in %u, out %u after refused copies", (unsigned long long)i,
                     pin[i], pout[i]);
    salvo_buffer_destroy(in);
    salvo_buffer_destroy(out);
    salvo_buffer_destroy(dev);
}

int main(void)
{
    lava_require_device();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(independent_launches_get_no_barrier, setup, teardown),
        cmocka_unit_test_setup_teardown(dependent_chain_gets_one_per_launch, setup, teardown),
        cmocka_unit_test_setup_teardown(shared_reads_then_write_after_read, setup, teardown),
        cmocka_unit_test_setup_teardown(ordered_across_batches, setup, teardown),
        cmocka_unit_test_setup_teardown(copies_are_ordered_with_launches, setup, teardown),
    };
    return lava_run_tests(tests);
}
