/* Traces of a device: salvo_trace_start / salvo_trace_stop and
 * $SALVO_TRACE, and what ties streams to the trace. The recording and the
 * file format are core/trace.c's. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"

/* Devices tracing from $SALVO_TRACE at once each need a file: the first
 * gets the name as given, the next ones NAME.2.EXT, NAME.3.EXT, ... by the
 * lowest number free. */
enum {
    ENV_TRACE_MAX = 64
};
static pthread_mutex_t env_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t env_in_use; /* [env_lock] bit i: a device traces to the (i+1)-th name */

static bool has_timestamps(const salvo_device *dev)
{
    const accel_vtable *vt = dev->acc.vt;
    return dev->caps.timestamps && vt->querypool_create && vt->querypool_destroy &&
           vt->cmd_querypool_reset && vt->cmd_timestamp && vt->querypool_results;
}

static salvo_status trace_start_locked(salvo_device *dev, const char *path)
    SALVO_REQUIRES(dev->q.lock)
{
    if (dev->q.trace)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE,
                        "trace_start: the device is tracing already");
    if (device_is_lost(dev))
        return device_lost_error(dev);
    if (!has_timestamps(dev))
        return DEV_FAIL(dev, SALVO_ERROR_UNSUPPORTED,
                        "trace_start: %s cannot write GPU timestamps", dev->info.name);
    char reason[256 + SALVO_NAME_MAX];
    salvo_status r = trace_session_open(dev->alloc, path, &dev->caps, dev->info.name, &dev->q.trace,
                                        reason, sizeof reason);
    if (r != SALVO_OK)
        return DEV_FAIL(dev, r, "trace_start: %s", reason);
    for (stream_engine *st = dev->q.streams; st; st = st->next) {
        salvo_mutex_same(&dev->q.lock, &st->q->lock);
        stream_trace_attach_locked(st);
    }
    SALVO_LOG(&dev->log, SALVO_LOG_INFO, "trace: writing %s", path);
    return SALVO_OK;
}

bool device_trace_stop_locked(salvo_device *dev)
{
    if (!dev->q.trace)
        return true;
    uint64_t batches = dev->q.trace->batches, launches = dev->q.trace->launches;
    bool ok = trace_session_close(dev->q.trace);
    dev->q.trace = NULL;
    if (dev->trace_env_slot) {
        pthread_mutex_lock(&env_lock);
        env_in_use &= ~(1ull << (dev->trace_env_slot - 1));
        pthread_mutex_unlock(&env_lock);
        dev->trace_env_slot = 0;
    }
    if (ok)
        SALVO_LOG(&dev->log, SALVO_LOG_INFO, "trace: %llu batches, %llu launches written",
                  (unsigned long long)batches, (unsigned long long)launches);
    else
        SALVO_LOG(&dev->log, SALVO_LOG_WARNING, "trace: writing the file failed; it is incomplete");
    return ok;
}

void device_trace_env_start(salvo_device *dev)
{
    const char *path = getenv("SALVO_TRACE");
    if (!path || !*path)
        return;
    pthread_mutex_lock(&env_lock);
    int i = 0;
    while (i < ENV_TRACE_MAX && (env_in_use >> i & 1))
        i++;
    if (i < ENV_TRACE_MAX)
        env_in_use |= 1ull << i;
    pthread_mutex_unlock(&env_lock);
    if (i == ENV_TRACE_MAX) {
        SALVO_LOG(&dev->log, SALVO_LOG_WARNING,
                  "SALVO_TRACE: %d devices trace already; this one does not", ENV_TRACE_MAX);
        return;
    }
    /* NAME.EXT -> NAME.2.EXT: the number goes before the last extension. */
    char numbered[4096];
    const char *name = path;
    if (i > 0) {
        const char *slash = strrchr(path, '/');
        const char *dot = strrchr(path, '.');
        size_t stem = dot && dot > (slash ? slash + 1 : path) ? (size_t)(dot - path) : strlen(path);
        int n = snprintf(numbered, sizeof numbered, "%.*s.%d%s", (int)stem, path, i + 1,
                         path + stem);
        if (n < 0 || (size_t)n >= sizeof numbered)
            numbered[0] = '\0';
        name = numbered;
    }
    salvo_mutex_lock(&dev->q.lock);
    salvo_status r = *name ? trace_start_locked(dev, name) : SALVO_ERROR_INVALID_ARGUMENT;
    if (r == SALVO_OK)
        dev->trace_env_slot = i + 1;
    salvo_mutex_unlock(&dev->q.lock);
    if (r != SALVO_OK) {
        pthread_mutex_lock(&env_lock);
        env_in_use &= ~(1ull << i);
        pthread_mutex_unlock(&env_lock);
        SALVO_LOG(&dev->log, SALVO_LOG_WARNING, "SALVO_TRACE: no trace (%s: %s)",
                  salvo_status_string(r), salvo_last_error());
    }
    salvo_clear_error();
}

salvo_status salvo_trace_start(salvo_device *dev, const char *path)
{
    if (!dev)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "trace_start: device is NULL");
    if (!path || !*path)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "trace_start: no path");
    salvo_mutex_lock(&dev->q.lock);
    salvo_status r = trace_start_locked(dev, path);
    salvo_mutex_unlock(&dev->q.lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}

salvo_status salvo_trace_stop(salvo_device *dev)
{
    if (!dev)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "trace_stop: device is NULL");
    salvo_mutex_lock(&dev->q.lock);
    if (!dev->q.trace) {
        salvo_mutex_unlock(&dev->q.lock);
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE, "trace_stop: the device is not tracing");
    }
    /* Batches already complete go in; nothing is submitted or waited for. */
    if (!device_is_lost(dev))
        sched_reap_locked(&dev->q);
    bool ok = device_trace_stop_locked(dev);
    salvo_mutex_unlock(&dev->q.lock);
    if (!ok)
        return DEV_FAIL(dev, SALVO_ERROR_UNKNOWN,
                        "trace_stop: writing the trace file failed; it is incomplete");
    salvo_clear_error();
    return SALVO_OK;
}
