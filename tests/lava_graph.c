/* Graphs on a real device, with synchronization validation on: replayed
 * values read back exactly, updates seen only by later replays, forked
 * branches, barriers only where nodes depend on each other, lifetimes
 * across pending replays, and the calls a capture refuses. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "add.spv.h"
#include "api/internal.h"
#include "empty.spv.h"
#include "salvo/salvo.h"
#include "spin.spv.h"
#include "support/lava.h"

#define N 256u /* elements */

typedef struct fixture {
    salvo_device *dev;
    salvo_kernel *add;  /* data[i] += value */
    salvo_kernel *copy; /* dst[i] = src[i] + add */
    salvo_stream *st, *st2, *st3;
    salvo_device_info info;
} fixture;

typedef struct push2 {
    uint32_t n, value;
} push2;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dev = lava_open(SALVO_DEVICE_SYNC_VALIDATION, 64);
    f->add = lava_add_kernel(f->dev);
    f->copy = lava_copy_kernel(f->dev);
    assert_int_equal(salvo_stream_create(f->dev, NULL, &f->st), SALVO_OK);
    assert_int_equal(salvo_stream_create(f->dev, NULL, &f->st2), SALVO_OK);
    assert_int_equal(salvo_stream_create(f->dev, NULL, &f->st3), SALVO_OK);
    assert_int_equal(salvo_device_info_get(f->dev, &f->info), SALVO_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    salvo_stream_destroy(f->st);
    salvo_stream_destroy(f->st2);
    salvo_stream_destroy(f->st3);
    salvo_kernel_destroy(f->add);
    salvo_kernel_destroy(f->copy);
    assert_int_equal(salvo_device_synchronize(f->dev), SALVO_OK);
    salvo_stats s;
    assert_int_equal(salvo_device_stats(f->dev, &s), SALVO_OK);
    assert_int_equal(s.validation_messages, 0);
    assert_int_equal(s.live_graphs, 0);
    assert_int_equal(s.live_buffers, 0);
    assert_int_equal(s.live_kernels, 0);
    lava_close(f->dev);
    free(f);
    return 0;
}

static salvo_buffer *filled(fixture *f, uint32_t value, salvo_domain domain)
{
    salvo_buffer *b = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, N * 4, domain, &b), SALVO_OK);
    uint32_t v[N];
    for (uint32_t i = 0; i < N; i++)
        v[i] = value + i;
    assert_int_equal(salvo_buffer_write(b, 0, v, sizeof v), SALVO_OK);
    return b;
}

static void expect(salvo_buffer *b, uint32_t value)
{
    uint32_t v[N];
    assert_int_equal(salvo_buffer_read(b, 0, v, sizeof v), SALVO_OK);
    for (uint32_t i = 0; i < N; i++)
        if (v[i] != value + i)
            fail_msg("element %u: %u, expected %u", i, v[i], value + i);
}

static void add(fixture *f, salvo_stream *st, salvo_buffer *b, uint32_t value)
{
    salvo_binding bd = {.binding = 0, .buffer = b};
    push2 p = {N, value};
    uint32_t g[3] = {N / 64, 1, 1};
    assert_int_equal(salvo_launch(st, f->add, g, &bd, 1, &p, sizeof p), SALVO_OK);
}

static void copy_add(fixture *f, salvo_stream *st, salvo_buffer *src, salvo_buffer *dst,
                     uint32_t value)
{
    salvo_binding bd[2] = {{.binding = 0, .buffer = src}, {.binding = 1, .buffer = dst}};
    push2 p = {N, value};
    uint32_t g[3] = {N / 64, 1, 1};
    assert_int_equal(salvo_launch(st, f->copy, g, bd, 2, &p, sizeof p), SALVO_OK);
}

static uint64_t barriers(fixture *f)
{
    salvo_stats s;
    assert_int_equal(salvo_device_stats(f->dev, &s), SALVO_OK);
    return s.barriers_emitted;
}

/* A chain captured once and replayed: every replay runs every node. */
static void test_replay_exact(void **state)
{
    fixture *f = *state;
    salvo_buffer *a = filled(f, 0, SALVO_DOMAIN_DEVICE), *b = filled(f, 0, SALVO_DOMAIN_DEVICE);
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    for (int i = 0; i < 10; i++)
        add(f, f->st, a, 1);
    copy_add(f, f->st, a, b, 1000);
    salvo_stats before;
    assert_int_equal(salvo_device_stats(f->dev, &before), SALVO_OK);
    assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_OK);
    assert_int_equal(salvo_graph_node_count(g), 11);
    salvo_stats after;
    assert_int_equal(salvo_device_stats(f->dev, &after), SALVO_OK);
    /* Nothing ran during the capture. */
    assert_int_equal(after.launches_total, before.launches_total);
    expect(a, 0);
    for (int r = 0; r < 5; r++)
        assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    expect(a, 50);
    expect(b, 1050);
    assert_int_equal(salvo_device_stats(f->dev, &after), SALVO_OK);
    assert_int_equal(after.launches_total - before.launches_total, 55);
    /* In stream order with the stream's own launches. */
    add(f, f->st, a, 7);
    assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
    add(f, f->st, b, 1);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    expect(a, 67);
    expect(b, 1068);
    salvo_graph_destroy(g);
    salvo_buffer_destroy(a);
    salvo_buffer_destroy(b);
}

/* Barriers inside a graph only between nodes that depend on each other. */
static void test_barriers_only_between_levels(void **state)
{
    fixture *f = *state;
    enum { K = 8 };
    salvo_buffer *bufs[K];
    for (int i = 0; i < K; i++)
        bufs[i] = filled(f, 0, SALVO_DOMAIN_DEVICE);
    salvo_graph *indep = NULL, *chain = NULL;
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    for (int i = 0; i < K; i++)
        add(f, f->st, bufs[i], 1);
    uint64_t b0 = barriers(f);
    assert_int_equal(salvo_stream_end_capture(f->st, &indep), SALVO_OK);
    assert_int_equal(barriers(f) - b0, 0);
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    for (int i = 0; i < K; i++)
        add(f, f->st, bufs[0], 1);
    b0 = barriers(f);
    assert_int_equal(salvo_stream_end_capture(f->st, &chain), SALVO_OK);
    assert_int_equal(barriers(f) - b0, K - 1);
    /* Two rounds of independent nodes, the second reading the first. */
    salvo_graph *two = NULL;
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    for (int i = 0; i < K / 2; i++)
        add(f, f->st, bufs[i], 1);
    for (int i = 0; i < K / 2; i++)
        copy_add(f, f->st, bufs[i], bufs[K / 2 + i], 0);
    b0 = barriers(f);
    assert_int_equal(salvo_stream_end_capture(f->st, &two), SALVO_OK);
    assert_int_equal(barriers(f) - b0, 1);
    assert_int_equal(salvo_graph_launch(indep, f->st), SALVO_OK);
    assert_int_equal(salvo_graph_launch(chain, f->st), SALVO_OK);
    assert_int_equal(salvo_graph_launch(two, f->st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    expect(bufs[0], 1 + K + 1);
    for (int i = 1; i < K / 2; i++)
        expect(bufs[i], 2);
    expect(bufs[K / 2], 1 + K + 1);
    for (int i = K / 2 + 1; i < K; i++)
        expect(bufs[i], 2);
    salvo_graph_destroy(indep);
    salvo_graph_destroy(chain);
    salvo_graph_destroy(two);
    for (int i = 0; i < K; i++)
        salvo_buffer_destroy(bufs[i]);
}

/* An update is seen by the replays after it, never by one made before,
 * even one still waiting in the open batch. */
static void test_updates_later_replays_only(void **state)
{
    fixture *f = *state;
    salvo_buffer *a = filled(f, 0, SALVO_DOMAIN_DEVICE), *c = filled(f, 500, SALVO_DOMAIN_DEVICE);
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    add(f, f->st, a, 1);
    add(f, f->st, a, 2);
    assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_OK);
    assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK); /* +3, not submitted yet */
    push2 p = {N, 10};
    assert_int_equal(salvo_graph_set_push(g, 0, &p, sizeof p), SALVO_OK);
    assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK); /* +12 */
    assert_int_equal(salvo_stream_flush(f->st), SALVO_OK);
    p.value = 100;
    assert_int_equal(salvo_graph_set_push(g, 1, &p, sizeof p), SALVO_OK);
    assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK); /* +110 */
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    expect(a, 125);
    /* New bindings: node 1 now adds to c. */
    salvo_binding bd = {.binding = 0, .buffer = c};
    assert_int_equal(salvo_graph_set_bindings(g, 1, &bd, 1), SALVO_OK);
    assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    expect(a, 135);
    expect(c, 600);
    /* Bad updates change nothing. */
    assert_int_equal(salvo_graph_set_push(g, 2, &p, sizeof p), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_graph_set_push(g, 0, &p, 4), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_graph_set_push(g, 0, NULL, sizeof p), SALVO_ERROR_INVALID_ARGUMENT);
    salvo_binding bad = {.binding = 3, .buffer = c};
    assert_int_equal(salvo_graph_set_bindings(g, 0, &bad, 1), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_graph_set_bindings(g, 0, NULL, 0), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    expect(a, 145);
    expect(c, 700);
    salvo_graph_destroy(g);
    salvo_buffer_destroy(a);
    salvo_buffer_destroy(c);
}

/* A node updated in a graph of several chunks gets a chunk of its own:
 * the nodes before and after it, in its old chunk and in the others, run
 * as before and in order, replays made before each update keep the old
 * value (one still pending at the update), and every later one has the
 * new. 600 dependent adds: chunks of 256 split around node 300. */
static void test_update_mid_graph(void **state)
{
    fixture *f = *state;
    enum { NODES = 600 };
    salvo_buffer *a = filled(f, 0, SALVO_DOMAIN_DEVICE);
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    for (int i = 0; i < NODES; i++)
        add(f, f->st, a, 1);
    assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_OK);
    uint32_t total = 0;
    assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK); /* pending at the update */
    total += NODES;
    for (uint32_t round = 0; round < 3; round++) {
        push2 p = {N, 1000 * (round + 1)};
        assert_int_equal(salvo_graph_set_push(g, 300, &p, sizeof p), SALVO_OK);
        assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
        total += NODES - 1 + p.value;
        if (round == 1) {
            /* A neighbour of the split, too: node 299 gets its own. */
            push2 q = {N, 7};
            assert_int_equal(salvo_graph_set_push(g, 299, &q, sizeof q), SALVO_OK);
            assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
            total += NODES - 2 + 7 + p.value;
            push2 back = {N, 1};
            assert_int_equal(salvo_graph_set_push(g, 299, &back, sizeof back), SALVO_OK);
        }
    }
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    expect(a, total);
    salvo_graph_destroy(g);
    salvo_buffer_destroy(a);
}

/* A whole graph updated from another of the same shape (as
 * cudaGraphExecUpdate): the replays after it run from's parameters (its
 * buffers, values, a fill's value) and the replay pending at the update
 * keeps the old ones; from can go at once; graphs of another shape are
 * refused naming the node, and change nothing. */
static void test_graph_update(void **state)
{
    fixture *f = *state;
    salvo_buffer *a = filled(f, 0, SALVO_DOMAIN_DEVICE), *b = filled(f, 100, SALVO_DOMAIN_DEVICE);
    salvo_buffer *c = filled(f, 0, SALVO_DOMAIN_DEVICE), *d = filled(f, 0, SALVO_DOMAIN_DEVICE);
    salvo_buffer *x = filled(f, 1000, SALVO_DOMAIN_DEVICE), *y = filled(f, 0, SALVO_DOMAIN_DEVICE);
    salvo_buffer *z = filled(f, 0, SALVO_DOMAIN_DEVICE), *w = filled(f, 0, SALVO_DOMAIN_DEVICE);
    salvo_graph *g = NULL, *from = NULL, *other = NULL, *other2 = NULL;
    /* g: a += 1; b = a + 2; fill c with 7 (then +0); w untouched. */
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    add(f, f->st, a, 1);
    copy_add(f, f->st, a, b, 2);
    assert_int_equal(salvo_fill(f->st, c, 0, N * 4, 7), SALVO_OK);
    assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_OK);
    /* from, the same calls on other buffers and values. */
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    add(f, f->st, x, 10);
    copy_add(f, f->st, x, y, 20);
    assert_int_equal(salvo_fill(f->st, z, 0, N * 4, 9), SALVO_OK);
    assert_int_equal(salvo_stream_end_capture(f->st, &from), SALVO_OK);
    /* Other shapes: one node fewer; the kernels the other way round. */
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    add(f, f->st, d, 1);
    copy_add(f, f->st, d, w, 1);
    assert_int_equal(salvo_stream_end_capture(f->st, &other), SALVO_OK);
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    copy_add(f, f->st, d, w, 1);
    add(f, f->st, d, 1);
    assert_int_equal(salvo_fill(f->st, d, 0, N * 4, 3), SALVO_OK);
    assert_int_equal(salvo_stream_end_capture(f->st, &other2), SALVO_OK);

    assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK); /* pending at the update */
    assert_int_equal(salvo_graph_update(g, other), SALVO_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(salvo_last_error(), "not the same shape"));
    assert_int_equal(salvo_graph_update(g, other2), SALVO_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(salvo_last_error(), "node 0"));
    assert_non_null(strstr(salvo_last_error(), "a launch of '"));
    assert_int_equal(salvo_graph_update(g, from), SALVO_OK);
    salvo_graph_destroy(from); /* g keeps what it uses */
    assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    expect(a, 1);      /* the first replay: a += 1 */
    expect(b, 1 + 2);  /* b = a + 2 */
    expect(x, 1010);   /* the second: x += 10 */
    expect(y, 1030);   /* y = x + 20 */
    uint32_t v[N];
    assert_int_equal(salvo_buffer_read(c, 0, v, sizeof v), SALVO_OK);
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(v[i], 7);
    assert_int_equal(salvo_buffer_read(z, 0, v, sizeof v), SALVO_OK);
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(v[i], 9);
    expect(w, 0);
    /* From itself: the same again. */
    assert_int_equal(salvo_graph_update(g, g), SALVO_OK);
    assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    expect(x, 1020);
    expect(a, 1);
    assert_int_equal(salvo_graph_update(NULL, g), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_graph_update(g, NULL), SALVO_ERROR_INVALID_ARGUMENT);
    salvo_graph_destroy(g);
    salvo_graph_destroy(other);
    salvo_graph_destroy(other2);

    /* salvo_fill_pattern: a range of whole words is a fill, one that
     * starts or ends within a word another kind, and the refusal says
     * which is which; two of the second kind update each other. */
    salvo_buffer *p = filled(f, 0, SALVO_DOMAIN_DEVICE);
    const unsigned char byte = 0xab;
    salvo_graph *whole = NULL, *part = NULL, *part2 = NULL;
    assert_int_equal(salvo_buffer_write(p, 0, (uint32_t[2]){0, 0}, 8), SALVO_OK);
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    assert_int_equal(salvo_fill_pattern(f->st, p, 0, 8, &byte, 1), SALVO_OK);
    assert_int_equal(salvo_stream_end_capture(f->st, &whole), SALVO_OK);
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    assert_int_equal(salvo_fill_pattern(f->st, p, 1, 6, &byte, 1), SALVO_OK);
    assert_int_equal(salvo_stream_end_capture(f->st, &part), SALVO_OK);
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    assert_int_equal(salvo_fill_pattern(f->st, p, 2, 1, &byte, 1), SALVO_OK);
    assert_int_equal(salvo_stream_end_capture(f->st, &part2), SALVO_OK);
    assert_int_equal(salvo_graph_update(whole, part), SALVO_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(salvo_last_error(), "a fill of whole words"));
    assert_non_null(strstr(salvo_last_error(), "a fill_pattern starting or ending within a word"));
    assert_int_equal(salvo_graph_update(part, part2), SALVO_OK);
    assert_int_equal(salvo_graph_launch(part, f->st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    unsigned char got[8];
    assert_int_equal(salvo_buffer_read(p, 0, got, sizeof got), SALVO_OK);
    for (int i = 0; i < 8; i++)
        assert_int_equal(got[i], i == 2 ? 0xab : 0); /* part2's range, not part's */
    salvo_graph_destroy(whole);
    salvo_graph_destroy(part);
    salvo_graph_destroy(part2);
    salvo_buffer_destroy(p);
    salvo_buffer *all[] = {a, b, c, d, x, y, z, w};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        salvo_buffer_destroy(all[i]);
}

/* Graphs with no parameters at all (no nodes; nodes with no bindings and
 * no push constants) capture, update and replay like any other: nothing
 * to copy is not a null pointer handed to memcpy (the ASan/UBSan job
 * halts on that). */
static void test_graph_update_without_parameters(void **state)
{
    fixture *f = *state;
    salvo_kernel_desc kd = {.spirv = empty_spv, .spirv_size = sizeof empty_spv, .name = "empty"};
    salvo_kernel *empty = NULL;
    assert_int_equal(salvo_kernel_create(f->dev, &kd, &empty), SALVO_OK);
    const uint32_t one[3] = {1, 1, 1};
    salvo_graph *none = NULL, *none2 = NULL, *bare = NULL, *bare2 = NULL;
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    assert_int_equal(salvo_stream_end_capture(f->st, &none), SALVO_OK);
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    assert_int_equal(salvo_stream_end_capture(f->st, &none2), SALVO_OK);
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    assert_int_equal(salvo_launch(f->st, empty, one, NULL, 0, NULL, 0), SALVO_OK);
    assert_int_equal(salvo_launch(f->st, empty, one, NULL, 0, NULL, 0), SALVO_OK);
    assert_int_equal(salvo_stream_end_capture(f->st, &bare), SALVO_OK);
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    assert_int_equal(salvo_launch(f->st, empty, (uint32_t[3]){2, 1, 1}, NULL, 0, NULL, 0),
                     SALVO_OK);
    assert_int_equal(salvo_launch(f->st, empty, one, NULL, 0, NULL, 0), SALVO_OK);
    assert_int_equal(salvo_stream_end_capture(f->st, &bare2), SALVO_OK);

    assert_int_equal(salvo_graph_update(none, none2), SALVO_OK);
    assert_int_equal(salvo_graph_update(none, none), SALVO_OK);
    assert_int_equal(salvo_graph_update(bare, none), SALVO_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(salvo_last_error(), "not the same shape"));
    assert_int_equal(salvo_graph_update(bare, bare2), SALVO_OK);
    assert_int_equal(salvo_graph_set_bindings(bare2, 1, NULL, 0), SALVO_OK);
    assert_int_equal(salvo_graph_set_push(bare2, 0, NULL, 0), SALVO_OK);
    assert_int_equal(salvo_graph_set_push(bare2, 0, one, 4), SALVO_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(salvo_last_error(), "takes 0 bytes"));
    assert_int_equal(salvo_graph_launch(none, f->st), SALVO_OK);
    assert_int_equal(salvo_graph_launch(bare, f->st), SALVO_OK);
    assert_int_equal(salvo_graph_launch(bare2, f->st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    salvo_stats s;
    assert_int_equal(salvo_device_stats(f->dev, &s), SALVO_OK);
    assert_int_equal(s.live_graphs, 4);
    salvo_graph_destroy(none);
    salvo_graph_destroy(none2);
    salvo_graph_destroy(bare);
    salvo_graph_destroy(bare2);
    salvo_kernel_destroy(empty);
}

/* Fork and join through events: the second stream's work belongs to the
 * graph, ordered after the point it waited for. */
static void test_fork_join(void **state)
{
    fixture *f = *state;
    salvo_buffer *a = filled(f, 0, SALVO_DOMAIN_DEVICE), *b = filled(f, 0, SALVO_DOMAIN_DEVICE);
    salvo_buffer *c = filled(f, 0, SALVO_DOMAIN_DEVICE);
    salvo_event *fork = NULL, *join = NULL;
    assert_int_equal(salvo_event_create(f->dev, &fork), SALVO_OK);
    assert_int_equal(salvo_event_create(f->dev, &join), SALVO_OK);
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    add(f, f->st, a, 5);
    assert_int_equal(salvo_event_record(fork, f->st), SALVO_OK);
    assert_int_equal(salvo_stream_wait_event(f->st2, fork), SALVO_OK); /* st2 joins */
    copy_add(f, f->st2, a, c, 0); /* reads what st did before the fork */
    add(f, f->st2, b, 1);
    add(f, f->st, a, 1); /* overwrites what st2 reads: runs after its copy */
    assert_int_equal(salvo_event_record(join, f->st2), SALVO_OK);
    assert_int_equal(salvo_stream_wait_event(f->st, join), SALVO_OK);
    /* st2 cannot end what st began, and cannot synchronize while in it. */
    salvo_graph *wrong = NULL;
    assert_int_equal(salvo_stream_end_capture(f->st2, &wrong), SALVO_ERROR_INVALID_STATE);
    assert_null(wrong);
    assert_int_equal(salvo_stream_synchronize(f->st2), SALVO_ERROR_INVALID_STATE);
    assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_OK);
    assert_int_equal(salvo_graph_node_count(g), 4);
    /* st2 is out of the capture: its own work runs again. */
    add(f, f->st2, b, 100);
    assert_int_equal(salvo_stream_synchronize(f->st2), SALVO_OK);
    expect(b, 100);
    assert_int_equal(salvo_graph_launch(g, f->st3), SALVO_OK);
    assert_int_equal(salvo_graph_launch(g, f->st3), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st3), SALVO_OK);
    expect(a, 12);
    expect(c, 11); /* the second replay's copy read a at 6 + 5 */
    expect(b, 102);
    /* The capture's events mark no stream point. */
    assert_int_equal(salvo_event_query(fork), SALVO_ERROR_INVALID_STATE);
    assert_int_equal(salvo_stream_wait_event(f->st2, fork), SALVO_ERROR_INVALID_STATE);
    assert_int_equal(salvo_event_record(fork, f->st), SALVO_OK);
    assert_int_equal(salvo_event_synchronize(fork), SALVO_OK);
    salvo_event_destroy(fork);
    salvo_event_destroy(join);
    salvo_graph_destroy(g);
    salvo_buffer_destroy(a);
    salvo_buffer_destroy(b);
    salvo_buffer_destroy(c);
}

/* Replays pending at once on two streams, one waiting for the other. */
static void test_replays_pending_on_two_streams(void **state)
{
    fixture *f = *state;
    salvo_buffer *a = filled(f, 0, SALVO_DOMAIN_DEVICE);
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    for (int i = 0; i < 4; i++)
        add(f, f->st, a, 1);
    assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_OK);
    salvo_event *ev = NULL;
    assert_int_equal(salvo_event_create(f->dev, &ev), SALVO_OK);
    for (int r = 0; r < 3; r++) {
        assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
        assert_int_equal(salvo_event_record(ev, f->st), SALVO_OK);
        assert_int_equal(salvo_stream_flush(f->st), SALVO_OK);
        assert_int_equal(salvo_stream_wait_event(f->st2, ev), SALVO_OK);
        assert_int_equal(salvo_graph_launch(g, f->st2), SALVO_OK);
        assert_int_equal(salvo_stream_flush(f->st2), SALVO_OK);
        assert_int_equal(salvo_event_record(ev, f->st2), SALVO_OK);
        assert_int_equal(salvo_stream_wait_event(f->st, ev), SALVO_OK);
    }
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st2), SALVO_OK);
    expect(a, 24);
    salvo_event_destroy(ev);
    salvo_graph_destroy(g);
    salvo_buffer_destroy(a);
}

/* A replay left in one stream's open batch keeps what it had, though a
 * later replay on another stream completed and the graph was updated
 * after it: the update records the graph again, never the recording the
 * pending replay executes. */
static void test_pending_replay_keeps_its_recording(void **state)
{
    fixture *f = *state;
    salvo_buffer *y = filled(f, 0, SALVO_DOMAIN_DEVICE), *z = filled(f, 0, SALVO_DOMAIN_DEVICE);
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    add(f, f->st, y, 1000);
    assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_OK);
    assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK); /* R1: stays in st's open batch */
    assert_int_equal(salvo_graph_launch(g, f->st2), SALVO_OK); /* R2 */
    assert_int_equal(salvo_stream_synchronize(f->st2), SALVO_OK);
    /* (no read of y here: it would wait for R1) */
    salvo_binding bd = {.binding = 0, .buffer = z};
    assert_int_equal(salvo_graph_set_bindings(g, 0, &bd, 1), SALVO_OK);
    push2 p = {N, 5000};
    assert_int_equal(salvo_graph_set_push(g, 0, &p, sizeof p), SALVO_OK);
    assert_int_equal(salvo_graph_launch(g, f->st2), SALVO_OK); /* R3: z += 5000 */
    assert_int_equal(salvo_stream_synchronize(f->st2), SALVO_OK);
    assert_int_equal(salvo_fill(f->st2, z, 0, N * 4, 7), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st2), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK); /* R1 runs now */
    expect(y, 2000); /* R1 and R2 */
    uint32_t v[N];
    assert_int_equal(salvo_buffer_read(z, 0, v, sizeof v), SALVO_OK);
    for (uint32_t i = 0; i < N; i++)
        if (v[i] != 7)
            fail_msg("z[%u] = %u: the pending replay ran the updated graph", i, v[i]);
    salvo_graph_destroy(g);
    salvo_buffer_destroy(y);
    salvo_buffer_destroy(z);
}

static uint64_t replays_ahead(fixture *f)
{
    salvo_stats s;
    assert_int_equal(salvo_device_stats(f->dev, &s), SALVO_OK);
    return s.replays_ahead;
}

/* Whether the device writes GPU timestamps: salvo_event_elapsed then
 * answers SALVO_OK, not SALVO_ERROR_UNSUPPORTED (salvo_device_info does
 * not say; lavapipe has them). */
static bool timed(salvo_device *dev)
{
    return dev->caps.timestamps;
}

/* A replay into a batch that holds nothing else is submitted as the
 * graph's own recording, made ahead: such replays, each synchronized, run
 * exactly; an update is seen from the next one on; a replay that work
 * follows in its batch (a launch reading what it wrote, a timed event) is
 * recorded into the batch after all, in order; what a graph writes into a
 * HOST buffer is seen by the host. */
static void test_replay_ahead(void **state)
{
    fixture *f = *state;
    salvo_buffer *a = filled(f, 0, SALVO_DOMAIN_DEVICE), *b = filled(f, 0, SALVO_DOMAIN_DEVICE);
    salvo_buffer *h = filled(f, 0, SALVO_DOMAIN_HOST);
    salvo_graph *g = NULL, *gh = NULL;
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    add(f, f->st, a, 1);
    assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_OK);
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    add(f, f->st, h, 3);
    add(f, f->st, h, 4);
    assert_int_equal(salvo_stream_end_capture(f->st, &gh), SALVO_OK);
    uint64_t ahead = replays_ahead(f);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    }
    expect(a, 5);
    /* Every one: recorded ahead at the end of the capture. */
    assert_int_equal(replays_ahead(f) - ahead, 5);
    push2 p = {N, 10};
    assert_int_equal(salvo_graph_set_push(g, 0, &p, sizeof p), SALVO_OK);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
        expect(a, 15 + 10 * (uint32_t)i);
    }
    /* After an update, all but the first of the new parameters. */
    assert_int_equal(replays_ahead(f) - ahead, 6);
    /* Work after it in the batch: b = a, as the replay left it. */
    assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
    copy_add(f, f->st, a, b, 0);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    /* Recorded into the batch for the copy after it: not counted. */
    assert_int_equal(replays_ahead(f) - ahead, 6);
    expect(a, 35);
    expect(b, 35);
    /* A timed event after it: its timestamp follows the replay. The graph
     * replayed here adds to a and spins for 100 ms or more: e0..e1 spans it
     * (e0 came before, in a batch of its own), at least half as long as
     * the same spin timed after it in the batch (e1..e2); a timestamp
     * written before the replay would leave e0..e1 the few ms between the
     * two batches. */
    salvo_kernel *sk = NULL;
    salvo_kernel_desc kd = {.spirv = spin_spv, .spirv_size = sizeof spin_spv, .name = "spin"};
    assert_int_equal(salvo_kernel_create(f->dev, &kd, &sk), SALVO_OK);
    salvo_buffer *s = NULL;
    assert_int_equal(
        salvo_buffer_create(f->dev, LAVA_SPIN_MAX_GROUPS * 256ull, SALVO_DOMAIN_DEVICE, &s),
        SALVO_OK);
    uint32_t sg =
        lava_spin_groups(f->dev, f->st, sk, s, N / 64, timed(f->dev), 100ull * 1000 * 1000);
    salvo_graph *gt = NULL;
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    add(f, f->st, a, 10);
    lava_spin(f->st, sk, s, sg);
    assert_int_equal(salvo_stream_end_capture(f->st, &gt), SALVO_OK);
    assert_int_equal(salvo_graph_launch(gt, f->st), SALVO_OK); /* made ahead */
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    expect(a, 45);
    salvo_event *e0 = NULL, *e1 = NULL, *e2 = NULL;
    assert_int_equal(salvo_event_create(f->dev, &e0), SALVO_OK);
    assert_int_equal(salvo_event_create(f->dev, &e1), SALVO_OK);
    assert_int_equal(salvo_event_create(f->dev, &e2), SALVO_OK);
    assert_int_equal(salvo_event_record(e0, f->st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    uint64_t before = replays_ahead(f);
    assert_int_equal(salvo_graph_launch(gt, f->st), SALVO_OK);
    assert_int_equal(replays_ahead(f) - before, 1);
    assert_int_equal(salvo_event_record(e1, f->st), SALVO_OK);
    copy_add(f, f->st, a, b, 1);
    lava_spin(f->st, sk, s, sg);
    assert_int_equal(salvo_event_record(e2, f->st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    lava_expect_spanned(e0, e1, e2, timed(f->dev), "the replay");
    expect(a, 55);
    expect(b, 56);
    salvo_event_destroy(e0);
    salvo_event_destroy(e1);
    salvo_event_destroy(e2);
    salvo_graph_destroy(gt);
    salvo_buffer_destroy(s);
    salvo_kernel_destroy(sk);
    /* Into host memory: ends with the host's barrier. */
    before = replays_ahead(f);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(salvo_graph_launch(gh, f->st), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
        expect(h, 7 * (uint32_t)(i + 1));
    }
    assert_int_equal(replays_ahead(f) - before, 3);
    salvo_graph_destroy(g);
    salvo_graph_destroy(gh);
    salvo_buffer_destroy(a);
    salvo_buffer_destroy(b);
    salvo_buffer_destroy(h);
}

/* A buffer and a kernel destroyed while a graph uses them live on until
 * the graph goes and its replays are complete; so does a graph destroyed
 * with replays pending. */
static void test_lifetimes(void **state)
{
    fixture *f = *state;
    salvo_buffer *a = filled(f, 0, SALVO_DOMAIN_DEVICE), *out = filled(f, 0, SALVO_DOMAIN_HOST);
    salvo_kernel *k = NULL;
    salvo_spec_constant sc = {0, 64};
    salvo_kernel_desc kd = {.spirv = add_spv, .spirv_size = sizeof add_spv, .name = "add2",
                            .spec_constants = &sc, .spec_constant_count = 1};
    assert_int_equal(salvo_kernel_create(f->dev, &kd, &k), SALVO_OK);
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    salvo_binding bd = {.binding = 0, .buffer = a};
    push2 p = {N, 3};
    uint32_t groups[3] = {N / 64, 1, 1};
    assert_int_equal(salvo_launch(f->st, k, groups, &bd, 1, &p, sizeof p), SALVO_OK);
    assert_int_equal(salvo_copy(f->st, a, 0, out, 0, N * 4), SALVO_OK);
    assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_OK);
    salvo_buffer_destroy(a);
    salvo_kernel_destroy(k);
    salvo_stats s;
    assert_int_equal(salvo_device_stats(f->dev, &s), SALVO_OK);
    assert_int_equal(s.live_buffers, 2); /* held by the graph */
    for (int r = 0; r < 4; r++)
        assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
    assert_int_equal(salvo_stream_flush(f->st), SALVO_OK);
    salvo_graph_destroy(g); /* replays pending: never blocks */
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    expect(out, 12);
    assert_int_equal(salvo_device_synchronize(f->dev), SALVO_OK);
    assert_int_equal(salvo_device_stats(f->dev, &s), SALVO_OK);
    assert_int_equal(s.live_buffers, 1);
    assert_int_equal(s.live_graphs, 0);
    salvo_buffer_destroy(out);
}

typedef struct late_raise {
    salvo_gate *gate;
    _Atomic bool raised;
} late_raise;

static void *raise_after_500ms(void *user)
{
    late_raise *l = user;
    nanosleep(&(struct timespec){0, 500 * 1000 * 1000}, NULL);
    atomic_store(&l->raised, true);
    assert_int_equal(salvo_gate_raise(l->gate, 1), SALVO_OK);
    return NULL;
}

static uint64_t live_buffers(fixture *f)
{
    assert_int_equal(salvo_device_synchronize(f->dev), SALVO_OK);
    salvo_stats s;
    assert_int_equal(salvo_device_stats(f->dev, &s), SALVO_OK);
    return s.live_buffers;
}

/* A graph holds what its nodes bind now, no more: a refused update takes
 * nothing of the other graph, and a buffer a node is rebound away from is
 * let go of (pending replays keep it until they end). Replays after the
 * rebinding do not use it: a host write of it does not wait for one held
 * behind a gate (it once waited for the raise). */
static void test_holds_follow_the_nodes(void **state)
{
    fixture *f = *state;
    salvo_buffer *a = filled(f, 0, SALVO_DOMAIN_DEVICE), *b = filled(f, 0, SALVO_DOMAIN_DEVICE);
    salvo_buffer *c = filled(f, 0, SALVO_DOMAIN_DEVICE);
    salvo_graph *g = NULL, *other = NULL;
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    add(f, f->st, a, 1);
    assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_OK);
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    add(f, f->st, b, 1);
    add(f, f->st, b, 1);
    assert_int_equal(salvo_stream_end_capture(f->st, &other), SALVO_OK);
    assert_int_equal(salvo_graph_update(g, other), SALVO_ERROR_INVALID_ARGUMENT);
    salvo_graph_destroy(other);
    salvo_buffer_destroy(b);
    assert_int_equal(live_buffers(f), 2); /* b is gone: g took nothing of other's */

    /* a, replayed, then rebound away from while that replay is pending. */
    assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
    salvo_binding to_c = {.binding = 0, .buffer = c};
    assert_int_equal(salvo_graph_set_bindings(g, 0, &to_c, 1), SALVO_OK);
    salvo_buffer_destroy(a); /* the pending replay still adds to it */
    assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    assert_int_equal(live_buffers(f), 1); /* a is gone once the replay ended */
    expect(c, 1);

    /* Rebound back and forth: one hold each, nothing piles up. */
    salvo_buffer *d = filled(f, 0, SALVO_DOMAIN_DEVICE);
    for (int r = 0; r < 8; r++) {
        salvo_binding to = {.binding = 0, .buffer = r % 2 ? c : d};
        assert_int_equal(salvo_graph_set_bindings(g, 0, &to, 1), SALVO_OK);
        assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
    }
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    expect(c, 5);
    expect(d, 4);
    salvo_buffer_destroy(d);
    assert_int_equal(live_buffers(f), 1); /* g binds c now: d is gone */

    if (f->info.timeline_semaphores) {
        salvo_buffer *e = filled(f, 0, SALVO_DOMAIN_DEVICE);
        to_c.buffer = e;
        assert_int_equal(salvo_graph_set_bindings(g, 0, &to_c, 1), SALVO_OK);
        to_c.buffer = c;
        assert_int_equal(salvo_graph_set_bindings(g, 0, &to_c, 1), SALVO_OK);
        late_raise l = {.raised = false};
        assert_int_equal(salvo_gate_create(f->dev, &l.gate), SALVO_OK);
        assert_int_equal(salvo_stream_wait_gate(f->st, l.gate, 1), SALVO_OK);
        assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
        assert_int_equal(salvo_stream_flush(f->st), SALVO_OK);
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, raise_after_500ms, &l), 0);
        uint32_t v[N] = {0};
        assert_int_equal(salvo_buffer_write(e, 0, v, sizeof v), SALVO_OK);
        bool waited = atomic_load(&l.raised);
        pthread_join(t, NULL);
        assert_false(waited); /* the gated replay binds c, not e */
        assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
        expect(c, 6);
        salvo_gate_destroy(l.gate);
        salvo_buffer_destroy(e);
    }
    salvo_graph_destroy(g);
    salvo_buffer_destroy(c);
    assert_int_equal(live_buffers(f), 0);
}

/* A replay that is a batch's whole work (its recording made ahead) and
 * touches more buffers than the batch's hazard set holds (64): work after
 * it in the batch that reads what it wrote gets a barrier after it. It
 * once got none (the set, overflowed, was emptied, and the replay was
 * recorded into the batch only later). Counted: such a batch takes as
 * many barriers as the same with a replay of 10 buffers. */
static void test_wide_replay_ahead_orders_what_follows(void **state)
{
    enum { WIDE = 70 };
    fixture *outer = *state;
    /* A device of its own with large batches: the replay and the launch
     * after it share one. */
    fixture own = *outer, *f = &own;
    f->dev = lava_open(SALVO_DEVICE_SYNC_VALIDATION, 1000);
    f->add = lava_add_kernel(f->dev);
    salvo_stream *st = NULL;
    salvo_stream_desc sd = {.first_batch = 1000};
    assert_int_equal(salvo_stream_create(f->dev, &sd, &st), SALVO_OK);
    salvo_buffer *b[WIDE];
    for (int i = 0; i < WIDE; i++)
        b[i] = filled(f, 0, SALVO_DOMAIN_DEVICE);
    const int widths[2] = {10, WIDE};
    uint64_t added[2];
    for (int w = 0; w < 2; w++) {
        salvo_graph *g = NULL;
        assert_int_equal(salvo_stream_begin_capture(st), SALVO_OK);
        for (int i = 0; i < widths[w]; i++)
            add(f, st, b[i], 1);
        assert_int_equal(salvo_stream_end_capture(st, &g), SALVO_OK);
        for (int r = 0; r < 3; r++) { /* made ahead from here on */
            assert_int_equal(salvo_graph_launch(g, st), SALVO_OK);
            assert_int_equal(salvo_stream_synchronize(st), SALVO_OK);
        }
        salvo_stats s0, s1;
        assert_int_equal(salvo_device_stats(f->dev, &s0), SALVO_OK);
        assert_int_equal(salvo_graph_launch(g, st), SALVO_OK);
        assert_int_equal(salvo_device_stats(f->dev, &s1), SALVO_OK);
        assert_int_equal(s1.replays_ahead, s0.replays_ahead + 1);
        add(f, st, b[0], 100); /* reads and writes what the replay wrote */
        assert_int_equal(salvo_stream_synchronize(st), SALVO_OK);
        assert_int_equal(salvo_device_stats(f->dev, &s1), SALVO_OK);
        added[w] = s1.barriers_emitted - s0.barriers_emitted;
        salvo_graph_destroy(g);
    }
    assert_int_equal(added[1], added[0]);
    expect(b[0], 208);
    expect(b[WIDE - 1], 4);
    for (int i = 0; i < WIDE; i++)
        salvo_buffer_destroy(b[i]);
    salvo_stream_destroy(st);
    salvo_kernel_destroy(f->add);
    lava_close(f->dev);
}

/* What a capture refuses, with the capture going on; a stream destroyed
 * mid-capture leaves no graph and holds nothing. */
/* On a capturing stream, a wait for an event that marks the stream's own
 * earlier work, not complete, is refused as one of another stream's is:
 * the graph is replayed on any stream, where nothing orders it after that
 * work (it was once taken as no wait, SALVO_OK). */
static void test_own_event_outside_the_capture(void **state)
{
    fixture *f = *state;
    if (!f->info.timeline_semaphores)
        skip();
    salvo_buffer *a = filled(f, 0, SALVO_DOMAIN_DEVICE);
    salvo_gate *gate = NULL;
    salvo_event *ev = NULL;
    assert_int_equal(salvo_gate_create(f->dev, &gate), SALVO_OK);
    assert_int_equal(salvo_event_create(f->dev, &ev), SALVO_OK);
    assert_int_equal(salvo_stream_wait_gate(f->st, gate, 1), SALVO_OK);
    add(f, f->st, a, 1);
    assert_int_equal(salvo_event_record(ev, f->st), SALVO_OK);
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    salvo_status waited = salvo_stream_wait_event(f->st, ev);
    add(f, f->st, a, 10);
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_OK);
    assert_int_equal(salvo_gate_raise(gate, 1), SALVO_OK); /* first: a failure must not hang */
    assert_int_equal(waited, SALVO_ERROR_INVALID_STATE);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    assert_int_equal(salvo_stream_wait_event(f->st2, ev), SALVO_OK); /* complete: fine */
    assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    expect(a, 11);
    salvo_graph_destroy(g);
    salvo_event_destroy(ev);
    salvo_gate_destroy(gate);
    salvo_buffer_destroy(a);
}

static void test_refused_during_capture(void **state)
{
    fixture *f = *state;
    salvo_buffer *a = filled(f, 0, SALVO_DOMAIN_DEVICE), *other = filled(f, 9, SALVO_DOMAIN_DEVICE);
    salvo_graph *g = NULL, *first = NULL;
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    add(f, f->st, a, 1);
    assert_int_equal(salvo_stream_end_capture(f->st, &first), SALVO_OK);
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_ERROR_INVALID_STATE);
    add(f, f->st, a, 1);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_ERROR_INVALID_STATE);
    assert_non_null(strstr(salvo_last_error(), "capturing"));
    uint32_t v[N];
    assert_int_equal(salvo_buffer_read(a, 0, v, sizeof v), SALVO_ERROR_INVALID_STATE);
    expect(other, 9); /* a buffer the capture does not write reads fine */
    assert_int_equal(salvo_graph_launch(first, f->st), SALVO_ERROR_INVALID_STATE);
    assert_int_equal(salvo_stream_flush(f->st), SALVO_OK);
    if (f->info.timeline_semaphores) {
        salvo_gate *gate = NULL;
        assert_int_equal(salvo_gate_create(f->dev, &gate), SALVO_OK);
        assert_int_equal(salvo_stream_wait_gate(f->st, gate, 1), SALVO_ERROR_INVALID_STATE);
        salvo_gate_destroy(gate);
    }
    /* Work outside the capture not complete: no wait on it. */
    salvo_event *ev = NULL;
    assert_int_equal(salvo_event_create(f->dev, &ev), SALVO_OK);
    add(f, f->st2, other, 1);
    assert_int_equal(salvo_event_record(ev, f->st2), SALVO_OK);
    assert_int_equal(salvo_stream_wait_event(f->st, ev), SALVO_ERROR_INVALID_STATE);
    assert_int_equal(salvo_stream_synchronize(f->st2), SALVO_OK);
    assert_int_equal(salvo_stream_wait_event(f->st, ev), SALVO_OK); /* complete: no wait */
    add(f, f->st, a, 1);
    assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_OK);
    assert_int_equal(salvo_graph_node_count(g), 2);
    salvo_graph *none = g;
    assert_int_equal(salvo_stream_end_capture(f->st, &none), SALVO_ERROR_INVALID_STATE);
    assert_null(none);
    assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
    assert_int_equal(salvo_graph_launch(first, f->st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    expect(a, 3);
    /* The stream that began a capture goes: no graph is left. */
    salvo_stream *tmp = NULL;
    assert_int_equal(salvo_stream_create(f->dev, NULL, &tmp), SALVO_OK);
    assert_int_equal(salvo_stream_begin_capture(tmp), SALVO_OK);
    add(f, tmp, other, 1);
    salvo_stream_destroy(tmp);
    salvo_stats s;
    assert_int_equal(salvo_device_stats(f->dev, &s), SALVO_OK);
    assert_int_equal(s.live_graphs, 2);
    expect(other, 10);
    salvo_event_destroy(ev);
    salvo_graph_destroy(g);
    salvo_graph_destroy(first);
    salvo_buffer_destroy(a);
    salvo_buffer_destroy(other);
}

/* Bad arguments get clear statuses. */
static void test_bad_arguments(void **state)
{
    fixture *f = *state;
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_begin_capture(NULL), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_stream_end_capture(f->st, NULL), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_ERROR_INVALID_STATE);
    assert_int_equal(salvo_graph_launch(NULL, f->st), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_graph_set_push(NULL, 0, NULL, 0), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_graph_node_count(NULL), 0);
    salvo_graph_destroy(NULL);
    /* An empty graph replays as nothing; a copy node takes no updates. */
    salvo_buffer *a = filled(f, 1, SALVO_DOMAIN_DEVICE), *b = filled(f, 2, SALVO_DOMAIN_DEVICE);
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_OK);
    assert_int_equal(salvo_graph_node_count(g), 0);
    assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
    assert_int_equal(salvo_graph_launch(g, NULL), SALVO_ERROR_INVALID_ARGUMENT);
    salvo_graph_destroy(g);
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    assert_int_equal(salvo_copy(f->st, a, 0, b, 0, N * 4), SALVO_OK);
    assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_OK);
    push2 p = {N, 1};
    assert_int_equal(salvo_graph_set_push(g, 0, &p, sizeof p), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    expect(b, 1);
    salvo_graph_destroy(g);
    salvo_buffer_destroy(a);
    salvo_buffer_destroy(b);
}

int main(void)
{
    lava_require_device();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_replay_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_barriers_only_between_levels, setup, teardown),
        cmocka_unit_test_setup_teardown(test_updates_later_replays_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_update_mid_graph, setup, teardown),
        cmocka_unit_test_setup_teardown(test_graph_update, setup, teardown),
        cmocka_unit_test_setup_teardown(test_graph_update_without_parameters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fork_join, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replays_pending_on_two_streams, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pending_replay_keeps_its_recording, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replay_ahead, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lifetimes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_holds_follow_the_nodes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wide_replay_ahead_orders_what_follows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_during_capture, setup, teardown),
        cmocka_unit_test_setup_teardown(test_own_event_outside_the_capture, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_arguments, setup, teardown),
    };
    return lava_run_tests(tests);
}
