/* Buffers: exact allocations in a domain, explicit transfers, mapping,
 * host import, and a release that waits for the work that uses them. */
#include <string.h>

#include "api/internal.h"

#define VT(dev) ((dev)->acc.vt)
#define SELF(dev) ((dev)->acc.self)

static void buffer_release(retire_entry *e, bool abandoned)
{
    (void)abandoned; /* destroy commands stay valid on a lost device */
    salvo_buffer *buf = (salvo_buffer *)((char *)e - offsetof(salvo_buffer, release));
    salvo_device *dev = buf->dev;
    live_unlink_locked(dev, &buf->live);
    VT(dev)->buffer_destroy(SELF(dev), dev->adev, buf->ab);
    COUNT_SUB(dev, live_buffers, 1);
    COUNT_SUB(dev, live_buffer_bytes, buf->size);
    salvo_mem_free(dev->alloc, buf);
}

static salvo_status make_buffer(salvo_device *dev, uint64_t size, salvo_domain domain, void *host,
                                salvo_buffer **out)
{
    const char *what = host ? "buffer_import_host" : "buffer_create";
    if (!out)
        return SALVO_FAIL(dev ? &dev->log : NULL, SALVO_ERROR_INVALID_ARGUMENT, "%s: out is NULL",
                          what);
    *out = NULL;
    if (!dev)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "%s: device is NULL", what);
    if (size == 0)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "%s: size is 0", what);
    if (domain != SALVO_DOMAIN_DEVICE && domain != SALVO_DOMAIN_HOST && domain != SALVO_DOMAIN_SHARED)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "%s: unknown domain %d", what,
                        (int)domain);
    if (device_is_lost(dev))
        return device_lost_error(dev);
    salvo_buffer *buf = salvo_mem_calloc(dev->alloc, 1, sizeof *buf);
    if (!buf)
        return DEV_FAIL(dev, SALVO_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", what);
    accel_buffer_desc d = {.size = size, .domain = domain, .import_host = host, .transfer = true};
    buf->dev = dev;
    buf->release.fn = buffer_release;
    buf->release.bytes = size;
    pthread_mutex_lock(&dev->lock);
    accel_result r = device_buffer_create_locked(dev, &d, &buf->ab, &buf->ai);
    if (r == ACCEL_SUCCESS)
        live_link_locked(dev, &buf->live, &buf->release);
    pthread_mutex_unlock(&dev->lock);
    if (r != ACCEL_SUCCESS) {
        salvo_mem_free(dev->alloc, buf);
        if (r == ACCEL_ERROR_DEVICE_LOST) {
            pthread_mutex_lock(&dev->lock);
            device_mark_lost_locked(dev);
            pthread_mutex_unlock(&dev->lock);
        }
        return DEV_FAIL(dev, salvo_status_from_accel(r), "%s: %llu bytes in domain %d: %s", what,
                        (unsigned long long)size, (int)domain, accel_result_name(r));
    }
    buf->dev = dev;
    buf->size = size;
    buf->domain = domain;
    buf->imported = host != NULL;
    atomic_init(&buf->last_serial, 0);

    COUNT_ADD(dev, live_buffers, 1);
    COUNT_ADD(dev, live_buffer_bytes, size);
    salvo_clear_error();
    *out = buf;
    return SALVO_OK;
}

salvo_status salvo_buffer_create(salvo_device *dev, uint64_t size, salvo_domain domain,
                                 salvo_buffer **out)
{
    return make_buffer(dev, size, domain, NULL, out);
}

salvo_status salvo_buffer_import_host(salvo_device *dev, void *ptr, uint64_t size,
                                      salvo_domain domain, salvo_buffer **out)
{
    if (out)
        *out = NULL;
    if (!dev)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "buffer_import_host: device is NULL");
    if (!dev->info.host_import)
        return DEV_FAIL(dev, SALVO_ERROR_UNSUPPORTED,
                        "buffer_import_host: the device cannot import host memory");
    if (!ptr)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "buffer_import_host: ptr is NULL");
    if (domain == SALVO_DOMAIN_DEVICE)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "buffer_import_host: imported memory must be HOST or SHARED");
    uint64_t align = dev->info.host_import_alignment;
    if (align && (((uintptr_t)ptr % align) || size % align))
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "buffer_import_host: pointer and size must be multiples of %llu",
                        (unsigned long long)align);
    if (size > UINTPTR_MAX - (uintptr_t)ptr)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "buffer_import_host: %llu bytes at %p run past the end of the address "
                        "space",
                        (unsigned long long)size, ptr);
    salvo_status r = make_buffer(dev, size, domain, ptr, out);
    if (r == SALVO_OK)
        COUNT_ADD(dev, direct_bindings, 1);
    return r;
}

uint64_t salvo_buffer_size(const salvo_buffer *buf)
{
    return buf ? buf->size : 0;
}

salvo_status salvo_buffer_map(salvo_buffer *buf, void **out)
{
    if (out)
        *out = NULL;
    if (!buf || !out)
        return SALVO_FAIL(buf ? &buf->dev->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "buffer_map: %s is NULL", buf ? "out" : "buffer");
    if (buf->domain == SALVO_DOMAIN_DEVICE || !buf->ai.mapped)
        return DEV_FAIL(buf->dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "buffer_map: only HOST and SHARED buffers can be mapped");
    *out = buf->ai.mapped;
    salvo_clear_error();
    return SALVO_OK;
}

void salvo_buffer_destroy(salvo_buffer *buf)
{
    if (buf)
        device_release(buf->dev, &buf->release);
}

/* ------------------------------------------------------------------ */
/* Explicit transfers                                                  */
/* ------------------------------------------------------------------ */

static salvo_status check_range(salvo_buffer *buf, const char *what, uint64_t offset,
                                const void *host, uint64_t size)
{
    if (!buf)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "%s: buffer is NULL", what);
    if (!host)
        return DEV_FAIL(buf->dev, SALVO_ERROR_INVALID_ARGUMENT, "%s: host pointer is NULL", what);
    if (size == 0 || offset >= buf->size || size > buf->size - offset)
        return DEV_FAIL(buf->dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "%s: range [%llu, +%llu) outside the buffer of %llu bytes", what,
                        (unsigned long long)offset, (unsigned long long)size,
                        (unsigned long long)buf->size);
    return SALVO_OK;
}

/* A wait before a transfer ran out of time: nothing was copied. */
static salvo_status not_done(salvo_device *dev, const char *what, bool to_host)
{
    return DEV_FAIL(dev, SALVO_ERROR_TIMEOUT,
                    "%s: %s did not complete within the fence timeout; nothing was %s",
                    to_host ? "buffer_read" : "buffer_write", what, to_host ? "read" : "written");
}

/* Every batch that bound the buffer must be over before the host touches it. */
static salvo_status settle_locked(salvo_buffer *buf, bool to_host)
{
    salvo_device *dev = buf->dev;
    if (device_is_lost(dev))
        return device_lost_error(dev);
    uint64_t last = atomic_load(&buf->last_serial);
    if (last == 0)
        return SALVO_OK;
    salvo_status r = device_quiesce_locked(dev, last);
    return r == SALVO_TIMEOUT ? not_done(dev, "the work that uses the buffer", to_host) : r;
}

static salvo_status staging_locked(salvo_device *dev)
{
    if (dev->staging)
        return SALVO_OK;
    accel_buffer_desc d = {.size = STAGING_BYTES, .domain = SALVO_DOMAIN_HOST, .transfer = true};
    accel_result r = device_buffer_create_locked(dev, &d, &dev->staging, &dev->staging_info);
    if (r == ACCEL_SUCCESS)
        r = VT(dev)->cmd_create(SELF(dev), dev->adev, &dev->xfer_cmd);
    if (r == ACCEL_SUCCESS)
        r = VT(dev)->fence_create(SELF(dev), dev->adev, &dev->xfer_fence);
    if (r != ACCEL_SUCCESS || !dev->staging_info.mapped) {
        VT(dev)->buffer_destroy(SELF(dev), dev->adev, dev->staging);
        VT(dev)->cmd_destroy(SELF(dev), dev->adev, dev->xfer_cmd);
        VT(dev)->fence_destroy(SELF(dev), dev->adev, dev->xfer_fence);
        dev->staging = NULL;
        dev->xfer_cmd = NULL;
        dev->xfer_fence = NULL;
        return DEV_FAIL(dev, r ? salvo_status_from_accel(r) : SALVO_ERROR_UNKNOWN,
                        "transfer: cannot create the staging buffer (%s)", accel_result_name(r));
    }
    return SALVO_OK;
}

/* One staged copy through the device's transfer command buffer, waited for
 * before returning (the transfer is synchronous). */
static salvo_status staged_copy_locked(salvo_device *dev, accel_buffer *src, uint64_t so,
                                       accel_buffer *dst, uint64_t dof, uint64_t size, bool to_host)
{
    const accel_vtable *vt = VT(dev);
    void *self = SELF(dev);
    accel_result r = vt->cmd_begin(self, dev->adev, dev->xfer_cmd);
    if (r == ACCEL_SUCCESS) {
        vt->cmd_barrier(self, dev->adev, dev->xfer_cmd, ACCEL_BARRIER_COMPUTE_TRANSFER);
        vt->cmd_copy(self, dev->adev, dev->xfer_cmd, src, so, dst, dof, size);
        if (to_host)
            vt->cmd_barrier(self, dev->adev, dev->xfer_cmd, ACCEL_BARRIER_ALL_HOST);
        r = vt->cmd_end(self, dev->adev, dev->xfer_cmd);
    }
    if (r == ACCEL_SUCCESS)
        r = vt->fence_reset(self, dev->adev, dev->xfer_fence);
    if (r == ACCEL_SUCCESS) {
        accel_submit_desc d = {.cmd = dev->xfer_cmd, .fence = dev->xfer_fence};
        r = vt->submit(self, dev->adev, &d);
        if (r == ACCEL_SUCCESS) {
            /* The lock is never held across a fence wait (the thread that
             * raises a gate may need it); the transfer objects stay this
             * call's (xfer_busy). No gate holds the work ahead of the copy
             * (transfer() saw to that), so the wait has no bound: once
             * accepted, the copy is waited for to the end. */
            pthread_mutex_unlock(&dev->lock);
            r = vt->fence_wait(self, dev->adev, dev->xfer_fence, UINT64_MAX);
            for (int attempt = 1; attempt < RECOVERY_ATTEMPTS && r != ACCEL_SUCCESS &&
                                  r != ACCEL_ERROR_DEVICE_LOST;
                 attempt++)
                r = vt->fence_wait(self, dev->adev, dev->xfer_fence, UINT64_MAX);
            pthread_mutex_lock(&dev->lock);
            /* The copy was accepted: whatever the wait said, it must be over
             * before the transfer objects are touched again. */
            if (r != ACCEL_SUCCESS && r != ACCEL_ERROR_DEVICE_LOST)
                r = device_wait_idle_locked(dev) == ACCEL_SUCCESS ? ACCEL_SUCCESS
                                                                  : ACCEL_ERROR_DEVICE_LOST;
        }
    }
    if (r == ACCEL_SUCCESS)
        return SALVO_OK;
    /* The next transfer begins on this command buffer: back to the initial
     * state. A reset the driver keeps refusing (out of memory) is given up
     * after a few tries, and the transfer objects with it: the next
     * transfer makes new ones (nothing runs on them now: the copy was
     * refused, waited for, or lost with the device). */
    accel_result reset = ACCEL_ERROR_OUT_OF_HOST_MEMORY;
    for (int attempt = 0; attempt < RECOVERY_ATTEMPTS && reset != ACCEL_SUCCESS &&
                          reset != ACCEL_ERROR_DEVICE_LOST;
         attempt++)
        reset = vt->cmd_reset(self, dev->adev, dev->xfer_cmd);
    if (reset != ACCEL_SUCCESS) {
        vt->buffer_destroy(self, dev->adev, dev->staging);
        vt->cmd_destroy(self, dev->adev, dev->xfer_cmd);
        vt->fence_destroy(self, dev->adev, dev->xfer_fence);
        dev->staging = NULL;
        dev->xfer_cmd = NULL;
        dev->xfer_fence = NULL;
    }
    if (r == ACCEL_ERROR_DEVICE_LOST)
        device_mark_lost_locked(dev);
    return DEV_FAIL(dev, salvo_status_from_accel(r), "transfer of %llu bytes failed (%s)",
                    (unsigned long long)size, accel_result_name(r));
}

/* host[0, size) <-> buf[offset, +size) through the staging buffer, a
 * chunk at a time. */
static salvo_status staged_locked(salvo_buffer *buf, uint64_t offset, char *host, uint64_t size,
                                  bool to_host)
{
    salvo_device *dev = buf->dev;
    salvo_status r = SALVO_OK;
    for (uint64_t done = 0; r == SALVO_OK && done < size;) {
        uint64_t n = size - done < STAGING_BYTES ? size - done : STAGING_BYTES;
        char *stage = dev->staging_info.mapped;
        if (to_host) {
            r = staged_copy_locked(dev, buf->ab, offset + done, dev->staging, 0, n, true);
            if (r == SALVO_OK)
                memcpy(host + done, stage, n);
        } else {
            memcpy(stage, host + done, n);
            r = staged_copy_locked(dev, dev->staging, 0, buf->ab, offset + done, n, false);
        }
        done += n;
    }
    return r;
}

/* The caller's own pages for the page-aligned middle [*begin, *end) of
 * host[0, size), imported for one transfer; NULL when the transfer is
 * small, the device cannot import, or the import is refused (the caller
 * then stages everything: nothing is reported). */
static accel_buffer *import_middle_locked(salvo_device *dev, char *host, uint64_t size,
                                          uint64_t *begin, uint64_t *end)
{
    uint64_t align = dev->info.host_import_alignment;
    if (!dev->transfer_import || !dev->info.host_import || !align || size < IMPORT_MIN_BYTES)
        return NULL;
    uintptr_t p = (uintptr_t)host;
    uint64_t b = (align - p % align) % align;
    uint64_t e = b + (size - b) / align * align;
    if (e - b < IMPORT_MIN_BYTES / 2)
        return NULL;
    accel_buffer_desc d = {.size = e - b, .domain = SALVO_DOMAIN_HOST, .import_host = host + b,
                           .transfer = true};
    accel_buffer *ab = NULL;
    accel_buffer_info info = {0};
    if (VT(dev)->buffer_create(SELF(dev), dev->adev, &d, &ab, &info) != ACCEL_SUCCESS)
        return NULL;
    /* The device writes what the host then reads without a flush. */
    if (!info.host_coherent) {
        VT(dev)->buffer_destroy(SELF(dev), dev->adev, ab);
        return NULL;
    }
    *begin = b;
    *end = e;
    return ab;
}

static salvo_status transfer(salvo_buffer *buf, uint64_t offset, void *host_, uint64_t size,
                             bool to_host)
{
    salvo_device *dev = buf->dev;
    char *host = host_;
    void *mapped = buf->ai.mapped;
    bool direct = mapped && !(dev->force_staging && buf->domain == SALVO_DOMAIN_DEVICE);
    uint64_t imported = 0;
    pthread_mutex_lock(&dev->lock);
    salvo_status r = settle_locked(buf, to_host);
    if (r == SALVO_OK && direct) {
        if (to_host)
            memcpy(host, (char *)mapped + offset, size);
        else
            memcpy((char *)mapped + offset, host, size);
    } else if (r == SALVO_OK) {
        /* The transfer objects are this call's until it returns; another
         * transfer waits its turn (the lock is dropped while it waits). */
        while (dev->xfer_busy)
            pthread_cond_wait(&dev->slot_cv, &dev->lock);
        dev->xfer_busy = true;
        /* On one queue a copy starts only after every batch submitted
         * before it, so one behind a batch that waits on a gate not raised
         * yet would wait for the host to raise it. Wait for that here,
         * before anything is copied, under the fence timeout; the copies
         * then run to the end. */
        r = device_wait_ungated_locked(dev);
        if (r == SALVO_TIMEOUT)
            r = not_done(dev, "work ahead of it, held by a gate,", to_host);
        if (r == SALVO_OK)
            r = staging_locked(dev);
        uint64_t b = 0, e = 0;
        accel_buffer *middle = r == SALVO_OK ? import_middle_locked(dev, host, size, &b, &e) : NULL;
        if (middle) {
            /* The ends through staging, the middle by the device alone: no
             * host copy. Each copy is waited for, so the import can go at
             * once whatever happened. */
            r = staged_locked(buf, offset, host, b, to_host);
            if (r == SALVO_OK)
                r = to_host ? staged_copy_locked(dev, buf->ab, offset + b, middle, 0, e - b, true)
                            : staged_copy_locked(dev, middle, 0, buf->ab, offset + b, e - b, false);
            VT(dev)->buffer_destroy(SELF(dev), dev->adev, middle);
            if (r == SALVO_OK) {
                imported = e - b;
                r = staged_locked(buf, offset + e, host + e, size - e, to_host);
            }
        } else if (r == SALVO_OK) {
            r = staged_locked(buf, offset, host, size, to_host);
        }
        dev->xfer_busy = false;
        pthread_cond_broadcast(&dev->slot_cv);
    }
    pthread_mutex_unlock(&dev->lock);
    if (r == SALVO_OK) {
        COUNT_ADD(dev, transfer_bytes, size);
        COUNT_ADD(dev, transfer_bytes_imported, imported);
        salvo_clear_error();
    }
    return r;
}

salvo_status salvo_buffer_write(salvo_buffer *buf, uint64_t offset, const void *src, uint64_t size)
{
    salvo_status r = check_range(buf, "buffer_write", offset, src, size);
    return r ? r : transfer(buf, offset, (void *)src, size, false);
}

salvo_status salvo_buffer_read(salvo_buffer *buf, uint64_t offset, void *dst, uint64_t size)
{
    salvo_status r = check_range(buf, "buffer_read", offset, dst, size);
    return r ? r : transfer(buf, offset, dst, size, true);
}
