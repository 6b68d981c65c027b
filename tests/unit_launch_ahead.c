/* Launches recorded ahead, on the fake accelerator: a launch alone in its
 * batch that repeats the stream's launch before it is submitted as a
 * recording made at its second use, so that from the third on nothing is
 * recorded; a change of any parameter, or a release of any object, makes
 * the launch record into its batch again; work after it in the batch
 * records it there first; failures of either recording are reported to
 * the right call and leave the stream usable. What the launches did is
 * read back from the fake's dispatches (their push values summed) and,
 * where order matters, from the buffers (the hook runs the add kernel). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "add.spv.h"
#include "reflect_array.spv.h"
#include "api/internal.h"
#include "support/fake_accel.h"

typedef struct ctx {
    fake_accel *f;
    salvo_device *dev;
    salvo_kernel *k;
    salvo_buffer *buf[2];
    salvo_stream *st;
    uint64_t sum; /* push word 1 of every dispatch that ran */
} ctx;

/* The add kernel's semantics too (data[i] += value for i < n, one word an
 * invocation, local size its specialization constant 0, else 1), so what
 * ran, and in which order, can be read back from the buffers. */
static void count_values(void *user, const fake_dispatch *d)
{
    uint32_t push[2] = {0, 0};
    if (d->push_size == sizeof push)
        memcpy(push, d->push, sizeof push);
    *(uint64_t *)user += push[1];
    if (d->res_count < 1 || !d->res[0].mem)
        return;
    uint64_t local = 1;
    for (uint32_t i = 0; i < d->spec_count; i++)
        if (d->spec[i].id == 0)
            local = d->spec[i].value;
    uint64_t words = (uint64_t)d->groups[0] * d->groups[1] * d->groups[2] * local;
    if (words > push[0])
        words = push[0];
    if (words > d->res[0].size / 4)
        words = d->res[0].size / 4;
    for (uint64_t i = 0; i < words; i++) {
        uint32_t w;
        memcpy(&w, d->res[0].mem + 4 * i, 4);
        w += push[1];
        memcpy(d->res[0].mem + 4 * i, &w, 4);
    }
}

static void start(ctx *c, bool push_descriptors, uint32_t batch_size, fake_complete_mode mode)
{
    memset(c, 0, sizeof *c);
    c->f = fake_create();
    assert_non_null(c->f);
    c->f->push_descriptors = push_descriptors;
    c->f->complete = mode;
    c->f->dispatch_hook = count_values;
    c->f->dispatch_user = &c->sum;
    salvo_device_desc d = {.batch_size = batch_size};
    assert_int_equal(device_create_with_accel(&d, fake_accel_get(c->f), &c->dev), SALVO_OK);
    salvo_kernel_desc kd = {.spirv = add_spv, .spirv_size = sizeof add_spv, .name = "add"};
    assert_int_equal(salvo_kernel_create(c->dev, &kd, &c->k), SALVO_OK);
    for (int i = 0; i < 2; i++)
        assert_int_equal(salvo_buffer_create(c->dev, 4096, SALVO_DOMAIN_DEVICE, &c->buf[i]),
                         SALVO_OK);
    assert_int_equal(salvo_stream_create(c->dev, NULL, &c->st), SALVO_OK);
}

static void finish(ctx *c)
{
    salvo_stream_destroy(c->st);
    for (int i = 0; i < 2; i++)
        salvo_buffer_destroy(c->buf[i]);
    salvo_kernel_destroy(c->k);
    salvo_device_destroy(c->dev);
    if (fake_illegal_total(c->f))
        fprintf(stderr, "illegal: %s\n", fake_illegal_last(c->f));
    assert_int_equal(fake_illegal_total(c->f), 0);
    assert_int_equal(fake_live_total(c->f), 0);
    fake_free(c->f);
}

/* The add kernel on b at offset, value in push word 1, groups[0] groups. */
static salvo_status add_at(ctx *c, salvo_buffer *b, uint64_t offset, uint32_t groups,
                           uint32_t value)
{
    const uint32_t g[3] = {groups, 1, 1};
    const salvo_binding bind = {.binding = 0, .buffer = b, .offset = offset};
    const uint32_t push[2] = {256, value};
    return salvo_launch(c->st, c->k, g, &bind, 1, push, sizeof push);
}

static salvo_status add(ctx *c, uint32_t value)
{
    return add_at(c, c->buf[0], 0, 4, value);
}

static uint64_t made_ahead(ctx *c)
{
    salvo_stats s;
    assert_int_equal(salvo_device_stats(c->dev, &s), SALVO_OK);
    return s.launches_ahead;
}

static uint64_t recorded(ctx *c)
{
    return fake_calls(c->f, "cmd_dispatch");
}

/* One launch then a synchronize; what it recorded (dispatches) and
 * whether it was made ahead. */
static void trip(ctx *c, uint32_t value, uint64_t want_recorded, bool want_ahead)
{
    uint64_t d0 = recorded(c), a0 = made_ahead(c);
    assert_int_equal(add(c, value), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(c->st), SALVO_OK);
    assert_int_equal(recorded(c) - d0, want_recorded);
    assert_int_equal(made_ahead(c) - a0, want_ahead ? 1 : 0);
}

/* A new launch's first three round trips: recorded into its batch, then
 * into a recording of its own, then submitted as that recording is. */
static void settle(ctx *c, uint32_t value)
{
    trip(c, value, 1, false);
    trip(c, value, 1, true);
    trip(c, value, 0, true);
}

/* The same launch and a synchronize, again and again: the first records
 * into its batch, the second into a recording of its own (begun to be
 * submitted again), every later one records nothing; once each slot's own
 * command buffer was left begun by such a batch, not even a begin. Each
 * ran: the sum says so. */
static void test_repeat_records_nothing(void **state)
{
    (void)state;
    ctx c;
    start(&c, true, 64, FAKE_COMPLETE_AUTO);
    uint64_t resubmit0 = fake_calls(c.f, "cmd_begin_resubmit");
    trip(&c, 3, 1, false);
    trip(&c, 3, 1, true);
    assert_int_equal(fake_calls(c.f, "cmd_begin_resubmit") - resubmit0, 1);
    uint64_t submits = fake_calls(c.f, "submit"), begins = 0;
    enum { N = 3 * STREAM_SLOTS };
    for (int i = 0; i < N; i++) {
        if (i == STREAM_SLOTS)
            begins = fake_calls(c.f, "cmd_begin");
        trip(&c, 3, 0, true);
    }
    assert_int_equal(fake_calls(c.f, "submit") - submits, N);
    assert_int_equal(fake_calls(c.f, "cmd_begin"), begins);
    assert_int_equal(fake_calls(c.f, "cmd_begin_resubmit") - resubmit0, 1);
    assert_int_equal(c.sum, 3 * (N + 2));
    finish(&c);
}

/* Any parameter that differs is a new launch: its first use records into
 * its batch, its second ahead. Two launches in turn never settle. */
static void test_changes_record(void **state)
{
    (void)state;
    ctx c;
    start(&c, true, 64, FAKE_COMPLETE_AUTO);
    settle(&c, 1);
    settle(&c, 2); /* push constants */
    /* Another buffer, another offset, other group counts. */
    struct {
        int buf;
        uint64_t offset;
        uint32_t groups;
    } v[] = {{1, 0, 4}, {1, 256, 4}, {1, 256, 2}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        for (int r = 0; r < 3; r++) {
            uint64_t d0 = recorded(&c), a0 = made_ahead(&c);
            assert_int_equal(add_at(&c, c.buf[v[i].buf], v[i].offset, v[i].groups, 5), SALVO_OK);
            assert_int_equal(salvo_stream_synchronize(c.st), SALVO_OK);
            assert_int_equal(recorded(&c) - d0, r < 2 ? 1 : 0);
            assert_int_equal(made_ahead(&c) - a0, r == 0 ? 0 : 1);
        }
    }
    /* In turn: each is new to the one before it. */
    for (int r = 0; r < 6; r++)
        trip(&c, r % 2 ? 7 : 8, 1, false);
    assert_int_equal(c.sum, 3 * 1 + 3 * 2 + 9 * 5 + 3 * 7 + 3 * 8);
    finish(&c);
}

/* A release of any buffer, image, sampler or kernel forgets the recording:
 * the handles it names may name a later object (an event's release
 * does not). A buffer destroyed and another made (often at the
 * same address): the launch on it records into its batch, and no
 * recording that uses the destroyed one is ever submitted (the fake counts
 * that as illegal). The same for a kernel. */
static void test_release_forgets(void **state)
{
    (void)state;
    ctx c;
    start(&c, true, 64, FAKE_COMPLETE_AUTO);
    settle(&c, 1);
    /* An event made, recorded and destroyed: no handle a launch names. */
    salvo_event *ev = NULL;
    assert_int_equal(salvo_event_create(c.dev, &ev), SALVO_OK);
    assert_int_equal(salvo_event_record(ev, c.st), SALVO_OK);
    assert_int_equal(salvo_event_synchronize(ev), SALVO_OK);
    salvo_event_destroy(ev);
    trip(&c, 1, 0, true);
    /* An unrelated buffer released: recorded again all the same. */
    salvo_buffer *other = NULL;
    assert_int_equal(salvo_buffer_create(c.dev, 64, SALVO_DOMAIN_DEVICE, &other), SALVO_OK);
    trip(&c, 1, 0, true); /* a creation changes nothing */
    salvo_buffer_destroy(other);
    trip(&c, 1, 1, false);
    trip(&c, 1, 1, true);
    /* The launch's own buffer, replaced. */
    accel_buffer *old = c.buf[0]->ab;
    salvo_buffer_destroy(c.buf[0]);
    assert_int_equal(salvo_buffer_create(c.dev, 4096, SALVO_DOMAIN_DEVICE, &c.buf[0]), SALVO_OK);
    if (c.buf[0]->ab == old)
        fprintf(stderr, "(the new buffer has the old one's handle)\n");
    settle(&c, 1);
    /* The kernel, replaced. */
    salvo_kernel_destroy(c.k);
    salvo_kernel_desc kd = {.spirv = add_spv, .spirv_size = sizeof add_spv, .name = "add"};
    assert_int_equal(salvo_kernel_create(c.dev, &kd, &c.k), SALVO_OK);
    settle(&c, 1);
    assert_int_equal(fake_illegal_total(c.f), 0);
    assert_int_equal(c.sum, 13);
    finish(&c);
}

/* The first n words of b. */
static void read_words(salvo_buffer *b, uint32_t *out, uint32_t n)
{
    assert_int_equal(salvo_buffer_read(b, 0, out, 4ull * n), SALVO_OK);
}

/* Work after a launch made ahead, in its batch: the launch is recorded
 * into the batch first, and everything runs in order. A launch, a fill, an
 * event record: each after a launch made ahead. The add kernel's words
 * (4 groups of 1: words 0..3) are read back. */
static void test_work_after(void **state)
{
    (void)state;
    ctx c;
    start(&c, true, 64, FAKE_COMPLETE_AUTO);
    enum { W = 8 }; /* words read back: the launch's 4 and 4 beyond */
    uint32_t w0[W], w1[W], back[W];
    trip(&c, 2, 1, false);
    trip(&c, 2, 1, true);
    /* Another launch after it. */
    read_words(c.buf[1], w1, W);
    uint64_t d0 = recorded(&c), a0 = made_ahead(&c);
    assert_int_equal(add(&c, 2), SALVO_OK);
    assert_int_equal(made_ahead(&c) - a0, 1);
    assert_int_equal(add_at(&c, c.buf[1], 0, 4, 100), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(c.st), SALVO_OK);
    assert_int_equal(recorded(&c) - d0, 2);
    read_words(c.buf[1], back, W);
    for (int i = 0; i < W; i++)
        assert_int_equal(back[i], w1[i] + (i < 4 ? 100 : 0));
    /* A launch that was not alone in its batch leaves the key as it was. */
    trip(&c, 2, 0, true);
    /* A fill after it, over the launch's words and beyond: the fill
     * follows the launch on the device (the words are the fill's, not
     * the fill's plus 2), and is recorded (not dropped with the batch's
     * own command buffer while the recording ahead is submitted). */
    read_words(c.buf[0], w0, W);
    uint64_t fills = fake_calls(c.f, "cmd_fill"), sum0 = c.sum;
    a0 = made_ahead(&c);
    assert_int_equal(add(&c, 2), SALVO_OK);
    assert_int_equal(made_ahead(&c) - a0, 1);
    assert_int_equal(salvo_fill(c.st, c.buf[0], 0, 4 * 6, 7), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(c.st), SALVO_OK);
    assert_int_equal(fake_calls(c.f, "cmd_fill") - fills, 1);
    assert_int_equal(c.sum - sum0, 2); /* the launch ran too */
    read_words(c.buf[0], back, W);
    for (int i = 0; i < W; i++)
        assert_int_equal(back[i], i < 6 ? 7 : w0[i]);
    /* An event recorded after it: its timestamp is written after the
     * launch (the launch's FAKE_DISPATCH_TICKS lie between it and one
     * recorded in the batch before), and is written at all. */
    salvo_event *before = NULL, *ev = NULL;
    assert_int_equal(salvo_event_create(c.dev, &before), SALVO_OK);
    assert_int_equal(salvo_event_create(c.dev, &ev), SALVO_OK);
    assert_int_equal(add(&c, 2), SALVO_OK);
    assert_int_equal(salvo_event_record(before, c.st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(c.st), SALVO_OK);
    uint64_t stamps = fake_calls(c.f, "cmd_timestamp");
    a0 = made_ahead(&c);
    assert_int_equal(add(&c, 2), SALVO_OK);
    assert_int_equal(made_ahead(&c) - a0, 1);
    assert_int_equal(salvo_event_record(ev, c.st), SALVO_OK);
    assert_int_equal(salvo_event_synchronize(ev), SALVO_OK);
    assert_int_equal(fake_calls(c.f, "cmd_timestamp") - stamps, 1);
    uint64_t ns = 0;
    assert_int_equal(salvo_event_elapsed(before, ev, &ns), SALVO_OK);
    assert_true(ns >= FAKE_DISPATCH_TICKS);
    salvo_event_destroy(before);
    salvo_event_destroy(ev);
    assert_int_equal(c.sum, 2 * 7 + 100);
    finish(&c);
}

/* Where the launch made ahead cannot be recorded into its batch for work
 * that follows (a dispatch refused), that call fails naming the launch,
 * the launch itself runs, and the stream records again afterwards. Where
 * the recording ahead cannot be made (its begin refused), the launch
 * records into its batch, then and from then on. */
static void test_failures(void **state)
{
    (void)state;
    ctx c;
    start(&c, true, 64, FAKE_COMPLETE_AUTO);
    trip(&c, 1, 1, false);
    trip(&c, 1, 1, true);
    assert_int_equal(add(&c, 1), SALVO_OK); /* made ahead */
    fake_set_result(c.f, "cmd_dispatch", 1, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    assert_int_equal(add_at(&c, c.buf[1], 0, 4, 100), SALVO_ERROR_OUT_OF_HOST_MEMORY);
    assert_non_null(strstr(salvo_last_error(), "launch of kernel 'add'"));
    assert_non_null(strstr(salvo_last_error(), "this call's work was not recorded"));
    uint64_t begins = fake_calls(c.f, "cmd_begin");
    assert_int_equal(add_at(&c, c.buf[1], 0, 4, 1000), SALVO_OK);
    assert_int_equal(fake_calls(c.f, "cmd_begin") - begins, 1); /* the part-recorded one again */
    assert_int_equal(salvo_stream_synchronize(c.st), SALVO_OK);
    assert_int_equal(c.sum, 3 + 1000);
    /* The recording ahead refused. */
    fake_clear_results(c.f);
    trip(&c, 4, 1, false);
    fake_set_result(c.f, "cmd_begin_resubmit", 1, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
    trip(&c, 4, 1, false);
    trip(&c, 4, 1, false);
    trip(&c, 5, 1, false);
    trip(&c, 5, 1, false);
    assert_int_equal(c.sum, 3 + 1000 + 3 * 4 + 2 * 5);
    finish(&c);
}

/* Batches submitted back to back without a wait: a recording goes with
 * its batch until that batch is done, none is begun again while pending
 * (the fake counts that as illegal), a free one that holds the launch is
 * submitted again as it is, and a second is made only once the first was
 * submitted again. With the stream's three slots: launch 1 records into
 * its batch, 2 into a recording of its own, 3 into its batch (that
 * recording pending, not yet used again); all complete; 4 submits the
 * recording again, 5 makes a second (the first was used again), 6 records
 * into its batch (the second not yet used again). */
static void test_in_flight(void **state)
{
    (void)state;
    assert_int_equal(STREAM_SLOTS, 3);
    assert_int_equal(AHEAD_RING, 3);
    ctx c;
    start(&c, true, 64, FAKE_COMPLETE_MANUAL);
    uint64_t d0 = recorded(&c), a0 = made_ahead(&c);
    uint64_t resubmit0 = fake_calls(c.f, "cmd_begin_resubmit");
    for (int i = 0; i < 6; i++) {
        assert_int_equal(add(&c, 1), SALVO_OK);
        assert_int_equal(salvo_stream_flush(c.st), SALVO_OK);
        if (i == 2) {
            assert_int_equal(fake_pending(c.f), 3);
            fake_complete_all(c.f);
        }
    }
    assert_int_equal(recorded(&c) - d0, 5);
    assert_int_equal(made_ahead(&c) - a0, 3);
    assert_int_equal(fake_calls(c.f, "cmd_begin_resubmit") - resubmit0, 2);
    fake_complete_all(c.f);
    assert_int_equal(salvo_stream_synchronize(c.st), SALVO_OK);
    assert_int_equal(c.sum, 6);
    finish(&c);
}

/* Where descriptors come from a pool the batch resets, nothing is made
 * ahead; with a batch of one launch (SALVO_BATCH=1) repeats are. */
static void test_where_made(void **state)
{
    (void)state;
    ctx c;
    start(&c, false, 64, FAKE_COMPLETE_AUTO);
    for (int i = 0; i < 4; i++)
        trip(&c, 1, 1, false);
    finish(&c);
    start(&c, true, 1, FAKE_COMPLETE_AUTO);
    uint64_t d0 = recorded(&c);
    for (int i = 0; i < 5; i++)
        assert_int_equal(add(&c, 1), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(c.st), SALVO_OK);
    assert_int_equal(recorded(&c) - d0, 2);
    assert_int_equal(made_ahead(&c), 4);
    assert_int_equal(c.sum, 5);
    finish(&c);
}

/* An indirect launch repeated is recorded ahead as a direct one is; the
 * device reads its counts when it runs, so new counts written between
 * round trips are the ones used (0 groups: nothing runs). A direct launch
 * of the same kernel on the same binding is another launch. */
static void test_indirect(void **state)
{
    (void)state;
    ctx c;
    start(&c, true, 64, FAKE_COMPLETE_AUTO);
    salvo_buffer *counts = NULL;
    assert_int_equal(salvo_buffer_create(c.dev, 64, SALVO_DOMAIN_HOST, &counts), SALVO_OK);
    const uint32_t four[3] = {4, 1, 1}, none[3] = {0, 1, 1};
    assert_int_equal(salvo_buffer_write(counts, 0, four, sizeof four), SALVO_OK);
    const salvo_binding bind = {.binding = 0, .buffer = c.buf[0]};
    const uint32_t push[2] = {256, 9};
    for (int i = 0; i < 5; i++) {
        if (i == 3)
            assert_int_equal(salvo_buffer_write(counts, 0, none, sizeof none), SALVO_OK);
        uint64_t d0 = fake_calls(c.f, "cmd_dispatch_indirect"), a0 = made_ahead(&c);
        assert_int_equal(salvo_launch_indirect(c.st, c.k, counts, 0, &bind, 1, push, sizeof push),
                         SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(c.st), SALVO_OK);
        assert_int_equal(fake_calls(c.f, "cmd_dispatch_indirect") - d0, i < 2 ? 1 : 0);
        assert_int_equal(made_ahead(&c) - a0, i > 0 ? 1 : 0);
    }
    assert_int_equal(c.sum, 3 * 9);
    /* The same kernel and binding, direct: recorded. */
    uint64_t d0 = recorded(&c);
    assert_int_equal(add_at(&c, c.buf[0], 0, 4, 9), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(c.st), SALVO_OK);
    assert_int_equal(recorded(&c) - d0, 1);
    assert_int_equal(c.sum, 4 * 9);
    salvo_buffer_destroy(counts);
    finish(&c);
}

/* A graph's replay is recorded ahead at the end of its capture
 * (AHEAD_RING recordings): its first replays, waited for or back to back,
 * each submit one and begin none. After an update the replays are
 * recorded ahead as a launch's are: the first records into its batch;
 * of three back to back, the first makes one recording and the two
 * others, that recording still pending and not yet used again, record
 * into their batches rather than begin recordings of their own. */
static void test_graph_back_to_back(void **state)
{
    (void)state;
    ctx c;
    start(&c, true, 64, FAKE_COMPLETE_MANUAL);
    uint64_t resubmit0 = fake_calls(c.f, "cmd_begin_resubmit");
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_begin_capture(c.st), SALVO_OK);
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(add_at(&c, c.buf[0], 0, 1, 1), SALVO_OK);
    assert_int_equal(salvo_stream_end_capture(c.st, &g), SALVO_OK);
    assert_int_equal(fake_calls(c.f, "cmd_begin_resubmit") - resubmit0, AHEAD_RING);
    resubmit0 = fake_calls(c.f, "cmd_begin_resubmit");
    salvo_stats s0, s1;
    assert_int_equal(salvo_device_stats(c.dev, &s0), SALVO_OK);
    uint64_t d0 = recorded(&c);
    const uint32_t push[2] = {256, 5};
    for (int round = 0; round < 2; round++) {
        if (round == 1)
            assert_int_equal(salvo_graph_set_push(g, 0, push, sizeof push), SALVO_OK);
        assert_int_equal(salvo_graph_launch(g, c.st), SALVO_OK);
        assert_int_equal(salvo_stream_flush(c.st), SALVO_OK);
        fake_complete_all(c.f);
        assert_int_equal(salvo_stream_synchronize(c.st), SALVO_OK);
        for (int i = 0; i < 3; i++) {
            assert_int_equal(salvo_graph_launch(g, c.st), SALVO_OK);
            assert_int_equal(salvo_stream_flush(c.st), SALVO_OK);
        }
        assert_int_equal(fake_pending(c.f), 3);
        fake_complete_all(c.f);
        assert_int_equal(salvo_stream_synchronize(c.st), SALVO_OK);
        assert_int_equal(salvo_device_stats(c.dev, &s1), SALVO_OK);
        assert_int_equal(s1.replays_ahead - s0.replays_ahead, round == 0 ? 4 : 5);
        assert_int_equal(fake_calls(c.f, "cmd_begin_resubmit") - resubmit0, round == 0 ? 0 : 1);
        /* Dispatches recorded: none in the first round; in the second,
         * the update's first replay, the one recording and two batches. */
        assert_int_equal(recorded(&c) - d0, round == 0 ? 0 : 4 * 3);
    }
    assert_int_equal(c.sum, 4 * 3 + 4 * 7);
    salvo_graph_destroy(g);
    finish(&c);
}

/* The end of a capture records the replay ahead: where that fails for
 * want of memory, the capture still ends with its graph, whose replays
 * record into their batches and run; where the device is lost meanwhile,
 * the end of the capture fails with the loss, naming the graph's kernels,
 * and the device is lost from then on. Nothing leaks either way. */
static salvo_status capture_three(ctx *c, salvo_graph **g)
{
    assert_int_equal(salvo_stream_begin_capture(c->st), SALVO_OK);
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(add_at(c, c->buf[0], 0, 1, 1), SALVO_OK);
    return salvo_stream_end_capture(c->st, g);
}

/* n replays of g on c's stream, each synchronized: how many were made
 * ahead (salvo_stats.replays_ahead). */
static uint64_t replays_synchronized(ctx *c, salvo_graph *g, int n)
{
    salvo_stats s0, s1;
    assert_int_equal(salvo_device_stats(c->dev, &s0), SALVO_OK);
    for (int i = 0; i < n; i++) {
        assert_int_equal(salvo_graph_launch(g, c->st), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(c->st), SALVO_OK);
    }
    assert_int_equal(salvo_device_stats(c->dev, &s1), SALVO_OK);
    return s1.replays_ahead - s0.replays_ahead;
}

static void test_graph_made_ahead_fails(void **state)
{
    (void)state;
    ctx c;
    start(&c, true, 64, FAKE_COMPLETE_AUTO);
    salvo_graph *g = NULL;
    fake_set_result(c.f, "cmd_begin_resubmit", 1, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_int_equal(capture_three(&c, &g), SALVO_OK);
    assert_non_null(g);
    fake_clear_results(c.f);
    /* The first recorded into its batch (its parameters' first use), the
     * second made a recording, the third submitted it again. */
    assert_int_equal(replays_synchronized(&c, g, 3), 2);
    assert_int_equal(c.sum, 9);
    salvo_graph_destroy(g);
    finish(&c);

    start(&c, true, 64, FAKE_COMPLETE_AUTO);
    g = NULL;
    /* Three nodes, recorded inline: the first command buffer ended is
     * the first recording of the replay. */
    fake_set_result(c.f, "cmd_end", 1, ACCEL_ERROR_DEVICE_LOST);
    assert_int_equal(capture_three(&c, &g), SALVO_ERROR_DEVICE_LOST);
    assert_null(g);
    assert_non_null(strstr(salvo_last_error(), "end of capture of graph"));
    assert_non_null(strstr(salvo_last_error(), "kernels: add"));
    assert_true(salvo_device_is_lost(c.dev));
    assert_int_equal(add_at(&c, c.buf[0], 0, 1, 1), SALVO_ERROR_DEVICE_LOST);
    finish(&c);
}

/* A kernel that binds an array of buffers takes a descriptor set from a
 * pool even where the device pushes descriptors: its launch is never
 * recorded ahead (such a recording has no pool), and in a graph it is no
 * node recorded into the replay's batch but a recording of the graph's
 * (which took its set from the graph's pool), so that the replay itself,
 * taking none, is made ahead (at the end of the capture). Every launch and
 * replay runs (the fake counts the dispatches). */
static void test_arrays_take_sets(void **state)
{
    (void)state;
    ctx c;
    start(&c, true, 64, FAKE_COMPLETE_AUTO);
    salvo_kernel *k = NULL;
    salvo_kernel_desc kd = {.spirv = reflect_array_spv, .spirv_size = sizeof reflect_array_spv,
                            .name = "chunks"};
    assert_int_equal(salvo_kernel_create(c.dev, &kd, &k), SALVO_OK);
    salvo_binding b[4];
    for (uint32_t i = 0; i < 4; i++)
        b[i] = (salvo_binding){.binding = 3, .buffer = c.buf[i % 2], .element = i};
    const uint32_t groups[3] = {1, 1, 1};
    uint64_t ran = fake_dispatches_completed(c.f), a0 = made_ahead(&c);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(salvo_launch(c.st, k, groups, b, 4, NULL, 0), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(c.st), SALVO_OK);
    }
    assert_int_equal(made_ahead(&c), a0);
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_begin_capture(c.st), SALVO_OK);
    assert_int_equal(salvo_launch(c.st, k, groups, b, 4, NULL, 0), SALVO_OK);
    assert_int_equal(salvo_stream_end_capture(c.st, &g), SALVO_OK);
    assert_int_equal(replays_synchronized(&c, g, 4), 4);
    assert_int_equal(fake_dispatches_completed(c.f) - ran, 8);
    salvo_graph_destroy(g);
    salvo_kernel_destroy(k);
    finish(&c);
}

/* An event recorded after a launch made ahead: one made with
 * SALVO_EVENT_DISABLE_TIMING leaves the batch as the recording made ahead
 * (nothing recorded at the trip); a timed one writes its timestamp after
 * the launch, which is then recorded into the batch. Each launch ran. */
static void test_untimed_event_keeps_ahead(void **state)
{
    (void)state;
    ctx c;
    start(&c, true, 64, FAKE_COMPLETE_AUTO);
    salvo_event *untimed = NULL, *timed = NULL;
    assert_int_equal(salvo_event_create_flags(c.dev, SALVO_EVENT_DISABLE_TIMING, &untimed),
                     SALVO_OK);
    assert_int_equal(salvo_event_create(c.dev, &timed), SALVO_OK);
    settle(&c, 2);
    for (int round = 0; round < 2; round++) {
        salvo_event *ev = round == 0 ? untimed : timed;
        for (int i = 0; i < 3; i++) {
            uint64_t d0 = recorded(&c), a0 = made_ahead(&c);
            assert_int_equal(add(&c, 2), SALVO_OK);
            assert_int_equal(salvo_event_record(ev, c.st), SALVO_OK);
            assert_int_equal(salvo_event_synchronize(ev), SALVO_OK);
            assert_int_equal(recorded(&c) - d0, round == 0 ? 0 : 1);
            /* The timed event's batch went as recorded into it. */
            assert_int_equal(made_ahead(&c) - a0, round == 0 ? 1 : 0);
        }
    }
    assert_int_equal(salvo_stream_synchronize(c.st), SALVO_OK);
    assert_int_equal(c.sum, 2 * (3 + 6));
    salvo_event_destroy(untimed);
    salvo_event_destroy(timed);
    finish(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_repeat_records_nothing),
        cmocka_unit_test(test_changes_record),
        cmocka_unit_test(test_release_forgets),
        cmocka_unit_test(test_work_after),
        cmocka_unit_test(test_failures),
        cmocka_unit_test(test_in_flight),
        cmocka_unit_test(test_graph_back_to_back),
        cmocka_unit_test(test_graph_made_ahead_fails),
        cmocka_unit_test(test_where_made),
        cmocka_unit_test(test_arrays_take_sets),
        cmocka_unit_test(test_indirect),
        cmocka_unit_test(test_untimed_event_keeps_ahead),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
