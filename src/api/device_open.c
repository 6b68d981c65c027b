/* The public entry points that reach the real Vulkan accelerator (kept
 * apart so unit tests can run the device layer on a fake one). */
#include <stdlib.h>

#include "accel/accel_fault.h"
#include "api/internal.h"
#include "salvo/salvo_vulkan.h"

/* The Vulkan accelerator for a new device (under the fault decorator when
 * desc or $SALVO_FAULT asks for one), then the device on it: salvo's own
 * Vulkan objects, or the application's (import non-NULL). */
static salvo_status create_on_vulkan(const salvo_device_desc *desc, const void *import,
                                     salvo_device **out)
{
    if (!out)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "out is NULL");
    *out = NULL;
    const salvo_allocator *alloc = desc ? desc->allocator : NULL;
    salvo_log_sink sink = {desc ? desc->log : NULL, desc ? desc->log_user : NULL};
    if (alloc && !alloc->alloc != !alloc->free)
        return SALVO_FAIL(&sink, SALVO_ERROR_INVALID_ARGUMENT,
                          "allocator: alloc and free must be given together");
    /* No allocator of its own: the process-wide default as it is now, kept
     * by the device (and its accelerator) for life. */
    salvo_allocator fallback;
    salvo_device_desc resolved = desc ? *desc : (salvo_device_desc){0};
    if (!alloc && salvo_mem_default(&fallback))
        alloc = resolved.allocator = &fallback;
    desc = &resolved;
    accel acc;
    if (!accel_vulkan_create(alloc, &acc))
        return SALVO_FAIL(&sink, SALVO_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
    /* Fault injection for users testing their own failure handling. */
    const char *fault = desc->fault ? desc->fault : getenv("SALVO_FAULT");
    if (fault && *fault) {
        accel wrapped;
        fault_accel *f = NULL;
        if (!accel_fault_wrap(alloc, acc, &wrapped, &f)) {
            acc.vt->destroy(acc.self);
            return SALVO_FAIL(&sink, SALVO_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
        }
        char reason[256];
        if (!accel_fault_parse(f, fault, reason, sizeof reason)) {
            wrapped.vt->destroy(wrapped.self);
            return SALVO_FAIL(&sink, SALVO_ERROR_INVALID_ARGUMENT, "SALVO_FAULT: %s", reason);
        }
        acc = wrapped;
    }
    return device_create_on(desc, acc, import, out);
}

salvo_status salvo_device_create(const salvo_device_desc *desc, salvo_device **out)
{
    return create_on_vulkan(desc, NULL, out);
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
    return create_on_vulkan(desc, vk, out);
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
