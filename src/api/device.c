/* The device: settings, create and destroy, queries, the live ring, and
 * the device-wide synchronize; the engine behind it is core/queue.c. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/internal.h"
#include "api/host_call.h"
#include "base/cpus.h"
#include "base/env.h"

/* ------------------------------------------------------------------ */
/* Settings                                                            */
/* ------------------------------------------------------------------ */

enum {
    MAX_BATCH = 1u << 20,
    MAX_SPIN_US = 1000000 /* a second: past that, block */
};
#define MAX_FENCE_TIMEOUT_S 1e9

/* $name as an integer in [min, max], else fallback: silently where it is
 * unset, with a warning naming the value and the fallback where it cannot
 * be used (note says what the fallback means). */
static uint64_t setting_uint(salvo_device *dev, const char *name, uint64_t min, uint64_t max,
                             uint64_t fallback, const char *note)
{
    char why[ENV_WHY_MAX];
    uint64_t v = fallback;
    if (env_uint(name, min, max, &v, why) == ENV_BAD)
        ENV_WARN(&dev->log, name, why, "%llu%s", (unsigned long long)fallback, note);
    return v;
}

/* A 0/1 flag from $name, else fallback, likewise. */
static bool setting_flag(salvo_device *dev, const char *name, bool fallback, const char *note)
{
    char why[ENV_WHY_MAX];
    bool v = fallback;
    if (env_flag(name, &v, why) == ENV_BAD)
        ENV_WARN(&dev->log, name, why, "%d%s", fallback, note);
    return v;
}

/* Depth of the program's log callbacks on this thread: they may run
 * under the device's lock. */
static _Thread_local unsigned in_user_log;

/* Validation messages are counted for the stats (and the tests), then
 * passed on to the user's callback. */
static void device_log(void *user, salvo_log_level level, const char *file, int line,
                       const char *message)
{
    salvo_device *dev = user;
    if (file && strcmp(file, "validation") == 0)
        COUNT_ADD(dev, validation_messages, 1);
    if (dev->user_log) {
        in_user_log++;
        dev->user_log(dev->user_log_user, level, file, line, message);
        in_user_log--;
    } else {
        salvo_log_print(dev->info.log_level, level, file, line, message);
    }
}

static int type_rank(salvo_device_type t)
{
    switch (t) {
    case SALVO_DEVICE_TYPE_DISCRETE: return 0;
    case SALVO_DEVICE_TYPE_INTEGRATED: return 1;
    case SALVO_DEVICE_TYPE_VIRTUAL: return 2;
    case SALVO_DEVICE_TYPE_CPU: return 3;
    default: return 4;
    }
}

/* Pick the device: exact name, else the best type (first of equals). */
void device_entries_disambiguate(salvo_device_entry *e, uint32_t n)
{
    /* Identical GPUs enumerate under one name: the second and later get
     * " #2", " #3", ... so each can be opened by name. Backwards, so the
     * names compared are still the plain ones. */
    for (uint32_t i = n; i-- > 1;) {
        uint32_t same = 0;
        for (uint32_t j = 0; j < i; j++)
            same += strcmp(e[j].name, e[i].name) == 0;
        if (!same)
            continue;
        char suffix[16];
        int len = snprintf(suffix, sizeof suffix, " #%u", same + 1);
        size_t at = strlen(e[i].name);
        if (at + (size_t)len >= SALVO_NAME_MAX)
            at = SALVO_NAME_MAX - 1 - (size_t)len;
        memcpy(e[i].name + at, suffix, (size_t)len + 1);
    }
}

static salvo_status choose_device(salvo_device *dev, const char *name, uint32_t *index,
                                  char chosen[SALVO_NAME_MAX])
{
    uint32_t count = 0;
    accel_result r = dev->acc.vt->enumerate(dev->acc.self, NULL, &count);
    /* A loader without any driver: no device, not a broken one. */
    if (r == ACCEL_ERROR_INCOMPATIBLE_DRIVER || r == ACCEL_ERROR_INITIALIZATION_FAILED)
        return DEV_FAIL(dev, SALVO_ERROR_NO_DEVICE, "no Vulkan driver (%s)", accel_result_name(r));
    if (r != ACCEL_SUCCESS && r != ACCEL_INCOMPLETE)
        return DEV_FAIL(dev, salvo_status_from_accel(r), "cannot enumerate Vulkan devices (%s)",
                        accel_result_name(r));
    if (count == 0)
        return DEV_FAIL(dev, SALVO_ERROR_NO_DEVICE, "no Vulkan device with a compute queue");
    salvo_device_entry *e = salvo_mem_calloc(dev->alloc, count, sizeof *e);
    if (!e)
        return DEV_FAIL(dev, SALVO_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
    r = dev->acc.vt->enumerate(dev->acc.self, e, &count);
    salvo_status st = SALVO_OK;
    if (r != ACCEL_SUCCESS && r != ACCEL_INCOMPLETE) {
        st = DEV_FAIL(dev, salvo_status_from_accel(r), "cannot enumerate Vulkan devices (%s)",
                      accel_result_name(r));
    } else if (name) {
        device_entries_disambiguate(e, count);
        st = SALVO_ERROR_NO_DEVICE;
        for (uint32_t i = 0; i < count && st != SALVO_OK; i++) {
            if (strcmp(e[i].name, name) == 0) {
                *index = i;
                st = SALVO_OK;
            }
        }
        if (st != SALVO_OK)
            st = DEV_FAIL(dev, SALVO_ERROR_NO_DEVICE, "no Vulkan device named '%s'", name);
    } else {
        device_entries_disambiguate(e, count);
        uint32_t best = 0;
        for (uint32_t i = 1; i < count; i++)
            if (type_rank(e[i].type) < type_rank(e[best].type))
                best = i;
        *index = best;
    }
    if (st == SALVO_OK)
        memcpy(chosen, e[*index].name, SALVO_NAME_MAX);
    salvo_mem_free(dev->alloc, e);
    return st;
}

/* ------------------------------------------------------------------ */
/* Create and destroy                                                  */
/* ------------------------------------------------------------------ */

salvo_status device_create_with_accel(const salvo_device_desc *desc, accel acc,
                                      salvo_device **out)
{
    return device_create_on(desc, acc, NULL, out);
}

salvo_status device_create_on(const salvo_device_desc *desc, accel acc, const void *import,
                              salvo_device **out)
{
    salvo_device_desc zero = {0};
    if (!desc)
        desc = &zero;
    salvo_log_sink user_sink = {desc->log, desc->log_user};
    if (desc->allocator && !desc->allocator->alloc != !desc->allocator->free) {
        acc.vt->destroy(acc.self);
        return SALVO_FAIL(&user_sink, SALVO_ERROR_INVALID_ARGUMENT,
                          "allocator: alloc and free must be given together");
    }
    if (desc->batch_size > MAX_BATCH) {
        acc.vt->destroy(acc.self);
        return SALVO_FAIL(&user_sink, SALVO_ERROR_INVALID_ARGUMENT,
                          "device_create: batch_size %u is more than %u", desc->batch_size,
                          (unsigned)MAX_BATCH);
    }
    if (isnan(desc->fence_timeout_s) || desc->fence_timeout_s < 0) {
        acc.vt->destroy(acc.self);
        return SALVO_FAIL(&user_sink, SALVO_ERROR_INVALID_ARGUMENT,
                          "device_create: fence_timeout_s %g is not a number of seconds (0: "
                          "$SALVO_FENCE_TIMEOUT_S, more than %g: no bound)",
                          desc->fence_timeout_s, MAX_FENCE_TIMEOUT_S);
    }
    salvo_device *dev = salvo_mem_calloc(desc->allocator, 1, sizeof *dev);
    if (!dev) {
        acc.vt->destroy(acc.self);
        return SALVO_FAIL(&user_sink, SALVO_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
    }
    if (desc->allocator) {
        dev->allocator_copy = *desc->allocator;
        dev->alloc = &dev->allocator_copy;
    }
    dev->user_log = desc->log;
    dev->user_log_user = desc->log_user;
    dev->log.fn = device_log;
    dev->log.user = dev;
    dev->acc = acc;

    /* desc wins, then the environment, then the defaults. Validation is
     * read first: it sets the stderr sink's default level, which the
     * warnings about the other variables go through. */
    char why[ENV_WHY_MAX];
    uint64_t validation_env = 0;
    env_status validation_st =
        import ? ENV_UNSET : env_uint("SALVO_VALIDATION", 0, 2, &validation_env, why);
    uint32_t validation = (uint32_t)validation_env;
    if (!import && (desc->flags & SALVO_DEVICE_SYNC_VALIDATION))
        validation = 2;
    else if (!import && (desc->flags & SALVO_DEVICE_VALIDATION) && validation < 1)
        validation = 1;
    /* Shader printf comes through the validation layer: it brings it on. */
    bool shader_printf = false;
    char printf_why[ENV_WHY_MAX];
    env_status printf_st =
        import ? ENV_UNSET : env_flag("SALVO_PRINTF", &shader_printf, printf_why);
    if (!import && (desc->flags & SALVO_DEVICE_PRINTF))
        shader_printf = true;
    if (shader_printf && validation < 1)
        validation = 1;
    dev->info.log_level =
        salvo_log_env_level(&user_sink, validation ? SALVO_LOG_INFO : SALVO_LOG_WARNING);
    if (validation_st == ENV_BAD)
        ENV_WARN(&dev->log, "SALVO_VALIDATION", why, "%u%s", validation,
                 validation ? " (from salvo_device_desc.flags)" : " (off)");
    if (printf_st == ENV_BAD)
        ENV_WARN(&dev->log, "SALVO_PRINTF", printf_why, "%s",
                 shader_printf ? "1 (from salvo_device_desc.flags)" : "0 (off)");

    uint64_t batch = desc->batch_size ? desc->batch_size
                                      : setting_uint(dev, "SALVO_BATCH", 1, MAX_BATCH,
                                                     DEFAULT_BATCH, " (the default)");
    dev->batch_size = batch > MAX_BATCH ? DEFAULT_BATCH : (uint32_t)batch;
    queue *q = &dev->q;
    q->acc = &dev->acc;
    q->log = &dev->log;
    q->alloc = dev->alloc;
    /* Past MAX_FENCE_TIMEOUT_S (infinity too) a bound is no bound: nanoseconds
     * of it would not fit a uint64_t. */
    double timeout = desc->fence_timeout_s > 0 && desc->fence_timeout_s <= MAX_FENCE_TIMEOUT_S
                         ? desc->fence_timeout_s
                         : 0;
    if (!(desc->fence_timeout_s > 0) &&
        env_seconds("SALVO_FENCE_TIMEOUT_S", MAX_FENCE_TIMEOUT_S, &timeout, why) == ENV_BAD)
        ENV_WARN(&dev->log, "SALVO_FENCE_TIMEOUT_S", why, "0 (no bound)");
    q->fence_timeout_ns = timeout > 0 ? (uint64_t)(timeout * 1e9) : UINT64_MAX;
    q->release_max_count = desc->release_max_count
                               ? desc->release_max_count
                               : setting_uint(dev, "SALVO_RELEASE_MAX_COUNT", 1, UINT32_MAX,
                                              DEFAULT_RELEASE_MAX_COUNT, " (the default)");
    q->release_max_bytes = desc->release_max_bytes
                               ? desc->release_max_bytes
                               : setting_uint(dev, "SALVO_RELEASE_MAX_BYTES", 1, UINT64_MAX,
                                              DEFAULT_RELEASE_MAX_BYTES, " (the default)");
    dev->force_staging = (desc->flags & SALVO_DEVICE_FORCE_STAGING) != 0;
    q->transfer_import = setting_flag(dev, "SALVO_TRANSFER_IMPORT", true, " (the default)");
    /* The default spin depends on the device's type: known once it is open. */
    uint64_t spin_us = 0;
    char spin_why[ENV_WHY_MAX];
    env_status spin_st = env_uint("SALVO_SPIN_US", 0, MAX_SPIN_US, &spin_us, spin_why);

    /* With the validation layer on (a program finding its mistakes), or
     * when asked: it costs 50 to 170 us per KB of SPIR-V, more than a
     * pipeline from a warm driver cache. */
    dev->spirv_validate =
        setting_flag(dev, "SALVO_SPIRV_VALIDATE", validation >= 1,
                     validation >= 1 ? " (the default with validation on)" : " (the default)");
    static const char *const descriptor_modes[] = {"push", "pool", NULL};
    unsigned descriptor_mode = 0;
    if (env_choice("SALVO_DESCRIPTORS", descriptor_modes, &descriptor_mode, why) == ENV_BAD)
        ENV_WARN(&dev->log, "SALVO_DESCRIPTORS", why,
                 "push (the default: push descriptors where the device has them)");
    accel_open_options opt = {
        .validation = validation >= 1,
        .sync_validation = validation >= 2,
        .pool_descriptors = (desc->flags & SALVO_DEVICE_POOL_DESCRIPTORS) || descriptor_mode == 1,
        .no_transfer_queue =
            !setting_flag(dev, "SALVO_TRANSFER_QUEUE", true, " (the copy engine's queue where there is one)"),
        .log = device_log,
        .log_user = dev,
        .pipeline_cache_path = desc->pipeline_cache_path ? desc->pipeline_cache_path
                                                         : getenv("SALVO_PIPELINE_CACHE"),
    };
    if (opt.pipeline_cache_path && !*opt.pipeline_cache_path)
        opt.pipeline_cache_path = NULL;
    char refused[256] = "";
    opt.why = refused;
    opt.why_size = sizeof refused;
    opt.printf = shader_printf;
    char chosen[SALVO_NAME_MAX] = "";
    salvo_status st = SALVO_OK;
    if (import) {
        /* The application's device: nothing to choose, no layers to enable. */
        opt.import = import;
        opt.validation = opt.sync_validation = false;
    } else {
        const char *name = desc->name ? desc->name : getenv("SALVO_DEVICE");
        if (name && !*name)
            name = NULL;
        st = choose_device(dev, name, &opt.index, chosen);
    }
    if (st == SALVO_OK) {
        accel_result r = acc.vt->device_open(acc.self, &opt, &dev->adev, &dev->caps);
        if (r != ACCEL_SUCCESS && refused[0])
            st = DEV_FAIL(dev, salvo_status_from_accel(r), "cannot open the Vulkan device: %s (%s)",
                          refused, accel_result_name(r));
        else if (r != ACCEL_SUCCESS)
            st = DEV_FAIL(dev, salvo_status_from_accel(r), "cannot open the Vulkan device (%s)",
                          accel_result_name(r));
        else if (import)
            memcpy(chosen, dev->caps.info.name, sizeof chosen);
    }
    if (st == SALVO_OK) {
        q->adev = dev->adev;
        q->host_import = dev->caps.info.host_import;
        q->push_descriptors = dev->caps.push_descriptors_used;
        q->timelines = dev->caps.info.timeline_semaphores;
        /* Streams on queues of their own order each other through timeline
         * semaphores; $SALVO_QUEUES caps how many are used. */
        uint64_t cap = setting_uint(dev, "SALVO_QUEUES", 1, UINT32_MAX, 0, " (no cap)");
        q->hw_queues = dev->caps.queue_count ? dev->caps.queue_count : 1;
        if (!dev->caps.info.timeline_semaphores)
            q->hw_queues = 1;
        /* With shader printf the layer waits, inside each submission, for
         * its work: on one queue, work behind a gate is kept on the host
         * until the gate is raised instead of being submitted to wait. */
        if (dev->caps.shader_printf)
            q->hw_queues = 1;
        /* Capped, the queues used are the first ones: the high-priority
         * one (the device's last) only when all are used. */
        q->high_queue = dev->caps.high_priority_queue && q->hw_queues > 2 &&
                        !(cap && cap < q->hw_queues);
        if (cap && cap < q->hw_queues)
            q->hw_queues = (uint32_t)cap;
        dev->caps.info.queue_count = q->hw_queues;
        dev->caps.info.high_priority_queue = q->high_queue;
        /* The copy engine's queue: streams order their batches across it
         * through their timelines. */
        q->copy_queue = dev->caps.transfer_queue && dev->caps.info.timeline_semaphores
                            ? dev->caps.queue_count
                            : NO_COPY_QUEUE;
        dev->caps.info.transfer_queue = q->copy_queue != NO_COPY_QUEUE;
        q->host_import_alignment = dev->caps.info.host_import_alignment;
        st = queue_init(q);
        if (st != SALVO_OK)
            acc.vt->device_close(acc.self, dev->adev);
    }
    if (st != SALVO_OK) {
        acc.vt->destroy(acc.self);
        salvo_mem_free(desc->allocator, dev);
        return st;
    }
    /* Spinning steals the cores a CPU device computes on: only for GPUs. */
    salvo_device_type t = dev->caps.info.type;
    bool gpu = t == SALVO_DEVICE_TYPE_DISCRETE || t == SALVO_DEVICE_TYPE_INTEGRATED ||
               t == SALVO_DEVICE_TYPE_VIRTUAL;
    if (spin_st == ENV_BAD)
        ENV_WARN(&dev->log, "SALVO_SPIN_US", spin_why, "%u (the default on %s)",
                 gpu ? DEFAULT_SPIN_US : 0, gpu ? "a GPU" : "this device");
    if (spin_st != ENV_OK)
        spin_us = gpu ? DEFAULT_SPIN_US : 0;
    q->spin_ns = spin_us * 1000;
    /* CUDA's default schedule: poll the whole wait while there are CPUs
     * to spare for it, the CPUs the creating thread may run on and its
     * container's CPU limit allows (base/cpus.h). */
    q->poll_whole = gpu && spin_st != ENV_OK && !(desc->flags & SALVO_DEVICE_BLOCKING_WAIT);
    q->pollers_max = cpus_usable("");
    salvo_log_level log_level = dev->info.log_level;
    dev->info = dev->caps.info;
    memcpy(dev->info.name, chosen, sizeof dev->info.name); /* the name it opens by */
    dev->info.push_descriptors_used = dev->caps.push_descriptors_used;
    dev->info.batch_size = dev->batch_size;
    dev->info.fence_timeout_s = timeout > 0 ? timeout : 0;
    dev->info.validation = opt.validation ? validation : 0;
    dev->info.spirv_validate = dev->spirv_validate;
    dev->info.spin_us = (uint32_t)spin_us;
    dev->info.poll_whole_wait = q->poll_whole;
    dev->info.release_max_count = (uint32_t)q->release_max_count;
    dev->info.release_max_bytes = q->release_max_bytes;
    dev->info.transfer_import = q->transfer_import;
    dev->info.pipeline_cache_file = opt.pipeline_cache_path != NULL;
    dev->info.log_level = log_level;
    dev->live.prev = dev->live.next = &dev->live;
    if (opt.validation)
        SALVO_LOG(&dev->log, SALVO_LOG_INFO,
                  "validation on: VK_LAYER_KHRONOS_validation%s; its findings are logged as "
                  "warnings and errors from \"validation\"",
                  opt.sync_validation ? " with synchronization validation" : "");
    if (dev->caps.shader_printf)
        SALVO_LOG(&dev->log, SALVO_LOG_INFO,
                  "shader printf on: what kernels print is logged at info from \"printf\" with "
                  "the kernel's name; one hardware queue, each submission waits for its work");
    SALVO_LOG(&dev->log, SALVO_LOG_INFO, "opened %s (batch %u)", dev->info.name, dev->batch_size);
    device_trace_env_start(dev);
    dev->info.trace_file = dev->q.trace != NULL;
    salvo_clear_error();
    *out = dev;
    return SALVO_OK;
}

void salvo_device_destroy(salvo_device *dev)
{
    if (!dev)
        return;
    if (host_call_running) {
        host_call_refuse(dev, "device_destroy");
        return;
    }
    /* Gates still alive open as their reclaim below would open them: no
     * work, and no host call behind it, waits for a raise that cannot come
     * (the program calls nothing else on the device now). */
    gate_open_all_for_destroy(dev);
    /* Pending host calls run first; their thread ends. */
    host_work_device_destroy(dev);
    salvo_mutex_lock(&dev->q.lock);
    uint64_t live_streams = 0;
    for (stream_engine *st = dev->q.streams; st; st = st->next)
        if (!atomic_exchange(&st->destroyed, true))
            live_streams++;
    if (live_streams)
        SALVO_LOG(&dev->log, SALVO_LOG_WARNING, "device destroyed with %llu live stream(s)",
                  (unsigned long long)live_streams);
    sched_settle_for_destroy_locked(&dev->q);
    /* Every batch that will be seen complete has been: the trace is whole. */
    device_trace_stop_locked(dev);
    sched_release_all_locked(&dev->q);
    /* What the user never released: reclaim it now (each unlinks itself). */
    dev->reclaiming = true;
    uint64_t leaked = 0;
    while (dev->live.next != &dev->live) {
        resource *r = resource_of_link(dev->live.next);
        r->release.fn(&r->release, device_is_lost(dev));
        leaked++;
    }
    if (leaked)
        SALVO_LOG(&dev->log, SALVO_LOG_WARNING,
                  "device destroyed with %llu object(s) never destroyed: reclaimed",
                  (unsigned long long)leaked);
    queue_fini_locked(&dev->q);
    timing_free_locked(&dev->q);
    transfer_free_locked(&dev->q);
    salvo_mutex_unlock(&dev->q.lock);
    queue_destroy_lock(&dev->q);
    dev->acc.vt->device_close(dev->acc.self, dev->adev);
    dev->acc.vt->destroy(dev->acc.self);
    const salvo_allocator *alloc = dev->alloc ? dev->alloc : NULL;
    salvo_allocator copy;
    if (alloc) {
        copy = *alloc;
        alloc = &copy;
    }
    salvo_mem_free(alloc, dev);
}

/* ------------------------------------------------------------------ */
/* Queries                                                             */
/* ------------------------------------------------------------------ */

bool salvo_device_is_lost(salvo_device *dev)
{
    return dev && device_is_lost(dev);
}

salvo_status salvo_device_info_get(salvo_device *dev, salvo_device_info *out)
{
    if (!dev)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "device_info: NULL device");
    if (!out)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "device_info: NULL out");
    *out = dev->info;
    salvo_clear_error();
    return SALVO_OK;
}

/* The counters, as one look: see salvo_device_stats for when the lock is
 * held. */
static void stats_read(salvo_device *dev, salvo_stats *out)
{
#define LOAD(f) atomic_load_explicit(&dev->q.n.f, memory_order_relaxed)
    *out = (salvo_stats){
        .live_buffers = LOAD(live_buffers),
        .live_kernels = LOAD(live_kernels),
        .live_streams = LOAD(live_streams),
        .live_events = LOAD(live_events),
        .live_gates = LOAD(live_gates),
        .live_graphs = LOAD(live_graphs),
        .live_images = LOAD(live_images),
        .live_image_bytes = LOAD(live_image_bytes),
        .live_samplers = LOAD(live_samplers),
        .live_buffer_bytes = LOAD(live_buffer_bytes),
        .releases_pending = retire_pending(&dev->q.retire),
        .release_bytes_pending = atomic_load(&dev->q.retire.bytes),
        .releases_run = atomic_load(&dev->q.retire.run_total),
        .launches_pending = LOAD(launches_pending),
        .launches_total = LOAD(launches_total),
        .batches_submitted = LOAD(batches_submitted),
        .barriers_emitted = LOAD(barriers_emitted),
        .transfer_bytes = LOAD(transfer_bytes),
        .transfer_bytes_imported = LOAD(transfer_bytes_imported),
        .direct_bindings = LOAD(direct_bindings),
        .validation_messages = LOAD(validation_messages),
        .replays_ahead = LOAD(replays_ahead),
        .launches_ahead = LOAD(launches_ahead),
    };
#undef LOAD
}

salvo_status salvo_device_stats(salvo_device *dev, salvo_stats *out)
{
    if (!dev)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "device_stats: NULL device");
    if (!out)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "device_stats: NULL out");
    /* Releases that found the lock busy (another thread, such as the
     * host-call worker, held it) are taken in first, so that what was
     * destroyed before this call and could go has gone. Not from a log
     * callback, which may run under the lock. */
    /* The counters are read under the lock too: a release another thread
     * (the host-call worker) runs meanwhile is counted either before or
     * after, never half (gone from pending, not yet from the live count). */
    if (in_user_log) {
        stats_read(dev, out);
    } else {
        salvo_mutex_lock(&dev->q.lock);
        if (retire_collect(&dev->q.retire))
            queue_advance_locked(&dev->q);
        stats_read(dev, out);
        salvo_mutex_unlock(&dev->q.lock);
    }
    salvo_clear_error();
    return SALVO_OK;
}

/* ------------------------------------------------------------------ */
/* Device-wide synchronize                                             */
/* ------------------------------------------------------------------ */

salvo_status salvo_device_synchronize(salvo_device *dev)
{
    if (!dev)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "device is NULL");
    if (host_call_running)
        return host_call_refuse(dev, "device_synchronize");
    char msg[SALVO_ERROR_MAX];
    salvo_mutex_lock(&dev->q.lock);
    graph_captures_settle_locked(dev);
    bool expired = false;
    salvo_status first = sched_synchronize_locked(&dev->q, msg, &expired);
    uint64_t calls = host_work_sync_calls_locked(dev, NULL, expired);
    salvo_mutex_unlock(&dev->q.lock);
    if (calls)
        host_work_wait_run(dev->host_work, calls);
    if (first != SALVO_OK)
        salvo_set_error(msg);
    else
        salvo_clear_error();
    return first;
}
