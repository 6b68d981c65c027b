/* salvo_stream_write, salvo_stream_read and salvo_stream_host_call on a
 * real device under the validation layer: stream order against launches
 * (small and large transfers, either side of the staging threshold), host
 * calls after earlier work and before later work (held by gates where
 * timing matters), several streams, destroys with calls pending, calls
 * refused inside a host call, bad input. Synchronization validation on. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "salvo/salvo.h"
#include "support/lava.h"

typedef lava_fixture fixture;

/* The validation layer on, synchronization validation too: the suite is
 * about order (host calls and transfers against kernels), which is what
 * synchronization validation checks. */
static int setup(void **state)
{
    lava_setup(state);
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(((fixture *)*state)->dev, &info), SALVO_OK);
    assert_int_equal(info.validation, 2);
    return 0;
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* write -> kernel -> read, in one stream, for sizes on both sides of the
 * 64 KiB threshold; src is changed right after the call (copied at the
 * call), dst only read after synchronize. */
static void write_kernel_read(void **state)
{
    fixture *f = *state;
    const uint32_t sizes[] = {1, 64, 16384, 16385, 300000};
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
        uint32_t n = sizes[t];
        uint32_t *src = malloc(n * 4ull), *dst = malloc(n * 4ull);
        salvo_buffer *b = NULL;
        assert_int_equal(salvo_buffer_create(f->dev, n * 4ull, SALVO_DOMAIN_DEVICE, &b), SALVO_OK);
        for (uint32_t i = 0; i < n; i++)
            src[i] = i * 3 + (uint32_t)t;
        memset(dst, 0xee, n * 4ull);
        assert_int_equal(salvo_stream_write(f->st, b, 0, src, n * 4ull), SALVO_OK);
        memset(src, 0x55, n * 4ull); /* copied at the call */
        lava_add(f->st, f->add, b, 0, n, 7);
        assert_int_equal(salvo_stream_read(f->st, b, 0, dst, n * 4ull), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
        for (uint32_t i = 0; i < n; i++)
            if (dst[i] != i * 3 + (uint32_t)t + 7)
                fail_msg("n %u: dst[%u] = %u", n, i, dst[i]);
        salvo_buffer_destroy(b);
        free(src);
        free(dst);
    }
}

/* Many small writes at offsets: more than one staging block; a read of a
 * middle range; an event after the read says dst is filled. */
static void many_small_writes(void **state)
{
    fixture *f = *state;
    enum { PIECE = 15000, PIECES = 80 }; /* 60000 bytes each: 4.8 MB in all */
    salvo_buffer *b = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, 4ull * PIECE * PIECES, SALVO_DOMAIN_SHARED, &b),
                     SALVO_OK);
    uint32_t *piece = malloc(4 * PIECE);
    for (uint32_t p = 0; p < PIECES; p++) {
        for (uint32_t i = 0; i < PIECE; i++)
            piece[i] = p * 100000 + i;
        assert_int_equal(salvo_stream_write(f->st, b, 4ull * PIECE * p, piece, 4 * PIECE), SALVO_OK);
    }
    lava_add(f->st, f->add, b, PIECE, PIECE * 2, 1);
    uint32_t *got = malloc(4 * PIECE * 3);
    assert_int_equal(salvo_stream_read(f->st, b, 4ull * PIECE * 1 - 8, got, 4 * PIECE * 3), SALVO_OK);
    salvo_event *ev = NULL;
    assert_int_equal(salvo_event_create(f->dev, &ev), SALVO_OK);
    assert_int_equal(salvo_event_record(ev, f->st), SALVO_OK);
    assert_int_equal(salvo_event_synchronize(ev), SALVO_OK);
    for (uint32_t j = 0; j < PIECE * 3; j++) {
        uint32_t i = PIECE - 2 + j;
        uint32_t p = i / PIECE, want = p * 100000 + i % PIECE + (i >= PIECE && i < 3 * PIECE);
        if (got[j] != want)
            fail_msg("got[%u] = %u, want %u", j, got[j], want);
    }
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    salvo_event_destroy(ev);
    salvo_buffer_destroy(b);
    free(piece);
    free(got);
}

typedef struct probe {
    uint32_t *mapped;
    _Atomic int runs;
    uint32_t seen;
    salvo_stream *st;
    salvo_device *dev;
    salvo_buffer *buf;
    salvo_status refused[8];
    int order[8];
    _Atomic int next;
    int tag;
    /* Set just before the test raises the gate that holds fn back; fn
     * counts the runs that found it down (runs too early, whenever they
     * came: no nap decides it). */
    _Atomic bool gate_up;
    _Atomic int early;
} probe;

/* What fn notes of the gate when it runs. */
static void note_gate(probe *p)
{
    if (!atomic_load(&p->gate_up))
        atomic_fetch_add(&p->early, 1);
}

/* Reads what the earlier kernel wrote, writes what the later one adds to. */
static void see_and_set(void *user)
{
    probe *p = user;
    note_gate(p);
    p->seen = p->mapped[0];
    p->mapped[4] = 100;
    atomic_fetch_add(&p->runs, 1);
}

static void host_call_between_kernels(void **state)
{
    fixture *f = *state;
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(f->dev, &info), SALVO_OK);
    salvo_buffer *h = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, 256, SALVO_DOMAIN_HOST, &h), SALVO_OK);
    probe p = {0};
    assert_int_equal(salvo_buffer_map(h, (void **)&p.mapped), SALVO_OK);
    memset(p.mapped, 0, 256);
    salvo_gate *g = NULL;
    if (info.timeline_semaphores) {
        assert_int_equal(salvo_gate_create(f->dev, &g), SALVO_OK);
        assert_int_equal(salvo_stream_wait_gate(f->st, g, 1), SALVO_OK);
    }
    lava_add(f->st, f->add, h, 0, 1, 5);
    assert_int_equal(salvo_stream_host_call(f->st, see_and_set, &p), SALVO_OK);
    lava_add(f->st, f->add, h, 4, 1, 1);
    if (g) {
        /* The work before it is held: fn has not run. */
        assert_int_equal(salvo_stream_flush(f->st), SALVO_OK);
        nap_ms(30);
        assert_int_equal(atomic_load(&p.runs), 0);
        atomic_store(&p.gate_up, true);
        assert_int_equal(salvo_gate_raise(g, 1), SALVO_OK);
    } else {
        atomic_store(&p.gate_up, true);
    }
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    assert_int_equal(atomic_load(&p.early), 0);
    assert_int_equal(atomic_load(&p.runs), 1);
    assert_int_equal(p.seen, 5);
    assert_int_equal(p.mapped[4], 101); /* the later kernel saw fn's write */
    salvo_gate_destroy(g);
    salvo_buffer_destroy(h);
}

static void note_order(void *user)
{
    probe *p = user;
    p->order[atomic_fetch_add(&p->next, 1) % 8] = p->tag;
}

typedef struct tagged {
    probe *p;
    int tag;
} tagged;

static void note_tag(void *user)
{
    tagged *t = user;
    t->p->order[atomic_fetch_add(&t->p->next, 1) % 8] = t->tag;
}

/* Two streams, each with calls: every call runs once, in order within its
 * stream; a host call on an idle stream runs too. */
static void several_streams(void **state)
{
    fixture *f = *state;
    salvo_stream *b = NULL;
    assert_int_equal(salvo_stream_create(f->dev, NULL, &b), SALVO_OK);
    salvo_buffer *x = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, 4096, SALVO_DOMAIN_DEVICE, &x), SALVO_OK);
    probe p = {0};
    tagged t[6];
    for (int i = 0; i < 6; i++) {
        t[i] = (tagged){&p, i};
        salvo_stream *s = i % 2 ? b : f->st;
        if (i >= 2)
            lava_add(s, f->add, x, (uint32_t)(i % 2) * 512, 512, 1);
        assert_int_equal(salvo_stream_host_call(s, note_tag, &t[i]), SALVO_OK);
    }
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(b), SALVO_OK);
    assert_int_equal(atomic_load(&p.next), 6);
    int pos[6];
    for (int i = 0; i < 6; i++)
        pos[p.order[i]] = i;
    assert_true(pos[0] < pos[2] && pos[2] < pos[4]);
    assert_true(pos[1] < pos[3] && pos[3] < pos[5]);
    (void)note_order;
    salvo_stream_destroy(b);
    salvo_buffer_destroy(x);
}

static void slow_count(void *user)
{
    probe *p = user;
    note_gate(p);
    nap_ms(20);
    atomic_fetch_add(&p->runs, 1);
}

/* A stream destroyed with a call pending behind a gate: the call still
 * runs once the gate is raised. A device destroyed with calls pending
 * runs them all before it returns. */
static void destroy_with_calls_pending(void **state)
{
    fixture *f = *state;
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(f->dev, &info), SALVO_OK);
    probe p = {0};
    if (info.timeline_semaphores) {
        salvo_stream *s = NULL;
        salvo_gate *g = NULL;
        assert_int_equal(salvo_stream_create(f->dev, NULL, &s), SALVO_OK);
        assert_int_equal(salvo_gate_create(f->dev, &g), SALVO_OK);
        assert_int_equal(salvo_stream_wait_gate(s, g, 1), SALVO_OK);
        assert_int_equal(salvo_stream_host_call(s, slow_count, &p), SALVO_OK);
        assert_int_equal(salvo_stream_host_call(s, slow_count, &p), SALVO_OK);
        salvo_stream_destroy(s);
        nap_ms(20);
        assert_int_equal(atomic_load(&p.runs), 0);
        atomic_store(&p.gate_up, true);
        assert_int_equal(salvo_gate_raise(g, 1), SALVO_OK);
        assert_int_equal(salvo_device_synchronize(f->dev), SALVO_OK);
        assert_int_equal(atomic_load(&p.runs), 2);
        assert_int_equal(atomic_load(&p.early), 0);
        salvo_gate_destroy(g);
    }
    /* A device of its own, destroyed at once; no gate holds these calls. */
    atomic_store(&p.gate_up, true);
    salvo_device *dev = lava_open(SALVO_DEVICE_SYNC_VALIDATION, 0);
    salvo_kernel *k = lava_add_kernel(dev);
    salvo_stream *s = NULL;
    salvo_buffer *x = NULL;
    assert_int_equal(salvo_stream_create(dev, NULL, &s), SALVO_OK);
    assert_int_equal(salvo_buffer_create(dev, 4096, SALVO_DOMAIN_DEVICE, &x), SALVO_OK);
    /* New memory holds anything (an address-sanitized driver: 0xbe bytes). */
    assert_int_equal(salvo_fill(s, x, 0, 4096, 0), SALVO_OK);
    atomic_store(&p.runs, 0);
    uint32_t out[16];
    memset(out, 0, sizeof out);
    for (int i = 0; i < 4; i++) {
        lava_add(s, k, x, 0, 1024, 1);
        assert_int_equal(salvo_stream_host_call(s, slow_count, &p), SALVO_OK);
    }
    assert_int_equal(salvo_stream_read(s, x, 0, out, sizeof out), SALVO_OK);
    salvo_stream_destroy(s);
    salvo_buffer_destroy(x);
    salvo_kernel_destroy(k);
    lava_close(dev);
    assert_int_equal(atomic_load(&p.runs), 4);
    for (int i = 0; i < 16; i++)
        assert_int_equal(out[i], 4);
}

/* Inside fn, what could wait for work queued behind the call is refused. */
static void refuse_inside(void *user)
{
    probe *p = user;
    uint32_t v = 0;
    p->refused[0] = salvo_stream_synchronize(p->st);
    p->refused[1] = salvo_device_synchronize(p->dev);
    p->refused[2] = salvo_stream_host_call(p->st, see_and_set, p);
    p->refused[3] = salvo_stream_write(p->st, p->buf, 0, &v, 4);
    p->refused[4] = salvo_stream_read(p->st, p->buf, 0, &v, 4);
    p->refused[5] = salvo_buffer_read(p->buf, 0, &v, 4);
    p->refused[6] = salvo_buffer_write(p->buf, 0, &v, 4);
    salvo_stats stats;
    p->refused[7] = salvo_device_stats(p->dev, &stats); /* allowed */
    atomic_fetch_add(&p->runs, 1);
}

static void refused_inside_host_call(void **state)
{
    fixture *f = *state;
    probe p = {0};
    p.st = f->st;
    p.dev = f->dev;
    assert_int_equal(salvo_buffer_create(f->dev, 64, SALVO_DOMAIN_DEVICE, &p.buf), SALVO_OK);
    assert_int_equal(salvo_stream_host_call(f->st, refuse_inside, &p), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    assert_int_equal(atomic_load(&p.runs), 1);
    for (int i = 0; i < 7; i++)
        if (p.refused[i] != SALVO_ERROR_INVALID_STATE)
            fail_msg("call %d inside fn: %s", i, salvo_status_string(p.refused[i]));
    assert_int_equal(p.refused[7], SALVO_OK);
    salvo_buffer_destroy(p.buf);
}

/* A read from a buffer the host sees (DEVICE memory is mapped on
 * lavapipe) is made in place by the host call: the program's own write of
 * that buffer right after the call waits for the read, although nothing
 * on the device binds the buffer. The stream is held by a gate, raised by
 * another thread after 50 ms: a write that did not wait would land first
 * and be what the read finds. */
typedef struct later_raise {
    salvo_gate *g;
    salvo_status r;
} later_raise;

static void *raise_later(void *arg)
{
    later_raise *l = arg;
    nap_ms(50);
    l->r = salvo_gate_raise(l->g, 1);
    return NULL;
}

static void read_in_place_before_host_write(void **state)
{
    fixture *f = *state;
    enum { N = 1024 };
    salvo_buffer *b = NULL, *other = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, N * 4, SALVO_DOMAIN_DEVICE, &b), SALVO_OK);
    assert_int_equal(salvo_buffer_create(f->dev, N * 4, SALVO_DOMAIN_DEVICE, &other), SALVO_OK);
    static uint32_t before[N], after[N], got[N];
    for (uint32_t i = 0; i < N; i++) {
        before[i] = i;
        after[i] = 0x5555u;
        got[i] = 0xeeeeu;
    }
    assert_int_equal(salvo_buffer_write(b, 0, before, sizeof before), SALVO_OK);
    salvo_gate *g = NULL;
    assert_int_equal(salvo_gate_create(f->dev, &g), SALVO_OK);
    assert_int_equal(salvo_stream_wait_gate(f->st, g, 1), SALVO_OK);
    lava_add(f->st, f->add, other, 0, N, 1); /* held work, not on b */
    assert_int_equal(salvo_stream_read(f->st, b, 0, got, sizeof got), SALVO_OK);
    later_raise l = {g, SALVO_ERROR_UNKNOWN};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, raise_later, &l), 0);
    assert_int_equal(salvo_buffer_write(b, 0, after, sizeof after), SALVO_OK);
    pthread_join(t, NULL);
    assert_int_equal(l.r, SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    for (uint32_t i = 0; i < N; i++)
        if (got[i] != i)
            fail_msg("the read found %u at %u: the host write came first", got[i], i);
    assert_int_equal(salvo_buffer_read(b, 0, got, sizeof got), SALVO_OK);
    assert_int_equal(got[0], 0x5555u);
    salvo_gate_destroy(g);
    salvo_buffer_destroy(b);
    salvo_buffer_destroy(other);
}

/* A host call that must never run: it counts its runs. */
static void must_not_run(void *user)
{
    atomic_fetch_add((_Atomic int *)user, 1);
}

static void bad_input(void **state)
{
    fixture *f = *state;
    salvo_buffer *b = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, 256, SALVO_DOMAIN_DEVICE, &b), SALVO_OK);
    /* What the refused calls name: writes carry data the buffer never
     * holds otherwise, reads land in memory that keeps a sentinel. */
    const uint32_t POISON = 0x77777777u, SENTINEL = 0xababababu;
    uint32_t v[64], zeros[64] = {0};
    for (int i = 0; i < 64; i++)
        v[i] = POISON;
    _Atomic int ran = 0;
    assert_int_equal(salvo_stream_write(NULL, b, 0, v, 4), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_stream_write(f->st, NULL, 0, v, 4), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_stream_write(f->st, b, 0, NULL, 4), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_stream_write(f->st, b, 0, v, 0), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_stream_write(f->st, b, 200, v, 57), SALVO_ERROR_INVALID_ARGUMENT);
    if (!strstr(salvo_last_error(), "outside the buffer"))
        fail_msg("'%s'", salvo_last_error());
    assert_int_equal(salvo_stream_write(f->st, b, UINT64_MAX - 3, v, 4),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_stream_read(NULL, b, 0, v, 4), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_stream_read(f->st, NULL, 0, v, 4), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_stream_read(f->st, b, 0, NULL, 4), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_stream_read(f->st, b, 0, v, 0), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_stream_read(f->st, b, 256, v, 4), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_stream_host_call(NULL, must_not_run, &ran),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_stream_host_call(f->st, NULL, NULL), SALVO_ERROR_INVALID_ARGUMENT);
    /* A buffer of another device. */
    salvo_device *other = lava_open(SALVO_DEVICE_SYNC_VALIDATION, 0);
    salvo_buffer *ob = NULL;
    assert_int_equal(salvo_buffer_create(other, 256, SALVO_DOMAIN_DEVICE, &ob), SALVO_OK);
    assert_int_equal(salvo_stream_write(f->st, ob, 0, v, 4), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_stream_read(f->st, ob, 0, v, 4), SALVO_ERROR_INVALID_ARGUMENT);
    salvo_buffer_destroy(ob);
    lava_close(other);
    assert_int_equal(salvo_stream_write(f->st, b, 0, zeros, sizeof zeros), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    /* A capturing stream: refused, the capture goes on. */
    uint32_t target[64];
    for (int i = 0; i < 64; i++)
        target[i] = SENTINEL;
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    assert_int_equal(salvo_stream_write(f->st, b, 0, v, sizeof v), SALVO_ERROR_INVALID_STATE);
    assert_int_equal(salvo_stream_read(f->st, b, 0, target, sizeof target),
                     SALVO_ERROR_INVALID_STATE);
    assert_int_equal(salvo_stream_host_call(f->st, must_not_run, &ran),
                     SALVO_ERROR_INVALID_STATE);
    lava_add(f->st, f->add, b, 0, 64, 2);
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_OK);
    assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
    /* Nothing the refused calls named was done: the graph's add alone
     * (a refused write that landed would leave POISON + 2), no refused
     * read filled its target or v, no refused host call ran. */
    uint32_t got[64];
    memset(got, 0xff, sizeof got);
    assert_int_equal(salvo_stream_read(f->st, b, 0, got, sizeof got), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    assert_int_equal(salvo_device_synchronize(f->dev), SALVO_OK);
    for (int i = 0; i < 64; i++)
        assert_int_equal(got[i], 2);
    for (int i = 0; i < 64; i++) {
        assert_int_equal(target[i], SENTINEL);
        assert_int_equal(v[i], POISON);
    }
    assert_int_equal(atomic_load(&ran), 0);
    salvo_graph_destroy(g);
    salvo_buffer_destroy(b);
}

int main(void)
{
    lava_require_device();
    lava_filter_layer_timeouts();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(write_kernel_read, setup, lava_teardown),
        cmocka_unit_test_setup_teardown(many_small_writes, setup, lava_teardown),
        cmocka_unit_test_setup_teardown(host_call_between_kernels, setup, lava_teardown),
        cmocka_unit_test_setup_teardown(several_streams, setup, lava_teardown),
        cmocka_unit_test_setup_teardown(destroy_with_calls_pending, setup, lava_teardown),
        cmocka_unit_test_setup_teardown(read_in_place_before_host_write, setup, lava_teardown),
        cmocka_unit_test_setup_teardown(refused_inside_host_call, setup, lava_teardown),
        cmocka_unit_test_setup_teardown(bad_input, setup, lava_teardown),
    };
    return lava_run_tests(tests);
}
