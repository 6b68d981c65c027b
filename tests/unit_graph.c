/* Graphs on the fake accelerator: the command buffers a replay executes
 * stay untouched while batches that execute them are pending (an update
 * records into fresh ones), a failed replay is reported naming the graph
 * and its kernels, and nothing a graph uses is freed under its replays. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "add.spv.h"
#include "api/internal.h"
#include "support/fake_accel.h"

typedef struct env {
    fake_accel *f;
    salvo_device *dev;
    salvo_kernel *k;
    salvo_buffer *buf[2];
    salvo_stream *st[2];
} env;

/* The fake's kernel "add": the sum of the values (push word 1) of every
 * dispatch that ran. */
static void sum_values(void *user, const fake_dispatch *d)
{
    uint32_t push[2] = {0, 0};
    if (d->push_size == sizeof push)
        memcpy(push, d->push, sizeof push);
    *(uint64_t *)user += push[1];
}

/* push: the device pushes descriptors; sum: where sum_values adds up. */
static void open_env_with(env *e, fake_complete_mode mode, bool push, uint64_t *sum)
{
    memset(e, 0, sizeof *e);
    e->f = fake_create();
    assert_non_null(e->f);
    e->f->complete = mode;
    e->f->push_descriptors = push;
    if (sum) {
        e->f->dispatch_hook = sum_values;
        e->f->dispatch_user = sum;
    }
    salvo_device_desc d = {.batch_size = 64};
    assert_int_equal(device_create_with_accel(&d, fake_accel_get(e->f), &e->dev), SALVO_OK);
    salvo_kernel_desc kd = {.spirv = add_spv, .spirv_size = sizeof add_spv, .name = "add"};
    assert_int_equal(salvo_kernel_create(e->dev, &kd, &e->k), SALVO_OK);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(salvo_buffer_create(e->dev, 1024, SALVO_DOMAIN_DEVICE, &e->buf[i]),
                         SALVO_OK);
        assert_int_equal(salvo_stream_create(e->dev, NULL, &e->st[i]), SALVO_OK);
    }
}

static void open_env(env *e, fake_complete_mode mode)
{
    open_env_with(e, mode, false, NULL);
}

static void close_env(env *e)
{
    for (int i = 0; i < 2; i++) {
        salvo_stream_destroy(e->st[i]);
        salvo_buffer_destroy(e->buf[i]);
    }
    salvo_kernel_destroy(e->k);
    salvo_device_destroy(e->dev);
    if (fake_illegal_total(e->f))
        fprintf(stderr, "illegal: %s\n", fake_illegal_last(e->f));
    assert_int_equal(fake_illegal_total(e->f), 0);
    assert_int_equal(fake_live_total(e->f), 0);
    fake_free(e->f);
}

static salvo_status add(env *e, salvo_stream *st, salvo_buffer *b, uint32_t value)
{
    const uint32_t groups[3] = {4, 1, 1};
    const salvo_binding bind = {.binding = 0, .buffer = b};
    const uint32_t push[2] = {256, value};
    return salvo_launch(st, e->k, groups, &bind, 1, push, sizeof push);
}

static salvo_graph *capture(env *e, int nodes)
{
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_begin_capture(e->st[0]), SALVO_OK);
    for (int i = 0; i < nodes; i++)
        assert_int_equal(add(e, e->st[0], e->buf[i % 2], 1), SALVO_OK);
    assert_int_equal(salvo_stream_end_capture(e->st[0], &g), SALVO_OK);
    return g;
}

/* An update while replays are pending records into a fresh command
 * buffer; the one pending batches execute is never begun again, reset or
 * freed before they complete (the fake counts that as an illegal use). */
static void test_update_while_pending(void **state)
{
    (void)state;
    env e;
    open_env(&e, FAKE_COMPLETE_MANUAL);
    uint64_t streams_cmds = fake_live(e.f, FAKE_CMD); /* the streams' own */
    salvo_graph *g = capture(&e, 4);
    assert_int_equal(fake_calls(e.f, "cmd_create_reusable"), 1);
    assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    const uint32_t push[2] = {256, 5};
    assert_int_equal(salvo_graph_set_push(g, 2, push, sizeof push), SALVO_OK);
    assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
    /* Node 2 got a chunk of its own: nodes 0-1, 2 and 3 recorded anew. */
    assert_int_equal(fake_calls(e.f, "cmd_create_reusable"), 4);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    assert_int_equal(fake_pending(e.f), 2);
    /* Both done: the next update records in place. */
    fake_complete_all(e.f);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(salvo_graph_set_push(g, 2, push, sizeof push), SALVO_OK);
    assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
    assert_int_equal(fake_calls(e.f, "cmd_create_reusable"), 4);
    /* Destroyed with a replay pending: never blocks, nothing freed early. */
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    uint64_t cmds = fake_live(e.f, FAKE_CMD);
    assert_true(cmds > streams_cmds); /* the graph's */
    salvo_graph_destroy(g);
    assert_int_equal(fake_live(e.f, FAKE_CMD), cmds); /* none freed */
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK); /* a drain point */
    assert_int_equal(fake_live(e.f, FAKE_CMD), cmds); /* still none */
    fake_complete_all(e.f);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    /* Then the graph's go, every one. */
    assert_int_equal(fake_live(e.f, FAKE_CMD), streams_cmds);
    assert_int_equal(fake_dispatches_completed(e.f), 12);
    close_env(&e);
}

/* An update records one node again, not the chunk around it: the first
 * update of a node gives it a chunk of its own (its old chunk of
 * GRAPH_CHUNK_NODES is recorded once more, split in three), every later one records that node
 * alone. Past GRAPH_MAX_SPLITS nodes so updated, chunks are recorded
 * whole again. */
static void test_update_records_one_node(void **state)
{
    (void)state;
    env e;
    open_env(&e, FAKE_COMPLETE_AUTO);
    salvo_graph *g = NULL;
    enum { N = 600 };
    assert_int_equal(salvo_stream_begin_capture(e.st[0]), SALVO_OK);
    for (int i = 0; i < N; i++)
        assert_int_equal(add(&e, e.st[0], e.buf[0], 1), SALVO_OK);
    assert_int_equal(salvo_stream_end_capture(e.st[0], &g), SALVO_OK);
    assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    uint64_t d0 = fake_calls(e.f, "cmd_dispatch");
    for (uint32_t round = 0; round < 3; round++) {
        const uint32_t push[2] = {256, 7 + round};
        assert_int_equal(salvo_graph_set_push(g, 300, push, sizeof push), SALVO_OK);
        assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
        uint64_t d1 = fake_calls(e.f, "cmd_dispatch");
        /* Recorded: the chunk holding node 300 once, then node 300 alone. */
        assert_int_equal(d1 - d0, round == 0 ? GRAPH_CHUNK_NODES : 1);
        d0 = d1;
    }
    /* Every node updated once: splits stop at GRAPH_MAX_SPLITS; the replay
     * then records whole chunks, far fewer than a command buffer a node. */
    uint64_t made0 = fake_calls(e.f, "cmd_create_reusable");
    for (uint32_t n = 0; n < N; n++) {
        const uint32_t push[2] = {256, 2};
        assert_int_equal(salvo_graph_set_push(g, n, push, sizeof push), SALVO_OK);
    }
    assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_true(fake_calls(e.f, "cmd_create_reusable") - made0 <= 2 * GRAPH_MAX_SPLITS + 3);
    salvo_graph_destroy(g);
    close_env(&e);
}

/* Where descriptors are pushed, an updated node is recorded into each
 * replay's batch: after the first update (which splits its chunk), an
 * update and a replay record no command buffer of the graph's, however
 * many replays are pending; each pending replay runs the values it was
 * given. A node that cannot be recorded fails that replay alone, naming
 * it; the batch keeps the work before it. */
static void test_updated_node_recorded_inline(void **state)
{
    (void)state;
    env e;
    uint64_t sum = 0;
    open_env_with(&e, FAKE_COMPLETE_MANUAL, true, &sum);
    salvo_graph *g = NULL;
    enum { N = 600, NODE = 300 };
    assert_int_equal(salvo_stream_begin_capture(e.st[0]), SALVO_OK);
    for (int i = 0; i < N; i++)
        assert_int_equal(add(&e, e.st[0], e.buf[0], 1), SALVO_OK);
    assert_int_equal(salvo_stream_end_capture(e.st[0], &g), SALVO_OK);
    uint32_t push[2] = {256, 7};
    assert_int_equal(salvo_graph_set_push(g, NODE, push, sizeof push), SALVO_OK);
    assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
    uint64_t want = N - 1 + 7;
    uint64_t begun = fake_calls(e.f, "cmd_begin_reusable");
    uint64_t made = fake_calls(e.f, "cmd_create_reusable");
    for (uint32_t round = 0; round < 2; round++) {
        push[1] = 10 + round;
        assert_int_equal(salvo_graph_set_push(g, NODE, push, sizeof push), SALVO_OK);
        assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
        assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
        want += N - 1 + push[1];
    }
    assert_int_equal(fake_calls(e.f, "cmd_begin_reusable"), begun);
    assert_int_equal(fake_calls(e.f, "cmd_create_reusable"), made);
    assert_int_equal(fake_pending(e.f), 3);
    fake_complete_all(e.f);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(sum, want);

    /* The node refused: this replay fails, the launch before it stays. */
    assert_int_equal(add(&e, e.st[0], e.buf[1], 1000), SALVO_OK);
    fake_set_result(e.f, "cmd_dispatch", 1, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_ERROR_OUT_OF_HOST_MEMORY);
    assert_non_null(strstr(salvo_last_error(), "graph 1"));
    assert_non_null(strstr(salvo_last_error(), "kernels: add"));
    assert_non_null(strstr(salvo_last_error(), "node 300, add"));
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    fake_complete_all(e.f);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    want += 1000;
    assert_int_equal(sum, want);
    /* And the next replay runs whole. */
    assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    fake_complete_all(e.f);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(sum, want + N - 1 + push[1]);
    salvo_graph_destroy(g);
    close_env(&e);
}

static uint64_t replays_ahead(salvo_device *dev)
{
    salvo_stats s;
    assert_int_equal(salvo_device_stats(dev, &s), SALVO_OK);
    return s.replays_ahead;
}

/* Where every node may be inline, a graph of GRAPH_INLINE_NODES nodes or
 * fewer makes no recording to execute: a replay records its nodes into
 * its batch, in order. A replay into a bare batch is the batch: a command
 * buffer of its own, recorded ahead (AHEAD_RING of them at the end of the
 * capture; after an update, by the second replay of the new parameters)
 * and submitted as it is, recording nothing. Where work follows it in the
 * batch, it is recorded into the batch after all. One node more and the
 * graph is recorded once to be executed, as before. */
static void test_small_graph_recorded_inline(void **state)
{
    (void)state;
    env e;
    uint64_t sum = 0;
    open_env_with(&e, FAKE_COMPLETE_AUTO, true, &sum);
    uint64_t begun0 = fake_calls(e.f, "cmd_begin_resubmit"), d0 = fake_calls(e.f, "cmd_dispatch");
    salvo_graph *g = capture(&e, GRAPH_INLINE_NODES);
    assert_int_equal(fake_calls(e.f, "cmd_create_reusable"), 0);
    assert_int_equal(fake_calls(e.f, "cmd_begin_reusable"), 0);
    /* The capture's end made the replay's recordings. */
    assert_int_equal(fake_calls(e.f, "cmd_begin_resubmit") - begun0, AHEAD_RING);
    assert_int_equal(fake_calls(e.f, "cmd_dispatch") - d0, AHEAD_RING * GRAPH_INLINE_NODES);
    begun0 = fake_calls(e.f, "cmd_begin_resubmit");
    d0 = fake_calls(e.f, "cmd_dispatch");
    uint64_t barriers0 = fake_calls(e.f, "cmd_barrier"), ahead0 = replays_ahead(e.dev);
    for (int r = 0; r < 2; r++)
        assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    /* The first replay made ahead, then recorded into its batch as the
     * second followed it there: both recorded into the batch, node by
     * node, and neither counted as made ahead (salvo_stats.replays_ahead
     * counts the replays submitted as the recording made ahead). */
    assert_int_equal(fake_calls(e.f, "cmd_dispatch") - d0, 2 * GRAPH_INLINE_NODES);
    assert_int_equal(fake_calls(e.f, "cmd_begin_resubmit"), begun0);
    assert_int_equal(replays_ahead(e.dev) - ahead0, 0);
    /* Nodes on buffers 0, 1, 0, 1: a barrier between each level of the
     * graph at least (the lead and between replays may add some). */
    assert_true(fake_calls(e.f, "cmd_barrier") - barriers0 >= 2 * (GRAPH_INLINE_NODES - 2));
    assert_int_equal(sum, 2 * GRAPH_INLINE_NODES);
    /* Replays each alone in its batch: nothing recorded; once every
     * slot's own command buffer was left begun by such a batch, not even
     * a begin. */
    d0 = fake_calls(e.f, "cmd_dispatch");
    uint64_t begins = 0, submits = fake_calls(e.f, "submit");
    for (int r = 0; r < 2 * STREAM_SLOTS; r++) {
        if (r == STREAM_SLOTS)
            begins = fake_calls(e.f, "cmd_begin");
        assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    }
    assert_int_equal(fake_calls(e.f, "cmd_dispatch"), d0);
    assert_int_equal(fake_calls(e.f, "cmd_begin_resubmit"), begun0);
    assert_int_equal(fake_calls(e.f, "submit") - submits, 2 * STREAM_SLOTS);
    assert_int_equal(fake_calls(e.f, "cmd_begin"), begins);
    assert_int_equal(replays_ahead(e.dev) - ahead0, 2 * STREAM_SLOTS);
    assert_int_equal(sum, (2 + 2 * STREAM_SLOTS) * GRAPH_INLINE_NODES);
    /* A launch after it in its batch: the replay recorded there first. */
    d0 = fake_calls(e.f, "cmd_dispatch");
    assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
    assert_int_equal(add(&e, e.st[0], e.buf[1], 100), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(fake_calls(e.f, "cmd_dispatch") - d0, GRAPH_INLINE_NODES + 1);
    assert_int_equal(replays_ahead(e.dev) - ahead0, 2 * STREAM_SLOTS);
    assert_int_equal(sum, (3 + 2 * STREAM_SLOTS) * GRAPH_INLINE_NODES + 100);
    /* An update: its first replay records into the batch, the next one
     * ahead, the ones after nothing. */
    const uint32_t push[2] = {256, 9};
    assert_int_equal(salvo_graph_set_push(g, 1, push, sizeof push), SALVO_OK);
    for (int r = 0; r < 3; r++) {
        d0 = fake_calls(e.f, "cmd_dispatch");
        assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
        assert_int_equal(fake_calls(e.f, "cmd_dispatch") - d0, r < 2 ? GRAPH_INLINE_NODES : 0);
    }
    assert_int_equal(replays_ahead(e.dev) - ahead0, 2 + 2 * STREAM_SLOTS);
    assert_int_equal(sum, (6 + 2 * STREAM_SLOTS) * GRAPH_INLINE_NODES + 100 + 3 * (9 - 1));
    assert_int_equal(fake_calls(e.f, "cmd_create_reusable"), 0);
    salvo_graph_destroy(g);

    g = capture(&e, GRAPH_INLINE_NODES + 1);
    assert_int_equal(fake_calls(e.f, "cmd_create_reusable"), 1);
    assert_int_equal(fake_calls(e.f, "cmd_begin_reusable"), 1);
    d0 = fake_calls(e.f, "cmd_dispatch");
    assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(fake_calls(e.f, "cmd_dispatch"), d0);
    salvo_graph_destroy(g);
    close_env(&e);
}

/* A replay made ahead that work follows in its batch must be recorded
 * there: where that fails, the replay still runs (made ahead), the call
 * that followed it fails and records nothing, and the stream records
 * again once the failure is over. Where the recording ahead fails, the
 * replay is recorded into its batch instead. */
static void test_replay_ahead_failures(void **state)
{
    (void)state;
    env e;
    uint64_t sum = 0;
    open_env_with(&e, FAKE_COMPLETE_AUTO, true, &sum);
    salvo_graph *g = capture(&e, 2);
    for (int r = 0; r < 3; r++) {
        assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    }
    uint64_t ahead = replays_ahead(e.dev);
    assert_int_equal(sum, 6);
    /* Made ahead; the launch after it cannot record the replay into the
     * batch (its first dispatch refused): the launch fails, the replay runs. */
    assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
    assert_int_equal(replays_ahead(e.dev) - ahead, 1);
    fake_set_result(e.f, "cmd_dispatch", 1, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    assert_int_equal(add(&e, e.st[0], e.buf[1], 100), SALVO_ERROR_OUT_OF_HOST_MEMORY);
    assert_non_null(strstr(salvo_last_error(), "graph 1"));
    /* Now the batch's buffer, part-recorded, is begun again first. */
    uint64_t begins = fake_calls(e.f, "cmd_begin");
    assert_int_equal(add(&e, e.st[0], e.buf[1], 1000), SALVO_OK);
    assert_int_equal(fake_calls(e.f, "cmd_begin") - begins, 1);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(sum, 6 + 2 + 1000);
    /* A begin refused while recording it ahead: into the batch instead. */
    fake_clear_results(e.f);
    const uint32_t push[2] = {256, 4};
    assert_int_equal(salvo_graph_set_push(g, 0, push, sizeof push), SALVO_OK);
    assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK); /* the first: into its batch */
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    fake_set_result(e.f, "cmd_begin_resubmit", 1, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
    ahead = replays_ahead(e.dev);
    for (int r = 0; r < 2; r++) {
        assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    }
    assert_int_equal(replays_ahead(e.dev), ahead);
    assert_int_equal(sum, 6 + 2 + 1000 + 3 * 5);
    salvo_graph_destroy(g);
    close_env(&e);
}

/* A recording that keeps failing: the replay that meets it fails, and
 * the launch before it in the batch, which cannot be recorded again
 * either, is dropped and reported to the stream's synchronize with the
 * same status, naming why; then the stream records again. Traced: the
 * dropped batch, which keeps its place with no command buffer begun, is
 * not stamped at its submit (the fake calls that illegal), and the trace
 * is still written. */
static void inline_node_failing_for_good(bool traced)
{
    env e;
    uint64_t sum = 0;
    open_env_with(&e, FAKE_COMPLETE_AUTO, true, &sum);
    char path[64];
    snprintf(path, sizeof path, "/tmp/salvo_unit_graph_%ld.json", (long)getpid());
    if (traced)
        assert_int_equal(salvo_trace_start(e.dev, path), SALVO_OK);
    salvo_graph *g = capture(&e, 300);
    const uint32_t push[2] = {256, 5};
    assert_int_equal(salvo_graph_set_push(g, 280, push, sizeof push), SALVO_OK);
    assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    uint64_t ran = sum;
    assert_int_equal(add(&e, e.st[0], e.buf[1], 1000), SALVO_OK);
    fake_set_result_from(e.f, "cmd_dispatch", 1, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_non_null(strstr(salvo_last_error(), "node 280, add"));
    if (fake_illegal_total(e.f))
        fail_msg("illegal use of the fake: %s", fake_illegal_last(e.f));
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_non_null(strstr(salvo_last_error(), "its launches were dropped"));
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(sum, ran); /* neither the launch nor the replay ran */
    fake_clear_results(e.f);
    assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(sum, ran + 299 + 5);
    if (traced) {
        assert_int_equal(salvo_trace_stop(e.dev), SALVO_OK);
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        fclose(f);
        remove(path);
    }
    salvo_graph_destroy(g);
    close_env(&e);
}

static void test_inline_node_failing_for_good(void **state)
{
    (void)state;
    inline_node_failing_for_good(false);
}

static void test_inline_node_failing_for_good_traced(void **state)
{
    (void)state;
    inline_node_failing_for_good(true);
}

/* A replay whose batch the queue refuses is reported once, by the
 * stream's synchronize, naming the graph and its kernel. */
static void test_failed_replay_names_graph(void **state)
{
    (void)state;
    env e;
    open_env(&e, FAKE_COMPLETE_AUTO);
    salvo_graph *g = capture(&e, 3);
    fake_set_result(e.f, "submit", 1, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_ERROR_OUT_OF_DEVICE_MEMORY);
    const char *msg = salvo_last_error();
    assert_non_null(strstr(msg, "graph 1"));
    assert_non_null(strstr(msg, "add"));
    assert_non_null(strstr(msg, "3 launches"));
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    /* The graph still replays. */
    assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(fake_dispatches_completed(e.f), 3);
    /* Device loss is sticky for replays too. */
    fake_lose_device(e.f);
    assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_ERROR_DEVICE_LOST);
    assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_ERROR_DEVICE_LOST);
    salvo_graph_destroy(g);
    close_env(&e);
}

/* A failed recording at end of capture leaves no graph and holds
 * nothing; a failed re-recording at replay records nothing, and the next
 * replay tries again. */
static void test_recording_failures(void **state)
{
    (void)state;
    env e;
    open_env(&e, FAKE_COMPLETE_AUTO);
    assert_int_equal(salvo_stream_begin_capture(e.st[0]), SALVO_OK);
    assert_int_equal(add(&e, e.st[0], e.buf[0], 1), SALVO_OK);
    fake_set_result(e.f, "cmd_begin_reusable", 1, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_end_capture(e.st[0], &g), SALVO_ERROR_OUT_OF_HOST_MEMORY);
    assert_null(g);
    assert_non_null(strstr(salvo_last_error(), "kernels: add"));
    salvo_stats s;
    assert_int_equal(salvo_device_stats(e.dev, &s), SALVO_OK);
    assert_int_equal(s.live_graphs, 0);
    /* The stream is out of the capture. */
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    g = capture(&e, 2);
    const uint32_t push[2] = {256, 5};
    assert_int_equal(salvo_graph_set_push(g, 0, push, sizeof push), SALVO_OK);
    fake_set_result(e.f, "cmd_begin_reusable", 1, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
    uint64_t before = fake_dispatches_completed(e.f);
    assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(fake_dispatches_completed(e.f), before);
    assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(fake_dispatches_completed(e.f), before + 2);
    salvo_graph_destroy(g);
    close_env(&e);
}

/* Buffers and kernels a graph holds outlive their destroy; they go with
 * the graph. */
static void test_holds(void **state)
{
    (void)state;
    env e;
    open_env(&e, FAKE_COMPLETE_MANUAL);
    salvo_buffer *b = NULL;
    assert_int_equal(salvo_buffer_create(e.dev, 1024, SALVO_DOMAIN_DEVICE, &b), SALVO_OK);
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_begin_capture(e.st[0]), SALVO_OK);
    assert_int_equal(add(&e, e.st[0], b, 1), SALVO_OK);
    assert_int_equal(salvo_stream_end_capture(e.st[0], &g), SALVO_OK);
    uint64_t buffers = fake_live(e.f, FAKE_BUFFER);
    salvo_buffer_destroy(b);
    assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    fake_complete_all(e.f);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(fake_live(e.f, FAKE_BUFFER), buffers); /* held */
    assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_flush(e.st[0]), SALVO_OK);
    salvo_graph_destroy(g);
    assert_int_equal(fake_live(e.f, FAKE_BUFFER), buffers); /* a replay pending */
    fake_complete_all(e.f);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    assert_int_equal(fake_live(e.f, FAKE_BUFFER), buffers - 1);
    close_env(&e);
}

/* A stream of a capture destroyed while salvo's lock is busy (from a log
 * callback, say) stays in the capture until it ends, and is freed then;
 * one destroyed with the lock free leaves at once. */
static void test_destroy_member_lock_busy(void **state)
{
    (void)state;
    env e;
    open_env(&e, FAKE_COMPLETE_AUTO);
    salvo_stream *a = NULL, *b = NULL;
    assert_int_equal(salvo_stream_create(e.dev, NULL, &a), SALVO_OK);
    assert_int_equal(salvo_stream_create(e.dev, NULL, &b), SALVO_OK);
    salvo_event *ev = NULL;
    assert_int_equal(salvo_event_create(e.dev, &ev), SALVO_OK);
    assert_int_equal(salvo_stream_begin_capture(e.st[0]), SALVO_OK);
    assert_int_equal(add(&e, e.st[0], e.buf[0], 1), SALVO_OK);
    assert_int_equal(salvo_event_record(ev, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_wait_event(a, ev), SALVO_OK);
    assert_int_equal(salvo_stream_wait_event(b, ev), SALVO_OK);
    assert_int_equal(add(&e, a, e.buf[1], 1), SALVO_OK);
    assert_int_equal(add(&e, b, e.buf[1], 1), SALVO_OK);
    /* What a stream's objects are on the fake: its STREAM_SLOTS slots'
     * command buffers and descriptor pools (no fences: its batches signal
     * its timeline; the counters of live streams drop at the destroy,
     * freed or kept: they cannot tell). */
    uint64_t cmds = fake_live(e.f, FAKE_CMD), pools = fake_live(e.f, FAKE_DESCPOOL);
    assert_int_equal(fake_live(e.f, FAKE_FENCE), 0);
    salvo_mutex_lock(&e.dev->q.lock);
    salvo_stream_destroy(a); /* cannot take the lock: kept in the capture */
    salvo_mutex_unlock(&e.dev->q.lock);
    salvo_stream_destroy(b); /* leaves now */
    /* A drain point, which frees destroyed idle streams: not a kept one.
     * (A flush: a synchronize, or any capture call, would take the kept
     * destroy in, as salvo.h says, and free it.) */
    assert_int_equal(salvo_stream_flush(e.st[1]), SALVO_OK);
    salvo_stats s;
    assert_int_equal(salvo_device_stats(e.dev, &s), SALVO_OK);
    assert_int_equal(s.live_streams, 2);
    assert_int_equal(fake_live(e.f, FAKE_DESCPOOL), pools - STREAM_SLOTS); /* b's */
    assert_int_equal(fake_live(e.f, FAKE_CMD), cmds - STREAM_SLOTS);
    salvo_graph *g = NULL;
    uint64_t reusable = fake_calls(e.f, "cmd_create_reusable");
    uint64_t made = fake_calls(e.f, "cmd_create");
    assert_int_equal(salvo_stream_end_capture(e.st[0], &g), SALVO_OK);
    /* The capture over, the kept one is freed too (the graph's own
     * command buffers, recorded now, aside: its parts, and its replay's
     * recordings made ahead). */
    assert_int_equal(fake_calls(e.f, "cmd_create") - made, AHEAD_RING);
    assert_int_equal(fake_live(e.f, FAKE_CMD),
                     cmds - 2 * STREAM_SLOTS +
                         (fake_calls(e.f, "cmd_create_reusable") - reusable) + AHEAD_RING);
    assert_int_equal(salvo_graph_node_count(g), 3);
    assert_int_equal(salvo_graph_launch(g, e.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(e.st[0]), SALVO_OK);
    salvo_graph_destroy(g);
    /* The stream that began a capture, destroyed with the lock busy: the
     * capture is abandoned at the next call that looks at captures. */
    salvo_stream *c = NULL;
    assert_int_equal(salvo_stream_create(e.dev, NULL, &c), SALVO_OK);
    assert_int_equal(salvo_stream_begin_capture(c), SALVO_OK);
    assert_int_equal(add(&e, c, e.buf[0], 1), SALVO_OK);
    salvo_mutex_lock(&e.dev->q.lock);
    salvo_stream_destroy(c);
    salvo_mutex_unlock(&e.dev->q.lock);
    uint32_t word = 0;
    assert_int_equal(salvo_buffer_read(e.buf[0], 0, &word, sizeof word), SALVO_OK);
    assert_int_equal(salvo_device_stats(e.dev, &s), SALVO_OK);
    assert_int_equal(s.live_graphs, 0);
    salvo_event_destroy(ev);
    close_env(&e);
}

/* A stream that joined a capture whose first stream was destroyed with
 * the lock busy: the capture is abandoned at its next call, and that
 * call's commands, of every kind, go into its batches again (launched,
 * submitted, not captured). Each kind is in turn the first call after
 * the abandon (the one that finds it), the others after it; each reaches
 * the fake and its bytes are read back:
 *   launch        buf[0] (the fake computes nothing: a dispatch counted)
 *   copy          buf[0] bytes 0..64 to buf[1] bytes 256..320
 *   fill          buf[1] bytes 0..64 with 7
 *   fill_pattern  buf[1] bytes 129..131 with 1 */
enum { K_LAUNCH, K_COPY, K_FILL, K_PATTERN, KINDS };

static void abandoned_member_call(env *e, int kind)
{
    const uint8_t one = 1;
    switch (kind) {
    case K_LAUNCH:
        assert_int_equal(add(e, e->st[1], e->buf[0], 1), SALVO_OK);
        break;
    case K_COPY:
        assert_int_equal(salvo_copy(e->st[1], e->buf[0], 0, e->buf[1], 256, 64), SALVO_OK);
        break;
    case K_FILL:
        assert_int_equal(salvo_fill(e->st[1], e->buf[1], 0, 64, 7), SALVO_OK);
        break;
    default:
        assert_int_equal(salvo_fill_pattern(e->st[1], e->buf[1], 129, 2, &one, 1), SALVO_OK);
        break;
    }
}

static void test_member_of_abandoned_capture_records(void **state)
{
    (void)state;
    env e;
    open_env(&e, FAKE_COMPLETE_AUTO);
    for (int first = 0; first < KINDS; first++) {
        uint8_t src[1024], dst[1024], back[1024];
        for (int i = 0; i < 1024; i++) {
            src[i] = (uint8_t)(i * 7 + first + 1);
            dst[i] = 0;
        }
        assert_int_equal(salvo_buffer_write(e.buf[0], 0, src, sizeof src), SALVO_OK);
        assert_int_equal(salvo_buffer_write(e.buf[1], 0, dst, sizeof dst), SALVO_OK);
        salvo_stream *origin = NULL;
        assert_int_equal(salvo_stream_create(e.dev, NULL, &origin), SALVO_OK);
        salvo_event *ev = NULL;
        assert_int_equal(salvo_event_create(e.dev, &ev), SALVO_OK);
        assert_int_equal(salvo_stream_begin_capture(origin), SALVO_OK);
        assert_int_equal(salvo_event_record(ev, origin), SALVO_OK);
        assert_int_equal(salvo_stream_wait_event(e.st[1], ev), SALVO_OK);
        bool capturing = false;
        assert_int_equal(salvo_stream_is_capturing(e.st[1], &capturing), SALVO_OK);
        assert_true(capturing);
        salvo_mutex_lock(&e.dev->q.lock);
        salvo_stream_destroy(origin);
        salvo_mutex_unlock(&e.dev->q.lock);
        salvo_stats before, after;
        assert_int_equal(salvo_device_stats(e.dev, &before), SALVO_OK);
        assert_int_equal(before.live_graphs, 1); /* the first call finds it */
        uint64_t dispatches = fake_dispatches_completed(e.f);
        uint64_t copies = fake_calls(e.f, "cmd_copy"), fills = fake_calls(e.f, "cmd_fill");
        uint64_t fill_bytes = fake_calls(e.f, "cmd_fill_bytes");
        for (int k = 0; k < KINDS; k++)
            abandoned_member_call(&e, (first + k) % KINDS);
        assert_int_equal(salvo_stream_synchronize(e.st[1]), SALVO_OK);
        assert_int_equal(salvo_device_stats(e.dev, &after), SALVO_OK);
        assert_int_equal(after.launches_total - before.launches_total, 1);
        assert_true(after.batches_submitted > before.batches_submitted);
        assert_int_equal(fake_dispatches_completed(e.f) - dispatches, 1);
        assert_int_equal(fake_calls(e.f, "cmd_copy") - copies, 1);
        assert_int_equal(fake_calls(e.f, "cmd_fill") - fills, 1);
        assert_int_equal(fake_calls(e.f, "cmd_fill_bytes") - fill_bytes, 1);
        assert_int_equal(after.live_graphs, 0);
        assert_int_equal(salvo_stream_is_capturing(e.st[1], &capturing), SALVO_OK);
        assert_false(capturing);
        assert_int_equal(salvo_buffer_read(e.buf[1], 0, back, sizeof back), SALVO_OK);
        for (int i = 0; i < 1024; i++) {
            uint8_t want = 0;
            if (i < 64)
                want = (i % 4) == 0 ? 7 : 0; /* the fill's words */
            else if (i == 129 || i == 130)
                want = 1; /* the pattern's */
            else if (i >= 256 && i < 320)
                want = src[i - 256]; /* the copy's */
            if (back[i] != want)
                fail_msg("first call %d: buf[1] byte %d is %u, not %u", first, i, back[i], want);
        }
        salvo_event_destroy(ev);
    }
    close_env(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_update_while_pending),
        cmocka_unit_test(test_update_records_one_node),
        cmocka_unit_test(test_updated_node_recorded_inline),
        cmocka_unit_test(test_small_graph_recorded_inline),
        cmocka_unit_test(test_replay_ahead_failures),
        cmocka_unit_test(test_inline_node_failing_for_good),
        cmocka_unit_test(test_inline_node_failing_for_good_traced),
        cmocka_unit_test(test_failed_replay_names_graph),
        cmocka_unit_test(test_recording_failures),
        cmocka_unit_test(test_holds),
        cmocka_unit_test(test_destroy_member_lock_busy),
        cmocka_unit_test(test_member_of_abandoned_capture_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
