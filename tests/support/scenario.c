/* The fault sweep's scenario and driver; see scenario.h. */
#define _POSIX_C_SOURCE 200809L /* sigaction, alarm, clock_gettime */
#include "support/scenario.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "accel/accel_fault.h"

#include "add.spv.h"

/* ------------------------------------------------------------------ */
/* Counting allocator                                                  */
/* ------------------------------------------------------------------ */

typedef union block_header {
    size_t size;
    max_align_t align; /* keep what follows aligned as malloc's */
} block_header;

static void *counting_alloc_fn(void *user, size_t size)
{
    counting_alloc *c = user;
    block_header *h = malloc(sizeof *h + size);
    if (!h)
        return NULL;
    h->size = size;
    atomic_fetch_add(&c->live_blocks, 1);
    atomic_fetch_add(&c->live_bytes, (int64_t)size);
    atomic_fetch_add(&c->total_blocks, 1);
    return h + 1;
}

static void counting_free_fn(void *user, void *ptr)
{
    counting_alloc *c = user;
    if (!ptr)
        return;
    block_header *h = (block_header *)ptr - 1;
    atomic_fetch_sub(&c->live_blocks, 1);
    atomic_fetch_sub(&c->live_bytes, (int64_t)h->size);
    free(h);
}

void counting_alloc_init(counting_alloc *c)
{
    c->a = (salvo_allocator){counting_alloc_fn, counting_free_fn, c};
    atomic_init(&c->live_blocks, 0);
    atomic_init(&c->live_bytes, 0);
    atomic_init(&c->total_blocks, 0);
}

/* ------------------------------------------------------------------ */
/* Faults                                                              */
/* ------------------------------------------------------------------ */

void scenario_fault_text(scenario_fault *f)
{
    if (f->flags & FAULT_LOST)
        snprintf(f->text, sizeof f->text, "%s:%llu:lost", f->op, (unsigned long long)f->n);
    else
        snprintf(f->text, sizeof f->text, "%s:%llu:%s%s", f->op, (unsigned long long)f->n,
                 accel_result_name(f->result), (f->flags & FAULT_ALWAYS) ? ":always" : "");
}

bool scenario_fault_parse(const char *text, scenario_fault *f)
{
    static char op[64];
    char res[64] = "", flag[16] = "";
    unsigned long long n = 0;
    memset(f, 0, sizeof *f);
    if (sscanf(text, "%63[a-z_]:%llu:%63[A-Za-z_]:%15s", op, &n, res, flag) < 3 || n == 0)
        return false;
    f->op = op;
    f->n = n;
    if (strcmp(res, "lost") == 0) {
        f->result = ACCEL_ERROR_DEVICE_LOST;
        f->flags = FAULT_LOST;
    } else if (!accel_result_parse(res, &f->result)) {
        return false;
    }
    if (strcmp(flag, "always") == 0)
        f->flags |= FAULT_ALWAYS;
    else if (flag[0])
        return false;
    scenario_fault_text(f);
    return true;
}

salvo_status scenario_expected_status(accel_result result, unsigned flags)
{
    if (flags & FAULT_LOST)
        return SALVO_ERROR_DEVICE_LOST;
    switch (result) {
    case ACCEL_ERROR_DEVICE_LOST: return SALVO_ERROR_DEVICE_LOST;
    case ACCEL_ERROR_OUT_OF_DEVICE_MEMORY: return SALVO_ERROR_OUT_OF_DEVICE_MEMORY;
    case ACCEL_ERROR_OUT_OF_HOST_MEMORY: return SALVO_ERROR_OUT_OF_HOST_MEMORY;
    case ACCEL_TIMEOUT: return SALVO_TIMEOUT;
    default: return SALVO_ERROR_UNKNOWN;
    }
}

/* ------------------------------------------------------------------ */
/* The scenario                                                        */
/* ------------------------------------------------------------------ */

static _Atomic int host_calls_run;

static void host_call_count(void *user)
{
    (void)user;
    atomic_fetch_add(&host_calls_run, 1);
}

typedef struct run {
    const scenario_config *cfg;
    scenario_result *res;
    int call;
} run;

static void run_log(void *user, salvo_log_level level, const char *file, int line,
                    const char *message)
{
    (void)line;
    run *r = user;
    const char *inj = file && strcmp(file, "accel_fault.c") == 0 ? strstr(message, "fault injected: ")
                                                                   : NULL;
    if (inj) {
        r->res->injections_logged++;
        inj += strlen("fault injected: ");
        for (int i = 0; accel_fault_ops[i] && i < 64; i++) {
            size_t n = strlen(accel_fault_ops[i]);
            if (strncmp(inj, accel_fault_ops[i], n) == 0 && inj[n] == ' ')
                r->res->injected_ops |= 1ull << i;
        }
    }
    if (level == SALVO_LOG_ERROR)
        r->res->error_logs++;
    if (r->cfg->echo_log)
        fprintf(stderr, "  log[%d] %s\n", (int)level, message);
}

/* Record one public call's status; false when it failed (and the
 * scenario stops). */
static bool step(run *r, const char *name, int index, salvo_status st)
{
    r->call++;
    if (r->cfg->after_call)
        r->cfg->after_call(r->cfg->user, r->call, name, index, st);
    if (st >= 0 && st != SALVO_TIMEOUT)
        return true;
    scenario_result *res = r->res;
    if (res->failures++ == 0) {
        res->first_call = r->call;
        if (index >= 0)
            snprintf(res->first_name, sizeof res->first_name, "%s #%d", name, index + 1);
        else
            snprintf(res->first_name, sizeof res->first_name, "%s", name);
        res->first_status = st;
        snprintf(res->first_msg, sizeof res->first_msg, "%s", salvo_last_error());
    }
    return false;
}

static salvo_status add(salvo_stream *st, salvo_kernel *k, salvo_buffer *b, uint32_t value)
{
    static const uint32_t groups[3] = {SCENARIO_N / 64, 1, 1};
    const salvo_binding bind = {.binding = 0, .buffer = b};
    const uint32_t push[2] = {SCENARIO_N, value};
    return salvo_launch(st, k, groups, &bind, 1, push, sizeof push);
}

/* add, its workgroup counts read from counts. */
static salvo_status add_indirect(salvo_stream *st, salvo_kernel *k, salvo_buffer *b,
                                 salvo_buffer *counts)
{
    const salvo_binding bind = {.binding = 0, .buffer = b};
    const uint32_t push[2] = {SCENARIO_N, 1};
    return salvo_launch_indirect(st, k, counts, 0, &bind, 1, push, sizeof push);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

salvo_status scenario_kernel_create(salvo_device *dev, salvo_kernel **out)
{
    static const salvo_spec_constant local = {0, 64};
    const salvo_kernel_desc kd = {.spirv = add_spv, .spirv_size = sizeof add_spv, .name = "add",
                                  .spec_constants = &local, .spec_constant_count = 1};
    return salvo_kernel_create(dev, &kd, out);
}

#define X_INIT(i) (3u * (uint32_t)(i))
#define Y_INIT 7u

void scenario_run(const scenario_config *cfg, const scenario_fault *fault, scenario_result *res)
{
    memset(res, 0, sizeof *res);
    double t0 = now_s();
    run r = {cfg, res, 0};
    counting_alloc ca;
    counting_alloc_init(&ca);
    salvo_device_desc desc = {
        .batch_size = SCENARIO_BATCH,
        .fence_timeout_s = cfg->fence_timeout_s,
        .log = run_log,
        .log_user = &r,
        .allocator = &ca.a,
        .flags = cfg->flags,
    };
    static uint32_t xs[SCENARIO_N], ys[SCENARIO_N]; /* runs are never concurrent */
    salvo_device *dev = NULL;
    salvo_buffer *x = NULL, *y = NULL, *counts = NULL;
    salvo_kernel *k = NULL;
    salvo_stream *st[2] = {NULL, NULL};
    salvo_event *ev = NULL;
    salvo_graph *g = NULL;
    salvo_image *img = NULL, *img2 = NULL;
    salvo_sampler *smp = NULL;
    bool capturing = false;

    if (!step(&r, "device_create", -1, cfg->open(cfg->user, &desc, fault, &dev)))
        goto failed;
    res->device_opened = true;
    if (!step(&r, "buffer_create DEVICE", -1,
              salvo_buffer_create(dev, sizeof xs, SALVO_DOMAIN_DEVICE, &x)) ||
        !step(&r, "buffer_create HOST", -1,
              salvo_buffer_create(dev, sizeof ys, SALVO_DOMAIN_HOST, &y)))
        goto failed;
    for (uint32_t i = 0; i < SCENARIO_N; i++) {
        xs[i] = X_INIT(i);
        ys[i] = Y_INIT;
    }
    if (!step(&r, "buffer_write DEVICE", -1, salvo_buffer_write(x, 0, xs, sizeof xs)) ||
        !step(&r, "buffer_write HOST", -1, salvo_buffer_write(y, 0, ys, sizeof ys)))
        goto failed;
    if (!step(&r, "kernel_create", -1, scenario_kernel_create(dev, &k)) ||
        !step(&r, "stream_create A", -1, salvo_stream_create(dev, NULL, &st[0])) ||
        !step(&r, "stream_create B", -1, salvo_stream_create(dev, NULL, &st[1])) ||
        !step(&r, "event_create", -1, salvo_event_create(dev, &ev)))
        goto failed;
    for (int i = 0; i < SCENARIO_LAUNCHES; i++)
        if (!step(&r, "launch A", i, add(st[0], k, x, 1)))
            goto failed;
    if (!step(&r, "event_record A", -1, salvo_event_record(ev, st[0])) ||
        !step(&r, "stream_wait_event B", -1, salvo_stream_wait_event(st[1], ev)))
        goto failed;
    /* B continues A's work on x (after the event) and works on y alone. */
    for (int i = 0; i < SCENARIO_LAUNCHES; i++)
        if (!step(&r, "launch B", i, add(st[1], k, (i % 2) ? y : x, 1)))
            goto failed;
    /* A bounded wait for the event, and B polled until its work is over
     * (a failure of it is reported there, once). */
    if (!step(&r, "event_wait A", -1, salvo_event_wait(ev, 10ull * 1000 * 1000 * 1000)))
        goto failed;
    salvo_status polled_b = SALVO_NOT_READY;
    for (double end = now_s() + 10; polled_b == SALVO_NOT_READY && now_s() < end;)
        polled_b = salvo_stream_query(st[1]);
    if (!step(&r, "stream_query B", -1, polled_b == SALVO_NOT_READY ? SALVO_OK : polled_b))
        goto failed;
    if (!step(&r, "synchronize A", -1, salvo_stream_synchronize(st[0])) ||
        !step(&r, "synchronize B", -1, salvo_stream_synchronize(st[1])))
        goto failed;
    /* The event's GPU time (where the device has timestamps). */
    uint64_t ev_ns = 0;
    salvo_status elapsed = salvo_event_elapsed(ev, ev, &ev_ns);
    if (!step(&r, "event_elapsed A", -1, elapsed == SALVO_ERROR_UNSUPPORTED ? SALVO_OK : elapsed))
        goto failed;
    /* A copy within the HOST buffer (the copy queue's work where there is
     * one), then a launch on y after it in the same stream: y's elements
     * are all equal, so the copy changes no value. */
    /* And a fill of y with the value it holds by now (B added 1 to it
     * every other launch, where dispatches compute), and one of all but
     * its first and last bytes (partial words at both ends), the pattern
     * turned by the one byte it starts after: no value changes either.
     * Then an indirect launch on x, its counts in a HOST buffer. */
    uint32_t y_now = Y_INIT + (cfg->dispatch_computes ? SCENARIO_LAUNCHES / 2 : 0);
    unsigned char y_bytes[4], turned[4];
    memcpy(y_bytes, &y_now, 4);
    for (int i = 0; i < 4; i++)
        turned[i] = y_bytes[(i + 1) % 4];
    const uint32_t groups[3] = {SCENARIO_N / 64, 1, 1};
    if (!step(&r, "copy HOST A", -1,
              salvo_copy(st[0], y, 0, y, sizeof ys / 2, sizeof ys / 2)) ||
        !step(&r, "fill HOST A", -1, salvo_fill(st[0], y, 0, sizeof ys, y_now)) ||
        !step(&r, "fill_pattern HOST A", -1,
              salvo_fill_pattern(st[0], y, 1, sizeof ys - 4, turned, 4)) ||
        !step(&r, "launch A after copy", -1, add(st[0], k, y, 1)) ||
        !step(&r, "buffer_create counts", -1,
              salvo_buffer_create(dev, sizeof groups, SALVO_DOMAIN_HOST, &counts)) ||
        !step(&r, "buffer_write counts", -1,
              salvo_buffer_write(counts, 0, groups, sizeof groups)) ||
        !step(&r, "launch_indirect A", -1, add_indirect(st[0], k, x, counts)) ||
        !step(&r, "synchronize A again", -1, salvo_stream_synchronize(st[0])))
        goto failed;
    /* Stream transfers and a host call on A: y written with the value it
     * holds, a host call, y read back in stream order. */
    uint32_t y_after = y_now + (cfg->dispatch_computes ? 1 : 0);
    bool host_side_bad = false;
    for (uint32_t i = 0; i < SCENARIO_N; i++)
        ys[i] = y_after;
    atomic_store(&host_calls_run, 0);
    if (!step(&r, "stream_write A", -1, salvo_stream_write(st[0], y, 0, ys, sizeof ys)) ||
        !step(&r, "host_call A", -1, salvo_stream_host_call(st[0], host_call_count, NULL)) ||
        !step(&r, "stream_read A", -1, salvo_stream_read(st[0], y, 0, ys, sizeof ys)) ||
        !step(&r, "event_record A host", -1, salvo_event_record(ev, st[0])))
        goto failed;
    /* Polled, as a program may: the fake never blocks in a wait, so a
     * synchronize could not sit out salvo's host-call thread there. */
    salvo_status polled = SALVO_NOT_READY;
    for (double end = now_s() + 10; polled == SALVO_NOT_READY && now_s() < end;)
        polled = salvo_event_query(ev);
    if (!step(&r, "event_query A host", -1, polled == SALVO_NOT_READY ? SALVO_OK : polled) ||
        !step(&r, "synchronize A host", -1, salvo_stream_synchronize(st[0])))
        goto failed;
    for (uint32_t i = 0; i < SCENARIO_N; i++)
        if (ys[i] != y_after)
            host_side_bad = true;
    if (atomic_load(&host_calls_run) != 1)
        host_side_bad = true;
    /* An image of y's size: written from the host with y's values, y
     * copied into it, from it into a second image and from that back out
     * on A (no value changes), read back; and a sampler. */
    salvo_image_desc img_desc = {SALVO_IMAGE_2D, SALVO_FORMAT_R32_UINT, 32, SCENARIO_N / 32, 1, 1, 0};
    if (!step(&r, "image_create", -1, salvo_image_create(dev, &img_desc, &img)) ||
        !step(&r, "image_create copy", -1, salvo_image_create(dev, &img_desc, &img2)) ||
        !step(&r, "sampler_create", -1, salvo_sampler_create(dev, NULL, &smp)) ||
        !step(&r, "image_write", -1, salvo_image_write(img, NULL, ys, sizeof ys)) ||
        !step(&r, "copy_buffer_to_image A", -1,
              salvo_copy_buffer_to_image(st[0], y, 0, img, NULL)) ||
        !step(&r, "copy_image A", -1, salvo_copy_image(st[0], img, NULL, img2, NULL)) ||
        !step(&r, "copy_image_to_buffer A", -1,
              salvo_copy_image_to_buffer(st[0], img2, NULL, y, 0)) ||
        !step(&r, "synchronize A image", -1, salvo_stream_synchronize(st[0])))
        goto failed;
    memset(ys, 0, sizeof ys);
    if (!step(&r, "image_read", -1, salvo_image_read(img, NULL, ys, sizeof ys)))
        goto failed;
    for (uint32_t i = 0; i < SCENARIO_N; i++)
        if (ys[i] != y_after)
            host_side_bad = true;
    /* A graph of GRAPH_NODES launches on x, replayed twice, updated (to
     * the same value: recorded again, the data unchanged), replayed once
     * more. */
    if (!step(&r, "begin_capture A", -1, salvo_stream_begin_capture(st[0])))
        goto failed;
    capturing = true;
    for (int i = 0; i < GRAPH_NODES; i++)
        if (!step(&r, "capture launch A", i, add(st[0], k, x, 1)))
            goto failed;
    if (!step(&r, "capture launch_indirect A", -1, add_indirect(st[0], k, x, counts)))
        goto failed;
    capturing = false; /* over, whatever end_capture returns */
    if (!step(&r, "end_capture A", -1, salvo_stream_end_capture(st[0], &g)) ||
        !step(&r, "graph_launch A", 0, salvo_graph_launch(g, st[0])) ||
        !step(&r, "graph_launch A", 1, salvo_graph_launch(g, st[0])))
        goto failed;
    const uint32_t push[2] = {SCENARIO_N, 1};
    if (!step(&r, "graph_set_push", -1, salvo_graph_set_push(g, 1, push, sizeof push)) ||
        !step(&r, "graph_launch A", 2, salvo_graph_launch(g, st[0])) ||
        !step(&r, "synchronize A graph", -1, salvo_stream_synchronize(st[0])))
        goto failed;
    memset(xs, 0, sizeof xs);
    memset(ys, 0, sizeof ys);
    if (!step(&r, "buffer_read DEVICE", -1, salvo_buffer_read(x, 0, xs, sizeof xs)) ||
        !step(&r, "buffer_read HOST", -1, salvo_buffer_read(y, 0, ys, sizeof ys)))
        goto failed;
    res->completed = true;
    res->data_ok = true;
    /* A launches on x; B, after the event, on x and y in turn; A's
     * indirect launch, and the graph's. */
    uint32_t dx = cfg->dispatch_computes ? SCENARIO_LAUNCHES + (SCENARIO_LAUNCHES + 1) / 2 +
                                               1 + GRAPH_REPLAYS * (GRAPH_NODES + 1)
                                         : 0;
    uint32_t dy = cfg->dispatch_computes ? SCENARIO_LAUNCHES / 2 + 1 : 0;
    for (uint32_t i = 0; i < SCENARIO_N; i++)
        if (xs[i] != X_INIT(i) + dx || ys[i] != Y_INIT + dy)
            res->data_ok = false;
    if (host_side_bad)
        res->data_ok = false;
    goto cleanup;

failed:
    /* A failed call leaves a capture going: end it as a program would. */
    if (capturing && salvo_stream_end_capture(st[0], &g) != SALVO_OK)
        g = NULL;
    if (dev && cfg->probe) {
        /* Reported once: a later wait must not report it again. */
        for (int i = 0; i < 2; i++) {
            if (st[i]) {
                res->resync[i] = salvo_stream_synchronize(st[i]);
                res->resync_done[i] = true;
                snprintf(res->resync_msg[i], sizeof res->resync_msg[i], "%s", salvo_last_error());
            }
        }
        /* Still usable: a fresh launch and its wait. */
        for (int i = 0; i < 2 && k && x; i++) {
            if (st[i]) {
                salvo_status s = add(st[i], k, x, 0);
                if (s == SALVO_OK)
                    s = salvo_stream_synchronize(st[i]);
                res->recovery[i] = s;
                res->recovery_done[i] = true;
            }
        }
    }

    /* Work the failed call left recorded and never waited for goes at a
     * drain point: this is one, so that the check after the destroys below
     * finds their releases run, not waiting for a drain point that never
     * comes. Its status is not the scenario's. (Only here: a clean run
     * makes no call of its own after its last step.) */
    if (dev)
        (void)salvo_device_synchronize(dev);

cleanup:
    if (cfg->before_cleanup)
        cfg->before_cleanup(cfg->user);
    salvo_graph_destroy(g);
    salvo_sampler_destroy(smp);
    salvo_image_destroy(img2);
    salvo_image_destroy(img);
    salvo_event_destroy(ev);
    salvo_stream_destroy(st[1]);
    salvo_stream_destroy(st[0]);
    salvo_kernel_destroy(k);
    salvo_buffer_destroy(counts);
    salvo_buffer_destroy(y);
    salvo_buffer_destroy(x);
    if (dev) {
        res->stats_taken = salvo_device_stats(dev, &res->end_stats) == SALVO_OK;
        res->injections_logged_at_destroy = res->injections_logged;
        if (cfg->before_destroy)
            cfg->before_destroy(cfg->user, dev);
        res->lost = salvo_device_is_lost(dev);
        salvo_device_destroy(dev);
    }
    res->alloc_live_blocks = atomic_load(&ca.live_blocks);
    res->alloc_live_bytes = atomic_load(&ca.live_bytes);
    res->alloc_total_blocks = atomic_load(&ca.total_blocks);
    res->seconds = now_s() - t0;
}

/* ------------------------------------------------------------------ */
/* Checks                                                              */
/* ------------------------------------------------------------------ */

#define WHY(...)                                                                               \
    do {                                                                                       \
        snprintf(why, why_size, __VA_ARGS__);                                                  \
        return false;                                                                          \
    } while (0)

#define NAME(s) salvo_status_string(s)

static bool idle_and_empty(const scenario_result *r, char *why, size_t why_size)
{
    if (!r->stats_taken)
        WHY("no stats before destroy");
    const salvo_stats *s = &r->end_stats;
    if (s->live_buffers || s->live_kernels || s->live_streams || s->live_events ||
        s->live_gates || s->live_buffer_bytes || s->releases_pending || s->launches_pending ||
        s->live_images || s->live_image_bytes || s->live_samplers)
        WHY("after every object was destroyed: live buffers %llu kernels %llu streams %llu "
            "events %llu gates %llu bytes %llu images %llu (%llu bytes) samplers %llu, "
            "releases pending %llu, launches pending %llu",
            (unsigned long long)s->live_buffers, (unsigned long long)s->live_kernels,
            (unsigned long long)s->live_streams, (unsigned long long)s->live_events,
            (unsigned long long)s->live_gates, (unsigned long long)s->live_buffer_bytes,
            (unsigned long long)s->live_images, (unsigned long long)s->live_image_bytes,
            (unsigned long long)s->live_samplers, (unsigned long long)s->releases_pending,
            (unsigned long long)s->launches_pending);
    return true;
}

/* An expired wait is SALVO_TIMEOUT where the call's work was done (a
 * synchronize), SALVO_ERROR_TIMEOUT where it was not (a launch that found
 * no free slot, a transfer): both are the injected timeout. */
static bool is_expected(salvo_status s, salvo_status expect)
{
    return s == expect || (expect == SALVO_TIMEOUT && s == SALVO_ERROR_TIMEOUT);
}

/* A failed batch's report lists what it held: the scenario's kernel, or
 * its copy (a batch of copies alone on a copy queue). */
static bool names_work(const char *msg)
{
    /* A launch recorded ahead (core/ahead.h) ends a recording of its own:
     * where that fails, the launch's call reports it, naming its kernel. */
    if (strstr(msg, "launch of kernel 'add'"))
        return true;
    const char *list = strstr(msg, "kernels: ");
    return list && (strstr(list, "add") || strstr(list, "(copy)") || strstr(list, "(fill)") ||
                    strstr(list, "(host call)") || strstr(list, "(event)") ||
                    strstr(list, "(image copy)") ||
                    strstr(list, "(image to image)"));
}

bool scenario_check(const scenario_fault *fault, bool fired, bool probe, const scenario_result *r,
                    char *why, size_t why_size)
{
    bool transient = !(fault->flags & (FAULT_ALWAYS | FAULT_LOST));
    salvo_status expect = scenario_expected_status(fault->result, fault->flags);
    /* A host call's gate the driver never lets salvo raise would hold the
     * stream's later work for ever: salvo takes the device for lost
     * (src/api/host_call.c). */
    if (strcmp(fault->op, "timeline_signal") == 0 && (fault->flags & FAULT_ALWAYS))
        expect = SALVO_ERROR_DEVICE_LOST;
    bool lost_fault = expect == SALVO_ERROR_DEVICE_LOST;

    if (r->alloc_live_blocks || r->alloc_live_bytes)
        WHY("host memory leaked: %lld block(s), %lld byte(s) live after device destroy",
            (long long)r->alloc_live_blocks, (long long)r->alloc_live_bytes);
    if (!fired || r->completed) {
        if (!r->completed)
            WHY("nothing was injected, yet call %d (%s) returned %s: %s", r->first_call,
                r->first_name, NAME(r->first_status), r->first_msg);
        if (!r->data_ok)
            WHY("completed%s, but the data read back is wrong",
                fired ? " (the failure was absorbed)" : "");
        if (r->lost)
            WHY("completed, yet the device is marked lost");
        return idle_and_empty(r, why, why_size);
    }

    /* The run failed: once, with the status of what was injected. */
    if (!is_expected(r->first_status, expect))
        WHY("call %d (%s) returned %s, expected %s: %s", r->first_call, r->first_name,
            NAME(r->first_status), NAME(expect), r->first_msg);
    if (r->failures != 1)
        WHY("%u failures reported", r->failures);
    if (!r->first_msg[0])
        WHY("call %d (%s) returned %s with no message", r->first_call, r->first_name,
            NAME(r->first_status));
    /* A batch that failed (refused, or lost while in flight) is reported,
     * with the kernels it held, to its stream: by the failing call, or by
     * that stream's next synchronize when another stream's call found it. */
    static const char *const batch_ops[] = {"cmd_end", "fence_reset", "submit", "fence_wait",
                                            "fence_status"};
    for (size_t i = 0; i < sizeof batch_ops / sizeof batch_ops[0] && probe; i++)
        if (strcmp(fault->op, batch_ops[i]) == 0 && expect != SALVO_TIMEOUT &&
            r->device_opened && !strstr(r->first_name, "buffer_") /* a transfer */ &&
            strncmp(r->first_name, "image_", 6) != 0 /* an image's transfer (or init) */ &&
            !names_work(r->first_msg) && !names_work(r->resync_msg[0]) &&
            !names_work(r->resync_msg[1]))
            WHY("call %d (%s) returned %s, and no report named the failed batch's kernels: %s",
                r->first_call, r->first_name, NAME(r->first_status), r->first_msg);
    if (!r->device_opened)
        return true;
    if (lost_fault && !r->lost)
        WHY("call %d (%s) reported device loss, but salvo_device_is_lost says no",
            r->first_call, r->first_name);
    if (!lost_fault && r->lost)
        WHY("a %s failure marked the device lost", NAME(expect));
    if (!probe)
        return r->lost ? idle_and_empty(r, why, why_size) : true;

    static const char *const names[2] = {"A", "B"};
    /* An event's look at a batch that failed reports it without taking it
     * from the batch's stream (salvo.h, salvo_event_synchronize): that
     * stream's synchronize may report it once more. */
    bool seen_by_event = strncmp(r->first_name, "event_", 6) == 0;
    for (int i = 0; i < 2; i++) {
        if (!r->resync_done[i])
            continue;
        salvo_status s = r->resync[i];
        bool again = seen_by_event && s == r->first_status;
        if (r->lost ? s != SALVO_ERROR_DEVICE_LOST
                    : transient ? s != SALVO_OK && !again
                                : (s != SALVO_OK && !is_expected(s, expect)))
            WHY("after call %d (%s) returned %s, synchronize %s returned %s (%s)", r->first_call,
                r->first_name, NAME(r->first_status), names[i], NAME(s),
                s == r->first_status ? "reported twice" : "a new failure");
    }
    for (int i = 0; i < 2; i++) {
        if (!r->recovery_done[i])
            continue;
        salvo_status s = r->recovery[i];
        if (r->lost ? s != SALVO_ERROR_DEVICE_LOST
                    : transient ? s != SALVO_OK : (s != SALVO_OK && !is_expected(s, expect)))
            WHY("after call %d (%s) returned %s, a fresh launch + synchronize on %s returned %s",
                r->first_call, r->first_name, NAME(r->first_status), names[i], NAME(s));
    }
    if (transient || r->lost)
        return idle_and_empty(r, why, why_size);
    return true;
}

/* ------------------------------------------------------------------ */
/* The sweep                                                           */
/* ------------------------------------------------------------------ */

enum {
    R_LOST = 1u << 0,
    R_OOM_DEVICE = 1u << 1,
    R_OOM_HOST = 1u << 2,
    R_TIMEOUT = 1u << 3
};

/* What each operation can return in Vulkan (the calls behind it in
 * accel/vulkan/). Skipped, because Vulkan cannot return them:
 *   VK_TIMEOUT        everywhere but fence_wait and timeline_wait: only
 *                     vkWaitForFences and vkWaitSemaphores take a timeout;
 *   VK_ERROR_DEVICE_LOST from enumerate (vkCreateInstance,
 *                     vkEnumeratePhysicalDevices: no device yet), from the
 *                     creating calls (vkCreateBuffer, vkAllocateMemory,
 *                     vkMapMemory, vkBindBufferMemory, vkCreate*Pipelines,
 *                     vkCreateDescriptorPool, vkCreateCommandPool,
 *                     vkCreateFence, vkCreateSemaphore) and from recording
 *                     (vkBegin/End/ResetCommandBuffer,
 *                     vkAllocateDescriptorSets), vkResetFences and
 *                     vkSignalSemaphore;
 *   VK_ERROR_OUT_OF_*_MEMORY from fence_status (vkGetFenceStatus returns
 *                     only SUCCESS, NOT_READY and DEVICE_LOST);
 *   everything from descpool_reset (vkResetDescriptorPool always succeeds).
 * Device loss itself can still be noticed at any of them: the "lost"
 * variant (the device is lost from call n on, every operation says so)
 * runs for every operation. */
static const struct {
    const char *op;
    unsigned can;
} matrix[] = {
    {"enumerate", R_OOM_DEVICE | R_OOM_HOST},
    {"device_open", R_LOST | R_OOM_DEVICE | R_OOM_HOST},
    {"queue_wait_idle", R_LOST | R_OOM_DEVICE | R_OOM_HOST},
    {"buffer_create", R_OOM_DEVICE | R_OOM_HOST},
    {"pipeline_create", R_OOM_DEVICE | R_OOM_HOST},
    {"descpool_create", R_OOM_DEVICE | R_OOM_HOST},
    {"descpool_reset", 0},
    {"cmd_create", R_OOM_DEVICE | R_OOM_HOST},
    {"cmd_begin", R_OOM_DEVICE | R_OOM_HOST},
    {"cmd_create_reusable", R_OOM_DEVICE | R_OOM_HOST},
    {"cmd_begin_reusable", R_OOM_DEVICE | R_OOM_HOST},
    {"cmd_begin_resubmit", R_OOM_DEVICE | R_OOM_HOST},
    {"cmd_end", R_OOM_DEVICE | R_OOM_HOST},
    {"cmd_reset", R_OOM_DEVICE | R_OOM_HOST},
    {"cmd_dispatch", R_OOM_DEVICE | R_OOM_HOST},
    {"fence_create", R_OOM_DEVICE | R_OOM_HOST},
    {"fence_reset", R_OOM_DEVICE | R_OOM_HOST},
    {"fence_status", R_LOST},
    {"fence_wait", R_LOST | R_OOM_DEVICE | R_OOM_HOST | R_TIMEOUT},
    {"submit", R_LOST | R_OOM_DEVICE | R_OOM_HOST},
    {"timeline_create", R_OOM_DEVICE | R_OOM_HOST},
    {"timeline_signal", R_OOM_DEVICE | R_OOM_HOST},
    {"timeline_value", R_LOST | R_OOM_DEVICE | R_OOM_HOST},
    {"timeline_wait", R_LOST | R_OOM_DEVICE | R_OOM_HOST | R_TIMEOUT},
    {"image_create", R_OOM_DEVICE | R_OOM_HOST},
    {"image_view_create", R_OOM_DEVICE | R_OOM_HOST},
    {"sampler_create", R_OOM_DEVICE | R_OOM_HOST},
    {"cmd_image_init", R_OOM_DEVICE | R_OOM_HOST},
    /* vkAllocateDescriptorSets; and, for the fill's kernel at its first
     * use, vkCreateComputePipelines and the layouts. */
    {"cmd_dispatch_indirect", R_OOM_DEVICE | R_OOM_HOST},
    {"cmd_fill_bytes", R_OOM_DEVICE | R_OOM_HOST},
};

static unsigned can_return(const char *op)
{
    for (size_t i = 0; i < sizeof matrix / sizeof matrix[0]; i++)
        if (strcmp(matrix[i].op, op) == 0)
            return matrix[i].can;
    fprintf(stderr, "scenario: operation '%s' is missing from the sweep's matrix\n", op);
    abort();
}

enum { SWEEP_SAMPLES = 30 }; /* about how many n a sampled operation gets */

/* Operations a run calls until the device is done, so that how many
 * times depends on how long the device takes: a run slower than the clean
 * one calls them more often. Their sweep stops one past the clean run's
 * count (the calls a slower run adds are more of the same look), where
 * another operation's goes on while the fault still fires. */
static bool polled(const char *op)
{
    return strcmp(op, "fence_status") == 0 || strcmp(op, "timeline_value") == 0;
}

typedef struct op_totals {
    uint64_t runs, points, absorbed, failed;
    uint64_t max_n;
} op_totals;

static bool default_fired(const scenario_fault *fault, const scenario_result *r)
{
    if (r->injections_logged > 0)
        return true;
    /* enumerate runs before the device opens: nothing logs its faults,
     * but a device that did not open failed because of one. */
    return strcmp(fault->op, "enumerate") == 0 && !r->device_opened;
}

/* For an operation called c times in a run: the first calls, every
 * stride-th, the middle (cmd_dispatch: the last launch before the event
 * and the first after), the last ones and one past the end. */
static int sample_points(uint64_t c, bool coarse, uint64_t *pts, int max)
{
    uint64_t stride = c / SWEEP_SAMPLES > 1 ? c / SWEEP_SAMPLES : 1;
    int n = 0;
    for (uint64_t v = 1; v <= c + 1 && n < max; v++) {
        bool take = coarse ? v <= 2 || v == c / 2 || v == c / 2 + 1 || v >= c
                           : v <= 3 || v % stride == 0 || v == c / 2 || v == c / 2 + 1 ||
                                 v >= c - 1;
        if (take)
            pts[n++] = v;
    }
    return n;
}

static void sweep_case(sweep_backend *b, const char *op, uint64_t calls, accel_result result,
                       unsigned flags, bool probe, op_totals *ot)
{
    uint64_t pts[2 * SWEEP_SAMPLES + 16];
    int npts = 0;
    bool sample = b->sample_above && calls > b->sample_above;
    if (sample)
        npts = sample_points(calls, b->coarse, pts, (int)(sizeof pts / sizeof pts[0]));
    scenario_config cfg = b->cfg;
    cfg.probe = probe;
    uint64_t n = 0;
    for (int i = 0;; i++) {
        if (sample && i < npts)
            n = pts[i];
        else
            n++;
        if (polled(op) && n > calls + 1)
            return;
        if (n > calls + 1000) {
            fprintf(stderr, "FAIL [%s] %s: still injecting at call %llu of %llu\n", b->name, op,
                    (unsigned long long)n, (unsigned long long)calls);
            ot->failed++;
            return;
        }
        scenario_fault fault = {.op = op, .n = n, .result = result, .flags = flags};
        scenario_fault_text(&fault);
        scenario_result r;
        char what[400];
        snprintf(what, sizeof what,
                 "[%s] SALVO_FAULT=%s: %s call %llu (of %llu in a clean run) returns %s, %s; "
                 "device flags 0x%x, %s",
                 b->name, fault.text, op, (unsigned long long)n, (unsigned long long)calls,
                 accel_result_name(result),
                 flags & FAULT_LOST     ? "and the device is lost from then on"
                 : flags & FAULT_ALWAYS ? "and every later call too"
                                        : "once",
                 (unsigned)cfg.flags, probe ? "with probes" : "without probes");
        scenario_watchdog(b->watchdog_s, what);
        scenario_run(&cfg, &fault, &r);
        scenario_watchdog(0, NULL);
        bool fired = b->fired ? b->fired(cfg.user, &fault, &r) : default_fired(&fault, &r);
        char why[768] = "", why2[512] = "";
        bool ok = scenario_check(&fault, fired, probe, &r, why, sizeof why);
        /* Always called: the backend frees its per-run state there. */
        if (b->after_run && !b->after_run(cfg.user, &r, why2, sizeof why2) && ok) {
            ok = false;
            snprintf(why, sizeof why, "%s", why2);
        }
        ot->runs++;
        if (fired) {
            ot->points++;
            ot->absorbed += r.completed;
            if (n > ot->max_n)
                ot->max_n = n;
        }
        if (!ok) {
            ot->failed++;
            fprintf(stderr, "FAIL %s: %s\n", what, why);
        }
        if (!fired)
            return;
    }
}

void sweep_run(sweep_backend *b, const sweep_calls *calls, sweep_totals *t)
{
    memset(t, 0, sizeof *t);
    double t0 = now_s();
    printf("%-16s %6s %7s %6s %8s %6s %7s\n", "operation", "calls", "points", "runs", "absorbed",
           "failed", "seconds");
    fflush(stdout);
    for (int i = 0; accel_fault_ops[i]; i++) {
        const char *op = accel_fault_ops[i];
        unsigned can = can_return(op);
        bool wanted = !b->only;
        for (int j = 0; b->only && b->only[j]; j++)
            wanted |= strcmp(b->only[j], op) == 0;
        /* SALVO_SWEEP_OPS=op,op,...: only those (by hand, e.g. to split a
         * sanitizer run into processes). */
        const char *ops = getenv("SALVO_SWEEP_OPS");
        if (ops) {
            size_t len = strlen(op);
            const char *at = strstr(ops, op);
            while (at && ((at != ops && at[-1] != ',') || (at[len] && at[len] != ',')))
                at = strstr(at + 1, op);
            wanted &= at != NULL;
        }
        if (!wanted)
            continue;
        struct {
            accel_result result;
            unsigned flags;
        } variants[16];
        int nv = 0;
        static const struct {
            unsigned bit;
            accel_result result;
        } results[] = {
            {R_LOST, ACCEL_ERROR_DEVICE_LOST},
            {R_OOM_DEVICE, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY},
            {R_OOM_HOST, ACCEL_ERROR_OUT_OF_HOST_MEMORY},
            {R_TIMEOUT, ACCEL_TIMEOUT},
        };
        for (size_t j = 0; j < sizeof results / sizeof results[0]; j++) {
            if (!(can & results[j].bit))
                continue;
            variants[nv].result = results[j].result;
            variants[nv++].flags = 0;
            if (b->skip_always)
                continue;
            variants[nv].result = results[j].result;
            variants[nv++].flags = FAULT_ALWAYS;
        }
        variants[nv].result = ACCEL_ERROR_DEVICE_LOST;
        variants[nv++].flags = FAULT_LOST;

        op_totals ot = {0};
        double o0 = now_s();
        for (int v = 0; v < nv; v++) {
            sweep_case(b, op, calls->calls[i], variants[v].result, variants[v].flags, true, &ot);
            if (b->both_probe_modes)
                sweep_case(b, op, calls->calls[i], variants[v].result, variants[v].flags, false,
                           &ot);
        }
        printf("%-16s %6llu %7llu %6llu %8llu %6llu %7.2f\n", op,
               (unsigned long long)calls->calls[i], (unsigned long long)ot.points,
               (unsigned long long)ot.runs, (unsigned long long)ot.absorbed,
               (unsigned long long)ot.failed, now_s() - o0);
        fflush(stdout);
        t->runs += ot.runs;
        t->points += ot.points;
        t->absorbed += ot.absorbed;
        t->failed += ot.failed;
    }
    t->seconds = now_s() - t0;
    printf("%s: %llu injection points in %llu runs (%llu absorbed), %llu failed, %.1f s\n",
           b->name, (unsigned long long)t->points, (unsigned long long)t->runs,
           (unsigned long long)t->absorbed, (unsigned long long)t->failed, t->seconds);
    fflush(stdout);
}

/* ------------------------------------------------------------------ */
/* Watchdog, and what a process that ends in the middle of a run says   */
/* ------------------------------------------------------------------ */

/* The run in progress (scenario_watchdog(_, what) to scenario_watchdog(_,
 * NULL)): a sweep's output is a table of totals, so a process that dies
 * inside a run would otherwise leave no trace of which one. Read from
 * signal handlers and atexit: written only between runs. */
static char watchdog_what[400];
static size_t watchdog_len;
static volatile sig_atomic_t run_active;

/* Only async-signal-safe calls: these run from signal handlers. */
static void say(const char *text)
{
    ssize_t ignored = write(STDERR_FILENO, text, strlen(text));
    (void)ignored;
}

static void say_run(const char *head)
{
    say(head);
    if (run_active) {
        say(" during run: ");
        ssize_t ignored = write(STDERR_FILENO, watchdog_what, watchdog_len);
        (void)ignored;
    } else {
        say(" (no scenario run in progress)");
    }
    say("\n");
}

static void on_alarm(int sig)
{
    (void)sig;
    say_run("\nwatchdog: a run did not finish in time");
    abort();
}

/* The signals that end a process with no word of their own. */
static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTERM, SIGINT};
enum { FATAL_SIGNALS = sizeof fatal_signals / sizeof fatal_signals[0] };
static struct sigaction saved_fatal[FATAL_SIGNALS];

/* Say which run, then die of the signal: a crash stays a crash. cmocka's
 * own handler (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGSYS) keeps its state per
 * thread: on a thread that is not the test's (lavapipe's queue thread, a
 * worker) it finds no test to fail and calls exit(-1), its message still
 * in that thread's buffer, so the process ends with status 255 and not a
 * word. */
static void on_fatal(int sig)
{
    const char *name = sig == SIGSEGV   ? "SIGSEGV"
                       : sig == SIGBUS  ? "SIGBUS"
                       : sig == SIGILL  ? "SIGILL"
                       : sig == SIGFPE  ? "SIGFPE"
                       : sig == SIGABRT ? "SIGABRT"
                       : sig == SIGTERM ? "SIGTERM"
                                        : "SIGINT";
    say("\nscenario: killed by ");
    say_run(name);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* exit() from inside a run (a driver, LLVM, a stray test assertion off the
 * test's thread: cmocka exits with -1 when no test can take the failure)
 * ends the process with only an exit status. */
static void on_exit_during_run(void)
{
    if (run_active)
        say_run("\nscenario: the process called exit()");
}

void scenario_watchdog(unsigned seconds, const char *what)
{
    static bool installed;
    if (!installed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_alarm;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGALRM, &sa, NULL);
        atexit(on_exit_during_run);
        installed = true;
    }
    if (what) {
        alarm(0); /* nothing reads the text while it changes */
        run_active = 0;
        snprintf(watchdog_what, sizeof watchdog_what, "%s", what);
        watchdog_len = strlen(watchdog_what);
        /* Around each run only: cmocka installs its handlers at each test
         * start and puts back what it found at the end. */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal;
        sigemptyset(&sa.sa_mask);
        for (int i = 0; i < FATAL_SIGNALS; i++)
            sigaction(fatal_signals[i], &sa, &saved_fatal[i]);
        run_active = 1;
    } else if (run_active) {
        run_active = 0;
        for (int i = 0; i < FATAL_SIGNALS; i++)
            sigaction(fatal_signals[i], &saved_fatal[i], NULL);
    }
    alarm(seconds);
}
