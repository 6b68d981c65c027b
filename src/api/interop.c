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

/* The engine's recorder: the program's, with the command buffer as Vulkan's. */
static void record_vk(void *native_cmd, void (*record)(void), void *user)
{
    ((salvo_vk_record_fn)record)((VkCommandBuffer)native_cmd, user);
}

salvo_status salvo_vk_stream_record(salvo_stream *st, const salvo_vk_buffer_use *uses,
                                    uint32_t use_count, salvo_vk_record_fn record, void *user)
{
    if (!st)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "vk_stream_record: stream is NULL");
    salvo_device *dev = stream_device(st);
    if (!record)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "vk_stream_record: record is NULL");
    if (use_count && !uses)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "vk_stream_record: uses is NULL");
    if (use_count > SALVO_MAX_BINDINGS)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "vk_stream_record: %u buffer uses; at most %d", use_count,
                        SALVO_MAX_BINDINGS);
    if (!dev->acc.vt->cmd_native)
        return DEV_FAIL(dev, SALVO_ERROR_UNSUPPORTED,
                        "vk_stream_record: the %s accelerator has no command buffers to record into",
                        dev->acc.vt->name);
    accel_bind ranges[SALVO_MAX_BINDINGS];
    resource *of[SALVO_MAX_BINDINGS];
    command_native np = {.fn = record_vk, .record = (void (*)(void))record, .user = user};
    for (uint32_t i = 0; i < use_count; i++) {
        const salvo_vk_buffer_use *u = &uses[i];
        salvo_buffer *b = u->buffer;
        if (!b)
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "vk_stream_record: use %u: buffer is NULL", i);
        if (b->dev != dev)
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "vk_stream_record: use %u: buffer of another device", i);
        uint64_t size = u->size ? u->size : (u->offset < b->size ? b->size - u->offset : 0);
        if (u->offset >= b->size || size == 0 || size > b->size - u->offset)
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "vk_stream_record: use %u: range [%llu, +%llu) outside the buffer of "
                            "%llu bytes",
                            i, (unsigned long long)u->offset, (unsigned long long)u->size,
                            (unsigned long long)b->size);
        if (u->access != SALVO_ACCESS_READ && u->access != SALVO_ACCESS_WRITE &&
            u->access != SALVO_ACCESS_READ_WRITE)
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "vk_stream_record: use %u: access %d is not a salvo_access", i,
                            (int)u->access);
        ranges[i] = (accel_bind){.buffer = b->ab, .offset = u->offset, .size = size};
        of[i] = &b->res;
        np.how[i] = (uint8_t)u->access;
    }
    /* A capture refuses it (its recorder): a graph cannot record the
     * program's commands again. */
    command c = {.kind = COMMAND_NATIVE, .binds = ranges, .bind_count = use_count, .push = &np,
                 .push_size = sizeof np};
    return stream_call_command(st, &c, &(stream_call){.holds = &(command_holds){.of = of}});
}
