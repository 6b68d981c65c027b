/* The public entry points that reach the real Vulkan accelerator (kept
 * apart so unit tests can run the device layer on a fake one). */
#include <stdlib.h>

#include "accel/accel_fault.h"
#include "api/internal.h"
#include "base/env.h"
#include "salvo/salvo_vulkan.h"

/* What only the Vulkan accelerator knows, told in the device's info: the
 * queue family its streams run on, and whether $SALVO_QUEUE_FAMILY was
 * taken (the family is chosen in accel/vulkan/instance.c, which has no
 * log to say so). */
static void note_vulkan_settings(salvo_device *dev, bool faults, bool import)
{
    dev->info.fault_injection = faults;
    salvo_vk_handles h;
    const accel_vtable *vt = dev->acc.vt;
    if (vt->native_handles && vt->native_handles(dev->acc.self, dev->adev, NULL, &h) == ACCEL_SUCCESS)
        dev->info.queue_family = h.queue_family_index;
    if (import)
        return; /* the application's queue: the variable has no say */
    char why[ENV_WHY_MAX];
    uint64_t want = 0;
    env_status st = env_uint("SALVO_QUEUE_FAMILY", 0, UINT32_MAX, &want, why);
    if (st == ENV_BAD)
        ENV_WARN(&dev->log, "SALVO_QUEUE_FAMILY", why, "%u (the default family)",
                 dev->info.queue_family);
    else if (st == ENV_OK && want != dev->info.queue_family)
        ENV_WARN(&dev->log, "SALVO_QUEUE_FAMILY", "a queue family of this device that computes",
                 "%u (the default family)", dev->info.queue_family);
}

/* The Vulkan accelerator for a new device (under the fault decorator when
 * desc or $SALVO_FAULT asks for one), then the device on it: salvo's own
 * Vulkan objects, or the application's (import non-NULL). */
static salvo_status create_on_vulkan(const char *what, const salvo_device_desc *desc,
                                     const void *import, salvo_device **out)
{
    salvo_log_sink sink = {desc ? desc->log : NULL, desc ? desc->log_user : NULL};
    if (!out)
        return SALVO_FAIL(&sink, SALVO_ERROR_INVALID_ARGUMENT, "%s: out is NULL", what);
    *out = NULL;
    const salvo_allocator *alloc = desc ? desc->allocator : NULL;
    if (alloc && !alloc->alloc != !alloc->free)
        return SALVO_FAIL(&sink, SALVO_ERROR_INVALID_ARGUMENT,
                          "%s: allocator: alloc and free must be given together", what);
    /* No allocator of its own: the process-wide default as it is now, kept
     * by the device (and its accelerator) for life. */
    salvo_allocator fallback;
    salvo_device_desc resolved = desc ? *desc : (salvo_device_desc){0};
    if (!alloc && salvo_mem_default(&fallback))
        alloc = resolved.allocator = &fallback;
    desc = &resolved;
    accel acc;
    if (!accel_vulkan_create(alloc, &acc))
        return SALVO_FAIL(&sink, SALVO_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", what);
    /* Fault injection for users testing their own failure handling. */
    const char *fault = desc->fault ? desc->fault : getenv("SALVO_FAULT");
    bool faults = fault && *fault;
    if (faults) {
        accel wrapped;
        fault_accel *f = NULL;
        if (!accel_fault_wrap(alloc, acc, &wrapped, &f)) {
            acc.vt->destroy(acc.self);
            return SALVO_FAIL(&sink, SALVO_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory",
                              what);
        }
        char reason[256];
        if (!accel_fault_parse(f, fault, reason, sizeof reason)) {
            wrapped.vt->destroy(wrapped.self);
            return SALVO_FAIL(&sink, SALVO_ERROR_INVALID_ARGUMENT, "%s: %s: %s", what,
                              desc->fault ? "salvo_device_desc.fault" : "SALVO_FAULT", reason);
        }
        acc = wrapped;
    }
    salvo_status st = device_create_on(desc, acc, import, out);
    if (st == SALVO_OK)
        note_vulkan_settings(*out, faults, import != NULL);
    return st;
}

salvo_status salvo_device_create(const salvo_device_desc *desc, salvo_device **out)
{
    return create_on_vulkan("device_create", desc, NULL, out);
}

salvo_status salvo_device_create_vk(const salvo_vk_device_import *vk, const salvo_device_desc *desc,
                                    salvo_device **out)
{
    if (out)
        *out = NULL;
    salvo_log_sink sink = {desc ? desc->log : NULL, desc ? desc->log_user : NULL};
    const char *missing = !vk                   ? "vk"
                          : !vk->instance        ? "vk->instance"
                          : !vk->physical_device ? "vk->physical_device"
                          : !vk->device          ? "vk->device"
                          : !vk->queue           ? "vk->queue"
                                                 : NULL;
    if (missing)
        return SALVO_FAIL(&sink, SALVO_ERROR_INVALID_ARGUMENT, "device_create_vk: %s is NULL",
                          missing);
    if (!vk->queue_lock != !vk->queue_unlock)
        return SALVO_FAIL(&sink, SALVO_ERROR_INVALID_ARGUMENT,
                          "device_create_vk: queue_lock and queue_unlock must be given together");
    if (vk->device_extension_count && !vk->device_extensions)
        return SALVO_FAIL(&sink, SALVO_ERROR_INVALID_ARGUMENT,
                          "device_create_vk: %u device extensions but device_extensions is NULL",
                          vk->device_extension_count);
    /* The top three bits are the variant, not part of the version. */
    uint32_t api = vk->instance_api_version & 0x1FFFFFFFu;
    if (api == 0)
        api = VK_API_VERSION_1_0; /* as VkApplicationInfo reads it */
    if (api < VK_API_VERSION_1_1)
        return SALVO_FAIL(&sink, SALVO_ERROR_UNSUPPORTED,
                          "device_create_vk: the instance was created for Vulkan %u.%u; salvo "
                          "needs 1.1",
                          VK_API_VERSION_MAJOR(api), VK_API_VERSION_MINOR(api));
    return create_on_vulkan("device_create_vk", desc, vk, out);
}

salvo_status salvo_device_enumerate(salvo_device_entry *entries, uint32_t *count)
{
    if (!count)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "count is NULL");
    /* No device yet: the process-wide default allocator, if any. */
    salvo_allocator fallback;
    const salvo_allocator *alloc = salvo_mem_default(&fallback) ? &fallback : NULL;
    accel acc;
    if (!accel_vulkan_create(alloc, &acc))
        return SALVO_FAIL(NULL, SALVO_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
    accel_result r = acc.vt->enumerate(acc.self, entries, count);
    acc.vt->destroy(acc.self);
    if (r == ACCEL_INCOMPLETE)
        r = ACCEL_SUCCESS;
    /* A loader without any driver: there are no devices. */
    if (r == ACCEL_ERROR_INCOMPATIBLE_DRIVER || r == ACCEL_ERROR_INITIALIZATION_FAILED) {
        *count = 0;
        r = ACCEL_SUCCESS;
    }
    if (r == ACCEL_SUCCESS && entries)
        device_entries_disambiguate(entries, *count);
    if (r != ACCEL_SUCCESS)
        return SALVO_FAIL(NULL, salvo_status_from_accel(r), "cannot enumerate Vulkan devices (%s)",
                          accel_result_name(r));
    salvo_clear_error();
    return SALVO_OK;
}

void salvo_vk_loader_lock(void)
{
    accel_vulkan_loader_lock();
}

void salvo_vk_loader_unlock(void)
{
    accel_vulkan_loader_unlock();
}
