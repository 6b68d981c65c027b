/*
 * The Vulkan accelerator itself: its state (vk_self) and the table the core
 * calls through, whose entries the other files of this directory define.
 */
#include "accel/vulkan/vk_internal.h"

static void vk_destroy(void *self_)
{
    vk_self *self = self_;
    /* Free through a copy: the allocator lives inside the block being freed. */
    salvo_allocator allocator = self->allocator;
    salvo_mem_free(self->alloc ? &allocator : NULL, self);
}

static const accel_vtable vulkan_vtable = {
    .name = "vulkan",
    .enumerate = accel_vk_enumerate,
    .device_open = accel_vk_device_open,
    .device_close = accel_vk_device_close,
    .queue_wait_idle = accel_vk_queue_wait_idle,
    .buffer_create = accel_vk_buffer_create,
    .buffer_destroy = accel_vk_buffer_destroy,
    .pipeline_create = accel_vk_pipeline_create,
    .pipeline_destroy = accel_vk_pipeline_destroy,
    .descpool_create = accel_vk_descpool_create,
    .descpool_reset = accel_vk_descpool_reset,
    .descpool_destroy = accel_vk_descpool_destroy,
    .cmd_create = accel_vk_cmd_create,
    .cmd_destroy = accel_vk_cmd_destroy,
    .cmd_begin = accel_vk_cmd_begin,
    .cmd_end = accel_vk_cmd_end,
    .cmd_reset = accel_vk_cmd_reset,
    .cmd_dispatch = accel_vk_cmd_dispatch,
    .cmd_barrier = accel_vk_cmd_barrier,
    .cmd_copy = accel_vk_cmd_copy,
    .cmd_fill = accel_vk_cmd_fill,
    .cmd_native = accel_vk_cmd_native,
    .cmd_create_reusable = accel_vk_cmd_create_reusable,
    .cmd_begin_reusable = accel_vk_cmd_begin_reusable,
    .cmd_begin_resubmit = accel_vk_cmd_begin_resubmit,
    .cmd_execute = accel_vk_cmd_execute,
    .fence_create = accel_vk_fence_create,
    .fence_destroy = accel_vk_fence_destroy,
    .fence_reset = accel_vk_fence_reset,
    .fence_status = accel_vk_fence_status,
    .fence_wait = accel_vk_fence_wait,
    .submit = accel_vk_submit,
    .timeline_create = accel_vk_timeline_create,
    .timeline_destroy = accel_vk_timeline_destroy,
    .timeline_signal = accel_vk_timeline_signal,
    .timeline_value = accel_vk_timeline_value,
    .timeline_wait = accel_vk_timeline_wait,
    .image_format_support = accel_vk_image_format_support,
    .image_create = accel_vk_image_create,
    .image_view_create = accel_vk_image_view_create,
    .image_destroy = accel_vk_image_destroy,
    .sampler_create = accel_vk_sampler_create,
    .sampler_destroy = accel_vk_sampler_destroy,
    .cmd_image_init = accel_vk_cmd_image_init,
    .cmd_copy_image = accel_vk_cmd_copy_image,
    .destroy = vk_destroy,
    .native_handles = accel_vk_native_handles,
    .memory_info = accel_vk_memory_info,
    .querypool_create = accel_vk_querypool_create,
    .querypool_destroy = accel_vk_querypool_destroy,
    .cmd_querypool_reset = accel_vk_cmd_querypool_reset,
    .cmd_timestamp = accel_vk_cmd_timestamp,
    .querypool_results = accel_vk_querypool_results,
    .querypool_host_reset = accel_vk_querypool_host_reset,
    .cmd_dispatch_indirect = accel_vk_cmd_dispatch_indirect,
    .cmd_fill_bytes = accel_vk_cmd_fill_bytes,
    .cmd_copy_image_to_image = accel_vk_cmd_copy_image_to_image,
};

bool accel_vulkan_create(const salvo_allocator *alloc, accel *out)
{
    vk_self *self = salvo_mem_calloc(alloc, 1, sizeof *self);
    if (!self)
        return false;
    if (alloc) {
        self->allocator = *alloc;
        self->alloc = &self->allocator;
    }
    out->vt = &vulkan_vtable;
    out->self = self;
    return true;
}
