/*
 * Host out-of-memory sweep, in the manner of SQLite's fault simulation:
 * for n = 1, 2, ... the nth host allocation the library makes is refused
 * (once, or from then on) through the whole fault-sweep scenario
 * (scenario.h), until a run makes fewer than n allocations. Written once,
 * run on the fake accelerator (unit_oom.c) and on lavapipe (lava_oom.c).
 *
 * The allocator under test wraps the scenario's counting allocator: a run
 * is refused nothing but allocation n (and, from then on, every later
 * one), and the counting allocator still sees every block given out, so
 * "nothing leaks" reads as it does in the fault sweep.
 *
 * Every run must (besides scenario_check: the failing call returns
 * SALVO_ERROR_OUT_OF_HOST_MEMORY or the run completes, the error is
 * reported once, later synchronizes and a fresh launch behave, nothing
 * leaks):
 *  - refuse it during the call that the scenario sees fail: with a single
 *    refusal, the public call in progress when it happened is the one that
 *    returns the error, or the run completes (it could do without);
 *  - allocate nothing while destroying: neither the object destroys nor
 *    salvo_device_destroy may ask for memory;
 *  - after a single refusal, leave the device usable: a buffer, a kernel
 *    and a stream made afresh, a launch, its synchronize and the data read
 *    back, before the device is destroyed (whatever the scenario had
 *    created when it stopped);
 *  - pass the backend's own checks (the fake: no live handle, no illegal
 *    use).
 */
#ifndef SALVO_TESTS_OOM_SWEEP_H
#define SALVO_TESTS_OOM_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "support/scenario.h"

typedef struct oom_backend {
    const char *name;
    /* open, user, flags, fence_timeout_s, dispatch_computes, echo_log;
     * the sweep sets the allocator, the hooks and probe. open gets a desc
     * whose allocator is the one under test. */
    scenario_config cfg;
    /* Backend checks after each run (the fake: live handles, illegal
     * uses); false with a reason. Always called. May be NULL. */
    bool (*after_run)(void *user, const scenario_result *r, char *why, size_t why_size);
    /* Hand the allocator to the library as the process-wide default
     * (salvo_default_allocator_set, desc.allocator NULL) instead of through
     * the desc; the default is reset to malloc/free as soon as the device
     * is created, so the device must keep using the one it began with.
     * Only for backends that open through salvo_device_create. */
    bool via_default;
    /* Every n up to dense, then every stride-th (0: every n). */
    uint64_t dense;
    uint64_t stride;
    bool once_only;    /* no "from then on" variant */
    bool probe_only;   /* no variant without the scenario's probes */
    unsigned watchdog_s;
} oom_backend;

typedef struct oom_totals {
    uint64_t clean_allocs;  /* host allocations of a run without refusals */
    uint64_t runs;
    uint64_t points;        /* distinct n whose refusal happened (single refusals) */
    uint64_t absorbed;      /* ... and the run still completed */
    uint64_t calls;         /* distinct public calls in progress at those refusals */
    uint64_t sites;         /* distinct places (file:line) that reported them */
    uint64_t failed;        /* runs whose checks failed */
    double longest;         /* seconds, the longest run */
    double seconds;
} oom_totals;

/* The clean run, then every variant; prints what it covered. */
void oom_sweep_run(oom_backend *b, oom_totals *t);

#endif
