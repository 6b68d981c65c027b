/*
 * vk-fence-floor: what a submit-and-wait round trip costs in raw Vulkan on
 * this device, with nothing recorded per launch: the floor under salvo's
 * "launch + synchronize" figure (salvo-bench).
 *
 * One command buffer holding one dispatch of the empty kernel is recorded
 * once, then submitted ROUNDS times per mode with a fence and a timeline
 * semaphore signalled by the same submit; each mode waits for completion a
 * different way:
 *   poll fence      vkGetFenceStatus in a loop
 *   poll timeline   vkGetSemaphoreCounterValue in a loop (then the fence,
 *                   which must be signalled before it is reset)
 *   poll both       both in a loop, noting when each is first seen
 *   block fence     vkWaitForFences
 *   block timeline  vkWaitSemaphores (then the fence)
 * and prints medians: the submit call, the time from its return until the
 * timeline and the fence read complete, and the whole round trip (p90 too).
 *
 * Then the host's part of a graph replay on this driver, for a graph of
 * 10,000 dispatches (a barrier before each; 2,000 on a CPU device, where
 * the host executes them) recorded once, each replay waited for (the
 * device idle): as 40 secondaries of 250 that a primary recorded per
 * replay executes, or as 40 primaries in one submit; and one secondary
 * recorded again with one dispatch.
 *
 * Then the floor under a host gate (salvo-bench's "gate latency"): the
 * dispatch waits on a second timeline that the host signals once the
 * device has reached the wait, and the time from the signal until the
 * dispatch's timeline reads complete is taken, beside the signal call
 * itself; and the same with the submit made only after the signal (the
 * work held on the host until the gate opens).
 *
 * Last, the same graph again:
 *   - replays made back to back (the device busy with the ones before),
 *     8 submitted, then waited for, per round: what each records plus its
 *     submit, for each way a replay can be made: 40, 80 or 20 secondaries
 *     executed by a primary recorded per replay, 40 primaries in one
 *     submit, one primary of the whole graph, the 20 secondaries executed
 *     by a primary recorded once per replay in flight and submitted again
 *     each round (as salvo's replays recorded ahead), the same with the
 *     add kernel in the secondaries, its buffer pushed or a descriptor set
 *     bound before each dispatch (where the device pushes descriptors: as
 *     salvo's graph of add launches records it), and the 40 secondaries with
 *     one updated dispatch recorded inline between the 20th and the 21st
 *     (what an update recorded into the replay's primary adds), and one
 *     primary of the whole graph of add launches, its buffer pushed once;
 *   - the graph's first command buffer, a secondary or a primary, recorded
 *     again with one dispatch after a replay completed: the reset (by the
 *     begin, or by vkResetCommandBuffer), begin, record and end apart.
 * Uses its own copy of volk; no salvo. Exit 0, 77 without a device.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <volk.h>

#include "add.spv.h"
#include "empty.spv.h"

enum {
    ROUNDS = 2000
};

#define CHECK(call)                                                                               \
    do {                                                                                          \
        VkResult check_r = (call);                                                                \
        if (check_r != VK_SUCCESS) {                                                              \
            fprintf(stderr, "%s: VkResult %d\n", #call, (int)check_r);                           \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(double *v, size_t n, double q)
{
    qsort(v, n, sizeof *v, by_value);
    return v[(size_t)(q * (double)(n - 1))];
}

typedef struct gpu {
    VkInstance instance;
    VkDevice device;
    VkQueue queue;
    VkCommandBuffer cb;
    VkFence fence;
    VkSemaphore timeline;
    uint64_t value; /* last value signalled */
    uint32_t family;
    bool cpu; /* the device is the host's CPU (lavapipe) */
    VkSemaphore gate; /* signalled by the host */
    uint64_t gate_value;
    /* for teardown */
    VkShaderModule module;
    VkPipelineLayout layout;
    VkPipeline pipeline;
    VkCommandPool pool;
    VkPhysicalDevice pd;
    bool push_descriptors; /* VK_KHR_push_descriptor enabled */
} gpu;

/* The first discrete GPU, else the first device; one compute queue. */
static int gpu_open(gpu *g)
{
    memset(g, 0, sizeof *g);
    if (volkInitialize() != VK_SUCCESS)
        return 77;
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                             .pApplicationName = "vk-fence-floor",
                             .apiVersion = VK_API_VERSION_1_2};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                .pApplicationInfo = &app};
    if (vkCreateInstance(&ici, NULL, &g->instance) != VK_SUCCESS)
        return 77;
    volkLoadInstance(g->instance);
    VkPhysicalDevice pds[16];
    uint32_t n = 16;
    VkResult r = vkEnumeratePhysicalDevices(g->instance, &n, pds);
    if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || n == 0)
        return 77;
    VkPhysicalDevice pd = pds[0];
    VkPhysicalDeviceProperties props;
    for (uint32_t i = 0; i < n; i++) {
        vkGetPhysicalDeviceProperties(pds[i], &props);
        if (props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) {
            pd = pds[i];
            break;
        }
    }
    vkGetPhysicalDeviceProperties(pd, &props);
    if (props.apiVersion < VK_API_VERSION_1_2) {
        fprintf(stderr, "%s: Vulkan 1.2 needed for timeline semaphores\n", props.deviceName);
        return 77;
    }
    VkQueueFamilyProperties fam[16];
    uint32_t fam_count = 16, family = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &fam_count, fam);
    while (family < fam_count && !(fam[family].queueFlags & VK_QUEUE_COMPUTE_BIT))
        family++;
    if (family == fam_count)
        return 77;
    /* FLOOR_COMPUTE_ONLY=1: a family that computes and does not draw,
     * where there is one (the family salvo's streams take queues from). */
    const char *only = getenv("FLOOR_COMPUTE_ONLY");
    for (uint32_t i = 0; only && only[0] == '1' && i < fam_count; i++)
        if ((fam[i].queueFlags & VK_QUEUE_COMPUTE_BIT) &&
            !(fam[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) {
            family = i;
            break;
        }
    printf("device: %s, queue family %u\n", props.deviceName, family);
    g->cpu = props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    g->family = family;

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueFamilyIndex = family,
                                   .queueCount = 1,
                                   .pQueuePriorities = &priority};
    VkPhysicalDeviceVulkan12Features v12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .timelineSemaphore = VK_TRUE};
    /* Push descriptors where the device has them (the replays whose
     * dispatches bind a buffer as salvo's launches do). */
    const char *push_ext = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
    uint32_t ext_count = 0;
    vkEnumerateDeviceExtensionProperties(pd, NULL, &ext_count, NULL);
    VkExtensionProperties *exts = calloc(ext_count ? ext_count : 1, sizeof *exts);
    vkEnumerateDeviceExtensionProperties(pd, NULL, &ext_count, exts);
    for (uint32_t i = 0; exts && i < ext_count; i++)
        g->push_descriptors |= strcmp(exts[i].extensionName, push_ext) == 0;
    free(exts);
    g->pd = pd;
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                              .pNext = &v12,
                              .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &qci,
                              .enabledExtensionCount = g->push_descriptors ? 1 : 0,
                              .ppEnabledExtensionNames = &push_ext};
    CHECK(vkCreateDevice(pd, &dci, NULL, &g->device));
    volkLoadDevice(g->device);
    vkGetDeviceQueue(g->device, family, 0, &g->queue);

    VkShaderModuleCreateInfo smi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                    .codeSize = sizeof empty_spv,
                                    .pCode = empty_spv};
    CHECK(vkCreateShaderModule(g->device, &smi, NULL, &g->module));
    VkPipelineLayoutCreateInfo pli = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    CHECK(vkCreatePipelineLayout(g->device, &pli, NULL, &g->layout));
    VkComputePipelineCreateInfo cpi = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = g->module,
                  .pName = "main"},
        .layout = g->layout};
    CHECK(vkCreateComputePipelines(g->device, VK_NULL_HANDLE, 1, &cpi, NULL, &g->pipeline));

    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .queueFamilyIndex = family};
    CHECK(vkCreateCommandPool(g->device, &pci, NULL, &g->pool));
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = g->pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
    CHECK(vkAllocateCommandBuffers(g->device, &cai, &g->cb));
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    CHECK(vkBeginCommandBuffer(g->cb, &begin));
    vkCmdBindPipeline(g->cb, VK_PIPELINE_BIND_POINT_COMPUTE, g->pipeline);
    vkCmdDispatch(g->cb, 1, 1, 1);
    CHECK(vkEndCommandBuffer(g->cb));

    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    CHECK(vkCreateFence(g->device, &fci, NULL, &g->fence));
    VkSemaphoreTypeCreateInfo sti = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                     .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
    VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &sti};
    CHECK(vkCreateSemaphore(g->device, &sci, NULL, &g->timeline));
    CHECK(vkCreateSemaphore(g->device, &sci, NULL, &g->gate));
    return 0;
}

static void gpu_close(gpu *g)
{
    if (g->device) {
        vkDeviceWaitIdle(g->device);
        vkDestroySemaphore(g->device, g->timeline, NULL);
        vkDestroySemaphore(g->device, g->gate, NULL);
        vkDestroyFence(g->device, g->fence, NULL);
        vkDestroyCommandPool(g->device, g->pool, NULL);
        vkDestroyPipeline(g->device, g->pipeline, NULL);
        vkDestroyPipelineLayout(g->device, g->layout, NULL);
        vkDestroyShaderModule(g->device, g->module, NULL);
        vkDestroyDevice(g->device, NULL);
    }
    if (g->instance)
        vkDestroyInstance(g->instance, NULL);
}

typedef enum mode { POLL_FENCE, POLL_TIMELINE, POLL_BOTH, BLOCK_FENCE, BLOCK_TIMELINE } mode;

static const char *const mode_names[] = {"poll fence", "poll timeline", "poll both",
                                         "block fence", "block timeline"};

static bool timeline_reached(gpu *g)
{
    uint64_t v = 0;
    CHECK(vkGetSemaphoreCounterValue(g->device, g->timeline, &v));
    return v >= g->value;
}

static bool fence_signalled(gpu *g)
{
    VkResult r = vkGetFenceStatus(g->device, g->fence);
    if (r != VK_SUCCESS && r != VK_NOT_READY)
        CHECK(r);
    return r == VK_SUCCESS;
}

/* One round trip; times in µs from the submit's return. */
static void round_trip(gpu *g, mode m, double *submit, double *timeline_at, double *fence_at,
                       double *total)
{
    g->value++;
    VkTimelineSemaphoreSubmitInfo tsi = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                         .signalSemaphoreValueCount = 1,
                                         .pSignalSemaphoreValues = &g->value};
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .pNext = &tsi,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &g->cb,
                       .signalSemaphoreCount = 1,
                       .pSignalSemaphores = &g->timeline};
    double t0 = now_us();
    CHECK(vkQueueSubmit(g->queue, 1, &si, g->fence));
    double t1 = now_us(), ts = 0, tf = 0;
    VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                              .semaphoreCount = 1,
                              .pSemaphores = &g->timeline,
                              .pValues = &g->value};
    switch (m) {
    case POLL_FENCE:
        while (!fence_signalled(g))
            ;
        ts = tf = now_us();
        break;
    case POLL_TIMELINE:
        while (!timeline_reached(g))
            ;
        ts = now_us();
        while (!fence_signalled(g))
            ;
        tf = now_us();
        break;
    case POLL_BOTH:
        while (!ts || !tf) {
            if (!tf && fence_signalled(g))
                tf = now_us();
            if (!ts && timeline_reached(g))
                ts = now_us();
        }
        break;
    case BLOCK_FENCE:
        CHECK(vkWaitForFences(g->device, 1, &g->fence, VK_TRUE, UINT64_MAX));
        ts = tf = now_us();
        break;
    case BLOCK_TIMELINE:
        CHECK(vkWaitSemaphores(g->device, &wi, UINT64_MAX));
        ts = now_us();
        CHECK(vkWaitForFences(g->device, 1, &g->fence, VK_TRUE, UINT64_MAX));
        tf = now_us();
        break;
    }
    CHECK(vkResetFences(g->device, 1, &g->fence));
    *submit = t1 - t0;
    *timeline_at = ts - t1;
    *fence_at = tf - t1;
    *total = (ts > tf ? ts : tf) - t0;
}

/* The dispatch submitted to wait on the gate's next value, or (held) not
 * yet: the host signals the gate 200 us later, then submits if held, and
 * polls the dispatch's timeline. Times in us from just before the signal. */
static void gate_trip(gpu *g, bool held, double *signal, double *total)
{
    g->value++;
    g->gate_value++;
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    uint64_t values[2] = {g->gate_value, g->value};
    VkTimelineSemaphoreSubmitInfo tsi = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                         .waitSemaphoreValueCount = held ? 0 : 1,
                                         .pWaitSemaphoreValues = values,
                                         .signalSemaphoreValueCount = 1,
                                         .pSignalSemaphoreValues = &values[1]};
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .pNext = &tsi,
                       .waitSemaphoreCount = held ? 0 : 1,
                       .pWaitSemaphores = &g->gate,
                       .pWaitDstStageMask = &stage,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &g->cb,
                       .signalSemaphoreCount = 1,
                       .pSignalSemaphores = &g->timeline};
    if (!held)
        CHECK(vkQueueSubmit(g->queue, 1, &si, g->fence));
    struct timespec pause = {0, 200 * 1000};
    nanosleep(&pause, NULL);
    VkSemaphoreSignalInfo sig = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO,
                                 .semaphore = g->gate,
                                 .value = g->gate_value};
    double t0 = now_us();
    CHECK(vkSignalSemaphore(g->device, &sig));
    double t1 = now_us();
    if (held)
        CHECK(vkQueueSubmit(g->queue, 1, &si, g->fence));
    while (!timeline_reached(g))
        ;
    double t2 = now_us();
    CHECK(vkWaitForFences(g->device, 1, &g->fence, VK_TRUE, UINT64_MAX));
    CHECK(vkResetFences(g->device, 1, &g->fence));
    *signal = t1 - t0;
    *total = t2 - t0;
}

/* The compute->compute barrier recorded before each dispatch of a replay. */
static const VkMemoryBarrier replay_barrier = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                                               .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                                               .dstAccessMask = VK_ACCESS_SHADER_READ_BIT};

/* Binds the pipeline (a command buffer executed before may have left
 * another bound) and records count dispatches, a barrier before each. */
static void record_dispatches(const gpu *g, VkCommandBuffer cb, int count)
{
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, g->pipeline);
    for (int i = 0; i < count; i++) {
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                             VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &replay_barrier, 0, NULL,
                             0, NULL);
        vkCmdDispatch(cb, 1, 1, 1);
    }
}

/* The add kernel (data[i] += value) as salvo's launches bind it, for
 * replays whose dispatches bind a buffer: pushed before each dispatch
 * (push), or a descriptor set written once and bound before each (set),
 * the push constants pushed either way. */
typedef struct bound_kernel {
    VkShaderModule module;
    VkDescriptorSetLayout set_layouts[2]; /* [0] push, [1] set */
    VkPipelineLayout layouts[2];
    VkPipeline pipelines[2];
    VkDescriptorPool dpool;
    VkDescriptorSet set;
    VkBuffer buffer;
    VkDeviceMemory memory;
} bound_kernel;

/* false where the device has no push descriptors (bk left empty). */
static bool bound_open(const gpu *g, bound_kernel *bk)
{
    memset(bk, 0, sizeof *bk);
    if (!g->push_descriptors)
        return false;
    VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                              .size = 256,
                              .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT};
    CHECK(vkCreateBuffer(g->device, &bci, NULL, &bk->buffer));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(g->device, bk->buffer, &req);
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(g->pd, &mp);
    uint32_t type = 0;
    while (type < mp.memoryTypeCount && !(req.memoryTypeBits & (1u << type)))
        type++;
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .allocationSize = req.size,
                                .memoryTypeIndex = type};
    CHECK(vkAllocateMemory(g->device, &mai, NULL, &bk->memory));
    CHECK(vkBindBufferMemory(g->device, bk->buffer, bk->memory, 0));
    VkShaderModuleCreateInfo smi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                    .codeSize = sizeof add_spv,
                                    .pCode = add_spv};
    CHECK(vkCreateShaderModule(g->device, &smi, NULL, &bk->module));
    const uint32_t local = 64;
    VkSpecializationMapEntry me = {.constantID = 0, .offset = 0, .size = sizeof local};
    VkSpecializationInfo spec = {.mapEntryCount = 1,
                                 .pMapEntries = &me,
                                 .dataSize = sizeof local,
                                 .pData = &local};
    VkPushConstantRange range = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = 8};
    for (int l = 0; l < 2; l++) {
        VkDescriptorSetLayoutBinding lb = {.binding = 0,
                                           .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                           .descriptorCount = 1,
                                           .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
        VkDescriptorSetLayoutCreateInfo sli = {
            .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
            .flags = l == 0 ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR : 0,
            .bindingCount = 1,
            .pBindings = &lb};
        CHECK(vkCreateDescriptorSetLayout(g->device, &sli, NULL, &bk->set_layouts[l]));
        VkPipelineLayoutCreateInfo pli = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                          .setLayoutCount = 1,
                                          .pSetLayouts = &bk->set_layouts[l],
                                          .pushConstantRangeCount = 1,
                                          .pPushConstantRanges = &range};
        CHECK(vkCreatePipelineLayout(g->device, &pli, NULL, &bk->layouts[l]));
        VkComputePipelineCreateInfo cpi = {
            .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
            .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                      .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                      .module = bk->module,
                      .pName = "main",
                      .pSpecializationInfo = &spec},
            .layout = bk->layouts[l]};
        CHECK(vkCreateComputePipelines(g->device, VK_NULL_HANDLE, 1, &cpi, NULL,
                                       &bk->pipelines[l]));
    }
    VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1};
    VkDescriptorPoolCreateInfo dpi = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                      .maxSets = 1,
                                      .poolSizeCount = 1,
                                      .pPoolSizes = &size};
    CHECK(vkCreateDescriptorPool(g->device, &dpi, NULL, &bk->dpool));
    VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorPool = bk->dpool,
                                      .descriptorSetCount = 1,
                                      .pSetLayouts = &bk->set_layouts[1]};
    CHECK(vkAllocateDescriptorSets(g->device, &ai, &bk->set));
    VkDescriptorBufferInfo info = {bk->buffer, 0, 256};
    VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                              .dstSet = bk->set,
                              .descriptorCount = 1,
                              .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                              .pBufferInfo = &info};
    vkUpdateDescriptorSets(g->device, 1, &w, 0, NULL);
    return true;
}

static void bound_close(const gpu *g, bound_kernel *bk)
{
    for (int l = 0; l < 2; l++) {
        vkDestroyPipeline(g->device, bk->pipelines[l], NULL);
        vkDestroyPipelineLayout(g->device, bk->layouts[l], NULL);
        vkDestroyDescriptorSetLayout(g->device, bk->set_layouts[l], NULL);
    }
    vkDestroyDescriptorPool(g->device, bk->dpool, NULL);
    vkDestroyShaderModule(g->device, bk->module, NULL);
    vkDestroyBuffer(g->device, bk->buffer, NULL);
    vkFreeMemory(g->device, bk->memory, NULL);
}

/* count dispatches of the add kernel, a barrier before each, its buffer
 * pushed (l = 0) or its set bound (l = 1) before each, or pushed once at
 * the start with its push constants (l = 2: as salvo records a chunk whose
 * nodes bind the same range, skipping what is bound already). */
static void record_bound(const bound_kernel *bk, VkCommandBuffer cb, int l, int count)
{
    int k = l == 2 ? 0 : l; /* l = 2 pushes as l = 0 does */
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, bk->pipelines[k]);
    const uint32_t push[2] = {64, 1};
    VkDescriptorBufferInfo info = {bk->buffer, 0, 256};
    VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                              .descriptorCount = 1,
                              .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                              .pBufferInfo = &info};
    if (l == 2) {
        vkCmdPushDescriptorSetKHR(cb, VK_PIPELINE_BIND_POINT_COMPUTE, bk->layouts[0], 0, 1, &w);
        vkCmdPushConstants(cb, bk->layouts[0], VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, push);
    }
    for (int i = 0; i < count; i++) {
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                             VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &replay_barrier, 0, NULL,
                             0, NULL);
        if (l == 0)
            vkCmdPushDescriptorSetKHR(cb, VK_PIPELINE_BIND_POINT_COMPUTE, bk->layouts[0], 0, 1,
                                      &w);
        else if (l == 1)
            vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, bk->layouts[1], 0, 1,
                                    &bk->set, 0, NULL);
        if (l != 2)
            vkCmdPushConstants(cb, bk->layouts[k], VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push,
                               push);
        vkCmdDispatch(cb, 1, 1, 1);
    }
}

/* Begins cb to be recorded once and then pending in several submits at
 * a time, as a graph's command buffers are. */
static void begin_simultaneous(VkCommandBuffer cb, bool secondary)
{
    static const VkCommandBufferInheritanceInfo ii = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT,
                                   .pInheritanceInfo = secondary ? &ii : NULL};
    CHECK(vkBeginCommandBuffer(cb, &bi));
}

static void record_once(const gpu *g, VkCommandBuffer cb, bool secondary, int count)
{
    begin_simultaneous(cb, secondary);
    record_dispatches(g, cb, count);
    CHECK(vkEndCommandBuffer(cb));
}

static void begin_one_time(VkCommandBuffer cb)
{
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    CHECK(vkBeginCommandBuffer(cb, &bi));
}

static VkCommandPool replay_pool(const gpu *g)
{
    VkCommandPool pool;
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                   .queueFamilyIndex = g->family};
    CHECK(vkCreateCommandPool(g->device, &pci, NULL, &pool));
    return pool;
}

static void allocate(const gpu *g, VkCommandPool pool, VkCommandBufferLevel level, uint32_t n,
                     VkCommandBuffer *out)
{
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = pool,
                                       .level = level,
                                       .commandBufferCount = n};
    CHECK(vkAllocateCommandBuffers(g->device, &cai, out));
}

static void submit_and_wait(gpu *g, uint32_t count, const VkCommandBuffer *cbs)
{
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .commandBufferCount = count,
                       .pCommandBuffers = cbs};
    CHECK(vkQueueSubmit(g->queue, 1, &si, g->fence));
    CHECK(vkWaitForFences(g->device, 1, &g->fence, VK_TRUE, UINT64_MAX));
    CHECK(vkResetFences(g->device, 1, &g->fence));
}

/* The graph's size: 10,000 dispatches, or a fifth of that on a CPU
 * device, where each one is executed by the host. */
static int replay_dispatches(const gpu *g)
{
    return g->cpu ? 2000 : 10000;
}

enum { CHUNKS = 40 };

/* The graph as both idle-device probes use it: CHUNKS secondaries and
 * CHUNKS primaries of an equal share of its dispatches, recorded once,
 * and a primary to execute the secondaries from, all from one new pool. */
typedef struct chunked_graph {
    VkCommandPool pool;
    VkCommandBuffer sec[CHUNKS], pri[CHUNKS], outer;
} chunked_graph;

static void chunked_graph_make(const gpu *g, chunked_graph *cg)
{
    const int per = replay_dispatches(g) / CHUNKS;
    cg->pool = replay_pool(g);
    allocate(g, cg->pool, VK_COMMAND_BUFFER_LEVEL_SECONDARY, CHUNKS, cg->sec);
    allocate(g, cg->pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, CHUNKS, cg->pri);
    allocate(g, cg->pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1, &cg->outer);
    for (int c = 0; c < CHUNKS; c++) {
        record_once(g, cg->sec[c], true, per);
        record_once(g, cg->pri[c], false, per);
    }
}

/* The host's side of replaying the graph with the device idle: each
 * replay waited for before the next. Times in us, medians of reps. */
static void replay_floor(gpu *g)
{
    enum { MAX_REPS = 60 };
    const int reps = g->cpu ? 10 : MAX_REPS;
    chunked_graph cg;
    chunked_graph_make(g, &cg);
    VkCommandPool pool = cg.pool;
    VkCommandBuffer *sec = cg.sec, *pri = cg.pri, outer = cg.outer;
    static double secondary[MAX_REPS], primary[MAX_REPS], again[MAX_REPS];
    for (int r = -1; r < reps; r++) {
        /* After the first round secondary 0 is recorded again, timed,
         * with one dispatch. */
        if (r >= 0) {
            double t0 = now_us();
            record_once(g, sec[0], true, 1);
            again[r] = now_us() - t0;
        }
        for (int k = 0; k < 2; k++) {
            double t0 = now_us();
            VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO};
            if (k == 0) {
                begin_one_time(outer);
                vkCmdExecuteCommands(outer, CHUNKS, sec);
                CHECK(vkEndCommandBuffer(outer));
                si.commandBufferCount = 1;
                si.pCommandBuffers = &outer;
            } else {
                si.commandBufferCount = CHUNKS;
                si.pCommandBuffers = pri;
            }
            CHECK(vkQueueSubmit(g->queue, 1, &si, g->fence));
            double t = now_us() - t0;
            CHECK(vkWaitForFences(g->device, 1, &g->fence, VK_TRUE, UINT64_MAX));
            CHECK(vkResetFences(g->device, 1, &g->fence));
            if (r >= 0)
                (k ? primary : secondary)[r] = t;
        }
    }
    vkDestroyCommandPool(g->device, pool, NULL);
    printf("\n%d x %d dispatches (a barrier before each), recorded once; each replay waited for"
           " (GPU idle); host us, medians of %d\n",
           CHUNKS, replay_dispatches(g) / CHUNKS, reps);
    printf("as secondaries, one primary executes them: record it + submit  %8.1f\n",
           quantile(secondary, (size_t)reps, 0.5));
    printf("as %d primaries in one submit                                   %8.1f\n", CHUNKS,
           quantile(primary, (size_t)reps, 0.5));
    printf("one secondary recorded again (one dispatch)                     %8.1f\n",
           quantile(again, (size_t)reps, 0.5));
}

/* The ways a replay of the graph can be made, each from command buffers
 * recorded once; what a replay records (if anything) is recorded into a
 * primary of its own, begun anew for each replay. */
typedef enum replay_way {
    EXECUTE_40,     /* a primary executes 40 secondaries */
    EXECUTE_80,     /* the same, the graph in 80 secondaries */
    EXECUTE_20,     /* the same, the graph in 20 secondaries */
    PRIMARIES_40,   /* 40 primaries in one submit, nothing recorded */
    ONE_PRIMARY,    /* one primary of the whole graph, nothing recorded */
    EXECUTE_UPDATE, /* EXECUTE_40 with one updated dispatch recorded inline after the 20th */
    PRIMARIES_POOLS,  /* PRIMARIES_40, each from a command pool of its own */
    PRIMARIES_SIGNAL, /* PRIMARIES_40, the submit signalling a timeline semaphore */
    EXECUTE_20_MADE,  /* EXECUTE_20's primary recorded once per replay in flight, resubmitted */
    MADE_PUSH,        /* EXECUTE_20_MADE, the add kernel's buffer pushed per dispatch */
    MADE_SET,         /* EXECUTE_20_MADE, the add kernel's set bound per dispatch */
    MADE_PUSH_ONCE,   /* EXECUTE_20_MADE, add's buffer pushed once per secondary */
    WHOLE_PUSH_ONCE,  /* ONE_PRIMARY of add, its buffer pushed once, nothing recorded */
    WAY_COUNT
} replay_way;

enum {
    IN_FLIGHT = 8,  /* replays submitted back to back, then waited for */
    MAX_ROUNDS = 16 /* even rounds end in a blocking wait, odd ones in a polled one */
};

typedef struct replay_set {
    VkCommandBuffer sec40[40], sec80[80], sec20[20], pri40[40], whole;
    VkCommandBuffer outer[IN_FLIGHT]; /* one per replay in flight */
    VkCommandBuffer made[IN_FLIGHT];  /* EXECUTE_20_MADE's, recorded once */
    VkCommandBuffer bound_sec[3][20], bound_made[3][IN_FLIGHT]; /* MADE_PUSH's to _ONCE's */
    VkCommandBuffer bound_whole;                                 /* WHOLE_PUSH_ONCE's */
    bool bound;                                                  /* those recorded */
    VkCommandPool own_pool[40];
    VkCommandBuffer own40[40]; /* own40[i] from own_pool[i] */
    VkSemaphore timeline;      /* PRIMARIES_SIGNAL's */
} replay_set;

/* One replay's host work: what it records, then its submit; the fence
 * (or none) is signalled when it completes. */
static void replay_once(const gpu *g, const replay_set *s, replay_way w, int in_flight,
                        VkFence fence)
{
    VkCommandBuffer outer = w == EXECUTE_20_MADE ? s->made[in_flight]
                            : w == MADE_PUSH     ? s->bound_made[0][in_flight]
                            : w == MADE_SET      ? s->bound_made[1][in_flight]
                            : w == MADE_PUSH_ONCE ? s->bound_made[2][in_flight]
                                                 : s->outer[in_flight];
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &outer};
    switch (w) {
    case EXECUTE_40:
    case EXECUTE_80:
    case EXECUTE_20:
        begin_one_time(outer);
        if (w == EXECUTE_40)
            vkCmdExecuteCommands(outer, 40, s->sec40);
        else if (w == EXECUTE_80)
            vkCmdExecuteCommands(outer, 80, s->sec80);
        else
            vkCmdExecuteCommands(outer, 20, s->sec20);
        CHECK(vkEndCommandBuffer(outer));
        break;
    case EXECUTE_UPDATE:
        begin_one_time(outer);
        vkCmdExecuteCommands(outer, 20, s->sec40);
        record_dispatches(g, outer, 1);
        vkCmdExecuteCommands(outer, 20, s->sec40 + 20);
        CHECK(vkEndCommandBuffer(outer));
        break;
    case PRIMARIES_40:
        si.commandBufferCount = 40;
        si.pCommandBuffers = s->pri40;
        break;
    case ONE_PRIMARY:
        si.pCommandBuffers = &s->whole;
        break;
    case WHOLE_PUSH_ONCE:
        si.pCommandBuffers = &s->bound_whole;
        break;
    case PRIMARIES_POOLS:
        si.commandBufferCount = 40;
        si.pCommandBuffers = s->own40;
        break;
    case PRIMARIES_SIGNAL:
        si.commandBufferCount = 40;
        si.pCommandBuffers = s->pri40;
        break;
    case EXECUTE_20_MADE:
    case MADE_PUSH:
    case MADE_SET:
    case MADE_PUSH_ONCE:
        break;
    case WAY_COUNT:
        abort();
    }
    static uint64_t signalled;
    uint64_t value = ++signalled;
    VkTimelineSemaphoreSubmitInfo tsi = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                         .signalSemaphoreValueCount = 1,
                                         .pSignalSemaphoreValues = &value};
    if (w == PRIMARIES_SIGNAL) {
        si.pNext = &tsi;
        si.signalSemaphoreCount = 1;
        si.pSignalSemaphores = &s->timeline;
    }
    CHECK(vkQueueSubmit(g->queue, 1, &si, fence));
}

/* The host's side of replaying the graph with the device busy, as
 * replays made back to back meet it: each round submits IN_FLIGHT replays
 * without waiting, timing each, then waits for the last. The first of a
 * round finds the device idle and is kept apart; the rest find it busy
 * with the replays before them. Rounds go through every way in turn, so
 * a drift in the machine's speed falls on all of them alike. A round ends
 * in a blocking wait (vkWaitForFences) or, every other round, in one that
 * polls the fence to its end, as salvo's waits do on a GPU: the idle
 * replay after each is kept apart. */
static void replay_busy(gpu *g)
{
    const int dispatches = replay_dispatches(g), rounds = g->cpu ? 2 : MAX_ROUNDS;
    VkCommandPool pool = replay_pool(g);
    replay_set s;
    allocate(g, pool, VK_COMMAND_BUFFER_LEVEL_SECONDARY, 40, s.sec40);
    allocate(g, pool, VK_COMMAND_BUFFER_LEVEL_SECONDARY, 80, s.sec80);
    allocate(g, pool, VK_COMMAND_BUFFER_LEVEL_SECONDARY, 20, s.sec20);
    allocate(g, pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 40, s.pri40);
    allocate(g, pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1, &s.whole);
    allocate(g, pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, IN_FLIGHT, s.outer);
    allocate(g, pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, IN_FLIGHT, s.made);
    for (int c = 0; c < 40; c++) {
        s.own_pool[c] = replay_pool(g);
        allocate(g, s.own_pool[c], VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1, &s.own40[c]);
        record_once(g, s.own40[c], false, dispatches / 40);
    }
    VkSemaphoreTypeCreateInfo sti = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                     .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
    VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &sti};
    CHECK(vkCreateSemaphore(g->device, &sci, NULL, &s.timeline));
    for (int c = 0; c < 80; c++) {
        record_once(g, s.sec80[c], true, dispatches / 80);
        if (c < 40) {
            record_once(g, s.sec40[c], true, dispatches / 40);
            record_once(g, s.pri40[c], false, dispatches / 40);
        }
        if (c < 20)
            record_once(g, s.sec20[c], true, dispatches / 20);
    }
    record_once(g, s.whole, false, dispatches);
    bound_kernel bk;
    s.bound = bound_open(g, &bk);
    for (int l = 0; s.bound && l < 3; l++) {
        allocate(g, pool, VK_COMMAND_BUFFER_LEVEL_SECONDARY, 20, s.bound_sec[l]);
        allocate(g, pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, IN_FLIGHT, s.bound_made[l]);
        for (int c = 0; c < 20; c++) {
            begin_simultaneous(s.bound_sec[l][c], true);
            record_bound(&bk, s.bound_sec[l][c], l, dispatches / 20);
            CHECK(vkEndCommandBuffer(s.bound_sec[l][c]));
        }
    }
    double whole_us = 0; /* what recording bound_whole took */
    if (s.bound) {
        allocate(g, pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1, &s.bound_whole);
        double t0 = now_us();
        begin_simultaneous(s.bound_whole, false);
        record_bound(&bk, s.bound_whole, 2, dispatches);
        CHECK(vkEndCommandBuffer(s.bound_whole));
        whole_us = now_us() - t0;
    }
    /* As a replay recorded ahead is made: begun for resubmits (no
     * flags), the secondaries executed, ended; submitted again each round. */
    for (int i = 0; i < IN_FLIGHT; i++) {
        VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        CHECK(vkBeginCommandBuffer(s.made[i], &bi));
        vkCmdExecuteCommands(s.made[i], 20, s.sec20);
        CHECK(vkEndCommandBuffer(s.made[i]));
        for (int l = 0; s.bound && l < 3; l++) {
            CHECK(vkBeginCommandBuffer(s.bound_made[l][i], &bi));
            vkCmdExecuteCommands(s.bound_made[l][i], 20, s.bound_sec[l]);
            CHECK(vkEndCommandBuffer(s.bound_made[l][i]));
        }
    }

    static double busy[WAY_COUNT][MAX_ROUNDS * (IN_FLIGHT - 1)], idle[WAY_COUNT][MAX_ROUNDS];
    /* What the wait before each idle replay was: the wait of the way
     * before it in the same round (the first way's: the last wait of the
     * round before), so it is noted as it happens. */
    static bool idle_after_poll[WAY_COUNT][MAX_ROUNDS];
    bool polled = false; /* the last wait's kind */
    for (int r = -1; r < rounds; r++)
        for (int w = 0; w < WAY_COUNT; w++) {
            if (w >= MADE_PUSH && !s.bound)
                continue;
            for (int i = 0; i < IN_FLIGHT; i++) {
                VkFence fence = i == IN_FLIGHT - 1 ? g->fence : VK_NULL_HANDLE;
                double t0 = now_us();
                replay_once(g, &s, (replay_way)w, i, fence);
                double t = now_us() - t0;
                if (r < 0)
                    continue;
                if (i == 0) {
                    idle[w][r] = t;
                    idle_after_poll[w][r] = polled;
                }
                else
                    busy[w][r * (IN_FLIGHT - 1) + i - 1] = t;
            }
            /* The fence's signal follows every earlier submit to the queue,
             * so the round's primaries are free to be begun again. */
            polled = r & 1;
            if (polled) {
                VkResult fr;
                while ((fr = vkGetFenceStatus(g->device, g->fence)) == VK_NOT_READY) {
                }
                CHECK(fr);
            } else {
                CHECK(vkWaitForFences(g->device, 1, &g->fence, VK_TRUE, UINT64_MAX));
            }
            CHECK(vkResetFences(g->device, 1, &g->fence));
        }
    vkDestroyCommandPool(g->device, pool, NULL);
    if (s.bound)
        bound_close(g, &bk);
    for (int c = 0; c < 40; c++)
        vkDestroyCommandPool(g->device, s.own_pool[c], NULL);
    vkDestroySemaphore(g->device, s.timeline, NULL);

    const size_t n_busy = (size_t)rounds * (IN_FLIGHT - 1);
    char label[WAY_COUNT][80];
    snprintf(label[EXECUTE_40], sizeof label[0], "40 secondaries of %d, a primary executes them",
             dispatches / 40);
    snprintf(label[EXECUTE_80], sizeof label[0], "80 secondaries of %d, a primary executes them",
             dispatches / 80);
    snprintf(label[EXECUTE_20], sizeof label[0], "20 secondaries of %d, a primary executes them",
             dispatches / 20);
    snprintf(label[PRIMARIES_40], sizeof label[0], "40 primaries of %d in one submit",
             dispatches / 40);
    snprintf(label[ONE_PRIMARY], sizeof label[0], "one primary of %d, one submit", dispatches);
    snprintf(label[PRIMARIES_POOLS], sizeof label[0], "40 primaries, each from a pool of its own");
    snprintf(label[PRIMARIES_SIGNAL], sizeof label[0], "40 primaries, the submit signals a timeline");
    snprintf(label[EXECUTE_20_MADE], sizeof label[0],
             "20 secondaries, a primary recorded once executes them");
    snprintf(label[MADE_PUSH], sizeof label[0], "the same, add's buffer pushed per dispatch");
    snprintf(label[MADE_SET], sizeof label[0], "the same, add's set bound per dispatch");
    snprintf(label[MADE_PUSH_ONCE], sizeof label[0], "the same, add's buffer pushed once (salvo)");
    snprintf(label[WHOLE_PUSH_ONCE], sizeof label[0], "one primary of add, its buffer pushed once");
    snprintf(label[EXECUTE_UPDATE], sizeof label[0],
             "update: 20 of the 40 secondaries, 1 inline, 20 more");
    printf("\n%d dispatches (a barrier before each) replayed %d at a time back to back, then"
           " waited for;\nhost us per replay (what it records + its submit): GPU busy (the 2nd to"
           " %dth of a round),\nmedians of %zu, and p90; GPU idle (the 1st), medians of %d after"
           " a blocking wait\n(vkWaitForFences) and of %d after a wait that polled the fence"
           " (idle, polled)\n",
           dispatches, IN_FLIGHT, IN_FLIGHT, n_busy, rounds / 2, (rounds + 1) / 2);
    printf("(first 3: the 1st to 3rd of each round together, as salvo-bench times a replay)\n");
    printf("%-55s %9s %7s %9s %8s %8s\n", "replay made as", "GPU busy", "p90", "GPU idle",
           "idle, polled", "first 3");
    for (int w = 0; w < WAY_COUNT; w++) {
        if (w >= MADE_PUSH && !s.bound)
            continue;
        /* Before the quantiles, which sort. */
        static double first3[MAX_ROUNDS * 3];
        size_t k = 0;
        for (int r = 0; r < rounds; r++) {
            first3[k++] = idle[w][r];
            first3[k++] = busy[w][r * (IN_FLIGHT - 1)];
            first3[k++] = busy[w][r * (IN_FLIGHT - 1) + 1];
        }
        static double after_block[MAX_ROUNDS], after_poll[MAX_ROUNDS];
        size_t nb = 0, np = 0;
        for (int r = 0; r < rounds; r++) {
            if (idle_after_poll[w][r])
                after_poll[np++] = idle[w][r];
            else
                after_block[nb++] = idle[w][r];
        }
        double p90 = quantile(busy[w], n_busy, 0.9);
        printf("%-55s %9.1f %7.1f %9.1f %12.1f %8.1f\n", label[w],
               quantile(busy[w], n_busy, 0.5), p90, quantile(after_block, nb, 0.5),
               np ? quantile(after_poll, np, 0.5) : 0.0, quantile(first3, k, 0.5));
    }
    if (s.bound)
        printf("(the primary of add recorded once in %.0f us, %.0f ns a dispatch)\n", whole_us,
               whole_us * 1e3 / dispatches);
}

/* Where the time of recording one command buffer again goes: the graph,
 * as 40 secondaries that a primary executes or as 40 primaries, is
 * replayed and waited for, then its first command buffer is recorded
 * again with one dispatch, as an update would: reset (by the begin, as
 * replay_floor does, or by vkResetCommandBuffer), begun, recorded and
 * ended, each part timed. The four cases take turns. */
static void rerecord_parts(gpu *g)
{
    enum { MAX_REPS = 40, PARTS = 4, CASES = 4 };
    const int reps = g->cpu ? 10 : MAX_REPS;
    chunked_graph cg;
    chunked_graph_make(g, &cg);
    VkCommandPool pool = cg.pool;
    VkCommandBuffer *sec = cg.sec, *pri = cg.pri, outer = cg.outer;
    /* Case k: a primary when k & 1, reset explicitly when k & 2. */
    static double part[CASES][PARTS][MAX_REPS], whole[CASES][MAX_REPS];
    for (int r = -1; r < reps; r++)
        for (int k = 0; k < CASES; k++) {
            bool primary = k & 1, explicit_reset = k & 2;
            if (primary) {
                submit_and_wait(g, CHUNKS, pri);
            } else {
                begin_one_time(outer);
                vkCmdExecuteCommands(outer, CHUNKS, sec);
                CHECK(vkEndCommandBuffer(outer));
                submit_and_wait(g, 1, &outer);
            }
            VkCommandBuffer cb = primary ? pri[0] : sec[0];
            double t[PARTS + 1];
            t[0] = now_us();
            if (explicit_reset)
                CHECK(vkResetCommandBuffer(cb, 0));
            t[1] = now_us();
            begin_simultaneous(cb, !primary);
            t[2] = now_us();
            record_dispatches(g, cb, 1);
            t[3] = now_us();
            CHECK(vkEndCommandBuffer(cb));
            t[4] = now_us();
            if (r < 0)
                continue;
            for (int p = 0; p < PARTS; p++)
                part[k][p][r] = t[p + 1] - t[p];
            whole[k][r] = t[PARTS] - t[0];
        }
    vkDestroyCommandPool(g->device, pool, NULL);
    printf("\nthe graph's first command buffer recorded again (one dispatch) after a replay"
           " completed,\nGPU idle; host us, medians of %d\n",
           reps);
    printf("%-32s %8s %8s %8s %8s %8s\n", "", "reset", "begin", "record", "end", "all");
    for (int k = 0; k < CASES; k++) {
        char label[40];
        snprintf(label, sizeof label, "%s, %s", k & 1 ? "primary" : "secondary",
                 k & 2 ? "vkResetCommandBuffer" : "reset by the begin");
        printf("%-32s", label);
        for (int p = 0; p < PARTS; p++)
            if (p == 0 && !(k & 2))
                printf(" %8s", "-");
            else
                printf(" %8.1f", quantile(part[k][p], (size_t)reps, 0.5));
        printf(" %8.1f\n", quantile(whole[k], (size_t)reps, 0.5));
    }
}

int main(void)
{
    gpu g;
    int rc = gpu_open(&g);
    if (rc != 0) {
        fprintf(stderr, "no Vulkan 1.2 device with a compute queue: skipped\n");
        gpu_close(&g);
        return rc;
    }
    static double submit[ROUNDS], timeline_at[ROUNDS], fence_at[ROUNDS], total[ROUNDS];
    printf("%d round trips per mode, one pre-recorded dispatch each; medians in us\n", ROUNDS);
    printf("%-15s %8s %14s %12s %11s %9s\n", "mode", "submit", "timeline seen", "fence seen",
           "round trip", "p90");
    for (int m = POLL_FENCE; m <= BLOCK_TIMELINE; m++) {
        for (int i = 0; i < 50; i++) /* warm-up */
            round_trip(&g, (mode)m, &submit[0], &timeline_at[0], &fence_at[0], &total[0]);
        for (int i = 0; i < ROUNDS; i++)
            round_trip(&g, (mode)m, &submit[i], &timeline_at[i], &fence_at[i], &total[i]);
        double p90 = quantile(total, ROUNDS, 0.9);
        printf("%-15s %8.1f %14.1f %12.1f %11.1f %9.1f\n", mode_names[m],
               quantile(submit, ROUNDS, 0.5), quantile(timeline_at, ROUNDS, 0.5),
               quantile(fence_at, ROUNDS, 0.5), quantile(total, ROUNDS, 0.5), p90);
    }
    replay_floor(&g);
    enum { GATE_ROUNDS = 500 };
    printf("\n%d gate round trips per mode (signal 200 us after the submit); medians in us\n",
           GATE_ROUNDS);
    printf("%-30s %12s %24s %9s\n", "mode", "signal call", "signal -> timeline seen", "p90");
    for (int held = 0; held < 2; held++) {
        for (int i = 0; i < 20; i++) /* warm-up */
            gate_trip(&g, held, &submit[0], &total[0]);
        for (int i = 0; i < GATE_ROUNDS; i++)
            gate_trip(&g, held, &submit[i], &total[i]);
        double p90 = quantile(total, GATE_ROUNDS, 0.9);
        printf("%-30s %12.1f %24.1f %9.1f\n",
               held ? "held on the host, then submit" : "submitted, waiting on the gate",
               quantile(submit, GATE_ROUNDS, 0.5), quantile(total, GATE_ROUNDS, 0.5), p90);
    }
    replay_busy(&g);
    rerecord_parts(&g);
    gpu_close(&g);
    return 0;
}
