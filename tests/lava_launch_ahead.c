/* Launches recorded ahead on a real device, with synchronization
 * validation on: the same launch made and synchronized again and again
 * (the third on submits a recording made at the second) runs each time,
 * as read back; a new value runs from its first launch; work after such a
 * launch in its batch (a launch that reads what it wrote, a fill, a timed
 * event, whose time spans it) follows it; what it writes into a HOST
 * buffer is seen by the host; a buffer destroyed and another made in its
 * place is never written through the old recording. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/internal.h"
#include "reflect_array.spv.h"
#include "salvo/salvo.h"
#include "spin.spv.h"
#include "support/lava.h"

#define N 256u /* elements */

static uint64_t made_ahead(salvo_device *dev)
{
    salvo_stats s;
    assert_int_equal(salvo_device_stats(dev, &s), SALVO_OK);
    return s.launches_ahead;
}

/* add of value over b, then a synchronize. */
static void trip(lava_fixture *f, salvo_buffer *b, uint32_t value)
{
    lava_add(f->st, f->add, b, 0, N, value);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
}

static void test_repeats(void **state)
{
    lava_fixture *f = *state;
    salvo_buffer *a = lava_zeroed(f->dev, N, SALVO_DOMAIN_DEVICE);
    uint64_t ahead = made_ahead(f->dev);
    for (uint32_t i = 1; i <= 6; i++) {
        trip(f, a, 1);
        lava_expect_all(a, N, i);
    }
    /* All but the first of these parameters. */
    assert_int_equal(made_ahead(f->dev) - ahead, 5);
    /* A new value: its first launch records into its batch, and runs. */
    for (uint32_t i = 1; i <= 3; i++) {
        trip(f, a, 10);
        lava_expect_all(a, N, 6 + 10 * i);
    }
    assert_int_equal(made_ahead(f->dev) - ahead, 7);
    salvo_buffer_destroy(a);
}

/* Whether the device writes GPU timestamps: salvo_event_elapsed then
 * answers SALVO_OK, not SALVO_ERROR_UNSUPPORTED (salvo_device_info does
 * not say; lavapipe has them). */
static bool timed(salvo_device *dev)
{
    return dev->caps.timestamps;
}

static void test_work_after(void **state)
{
    lava_fixture *f = *state;
    salvo_kernel *copy = lava_copy_kernel(f->dev);
    salvo_buffer *a = lava_zeroed(f->dev, N, SALVO_DOMAIN_DEVICE);
    salvo_buffer *b = lava_zeroed(f->dev, N, SALVO_DOMAIN_DEVICE);
    trip(f, a, 2);
    trip(f, a, 2);
    uint64_t ahead = made_ahead(f->dev);
    /* b = a + 1, as the launch before it left a. */
    lava_add(f->st, f->add, a, 0, N, 2);
    assert_int_equal(made_ahead(f->dev) - ahead, 1);
    salvo_binding bd[2] = {{.binding = 0, .buffer = a}, {.binding = 1, .buffer = b}};
    uint32_t push[2] = {N, 1};
    uint32_t groups[3] = {N / 64, 1, 1};
    assert_int_equal(salvo_launch(f->st, copy, groups, bd, 2, push, sizeof push), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    lava_expect_all(a, N, 6);
    lava_expect_all(b, N, 7);
    /* A fill of a after it: the fill wins. */
    lava_add(f->st, f->add, a, 0, N, 2);
    assert_int_equal(salvo_fill(f->st, a, 0, N * 4, 40), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    lava_expect_all(a, N, 40);
    /* A timed event after it, then a launch that reads what it wrote. The
     * launch made ahead is a spin of 100 ms or more: e0..e1 spans it (e0 came
     * before, in a batch of its own), at least half as long as the same
     * spin timed after it in the batch (e1..e2); a timestamp written before
     * the launch made ahead would leave e0..e1 the few ms between the two
     * batches. */
    salvo_kernel *sk = NULL;
    salvo_kernel_desc kd = {.spirv = spin_spv, .spirv_size = sizeof spin_spv, .name = "spin"};
    assert_int_equal(salvo_kernel_create(f->dev, &kd, &sk), SALVO_OK);
    salvo_buffer *s = NULL;
    assert_int_equal(
        salvo_buffer_create(f->dev, LAVA_SPIN_MAX_GROUPS * 256ull, SALVO_DOMAIN_DEVICE, &s),
        SALVO_OK);
    uint32_t sg =
        lava_spin_groups(f->dev, f->st, sk, s, N / 64, timed(f->dev), 100ull * 1000 * 1000);
    lava_spin(f->st, sk, s, sg);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    lava_spin(f->st, sk, s, sg);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    salvo_event *e0 = NULL, *e1 = NULL, *e2 = NULL;
    assert_int_equal(salvo_event_create(f->dev, &e0), SALVO_OK);
    assert_int_equal(salvo_event_create(f->dev, &e1), SALVO_OK);
    assert_int_equal(salvo_event_create(f->dev, &e2), SALVO_OK);
    assert_int_equal(salvo_event_record(e0, f->st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    ahead = made_ahead(f->dev);
    lava_spin(f->st, sk, s, sg);
    assert_int_equal(made_ahead(f->dev) - ahead, 1);
    assert_int_equal(salvo_event_record(e1, f->st), SALVO_OK);
    bd[0].buffer = s; /* b = s + 1 */
    assert_int_equal(salvo_launch(f->st, copy, groups, bd, 2, push, sizeof push), SALVO_OK);
    lava_spin(f->st, sk, s, sg);
    assert_int_equal(salvo_event_record(e2, f->st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    lava_expect_spanned(e0, e1, e2, timed(f->dev), "the launch made ahead");
    uint32_t got[N];
    assert_int_equal(salvo_buffer_read(b, 0, got, sizeof got), SALVO_OK);
    for (uint32_t i = 0; i < N; i++)
        if (got[i] != lava_spin_value(i) + 1)
            fail_msg("b[%u] = %u, want %u", i, got[i], lava_spin_value(i) + 1);
    salvo_event_destroy(e0);
    salvo_event_destroy(e1);
    salvo_event_destroy(e2);
    salvo_buffer_destroy(s);
    salvo_kernel_destroy(sk);
    salvo_buffer_destroy(a);
    salvo_buffer_destroy(b);
    salvo_kernel_destroy(copy);
}

static void test_host_and_release(void **state)
{
    lava_fixture *f = *state;
    /* Into host memory: each recording ends with the host's barrier. */
    salvo_buffer *h = lava_zeroed(f->dev, N, SALVO_DOMAIN_HOST);
    uint64_t ahead = made_ahead(f->dev);
    for (uint32_t i = 1; i <= 4; i++) {
        trip(f, h, 3);
        lava_expect_all(h, N, 3 * i);
    }
    assert_int_equal(made_ahead(f->dev) - ahead, 3);
    /* The buffer destroyed, another made: the launch on the new one
     * records again and writes the new one. */
    salvo_buffer_destroy(h);
    ahead = made_ahead(f->dev);
    h = lava_zeroed(f->dev, N, SALVO_DOMAIN_HOST);
    trip(f, h, 3);
    assert_int_equal(made_ahead(f->dev) - ahead, 0);
    lava_expect_all(h, N, 3);
    trip(f, h, 3);
    trip(f, h, 3);
    lava_expect_all(h, N, 9);
    assert_int_equal(made_ahead(f->dev) - ahead, 2);
    salvo_buffer_destroy(h);
}

/* An indirect launch repeated: made ahead as a direct one, its counts read
 * by the device when it runs (new counts between trips are used: 0
 * groups add nothing). */
static void test_indirect(void **state)
{
    lava_fixture *f = *state;
    salvo_buffer *a = lava_zeroed(f->dev, N, SALVO_DOMAIN_DEVICE);
    salvo_buffer *counts = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, 16, SALVO_DOMAIN_HOST, &counts), SALVO_OK);
    const uint32_t all[3] = {N / 64, 1, 1}, none[3] = {0, 1, 1};
    assert_int_equal(salvo_buffer_write(counts, 0, all, sizeof all), SALVO_OK);
    salvo_binding bd = {.binding = 0, .buffer = a};
    uint32_t push[2] = {N, 5};
    uint64_t ahead = made_ahead(f->dev);
    uint32_t want = 0;
    for (int i = 0; i < 6; i++) {
        if (i == 4)
            assert_int_equal(salvo_buffer_write(counts, 0, none, sizeof none), SALVO_OK);
        assert_int_equal(
            salvo_launch_indirect(f->st, f->add, counts, 0, &bd, 1, push, sizeof push), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
        want += i < 4 ? 5 : 0;
        lava_expect_all(a, N, want);
    }
    assert_int_equal(made_ahead(f->dev) - ahead, 5);
    salvo_buffer_destroy(counts);
    salvo_buffer_destroy(a);
}

/* A kernel that binds an array of buffers (chunks[4], binding 3: element
 * i of the 64 invocations writes 1.0 into chunk i % 4) takes a descriptor
 * set from a pool on any device, so neither its launches nor a graph's
 * replays of it are recorded with none: each launch and replay, after a
 * fill that clears the chunks, writes them again. */
static void test_array_kernel(void **state)
{
    lava_fixture *f = *state;
    salvo_kernel *k = NULL;
    salvo_kernel_desc kd = {.spirv = reflect_array_spv, .spirv_size = sizeof reflect_array_spv,
                            .name = "chunks"};
    assert_int_equal(salvo_kernel_create(f->dev, &kd, &k), SALVO_OK);
    salvo_buffer *chunk[4];
    salvo_binding b[4];
    for (uint32_t i = 0; i < 4; i++) {
        assert_int_equal(salvo_buffer_create(f->dev, 256, SALVO_DOMAIN_DEVICE, &chunk[i]),
                         SALVO_OK);
        b[i] = (salvo_binding){.binding = 3, .buffer = chunk[i], .element = i};
    }
    const uint32_t groups[3] = {1, 1, 1};
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    assert_int_equal(salvo_launch(f->st, k, groups, b, 4, NULL, 0), SALVO_OK);
    assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_OK);
    for (int round = 0; round < 8; round++) {
        for (uint32_t i = 0; i < 4; i++)
            assert_int_equal(salvo_fill(f->st, chunk[i], 0, 256, 0), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
        if (round < 4)
            assert_int_equal(salvo_launch(f->st, k, groups, b, 4, NULL, 0), SALVO_OK);
        else
            assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
        for (uint32_t i = 0; i < 4; i++) {
            float v[64];
            assert_int_equal(salvo_buffer_read(chunk[i], 0, v, sizeof v), SALVO_OK);
            for (uint32_t e = 0; e < 64; e++)
                if (v[e] != (e % 4 == i ? 1.0f : 0.0f))
                    fail_msg("round %d, chunk %u element %u: %g", round, i, e, (double)v[e]);
        }
    }
    salvo_graph_destroy(g);
    for (uint32_t i = 0; i < 4; i++)
        salvo_buffer_destroy(chunk[i]);
    salvo_kernel_destroy(k);
}

int main(void)
{
    lava_require_device();
    const struct CMUnitTest tests[] = {
        lava_test(test_repeats),
        lava_test(test_work_after),
        lava_test(test_host_and_release),
        lava_test(test_array_kernel),
        lava_test(test_indirect),
    };
    return lava_run_tests(tests);
}
