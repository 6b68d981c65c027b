/* Regressions found by random testing, each reduced to the sequence that
 * showed it, on lavapipe with the validation layer and synchronization
 * validation on. A run that would hang is ended by a watchdog that names
 * the test. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "uniform_read.spv.h"
#include "salvo/salvo.h"
#include "support/lava.h"

#define N 256u

/* ------------------------------------------------------------------ */
/* Fixture                                                             */
/* ------------------------------------------------------------------ */

static _Atomic uint64_t validation_messages;
static _Atomic uint64_t injections;

static void log_cb(void *user, salvo_log_level level, const char *file, int line,
                   const char *message)
{
    (void)user;
    (void)line;
    if (file && strcmp(file, "validation") == 0) {
        atomic_fetch_add(&validation_messages, 1);
        fprintf(stderr, "VALIDATION: %s\n", message);
    } else if (strstr(message, "fault injected")) {
        atomic_fetch_add(&injections, 1);
    } else if (level >= SALVO_LOG_WARNING && getenv("REGRESS_ECHO")) {
        fprintf(stderr, "salvo: %s\n", message);
    }
}

typedef struct fx {
    salvo_device *dev;
    salvo_kernel *add, *copy;
    salvo_buffer *buf[4];
    salvo_stream *st[2];
    salvo_gate *gate[2];
} fx;

typedef struct fx_opts {
    uint32_t batch_size;
    double timeout_s;
    const char *fault;
    bool staging;
} fx_opts;

static void fx_open(fx *f, fx_opts o)
{
    memset(f, 0, sizeof *f);
    atomic_store(&validation_messages, 0);
    atomic_store(&injections, 0);
    salvo_device_desc d = {
        .batch_size = o.batch_size,
        .fence_timeout_s = o.timeout_s,
        .fault = o.fault,
        .flags = SALVO_DEVICE_SYNC_VALIDATION | (o.staging ? SALVO_DEVICE_FORCE_STAGING : 0),
        .log = log_cb,
    };
    salvo_status st = salvo_device_create(&d, &f->dev);
    if (st != SALVO_OK)
        fail_msg("device_create: %s: %s", salvo_status_string(st), salvo_last_error());
    f->add = lava_add_kernel(f->dev);
    f->copy = lava_copy_kernel(f->dev);
    for (int i = 0; i < 4; i++)
        f->buf[i] = lava_zeroed(f->dev, N, i == 3 ? SALVO_DOMAIN_HOST : SALVO_DOMAIN_DEVICE);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(salvo_stream_create(f->dev, NULL, &f->st[i]), SALVO_OK);
        assert_int_equal(salvo_gate_create(f->dev, &f->gate[i]), SALVO_OK);
    }
}

/* Destroy everything; with check, the device must be clean first. */
static void fx_close(fx *f, bool check)
{
    if (check) {
        assert_int_equal(salvo_device_synchronize(f->dev), SALVO_OK);
        salvo_stats s;
        assert_int_equal(salvo_device_stats(f->dev, &s), SALVO_OK);
        assert_int_equal(s.launches_pending, 0);
    }
    for (int i = 0; i < 2; i++) {
        salvo_stream_destroy(f->st[i]);
        salvo_gate_destroy(f->gate[i]);
    }
    for (int i = 0; i < 4; i++)
        salvo_buffer_destroy(f->buf[i]);
    salvo_kernel_destroy(f->add);
    salvo_kernel_destroy(f->copy);
    salvo_device_destroy(f->dev);
    assert_int_equal(atomic_load(&validation_messages), 0);
}

static salvo_status add(fx *f, int stream, int buffer, uint32_t value)
{
    salvo_binding b = {.binding = 0, .buffer = f->buf[buffer]};
    uint32_t push[2] = {N, value};
    uint32_t groups[3] = {N / 64, 1, 1};
    return salvo_launch(f->st[stream], f->add, groups, &b, 1, push, sizeof push);
}

/* buf[dst] = buf[src] + value, by the copy kernel. */
static salvo_status copy_kernel(fx *f, int stream, int src, int dst, uint32_t value)
{
    salvo_binding b[2] = {{.binding = 0, .buffer = f->buf[src]},
                          {.binding = 1, .buffer = f->buf[dst]}};
    uint32_t push[2] = {N, value};
    uint32_t groups[3] = {N / 64, 1, 1};
    return salvo_launch(f->st[stream], f->copy, groups, b, 2, push, sizeof push);
}

static void expect_all(fx *f, int buffer, uint32_t want)
{
    uint32_t v[N];
    salvo_status st = salvo_buffer_read(f->buf[buffer], 0, v, sizeof v);
    if (st != SALVO_OK)
        fail_msg("read of buffer %d: %s: %s", buffer, salvo_status_string(st), salvo_last_error());
    for (uint32_t i = 0; i < N; i++)
        if (v[i] != want)
            fail_msg("buffer %d element %u: %u, want %u", buffer, i, v[i], want);
}

/* The HOST buffer's first element through its mapping, without waiting. */
static uint32_t peek_host(fx *f)
{
    void *p = NULL;
    assert_int_equal(salvo_buffer_map(f->buf[3], &p), SALVO_OK);
    return atomic_load((_Atomic uint32_t *)p);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------------ */
/* Watchdog                                                            */
/* ------------------------------------------------------------------ */

static const char *volatile current_test = "";

static void on_alarm(int sig)
{
    (void)sig;
    static const char head[] = "\nwatchdog: hung in ";
    ssize_t w = write(STDERR_FILENO, head, sizeof head - 1);
    w = write(STDERR_FILENO, current_test, strlen(current_test));
    w = write(STDERR_FILENO, "\n", 1);
    (void)w;
    _exit(1);
}

static int arm(void **state)
{
    (void)state;
    alarm(60);
    return 0;
}

static int disarm(void **state)
{
    (void)state;
    alarm(0);
    return 0;
}

#define NAME_TEST() (current_test = __func__)

/* ------------------------------------------------------------------ */
/* 2: a staged transfer waited for its copy holding the device lock     */
/* ------------------------------------------------------------------ */

typedef struct raiser {
    fx *f;
    _Atomic bool writing;
    salvo_status launched, flushed, raised;
} raiser;

static void *launch_then_raise(void *arg)
{
    raiser *r = arg;
    while (!atomic_load(&r->writing))
        sleep_ms(1);
    /* Give the write time to reach its wait: it cannot finish before the
     * gate opens, and this thread needs the device lock first. */
    sleep_ms(100);
    r->launched = add(r->f, 1, 2, 5);
    r->flushed = salvo_stream_flush(r->f->st[1]);
    r->raised = salvo_gate_raise(r->f->gate[0], 1);
    return NULL;
}

/* A batch waits on a gate; the host writes another buffer through the
 * staging path, and a second thread launches and flushes before it raises
 * the gate. The write waits for the gated work, but never with the lock
 * that the raising thread needs. */
static void test_staged_transfer_behind_gate(void **state)
{
    (void)state;
    NAME_TEST();
    fx f;
    fx_open(&f, (fx_opts){.staging = true});
    assert_int_equal(salvo_stream_wait_gate(f.st[0], f.gate[0], 1), SALVO_OK);
    assert_int_equal(add(&f, 0, 0, 1), SALVO_OK);
    assert_int_equal(salvo_stream_flush(f.st[0]), SALVO_OK);

    raiser r = {.f = &f};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, launch_then_raise, &r), 0);
    uint32_t data[N];
    for (uint32_t i = 0; i < N; i++)
        data[i] = 7;
    atomic_store(&r.writing, true);
    assert_int_equal(salvo_buffer_write(f.buf[1], 0, data, sizeof data), SALVO_OK);
    pthread_join(t, NULL);
    assert_int_equal(r.launched, SALVO_OK);
    assert_int_equal(r.flushed, SALVO_OK);
    assert_int_equal(r.raised, SALVO_OK);
    assert_int_equal(salvo_device_synchronize(f.dev), SALVO_OK);
    expect_all(&f, 0, 1);
    expect_all(&f, 1, 7);
    expect_all(&f, 2, 5);
    fx_close(&f, true);
}

/* ------------------------------------------------------------------ */
/* 7: a timeout that meant "not done"                                  */
/* ------------------------------------------------------------------ */

/* Single-threaded, with a fence timeout: a staged write behind gated work
 * on its queue returns SALVO_ERROR_TIMEOUT and writes nothing; once the
 * gate is open it writes. Where the gated batch is not on the write's
 * queue, the write is behind nothing and done at once: on one queue for
 * every stream (lavapipe) the batch is held on the host until the gate is
 * raised, and with a copy queue the write goes there: there the write is
 * checked landing at once and the gated add running after the raise (the
 * timeout cannot happen there; unit_device checks it on a fake
 * accelerator). */
static void test_transfer_timeout_writes_nothing(void **state)
{
    (void)state;
    NAME_TEST();
    fx f;
    fx_open(&f, (fx_opts){.staging = true, .timeout_s = 0.2});
    assert_int_equal(salvo_stream_wait_gate(f.st[0], f.gate[0], 1), SALVO_OK);
    assert_int_equal(add(&f, 0, 0, 1), SALVO_OK);
    assert_int_equal(salvo_stream_flush(f.st[0]), SALVO_OK);
    uint32_t data[N];
    for (uint32_t i = 0; i < N; i++)
        data[i] = 9;
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(f.dev, &info), SALVO_OK);
    if (info.transfer_queue || info.queue_count == 1) {
        assert_int_equal(salvo_buffer_write(f.buf[1], 0, data, sizeof data), SALVO_OK);
        expect_all(&f, 1, 9);
        assert_int_equal(salvo_gate_raise(f.gate[0], 1), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(f.st[0]), SALVO_OK);
        expect_all(&f, 0, 1);
        fx_close(&f, true);
        /* What this device does is checked; the timeout itself is
         * unit_device's (a fake accelerator whose write queues behind). */
        return;
    }
    assert_int_equal(salvo_buffer_write(f.buf[1], 0, data, sizeof data), SALVO_ERROR_TIMEOUT);
    assert_non_null(strstr(salvo_last_error(), "nothing was written"));
    uint32_t back[N];
    assert_int_equal(salvo_buffer_read(f.buf[1], 0, back, sizeof back), SALVO_ERROR_TIMEOUT);
    assert_int_equal(salvo_gate_raise(f.gate[0], 1), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f.st[0]), SALVO_OK);
    expect_all(&f, 1, 0); /* the timed-out write wrote nothing */
    expect_all(&f, 0, 1);
    assert_int_equal(salvo_buffer_write(f.buf[1], 0, data, sizeof data), SALVO_OK);
    expect_all(&f, 1, 9);
    fx_close(&f, true);
}

/* One thread, no fence timeout: stream 0 waits on a gate, stream 1's work
 * is synchronized before the gate is raised. On one queue the gated batch
 * went to the device ahead of stream 1's, and the synchronize waited for
 * ever; held on the host, it lets stream 1's batch run. Then an event of
 * the held batch orders stream 1 after it, and the raise sends both. */
static void test_sync_other_stream_before_raise(void **state)
{
    (void)state;
    NAME_TEST();
    fx f;
    fx_open(&f, (fx_opts){0});
    salvo_event *ev = NULL;
    assert_int_equal(salvo_event_create(f.dev, &ev), SALVO_OK);
    assert_int_equal(salvo_stream_wait_gate(f.st[0], f.gate[0], 1), SALVO_OK);
    assert_int_equal(add(&f, 0, 0, 1), SALVO_OK);
    assert_int_equal(salvo_event_record(ev, f.st[0]), SALVO_OK);
    assert_int_equal(salvo_stream_flush(f.st[0]), SALVO_OK);
    assert_int_equal(add(&f, 1, 1, 2), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f.st[1]), SALVO_OK);
    expect_all(&f, 1, 2);
    assert_int_equal(salvo_event_query(ev), SALVO_NOT_READY);
    /* buf[2] = buf[0] + 5 on stream 1, after the gated add on stream 0 */
    assert_int_equal(salvo_stream_wait_event(f.st[1], ev), SALVO_OK);
    assert_int_equal(copy_kernel(&f, 1, 0, 2, 5), SALVO_OK);
    assert_int_equal(salvo_stream_flush(f.st[1]), SALVO_OK);
    assert_int_equal(salvo_gate_raise(f.gate[0], 1), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f.st[1]), SALVO_OK);
    expect_all(&f, 2, 6);
    assert_int_equal(salvo_stream_synchronize(f.st[0]), SALVO_OK);
    expect_all(&f, 0, 1);
    salvo_event_destroy(ev);
    fx_close(&f, true);
}

/* Three gated batches fill a stream's slot ring: the next launch finds no
 * free slot within the timeout and is not recorded (SALVO_ERROR_TIMEOUT);
 * the launches that returned SALVO_OK all run once the gate opens. */
static void test_launch_without_slot_not_recorded(void **state)
{
    (void)state;
    NAME_TEST();
    fx f;
    fx_open(&f, (fx_opts){.timeout_s = 0.2});
    assert_int_equal(salvo_stream_wait_gate(f.st[0], f.gate[0], 1), SALVO_OK);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(add(&f, 0, 3, 1), SALVO_OK);
        assert_int_equal(salvo_stream_flush(f.st[0]), SALVO_OK);
    }
    assert_int_equal(add(&f, 0, 3, 100), SALVO_ERROR_TIMEOUT);
    assert_non_null(strstr(salvo_last_error(), "nothing was recorded"));
    assert_int_equal(peek_host(&f), 0);
    assert_int_equal(salvo_gate_raise(f.gate[0], 1), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f.st[0]), SALVO_OK);
    expect_all(&f, 3, 3);
    fx_close(&f, true);
}

/* Batch size 1: the launch is submitted, then waited for; the wait times
 * out but the launch was made (SALVO_TIMEOUT, positive) and runs. */
static void test_batch1_timeout_still_runs(void **state)
{
    (void)state;
    NAME_TEST();
    fx f;
    fx_open(&f, (fx_opts){.timeout_s = 0.2, .batch_size = 1});
    assert_int_equal(salvo_stream_wait_gate(f.st[0], f.gate[0], 1), SALVO_OK);
    assert_int_equal(add(&f, 0, 3, 4), SALVO_TIMEOUT);
    assert_int_equal(salvo_gate_raise(f.gate[0], 1), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f.st[0]), SALVO_OK);
    expect_all(&f, 3, 4);
    fx_close(&f, true);
}

/* A gate wait asked for while every slot is busy waits for a slot like a
 * launch: past the fence timeout it returns SALVO_ERROR_TIMEOUT and
 * registers nothing; asked again once a slot is free, it is registered,
 * and the launch after it waits for that gate. */
static void test_gate_wait_without_slot(void **state)
{
    (void)state;
    NAME_TEST();
    fx f;
    fx_open(&f, (fx_opts){.timeout_s = 0.2});
    assert_int_equal(salvo_stream_wait_gate(f.st[0], f.gate[0], 1), SALVO_OK);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(add(&f, 0, 3, 1), SALVO_OK);
        assert_int_equal(salvo_stream_flush(f.st[0]), SALVO_OK);
    }
    assert_int_equal(salvo_stream_wait_gate(f.st[0], f.gate[1], 1), SALVO_ERROR_TIMEOUT);
    assert_non_null(strstr(salvo_last_error(), "nothing was recorded"));
    assert_int_equal(salvo_gate_raise(f.gate[0], 1), SALVO_OK);
    assert_int_equal(salvo_stream_wait_gate(f.st[0], f.gate[1], 1), SALVO_OK);
    assert_int_equal(add(&f, 0, 3, 10), SALVO_OK);
    assert_int_equal(salvo_stream_flush(f.st[0]), SALVO_OK);
    /* The three first batches run; the fourth waits for gate 1. */
    for (int i = 0; i < 200 && peek_host(&f) != 3; i++)
        sleep_ms(5);
    sleep_ms(50);
    assert_int_equal(peek_host(&f), 3);
    assert_int_equal(salvo_stream_synchronize(f.st[0]), SALVO_TIMEOUT);
    assert_int_equal(peek_host(&f), 3);
    assert_int_equal(salvo_gate_raise(f.gate[1], 1), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f.st[0]), SALVO_OK);
    expect_all(&f, 3, 13);
    fx_close(&f, true);
}

/* A gate destroyed while a stream's open batch waits for it: the destroy
 * releases the wait, and the semaphore is freed only once that batch is
 * over. */
static void test_gate_destroyed_with_wait_open(void **state)
{
    (void)state;
    NAME_TEST();
    fx f;
    fx_open(&f, (fx_opts){0});
    salvo_gate *g = NULL;
    /* In the open batch. */
    assert_int_equal(salvo_gate_create(f.dev, &g), SALVO_OK);
    assert_int_equal(salvo_stream_wait_gate(f.st[0], g, 1), SALVO_OK);
    salvo_gate_destroy(g);
    assert_int_equal(add(&f, 0, 3, 5), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f.st[0]), SALVO_OK);
    expect_all(&f, 3, 5);
    fx_close(&f, true);
}

/* ------------------------------------------------------------------ */
/* 3: a copy after a compute-only barrier                              */
/* ------------------------------------------------------------------ */

/* W writes x, R reads x (a compute barrier between them), then a copy
 * reads x (read after W's write), or writes what R read (after a read),
 * or writes x after W (after a write, across an unrelated barrier).
 * Synchronization validation reports any copy left unordered. */
static void test_copy_after_compute_barrier(void **state)
{
    (void)state;
    NAME_TEST();
    fx f;
    fx_open(&f, (fx_opts){0});
    const uint64_t bytes = N * sizeof(uint32_t);
    /* read after write */
    assert_int_equal(add(&f, 0, 0, 3), SALVO_OK);            /* x = 3 */
    assert_int_equal(copy_kernel(&f, 0, 0, 1, 1), SALVO_OK); /* y = x + 1 = 4 */
    assert_int_equal(salvo_copy(f.st[0], f.buf[0], 0, f.buf[2], 0, bytes), SALVO_OK); /* z = 3 */
    assert_int_equal(salvo_stream_synchronize(f.st[0]), SALVO_OK);
    expect_all(&f, 1, 4);
    expect_all(&f, 2, 3);
    /* write after read */
    assert_int_equal(copy_kernel(&f, 0, 0, 1, 2), SALVO_OK); /* y = x + 2 = 5 */
    assert_int_equal(add(&f, 0, 3, 1), SALVO_OK);
    assert_int_equal(add(&f, 0, 3, 1), SALVO_OK); /* a compute barrier, on another buffer */
    assert_int_equal(salvo_copy(f.st[0], f.buf[2], 0, f.buf[0], 0, bytes), SALVO_OK); /* x = z */
    assert_int_equal(salvo_stream_synchronize(f.st[0]), SALVO_OK);
    expect_all(&f, 1, 5);
    /* write after write */
    assert_int_equal(add(&f, 0, 0, 10), SALVO_OK); /* x = 13 */
    assert_int_equal(add(&f, 0, 3, 1), SALVO_OK);
    assert_int_equal(add(&f, 0, 3, 1), SALVO_OK);
    assert_int_equal(salvo_copy(f.st[0], f.buf[1], 0, f.buf[0], 0, bytes), SALVO_OK); /* x = y */
    assert_int_equal(salvo_stream_synchronize(f.st[0]), SALVO_OK);
    expect_all(&f, 0, 5);
    expect_all(&f, 3, 4);
    fx_close(&f, true);
}

/* ------------------------------------------------------------------ */
/* 4, 5: injected losses                                               */
/* ------------------------------------------------------------------ */

/* The raise itself finds the device lost: the gated stream's next
 * synchronize reports the loss rather than wait for a gate that will
 * never open. */
static void test_loss_at_raise_does_not_hang(void **state)
{
    (void)state;
    NAME_TEST();
    fx f;
    fx_open(&f, (fx_opts){.fault = "timeline_signal:1:device_lost"});
    assert_int_equal(salvo_stream_wait_gate(f.st[0], f.gate[0], 1), SALVO_OK);
    assert_int_equal(add(&f, 0, 0, 1), SALVO_OK);
    assert_int_equal(salvo_stream_flush(f.st[0]), SALVO_OK);
    assert_int_equal(salvo_gate_raise(f.gate[0], 1), SALVO_ERROR_DEVICE_LOST);
    assert_true(salvo_device_is_lost(f.dev));
    assert_int_equal(salvo_stream_synchronize(f.st[0]), SALVO_ERROR_DEVICE_LOST);
    assert_int_equal(salvo_device_synchronize(f.dev), SALVO_ERROR_DEVICE_LOST);
    fx_close(&f, false);
}

/* A loss injected where Vulkan cannot report one (a descriptor pool
 * reset, which always succeeds) is absorbed: the device stays usable,
 * nothing is signalled behind the host's back (gated work waits for the
 * host's raise, which is not repeated on the driver), and no destroy
 * blocks. */
static void test_loss_where_unchecked_is_absorbed(void **state)
{
    (void)state;
    NAME_TEST();
    fx f;
    fx_open(&f, (fx_opts){.fault = "descpool_reset:1:device_lost"});
    assert_int_equal(add(&f, 1, 1, 1), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f.st[1]), SALVO_OK); /* retire: the reset */
    assert_int_equal(atomic_load(&injections), 1);
    assert_int_equal(salvo_stream_wait_gate(f.st[0], f.gate[0], 1), SALVO_OK);
    assert_int_equal(add(&f, 0, 3, 1), SALVO_OK);
    assert_int_equal(salvo_stream_flush(f.st[0]), SALVO_OK);
    salvo_buffer *spare = NULL;
    assert_int_equal(salvo_buffer_create(f.dev, 64, SALVO_DOMAIN_HOST, &spare), SALVO_OK);
    salvo_buffer_destroy(spare); /* a destroy: nothing may be released early */
    sleep_ms(50);
    assert_int_equal(peek_host(&f), 0); /* still held by the gate */
    assert_false(salvo_device_is_lost(f.dev));
    assert_int_equal(salvo_gate_raise(f.gate[0], 1), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f.st[0]), SALVO_OK);
    expect_all(&f, 3, 1);
    expect_all(&f, 1, 1);
    fx_close(&f, true);
}

/* A failure kept for stream 0 (the look at its timeline runs out of host
 * memory), then the device lost by stream 1's submit: from then on the
 * loss is what every synchronization point returns, the device's and each
 * stream's, whichever comes first; the older failure is named in the
 * message and never returned after the loss. */
static void test_loss_wins_over_kept_failure(void **state)
{
    (void)state;
    NAME_TEST();
    for (int device_first = 0; device_first < 2; device_first++) {
        fx f;
        fx_open(&f, (fx_opts){.batch_size = 64,
                              .fault = "timeline_value:1:oom_host,submit:2:device_lost"});
        assert_int_equal(add(&f, 0, 0, 1), SALVO_OK);
        assert_int_equal(salvo_stream_flush(f.st[0]), SALVO_OK);
        assert_int_equal(add(&f, 1, 1, 1), SALVO_OK);
        assert_int_equal(salvo_stream_flush(f.st[1]), SALVO_ERROR_DEVICE_LOST);
        assert_true(salvo_device_is_lost(f.dev));
        assert_int_equal(atomic_load(&injections), 2);
        if (device_first) {
            assert_int_equal(salvo_device_synchronize(f.dev), SALVO_ERROR_DEVICE_LOST);
            assert_non_null(strstr(salvo_last_error(), "lost"));
        }
        for (int i = 0; i < 2; i++) {
            assert_int_equal(salvo_stream_synchronize(f.st[i]), SALVO_ERROR_DEVICE_LOST);
            assert_non_null(strstr(salvo_last_error(), "lost"));
            assert_int_equal(salvo_stream_query(f.st[i]), SALVO_ERROR_DEVICE_LOST);
        }
        assert_int_equal(salvo_device_synchronize(f.dev), SALVO_ERROR_DEVICE_LOST);
        fx_close(&f, false);
    }
}

/* The device lost while a stream captures: the capturing stream's
 * synchronize and query say the device is lost, as every other's do, not
 * that it is capturing. */
static void test_loss_outranks_capture(void **state)
{
    (void)state;
    NAME_TEST();
    fx f;
    fx_open(&f, (fx_opts){.batch_size = 64, .fault = "submit:1:device_lost"});
    assert_int_equal(salvo_stream_begin_capture(f.st[1]), SALVO_OK);
    assert_int_equal(add(&f, 1, 1, 1), SALVO_OK); /* a node */
    assert_int_equal(add(&f, 0, 0, 1), SALVO_OK);
    assert_int_equal(salvo_stream_flush(f.st[0]), SALVO_ERROR_DEVICE_LOST);
    assert_true(salvo_device_is_lost(f.dev));
    assert_int_equal(salvo_stream_synchronize(f.st[1]), SALVO_ERROR_DEVICE_LOST);
    assert_int_equal(salvo_stream_query(f.st[1]), SALVO_ERROR_DEVICE_LOST);
    assert_int_equal(salvo_stream_synchronize(f.st[0]), SALVO_ERROR_DEVICE_LOST);
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_end_capture(f.st[1], &g), SALVO_ERROR_DEVICE_LOST);
    assert_null(g);
    fx_close(&f, false);
}

static void count_call(void *user)
{
    atomic_fetch_add((_Atomic int *)user, 1);
}

/* A batch refused at its submit never runs: an event marking it says so
 * (query, wait, synchronize) rather than complete, without taking the
 * failure from its stream, which reports it once. Also where the batch is
 * the one a host call submits ahead of itself. */
static void test_event_of_refused_batch(void **state)
{
    (void)state;
    NAME_TEST();
    for (int with_call = 0; with_call < 2; with_call++) {
        fx f;
        fx_open(&f, (fx_opts){.batch_size = 64, .fault = "cmd_end:1:oom_host"});
        salvo_event *ev = NULL;
        assert_int_equal(salvo_event_create(f.dev, &ev), SALVO_OK);
        _Atomic int calls = 0;
        if (!with_call)
            assert_int_equal(add(&f, 0, 0, 1), SALVO_OK);
        if (with_call) {
            assert_int_equal(salvo_stream_host_call(f.st[0], count_call, (void *)&calls),
                             SALVO_OK);
        } else {
            assert_int_equal(salvo_event_record(ev, f.st[0]), SALVO_OK);
            assert_int_equal(salvo_stream_flush(f.st[0]), SALVO_ERROR_OUT_OF_HOST_MEMORY);
        }
        if (with_call)
            assert_int_equal(salvo_event_record(ev, f.st[0]), SALVO_OK);
        salvo_status q = salvo_event_query(ev);
        if (with_call && q == SALVO_NOT_READY)
            q = salvo_event_synchronize(ev);
        assert_int_equal(q, SALVO_ERROR_OUT_OF_HOST_MEMORY);
        assert_int_equal(salvo_event_synchronize(ev), SALVO_ERROR_OUT_OF_HOST_MEMORY);
        assert_int_equal(salvo_event_wait(ev, 1000000000ull), SALVO_ERROR_OUT_OF_HOST_MEMORY);
        assert_non_null(strstr(salvo_last_error(), "refused"));
        /* The flush returned the failure itself; the host call's submit
         * kept it for the stream. */
        assert_int_equal(salvo_stream_synchronize(f.st[0]),
                         with_call ? SALVO_ERROR_OUT_OF_HOST_MEMORY : SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(f.st[0]), SALVO_OK);
        assert_int_equal(atomic_load(&calls), with_call);
        expect_all(&f, 0, 0); /* the refused launch never ran */
        salvo_event_destroy(ev);
        fx_close(&f, true);
    }
}

/* Every wait on a stream's timeline times out (a driver that keeps
 * refusing them), with no fence timeout of the device's: the host-call
 * thread still sees the batch before its call over (by looking at the
 * timeline's value), runs the call, and an event after the call
 * completes. A thread that only waited would hang here (the watchdog
 * names the test). The event's own synchronize waits for the call, then
 * on the event's batch: that wait times out (SALVO_TIMEOUT, the work goes
 * on) unless lavapipe has run the batch before it looks, which under load
 * it sometimes has (SALVO_OK, the event complete; the test took only
 * SALVO_TIMEOUT and failed then). Either way the call has run once. A
 * kernel cannot hold the batch for the test instead: lavapipe ends a
 * kernel's loops after about 65,535 rounds (a spin on a flag the host
 * sets stopped after 3,641 rounds of 16 looks). */
static void test_host_call_when_waits_time_out(void **state)
{
    (void)state;
    NAME_TEST();
    fx f;
    fx_open(&f, (fx_opts){.batch_size = 16, .fault = "timeline_wait:1:timeout:always"});
    salvo_event *ev = NULL;
    assert_int_equal(salvo_event_create(f.dev, &ev), SALVO_OK);
    _Atomic int calls = 0;
    assert_int_equal(add(&f, 0, 3, 1), SALVO_OK);
    assert_int_equal(salvo_stream_host_call(f.st[0], count_call, (void *)&calls), SALVO_OK);
    assert_int_equal(salvo_event_record(ev, f.st[0]), SALVO_OK);
    salvo_status r = salvo_event_synchronize(ev);
    if (r != SALVO_TIMEOUT && r != SALVO_OK)
        fail_msg("event_synchronize: %s, want SALVO_TIMEOUT (or SALVO_OK, the batch run)",
                 salvo_status_string(r));
    assert_int_equal(atomic_load(&calls), 1);
    if (r == SALVO_OK)
        assert_int_equal(salvo_event_query(ev), SALVO_OK);
    while ((r = salvo_event_query(ev)) == SALVO_NOT_READY)
        sleep_ms(1);
    assert_int_equal(r, SALVO_OK);
    assert_int_equal(atomic_load(&calls), 1);
    assert_int_equal(salvo_stream_synchronize(f.st[0]), SALVO_OK);
    assert_int_equal(peek_host(&f), 1);
    salvo_event_destroy(ev);
    fx_close(&f, true);
}

/* ------------------------------------------------------------------ */
/* 6: a cancel whose re-recording fails                                */
/* ------------------------------------------------------------------ */

/* Launches adding 1, 10 and 100 to buffer 0, with ev recorded after the
 * first. */
static salvo_event *three_launches_around_event(fx *f)
{
    salvo_event *ev = NULL;
    assert_int_equal(salvo_event_create(f->dev, &ev), SALVO_OK);
    assert_int_equal(add(f, 0, 0, 1), SALVO_OK);
    assert_int_equal(salvo_event_record(ev, f->st[0]), SALVO_OK);
    assert_int_equal(add(f, 0, 0, 10), SALVO_OK);
    assert_int_equal(add(f, 0, 0, 100), SALVO_OK);
    return ev;
}

/* Launches adding 1, 10 and 100 with an event after the first; the cancel
 * records 10 and 100 again and the first of those dispatches fails. The
 * cancel reports it and withdraws nothing: all three run. */
static void test_failed_cancel_withdraws_nothing(void **state)
{
    (void)state;
    NAME_TEST();
    fx f;
    fx_open(&f, (fx_opts){.batch_size = 100, .fault = "cmd_dispatch:4:oom_host"});
    salvo_event *ev = three_launches_around_event(&f);
    assert_int_equal(salvo_event_cancel(ev), SALVO_ERROR_OUT_OF_HOST_MEMORY);
    assert_int_equal(salvo_stream_synchronize(f.st[0]), SALVO_OK);
    assert_int_equal(salvo_event_query(ev), SALVO_OK);
    expect_all(&f, 0, 111);
    salvo_event_destroy(ev);
    fx_close(&f, true);
}

/* Re-recording keeps failing, so the batch cannot even be restored: the
 * launches are gone, and the stream's next synchronize says so. */
static void test_failed_cancel_reports_dropped_launches(void **state)
{
    (void)state;
    NAME_TEST();
    fx f;
    fx_open(&f, (fx_opts){.batch_size = 100, .fault = "cmd_dispatch:4:oom_host:always"});
    salvo_event *ev = three_launches_around_event(&f);
    assert_int_equal(salvo_event_cancel(ev), SALVO_ERROR_OUT_OF_HOST_MEMORY);
    assert_int_equal(salvo_stream_synchronize(f.st[0]), SALVO_ERROR_BATCH_FAILED);
    assert_non_null(strstr(salvo_last_error(), "dropped"));
    assert_int_equal(salvo_stream_synchronize(f.st[0]), SALVO_OK); /* reported once */
    salvo_stats s;
    assert_int_equal(salvo_device_stats(f.dev, &s), SALVO_OK);
    assert_int_equal(s.launches_pending, 0);
    expect_all(&f, 0, 0);
    salvo_event_destroy(ev);
    fx_close(&f, true);
}

/* ------------------------------------------------------------------ */
/* Uniform bindings: the device's own range and offset limits          */
/* ------------------------------------------------------------------ */

/* A uniform binding wider than maxUniformBufferRange, or at an offset
 * that is not a multiple of minUniformBufferOffsetAlignment, is refused
 * with a message; one within the limits runs. */
static void test_uniform_binding_limits(void **state)
{
    (void)state;
    NAME_TEST();
    fx f;
    fx_open(&f, (fx_opts){0});
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(f.dev, &info), SALVO_OK);
    assert_true(info.max_uniform_buffer_range >= 16384); /* Vulkan's minimum */
    assert_true(info.min_uniform_buffer_offset_alignment >= 1);
    salvo_kernel *k = NULL;
    salvo_kernel_desc kd = {.spirv = uniform_read_spv, .spirv_size = sizeof uniform_read_spv,
                            .name = "uniform_read"};
    assert_int_equal(salvo_kernel_create(f.dev, &kd, &k), SALVO_OK);
    uint64_t align = info.min_uniform_buffer_offset_alignment;
    uint64_t big = (uint64_t)info.max_uniform_buffer_range + 2 * align + 256;
    salvo_buffer *u = NULL;
    assert_int_equal(salvo_buffer_create(f.dev, big, SALVO_DOMAIN_HOST, &u), SALVO_OK);
    uint32_t params[64] = {0};
    for (uint32_t i = 0; i < 16; i++)
        params[4 * i] = 1000 * (i + 1);
    assert_int_equal(salvo_buffer_write(u, align, params, sizeof params), SALVO_OK);
    uint32_t groups[3] = {1, 1, 1};

    salvo_binding wide[2] = {{.binding = 0, .buffer = u, .offset = 0,
                              .size = (uint64_t)info.max_uniform_buffer_range + 16},
                             {.binding = 1, .buffer = f.buf[3]}};
    assert_int_equal(salvo_launch(f.st[0], k, groups, wide, 2, NULL, 0),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(salvo_last_error(), "uniform buffer range"));
    if (align > 1) {
        salvo_binding skew[2] = {{.binding = 0, .buffer = u, .offset = align / 2, .size = 256},
                                 {.binding = 1, .buffer = f.buf[3]}};
        assert_int_equal(salvo_launch(f.st[0], k, groups, skew, 2, NULL, 0),
                         SALVO_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(salvo_last_error(), "uniform buffer offset alignment"));
    }
    salvo_binding ok[2] = {{.binding = 0, .buffer = u, .offset = align, .size = 256},
                           {.binding = 1, .buffer = f.buf[3]}};
    assert_int_equal(salvo_launch(f.st[0], k, groups, ok, 2, NULL, 0), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(f.st[0]), SALVO_OK);
    uint32_t v[16];
    assert_int_equal(salvo_buffer_read(f.buf[3], 0, v, sizeof v), SALVO_OK);
    for (uint32_t i = 0; i < 16; i++)
        assert_int_equal(v[i], 1000 * (i + 1) + i);
    salvo_buffer_destroy(u);
    salvo_kernel_destroy(k);
    fx_close(&f, true);
}

/* A host read waits for gated work only where that work uses the buffer
 * ("Gates and waits"): a read of buffer 1, its work done on stream 1,
 * returns at once beside a gated batch on stream 0 that never touches it.
 * It once timed out when the gated batch held a graph replay (a graph's
 * buffers were not listed: any buffer), and when buffer 1's address had
 * been taken (then every gated batch counted, not only those reaching
 * memory through addresses). */
static void test_read_beside_unrelated_gated_work(void **state)
{
    (void)state;
    NAME_TEST();
    static const char bda[] =
        "#version 450\n"
        "#extension GL_EXT_buffer_reference : require\n"
        "layout(local_size_x = 64) in;\n"
        "layout(buffer_reference, std430) buffer Data { uint v[]; };\n"
        "layout(push_constant) uniform P { Data d; uint n; uint add; } p;\n"
        "void main() { uint i = gl_GlobalInvocationID.x; if (i < p.n) p.d.v[i] += p.add; }\n";
    for (int how = 0; how < 2; how++) { /* a gated replay; an address taken */
        fx f;
        fx_open(&f, (fx_opts){.timeout_s = 0.2});
        salvo_kernel *addr_add = NULL;
        uint64_t address = 0;
        if (how == 1) {
            salvo_device_info info;
            assert_int_equal(salvo_device_info_get(f.dev, &info), SALVO_OK);
            salvo_kernel_desc kd = {.glsl = bda, .name = "bda_add"};
            if (!info.features.buffer_device_address ||
                salvo_kernel_create(f.dev, &kd, &addr_add) != SALVO_OK ||
                salvo_buffer_address(f.buf[1], &address) != SALVO_OK) {
                salvo_kernel_destroy(addr_add);
                fx_close(&f, true);
                continue; /* no buffer addresses here: the replay's case stands */
            }
        }
        salvo_graph *g = NULL;
        if (how == 0) {
            assert_int_equal(salvo_stream_begin_capture(f.st[0]), SALVO_OK);
            assert_int_equal(add(&f, 0, 0, 1), SALVO_OK);
            assert_int_equal(salvo_stream_end_capture(f.st[0], &g), SALVO_OK);
        }
        assert_int_equal(salvo_stream_wait_gate(f.st[0], f.gate[0], 1), SALVO_OK);
        assert_int_equal(how == 0 ? salvo_graph_launch(g, f.st[0]) : add(&f, 0, 0, 1), SALVO_OK);
        assert_int_equal(salvo_stream_flush(f.st[0]), SALVO_OK);
        if (how == 0) {
            assert_int_equal(add(&f, 1, 1, 5), SALVO_OK);
        } else {
            struct {
                uint64_t d;
                uint32_t n, add;
            } push = {address, N, 5};
            uint32_t groups[3] = {N / 64, 1, 1};
            assert_int_equal(salvo_launch(f.st[1], addr_add, groups, NULL, 0, &push, sizeof push),
                             SALVO_OK);
        }
        assert_int_equal(salvo_stream_synchronize(f.st[1]), SALVO_OK);
        uint32_t v[N];
        salvo_status read = salvo_buffer_read(f.buf[1], 0, v, sizeof v);
        assert_int_equal(salvo_gate_raise(f.gate[0], 1), SALVO_OK); /* first: never hang */
        if (read != SALVO_OK)
            fail_msg("%s: read beside unrelated gated work: %s: %s",
                     how ? "address taken" : "gated replay", salvo_status_string(read),
                     salvo_last_error());
        assert_int_equal(v[7], 5);
        assert_int_equal(salvo_stream_synchronize(f.st[0]), SALVO_OK);
        expect_all(&f, 0, 1);
        salvo_graph_destroy(g);
        salvo_kernel_destroy(addr_add);
        fx_close(&f, true);
    }
}

/* An image read or write that times out behind gated work on the image
 * says so as the image's call (it once named buffer_read and "the buffer"
 * whatever the object). */
static void test_image_transfer_timeout_names_the_image(void **state)
{
    (void)state;
    NAME_TEST();
    fx f;
    fx_open(&f, (fx_opts){.timeout_s = 0.2});
    static const char src[] = "#version 450\nlayout(local_size_x = 1) in;\n"
                              "layout(binding = 0, r32ui) uniform uimage2D img;\n"
                              "void main() { imageStore(img, ivec2(0), uvec4(7u)); }\n";
    salvo_kernel_desc kd = {.glsl = src, .name = "img_store"};
    salvo_kernel *k = NULL;
    salvo_image *img = NULL;
    salvo_image_desc id = {SALVO_IMAGE_2D, SALVO_FORMAT_R32_UINT, 1, 1, 0, 0, 0};
    if (salvo_kernel_create(f.dev, &kd, &k) != SALVO_OK ||
        salvo_image_create(f.dev, &id, &img) != SALVO_OK) {
        salvo_kernel_destroy(k);
        fx_close(&f, true);
        skip(); /* no runtime GLSL or no images here */
    }
    assert_int_equal(salvo_stream_wait_gate(f.st[0], f.gate[0], 1), SALVO_OK);
    salvo_binding b = {.binding = 0, .image = img};
    uint32_t groups[3] = {1, 1, 1};
    assert_int_equal(salvo_launch(f.st[0], k, groups, &b, 1, NULL, 0), SALVO_OK);
    assert_int_equal(salvo_stream_flush(f.st[0]), SALVO_OK);
    uint32_t v = 0;
    char said[2][512];
    salvo_status r[2];
    r[0] = salvo_image_read(img, NULL, &v, sizeof v);
    snprintf(said[0], sizeof said[0], "%s", salvo_last_error());
    r[1] = salvo_image_write(img, NULL, &v, sizeof v);
    snprintf(said[1], sizeof said[1], "%s", salvo_last_error());
    assert_int_equal(salvo_gate_raise(f.gate[0], 1), SALVO_OK); /* first: never hang */
    assert_int_equal(r[0], SALVO_ERROR_TIMEOUT);
    assert_int_equal(r[1], SALVO_ERROR_TIMEOUT);
    if (!strstr(said[0], "image_read: the work that uses the image") ||
        !strstr(said[1], "image_write: the work that uses the image"))
        fail_msg("said \"%s\" and \"%s\"", said[0], said[1]);
    assert_int_equal(salvo_stream_synchronize(f.st[0]), SALVO_OK);
    assert_int_equal(salvo_image_read(img, NULL, &v, sizeof v), SALVO_OK);
    assert_int_equal(v, 7);
    salvo_image_destroy(img);
    salvo_kernel_destroy(k);
    fx_close(&f, true);
}

int main(void)
{
    lava_require_device();
    /* A refused batch behind a host call stands in on the device, waiting
     * for the worker's raise of the call's timeline. */
    lava_filter_layer_timeouts();
    unsetenv("SALVO_FAULT");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* REGRESS_TEST=test_copy_* (a glob): only the tests it names (a hang
     * ends the whole run, so each can be run alone). */
    const char *only = getenv("REGRESS_TEST");
    if (only && *only)
        cmocka_set_test_filter(only);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_staged_transfer_behind_gate, arm, disarm),
        cmocka_unit_test_setup_teardown(test_transfer_timeout_writes_nothing, arm, disarm),
        cmocka_unit_test_setup_teardown(test_launch_without_slot_not_recorded, arm, disarm),
        cmocka_unit_test_setup_teardown(test_sync_other_stream_before_raise, arm, disarm),
        cmocka_unit_test_setup_teardown(test_batch1_timeout_still_runs, arm, disarm),
        cmocka_unit_test_setup_teardown(test_gate_wait_without_slot, arm, disarm),
        cmocka_unit_test_setup_teardown(test_gate_destroyed_with_wait_open, arm, disarm),
        cmocka_unit_test_setup_teardown(test_copy_after_compute_barrier, arm, disarm),
        cmocka_unit_test_setup_teardown(test_loss_at_raise_does_not_hang, arm, disarm),
        cmocka_unit_test_setup_teardown(test_loss_where_unchecked_is_absorbed, arm, disarm),
        cmocka_unit_test_setup_teardown(test_loss_wins_over_kept_failure, arm, disarm),
        cmocka_unit_test_setup_teardown(test_loss_outranks_capture, arm, disarm),
        cmocka_unit_test_setup_teardown(test_event_of_refused_batch, arm, disarm),
        cmocka_unit_test_setup_teardown(test_host_call_when_waits_time_out, arm, disarm),
        cmocka_unit_test_setup_teardown(test_failed_cancel_withdraws_nothing, arm, disarm),
        cmocka_unit_test_setup_teardown(test_failed_cancel_reports_dropped_launches, arm, disarm),
        cmocka_unit_test_setup_teardown(test_uniform_binding_limits, arm, disarm),
        cmocka_unit_test_setup_teardown(test_read_beside_unrelated_gated_work, arm, disarm),
        cmocka_unit_test_setup_teardown(test_image_transfer_timeout_names_the_image, arm, disarm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
