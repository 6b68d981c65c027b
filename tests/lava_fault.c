/*
 * The fault sweep on a real device (lavapipe in CI), through the path a
 * user takes: salvo_device_desc.fault ("op:n:result[:always]", the syntax
 * of SALVO_FAULT). The matrix, the scenario and the checks are
 * tests/support/scenario.c's, as for the fake (unit_fault.c).
 *
 * Without the validation layer, on purpose: this suite unsets
 * SALVO_VALIDATION (which ctest sets for lava_* suites) and opens its
 * devices with no validation flag. Creating a device with the layer costs
 * ~0.2 s, which a sweep of a thousand runs cannot afford; and some injected
 * failures are validation errors by construction (an object the decorator
 * reports as failed after it was in fact used, a device "lost" while the
 * real one still runs). The other lava_* suites cover validation.
 *
 * To stay within a few minutes, operations called more than 40 times in a
 * run (cmd_dispatch: 300) are sampled: n = 1, 2, 3, every (c / 30)-th, c/2
 * and c/2 + 1 (for cmd_dispatch the last launch before the event and the
 * first after it), c - 1, c and c + 1, c being their calls in a clean run.
 * Every other operation is swept at every n, on while the fault still
 * fires; a polled one (fence_status, timeline_value: called until the
 * device is done, so more often in a slower run) up to c + 1, since how
 * far past c a run reaches depends on the machine. The fake sweep covers every n
 * of everything. A second sweep stages every explicit transfer through the
 * device (SALVO_DEVICE_FORCE_STAGING), over the operations a transfer
 * makes, failing each call once. Both take about a minute on two idle
 * cores.
 *
 * Under AddressSanitizer or ThreadSanitizer a run costs 4-5 times more
 * (0.15-0.2 s): there the sweeps keep every operation and result but only
 * fail once (no "from then on" variants) and sample n coarsely (1, 2, the
 * middle two, the last and one past it) wherever an operation is called
 * more than 4 times, and the staged sweep is left to unit_fault's sweep of
 * the fake as a GPU, so the sanitizer jobs stay within a minute. The fake's
 * sweeps stay complete there.
 *
 * A process that dies in a run (a crash on any thread, an exit() from a
 * driver) first prints that run's SALVO_FAULT to stderr (see
 * scenario_watchdog). To repeat one sweep: SALVO_SWEEP_TEST (a cmocka
 * test name, glob) and SALVO_SWEEP_OPS (operations), e.g.
 *   SALVO_SWEEP_TEST=test_fault_sweep_staged SALVO_SWEEP_OPS=fence_wait lava_fault
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
#include "support/lava.h"
#include "support/scenario.h"

typedef struct lava_backend {
    sweep_calls *calls; /* calibration: wrap by hand and read the counters */
    fault_accel *h;
} lava_backend;

static salvo_status lava_sweep_open(void *user, const salvo_device_desc *desc,
                                    const scenario_fault *fault, salvo_device **out)
{
    lava_backend *lb = user;
    if (lb->calls) {
        /* Only to count each operation's calls in a clean run: the
         * decorator over the Vulkan accelerator, as salvo_device_create
         * builds it, but with a handle to read. */
        accel vk, acc;
        if (!accel_vulkan_create(desc->allocator, &vk))
            return SALVO_ERROR_OUT_OF_HOST_MEMORY;
        if (!accel_fault_wrap(desc->allocator, vk, &acc, &lb->h)) {
            vk.vt->destroy(vk.self);
            return SALVO_ERROR_OUT_OF_HOST_MEMORY;
        }
        return device_create_with_accel(desc, acc, out);
    }
    salvo_device_desc d = *desc;
    d.fault = fault->n ? fault->text : NULL;
    return salvo_device_create(&d, out);
}

static void lava_before_destroy(void *user, salvo_device *dev)
{
    (void)dev;
    lava_backend *lb = user;
    if (lb->calls)
        for (int i = 0; accel_fault_ops[i]; i++)
            lb->calls->calls[i] = accel_fault_calls(lb->h, accel_fault_ops[i]);
}

static sweep_backend lava_sweep_backend(lava_backend *lb, uint32_t flags)
{
    return (sweep_backend){
        .name = flags & SALVO_DEVICE_FORCE_STAGING ? "lavapipe, staged" : "lavapipe",
        .cfg = {.open = lava_sweep_open,
                .user = lb,
                .before_destroy = lava_before_destroy,
                .fence_timeout_s = 5, /* every wait is bounded: no run can hang in one */
                .flags = flags, /* no validation: see the top of this file */
                .echo_log = getenv("SALVO_SWEEP_ECHO") != NULL,
                .dispatch_computes = true},
        .sample_above = SCENARIO_SANITIZED ? 4 : 40,
        .coarse = SCENARIO_SANITIZED,
        .skip_always = SCENARIO_SANITIZED,
        .both_probe_modes = false,
        .watchdog_s = 60,
    };
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

/* A fault spec the decorator cannot parse is refused before anything is
 * opened, with a message naming the problem. */
static void test_bad_spec_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "submit:0:device_lost", "no_such_op:1:oom_host", "submit:1:no_such_result",
        "submit:1:oom_host:sometimes", "submit",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        salvo_device_desc desc = {.fault = bad[i]};
        salvo_device *dev = (salvo_device *)&desc; /* must be reset to NULL */
        salvo_status st = salvo_device_create(&desc, &dev);
        if (st != SALVO_ERROR_INVALID_ARGUMENT)
            fail_msg("fault '%s': %s", bad[i], salvo_status_string(st));
        assert_null(dev);
        assert_non_null(strstr(salvo_last_error(), "fault"));
    }
}

/* The scenario through salvo_device_create without a fault: it completes
 * with the right data and leaks nothing. */
static void test_scenario_clean(void **state)
{
    (void)state;
    lava_backend lb = {0};
    sweep_backend b = lava_sweep_backend(&lb, 0);
    scenario_fault none = {.op = "none"};
    scenario_result r;
    b.cfg.probe = true;
    scenario_watchdog(b.watchdog_s, "[lavapipe] one clean run, no fault");
    scenario_run(&b.cfg, &none, &r);
    scenario_watchdog(0, NULL);
    char why[768];
    if (!scenario_check(&none, false, true, &r, why, sizeof why))
        fail_msg("%s", why);
    assert_int_equal(r.injections_logged, 0);
    printf("one clean run: %.3f s\n", r.seconds);
}

/* SALVO_SWEEP_ONE=op:n:result[:always] runs that one case, log echoed
 * (SALVO_SWEEP_STAGED=1: with every transfer staged). */
static bool run_one(sweep_backend *b, uint32_t flags)
{
    const char *one = getenv("SALVO_SWEEP_ONE");
    if (!one || (flags != 0) != (getenv("SALVO_SWEEP_STAGED") != NULL))
        return false;
    scenario_fault f;
    if (!scenario_fault_parse(one, &f))
        fail_msg("SALVO_SWEEP_ONE=%s: want op:n:result[:always] or op:n:lost", one);
    b->cfg.echo_log = true;
    b->cfg.probe = true;
    scenario_result r;
    char what[200];
    snprintf(what, sizeof what, "[%s] SALVO_SWEEP_ONE=%s", b->name, f.text);
    scenario_watchdog(b->watchdog_s, what);
    scenario_run(&b->cfg, &f, &r);
    scenario_watchdog(0, NULL);
    bool fired = r.injections_logged > 0 || (!r.device_opened && strcmp(f.op, "enumerate") == 0);
    char why[768] = "";
    bool ok = scenario_check(&f, fired, true, &r, why, sizeof why);
    printf("%s: fired %d, completed %d, first call %d (%s) %s, lost %d, resync %s/%s, recovery "
           "%s/%s, end: launches pending %lld, live buffers %llu, %.3f s\n",
           f.text, fired, r.completed, r.first_call, r.first_name,
           salvo_status_string(r.first_status), r.lost, salvo_status_string(r.resync[0]),
           salvo_status_string(r.resync[1]), salvo_status_string(r.recovery[0]),
           salvo_status_string(r.recovery[1]),
           (long long)r.end_stats.launches_pending,
           (unsigned long long)r.end_stats.live_buffers, r.seconds);
    if (!ok)
        fail_msg("%s", why);
    return true;
}

static void sweep(uint32_t flags, const char *const *only, bool skip_always)
{
    lava_backend lb = {0};
    sweep_calls calls = {0};
    sweep_backend b = lava_sweep_backend(&lb, flags);
    b.only = only;
    b.skip_always |= skip_always;
    if (run_one(&b, flags))
        return;
    lb.calls = &calls;
    scenario_fault none = {.op = "none"};
    scenario_result r;
    b.cfg.probe = true;
    scenario_watchdog(b.watchdog_s, flags ? "[lavapipe, staged] calibration run, no fault"
                                          : "[lavapipe] calibration run, no fault");
    scenario_run(&b.cfg, &none, &r);
    scenario_watchdog(0, NULL);
    lb.calls = NULL;
    if (!r.completed)
        fail_msg("calibration run: call %d (%s): %s: %s", r.first_call, r.first_name,
                 salvo_status_string(r.first_status), r.first_msg);

    sweep_totals t;
    sweep_run(&b, &calls, &t);
    if (!getenv("SALVO_SWEEP_OPS"))
        assert_true(t.points > 0);
    if (t.failed)
        fail_msg("%llu of %llu runs failed their checks (see FAIL lines above)",
                 (unsigned long long)t.failed, (unsigned long long)t.runs);
}

static void test_fault_sweep(void **state)
{
    (void)state;
    sweep(0, NULL, false);
}

/* Every explicit transfer staged through the device (as on a discrete
 * GPU): the operations a staged transfer makes fail inside buffer_write
 * and buffer_read too. Once only: "from then on" adds little to what the
 * sweep above and unit_fault's GPU sweep cover, for a third of the time. */
static void test_fault_sweep_staged(void **state)
{
    (void)state;
    if (SCENARIO_SANITIZED)
        skip(); /* unit_fault's GPU sweep covers staged transfers there */
    static const char *const transfer_ops[] = {
        "buffer_create", "cmd_create", "fence_create", "cmd_begin",       "cmd_end",
        "fence_reset",   "submit",     "fence_wait",   "queue_wait_idle", NULL,
    };
    sweep(SALVO_DEVICE_FORCE_STAGING, transfer_ops, true);
}

int main(void)
{
    /* A line at a time, also into ctest's pipe: a process that dies in a
     * sweep keeps every row it printed. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* ctest sets SALVO_VALIDATION=1 for lava_* suites: not for this one
     * (see the top of this file). Each test's setup clears it again. */
    unsetenv("SALVO_VALIDATION");
    /* SALVO_SWEEP_TEST=test_fault_sweep_staged (a glob): only the tests it
     * names, e.g. to repeat one sweep. */
    const char *only = getenv("SALVO_SWEEP_TEST");
    if (only && *only)
        cmocka_set_test_filter(only);
    lava_require_device();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_bad_spec_refused, clear_salvo_env),
        cmocka_unit_test_setup(test_scenario_clean, clear_salvo_env),
        cmocka_unit_test_setup(test_fault_sweep, clear_salvo_env),
        cmocka_unit_test_setup(test_fault_sweep_staged, clear_salvo_env),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    if (failed)
        fprintf(stderr, "lava_fault: %d test(s) failed\n", failed);
    return failed;
}
