/*
 * The raw-Vulkan round trip beside salvo's, in the same process and on the
 * same device: one dispatch of the empty kernel recorded once into a
 * command buffer, submitted to a queue of the family salvo's streams use
 * (the one the stream it is compared with submits to: streams take the
 * family's queues in turn) with a timeline signal and no fence, the timeline polled until it reads the value. That is the least a
 * launch + synchronize can cost on the driver; timed in the same process
 * as salvo's, alternating with it, the ratio of the two is free of the
 * differences between processes (CPU placement, page layout) that move
 * every driver call's cost together.
 *
 * Include after salvo/salvo_vulkan.h and "add.spv.h", in one file; it
 * needs "empty.spv.h" (shaders/empty.comp) and a now_s() clock in seconds
 * defined before it.
 * Submits only while no salvo call on the device is in progress.
 */
#ifndef SALVO_EXAMPLES_RAW_FLOOR_H
#define SALVO_EXAMPLES_RAW_FLOOR_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "empty.spv.h"

/* Variants of the trip (latency-probe's raw-* scenarios), to price what a
 * library's round trip adds to the bare one; 0 is the floor. */
enum {
    RAW_BARRIER = 1, /* a compute+transfer memory barrier before the dispatch */
    RAW_FRESH = 2,   /* the command buffer recorded again for each trip */
    RAW_WAIT = 4,    /* the submit waits on the timeline's value before (reached) */
    /* The add kernel (64 invocations), its buffer pushed as a descriptor
     * and its two words of push constants pushed before the dispatch: a
     * launch of salvo's, recorded by hand. */
    RAW_BIND = 8,
    /* The submit waits on a gate (a second timeline) that the host
     * signals 200 us later; the trip is timed from the signal (salvo-bench's
     * "gate latency"). */
    RAW_GATE = 16
};

typedef struct raw_floor {
    unsigned variant;
    VkDevice device;
    VkQueue queue;
    PFN_vkQueueSubmit submit;
    PFN_vkGetSemaphoreCounterValue value;
    PFN_vkSignalSemaphore signal;
    PFN_vkDestroySemaphore destroy_semaphore;
    PFN_vkDestroyCommandPool destroy_pool;
    PFN_vkDestroyPipeline destroy_pipeline;
    PFN_vkDestroyPipelineLayout destroy_layout;
    PFN_vkDestroyShaderModule destroy_module;
    PFN_vkBeginCommandBuffer begin;
    PFN_vkCmdBindPipeline bind;
    PFN_vkCmdDispatch dispatch;
    PFN_vkCmdPipelineBarrier barrier;
    PFN_vkEndCommandBuffer end;
    PFN_vkCmdPushDescriptorSetKHR push_descriptors;
    PFN_vkCmdPushConstants push_constants;
    PFN_vkDestroyDescriptorSetLayout destroy_set_layout;
    VkBuffer buffer; /* RAW_BIND's */
    VkShaderModule module;
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    VkPipeline pipeline;
    VkCommandPool pool;
    VkCommandBuffer cb;
    VkSemaphore timeline;
    VkSemaphore gate; /* RAW_GATE's */
    uint64_t signalled, gate_value;
    double submit_s; /* the time spent in vkQueueSubmit, all trips */
} raw_floor;

/* Records the trip's command buffer (begun with flags). */
static bool raw_floor_record(raw_floor *f, VkCommandBufferUsageFlags flags)
{
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = flags};
    if (f->begin(f->cb, &bi) != VK_SUCCESS)
        return false;
    if (f->variant & RAW_BARRIER) {
        const VkPipelineStageFlags stages =
            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
        VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                              .srcAccessMask =
                                  VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                              .dstAccessMask = VK_ACCESS_SHADER_READ_BIT |
                                               VK_ACCESS_SHADER_WRITE_BIT |
                                               VK_ACCESS_TRANSFER_READ_BIT |
                                               VK_ACCESS_TRANSFER_WRITE_BIT};
        f->barrier(f->cb, stages, stages, 0, 1, &mb, 0, NULL, 0, NULL);
    }
    f->bind(f->cb, VK_PIPELINE_BIND_POINT_COMPUTE, f->pipeline);
    if (f->variant & RAW_BIND) {
        VkDescriptorBufferInfo info = {.buffer = f->buffer, .offset = 0, .range = 256};
        VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                  .dstBinding = 0,
                                  .descriptorCount = 1,
                                  .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                  .pBufferInfo = &info};
        const uint32_t push[2] = {64, 1};
        f->push_descriptors(f->cb, VK_PIPELINE_BIND_POINT_COMPUTE, f->layout, 0, 1, &w);
        f->push_constants(f->cb, f->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, push);
    }
    f->dispatch(f->cb, 1, 1, 1);
    return f->end(f->cb) == VK_SUCCESS;
}

/* false (f left empty) where the device is not a Vulkan one or has no
 * timeline semaphores (Vulkan 1.2), or a call failed. variant: RAW_*;
 * buf: RAW_BIND's buffer (256 bytes at least), else NULL; queue_index: the
 * family's queue to submit to (below salvo_device_info.queue_count; 0 is
 * salvo_vk_handles.queue). */
static bool raw_floor_open(raw_floor *f, salvo_device *dev, unsigned variant, salvo_buffer *buf,
                           uint32_t queue_index)
{
    memset(f, 0, sizeof *f);
    f->variant = variant;
    if ((variant & RAW_BIND) && (!buf || salvo_buffer_vk_handle(buf, &f->buffer) != SALVO_OK))
        return false;
    salvo_vk_handles h;
    if (salvo_device_vk_handles(dev, &h) != SALVO_OK || h.api_version < VK_API_VERSION_1_2)
        return false;
    PFN_vkGetDeviceProcAddr gdpa =
        (PFN_vkGetDeviceProcAddr)h.get_instance_proc_addr(h.instance, "vkGetDeviceProcAddr");
    if (!gdpa)
        return false;
#define RAW_FN(type, name) ((type)gdpa(h.device, name))
    PFN_vkCreateShaderModule create_module = RAW_FN(PFN_vkCreateShaderModule, "vkCreateShaderModule");
    PFN_vkCreatePipelineLayout create_layout =
        RAW_FN(PFN_vkCreatePipelineLayout, "vkCreatePipelineLayout");
    PFN_vkCreateComputePipelines create_pipelines =
        RAW_FN(PFN_vkCreateComputePipelines, "vkCreateComputePipelines");
    PFN_vkCreateCommandPool create_pool = RAW_FN(PFN_vkCreateCommandPool, "vkCreateCommandPool");
    PFN_vkAllocateCommandBuffers allocate =
        RAW_FN(PFN_vkAllocateCommandBuffers, "vkAllocateCommandBuffers");
    f->begin = RAW_FN(PFN_vkBeginCommandBuffer, "vkBeginCommandBuffer");
    f->bind = RAW_FN(PFN_vkCmdBindPipeline, "vkCmdBindPipeline");
    f->dispatch = RAW_FN(PFN_vkCmdDispatch, "vkCmdDispatch");
    f->barrier = RAW_FN(PFN_vkCmdPipelineBarrier, "vkCmdPipelineBarrier");
    f->end = RAW_FN(PFN_vkEndCommandBuffer, "vkEndCommandBuffer");
    f->push_descriptors = RAW_FN(PFN_vkCmdPushDescriptorSetKHR, "vkCmdPushDescriptorSetKHR");
    f->push_constants = RAW_FN(PFN_vkCmdPushConstants, "vkCmdPushConstants");
    f->destroy_set_layout = RAW_FN(PFN_vkDestroyDescriptorSetLayout, "vkDestroyDescriptorSetLayout");
    PFN_vkCreateDescriptorSetLayout create_set_layout =
        RAW_FN(PFN_vkCreateDescriptorSetLayout, "vkCreateDescriptorSetLayout");
    PFN_vkCreateSemaphore create_semaphore = RAW_FN(PFN_vkCreateSemaphore, "vkCreateSemaphore");
    PFN_vkGetDeviceQueue get_queue = RAW_FN(PFN_vkGetDeviceQueue, "vkGetDeviceQueue");
    f->submit = RAW_FN(PFN_vkQueueSubmit, "vkQueueSubmit");
    f->value = RAW_FN(PFN_vkGetSemaphoreCounterValue, "vkGetSemaphoreCounterValue");
    f->signal = RAW_FN(PFN_vkSignalSemaphore, "vkSignalSemaphore");
    f->destroy_semaphore = RAW_FN(PFN_vkDestroySemaphore, "vkDestroySemaphore");
    f->destroy_pool = RAW_FN(PFN_vkDestroyCommandPool, "vkDestroyCommandPool");
    f->destroy_pipeline = RAW_FN(PFN_vkDestroyPipeline, "vkDestroyPipeline");
    f->destroy_layout = RAW_FN(PFN_vkDestroyPipelineLayout, "vkDestroyPipelineLayout");
    f->destroy_module = RAW_FN(PFN_vkDestroyShaderModule, "vkDestroyShaderModule");
#undef RAW_FN
    if (!create_module || !create_layout || !create_pipelines || !create_pool || !allocate ||
        !f->begin || !f->bind || !f->dispatch || !f->barrier || !f->end || !create_semaphore || !f->submit || !f->value ||
        !f->destroy_semaphore || !f->destroy_pool || !f->destroy_pipeline || !f->destroy_layout ||
        !f->destroy_module || !f->push_constants || !f->destroy_set_layout ||
        !create_set_layout || !get_queue || ((variant & RAW_BIND) && !f->push_descriptors) ||
        ((variant & RAW_GATE) && !f->signal))
        return false;
    f->device = h.device;
    f->queue = h.queue;
    if (queue_index > 0)
        get_queue(f->device, h.queue_family_index, queue_index, &f->queue);
    bool bind = variant & RAW_BIND;
    VkShaderModuleCreateInfo smi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                    .codeSize = bind ? sizeof add_spv : sizeof empty_spv,
                                    .pCode = bind ? add_spv : empty_spv};
    VkDescriptorSetLayoutBinding lb = {.binding = 0,
                                       .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                       .descriptorCount = 1,
                                       .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    VkDescriptorSetLayoutCreateInfo sli = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR,
        .bindingCount = 1,
        .pBindings = &lb};
    VkPushConstantRange range = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = 8};
    VkPipelineLayoutCreateInfo pli = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                      .setLayoutCount = bind ? 1 : 0,
                                      .pSetLayouts = &f->set_layout,
                                      .pushConstantRangeCount = bind ? 1 : 0,
                                      .pPushConstantRanges = &range};
    /* add's local size (spec constant 0), as salvo-bench sets it. */
    const uint32_t local = 64;
    VkSpecializationMapEntry me = {.constantID = 0, .offset = 0, .size = sizeof local};
    VkSpecializationInfo spec = {.mapEntryCount = 1,
                                 .pMapEntries = &me,
                                 .dataSize = sizeof local,
                                 .pData = &local};
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                   .queueFamilyIndex = h.queue_family_index};
    VkSemaphoreTypeCreateInfo sti = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                     .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
    VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &sti};
    bool ok = create_module(f->device, &smi, NULL, &f->module) == VK_SUCCESS &&
              (!bind || create_set_layout(f->device, &sli, NULL, &f->set_layout) == VK_SUCCESS) &&
              create_layout(f->device, &pli, NULL, &f->layout) == VK_SUCCESS;
    if (ok) {
        VkComputePipelineCreateInfo cpi = {
            .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
            .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                      .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                      .module = f->module,
                      .pName = "main",
                      .pSpecializationInfo = bind ? &spec : NULL},
            .layout = f->layout};
        ok = create_pipelines(f->device, VK_NULL_HANDLE, 1, &cpi, NULL, &f->pipeline) ==
                 VK_SUCCESS &&
             create_pool(f->device, &pci, NULL, &f->pool) == VK_SUCCESS &&
             create_semaphore(f->device, &sci, NULL, &f->timeline) == VK_SUCCESS &&
             (!(variant & RAW_GATE) ||
              create_semaphore(f->device, &sci, NULL, &f->gate) == VK_SUCCESS);
    }
    if (ok) {
        VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                           .commandPool = f->pool,
                                           .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                           .commandBufferCount = 1};
        ok = allocate(f->device, &cai, &f->cb) == VK_SUCCESS && raw_floor_record(f, 0);
    }
    return ok;
}

/* One round trip, in seconds: the submit to the timeline read complete.
 * Exits the program where a call fails. */
static double raw_floor_trip(raw_floor *f)
{
    uint64_t before = f->signalled, want = ++f->signalled;
    VkTimelineSemaphoreSubmitInfo tsi = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                         .signalSemaphoreValueCount = 1,
                                         .pSignalSemaphoreValues = &want};
    const VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .pNext = &tsi,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &f->cb,
                       .signalSemaphoreCount = 1,
                       .pSignalSemaphores = &f->timeline};
    uint64_t gate_at = f->gate_value + 1;
    if (f->variant & (RAW_WAIT | RAW_GATE)) {
        tsi.waitSemaphoreValueCount = 1;
        tsi.pWaitSemaphoreValues = f->variant & RAW_GATE ? &gate_at : &before;
        si.waitSemaphoreCount = 1;
        si.pWaitSemaphores = f->variant & RAW_GATE ? &f->gate : &f->timeline;
        si.pWaitDstStageMask = &wait_stage;
    }
    double t0 = now_s();
    bool ok = !(f->variant & RAW_FRESH) ||
              raw_floor_record(f, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    double s0 = now_s();
    ok = ok && f->submit(f->queue, 1, &si, VK_NULL_HANDLE) == VK_SUCCESS;
    f->submit_s += now_s() - s0;
    if (ok && (f->variant & RAW_GATE)) {
        struct timespec pause = {0, 200 * 1000}; /* the device reaches the wait */
        nanosleep(&pause, NULL);
        VkSemaphoreSignalInfo sig = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO,
                                     .semaphore = f->gate,
                                     .value = ++f->gate_value};
        t0 = now_s();
        ok = f->signal(f->device, &sig) == VK_SUCCESS;
    }
    uint64_t v = 0;
    while (ok && v < want)
        ok = f->value(f->device, f->timeline, &v) == VK_SUCCESS;
    if (!ok) {
        fprintf(stderr, "raw floor: a Vulkan call failed\n");
        exit(1);
    }
    return now_s() - t0;
}

/* Destroys what raw_floor_open made (after the last trip completed). */
static void raw_floor_close(raw_floor *f)
{
    if (!f->device)
        return;
    if (f->pool)
        f->destroy_pool(f->device, f->pool, NULL);
    if (f->timeline)
        f->destroy_semaphore(f->device, f->timeline, NULL);
    if (f->gate)
        f->destroy_semaphore(f->device, f->gate, NULL);
    if (f->pipeline)
        f->destroy_pipeline(f->device, f->pipeline, NULL);
    if (f->layout)
        f->destroy_layout(f->device, f->layout, NULL);
    if (f->set_layout)
        f->destroy_set_layout(f->device, f->set_layout, NULL);
    if (f->module)
        f->destroy_module(f->device, f->module, NULL);
    memset(f, 0, sizeof *f);
}

#endif
