/*
 * The fault sweep on the fake accelerator: for every accelerator
 * operation and every result it can return (tests/support/scenario.c has
 * the matrix and its skips), fail call n = 1, 2, ... of the full scenario,
 * once and from then on, until a run injects nothing. Every n is covered,
 * each case with and without the post-failure probes (so device destroy
 * also meets the work a failure left behind). Twice: the fake as a CPU
 * device, and as a discrete GPU (staged transfers, spinning waits; there
 * cmd_dispatch, covered in full by the first, is sampled). A few cases
 * with two faults reach the fallbacks a single one cannot.
 *
 * The fake is wrapped in the fault decorator by hand (accel_fault_wrap,
 * then the rule in its SALVO_FAULT text form), so the test can read the
 * decorator's counters; lava_fault.c goes through salvo_device_desc.fault
 * instead. Besides scenario_check, every run must leave the fake with no
 * live handle and no illegal use.
 */
#define _POSIX_C_SOURCE 200809L /* unsetenv */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "accel/accel_fault.h"
#include "api/internal.h"
#include "support/fake_accel.h"
#include "support/scenario.h"

typedef struct fake_backend {
    fake_accel *f;       /* this run's fake */
    fault_accel *h;      /* its decorator, valid until device destroy */
    bool handle_read;    /* the device opened: the counters below are set */
    uint64_t injected;   /* accel_fault_injected before destroy */
    sweep_calls *calls;  /* calibration: fill with accel_fault_calls */
    /* Look like a discrete GPU: DEVICE memory the host cannot map (every
     * transfer is staged through the device) and waits that poll the
     * fence before blocking. */
    bool gpu;
    /* Hardware queues offered: with 2, streams A and B of the scenario run
     * on queues of their own and B's wait for the event is a timeline
     * wait. */
    uint32_t queues;
    /* A device without timeline semaphores: streams know their batches
     * done by fences (with them, by their timelines). */
    bool fences;
} fake_backend;

static salvo_status fake_open(void *user, const salvo_device_desc *desc,
                              const scenario_fault *fault, salvo_device **out)
{
    fake_backend *fb = user;
    fb->f = fake_create();
    fb->h = NULL;
    fb->handle_read = false;
    if (!fb->f)
        return SALVO_ERROR_OUT_OF_HOST_MEMORY;
    if (fb->gpu) {
        fb->f->device_types[0] = SALVO_DEVICE_TYPE_DISCRETE;
        fb->f->device_not_mappable = true;
    }
    if (fb->fences)
        fb->f->timeline_semaphores = false;
    if (fb->queues) {
        fb->f->queue_count = fb->queues;
        fb->f->transfer_queue = true; /* and a copy queue */
    }
    accel acc;
    if (!accel_fault_wrap(desc->allocator, fake_accel_get(fb->f), &acc, &fb->h))
        return SALVO_ERROR_OUT_OF_HOST_MEMORY;
    if (fault->n) {
        char reason[256];
        if (!accel_fault_parse(fb->h, fault->text, reason, sizeof reason))
            fail_msg("%s: %s", fault->text, reason);
    }
    return device_create_with_accel(desc, acc, out);
}

static void fake_before_destroy(void *user, salvo_device *dev)
{
    (void)dev;
    fake_backend *fb = user;
    fb->injected = accel_fault_injected(fb->h);
    fb->handle_read = true;
    if (fb->calls)
        for (int i = 0; accel_fault_ops[i]; i++)
            fb->calls->calls[i] = accel_fault_calls(fb->h, accel_fault_ops[i]);
}

static bool fake_after_run(void *user, const scenario_result *r, char *why, size_t size)
{
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
    /* Every injected failure is logged (the device's log exists from
     * device_open on; only enumerate runs before it). */
    if (fb->handle_read && r->injections_logged_at_destroy != fb->injected) {
        snprintf(why, size, "%llu failure(s) injected, %llu logged",
                 (unsigned long long)fb->injected,
                 (unsigned long long)r->injections_logged_at_destroy);
        return false;
    }
    return true;
}

static int op_index(const char *op)
{
    for (int i = 0; accel_fault_ops[i]; i++)
        if (strcmp(accel_fault_ops[i], op) == 0)
            return i;
    fail_msg("no operation %s", op);
    return 0;
}

static const char *const SALVO_VARS[] = {
    "SALVO_BATCH",  "SALVO_FENCE_TIMEOUT_S", "SALVO_RELEASE_MAX_COUNT", "SALVO_RELEASE_MAX_BYTES",
    "SALVO_DEVICE", "SALVO_VALIDATION",      "SALVO_FAULT",             "SALVO_SPIN_US",
    "SALVO_DESCRIPTORS",
};

static int clear_salvo_env(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof SALVO_VARS / sizeof SALVO_VARS[0]; i++)
        unsetenv(SALVO_VARS[i]);
    return 0;
}

static sweep_backend fake_sweep_backend(fake_backend *fb)
{
    return (sweep_backend){
        .name = fb->queues > 1 ? "fake on 2 queues and a copy queue"
                : fb->fences   ? (fb->gpu ? "fake as a GPU, fences" : "fake, fences")
                : fb->gpu      ? "fake as a GPU"
                               : "fake",
        .cfg = {.open = fake_open,
                .user = fb,
                .before_destroy = fake_before_destroy,
                .echo_log = getenv("SALVO_SWEEP_ECHO") != NULL},
        .after_run = fake_after_run,
        /* Every n; as a GPU, cmd_dispatch is sampled: the CPU sweep
         * covers its every n, and each GPU run allocates a 16 MiB
         * staging buffer, slow under sanitizers. */
        .sample_above = fb->gpu ? 40 : 0,
        .both_probe_modes = true,
        .watchdog_s = 20,
    };
}

/* The scenario itself, without faults: it completes, the data is right,
 * nothing leaks; and it reaches the operations the sweep is about. */
static void test_scenario_clean(void **state)
{
    (void)state;
    fake_backend fb = {0};
    sweep_calls calls = {0};
    fb.calls = &calls;
    sweep_backend b = fake_sweep_backend(&fb);
    scenario_fault none = {.op = "none"};
    scenario_result r;
    scenario_run(&b.cfg, &none, &r);
    char why[768] = "", why2[512] = "";
    bool ok = scenario_check(&none, false, true, &r, why, sizeof why);
    bool ok2 = fake_after_run(&fb, &r, why2, sizeof why2);
    if (!ok || !ok2)
        fail_msg("%s", ok ? why2 : why);
    assert_true(r.completed && r.data_ok);
    assert_int_equal(r.injections_logged, 0);
    assert_true(r.alloc_total_blocks > 0); /* the allocator was used */
    /* The graph's launches are recorded twice: at the end of the capture
     * and again after the update (a pending replay still executes the
     * first recording, so the second goes into fresh ones: the updated
     * node gets a chunk of its own, between the nodes before and after
     * it: three). */
    assert_int_equal(calls.calls[op_index("cmd_dispatch")],
                     2 * SCENARIO_LAUNCHES + 1 + 2 * GRAPH_NODES);
    assert_int_equal(calls.calls[op_index("cmd_create_reusable")], 1 + 3);
    /* One indirect launch on A, and the graph's, recorded twice. */
    assert_int_equal(calls.calls[op_index("cmd_dispatch_indirect")], 1 + 2);
    assert_int_equal(calls.calls[op_index("cmd_fill_bytes")], 1);
    static const char *const reached[] = {"enumerate",       "device_open", "buffer_create",
                                          "pipeline_create", "cmd_begin",   "cmd_end",
                                          "fence_reset",     "submit",      "fence_wait",
                                          "cmd_begin_reusable"};
    for (size_t i = 0; i < sizeof reached / sizeof reached[0]; i++)
        if (calls.calls[op_index(reached[i])] == 0)
            fail_msg("the scenario never calls %s", reached[i]);
}

/* SALVO_SWEEP_ONE=op:n:result[:always] runs that one case, log echoed,
 * instead of the sweep (SALVO_SWEEP_NOPROBE=1: without the probes;
 * SALVO_SWEEP_GPU=1: on the fake as a GPU; SALVO_SWEEP_FENCES=1: without
 * timeline semaphores). */
static bool run_one(sweep_backend *b, bool gpu, bool fences)
{
    const char *one = getenv("SALVO_SWEEP_ONE");
    if (!one || gpu != (getenv("SALVO_SWEEP_GPU") != NULL) ||
        fences != (getenv("SALVO_SWEEP_FENCES") != NULL))
        return false;
    scenario_fault f;
    if (!scenario_fault_parse(one, &f))
        fail_msg("SALVO_SWEEP_ONE=%s: want op:n:result[:always] or op:n:lost", one);
    b->cfg.echo_log = true;
    b->cfg.probe = getenv("SALVO_SWEEP_NOPROBE") == NULL;
    scenario_result r;
    scenario_run(&b->cfg, &f, &r);
    char why[768] = "", why2[512] = "";
    bool fired = r.injections_logged > 0 || (!r.device_opened && strcmp(f.op, "enumerate") == 0);
    bool ok = scenario_check(&f, fired, b->cfg.probe, &r, why, sizeof why);
    bool ok2 = b->after_run(b->cfg.user, &r, why2, sizeof why2);
    printf("%s: fired %d, completed %d, first call %d (%s) %s, lost %d, resync %s/%s, recovery "
           "%s/%s, end: launches pending %lld, live buffers %llu\n",
           f.text, fired, r.completed, r.first_call, r.first_name,
           salvo_status_string(r.first_status), r.lost, salvo_status_string(r.resync[0]),
           salvo_status_string(r.resync[1]), salvo_status_string(r.recovery[0]),
           salvo_status_string(r.recovery[1]),
           (long long)r.end_stats.launches_pending,
           (unsigned long long)r.end_stats.live_buffers);
    if (!ok || !ok2)
        fail_msg("%s", ok ? why2 : why);
    return true;
}

static void sweep(bool gpu, uint32_t queues, bool fences)
{
    fake_backend fb = {.gpu = gpu, .queues = queues, .fences = fences};
    sweep_calls calls = {0};
    fb.calls = &calls;
    sweep_backend b = fake_sweep_backend(&fb);
    if (run_one(&b, gpu, fences))
        return;
    scenario_fault none = {.op = "none"};
    scenario_result r;
    scenario_run(&b.cfg, &none, &r);
    char why[512];
    if (!fake_after_run(&fb, &r, why, sizeof why) || !r.completed)
        fail_msg("calibration run: %s", r.completed ? why : r.first_msg);
    fb.calls = NULL;

    sweep_totals t;
    sweep_run(&b, &calls, &t);
    if (!getenv("SALVO_SWEEP_OPS"))
        assert_true(t.points > 0);
    if (t.failed)
        fail_msg("%llu of %llu runs failed their checks (see FAIL lines above)",
                 (unsigned long long)t.failed, (unsigned long long)t.runs);
}

/* The fake as a CPU device: DEVICE memory is mapped, waits block at once. */
static void test_fault_sweep(void **state)
{
    (void)state;
    sweep(false, 1, false);
}

/* The fake with two queues: streams on queues of their own, the event
 * wait between them a timeline wait (timeline_create at stream create,
 * signals and waits in the submits). */
static void test_fault_sweep_queues(void **state)
{
    (void)state;
    sweep(false, 2, false);
}

/* The fake as a discrete GPU: staged transfers (their buffer, command
 * buffer, fence, submit and wait fail too) and spinning waits (fence_status
 * before fence_wait). */
static void test_fault_sweep_gpu(void **state)
{
    (void)state;
    sweep(true, 1, false);
}

/* A device without timeline semaphores (one queue, no copy queue): every
 * wait of a stream is on a batch's fence; as a GPU, so that waits poll
 * the fence (fence_status) before they block. */
static void test_fault_sweep_fences(void **state)
{
    (void)state;
    sweep(true, 1, true);
}

/* Two faults at once, for the paths a single one cannot reach: what the
 * library does when its fallback fails too. The first rule's result is the
 * status expected. */
static void test_combined_faults(void **state)
{
    (void)state;
    static const struct {
        bool gpu, fences;
        const char *spec;
        accel_result result;
        unsigned flags;
        const char *first; /* the call that fails first (NULL: any) */
    } cases[] = {
        /* A staged write whose wait keeps timing out (past its retries)
         * waits for the queue instead; that finds the device lost. */
        {true, false, "fence_wait:1:timeout:always,queue_wait_idle:1:device_lost",
         ACCEL_ERROR_DEVICE_LOST, 0, "buffer_write DEVICE"},
        /* Waits that never finish, and polls that never see the end:
         * device destroy falls back on the queue, which is lost (or out of
         * memory): the work is abandoned, and still nothing leaks. */
        {false, true,
         "fence_wait:1:timeout:always,fence_status:1:not_ready:always,"
         "queue_wait_idle:1:device_lost",
         ACCEL_TIMEOUT, FAULT_ALWAYS, NULL},
        {false, true,
         "fence_wait:1:oom_host:always,fence_status:1:oom_host:always,"
         "queue_wait_idle:1:oom_host:always",
         ACCEL_ERROR_OUT_OF_HOST_MEMORY, FAULT_ALWAYS, NULL},
        /* The same where streams wait on their timelines. */
        {false, false,
         "timeline_wait:1:timeout:always,timeline_value:1:not_ready:always,"
         "queue_wait_idle:1:device_lost",
         ACCEL_TIMEOUT, FAULT_ALWAYS, NULL},
        {false, false,
         "timeline_wait:1:oom_host:always,timeline_value:1:oom_host:always,"
         "queue_wait_idle:1:oom_host:always",
         ACCEL_ERROR_OUT_OF_HOST_MEMORY, FAULT_ALWAYS, NULL},
    };
    uint64_t failed = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int probe = 0; probe < 2; probe++) {
            fake_backend fb = {.gpu = cases[i].gpu, .fences = cases[i].fences};
            sweep_backend b = fake_sweep_backend(&fb);
            b.cfg.probe = probe;
            scenario_fault f = {.op = "combined", .n = 1, .result = cases[i].result,
                                .flags = cases[i].flags};
            snprintf(f.text, sizeof f.text, "%s", cases[i].spec);
            scenario_result r;
            scenario_watchdog(b.watchdog_s, f.text);
            scenario_run(&b.cfg, &f, &r);
            scenario_watchdog(0, NULL);
            char why[768] = "", why2[512] = "";
            bool ok = scenario_check(&f, r.injections_logged > 0, probe, &r, why, sizeof why);
            bool ok2 = fake_after_run(&fb, &r, why2, sizeof why2);
            if (r.injections_logged == 0) {
                ok = false;
                snprintf(why, sizeof why, "nothing was injected");
            }
            /* Each case is about what follows a fallback: the run fails,
             * first where the case says, and every rule is reached. */
            salvo_status expect = scenario_expected_status(cases[i].result, cases[i].flags);
            bool expected = r.first_status == expect ||
                            (expect == SALVO_TIMEOUT && r.first_status == SALVO_ERROR_TIMEOUT);
            if (ok && (r.completed || !expected)) {
                ok = false;
                snprintf(why, sizeof why, "the run %s (first failure: call %d, %s, %s)",
                         r.completed ? "completed" : "failed otherwise", r.first_call,
                         r.first_name, salvo_status_string(r.first_status));
            }
            if (ok && cases[i].first && strcmp(r.first_name, cases[i].first) != 0) {
                ok = false;
                snprintf(why, sizeof why, "call %d (%s) failed first, not %s", r.first_call,
                         r.first_name, cases[i].first);
            }
            char rules[128];
            snprintf(rules, sizeof rules, "%s", cases[i].spec);
            for (char *save = NULL, *rule = strtok_r(rules, ",", &save); ok && rule;
                 rule = strtok_r(NULL, ",", &save)) {
                char op[64];
                if (sscanf(rule, "%63[^:]", op) != 1)
                    fail_msg("bad rule %s", rule);
                if (!(r.injected_ops & (1ull << op_index(op)))) {
                    ok = false;
                    snprintf(why, sizeof why, "rule %s never fired", rule);
                }
            }
            if (!ok || !ok2) {
                failed++;
                fprintf(stderr, "FAIL [%s] %s%s: %s\n", b.name, f.text, probe ? "" : " (no probe)",
                        ok ? why2 : why);
            }
        }
    }
    if (failed)
        fail_msg("%llu combined case(s) failed", (unsigned long long)failed);
}

/* A wait that fails without ending the work (out of memory) is the failure
 * of the call that waited: a read, an event wait or a device synchronize
 * reports it, and the stream's own synchronize, which waits again, does not
 * report it a second time. */
static void test_wait_failure_reported_once(void **state)
{
    (void)state;
    static const char *const how[] = {"buffer_read", "event_synchronize", "device_synchronize"};
    for (int i = 0; i < 3; i++) {
        counting_alloc ca;
        counting_alloc_init(&ca);
        fake_accel *f = fake_create();
        assert_non_null(f);
        fake_set_complete(f, FAKE_COMPLETE_MANUAL); /* in flight until the wait below */
        accel acc;
        fault_accel *h = NULL;
        assert_true(accel_fault_wrap(&ca.a, fake_accel_get(f), &acc, &h));
        assert_true(accel_fault_add(h, "timeline_wait", 1, ACCEL_ERROR_OUT_OF_HOST_MEMORY, 0));
        salvo_device_desc desc = {.allocator = &ca.a};
        salvo_device *dev = NULL;
        assert_int_equal(device_create_with_accel(&desc, acc, &dev), SALVO_OK);
        salvo_stream *st = NULL;
        salvo_buffer *buf = NULL;
        salvo_kernel *k = NULL;
        salvo_event *ev = NULL;
        assert_int_equal(salvo_stream_create(dev, NULL, &st), SALVO_OK);
        assert_int_equal(salvo_buffer_create(dev, 4096, SALVO_DOMAIN_DEVICE, &buf), SALVO_OK);
        assert_int_equal(scenario_kernel_create(dev, &k), SALVO_OK);
        assert_int_equal(salvo_event_create(dev, &ev), SALVO_OK);
        const uint32_t groups[3] = {1, 1, 1};
        const uint32_t push[2] = {1024, 1};
        const salvo_binding bind = {.binding = 0, .buffer = buf};
        assert_int_equal(salvo_launch(st, k, groups, &bind, 1, push, sizeof push), SALVO_OK);
        assert_int_equal(salvo_event_record(ev, st), SALVO_OK);
        assert_int_equal(salvo_stream_flush(st), SALVO_OK);
        assert_int_equal(fake_complete_all(f), 1); /* done, but not yet seen done */

        uint32_t out[4];
        salvo_status r = i == 0   ? salvo_buffer_read(buf, 0, out, sizeof out)
                         : i == 1 ? salvo_event_synchronize(ev)
                                  : salvo_device_synchronize(dev);
        if (r != SALVO_ERROR_OUT_OF_HOST_MEMORY)
            fail_msg("%s: %s, expected SALVO_ERROR_OUT_OF_HOST_MEMORY", how[i],
                     salvo_status_string(r));
        assert_int_equal(accel_fault_injected(h), 1);
        r = salvo_stream_synchronize(st);
        if (r != SALVO_OK)
            fail_msg("after %s reported the failed wait, synchronize returned %s: %s", how[i],
                     salvo_status_string(r), salvo_last_error());
        assert_int_equal(salvo_device_synchronize(dev), SALVO_OK);
        assert_false(salvo_device_is_lost(dev));

        salvo_event_destroy(ev);
        salvo_kernel_destroy(k);
        salvo_buffer_destroy(buf);
        salvo_stream_destroy(st);
        salvo_device_destroy(dev);
        assert_int_equal(fake_live_total(f), 0);
        assert_int_equal(fake_illegal_total(f), 0);
        fake_free(f);
        assert_int_equal(atomic_load(&ca.live_blocks), 0);
    }
}

int main(void)
{
    /* SALVO_SWEEP_TEST=test_fault_sweep_gpu (a glob): only the tests it
     * names, e.g. to repeat one sweep. */
    const char *only = getenv("SALVO_SWEEP_TEST");
    if (only && *only)
        cmocka_set_test_filter(only);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_scenario_clean, clear_salvo_env),
        cmocka_unit_test_setup(test_fault_sweep, clear_salvo_env),
        cmocka_unit_test_setup(test_fault_sweep_gpu, clear_salvo_env),
        cmocka_unit_test_setup(test_fault_sweep_queues, clear_salvo_env),
        cmocka_unit_test_setup(test_fault_sweep_fences, clear_salvo_env),
        cmocka_unit_test_setup(test_combined_faults, clear_salvo_env),
        cmocka_unit_test_setup(test_wait_failure_reported_once, clear_salvo_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
