/*
 * The device's pipeline cache persisted in a file (cache_file.h: the
 * file's envelope): loaded at open when the file holds a cache of this
 * device and driver, written back at close.
 */
#include "accel/vulkan/vk_internal.h"

#include <string.h>

#include "accel/cache_file.h"

/* Whether blob is a cache this device wrote (VkPipelineCacheHeaderVersionOne:
 * same vendor, device and pipelineCacheUUID, which changes with the driver
 * build). Drivers check the same, but a blob that fails here is never
 * handed to them. */
static bool cache_blob_ours(const accel_device *d, const void *blob, size_t size)
{
    VkPipelineCacheHeaderVersionOne h;
    if (size < sizeof h)
        return false;
    memcpy(&h, blob, sizeof h);
    return h.headerSize >= sizeof h && h.headerSize <= size &&
           h.headerVersion == VK_PIPELINE_CACHE_HEADER_VERSION_ONE &&
           h.vendorID == d->vendor_id && h.deviceID == d->device_id &&
           memcmp(h.pipelineCacheUUID, d->cache_uuid, VK_UUID_SIZE) == 0;
}

/* Create the device's pipeline cache, seeded from path when that holds a
 * cache of this device. Never fails the open: whatever goes wrong, the
 * device runs with an empty cache, or with none. */
void accel_vk_pipeline_cache_open(accel_device *d, const char *path)
{
    d->cache_path = salvo_mem_strdup(d->alloc, path);
    if (!d->cache_path) {
        SALVO_LOG(&d->log, SALVO_LOG_WARNING, "pipeline cache: out of host memory; none used");
        return;
    }
    void *blob = NULL;
    size_t size = 0;
    char reason[256 + SALVO_NAME_MAX];
    cache_file_status fs = cache_file_read(d->alloc, path, &blob, &size, reason, sizeof reason);
    if (fs == CACHE_FILE_MISSING)
        SALVO_LOG(&d->log, SALVO_LOG_INFO, "pipeline cache: no file '%s' yet; starting empty",
                  path);
    else if (fs != CACHE_FILE_OK)
        SALVO_LOG(&d->log, SALVO_LOG_WARNING, "pipeline cache: %s; starting empty", reason);
    else if (!cache_blob_ours(d, blob, size)) {
        SALVO_LOG(&d->log, SALVO_LOG_INFO,
                  "pipeline cache: '%s' was written for another device or driver; starting "
                  "empty",
                  path);
        salvo_mem_free(d->alloc, blob);
        blob = NULL;
        size = 0;
    }
    VkPipelineCacheCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
        .initialDataSize = size,
        .pInitialData = blob,
    };
    VkPipelineCache cache;
    VkResult r = d->vk.vkCreatePipelineCache(d->device, &ci, NULL, &cache);
    if (r != VK_SUCCESS && blob) {
        /* The driver refused the data it would otherwise ignore: start over. */
        SALVO_LOG(&d->log, SALVO_LOG_WARNING,
                  "pipeline cache: the driver refused the data from '%s' (%s); starting empty",
                  path, accel_result_name(r));
        ci.initialDataSize = 0;
        ci.pInitialData = NULL;
        r = d->vk.vkCreatePipelineCache(d->device, &ci, NULL, &cache);
    } else if (r == VK_SUCCESS && blob) {
        SALVO_LOG(&d->log, SALVO_LOG_INFO, "pipeline cache: %zu bytes loaded from '%s'", size,
                  path);
    }
    salvo_mem_free(d->alloc, blob);
    if (r != VK_SUCCESS) {
        SALVO_LOG(&d->log, SALVO_LOG_WARNING, "pipeline cache: cannot create one (%s); none used",
                  accel_result_name(r));
        return;
    }
    d->pipeline_cache = cache;
}

/* Write the cache back to its file. Failures are logged: a cache not
 * saved costs the next run time, nothing else. This is the one host
 * allocation on a destroy path (the cache's data and the temporary file's
 * name, whose sizes are only known now), and only with a cache file: when
 * it is refused the file is not written, and the destroy goes on. */
void accel_vk_pipeline_cache_store(accel_device *d)
{
    if (!d->pipeline_cache || !d->cache_path)
        return;
    /* The size can grow between the two calls (another thread's pipeline):
     * VK_INCOMPLETE then, and another try. */
    for (int attempt = 0; attempt < 4; attempt++) {
        size_t size = 0;
        VkResult r = d->vk.vkGetPipelineCacheData(d->device, d->pipeline_cache, &size, NULL);
        if (r != VK_SUCCESS || size == 0) {
            SALVO_LOG(&d->log, SALVO_LOG_WARNING, "pipeline cache: no data to write (%s)",
                      accel_result_name(r));
            return;
        }
        void *blob = salvo_mem_alloc(d->alloc, size);
        if (!blob) {
            SALVO_LOG(&d->log, SALVO_LOG_WARNING,
                      "pipeline cache: out of host memory; '%s' not written", d->cache_path);
            return;
        }
        r = d->vk.vkGetPipelineCacheData(d->device, d->pipeline_cache, &size, blob);
        if (r == VK_SUCCESS) {
            char reason[256 + SALVO_NAME_MAX];
            if (cache_file_write(d->alloc, d->cache_path, blob, size, reason, sizeof reason))
                SALVO_LOG(&d->log, SALVO_LOG_INFO, "pipeline cache: %zu bytes written to '%s'",
                          size, d->cache_path);
            else
                SALVO_LOG(&d->log, SALVO_LOG_WARNING, "pipeline cache: %s", reason);
        }
        salvo_mem_free(d->alloc, blob);
        if (r != VK_INCOMPLETE) {
            if (r != VK_SUCCESS)
                SALVO_LOG(&d->log, SALVO_LOG_WARNING, "pipeline cache: cannot read it back (%s)",
                          accel_result_name(r));
            return;
        }
    }
}
