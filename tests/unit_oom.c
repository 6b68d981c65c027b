/*
 * Host out of memory at any allocation, on the fake accelerator.
 *
 * The sweep (support/oom_sweep.h): for n = 1, 2, ... the nth host
 * allocation of the fault sweep's scenario is refused, once and from then
 * on, each with and without the scenario's post-failure probes, until a
 * run makes fewer than n allocations; every n is covered. Besides the
 * sweep's checks, every run must leave the fake with no live handle and
 * no illegal use. On the fake, the library's own allocations are the
 * api/ and core/ ones (device, choice of device, buffers, kernel and its
 * name, streams and their batch logs, event): the fake's handles are the
 * test's memory. lava_oom.c adds the Vulkan accelerator's.
 *
 * Also here: the process-wide default allocator (salvo_device_enumerate
 * through it, refused at every n); a launch that did without its batch-log
 * entry, and the cancel that then cannot withdraw it; and the recovery
 * steps that can be refused for lack of memory, bounded: a command buffer
 * reset after a refused batch (SLOT_RESET_ATTEMPTS), the wait for an idle
 * queue after a staged transfer's wait failed, and the transfer command
 * buffer's reset (RECOVERY_ATTEMPTS each), driven through the fault
 * decorator.
 */
#define _POSIX_C_SOURCE 200809L /* unsetenv */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h> /* rmdir */

#include <cmocka.h>

#include "accel/accel_fault.h"
#include "api/internal.h"
#include "support/fake_accel.h"
#include "support/oom_sweep.h"
#include "support/scenario.h"

/* scenario.c defines add_spv (the header defines, not declares): a
 * name of our own for this copy. */
#define add_spv unit_oom_add_spv
#include "add.spv.h"
#undef add_spv

static const char *const SALVO_VARS[] = {
    "SALVO_BATCH",  "SALVO_FENCE_TIMEOUT_S", "SALVO_RELEASE_MAX_COUNT", "SALVO_RELEASE_MAX_BYTES",
    "SALVO_DEVICE", "SALVO_VALIDATION",      "SALVO_FAULT",             "SALVO_SPIN_US",
    "SALVO_DESCRIPTORS", "SALVO_PIPELINE_CACHE", "SALVO_TRACE",
};

static int clear_salvo_env(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof SALVO_VARS / sizeof SALVO_VARS[0]; i++)
        unsetenv(SALVO_VARS[i]);
    return 0;
}

/* Run b's sweep with every device tracing ($SALVO_TRACE, into a directory
 * of its own, removed afterwards): the trace's allocations (its session
 * and writer, each stream's records and timestamp queries) are refused in
 * turn too. A trace that cannot be had is left out, with a warning: the
 * runs must do without it. */
static void traced(oom_backend *b, oom_totals *t)
{
    char dir[] = "/tmp/salvo_oom_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[sizeof dir + 16];
    snprintf(path, sizeof path, "%s/trace.json", dir);
    assert_int_equal(setenv("SALVO_TRACE", path, 1), 0);
    oom_sweep_run(b, t);
    unsetenv("SALVO_TRACE");
    /* The last run (the one past every allocation) traced for real. */
    assert_int_equal(remove(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

/* ------------------------------------------------------------------ */
/* The sweep on the fake                                               */
/* ------------------------------------------------------------------ */

typedef struct fake_backend {
    fake_accel *f;   /* this run's */
    bool timestamps; /* the fake writes GPU timestamps (for traces) */
    uint32_t queues; /* hardware queues offered (0: the fake's one) */
    bool fences;     /* no timeline semaphores: streams wait on fences */
} fake_backend;

static salvo_status fake_open(void *user, const salvo_device_desc *desc,
                              const scenario_fault *fault, salvo_device **out)
{
    (void)fault;
    fake_backend *fb = user;
    fb->f = fake_create();
    if (!fb->f)
        fail_msg("the fake itself is out of memory");
    fb->f->timestamps = fb->timestamps;
    if (fb->fences)
        fb->f->timeline_semaphores = false;
    if (fb->queues) {
        fb->f->queue_count = fb->queues;
        fb->f->transfer_queue = true; /* and a copy queue */
    }
    return device_create_with_accel(desc, fake_accel_get(fb->f), out);
}

static bool fake_after_run(void *user, const scenario_result *r, char *why, size_t size)
{
    (void)r;
    fake_backend *fb = user;
    uint64_t live = fake_live_total(fb->f);
    uint64_t illegal = fake_illegal_total(fb->f);
    bool destroyed = fake_destroyed(fb->f);
    char last[256];
    snprintf(last, sizeof last, "%s", fake_illegal_last(fb->f));
    fake_free(fb->f);
    fb->f = NULL;
    if (live) {
        snprintf(why, size, "%llu fake handle(s) still live after device destroy",
                 (unsigned long long)live);
        return false;
    }
    if (illegal) {
        snprintf(why, size, "%llu illegal use(s) of the accelerator; last: %s",
                 (unsigned long long)illegal, last);
        return false;
    }
    if (!destroyed) {
        snprintf(why, size, "the accelerator was never destroyed");
        return false;
    }
    return true;
}

/* Sweep the scenario on the fake fb (traced: with every device tracing)
 * and check every run; the totals for the caller's own checks. */
static oom_totals sweep_fake(fake_backend *fb, const char *name, bool with_trace)
{
    oom_backend b = {
        .name = name,
        .cfg = {.open = fake_open, .user = fb, .echo_log = getenv("SALVO_SWEEP_ECHO") != NULL},
        .after_run = fake_after_run,
        .watchdog_s = 20,
    };
    oom_totals t;
    if (with_trace)
        traced(&b, &t);
    else
        oom_sweep_run(&b, &t);
    if (t.failed)
        fail_msg("%llu of %llu runs failed their checks (see FAIL lines above)",
                 (unsigned long long)t.failed, (unsigned long long)t.runs);
    /* Every allocation of the run was refused once: the sweep is dense. */
    assert_int_equal(t.points, t.clean_allocs);
    return t;
}

static void test_oom_sweep(void **state)
{
    (void)state;
    fake_backend fb = {0};
    oom_totals t = sweep_fake(&fb, "fake", false);
    assert_true(t.clean_allocs > 0);
    /* At least: device_create, both buffer_create, kernel_create, both
     * stream_create, event_create, a launch per stream (its batch log). */
    assert_true(t.calls >= 8);
}

/* Where the device has timeline semaphores, each stream's timeline
 * holder is allocated too (stream_engine_init), one per stream, on one
 * queue as on several: the scenario makes two streams, so a clean run
 * makes exactly two allocations more than on a device without them
 * (measured here), and that device's sweep is clean too. */
static void test_oom_sweep_queues(void **state)
{
    (void)state;
    fake_backend fenced = {.fences = true};
    oom_totals base = sweep_fake(&fenced, "fake without timelines", false);
    fake_backend one = {0};
    oom_totals t1 = sweep_fake(&one, "fake", false);
    assert_int_equal(t1.clean_allocs, base.clean_allocs + 2);
    fake_backend fb = {.queues = 2};
    oom_totals t = sweep_fake(&fb, "fake on 2 queues and a copy queue", false);
    assert_int_equal(t.clean_allocs, base.clean_allocs + 2);
}

/* The same with every device tracing: the trace's own allocations too,
 * on top of the untraced run's (measured here, with the same timestamps);
 * traced() checks the trace file was written. */
static void test_oom_sweep_traced(void **state)
{
    (void)state;
    fake_backend plain = {.timestamps = true};
    oom_totals base = sweep_fake(&plain, "fake, untraced", false);
    fake_backend fb = {.timestamps = true};
    oom_totals t = sweep_fake(&fb, "fake, traced", true);
    assert_true(t.clean_allocs > base.clean_allocs);
}

/* ------------------------------------------------------------------ */
/* The process-wide default allocator                                  */
/* ------------------------------------------------------------------ */

typedef struct refusing {
    counting_alloc count;
    uint64_t fail_at, seen, refused;
} refusing;

static void *refusing_alloc(void *user, size_t size)
{
    refusing *r = user;
    if (++r->seen == r->fail_at) {
        r->refused++;
        return NULL;
    }
    return r->count.a.alloc(r->count.a.user, size);
}

static void refusing_free(void *user, void *ptr)
{
    refusing *r = user;
    r->count.a.free(r->count.a.user, ptr);
}

static void test_default_allocator(void **state)
{
    (void)state;
    salvo_allocator half = {refusing_alloc, NULL, NULL};
    assert_int_equal(salvo_default_allocator_set(&half), SALVO_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(salvo_last_error(), "together"));

    /* enumerate has no device: its memory comes from the default. */
    refusing r = {0};
    counting_alloc_init(&r.count);
    salvo_allocator a = {refusing_alloc, refusing_free, &r};
    assert_int_equal(salvo_default_allocator_set(&a), SALVO_OK);
    uint32_t count = 0;
    salvo_status clean = salvo_device_enumerate(NULL, &count);
    uint64_t clean_allocs = r.seen;
    assert_true(clean_allocs >= 1);
    assert_int_equal(atomic_load(&r.count.live_blocks), 0);

    /* Each of those refused in turn: out of host memory, or done without;
     * nothing leaks. */
    uint64_t points = 0;
    for (uint64_t n = 1;; n++) {
        r.fail_at = n;
        r.seen = r.refused = 0;
        count = 0;
        salvo_status st = salvo_device_enumerate(NULL, &count);
        assert_int_equal(atomic_load(&r.count.live_blocks), 0);
        if (!r.refused) {
            assert_int_equal(st, clean);
            break;
        }
        points++;
        if (st != SALVO_ERROR_OUT_OF_HOST_MEMORY && st != clean)
            fail_msg("enumerate with allocation %llu refused: %s (%s)", (unsigned long long)n,
                     salvo_status_string(st), salvo_last_error());
        if (st == SALVO_ERROR_OUT_OF_HOST_MEMORY)
            assert_true(salvo_last_error()[0] != '\0');
    }
    assert_int_equal(points, clean_allocs);
    printf("enumerate: %llu host allocation(s) through the default, each refused once\n",
           (unsigned long long)clean_allocs);

    /* Back to malloc/free: the default sees nothing more. */
    assert_int_equal(salvo_default_allocator_set(NULL), SALVO_OK);
    r.fail_at = 0;
    uint64_t before = atomic_load(&r.count.total_blocks);
    salvo_device_enumerate(NULL, &count);
    assert_int_equal(atomic_load(&r.count.total_blocks), before);
}

/* A launch whose batch-log entry could not be kept (its arena refused)
 * still runs: it does without. Cancelling before it then fails for what
 * it is, lack of host memory, and changes nothing: every launch runs. The
 * next batch keeps its log again, and cancels. */
static void test_cancel_without_log(void **state)
{
    (void)state;
    refusing r = {0};
    counting_alloc_init(&r.count);
    salvo_allocator a = {refusing_alloc, refusing_free, &r};
    fake_accel *f = fake_create();
    assert_non_null(f);
    salvo_device_desc d = {.allocator = &a, .batch_size = 64};
    salvo_device *dev = NULL;
    assert_int_equal(device_create_with_accel(&d, fake_accel_get(f), &dev), SALVO_OK);
    salvo_buffer *buf = NULL;
    salvo_kernel *k = NULL;
    salvo_stream *st = NULL;
    salvo_event *ev = NULL;
    assert_int_equal(salvo_buffer_create(dev, 4096, SALVO_DOMAIN_HOST, &buf), SALVO_OK);
    salvo_spec_constant local = {0, 64};
    salvo_kernel_desc kd = {.spirv = unit_oom_add_spv, .spirv_size = sizeof unit_oom_add_spv,
                            .name = "add", .spec_constants = &local, .spec_constant_count = 1};
    assert_int_equal(salvo_kernel_create(dev, &kd, &k), SALVO_OK);
    assert_int_equal(salvo_stream_create(dev, NULL, &st), SALVO_OK);
    assert_int_equal(salvo_event_create(dev, &ev), SALVO_OK);
    static const uint32_t groups[3] = {16, 1, 1};
    const salvo_binding bind = {.binding = 0, .buffer = buf};
    const uint32_t push[2] = {1024, 1};
#define LAUNCH() salvo_launch(st, k, groups, &bind, 1, push, sizeof push)

    r.fail_at = r.seen + 1; /* the first launch's log */
    assert_int_equal(LAUNCH(), SALVO_OK);
    assert_int_equal(r.refused, 1);
    assert_int_equal(LAUNCH(), SALVO_OK);
    assert_int_equal(salvo_event_record(ev, st), SALVO_OK);
    assert_int_equal(LAUNCH(), SALVO_OK);
    assert_int_equal(salvo_event_cancel(ev), SALVO_ERROR_OUT_OF_HOST_MEMORY);
    assert_non_null(strstr(salvo_last_error(), "could not be kept"));
    assert_int_equal(salvo_stream_synchronize(st), SALVO_OK);
    assert_int_equal(salvo_event_query(ev), SALVO_OK); /* not cancelled */
    assert_int_equal(fake_dispatches_completed(f), 3);

    assert_int_equal(LAUNCH(), SALVO_OK);
    assert_int_equal(salvo_event_record(ev, st), SALVO_OK);
    assert_int_equal(LAUNCH(), SALVO_OK);
    assert_int_equal(salvo_event_cancel(ev), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(st), SALVO_OK);
    assert_int_equal(fake_dispatches_completed(f), 4);
#undef LAUNCH
    salvo_event_destroy(ev);
    salvo_stream_destroy(st);
    salvo_kernel_destroy(k);
    salvo_buffer_destroy(buf);
    salvo_device_destroy(dev);
    assert_int_equal(fake_live_total(f), 0);
    assert_int_equal(fake_illegal_total(f), 0);
    assert_int_equal(atomic_load(&r.count.live_blocks), 0);
    fake_free(f);
}

/* ------------------------------------------------------------------ */
/* Bounded recovery steps                                              */
/* ------------------------------------------------------------------ */

typedef struct mini {
    fake_accel *f;
    fault_accel *h;
    counting_alloc ca;
    salvo_device *dev;
    salvo_buffer *buf;
    salvo_kernel *k;
    salvo_stream *st;
    uint32_t data[1024];
} mini;

/* A device on the fake behind the fault decorator with spec, a buffer of
 * domain, the add kernel and a stream. */
static void mini_open(mini *m, bool gpu, salvo_domain domain, const char *spec)
{
    memset(m, 0, sizeof *m);
    counting_alloc_init(&m->ca);
    m->f = fake_create();
    assert_non_null(m->f);
    if (gpu) {
        m->f->device_types[0] = SALVO_DEVICE_TYPE_DISCRETE;
        m->f->device_not_mappable = true;
    }
    accel acc;
    assert_true(accel_fault_wrap(&m->ca.a, fake_accel_get(m->f), &acc, &m->h));
    char reason[256];
    if (!accel_fault_parse(m->h, spec, reason, sizeof reason))
        fail_msg("%s: %s", spec, reason);
    salvo_device_desc d = {.allocator = &m->ca.a, .batch_size = 4};
    assert_int_equal(device_create_with_accel(&d, acc, &m->dev), SALVO_OK);
    assert_int_equal(salvo_buffer_create(m->dev, sizeof m->data, domain, &m->buf), SALVO_OK);
    salvo_spec_constant local = {0, 64};
    salvo_kernel_desc kd = {.spirv = unit_oom_add_spv, .spirv_size = sizeof unit_oom_add_spv, .name = "add",
                            .spec_constants = &local, .spec_constant_count = 1};
    assert_int_equal(salvo_kernel_create(m->dev, &kd, &m->k), SALVO_OK);
    assert_int_equal(salvo_stream_create(m->dev, NULL, &m->st), SALVO_OK);
}

static salvo_status mini_launch(mini *m)
{
    static const uint32_t groups[3] = {16, 1, 1};
    const salvo_binding bind = {.binding = 0, .buffer = m->buf};
    const uint32_t push[2] = {1024, 1};
    return salvo_launch(m->st, m->k, groups, &bind, 1, push, sizeof push);
}

static uint64_t calls(mini *m, const char *op)
{
    return accel_fault_calls(m->h, op);
}

static void assert_legal(mini *m)
{
    if (fake_illegal_total(m->f))
        fail_msg("illegal use of the accelerator: %s", fake_illegal_last(m->f));
}

/* Everything destroyed: nothing left, in the fake or in host memory. */
static void mini_close(mini *m)
{
    assert_legal(m);
    salvo_stream_destroy(m->st);
    salvo_kernel_destroy(m->k);
    salvo_buffer_destroy(m->buf);
    salvo_device_destroy(m->dev);
    assert_int_equal(fake_live_total(m->f), 0);
    assert_int_equal(fake_illegal_total(m->f), 0);
    assert_int_equal(atomic_load(&m->ca.live_blocks), 0);
    fake_free(m->f);
}

static uint64_t pending(mini *m)
{
    salvo_stats s;
    assert_int_equal(salvo_device_stats(m->dev, &s), SALVO_OK);
    return s.launches_pending;
}

/* A batch refused at its end, then its command buffer's reset refused for
 * good: the reset is tried SLOT_RESET_ATTEMPTS times, the batch stands in
 * empty all the same (its buffer unused) and is back to idle when done;
 * the stream goes on in its other slots, and the next begin of that slot
 * tries the reset again (the same number of times) instead of beginning a
 * buffer still recording, and fails cleanly; once the driver has memory
 * again the stream works. */
static void test_reset_refused_for_good(void **state)
{
    (void)state;
    mini m;
    mini_open(&m, false, SALVO_DOMAIN_HOST, "cmd_end:1:oom_host,cmd_reset:1:oom_host:always");
    assert_int_equal(mini_launch(&m), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(m.st), SALVO_ERROR_OUT_OF_HOST_MEMORY);
    assert_non_null(strstr(salvo_last_error(), "kernels: add"));
    assert_int_equal(calls(&m, "cmd_reset"), SLOT_RESET_ATTEMPTS);
    assert_int_equal(pending(&m), 0);
    assert_legal(&m);
    /* Reported once. */
    assert_int_equal(salvo_stream_synchronize(m.st), SALVO_OK);

    for (int i = 1; i < STREAM_SLOTS; i++) {
        assert_int_equal(mini_launch(&m), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(m.st), SALVO_OK);
    }
    assert_int_equal(calls(&m, "cmd_reset"), SLOT_RESET_ATTEMPTS);
    uint64_t begins = calls(&m, "cmd_begin");
    assert_int_equal(mini_launch(&m), SALVO_ERROR_OUT_OF_HOST_MEMORY);
    assert_non_null(strstr(salvo_last_error(), "cannot be reset"));
    assert_int_equal(calls(&m, "cmd_reset"), 2 * SLOT_RESET_ATTEMPTS);
    assert_int_equal(calls(&m, "cmd_begin"), begins); /* nothing begun on it */
    assert_int_equal(pending(&m), 0);
    assert_legal(&m);

    accel_fault_clear(m.h);
    assert_int_equal(mini_launch(&m), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(m.st), SALVO_OK);
    /* The refused one never ran. */
    assert_int_equal(fake_dispatches_completed(m.f), STREAM_SLOTS);
    assert_int_equal(pending(&m), 0);
    mini_close(&m);
}

/* The same reset refused once: the second try succeeds, and the next
 * launch begins at once. */
static void test_reset_refused_once(void **state)
{
    (void)state;
    mini m;
    mini_open(&m, false, SALVO_DOMAIN_HOST, "cmd_end:1:oom_host,cmd_reset:1:oom_host");
    assert_int_equal(mini_launch(&m), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(m.st), SALVO_ERROR_OUT_OF_HOST_MEMORY);
    assert_int_equal(calls(&m, "cmd_reset"), 2);
    assert_legal(&m);
    assert_int_equal(mini_launch(&m), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(m.st), SALVO_OK);
    assert_int_equal(calls(&m, "cmd_reset"), 2);
    assert_int_equal(fake_dispatches_completed(m.f), 1);
    mini_close(&m);
}

/* A staged transfer whose wait keeps failing (RECOVERY_ATTEMPTS times)
 * waits for the queue instead; that wait refused for lack of memory is
 * tried again, within a bound: once refused, the transfer still succeeds;
 * refused for good, it gives up after RECOVERY_ATTEMPTS (the copy may
 * still run: the device is then taken for lost, as before the retries). */
#define THREE_WAITS_FAIL "fence_wait:1:timeout,fence_wait:2:timeout,fence_wait:3:timeout"
static void test_wait_idle_refused(void **state)
{
    (void)state;
    mini m;
    _Static_assert(RECOVERY_ATTEMPTS == 3, "THREE_WAITS_FAIL fails each of the waits");
    mini_open(&m, true, SALVO_DOMAIN_DEVICE, THREE_WAITS_FAIL ",queue_wait_idle:1:oom_host");
    for (uint32_t i = 0; i < 1024; i++)
        m.data[i] = 5u * i;
    assert_int_equal(salvo_buffer_write(m.buf, 0, m.data, sizeof m.data), SALVO_OK);
    assert_int_equal(calls(&m, "queue_wait_idle"), 2);
    assert_false(salvo_device_is_lost(m.dev));
    uint32_t back[1024] = {0};
    assert_int_equal(salvo_buffer_read(m.buf, 0, back, sizeof back), SALVO_OK);
    assert_memory_equal(back, m.data, sizeof back);
    mini_close(&m);

    mini_open(&m, true, SALVO_DOMAIN_DEVICE, THREE_WAITS_FAIL ",queue_wait_idle:1:oom_host:always");
    assert_int_equal(salvo_buffer_write(m.buf, 0, m.data, sizeof m.data),
                     SALVO_ERROR_DEVICE_LOST);
    assert_int_equal(calls(&m, "queue_wait_idle"), RECOVERY_ATTEMPTS);
    assert_true(salvo_device_is_lost(m.dev));
    mini_close(&m);
}

/* A staged transfer refused at its end, then its command buffer's reset
 * refused for good: after RECOVERY_ATTEMPTS tries the transfer objects are
 * dropped, and the next transfer makes new ones instead of beginning a
 * buffer still recording. */
static void test_transfer_reset_refused(void **state)
{
    (void)state;
    mini m;
    mini_open(&m, true, SALVO_DOMAIN_DEVICE, "cmd_end:1:oom_host,cmd_reset:1:oom_host:always");
    for (uint32_t i = 0; i < 1024; i++)
        m.data[i] = 7u * i + 3u;
    assert_int_equal(salvo_buffer_write(m.buf, 0, m.data, sizeof m.data),
                     SALVO_ERROR_OUT_OF_HOST_MEMORY);
    assert_int_equal(calls(&m, "cmd_reset"), RECOVERY_ATTEMPTS);
    assert_false(salvo_device_is_lost(m.dev));
    assert_legal(&m);
    uint64_t made = calls(&m, "cmd_create");
    accel_fault_clear(m.h);
    assert_int_equal(salvo_buffer_write(m.buf, 0, m.data, sizeof m.data), SALVO_OK);
    assert_int_equal(calls(&m, "cmd_create"), made + 1);
    uint32_t back[1024] = {0};
    assert_int_equal(salvo_buffer_read(m.buf, 0, back, sizeof back), SALVO_OK);
    assert_memory_equal(back, m.data, sizeof back);
    /* And the stream, which never saw any of it. */
    assert_int_equal(mini_launch(&m), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(m.st), SALVO_OK);
    mini_close(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_oom_sweep, clear_salvo_env),
        cmocka_unit_test_setup(test_oom_sweep_queues, clear_salvo_env),
        cmocka_unit_test_setup(test_oom_sweep_traced, clear_salvo_env),
        cmocka_unit_test_setup(test_default_allocator, clear_salvo_env),
        cmocka_unit_test_setup(test_cancel_without_log, clear_salvo_env),
        cmocka_unit_test_setup(test_reset_refused_for_good, clear_salvo_env),
        cmocka_unit_test_setup(test_reset_refused_once, clear_salvo_env),
        cmocka_unit_test_setup(test_wait_idle_refused, clear_salvo_env),
        cmocka_unit_test_setup(test_transfer_reset_refused, clear_salvo_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
