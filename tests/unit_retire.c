/*
 * The retire queue on a scripted clock: the test is the owner that decides
 * the floor, so every rule (tag against floor, FIFO order, nesting,
 * abandon, close, the lock-free incoming stack, the counters) is checked
 * at exact points rather than through a device.
 */
#define _POSIX_C_SOURCE 200809L /* pthreads */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>
#include <sched.h>

#include "core/retire.h"

enum {
    MAX_ENTRIES = 64
};

/* One release, and what happened to it. */
typedef struct test_entry {
    retire_entry e; /* first, so the callback can recover the entry */
    int id;
    int runs;
    bool abandoned;
    /* Pushed from inside this entry's run, to test nesting. */
    struct test_entry *push_on_run;
    uint64_t push_tag;
    bool push_incoming;
} test_entry;

typedef struct fixture {
    retire_queue q;
    salvo_log_sink sink;
    int warnings;
    char last_warning[SALVO_ERROR_MAX];
    test_entry entries[MAX_ENTRIES];
    int order[MAX_ENTRIES * 2]; /* ids in the order they ran */
    int ran;
} fixture;

/* The callback has no user pointer: the fixture of the running test. */
static fixture *current;

static void on_log(void *user, salvo_log_level level, const char *file, int line,
                   const char *message)
{
    (void)file;
    (void)line;
    fixture *fx = user;
    if (level == SALVO_LOG_WARNING) {
        fx->warnings++;
        snprintf(fx->last_warning, sizeof fx->last_warning, "%s", message);
    }
}

static void on_run(retire_entry *e, bool abandoned)
{
    test_entry *t = (test_entry *)((char *)e - offsetof(test_entry, e));
    t->runs++;
    t->abandoned = abandoned;
    assert_true(current->ran < (int)(sizeof current->order / sizeof current->order[0]));
    current->order[current->ran++] = t->id;
    if (t->push_on_run) {
        if (t->push_incoming)
            retire_push_incoming(&current->q, &t->push_on_run->e, t->push_tag);
        else
            retire_push(&current->q, &t->push_on_run->e, t->push_tag);
    }
}

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    fx->sink = (salvo_log_sink){on_log, fx};
    retire_init(&fx->q, &fx->sink);
    for (int i = 0; i < MAX_ENTRIES; i++) {
        fx->entries[i].id = i;
        fx->entries[i].e.fn = on_run;
    }
    current = fx;
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    free(*state);
    current = NULL;
    return 0;
}

static test_entry *entry(fixture *fx, int id, uint64_t bytes)
{
    test_entry *t = &fx->entries[id];
    t->e.bytes = bytes;
    return t;
}

static void push(fixture *fx, int id, uint64_t tag)
{
    retire_push(&fx->q, &entry(fx, id, 0)->e, tag);
}

static void expect_order(const fixture *fx, const int *ids, int n)
{
    assert_int_equal(fx->ran, n);
    for (int i = 0; i < n; i++)
        if (fx->order[i] != ids[i])
            fail_msg("run %d was entry %d, expected entry %d", i, fx->order[i], ids[i]);
}

/* ------------------------------------------------------------------ */

static void test_runs_exactly_when_floor_reaches_tag(void **state)
{
    fixture *fx = *state;
    push(fx, 0, 5);
    push(fx, 1, 3);
    push(fx, 2, 7);

    /* Below every tag: nothing may run, however often it is asked. */
    assert_int_equal(retire_run(&fx->q, 0), 0);
    assert_int_equal(retire_run(&fx->q, 2), 0);
    assert_int_equal(retire_run(&fx->q, 2), 0);
    assert_int_equal(fx->ran, 0);
    assert_int_equal(retire_pending(&fx->q), 3);

    assert_int_equal(retire_run(&fx->q, 3), 1);
    assert_int_equal(fx->entries[1].runs, 1);
    assert_int_equal(fx->entries[0].runs + fx->entries[2].runs, 0);

    assert_int_equal(retire_run(&fx->q, 4), 0);
    assert_int_equal(retire_run(&fx->q, 6), 1);
    assert_int_equal(fx->entries[0].runs, 1);
    assert_int_equal(fx->entries[2].runs, 0);

    assert_int_equal(retire_run(&fx->q, 7), 1);
    const int order[] = {1, 0, 2};
    expect_order(fx, order, 3);

    /* Each ran once, none as abandoned, and the floor going on runs nothing more. */
    assert_int_equal(retire_run(&fx->q, 100), 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(fx->entries[i].runs, 1);
        assert_false(fx->entries[i].abandoned);
    }
    assert_int_equal(retire_pending(&fx->q), 0);
    assert_int_equal(atomic_load(&fx->q.run_total), 3);
    assert_int_equal(atomic_load(&fx->q.abandoned_total), 0);
}

static void test_fifo_order_is_kept(void **state)
{
    fixture *fx = *state;
    /* Tags out of order: the ones that are due run in push order, the
     * others keep their place for a later run. */
    push(fx, 0, 1);
    push(fx, 1, 3);
    push(fx, 2, 1);
    push(fx, 3, 2);
    push(fx, 4, 9);
    push(fx, 5, 2);
    assert_int_equal(retire_run(&fx->q, 2), 4);
    const int first[] = {0, 2, 3, 5};
    expect_order(fx, first, 4);

    push(fx, 6, 3);
    assert_int_equal(retire_run(&fx->q, 9), 3);
    const int all[] = {0, 2, 3, 5, 1, 4, 6};
    expect_order(fx, all, 7);
}

static void test_many_same_tag_in_order(void **state)
{
    fixture *fx = *state;
    for (int i = 0; i < 40; i++)
        push(fx, i, 4);
    assert_int_equal(retire_run(&fx->q, 3), 0);
    assert_int_equal(retire_run(&fx->q, 4), 40);
    for (int i = 0; i < 40; i++)
        assert_int_equal(fx->order[i], i);
}

static void test_drain_runs_everything_and_nested_pushes(void **state)
{
    fixture *fx = *state;
    /* 0 pushes 1 (far future) to the queue, 1 pushes 2 to the incoming
     * stack, 3 is plain: drain must run all four, the nested ones after
     * what was queued before them. */
    entry(fx, 0, 0)->push_on_run = &fx->entries[1];
    fx->entries[0].push_tag = 1000;
    fx->entries[1].push_on_run = &fx->entries[2];
    fx->entries[1].push_tag = 2000;
    fx->entries[1].push_incoming = true;
    push(fx, 0, 50);
    push(fx, 3, 60);

    assert_int_equal(retire_drain(&fx->q), 4);
    const int order[] = {0, 3, 1, 2};
    expect_order(fx, order, 4);
    assert_int_equal(retire_pending(&fx->q), 0);
    assert_int_equal(atomic_load(&fx->q.bytes), 0);
    assert_int_equal(atomic_load(&fx->q.run_total), 4);
    assert_null(fx->q.head);
    assert_null(fx->q.tail);
    /* The queue is still usable after a drain. */
    push(fx, 4, 1);
    assert_int_equal(retire_run(&fx->q, 1), 1);
    assert_int_equal(fx->entries[4].runs, 1);
}

static void test_run_nested_push_obeys_floor(void **state)
{
    fixture *fx = *state;
    /* A release that frees another: due now runs in the same call, not
     * due stays queued. */
    entry(fx, 0, 0)->push_on_run = &fx->entries[1];
    fx->entries[0].push_tag = 2;
    entry(fx, 2, 0)->push_on_run = &fx->entries[3];
    fx->entries[2].push_tag = 9;
    push(fx, 0, 1);
    push(fx, 2, 1);

    assert_int_equal(retire_run(&fx->q, 5), 3);
    const int order[] = {0, 2, 1};
    expect_order(fx, order, 3);
    assert_int_equal(fx->entries[3].runs, 0);
    assert_int_equal(retire_pending(&fx->q), 1);

    assert_int_equal(retire_run(&fx->q, 9), 1);
    assert_int_equal(fx->entries[3].runs, 1);
    assert_int_equal(retire_pending(&fx->q), 0);
}

static void test_nested_push_when_last_entry_runs(void **state)
{
    fixture *fx = *state;
    /* The entry that runs is the tail, with a not-due entry before it:
     * the nested push must land after the survivor and still be seen. */
    push(fx, 0, 10);
    entry(fx, 1, 0)->push_on_run = &fx->entries[2];
    fx->entries[1].push_tag = 1;
    push(fx, 1, 1);

    assert_int_equal(retire_run(&fx->q, 1), 2);
    const int order[] = {1, 2};
    expect_order(fx, order, 2);
    assert_ptr_equal(fx->q.head, &fx->entries[0].e);
    assert_ptr_equal(fx->q.tail, &fx->entries[0].e);
    push(fx, 3, 1);
    assert_ptr_equal(fx->q.tail, &fx->entries[3].e);
    assert_int_equal(retire_run(&fx->q, 10), 2);
    const int all[] = {1, 2, 0, 3};
    expect_order(fx, all, 4);
}

static void test_abandon_passes_abandoned(void **state)
{
    fixture *fx = *state;
    push(fx, 0, 1);
    assert_int_equal(retire_run(&fx->q, 1), 1); /* one ordinary run first */
    retire_push(&fx->q, &entry(fx, 1, 100)->e, 5);
    retire_push(&fx->q, &entry(fx, 2, 200)->e, 1000);
    retire_push_incoming(&fx->q, &entry(fx, 3, 300)->e, 7);
    entry(fx, 2, 200)->push_on_run = &fx->entries[4];
    fx->entries[2].push_tag = 2000;

    assert_int_equal(retire_abandon(&fx->q), 4);
    for (int i = 1; i <= 4; i++) {
        assert_int_equal(fx->entries[i].runs, 1);
        assert_true(fx->entries[i].abandoned);
    }
    assert_false(fx->entries[0].abandoned);
    assert_int_equal(atomic_load(&fx->q.abandoned_total), 4);
    assert_int_equal(atomic_load(&fx->q.run_total), 1);
    assert_int_equal(retire_pending(&fx->q), 0);
    assert_int_equal(atomic_load(&fx->q.bytes), 0);
}

static void test_closed_queue_drops_pushes(void **state)
{
    fixture *fx = *state;
    push(fx, 0, 1);
    assert_int_equal(retire_drain(&fx->q), 1);
    retire_close(&fx->q);

    retire_push(&fx->q, &entry(fx, 1, 64)->e, 1);
    assert_int_equal(fx->warnings, 1);
    assert_non_null(strstr(fx->last_warning, "dropped"));
    assert_int_equal(retire_pending(&fx->q), 0);
    assert_int_equal(atomic_load(&fx->q.bytes), 0);
    assert_int_equal(retire_run(&fx->q, 100), 0);
    assert_int_equal(retire_drain(&fx->q), 0);
    assert_int_equal(fx->entries[1].runs, 0);
    assert_int_equal(atomic_load(&fx->q.run_total), 1);
}

static void test_closed_queue_drops_incoming_pushes(void **state)
{
    fixture *fx = *state;
    retire_close(&fx->q);
    /* The lock-free path is a push too: after close it must not be
     * counted, and no later drain may run it. */
    retire_push_incoming(&fx->q, &entry(fx, 0, 64)->e, 1);
    assert_int_equal(retire_pending(&fx->q), 0);
    assert_int_equal(atomic_load(&fx->q.bytes), 0);
    assert_int_equal(retire_drain(&fx->q), 0);
    assert_int_equal(fx->entries[0].runs, 0);
    assert_int_equal(fx->warnings, 1);
}

static void test_incoming_collected_in_order(void **state)
{
    fixture *fx = *state;
    push(fx, 0, 1);
    for (int i = 1; i <= 5; i++)
        retire_push_incoming(&fx->q, &entry(fx, i, (uint64_t)i)->e, 1);
    /* Counted at once, so the bounds see them before any collect. */
    assert_int_equal(retire_pending(&fx->q), 6);
    assert_int_equal(atomic_load(&fx->q.bytes), 15);

    retire_collect(&fx->q);
    assert_int_equal(retire_pending(&fx->q), 6); /* not counted twice */
    assert_int_equal(atomic_load(&fx->q.bytes), 15);
    int expect_ids[] = {0, 1, 2, 3, 4, 5};
    int i = 0;
    for (retire_entry *e = fx->q.head; e; e = e->next, i++) {
        assert_true(i < 6);
        assert_ptr_equal(e, &fx->entries[expect_ids[i]].e);
    }
    assert_int_equal(i, 6);
    assert_ptr_equal(fx->q.tail, &fx->entries[5].e);

    assert_int_equal(retire_run(&fx->q, 1), 6);
    expect_order(fx, expect_ids, 6);
}

static void test_run_collects_incoming(void **state)
{
    fixture *fx = *state;
    /* A run without an explicit collect still sees the lock-free pushes. */
    retire_push_incoming(&fx->q, &entry(fx, 0, 0)->e, 2);
    retire_push_incoming(&fx->q, &entry(fx, 1, 0)->e, 3);
    assert_int_equal(retire_run(&fx->q, 2), 1);
    assert_int_equal(fx->entries[0].runs, 1);
    assert_int_equal(fx->entries[1].runs, 0);
    assert_int_equal(retire_pending(&fx->q), 1);
    assert_int_equal(retire_run(&fx->q, 3), 1);
    assert_int_equal(retire_pending(&fx->q), 0);
}

static void test_counters_track_pushes_and_runs(void **state)
{
    fixture *fx = *state;
    retire_push(&fx->q, &entry(fx, 0, 100)->e, 1);
    retire_push(&fx->q, &entry(fx, 1, 200)->e, 2);
    retire_push(&fx->q, &entry(fx, 2, 0)->e, 3);
    assert_int_equal(retire_pending(&fx->q), 3);
    assert_int_equal(atomic_load(&fx->q.bytes), 300);

    assert_int_equal(retire_run(&fx->q, 1), 1);
    assert_int_equal(retire_pending(&fx->q), 2);
    assert_int_equal(atomic_load(&fx->q.bytes), 200);
    assert_int_equal(atomic_load(&fx->q.run_total), 1);

    assert_int_equal(retire_run(&fx->q, 3), 2);
    assert_int_equal(retire_pending(&fx->q), 0);
    assert_int_equal(atomic_load(&fx->q.bytes), 0);
    assert_int_equal(atomic_load(&fx->q.run_total), 3);
    assert_int_equal(atomic_load(&fx->q.abandoned_total), 0);
}

/* ------------------------------------------------------------------ */
/* The incoming stack under contention                                 */
/* ------------------------------------------------------------------ */

enum {
    THREADS = 4,
    PER_THREAD = 2000
};

typedef struct thread_entry {
    retire_entry e;
    int thread, seq;
} thread_entry;

typedef struct pusher {
    retire_queue *q;
    thread_entry *entries;
    int thread;
    pthread_barrier_t *start; /* the pushers and the owner set off together */
    atomic_int *done;         /* pushers finished */
    /* The owner's collects (retire_run calls): begun, and the number of
     * the last one finished. */
    atomic_uint_fast64_t *begun, *finished;
} pusher;

/* Each pusher pushes CHUNK releases at a time, then waits for a collect
 * begun after them to finish, so that collects and pushes interleave
 * whatever the scheduler does (the other pushers push meanwhile). */
enum { CHUNK = 100 };
_Static_assert(PER_THREAD % CHUNK == 0, "whole chunks");

static void *push_many(void *arg)
{
    pusher *p = arg;
    pthread_barrier_wait(p->start);
    for (int i = 0; i < PER_THREAD; i++) {
        thread_entry *t = &p->entries[p->thread * PER_THREAD + i];
        t->thread = p->thread;
        t->seq = i;
        t->e.bytes = 1;
        retire_push_incoming(p->q, &t->e, 1);
        if ((i + 1) % CHUNK == 0) {
            uint64_t want = atomic_load(p->begun) + 1;
            while (atomic_load(p->finished) < want)
                sched_yield();
        }
    }
    atomic_fetch_add(p->done, 1);
    return NULL;
}

static int last_seq[THREADS];
static int contention_runs;

static void on_thread_entry(retire_entry *e, bool abandoned)
{
    assert_false(abandoned);
    thread_entry *t = (thread_entry *)((char *)e - offsetof(thread_entry, e));
    /* Each thread's releases run in the order that thread made them. */
    assert_true(t->seq == last_seq[t->thread] + 1);
    last_seq[t->thread] = t->seq;
    contention_runs++;
}

static void test_incoming_under_contention(void **state)
{
    fixture *fx = *state;
    thread_entry *entries = calloc(THREADS * PER_THREAD, sizeof *entries);
    assert_non_null(entries);
    for (int i = 0; i < THREADS * PER_THREAD; i++)
        entries[i].e.fn = on_thread_entry;
    pusher pushers[THREADS];
    pthread_t threads[THREADS];
    pthread_barrier_t start;
    atomic_int done;
    atomic_uint_fast64_t begun, finished;
    atomic_init(&done, 0);
    atomic_init(&begun, 0);
    atomic_init(&finished, 0);
    assert_int_equal(pthread_barrier_init(&start, NULL, THREADS + 1), 0);
    for (int t = 0; t < THREADS; t++) {
        last_seq[t] = -1;
        pushers[t] = (pusher){&fx->q, entries, t, &start, &done, &begun, &finished};
        assert_int_equal(pthread_create(&threads[t], NULL, push_many, &pushers[t]), 0);
    }
    /* The owner collects while the pushers run, as a device would: from
     * the moment they start until every one of them is done. */
    pthread_barrier_wait(&start);
    uint64_t ran = 0;
    while (atomic_load(&done) < THREADS) {
        uint64_t n = atomic_fetch_add(&begun, 1) + 1;
        ran += retire_run(&fx->q, 1);
        atomic_store(&finished, n);
    }
    for (int t = 0; t < THREADS; t++)
        assert_int_equal(pthread_join(threads[t], NULL), 0);
    assert_int_equal(pthread_barrier_destroy(&start), 0);
    /* Every chunk was collected before its pusher went on: all of it ran
     * while the pushers ran, in at least a chunk's worth of collects. */
    assert_int_equal(ran, THREADS * PER_THREAD);
    assert_true(atomic_load(&begun) >= PER_THREAD / CHUNK);
    assert_int_equal(retire_run(&fx->q, 1), 0);

    assert_int_equal(contention_runs, THREADS * PER_THREAD);
    for (int t = 0; t < THREADS; t++)
        assert_int_equal(last_seq[t], PER_THREAD - 1);
    assert_int_equal(retire_pending(&fx->q), 0);
    assert_int_equal(atomic_load(&fx->q.bytes), 0);
    free(entries);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_runs_exactly_when_floor_reaches_tag, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fifo_order_is_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_same_tag_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drain_runs_everything_and_nested_pushes, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_run_nested_push_obeys_floor, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nested_push_when_last_entry_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abandon_passes_abandoned, setup, teardown),
        cmocka_unit_test_setup_teardown(test_closed_queue_drops_pushes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_closed_queue_drops_incoming_pushes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_incoming_collected_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_collects_incoming, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counters_track_pushes_and_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_incoming_under_contention, setup, teardown),
    };
    return cmocka_run_group_tests_name("retire", tests, NULL, NULL);
}
