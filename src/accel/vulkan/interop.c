/*
 * Interop (salvo_vulkan.h): the Vulkan handles behind a device or a buffer.
 */
#include "accel/vulkan/vk_internal.h"

#include "salvo/salvo_vulkan.h"

/* Every field read here is set once at open (or buffer create) and never
 * changes, so no lock is needed. */
accel_result accel_vk_native_handles(void *self, accel_device *d, accel_buffer *b,
                                     void *out_struct)
{
    (void)self;
    if (b) {
        *(VkBuffer *)out_struct = b->buffer;
        return ACCEL_SUCCESS;
    }
    *(salvo_vk_handles *)out_struct = (salvo_vk_handles){
        .instance = d->instance,
        .physical_device = d->phys,
        .device = d->device,
        .queue = d->queues[0],
        .queue_family_index = d->queue_family,
        .api_version = d->api_version,
        .get_instance_proc_addr = d->get_instance_proc_addr,
    };
    return ACCEL_SUCCESS;
}
