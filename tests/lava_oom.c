/*
 * Host out of memory at any allocation, on a real device (lavapipe in CI):
 * the sweep of support/oom_sweep.h through salvo_device_create, so the
 * Vulkan accelerator's own allocations (its device and instance records,
 * extension and device lists, every buffer, pipeline, descriptor pool,
 * command buffer and fence record, specialisation entries) are refused in
 * turn along with the api/ and core/ ones. Every n is covered (a run makes
 * well under a hundred host allocations, so no sampling is needed; the
 * sweep would stride past its dense range if that ever changed).
 *
 * Five sweeps: the allocator given in salvo_device_desc (refused once and
 * from then on, with and without the scenario's probes); the same given as
 * the process-wide default (salvo_default_allocator_set, desc.allocator
 * NULL, the default reset to malloc/free while the device still lives);
 * every explicit transfer staged (SALVO_DEVICE_FORCE_STAGING: the staging
 * buffer, its command buffer and fence); every device tracing
 * ($SALVO_TRACE: the trace's session and writer, each stream's records and
 * timestamp query pool); every device made on the program's own Vulkan
 * device (salvo_device_create_vk; the program loads Vulkan through a volk
 * of its own).
 *
 * The driver's own allocations are not refused: salvo passes no
 * VkAllocationCallbacks (see accel/vulkan/), so lavapipe allocates with
 * malloc whatever salvo_allocator says.
 *
 * Without the validation layer, on purpose: this suite unsets
 * SALVO_VALIDATION (which ctest sets for lava_* suites). Creating a device
 * with the layer costs ~0.2 s, several times a whole run without it, and
 * every one of the ~300 runs opens a device; the refusals here are of
 * salvo's host memory, not of Vulkan usage, and the other lava_* suites
 * make the same calls with validation on. About 10 s on two cores.
 *
 * Under AddressSanitizer or ThreadSanitizer a run costs 2-4 times more
 * (with .ci/run's keep_loaded.so; without it, the ICD's dlopen and dlclose
 * at every device make each run cost up to a second, and growing): there
 * the default-allocator sweep refuses n = 1, 2, 3 and every 5th after
 * only (its sites are the first sweep's; only where the allocator comes
 * from differs). The first and the staged sweep stay complete.
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

#include <volk.h>

#include <cmocka.h>

#include "support/lava.h"
#include "support/oom_sweep.h"
#include "support/own_vulkan.h"
#include "support/scenario.h"

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
    remove(path);
    assert_int_equal(rmdir(dir), 0);
}

static salvo_status lava_oom_open(void *user, const salvo_device_desc *desc,
                                  const scenario_fault *fault, salvo_device **out)
{
    (void)user;
    (void)fault;
    return salvo_device_create(desc, out);
}

/* user: the program's own device, as salvo_device_create_vk takes it. */
static salvo_status lava_oom_open_imported(void *user, const salvo_device_desc *desc,
                                           const scenario_fault *fault, salvo_device **out)
{
    (void)fault;
    return salvo_device_create_vk(user, desc, out);
}

static oom_backend lava_oom_backend(const char *name, uint32_t flags, bool via_default)
{
    return (oom_backend){
        .name = name,
        .cfg = {.open = lava_oom_open,
                .fence_timeout_s = 5, /* every wait is bounded: no run can hang in one */
                .flags = flags,       /* no validation: see the top of this file */
                .echo_log = getenv("SALVO_SWEEP_ECHO") != NULL,
                .dispatch_computes = true},
        .via_default = via_default,
        /* A run makes 40 to 70 allocations: dense. Should that grow past
         * a few hundred, every 7th after the first 300 keeps the suite in
         * CI's minutes. */
        .dense = 300,
        .stride = 7,
        .watchdog_s = 60,
    };
}

static void sweep_maybe_traced(oom_backend *b, bool trace)
{
    oom_totals t;
    if (trace)
        traced(b, &t);
    else
        oom_sweep_run(b, &t);
    if (t.failed)
        fail_msg("%llu of %llu runs failed their checks (see FAIL lines above)",
                 (unsigned long long)t.failed, (unsigned long long)t.runs);
    assert_true(t.clean_allocs > 0);
    if (t.clean_allocs <= b->dense)
        assert_int_equal(t.points, t.clean_allocs);
}

static void sweep(oom_backend *b)
{
    sweep_maybe_traced(b, false);
}

static void test_oom_sweep(void **state)
{
    (void)state;
    oom_backend b = lava_oom_backend("lavapipe", 0, false);
    sweep(&b);
}

static void test_oom_sweep_default(void **state)
{
    (void)state;
    oom_backend b = lava_oom_backend("lavapipe, default allocator", 0, true);
    b.once_only = true; /* the allocations are the first sweep's */
    if (SCENARIO_SANITIZED) {
        b.probe_only = true;
        b.dense = 3;
        b.stride = 5;
    }
    sweep(&b);
}

static void test_oom_sweep_staged(void **state)
{
    (void)state;
    oom_backend b = lava_oom_backend("lavapipe, staged", SALVO_DEVICE_FORCE_STAGING, false);
    b.once_only = true;
    b.probe_only = true;
    sweep(&b);
}

/* Every device tracing: the trace's session, writer, each stream's
 * records and its timestamp query pool are refused in turn as well. */
static void test_oom_sweep_traced(void **state)
{
    (void)state;
    oom_backend b = lava_oom_backend("lavapipe, traced", 0, false);
    b.once_only = true;
    b.probe_only = true;
    sweep_maybe_traced(&b, true);
}

/* salvo on the program's instance, device and queue, made once: each run
 * opens and destroys a salvo device on them. */
static void test_oom_sweep_imported(void **state)
{
    (void)state;
    if (volkInitialize() != VK_SUCCESS)
        skip();
    own_vk o;
    const own_vk_options opt = {.push_descriptor = true, .host_import = true, .timeline = true};
    int rc = own_vk_open(&o, &opt, volkLoadInstance);
    if (rc == OWN_VK_SKIP)
        skip();
    assert_int_equal(rc, 0);
    salvo_vk_device_import imp = own_vk_import(&o);
    oom_backend b = lava_oom_backend("lavapipe, program's own device", 0, false);
    b.cfg.open = lava_oom_open_imported;
    b.cfg.user = &imp;
    b.once_only = true;
    b.probe_only = true;
    sweep(&b);
    assert_int_equal(vkDeviceWaitIdle(o.device), VK_SUCCESS);
    own_vk_close(&o);
}

int main(void)
{
    /* ctest sets SALVO_VALIDATION=1 for lava_* suites: not for this one
     * (see the top of this file). Each test's setup clears it again. */
    unsetenv("SALVO_VALIDATION");
    lava_require_device();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_oom_sweep, clear_salvo_env),
        cmocka_unit_test_setup(test_oom_sweep_default, clear_salvo_env),
        cmocka_unit_test_setup(test_oom_sweep_staged, clear_salvo_env),
        cmocka_unit_test_setup(test_oom_sweep_traced, clear_salvo_env),
        cmocka_unit_test_setup(test_oom_sweep_imported, clear_salvo_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
