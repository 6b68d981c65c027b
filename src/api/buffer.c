/* Buffers: exact allocations in a domain, explicit transfers, mapping,
 * host import, and a release that waits for the work that uses them. */
#include <stdio.h>
#include <string.h>

#include "api/internal.h"
#include "api/host_call.h"

#define VT(dev) ((dev)->acc.vt)
#define SELF(dev) ((dev)->acc.self)

static void buffer_release(retire_entry *e, bool abandoned)
{
    (void)abandoned; /* destroy commands stay valid on a lost device */
    salvo_buffer *buf = resource_as_buffer(resource_of_release(e));
    salvo_device *dev = buf->dev;
    salvo_mutex_held(&dev->q.lock); /* releases run under the lock */
    live_unlink_locked(dev, &buf->res);
    VT(dev)->buffer_destroy(SELF(dev), dev->adev, buf->ab);
    COUNT_SUB(dev, live_buffers, 1);
    COUNT_SUB(dev, live_buffer_bytes, buf->size);
    salvo_mem_free(dev->alloc, buf);
}

/* "1.5 GiB", "12.0 MiB", "512 bytes" */
static void format_bytes(uint64_t n, char *buf, size_t size)
{
    if (n >= (1ull << 30))
        snprintf(buf, size, "%.1f GiB", (double)n / (double)(1ull << 30));
    else if (n >= (1ull << 20))
        snprintf(buf, size, "%.1f MiB", (double)n / (double)(1ull << 20));
    else
        snprintf(buf, size, "%llu bytes", (unsigned long long)n);
}

/* The memory a domain allocates from, for a failed allocation's message:
 * its kind, and the device's heaps of that kind with their sizes
 * ("device-local memory (SALVO_DOMAIN_DEVICE; heap 0 of 2.0 GiB)"). Where
 * the device has no heap of that kind apart, every heap is named. */
static void describe_memory(const salvo_device *dev, salvo_domain domain, char *buf, size_t size)
{
    static const char *const kinds[] = {
        [SALVO_DOMAIN_DEVICE] = "device-local memory (SALVO_DOMAIN_DEVICE",
        [SALVO_DOMAIN_HOST] = "host-visible memory (SALVO_DOMAIN_HOST",
        [SALVO_DOMAIN_SHARED] = "host-visible device-local memory (SALVO_DOMAIN_SHARED",
    };
    const salvo_device_info *info = &dev->info;
    uint32_t count = info->memory_heap_count < 16 ? info->memory_heap_count : 16;
    bool want_local = domain != SALVO_DOMAIN_HOST;
    uint32_t matching = 0;
    for (uint32_t i = 0; i < count; i++)
        matching += info->memory_heaps[i].device_local == want_local;
    size_t at = (size_t)snprintf(buf, size, "%s", kinds[domain]);
    const char *sep = "; ";
    for (uint32_t i = 0; i < count && at < size; i++) {
        if (matching && info->memory_heaps[i].device_local != want_local)
            continue;
        char bytes[32];
        format_bytes(info->memory_heaps[i].size, bytes, sizeof bytes);
        at += (size_t)snprintf(buf + at, size - at, "%sheap %u of %s", sep, i, bytes);
        sep = ", ";
    }
    if (at < size)
        snprintf(buf + at, size - at, ")");
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
    /* A buffer is made of whole words (accel/vulkan/memory.c rounds up): a
     * size within 3 of 2**64 would round to 0. No device holds it anyway. */
    if (size > UINT64_MAX - 3)
        return DEV_FAIL(dev, SALVO_ERROR_OUT_OF_DEVICE_MEMORY,
                        "%s: %llu bytes: more than any device's memory", what,
                        (unsigned long long)size);
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
    resource_init(&buf->res, RESOURCE_BUFFER, buffer_release, size);
    salvo_mutex_lock(&dev->q.lock);
    accel_result r = sched_buffer_create_locked(&dev->q, &d, &buf->ab, &buf->ai);
    if (r == ACCEL_SUCCESS)
        live_link_locked(dev, &buf->res);
    salvo_mutex_unlock(&dev->q.lock);
    if (r != ACCEL_SUCCESS) {
        salvo_mem_free(dev->alloc, buf);
        if (r == ACCEL_ERROR_DEVICE_LOST) {
            salvo_mutex_lock(&dev->q.lock);
            queue_mark_lost_locked(&dev->q);
            salvo_mutex_unlock(&dev->q.lock);
        }
        char memory[256];
        describe_memory(dev, domain, memory, sizeof memory);
        return DEV_FAIL(dev, salvo_status_from_accel(r), "%s: %llu bytes of %s: %s", what,
                        (unsigned long long)size, memory, accel_result_name(r));
    }
    buf->dev = dev;
    buf->size = size;
    buf->domain = domain;
    buf->imported = host != NULL;
    atomic_init(&buf->address_taken, false);

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

salvo_status salvo_buffer_address(salvo_buffer *buf, uint64_t *out)
{
    if (out)
        *out = 0;
    if (!buf || !out)
        return SALVO_FAIL(buf ? &buf->dev->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "buffer_address: %s is NULL", buf ? "out" : "buffer");
    if (!buf->ai.device_address)
        return DEV_FAIL(buf->dev, SALVO_ERROR_UNSUPPORTED,
                        "buffer_address: the device has no buffer device addresses "
                        "(features.buffer_device_address)");
    atomic_store(&buf->address_taken, true);
    *out = buf->ai.device_address;
    salvo_clear_error();
    return SALVO_OK;
}

void salvo_buffer_destroy(salvo_buffer *buf)
{
    if (buf)
        device_let_go(buf->dev, &buf->res);
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
    if (size == 0)
        return DEV_FAIL(buf->dev, SALVO_ERROR_INVALID_ARGUMENT, "%s: size is 0", what);
    if (offset >= buf->size || size > buf->size - offset)
        return DEV_FAIL(buf->dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "%s: range [%llu, +%llu) outside the buffer of %llu bytes", what,
                        (unsigned long long)offset, (unsigned long long)size,
                        (unsigned long long)buf->size);
    return SALVO_OK;
}

static salvo_status transfer(salvo_buffer *buf, uint64_t offset, void *host_, uint64_t size,
                             bool to_host)
{
    salvo_device *dev = buf->dev;
    if (host_call_running)
        return host_call_refuse(dev, to_host ? "buffer_read" : "buffer_write");
    char *host = host_;
    void *mapped = buf->ai.mapped;
    bool direct = mapped && !(dev->force_staging && buf->domain == SALVO_DOMAIN_DEVICE);
    uint64_t imported = 0;
    salvo_mutex_lock(&dev->q.lock);
    if (to_host && graph_capture_writes_locked(dev, &buf->res)) {
        salvo_mutex_unlock(&dev->q.lock);
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE,
                        "buffer_read: a capture in progress writes this buffer; its nodes run "
                        "only when the graph is replayed");
    }
    /* Every batch that bound the buffer must be over before the host
     * touches it; with its address given out, also every batch with work
     * that reaches memory through addresses. A gated batch is waited for
     * only where it may use the buffer, and one with such work counts as
     * using every buffer: the others (gated, using neither) are skipped
     * still ("Gates and waits"). */
    uint64_t last = resource_last_use(&buf->res);
    if (atomic_load(&buf->address_taken) && dev->q.address_serial > last)
        last = dev->q.address_serial;
    salvo_status r = transfer_settle_locked(&dev->q, buf->ab, last, to_host, false);
    if (r == SALVO_OK && !direct)
        r = transfer_staged_locked(&dev->q, buf->ab, offset, host, size, to_host, &imported);
    salvo_mutex_unlock(&dev->q.lock);
    /* Through the mapping, with no lock held: the work before it is over,
     * and the program's bytes are no business of the device lock's. */
    if (r == SALVO_OK && direct) {
        if (to_host)
            memcpy(host, (char *)mapped + offset, size);
        else
            memcpy((char *)mapped + offset, host, size);
    }
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
