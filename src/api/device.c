/* The device: settings, the batch lock, the retire clock, and the waits
 * that span streams. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/internal.h"

/* ------------------------------------------------------------------ */
/* Settings                                                            */
/* ------------------------------------------------------------------ */

/* A positive integer from the environment, else 0 ("use the default"). */
static uint64_t env_positive(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    char *end = NULL;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end || v[0] == '-' || x == 0)
        return 0;
    return x;
}

static double env_seconds(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    char *end = NULL;
    double x = strtod(v, &end);
    return (*end || !(x > 0) || x > 1e9) ? 0 : x;
}

/* Validation messages are counted for the stats (and the tests), then
 * passed on to the user's callback. */
static void device_log(void *user, salvo_log_level level, const char *file, int line,
                       const char *message)
{
    salvo_device *dev = user;
    if (file && strcmp(file, "validation") == 0)
        COUNT_ADD(dev, validation_messages, 1);
    if (dev->user_log)
        dev->user_log(dev->user_log_user, level, file, line, message);
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

    /* desc wins, then the environment, then the defaults */
    uint64_t batch = desc->batch_size ? desc->batch_size : env_positive("SALVO_BATCH");
    dev->batch_size = (batch == 0 || batch > 1u << 20) ? DEFAULT_BATCH : (uint32_t)batch;
    double timeout = desc->fence_timeout_s > 0 ? desc->fence_timeout_s
                                               : env_seconds("SALVO_FENCE_TIMEOUT_S");
    dev->fence_timeout_ns = timeout > 0 ? (uint64_t)(timeout * 1e9) : UINT64_MAX;
    dev->release_max_count = desc->release_max_count ? desc->release_max_count
                                                     : env_positive("SALVO_RELEASE_MAX_COUNT");
    if (!dev->release_max_count)
        dev->release_max_count = DEFAULT_RELEASE_MAX_COUNT;
    dev->release_max_bytes = desc->release_max_bytes ? desc->release_max_bytes
                                                     : env_positive("SALVO_RELEASE_MAX_BYTES");
    if (!dev->release_max_bytes)
        dev->release_max_bytes = DEFAULT_RELEASE_MAX_BYTES;
    dev->force_staging = (desc->flags & SALVO_DEVICE_FORCE_STAGING) != 0;
    const char *import_env = getenv("SALVO_TRANSFER_IMPORT");
    dev->transfer_import = !(import_env && strcmp(import_env, "0") == 0);
    const char *spin = getenv("SALVO_SPIN_US");
    dev->spin_ns = spin && *spin ? env_positive("SALVO_SPIN_US") * 1000 : (uint64_t)-1;

    uint64_t validation = env_positive("SALVO_VALIDATION");
    accel_open_options opt = {
        .validation = validation >= 1 ||
                      (desc->flags & (SALVO_DEVICE_VALIDATION | SALVO_DEVICE_SYNC_VALIDATION)),
        .sync_validation = validation >= 2 || (desc->flags & SALVO_DEVICE_SYNC_VALIDATION),
        .pool_descriptors = (desc->flags & SALVO_DEVICE_POOL_DESCRIPTORS) ||
                            (getenv("SALVO_DESCRIPTORS") &&
                             strcmp(getenv("SALVO_DESCRIPTORS"), "pool") == 0),
        .log = device_log,
        .log_user = dev,
        .pipeline_cache_path = desc->pipeline_cache_path ? desc->pipeline_cache_path
                                                         : getenv("SALVO_PIPELINE_CACHE"),
    };
    if (opt.pipeline_cache_path && !*opt.pipeline_cache_path)
        opt.pipeline_cache_path = NULL;
    char why[256] = "";
    opt.why = why;
    opt.why_size = sizeof why;
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
        if (r != ACCEL_SUCCESS && why[0])
            st = DEV_FAIL(dev, salvo_status_from_accel(r), "cannot open the Vulkan device: %s (%s)",
                          why, accel_result_name(r));
        else if (r != ACCEL_SUCCESS)
            st = DEV_FAIL(dev, salvo_status_from_accel(r), "cannot open the Vulkan device (%s)",
                          accel_result_name(r));
        else if (import)
            memcpy(chosen, dev->caps.info.name, sizeof chosen);
    }
    if (st == SALVO_OK && pthread_mutex_init(&dev->lock, NULL) != 0) {
        acc.vt->device_close(acc.self, dev->adev);
        st = DEV_FAIL(dev, SALVO_ERROR_OUT_OF_HOST_MEMORY, "cannot create the device lock");
    } else if (st == SALVO_OK && pthread_cond_init(&dev->slot_cv, NULL) != 0) {
        pthread_mutex_destroy(&dev->lock);
        acc.vt->device_close(acc.self, dev->adev);
        st = DEV_FAIL(dev, SALVO_ERROR_OUT_OF_HOST_MEMORY, "cannot create the device lock");
    }
    if (st != SALVO_OK) {
        acc.vt->destroy(acc.self);
        salvo_mem_free(desc->allocator, dev);
        return st;
    }
    dev->env = (slot_env){&dev->acc, dev->adev, &dev->log};
    /* Spinning steals the cores a CPU device computes on: only for GPUs. */
    if (dev->spin_ns == (uint64_t)-1) {
        salvo_device_type t = dev->caps.info.type;
        bool gpu = t == SALVO_DEVICE_TYPE_DISCRETE || t == SALVO_DEVICE_TYPE_INTEGRATED ||
                   t == SALVO_DEVICE_TYPE_VIRTUAL;
        dev->spin_ns = gpu ? DEFAULT_SPIN_US * 1000ull : 0;
    }
    dev->info = dev->caps.info;
    memcpy(dev->info.name, chosen, sizeof dev->info.name); /* the name it opens by */
    dev->info.push_descriptors_used = dev->caps.push_descriptors_used;
    dev->info.batch_size = dev->batch_size;
    dev->info.fence_timeout_s = timeout > 0 ? timeout : 0;
    dev->live.prev = dev->live.next = &dev->live;
    atomic_init(&dev->next_serial, 1);
    atomic_init(&dev->lost, false);
    retire_init(&dev->retire, &dev->log);
    SALVO_LOG(&dev->log, SALVO_LOG_INFO, "opened %s (batch %u)", dev->info.name, dev->batch_size);
    device_trace_env_start(dev);
    salvo_clear_error();
    *out = dev;
    return SALVO_OK;
}

static void free_transfer_objects(salvo_device *dev)
{
    const accel_vtable *vt = dev->acc.vt;
    vt->buffer_destroy(dev->acc.self, dev->adev, dev->staging);
    vt->fence_destroy(dev->acc.self, dev->adev, dev->xfer_fence);
    vt->cmd_destroy(dev->acc.self, dev->adev, dev->xfer_cmd);
    dev->staging = NULL;
    dev->xfer_fence = NULL;
    dev->xfer_cmd = NULL;
}

void salvo_device_destroy(salvo_device *dev)
{
    if (!dev)
        return;
    pthread_mutex_lock(&dev->lock);
    uint64_t live_streams = 0;
    for (salvo_stream *st = dev->streams; st; st = st->next)
        if (!atomic_exchange(&st->destroyed, true))
            live_streams++;
    if (live_streams)
        SALVO_LOG(&dev->log, SALVO_LOG_WARNING, "device destroyed with %llu live stream(s)",
                  (unsigned long long)live_streams);
    if (!device_is_lost(dev)) {
        salvo_status st = device_quiesce_locked(dev, UINT64_MAX);
        if (st != SALVO_OK && !device_is_lost(dev)) {
            /* A wait that would not finish: the queue is the last resort. */
            accel_result r = device_wait_idle_locked(dev);
            if (r != ACCEL_SUCCESS)
                device_mark_lost_locked(dev);
            else
                for (salvo_stream *s = dev->streams; s; s = s->next)
                    for (int i = 0; i < STREAM_SLOTS; i++)
                        if (s->slots[i].state == SLOT_IN_FLIGHT)
                            slot_complete(&s->slots[i], &dev->env, ACCEL_SUCCESS);
        }
    }
    /* Every batch that will be seen complete has been: the trace is whole. */
    device_trace_stop_locked(dev);
    if (device_is_lost(dev)) {
        device_mark_lost_locked(dev);
        retire_abandon(&dev->retire);
    } else {
        retire_drain(&dev->retire);
    }
    while (dev->streams)
        stream_free_locked(dev->streams);
    /* What the user never released: reclaim it now (each unlinks itself). */
    uint64_t leaked = 0;
    while (dev->live.next != &dev->live) {
        retire_entry *e = dev->live.next->release;
        e->fn(e, device_is_lost(dev));
        leaked++;
    }
    if (leaked)
        SALVO_LOG(&dev->log, SALVO_LOG_WARNING,
                  "device destroyed with %llu object(s) never destroyed: reclaimed",
                  (unsigned long long)leaked);
    retire_close(&dev->retire);
    free_transfer_objects(dev);
    pthread_mutex_unlock(&dev->lock);
    pthread_cond_destroy(&dev->slot_cv);
    pthread_mutex_destroy(&dev->lock);
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

bool device_is_lost(const salvo_device *dev)
{
    return atomic_load_explicit(&dev->lost, memory_order_acquire);
}

bool salvo_device_is_lost(salvo_device *dev)
{
    return dev && device_is_lost(dev);
}

salvo_status device_lost_error(salvo_device *dev)
{
    return DEV_FAIL(dev, SALVO_ERROR_DEVICE_LOST, "the device is lost");
}

salvo_status salvo_device_info_get(salvo_device *dev, salvo_device_info *out)
{
    if (!dev || !out)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "device_info: NULL %s",
                          dev ? "out" : "device");
    *out = dev->info;
    salvo_clear_error();
    return SALVO_OK;
}

salvo_status salvo_device_stats(salvo_device *dev, salvo_stats *out)
{
    if (!dev || !out)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "device_stats: NULL %s",
                          dev ? "out" : "device");
#define LOAD(f) atomic_load_explicit(&dev->n.f, memory_order_relaxed)
    *out = (salvo_stats){
        .live_buffers = LOAD(live_buffers),
        .live_kernels = LOAD(live_kernels),
        .live_streams = LOAD(live_streams),
        .live_events = LOAD(live_events),
        .live_gates = LOAD(live_gates),
        .live_buffer_bytes = LOAD(live_buffer_bytes),
        .releases_pending = retire_pending(&dev->retire),
        .release_bytes_pending = atomic_load(&dev->retire.bytes),
        .releases_run = atomic_load(&dev->retire.run_total),
        .launches_pending = LOAD(launches_pending),
        .launches_total = LOAD(launches_total),
        .batches_submitted = LOAD(batches_submitted),
        .barriers_emitted = LOAD(barriers_emitted),
        .transfer_bytes = LOAD(transfer_bytes),
        .transfer_bytes_imported = LOAD(transfer_bytes_imported),
        .direct_bindings = LOAD(direct_bindings),
        .validation_messages = LOAD(validation_messages),
    };
#undef LOAD
    salvo_clear_error();
    return SALVO_OK;
}

/* ------------------------------------------------------------------ */
/* The retire clock and the free path                                  */
/* ------------------------------------------------------------------ */

/* Lowest serial that may still reference a resource: the oldest batch
 * recording or in flight, or the next serial when the device is idle. */
static uint64_t floor_locked(salvo_device *dev)
{
    uint64_t floor = atomic_load(&dev->next_serial);
    for (salvo_stream *st = dev->streams; st; st = st->next)
        for (int i = 0; i < STREAM_SLOTS; i++)
            if (slot_active(&st->slots[i]) && st->slots[i].serial < floor)
                floor = st->slots[i].serial;
    return floor;
}

void device_advance_locked(salvo_device *dev)
{
    if (device_is_lost(dev))
        device_mark_lost_locked(dev);
    if (device_is_lost(dev))
        retire_abandon(&dev->retire);
    else
        retire_run(&dev->retire, floor_locked(dev));
}

void device_release(salvo_device *dev, retire_entry *e)
{
    uint64_t tag = atomic_load(&dev->next_serial);
    if (pthread_mutex_trylock(&dev->lock) != 0) {
        /* Held, maybe by this very thread (a log callback): stay queued. */
        retire_push_incoming(&dev->retire, e, tag);
        return;
    }
    retire_push(&dev->retire, e, tag);
    device_advance_locked(dev);
    pthread_mutex_unlock(&dev->lock);
}

void live_link_locked(salvo_device *dev, live_link *l, retire_entry *release)
{
    l->release = release;
    l->next = dev->live.next;
    l->prev = &dev->live;
    dev->live.next->prev = l;
    dev->live.next = l;
}

void live_unlink_locked(salvo_device *dev, live_link *l)
{
    (void)dev;
    if (!l->prev)
        return;
    l->prev->next = l->next;
    l->next->prev = l->prev;
    l->prev = l->next = NULL;
}

salvo_status device_noted(salvo_device *dev, salvo_status st)
{
    if (st == SALVO_ERROR_DEVICE_LOST)
        atomic_store(&dev->lost, true);
    return st;
}

void device_mark_lost_locked(salvo_device *dev)
{
    atomic_store(&dev->lost, true);
    if (dev->abandoned)
        return;
    dev->abandoned = true;
    SALVO_LOG(&dev->log, SALVO_LOG_ERROR, "device lost: abandoning all work");
    for (salvo_stream *st = dev->streams; st; st = st->next) {
        for (int i = 0; i < STREAM_SLOTS; i++) {
            slot *s = &st->slots[i];
            if (slot_active(s))
                COUNT_SUB(dev, launches_pending, s->launches);
            slot_abandon(s);
        }
        st->open = NULL;
    }
    retire_abandon(&dev->retire);
}

void stream_defer_locked(salvo_stream *st, salvo_status err)
{
    if (err >= 0 || st->deferred != SALVO_OK)
        return;
    st->deferred = err;
    memcpy(st->deferred_msg, salvo_last_error(), sizeof st->deferred_msg);
    st->deferred_msg[sizeof st->deferred_msg - 1] = '\0';
}

/* ------------------------------------------------------------------ */
/* Waits                                                               */
/* ------------------------------------------------------------------ */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A short work often ends within microseconds: poll the fence for a bounded
 * time before a blocking wait, whose wake-up costs tens of microseconds.
 * The CPU spent is at most spin_ns per wait. */
static accel_result spin_then_wait(salvo_device *dev, accel_fence *fence)
{
    if (dev->spin_ns) {
        uint64_t end = now_ns() + dev->spin_ns;
        do {
            accel_result r = dev->acc.vt->fence_status(dev->acc.self, dev->adev, fence);
            if (r != ACCEL_NOT_READY)
                return r;
        } while (now_ns() < end);
    }
    uint64_t timeout = dev->fence_timeout_ns;
    if (timeout != UINT64_MAX)
        timeout = timeout > dev->spin_ns ? timeout - dev->spin_ns : 0;
    return dev->acc.vt->fence_wait(dev->acc.self, dev->adev, fence, timeout);
}

salvo_status device_wait_slot_locked(salvo_device *dev, salvo_stream *st, slot *s, bool report)
{
    if (s->state != SLOT_IN_FLIGHT)
        return SALVO_OK;
    /* Seen lost elsewhere (a gate raise, another stream): the work is over,
     * and a fence wait could block on work that will never run. */
    if (device_is_lost(dev)) {
        device_mark_lost_locked(dev);
        return device_lost_error(dev);
    }
    uint64_t serial = s->serial;
    accel_fence *fence = s->fence;
    atomic_fetch_add(&dev->waiters, 1);
    s->waiters++;
    pthread_mutex_unlock(&dev->lock);
    accel_result r = spin_then_wait(dev, fence);
    pthread_mutex_lock(&dev->lock);
    atomic_fetch_sub(&dev->waiters, 1);
    if (--s->waiters == 0)
        pthread_cond_broadcast(&dev->slot_cv);
    if (s->state != SLOT_IN_FLIGHT || s->serial != serial)
        return device_is_lost(dev) ? device_lost_error(dev) : SALVO_OK; /* someone else saw it */
    uint32_t n = s->launches;
    salvo_status res = slot_complete(s, &dev->env, r);
    if (!slot_active(s))
        COUNT_SUB(dev, launches_pending, n);
    if (res == SALVO_OK) {
        device_trace_retired_locked(dev, st, s);
        device_advance_locked(dev);
        return SALVO_OK;
    }
    if (res == SALVO_ERROR_DEVICE_LOST)
        device_mark_lost_locked(dev);
    /* Kept for the stream only when the work is over (the device is lost).
     * A wait that merely failed leaves the batch in flight for the stream's
     * next wait to observe: the failure is this caller's (a read, an event
     * or device wait that could not finish), and keeping it as well would
     * report it twice. */
    if (!report && res != SALVO_TIMEOUT && s->state != SLOT_IN_FLIGHT)
        stream_defer_locked(st, res);
    return res;
}

void device_reap_locked(salvo_device *dev)
{
    /* Releases left on the lock-free list by a destroy that found the lock
     * busy may be runnable already (an idle device): look at them too. */
    bool advanced = atomic_load_explicit(&dev->retire.incoming, memory_order_relaxed) != NULL;
    if (device_is_lost(dev))
        device_mark_lost_locked(dev);
    retire_collect(&dev->retire);
    for (salvo_stream *st = dev->streams; st; st = st->next) {
        if (atomic_load(&st->destroyed) && st->open && !device_is_lost(dev))
            stream_submit_locked(st, false);
        for (int i = 0; i < STREAM_SLOTS && !device_is_lost(dev); i++) {
            slot *s = &st->slots[i];
            if (s->state != SLOT_IN_FLIGHT)
                continue;
            uint32_t n = s->launches;
            salvo_status r = slot_poll(s, &dev->env);
            if (!slot_active(s))
                COUNT_SUB(dev, launches_pending, n);
            if (r == SALVO_OK) {
                advanced = true;
                device_trace_retired_locked(dev, st, s);
            } else if (r < 0) {
                if (r == SALVO_ERROR_DEVICE_LOST)
                    device_mark_lost_locked(dev);
                stream_defer_locked(st, r);
            }
        }
    }
    if (advanced || device_is_lost(dev))
        device_advance_locked(dev);
    /* A waiter may hold a destroyed stream's fence: free streams later. */
    if (atomic_load(&dev->waiters))
        return;
    salvo_stream *st = dev->streams;
    while (st) {
        salvo_stream *next = st->next;
        if (atomic_load(&st->destroyed) && stream_idle_locked(st))
            stream_free_locked(st);
        st = next;
    }
}

salvo_status device_quiesce_locked(salvo_device *dev, uint64_t limit)
{
    for (;;) {
        if (device_is_lost(dev)) {
            device_mark_lost_locked(dev);
            return device_lost_error(dev);
        }
        salvo_stream *wst = NULL;
        slot *ws = NULL;
        for (salvo_stream *st = dev->streams; st; st = st->next) {
            if (st->open && st->open->serial <= limit)
                stream_submit_locked(st, false);
            for (int i = 0; i < STREAM_SLOTS; i++) {
                slot *s = &st->slots[i];
                if (s->state == SLOT_IN_FLIGHT && s->serial <= limit &&
                    (!ws || s->serial < ws->serial)) {
                    ws = s;
                    wst = st;
                }
            }
        }
        if (device_is_lost(dev))
            return device_lost_error(dev);
        if (!ws)
            return SALVO_OK;
        salvo_status r = device_wait_slot_locked(dev, wst, ws, false);
        if (r == SALVO_ERROR_DEVICE_LOST || r == SALVO_TIMEOUT)
            return r;
        if (r < 0 && ws->state == SLOT_IN_FLIGHT)
            return r; /* the wait itself keeps failing: no progress possible */
    }
}

/* Whether some batch in flight waits on a host gate not raised yet. The
 * queue runs in order, so every later batch waits behind it too: a wait
 * for any of them could last until the host raises the gate, which may be
 * this very thread. */
static bool slot_gated_locked(salvo_device *dev, const slot *s)
{
    if (s->state != SLOT_IN_FLIGHT)
        return false;
    for (uint32_t w = 0; w < s->wait_count; w++) {
        const slot_dep *d = &s->waits[w];
        uint64_t value = 0;
        if (d->op.timeline &&
            (dev->acc.vt->timeline_value(dev->acc.self, dev->adev, d->op.timeline, &value) !=
                 ACCEL_SUCCESS ||
             value < d->op.value))
            return true;
    }
    return false;
}

static bool gated_locked(salvo_device *dev)
{
    for (salvo_stream *st = dev->streams; st; st = st->next)
        for (int i = 0; i < STREAM_SLOTS; i++)
            if (slot_gated_locked(dev, &st->slots[i]))
                return true;
    return false;
}

salvo_status device_wait_ungated_locked(salvo_device *dev)
{
    for (;;) {
        if (device_is_lost(dev)) {
            device_mark_lost_locked(dev);
            return device_lost_error(dev);
        }
        salvo_stream *wst = NULL;
        slot *ws = NULL;
        for (salvo_stream *st = dev->streams; st && !ws; st = st->next)
            for (int i = 0; i < STREAM_SLOTS && !ws; i++)
                if (slot_gated_locked(dev, &st->slots[i])) {
                    ws = &st->slots[i];
                    wst = st;
                }
        if (!ws)
            return SALVO_OK;
        salvo_status r = device_wait_slot_locked(dev, wst, ws, false);
        if (r == SALVO_ERROR_DEVICE_LOST || r == SALVO_TIMEOUT)
            return r;
        if (r < 0 && ws->state == SLOT_IN_FLIGHT)
            return r;
    }
}

void device_relieve_locked(salvo_device *dev)
{
    retire_collect(&dev->retire);
    if (retire_pending(&dev->retire) <= dev->release_max_count &&
        atomic_load(&dev->retire.bytes) <= dev->release_max_bytes)
        return;
    device_reap_locked(dev);
    if (retire_pending(&dev->retire) <= dev->release_max_count &&
        atomic_load(&dev->retire.bytes) <= dev->release_max_bytes)
        return;
    /* Still over: wait for what the oldest releases wait on, unless that
     * work is held by a gate (the bound is then exceeded until it opens). */
    if (gated_locked(dev))
        return;
    uint64_t limit = 0;
    for (retire_entry *e = dev->retire.head; e; e = e->next)
        if (e->tag > limit)
            limit = e->tag;
    if (limit > 0 && device_quiesce_locked(dev, limit - 1) == SALVO_OK)
        device_advance_locked(dev);
}

accel_result device_wait_idle_locked(salvo_device *dev)
{
    accel_result r = ACCEL_SUCCESS;
    for (int attempt = 0; attempt < RECOVERY_ATTEMPTS; attempt++) {
        r = dev->acc.vt->queue_wait_idle(dev->acc.self, dev->adev);
        if (r != ACCEL_ERROR_OUT_OF_HOST_MEMORY && r != ACCEL_ERROR_OUT_OF_DEVICE_MEMORY)
            break;
    }
    return r;
}

accel_result device_buffer_create_locked(salvo_device *dev, const accel_buffer_desc *d,
                                         accel_buffer **out, accel_buffer_info *info)
{
    accel_result r = dev->acc.vt->buffer_create(dev->acc.self, dev->adev, d, out, info);
    if (r != ACCEL_ERROR_OUT_OF_DEVICE_MEMORY)
        return r;
    /* Memory may be held by releases waiting on work: run them and retry once. */
    device_reap_locked(dev);
    if (retire_pending(&dev->retire) > 0 && !gated_locked(dev) &&
        device_quiesce_locked(dev, UINT64_MAX) == SALVO_OK)
        device_advance_locked(dev);
    return dev->acc.vt->buffer_create(dev->acc.self, dev->adev, d, out, info);
}

/* ------------------------------------------------------------------ */
/* Device-wide synchronize                                             */
/* ------------------------------------------------------------------ */

salvo_status salvo_device_synchronize(salvo_device *dev)
{
    if (!dev)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "device is NULL");
    pthread_mutex_lock(&dev->lock);
    salvo_status r = device_quiesce_locked(dev, UINT64_MAX);
    char msg[SALVO_ERROR_MAX];
    memcpy(msg, salvo_last_error(), sizeof msg);
    salvo_status first = SALVO_OK;
    /* Each stream's kept failure belongs to this caller now; the first wins. */
    for (salvo_stream *st = dev->streams; st; st = st->next) {
        if (st->deferred == SALVO_OK)
            continue;
        if (first == SALVO_OK) {
            first = st->deferred;
            memcpy(msg, st->deferred_msg, sizeof msg);
        }
        st->deferred = SALVO_OK;
    }
    if (first == SALVO_OK)
        first = r;
    device_reap_locked(dev);
    pthread_mutex_unlock(&dev->lock);
    if (first != SALVO_OK)
        salvo_set_error(msg);
    else
        salvo_clear_error();
    return first;
}
