/* The host out-of-memory sweep; see oom_sweep.h. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "support/oom_sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "accel/accel_fault.h"

/* scenario.c defines add_spv (the header defines, not declares): a
 * name of our own for this copy. */
#define add_spv oom_add_spv
#include "add.spv.h"
#undef add_spv

enum {
    OOM_MAX_CALLS = 1024, /* the scenario makes ~320 calls */
    OOM_NAME = 48,
    OOM_MAX_GROUPS = 64,
    OOM_MAX_SITES = 128,
    OOM_SITE = 48
};

/* What the library is doing when it asks for memory. */
typedef enum phase {
    PH_SCENARIO, /* one of the scenario's calls (or its probes) */
    PH_CLEANUP,  /* the scenario destroys what it created */
    PH_PROBE,    /* this sweep's own check that the device is usable */
    PH_DESTROY   /* salvo_device_destroy */
} phase;

typedef struct oom_ctx {
    const oom_backend *b;
    salvo_allocator a;            /* the allocator under test */
    const salvo_allocator *inner; /* the scenario's counting allocator */
    uint64_t fail_at;             /* 0: refuse nothing */
    bool always;
    uint64_t seen;    /* allocation calls */
    uint64_t refused; /* ... refused */
    phase ph;
    int calls_done;
    uint64_t destroy_allocs; /* calls made in PH_CLEANUP or PH_DESTROY */
    int fail_call;           /* call in progress at the first refusal (0: outside any) */
    phase fail_phase;
    char fail_name[OOM_NAME];
    /* Per call (1-based): its name and the allocations made while it ran. */
    char names[OOM_MAX_CALLS][OOM_NAME];
    uint32_t allocs[OOM_MAX_CALLS];
    /* The usability probe. */
    bool probe_done;
    char probe_why[512];
} oom_ctx;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------ */
/* The allocator under test                                            */
/* ------------------------------------------------------------------ */

static void *oom_alloc_fn(void *user, size_t size)
{
    oom_ctx *c = user;
    uint64_t n = ++c->seen;
    if (c->ph == PH_CLEANUP || c->ph == PH_DESTROY)
        c->destroy_allocs++;
    int call = c->ph == PH_SCENARIO ? c->calls_done + 1 : 0;
    if (call > 0 && call <= OOM_MAX_CALLS)
        c->allocs[call - 1]++;
    if (c->fail_at && (n == c->fail_at || (c->always && n > c->fail_at))) {
        if (c->refused++ == 0) {
            c->fail_call = call;
            c->fail_phase = c->ph;
        }
        return NULL;
    }
    return c->inner->alloc(c->inner->user, size);
}

static void oom_free_fn(void *user, void *ptr)
{
    oom_ctx *c = user;
    c->inner->free(c->inner->user, ptr);
}

/* ------------------------------------------------------------------ */
/* Hooks                                                               */
/* ------------------------------------------------------------------ */

static salvo_status oom_open(void *user, const salvo_device_desc *desc,
                             const scenario_fault *fault, salvo_device **out)
{
    (void)fault; /* the refusal is the allocator's, not an accelerator fault */
    oom_ctx *c = user;
    c->inner = desc->allocator;
    salvo_device_desc d = *desc;
    scenario_fault none = {.op = "none"};
    if (c->b->via_default) {
        /* Reset to malloc/free at before_cleanup, long before the device is
         * destroyed: the device must keep the allocator it was made with. */
        d.allocator = NULL;
        if (salvo_default_allocator_set(&c->a) != SALVO_OK)
            return SALVO_ERROR_UNKNOWN;
    } else {
        d.allocator = &c->a;
    }
    return c->b->cfg.open(c->b->cfg.user, &d, &none, out);
}

static void oom_after_call(void *user, int call, const char *name, int index, salvo_status st)
{
    (void)index;
    (void)st;
    oom_ctx *c = user;
    c->calls_done = call;
    if (call > 0 && call <= OOM_MAX_CALLS)
        snprintf(c->names[call - 1], OOM_NAME, "%s", name);
    if (call == c->fail_call)
        snprintf(c->fail_name, sizeof c->fail_name, "%s", name);
}

static void oom_before_cleanup(void *user)
{
    oom_ctx *c = user;
    c->ph = PH_CLEANUP;
    if (c->b->via_default)
        salvo_default_allocator_set(NULL);
}

#define PROBE_N 1024u

/* A device that survived a refusal can still do everything from scratch:
 * a buffer written, a kernel, a stream, a launch, its wait, the data read
 * back. Empty why: it could. */
static void probe_usable(oom_ctx *c, salvo_device *dev)
{
    static uint32_t in[PROBE_N], out[PROBE_N];
    salvo_buffer *buf = NULL;
    salvo_kernel *k = NULL;
    salvo_stream *st = NULL;
    const char *step = "buffer_create";
    salvo_status s = salvo_buffer_create(dev, sizeof in, SALVO_DOMAIN_DEVICE, &buf);
    for (uint32_t i = 0; i < PROBE_N; i++)
        in[i] = 11u * i + 1u;
    if (s == SALVO_OK) {
        step = "buffer_write";
        s = salvo_buffer_write(buf, 0, in, sizeof in);
    }
    salvo_spec_constant local = {0, 64};
    salvo_kernel_desc kd = {.spirv = oom_add_spv, .spirv_size = sizeof oom_add_spv, .name = "add",
                            .spec_constants = &local, .spec_constant_count = 1};
    if (s == SALVO_OK) {
        step = "kernel_create";
        s = salvo_kernel_create(dev, &kd, &k);
    }
    if (s == SALVO_OK) {
        step = "stream_create";
        s = salvo_stream_create(dev, NULL, &st);
    }
    if (s == SALVO_OK) {
        step = "launch";
        static const uint32_t groups[3] = {PROBE_N / 64, 1, 1};
        const salvo_binding bind = {.binding = 0, .buffer = buf};
        const uint32_t push[2] = {PROBE_N, 5};
        s = salvo_launch(st, k, groups, &bind, 1, push, sizeof push);
    }
    if (s == SALVO_OK) {
        step = "stream_synchronize";
        s = salvo_stream_synchronize(st);
    }
    if (s == SALVO_OK) {
        step = "buffer_read";
        memset(out, 0, sizeof out);
        s = salvo_buffer_read(buf, 0, out, sizeof out);
    }
    if (s != SALVO_OK) {
        snprintf(c->probe_why, sizeof c->probe_why,
                 "the device is not usable after the refusal: %s returned %s: %s", step,
                 salvo_status_string(s), salvo_last_error());
    } else {
        uint32_t add = c->b->cfg.dispatch_computes ? 5u : 0u;
        for (uint32_t i = 0; i < PROBE_N; i++)
            if (out[i] != in[i] + add) {
                snprintf(c->probe_why, sizeof c->probe_why,
                         "after the refusal, a fresh launch computed %u at %u, expected %u",
                         out[i], i, in[i] + add);
                break;
            }
    }
    salvo_stream_destroy(st);
    salvo_kernel_destroy(k);
    salvo_buffer_destroy(buf);
    c->probe_done = true;
}

static void oom_before_destroy(void *user, salvo_device *dev)
{
    oom_ctx *c = user;
    if (c->b->cfg.before_destroy)
        c->b->cfg.before_destroy(c->b->cfg.user, dev);
    /* After one refusal (not from then on: everything would be refused),
     * whether the run failed or absorbed it. */
    if (c->refused && !c->always && !salvo_device_is_lost(dev)) {
        c->ph = PH_PROBE;
        probe_usable(c, dev);
    }
    c->ph = PH_DESTROY;
}

/* ------------------------------------------------------------------ */
/* Attribution                                                         */
/* ------------------------------------------------------------------ */

/* Per public call (launches of one stream count as one call). */
typedef struct group {
    char name[OOM_NAME];
    uint64_t allocs;   /* in a run without refusals */
    uint64_t refused;  /* distinct n refused while it was in progress */
    uint64_t failed;   /* ... that it returned as an error */
    uint64_t absorbed; /* ... that the run did without */
    char sites[160];   /* the places that reported them */
} group;

typedef struct tally {
    group g[OOM_MAX_GROUPS];
    int ng;
    char sites[OOM_MAX_SITES][OOM_SITE];
    int nsites;
} tally;

static group *group_of(tally *t, const char *name)
{
    for (int i = 0; i < t->ng; i++)
        if (strcmp(t->g[i].name, name) == 0)
            return &t->g[i];
    if (t->ng == OOM_MAX_GROUPS)
        return &t->g[OOM_MAX_GROUPS - 1];
    group *g = &t->g[t->ng++];
    memset(g, 0, sizeof *g);
    snprintf(g->name, sizeof g->name, "%s", name);
    return g;
}

/* "stream.c:27" from "stream.c:27: stream_create: out of host memory". */
static void site_of(const char *msg, char *site, size_t size)
{
    const char *colon = strchr(msg, ':');
    const char *end = colon ? strchr(colon + 1, ':') : NULL;
    size_t n = end ? (size_t)(end - msg) : 0;
    if (n == 0 || n >= size) {
        snprintf(site, size, "?");
        return;
    }
    memcpy(site, msg, n);
    site[n] = '\0';
}

static void tally_refusal(tally *t, const oom_ctx *c, const scenario_result *r)
{
    group *g = group_of(t, c->fail_call > 0 ? c->fail_name : "(outside the scenario's calls)");
    g->refused++;
    if (r->completed) {
        g->absorbed++;
        return;
    }
    g->failed++;
    char site[OOM_SITE];
    site_of(r->first_msg, site, sizeof site);
    if (!strstr(g->sites, site) && strlen(g->sites) + strlen(site) + 3 < sizeof g->sites)
        snprintf(g->sites + strlen(g->sites), sizeof g->sites - strlen(g->sites), "%s%s",
                 g->sites[0] ? ", " : "", site);
    for (int i = 0; i < t->nsites; i++)
        if (strcmp(t->sites[i], site) == 0)
            return;
    if (t->nsites < OOM_MAX_SITES)
        snprintf(t->sites[t->nsites++], OOM_SITE, "%s", site);
}

/* ------------------------------------------------------------------ */
/* Runs                                                                */
/* ------------------------------------------------------------------ */

#define WHY(...)                                                                               \
    do {                                                                                       \
        snprintf(why, why_size, __VA_ARGS__);                                                  \
        return false;                                                                          \
    } while (0)

/* One run refusing allocation n (0: none), checked. */
static bool run_one(oom_ctx *c, uint64_t n, bool always, bool probe, scenario_result *r,
                    char *why, size_t why_size)
{
    const oom_backend *b = c->b;
    memset(c, 0, sizeof *c);
    c->b = b;
    c->a = (salvo_allocator){oom_alloc_fn, oom_free_fn, c};
    c->fail_at = n;
    c->always = always;
    c->ph = PH_SCENARIO;

    scenario_config cfg = b->cfg;
    cfg.open = oom_open;
    cfg.user = c;
    cfg.before_destroy = oom_before_destroy;
    cfg.after_call = oom_after_call;
    cfg.before_cleanup = oom_before_cleanup;
    cfg.probe = probe;
    scenario_fault f = {.op = "host_alloc", .n = n, .result = ACCEL_ERROR_OUT_OF_HOST_MEMORY,
                        .flags = always ? FAULT_ALWAYS : 0};
    scenario_fault_text(&f);
    char what[160];
    snprintf(what, sizeof what, "[%s] %s%s", b->name, f.text, probe ? "" : " (no probe)");
    scenario_watchdog(b->watchdog_s, what);
    scenario_run(&cfg, &f, r);
    scenario_watchdog(0, NULL);
    if (b->via_default)
        salvo_default_allocator_set(NULL); /* already, unless the scenario never began */

    bool fired = c->refused > 0;
    char why2[512] = "";
    bool ok = scenario_check(&f, fired, probe, r, why, why_size);
    /* Always called: the backend frees its per-run state there. */
    bool ok2 = !b->after_run || b->after_run(b->cfg.user, r, why2, sizeof why2);
    if (!ok)
        return false;
    if (c->destroy_allocs)
        WHY("%llu host allocation(s) while destroying (objects or the device); destroy must not "
            "need memory",
            (unsigned long long)c->destroy_allocs);
    if (fired && c->fail_phase != PH_SCENARIO)
        WHY("allocation %llu was refused outside the scenario's calls", (unsigned long long)n);
    if (fired && !always && !r->completed && r->first_call != c->fail_call)
        WHY("allocation %llu was refused during call %d (%s), but call %d (%s) returned the "
            "error: %s",
            (unsigned long long)n, c->fail_call, c->fail_name, r->first_call, r->first_name,
            r->first_msg);
    if (fired && !always && r->device_opened && !r->lost) {
        if (!c->probe_done)
            WHY("the usability probe did not run");
        if (c->probe_why[0])
            WHY("%s", c->probe_why);
    }
    if (!ok2) {
        snprintf(why, why_size, "%s", why2);
        return false;
    }
    return true;
}

static uint64_t next_n(const oom_backend *b, uint64_t n)
{
    if (!b->dense || n < b->dense)
        return n + 1;
    return n + (b->stride ? b->stride : 1);
}

void oom_sweep_run(oom_backend *b, oom_totals *t)
{
    memset(t, 0, sizeof *t);
    double t0 = now_s();
    static oom_ctx c; /* large; runs are never concurrent */
    static tally tl;
    memset(&tl, 0, sizeof tl);
    c.b = b;
    scenario_result r;
    char why[768];

    /* A run without refusals: what there is to refuse, and where. */
    if (!run_one(&c, 0, false, true, &r, why, sizeof why)) {
        printf("FAIL [%s] the run without refusals: %s\n", b->name, why);
        t->failed++;
    }
    t->runs++;
    t->longest = r.seconds;
    t->clean_allocs = c.seen;
    for (int i = 0; i < c.calls_done && i < OOM_MAX_CALLS; i++)
        group_of(&tl, c.names[i])->allocs += c.allocs[i];
    printf("[%s] %llu host allocations in a run without refusals, %llu while destroying, "
           "%.3f s\n",
           b->name, (unsigned long long)c.seen, (unsigned long long)c.destroy_allocs, r.seconds);

    static const struct {
        bool always, probe;
        const char *what;
    } variants[] = {
        {false, true, "refused once, probes after"},
        {false, false, "refused once, no probes"},
        {true, true, "refused from then on, probes after"},
        {true, false, "refused from then on, no probes"},
    };
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        if ((variants[v].always && b->once_only) || (!variants[v].probe && b->probe_only))
            continue;
        double v0 = now_s();
        uint64_t runs = 0, points = 0, absorbed = 0, failed = 0, last = 0;
        for (uint64_t n = 1;; n = next_n(b, n)) {
            if (n > t->clean_allocs + 1000) {
                printf("FAIL [%s] %s: still refusing at allocation %llu of %llu\n", b->name,
                       variants[v].what, (unsigned long long)n,
                       (unsigned long long)t->clean_allocs);
                failed++;
                break;
            }
            bool ok = run_one(&c, n, variants[v].always, variants[v].probe, &r, why, sizeof why);
            runs++;
            if (r.seconds > t->longest)
                t->longest = r.seconds;
            if (!ok) {
                failed++;
                printf("FAIL [%s] host_alloc:%llu%s%s: %s\n", b->name, (unsigned long long)n,
                       variants[v].always ? ":always" : "", variants[v].probe ? "" : " (no probe)",
                       why);
            }
            if (c.refused == 0)
                break;
            points++;
            last = n;
            absorbed += r.completed;
            if (v == 0)
                tally_refusal(&tl, &c, &r);
        }
        printf("[%s] %s: n = 1..%llu, %llu refusals in %llu runs (%llu absorbed), %llu failed, "
               "%.2f s\n",
               b->name, variants[v].what, (unsigned long long)last, (unsigned long long)points,
               (unsigned long long)runs, (unsigned long long)absorbed,
               (unsigned long long)failed, now_s() - v0);
        fflush(stdout);
        t->runs += runs;
        t->failed += failed;
        if (v == 0) {
            t->points = points;
            t->absorbed = absorbed;
        }
    }

    printf("[%s] %-24s %7s %8s %7s %9s  %s\n", b->name, "public call in progress", "allocs",
           "refused", "failed", "absorbed", "reported at");
    for (int i = 0; i < tl.ng; i++) {
        const group *g = &tl.g[i];
        if (!g->allocs && !g->refused)
            continue;
        t->calls += g->refused > 0;
        printf("[%s] %-24s %7llu %8llu %7llu %9llu  %s\n", b->name, g->name,
               (unsigned long long)g->allocs, (unsigned long long)g->refused,
               (unsigned long long)g->failed, (unsigned long long)g->absorbed, g->sites);
    }
    t->sites = (uint64_t)tl.nsites;
    t->seconds = now_s() - t0;
    printf("[%s] covered: %llu allocation points (distinct n refused) in %llu public calls, "
           "reported from %llu places; %llu runs, %llu failed; longest run %.3f s; %.1f s in "
           "all\n",
           b->name, (unsigned long long)t->points, (unsigned long long)t->calls,
           (unsigned long long)t->sites, (unsigned long long)t->runs,
           (unsigned long long)t->failed, t->longest, t->seconds);
    fflush(stdout);
}
