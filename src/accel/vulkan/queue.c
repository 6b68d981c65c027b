/*
 * The device's queues: submits and idle waits, each under the
 * application's queue lock where salvo shares the queue with it.
 */
#include "accel/vulkan/vk_internal.h"

/* The application's lock on a queue it shares with salvo (see
 * salvo_vk_device_import.queue_lock), around salvo's submits and idle waits. */
static void queue_lock(accel_device *d)
{
    if (d->queue_lock)
        d->queue_lock(d->queue_lock_user);
}

static void queue_unlock(accel_device *d)
{
    if (d->queue_unlock)
        d->queue_unlock(d->queue_lock_user);
}

accel_result accel_vk_queue_wait_idle(void *self, accel_device *d)
{
    (void)self;
    VkResult r = VK_SUCCESS;
    for (uint32_t i = 0; i < d->queue_count && r == VK_SUCCESS; i++) {
        queue_lock(d);
        r = d->vk.vkQueueWaitIdle(d->queues[i]);
        queue_unlock(d);
    }
    /* The transfer queue is salvo's own (never an application's). */
    if (r == VK_SUCCESS && d->transfer_queue)
        r = d->vk.vkQueueWaitIdle(d->transfer_queue);
    return r;
}

/* At least the core's bound, SLOT_MAX_WAITS (16) waits plus one signal,
 * so that submitting a batch never allocates: device destroy submits the
 * batches still open, and a destroy must not need memory. */
enum { SUBMIT_STACK_OPS = 32 };

accel_result accel_vk_submit(void *self, accel_device *d, const accel_submit_desc *desc)
{
    (void)self;
    size_t waits = desc->wait_count, n = waits + desc->signal_count;
    /* Submits are per batch, but the common few semaphores fit the stack. */
    uint64_t value_buf[SUBMIT_STACK_OPS];
    VkSemaphore sem_buf[SUBMIT_STACK_OPS];
    VkPipelineStageFlags stage_buf[SUBMIT_STACK_OPS];
    uint64_t *values = value_buf;
    VkSemaphore *sems = sem_buf;
    VkPipelineStageFlags *stages = stage_buf;
    void *heap = NULL;
    if (n > SUBMIT_STACK_OPS) {
        heap = salvo_mem_alloc(d->alloc, n * (sizeof *values + sizeof *sems + sizeof *stages));
        if (!heap)
            return VK_ERROR_OUT_OF_HOST_MEMORY;
        values = heap;
        sems = (VkSemaphore *)(values + n);
        stages = (VkPipelineStageFlags *)(sems + n);
    }
    bool transfer = desc->queue == d->queue_count && d->transfer_queue;
    for (size_t i = 0; i < waits; i++) {
        sems[i] = desc->waits[i].timeline->semaphore;
        values[i] = desc->waits[i].value;
        /* An indirect dispatch reads its counts before its shaders run. */
        stages[i] = transfer ? VK_PIPELINE_STAGE_TRANSFER_BIT
                             : VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT |
                                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT |
                                   VK_PIPELINE_STAGE_TRANSFER_BIT;
    }
    for (size_t i = 0; i < desc->signal_count; i++) {
        sems[waits + i] = desc->signals[i].timeline->semaphore;
        values[waits + i] = desc->signals[i].value;
    }
    VkTimelineSemaphoreSubmitInfo timeline = {
        .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
        .waitSemaphoreValueCount = desc->wait_count,
        .pWaitSemaphoreValues = values,
        .signalSemaphoreValueCount = desc->signal_count,
        .pSignalSemaphoreValues = values + waits,
    };
    VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .pNext = n > 0 ? &timeline : NULL,
        .waitSemaphoreCount = desc->wait_count,
        .pWaitSemaphores = sems,
        .pWaitDstStageMask = stages,
        .commandBufferCount = desc->cmd ? 1 : 0,
        .pCommandBuffers = desc->cmd ? &desc->cmd->cb : NULL,
        .signalSemaphoreCount = desc->signal_count,
        .pSignalSemaphores = sems + waits,
    };
    VkQueue queue = transfer ? d->transfer_queue
                             : d->queues[desc->queue < d->queue_count ? desc->queue : 0];
    if (!transfer)
        queue_lock(d);
    VkResult r = d->vk.vkQueueSubmit(queue, 1, &si,
                                     desc->fence ? desc->fence->fence : VK_NULL_HANDLE);
    if (!transfer)
        queue_unlock(d);
    salvo_mem_free(d->alloc, heap);
    return r;
}
