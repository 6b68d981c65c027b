/*
 * Command buffers and what is recorded into them: dispatches, direct or
 * indirect (descriptors, pushed or in a set from a pool, and push
 * constants), barriers, copies.
 */
#include "accel/vulkan/vk_internal.h"
#include "base/inline.h"

#include <string.h>

static void cmd_state_forget(accel_cmd *c)
{
    c->bound = VK_NULL_HANDLE;
    c->state_layout = VK_NULL_HANDLE;
    c->pushed_count = UINT32_MAX;
    c->constants_size = UINT32_MAX;
}

static inline bool same_binds(const accel_bind *a, const accel_bind *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (a[i].binding != b[i].binding || a[i].element != b[i].element ||
            a[i].uniform != b[i].uniform || a[i].kind != b[i].kind ||
            a[i].buffer != b[i].buffer || a[i].offset != b[i].offset || a[i].size != b[i].size ||
            a[i].image != b[i].image || a[i].sampler != b[i].sampler)
            return false;
    return true;
}

void accel_vk_cmd_destroy(void *self, accel_device *d, accel_cmd *c)
{
    (void)self;
    if (!c)
        return;
    d->vk.vkDestroyCommandPool(d->device, c->pool, NULL); /* frees the buffer too */
    salvo_mem_free(d->alloc, c);
}

static accel_result cmd_make(void *self, accel_device *d, uint32_t queue, VkCommandBufferLevel level,
                             accel_cmd **out)
{
    *out = NULL;
    accel_cmd *c = salvo_mem_calloc(d->alloc, 1, sizeof *c);
    if (!c)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    c->transfer = queue == d->queue_count && d->transfer_family != UINT32_MAX;
    /* A pool per command buffer lets streams record on different threads
     * without sharing a pool (pools are externally synchronised), and
     * lets accel_vk_cmd_begin reset the whole pool. */
    VkCommandPoolCreateInfo pi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
        .queueFamilyIndex = c->transfer ? d->transfer_family : d->queue_family,
    };
    VkCommandPool pool;
    VkResult r = d->vk.vkCreateCommandPool(d->device, &pi, NULL, &pool);
    if (r == VK_SUCCESS) {
        c->pool = pool;
        VkCommandBufferAllocateInfo ai = {
            .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
            .commandPool = c->pool,
            .level = level,
            .commandBufferCount = 1,
        };
        r = d->vk.vkAllocateCommandBuffers(d->device, &ai, &c->cb);
    }
    if (r != VK_SUCCESS) {
        accel_vk_cmd_destroy(self, d, c);
        return r;
    }
    *out = c;
    return ACCEL_SUCCESS;
}

accel_result accel_vk_cmd_create(void *self, accel_device *d, uint32_t queue, accel_cmd **out)
{
    return cmd_make(self, d, queue, VK_COMMAND_BUFFER_LEVEL_PRIMARY, out);
}

/* A graph's command buffers are secondary ones: executed from a batch's
 * primary, so the replay takes its place in the stream's batch. */
accel_result accel_vk_cmd_create_reusable(void *self, accel_device *d, uint32_t queue,
                                          accel_cmd **out)
{
    return cmd_make(self, d, queue, VK_COMMAND_BUFFER_LEVEL_SECONDARY, out);
}

accel_result accel_vk_cmd_begin_reusable(void *self, accel_device *d, accel_cmd *c)
{
    (void)self;
    /* Compute only: nothing to inherit from a render pass. */
    VkCommandBufferInheritanceInfo ii = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
    VkCommandBufferBeginInfo bi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        /* Several replays of one graph may be pending at once. */
        .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT,
        .pInheritanceInfo = &ii,
    };
    cmd_state_forget(c);
    return d->vk.vkBeginCommandBuffer(c->cb, &bi);
}

void accel_vk_cmd_execute(void *self, accel_device *d, accel_cmd *c, accel_cmd *const *reusable,
                          uint32_t count)
{
    (void)self;
    VkCommandBuffer cbs[64];
    for (uint32_t done = 0; done < count;) {
        uint32_t n = count - done < 64 ? count - done : 64;
        for (uint32_t i = 0; i < n; i++)
            cbs[i] = reusable[done + i]->cb;
        d->vk.vkCmdExecuteCommands(c->cb, n, cbs);
        done += n;
    }
    /* What the secondaries bound is not what the cache says. */
    cmd_state_forget(c);
}

accel_result accel_vk_cmd_begin(void *self, accel_device *d, accel_cmd *c)
{
    (void)self;
    VkCommandBufferBeginInfo bi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    cmd_state_forget(c);
    /* What begins here (a batch, a staged transfer) is its pool's only
     * buffer: resetting the pool leaves the begin less to do than a
     * buffer reset by its begin. On an H100 the independent launch
     * (latency-probe independent) took 0.84, 0.80, 0.57 us against 0.90,
     * 0.98, 1.09 in turn, with busy graph replays unchanged
     * (docs/perf/h100/pool_batch_ab_2026-12-06.txt). Recordings kept
     * for replays (cmd_begin_reusable, cmd_begin_resubmit) are reset by
     * their begin. */
    VkResult r = d->vk.vkResetCommandPool(d->device, c->pool, 0);
    return r == VK_SUCCESS ? d->vk.vkBeginCommandBuffer(c->cb, &bi) : r;
}

accel_result accel_vk_cmd_begin_resubmit(void *self, accel_device *d, accel_cmd *c)
{
    (void)self;
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    cmd_state_forget(c);
    return d->vk.vkBeginCommandBuffer(c->cb, &bi);
}

accel_result accel_vk_cmd_end(void *self, accel_device *d, accel_cmd *c)
{
    (void)self;
    return d->vk.vkEndCommandBuffer(c->cb);
}

accel_result accel_vk_cmd_reset(void *self, accel_device *d, accel_cmd *c)
{
    (void)self;
    cmd_state_forget(c);
    return d->vk.vkResetCommandBuffer(c->cb, 0);
}

/* Whether the n bytes at a and b are the same: a word at a time, where
 * a call to memcmp would cost more than a few push constants take. */
static bool same_bytes(const unsigned char *a, const unsigned char *b, uint32_t n)
{
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        if (x != y)
            return false;
    }
    for (; i < n; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

/* Everything a dispatch records before the dispatch itself: the
 * pipeline, its descriptors (pushed, or a set from pool) and push
 * constants, each skipped where the command buffer has it bound already.
 * A failure records nothing. Inline: each dispatch's path (its two
 * callers). */
static SALVO_ALWAYS_INLINE accel_result dispatch_state(accel_device *d, accel_cmd *c,
                                                      accel_pipeline *p, accel_descpool *pool,
                                                      const accel_bind *binds, uint32_t bind_count,
                                                      const void *push, uint32_t push_size)
{
    if (bind_count > SALVO_MAX_BINDINGS)
        return VK_ERROR_INITIALIZATION_FAILED;
    /* Dispatch is the hot path: no heap. */
    VkDescriptorBufferInfo infos[SALVO_MAX_BINDINGS];
    VkDescriptorImageInfo image_infos[SALVO_MAX_BINDINGS];
    VkWriteDescriptorSet writes[SALVO_MAX_BINDINGS];
    for (uint32_t i = 0; i < bind_count; i++) {
        writes[i] = (VkWriteDescriptorSet){
            .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
            .dstBinding = binds[i].binding,
            .dstArrayElement = binds[i].element,
            .descriptorCount = 1,
            .descriptorType = accel_vk_descriptor_type(binds[i].kind, binds[i].uniform),
        };
        if (binds[i].kind == SALVO_BINDING_BUFFER) {
            infos[i] = (VkDescriptorBufferInfo){
                .buffer = binds[i].buffer->buffer,
                .offset = binds[i].offset,
                .range = binds[i].size ? binds[i].size : VK_WHOLE_SIZE,
            };
            writes[i].pBufferInfo = &infos[i];
        } else {
            image_infos[i] = (VkDescriptorImageInfo){
                .sampler = binds[i].sampler ? accel_vk_sampler_handle(binds[i].sampler)
                                            : VK_NULL_HANDLE,
                .imageView = binds[i].image ? accel_vk_image_view(binds[i].image)
                                            : VK_NULL_HANDLE,
                .imageLayout = binds[i].image ? VK_IMAGE_LAYOUT_GENERAL
                                              : VK_IMAGE_LAYOUT_UNDEFINED,
            };
            writes[i].pImageInfo = &image_infos[i];
        }
    }
    VkDescriptorSet set = VK_NULL_HANDLE;
    if (p->binding_count > 0 && !p->push) {
        VkDescriptorSetAllocateInfo ai = {
            .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
            .descriptorPool = pool->pool,
            .descriptorSetCount = 1,
            .pSetLayouts = &p->set_layout,
        };
        pool->taken = true;
        VkResult r = d->vk.vkAllocateDescriptorSets(d->device, &ai, &set);
        /* Both mean "this pool is spent": the core moves to a fresh one. */
        if (r == VK_ERROR_OUT_OF_POOL_MEMORY || r == VK_ERROR_FRAGMENTED_POOL)
            return ACCEL_ERROR_OUT_OF_POOL_MEMORY;
        if (r != VK_SUCCESS)
            return r;
        for (uint32_t i = 0; i < bind_count; i++)
            writes[i].dstSet = set;
        d->vk.vkUpdateDescriptorSets(d->device, bind_count, writes, 0, NULL);
    }
    if (c->bound != p->pipeline) {
        d->vk.vkCmdBindPipeline(c->cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipeline);
        c->bound = p->pipeline;
    }
    if (c->state_layout != p->layout) {
        c->state_layout = p->layout;
        c->pushed_count = UINT32_MAX;
        c->constants_size = UINT32_MAX;
    }
    if (set != VK_NULL_HANDLE) {
        d->vk.vkCmdBindDescriptorSets(c->cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0, 1, &set,
                                      0, NULL);
    } else if (p->push &&
               !(c->pushed_count == bind_count && same_binds(c->pushed, binds, bind_count))) {
        d->vk.vkCmdPushDescriptorSetKHR(c->cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0,
                                        bind_count, writes);
        for (uint32_t i = 0; i < bind_count; i++) /* a few: cheaper than a call to memcpy */
            c->pushed[i] = binds[i];
        c->pushed_count = bind_count;
    }
    if (push_size > 0 &&
        !(c->constants_size == push_size && same_bytes(c->constants, push, push_size))) {
        /* Vulkan pushes whole words: a block of 8- or 16-bit members may
         * end mid-word, its last word then pushed from a padded copy
         * (the layout's range is rounded up to match). */
        uint32_t whole = push_size & ~3u;
        if (whole)
            d->vk.vkCmdPushConstants(c->cb, p->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, whole, push);
        if (whole != push_size) {
            unsigned char tail[4] = {0};
            memcpy(tail, (const unsigned char *)push + whole, push_size - whole);
            d->vk.vkCmdPushConstants(c->cb, p->layout, VK_SHADER_STAGE_COMPUTE_BIT, whole, 4,
                                     tail);
        }
        bool fits = push_size <= sizeof c->constants;
        if (fits)
            memcpy(c->constants, push, push_size);
        c->constants_size = fits ? push_size : UINT32_MAX;
    }
    return ACCEL_SUCCESS;
}

accel_result accel_vk_cmd_dispatch(void *self, accel_device *d, accel_cmd *c, accel_pipeline *p,
                                   accel_descpool *pool, const accel_bind *binds,
                                   uint32_t bind_count, const uint32_t groups[3], const void *push,
                                   uint32_t push_size)
{
    (void)self;
    accel_result r = dispatch_state(d, c, p, pool, binds, bind_count, push, push_size);
    if (r == ACCEL_SUCCESS)
        d->vk.vkCmdDispatch(c->cb, groups[0], groups[1], groups[2]);
    return r;
}

accel_result accel_vk_cmd_dispatch_indirect(void *self, accel_device *d, accel_cmd *c,
                                            accel_pipeline *p, accel_descpool *pool,
                                            const accel_bind *binds, uint32_t bind_count,
                                            accel_buffer *counts, uint64_t offset,
                                            const void *push, uint32_t push_size)
{
    (void)self;
    accel_result r = dispatch_state(d, c, p, pool, binds, bind_count, push, push_size);
    if (r == ACCEL_SUCCESS)
        d->vk.vkCmdDispatchIndirect(c->cb, counts->buffer, offset);
    return r;
}

/* A dispatch reads its indirect counts before its shaders run, at the
 * indirect-command stage. Only ACCEL_BARRIER_INDIRECT, recorded right
 * before each indirect dispatch (command_record), waits at that stage: a
 * barrier that names it costs GPU time on some drivers (about 1.8 us more
 * per dependent dispatch on the H200's), so the others leave it out. Its
 * first scope (compute and transfer, which follow any semaphore wait's
 * stage) chains after whatever wrote the counts, earlier in the batch, in
 * an earlier batch, or on another queue; a later write of the counts is
 * kept from overtaking their read by COMPUTE_SHADER in any first scope,
 * which includes the earlier indirect stage. */
static const struct {
    VkPipelineStageFlags src_stage, dst_stage;
    VkAccessFlags src_access, dst_access;
} barriers[] = {
    [ACCEL_BARRIER_COMPUTE_COMPUTE] = {VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                       VK_ACCESS_SHADER_WRITE_BIT,
                                       VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT},
    [ACCEL_BARRIER_WORK] = {VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                            VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT},
    [ACCEL_BARRIER_TRANSFER_COMPUTE] = {VK_PIPELINE_STAGE_TRANSFER_BIT,
                                        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                        VK_ACCESS_TRANSFER_WRITE_BIT,
                                        VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT},
    [ACCEL_BARRIER_COMPUTE_TRANSFER] = {VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                        VK_PIPELINE_STAGE_TRANSFER_BIT,
                                        VK_ACCESS_SHADER_WRITE_BIT,
                                        VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT},
    [ACCEL_BARRIER_ALL_HOST] = {VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                                VK_PIPELINE_STAGE_HOST_BIT,
                                VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                                VK_ACCESS_HOST_READ_BIT},
    [ACCEL_BARRIER_INDIRECT] = {VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                                VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT |
                                    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                                VK_ACCESS_INDIRECT_COMMAND_READ_BIT | VK_ACCESS_SHADER_READ_BIT |
                                    VK_ACCESS_SHADER_WRITE_BIT},
};

void accel_vk_cmd_barrier(void *self, accel_device *d, accel_cmd *c, accel_barrier kind)
{
    (void)self;
    VkMemoryBarrier mb = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = barriers[kind].src_access,
        .dstAccessMask = barriers[kind].dst_access,
    };
    VkPipelineStageFlags src = barriers[kind].src_stage, dst = barriers[kind].dst_stage;
    if (c->transfer) {
        /* A copy engine's queue has no shader stage: only its copies are
         * there to order (what other queues did is ordered by semaphores). */
        const VkAccessFlags shader = VK_ACCESS_INDIRECT_COMMAND_READ_BIT |
                                     VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
        src = VK_PIPELINE_STAGE_TRANSFER_BIT;
        dst = dst == VK_PIPELINE_STAGE_HOST_BIT ? dst : VK_PIPELINE_STAGE_TRANSFER_BIT;
        mb.srcAccessMask = (mb.srcAccessMask & ~shader) | VK_ACCESS_TRANSFER_WRITE_BIT;
        mb.dstAccessMask &= ~shader;
        if (dst == VK_PIPELINE_STAGE_TRANSFER_BIT)
            mb.dstAccessMask |= VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    }
    d->vk.vkCmdPipelineBarrier(c->cb, src, dst, 0, 1, &mb, 0, NULL, 0, NULL);
}

void *accel_vk_cmd_native(void *self, accel_device *d, accel_cmd *c)
{
    (void)self;
    (void)d;
    cmd_state_forget(c);
    return (void *)c->cb;
}

void accel_vk_cmd_fill(void *self, accel_device *d, accel_cmd *c, accel_buffer *dst,
                       uint64_t offset, uint64_t size, uint32_t value)
{
    (void)self;
    d->vk.vkCmdFillBuffer(c->cb, dst->buffer, offset, size, value);
}

void accel_vk_cmd_copy(void *self, accel_device *d, accel_cmd *c, accel_buffer *src,
                       uint64_t src_offset, accel_buffer *dst, uint64_t dst_offset, uint64_t size)
{
    (void)self;
    VkBufferCopy region = {.srcOffset = src_offset, .dstOffset = dst_offset, .size = size};
    d->vk.vkCmdCopyBuffer(c->cb, src->buffer, dst->buffer, 1, &region);
}
