/*
 * The fault sweep's scenario, written once and run on every backend (the
 * fake accelerator and lavapipe), and the sweep that drives it.
 *
 * The scenario is a whole program in miniature: open a device, create two
 * buffers (a DEVICE one written with data, a HOST one), the add kernel and
 * two streams A and B; 150 launches on A, an event recorded on A, B waits
 * for it, 150 launches on B; synchronize both; a copy, fills (one of
 * partial words), a launch and an indirect launch on A; a stream write, a
 * host call and a stream read on A; an image written from the host, y
 * copied into it, into a second image and back out on A, the image read
 * back, a sampler; a graph of launches (one indirect) captured on A,
 * replayed, updated, replayed; read back, destroy
 * everything, destroy the device. It stops at the first public call that
 * fails (a negative status or SALVO_TIMEOUT), then still destroys
 * everything it created.
 *
 * The sweep fails call n = 1, 2, ... of one accelerator operation with one
 * result (once, or from then on) until a run injects nothing, and checks
 * every run (see scenario_check).
 */
#ifndef SALVO_TESTS_SCENARIO_H
#define SALVO_TESTS_SCENARIO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "accel/accel.h"
#include "salvo/salvo.h"

enum {
    SCENARIO_N = 1024,        /* uints per buffer */
    SCENARIO_LAUNCHES = 150,  /* per stream */
    SCENARIO_BATCH = 32,      /* small: several batches in flight, the slot ring wraps */
    GRAPH_NODES = 3,          /* launches on x captured into the graph */
    GRAPH_REPLAYS = 3,
    SCENARIO_NAME_MAX = 64
};

/* A host allocator that counts what is live (a header keeps each size). */
typedef struct counting_alloc {
    salvo_allocator a; /* hand &a to the library */
    _Atomic int64_t live_blocks;
    _Atomic int64_t live_bytes;
    _Atomic uint64_t total_blocks;
} counting_alloc;

void counting_alloc_init(counting_alloc *c);

/* One fault: fail call n of op with result; flags are accel_fault.h's
 * FAULT_ALWAYS / FAULT_LOST. text is its SALVO_FAULT form. n 0: no fault. */
typedef struct scenario_fault {
    const char *op;
    uint64_t n;
    accel_result result;
    unsigned flags;
    char text[128];
} scenario_fault;

void scenario_fault_text(scenario_fault *f);

/* Opens the device for a run: desc is complete (allocator, log, settings);
 * the backend adds the fault its own way. */
typedef salvo_status (*scenario_open_fn)(void *user, const salvo_device_desc *desc,
                                         const scenario_fault *fault, salvo_device **out);

typedef struct scenario_config {
    scenario_open_fn open;
    void *user;
    /* Called just before salvo_device_destroy (device opened only). */
    void (*before_destroy)(void *user, salvo_device *dev);
    /* Called after each of the scenario's own public calls (call: 1-based,
     * as scenario_result.first_call; index: the launch's, else -1), and
     * once before it destroys what it created (after the probes), so a
     * backend can tell which call is in progress. Both may be NULL. */
    void (*after_call)(void *user, int call, const char *name, int index, salvo_status status);
    void (*before_cleanup)(void *user);
    double fence_timeout_s; /* 0: unbounded */
    uint32_t flags;         /* SALVO_DEVICE_* */
    /* After a failure, synchronize each live stream once more, then try a
     * fresh launch + synchronize on each (see scenario_result). */
    bool probe;
    bool echo_log; /* print every log message to stderr */
    /* Dispatches really run (a device). The fake only counts them: the
     * data read back must then be what was written. */
    bool dispatch_computes;
} scenario_config;

typedef struct scenario_result {
    bool device_opened;
    bool completed; /* every call succeeded */
    bool data_ok;   /* completed and the values read back are right */
    /* The first failing public call: 1-based index, name, status, message. */
    int first_call;
    char first_name[SCENARIO_NAME_MAX];
    salvo_status first_status;
    char first_msg[256];
    uint32_t failures; /* failing statuses among the scenario's own calls */
    bool lost;         /* salvo_device_is_lost, just before destroy */
    /* Probes (probe set, after a failure; only for streams that exist). */
    bool resync_done[2];
    salvo_status resync[2];
    char resync_msg[2][256];
    bool recovery_done[2];
    salvo_status recovery[2];
    /* After every object was destroyed, before the device was. */
    bool stats_taken;
    salvo_stats end_stats;
    /* Log lines of the fault decorator ("fault injected: ..."). */
    uint64_t injections_logged;
    uint64_t injections_logged_at_destroy; /* ... before salvo_device_destroy */
    /* The operations those lines name, device destroy included: bit i for
     * accel_fault_ops[i]. */
    uint64_t injected_ops;
    uint64_t error_logs;
    /* The counting allocator after salvo_device_destroy. */
    int64_t alloc_live_blocks;
    int64_t alloc_live_bytes;
    uint64_t alloc_total_blocks;
    double seconds;
} scenario_result;

void scenario_run(const scenario_config *cfg, const scenario_fault *fault, scenario_result *out);

/* The scenario's kernel: shaders/add.comp (data[i] += value for i < n;
 * one read-write buffer at binding 0, push {uint n; uint value}), local
 * size 64, named "add". */
salvo_status scenario_kernel_create(salvo_device *dev, salvo_kernel **out);

/* The status a failure injected with this result surfaces as. */
salvo_status scenario_expected_status(accel_result result, unsigned flags);

/* Check a run of fault (fired: the decorator injected at least once).
 * False with the reason in why. */
bool scenario_check(const scenario_fault *fault, bool fired, bool probe, const scenario_result *r,
                    char *why, size_t why_size);

/* ------------------------------------------------------------------ */
/* The sweep                                                           */
/* ------------------------------------------------------------------ */

typedef struct sweep_backend {
    const char *name;
    scenario_config cfg;
    /* Whether the run injected a failure. NULL: from the decorator's log
     * (and, for a device that never opened, from the failure itself). */
    bool (*fired)(void *user, const scenario_fault *fault, const scenario_result *r);
    /* Backend checks after the run (fake: live handles, illegal uses);
     * false with a reason. May be NULL. */
    bool (*after_run)(void *user, const scenario_result *r, char *why, size_t why_size);
    /* Operations called more than this in a run without faults are
     * sampled: n = 1, 2, 3, every (calls / 30)-th, the middle two and the
     * last two calls, and one past them (0: every n of every operation).
     * coarse: only n = 1, 2, the middle two, the last and one past it. */
    uint64_t sample_above;
    bool coarse;
    bool skip_always; /* no "from then on" variants */
    bool both_probe_modes; /* run each case with and without probes */
    const char *const *only; /* NULL-terminated operations to sweep; NULL: all */
    unsigned watchdog_s;   /* per run */
} sweep_backend;

typedef struct sweep_totals {
    uint64_t runs;
    uint64_t points;   /* runs that injected a failure */
    uint64_t absorbed; /* ... and still completed */
    uint64_t failed;   /* runs whose checks failed */
    double seconds;
} sweep_totals;

/* Calls of every operation in a run without faults (index as
 * accel_fault_ops), measured by the backend's calibration run. */
typedef struct sweep_calls {
    uint64_t calls[64];
} sweep_calls;

/* Run the whole matrix; prints a line per operation and the totals. */
void sweep_run(sweep_backend *b, const sweep_calls *calls, sweep_totals *t);

/* Parse "op:n:result[:always]" or "op:n:lost" into f (text kept); false
 * on bad input. For running one case by hand: f->op points to a static
 * buffer, overwritten by the next call. */
bool scenario_fault_parse(const char *text, scenario_fault *f);

/* Around each run: what (non-NULL) says a run begins, described by what;
 * NULL says it is over. While a run is in progress, a process that ends
 * in it (a fatal signal, an exit() from anywhere) first prints what to
 * stderr; and when the run takes longer than seconds (0: no limit), the
 * watchdog prints it and aborts. */
void scenario_watchdog(unsigned seconds, const char *what);

/* Built with AddressSanitizer or ThreadSanitizer: a run costs several
 * times more, and the sweeps on a real device cut their matrix down. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SCENARIO_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SCENARIO_SANITIZED 1
#endif
#endif
#ifndef SCENARIO_SANITIZED
#define SCENARIO_SANITIZED 0
#endif

#endif
