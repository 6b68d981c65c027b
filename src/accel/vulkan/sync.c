/*
 * Fences, and timeline semaphores through the entry points (core 1.2 or
 * VK_KHR_timeline_semaphore) the device chose at open.
 */
#include "accel/vulkan/vk_internal.h"

accel_result accel_vk_fence_create(void *self, accel_device *d, accel_fence **out)
{
    (void)self;
    *out = NULL;
    accel_fence *f = salvo_mem_calloc(d->alloc, 1, sizeof *f);
    if (!f)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    VkFenceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkResult r = d->vk.vkCreateFence(d->device, &ci, NULL, &f->fence);
    if (r != VK_SUCCESS) {
        salvo_mem_free(d->alloc, f);
        return r;
    }
    *out = f;
    return ACCEL_SUCCESS;
}

void accel_vk_fence_destroy(void *self, accel_device *d, accel_fence *f)
{
    (void)self;
    if (!f)
        return;
    d->vk.vkDestroyFence(d->device, f->fence, NULL);
    salvo_mem_free(d->alloc, f);
}

accel_result accel_vk_fence_reset(void *self, accel_device *d, accel_fence *f)
{
    (void)self;
    return d->vk.vkResetFences(d->device, 1, &f->fence);
}

accel_result accel_vk_fence_status(void *self, accel_device *d, accel_fence *f)
{
    (void)self;
    return d->vk.vkGetFenceStatus(d->device, f->fence);
}

accel_result accel_vk_fence_wait(void *self, accel_device *d, accel_fence *f, uint64_t timeout_ns)
{
    (void)self;
    return d->vk.vkWaitForFences(d->device, 1, &f->fence, VK_TRUE, timeout_ns);
}

accel_result accel_vk_timeline_create(void *self, accel_device *d, uint64_t initial,
                                      accel_timeline **out)
{
    (void)self;
    *out = NULL;
    if (!d->timeline)
        return VK_ERROR_FEATURE_NOT_PRESENT;
    accel_timeline *t = salvo_mem_calloc(d->alloc, 1, sizeof *t);
    if (!t)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    VkSemaphoreTypeCreateInfo type = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
        .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
        .initialValue = initial,
    };
    VkSemaphoreCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type};
    VkResult r = d->vk.vkCreateSemaphore(d->device, &ci, NULL, &t->semaphore);
    if (r != VK_SUCCESS) {
        salvo_mem_free(d->alloc, t);
        return r;
    }
    *out = t;
    return ACCEL_SUCCESS;
}

void accel_vk_timeline_destroy(void *self, accel_device *d, accel_timeline *t)
{
    (void)self;
    if (!t)
        return;
    d->vk.vkDestroySemaphore(d->device, t->semaphore, NULL);
    salvo_mem_free(d->alloc, t);
}

accel_result accel_vk_timeline_signal(void *self, accel_device *d, accel_timeline *t,
                                      uint64_t value)
{
    (void)self;
    VkSemaphoreSignalInfo si = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO,
        .semaphore = t->semaphore,
        .value = value,
    };
    return d->signal_semaphore(d->device, &si);
}

accel_result accel_vk_timeline_value(void *self, accel_device *d, accel_timeline *t,
                                     uint64_t *value)
{
    (void)self;
    return d->semaphore_value(d->device, t->semaphore, value);
}

accel_result accel_vk_timeline_wait(void *self, accel_device *d, accel_timeline *t,
                                    uint64_t value, uint64_t timeout_ns)
{
    (void)self;
    VkSemaphoreWaitInfo wi = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
        .semaphoreCount = 1,
        .pSemaphores = &t->semaphore,
        .pValues = &value,
    };
    return d->wait_semaphores(d->device, &wi, timeout_ns);
}
