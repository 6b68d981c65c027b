/*
 * Timestamp query pools, for traces.
 */
#include "accel/vulkan/vk_internal.h"

struct accel_querypool {
    VkQueryPool pool;
};

accel_result accel_vk_querypool_create(void *self, accel_device *d, uint32_t count,
                                       accel_querypool **out)
{
    (void)self;
    *out = NULL;
    if (!d->timestamp_bits)
        return VK_ERROR_FEATURE_NOT_PRESENT;
    accel_querypool *q = salvo_mem_calloc(d->alloc, 1, sizeof *q);
    if (!q)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    VkQueryPoolCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
        .queryType = VK_QUERY_TYPE_TIMESTAMP,
        .queryCount = count,
    };
    VkResult r = d->vk.vkCreateQueryPool(d->device, &ci, NULL, &q->pool);
    if (r != VK_SUCCESS) {
        salvo_mem_free(d->alloc, q);
        return r;
    }
    *out = q;
    return ACCEL_SUCCESS;
}

void accel_vk_querypool_destroy(void *self, accel_device *d, accel_querypool *q)
{
    (void)self;
    if (!q)
        return;
    d->vk.vkDestroyQueryPool(d->device, q->pool, NULL);
    salvo_mem_free(d->alloc, q);
}

void accel_vk_cmd_querypool_reset(void *self, accel_device *d, accel_cmd *c, accel_querypool *q,
                                  uint32_t first, uint32_t count)
{
    (void)self;
    d->vk.vkCmdResetQueryPool(c->cb, q->pool, first, count);
}

accel_result accel_vk_querypool_host_reset(void *self, accel_device *d, accel_querypool *q,
                                          uint32_t first, uint32_t count)
{
    (void)self;
    if (!d->host_query_reset || !d->vk.vkResetQueryPool)
        return VK_ERROR_FEATURE_NOT_PRESENT;
    d->vk.vkResetQueryPool(d->device, q->pool, first, count);
    return ACCEL_SUCCESS;
}

void accel_vk_cmd_timestamp(void *self, accel_device *d, accel_cmd *c, accel_querypool *q,
                            uint32_t index, bool end_of_work)
{
    (void)self;
    d->vk.vkCmdWriteTimestamp(c->cb,
                              end_of_work ? VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT
                                          : VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                              q->pool, index);
}

/* Called once the fence of the work that wrote them has signalled, so no
 * WAIT: a query not written (NOT_READY) is a bug of the caller's, not a
 * reason to block. */
accel_result accel_vk_querypool_results(void *self, accel_device *d, accel_querypool *q,
                                        uint32_t first, uint32_t count, uint64_t *ticks)
{
    (void)self;
    VkResult r = d->vk.vkGetQueryPoolResults(d->device, q->pool, first, count,
                                             (size_t)count * sizeof *ticks, ticks, sizeof *ticks,
                                             VK_QUERY_RESULT_64_BIT);
    if (r != VK_SUCCESS)
        return r;
    /* The bits above timestampValidBits are undefined. */
    if (d->timestamp_bits < 64) {
        uint64_t mask = (1ull << d->timestamp_bits) - 1;
        for (uint32_t i = 0; i < count; i++)
            ticks[i] &= mask;
    }
    return ACCEL_SUCCESS;
}
