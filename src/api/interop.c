/* Interop (salvo/salvo_vulkan.h): the accelerator's native handles behind a
 * device or a buffer. The api/ layer only passes the request on through the
 * accelerator's optional native_handles entry; it never calls Vulkan. An
 * accelerator without that entry (the fake, or a fault decorator over it)
 * reports SALVO_ERROR_UNSUPPORTED. */
#include <string.h>

#include "api/internal.h"
#include "salvo/salvo_vulkan.h"

static salvo_status native_handles(salvo_device *dev, accel_buffer *ab, void *out,
                                   const char *what)
{
    const accel_vtable *vt = dev->acc.vt;
    accel_result r = vt->native_handles
                         ? vt->native_handles(dev->acc.self, dev->adev, ab, out)
                         : ACCEL_ERROR_FEATURE_NOT_PRESENT;
    if (r == ACCEL_ERROR_FEATURE_NOT_PRESENT)
        return DEV_FAIL(dev, SALVO_ERROR_UNSUPPORTED, "%s: the %s accelerator has no Vulkan handles",
                        what, vt->name);
    if (r != ACCEL_SUCCESS)
        return DEV_FAIL(dev, salvo_status_from_accel(r), "%s: %s", what, accel_result_name(r));
    salvo_clear_error();
    return SALVO_OK;
}

salvo_status salvo_device_vk_handles(salvo_device *dev, salvo_vk_handles *out)
{
    if (!out)
        return SALVO_FAIL(dev ? &dev->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "device_vk_handles: out is NULL");
    memset(out, 0, sizeof *out);
    if (!dev)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "device_vk_handles: device is NULL");
    salvo_vk_handles h;
    salvo_status st = native_handles(dev, NULL, &h, "device_vk_handles");
    if (st == SALVO_OK)
        *out = h;
    return st;
}

salvo_status salvo_buffer_vk_handle(salvo_buffer *buf, VkBuffer *out)
{
    if (!out)
        return SALVO_FAIL(buf ? &buf->dev->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "buffer_vk_handle: out is NULL");
    *out = VK_NULL_HANDLE;
    if (!buf)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "buffer_vk_handle: buffer is NULL");
    VkBuffer b = VK_NULL_HANDLE;
    salvo_status st = native_handles(buf->dev, buf->ab, &b, "buffer_vk_handle");
    if (st == SALVO_OK)
        *out = b;
    return st;
}
