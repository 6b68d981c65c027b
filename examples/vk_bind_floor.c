/*
 * vk-bind-floor: what the driver charges the host to record a dispatch
 * whose buffer binding changes from the one before, for each way Vulkan
 * offers to change it: the floor under salvo-bench's "independent
 * launches", where every launch binds its own slice of one buffer.
 *
 * The add kernel (64 invocations, data[i] += value) is recorded N times
 * into one command buffer, the k-th dispatch on the k-th 256-byte slice
 * of one buffer (no barriers: the dispatches are independent), in each
 * of these ways:
 *   same          the binding pushed once, every dispatch on slice 0
 *                 (what recording a dispatch costs with nothing changed)
 *   push          vkCmdPushDescriptorSetKHR before each dispatch
 *   push+const    the same, and the push constants pushed each time
 *   sets          a descriptor set written ahead for each slice, bound
 *                 before each dispatch
 *   dynamic       one set of a STORAGE_BUFFER_DYNAMIC binding, bound
 *                 before each dispatch with the slice's offset
 *   dynamic+const the same, and the push constants pushed each time
 * and prints, per way, the median over the rounds of the host's recording
 * time per dispatch (begin to end) and of the device's time per dispatch
 * (submit to timeline seen), after checking every slice's values.
 *
 * A second table records the same N dispatches (a buffer pushed before
 * each) the way a stream's batches go: command buffers of CHUNK (128, or
 * the second argument) dispatches in a ring of three, each from its own
 * pool, submitted as it fills and taken again once its submission is
 * done, the loop timed from the first record to the last completion.
 * It tries what the driver might charge less for:
 *   reset bit     pools made to reset their buffers, ONE_TIME_SUBMIT
 *                 (what salvo does)
 *   transient     the same pools marked transient
 *   pool reset    pools reset whole before each begin (no reset bit)
 *   reusable      begun without ONE_TIME_SUBMIT
 *   template      the descriptor pushed through an update template
 * and prints per dispatch the host's time in the loop, and where it
 * went: the recordings (begin to end), the submits, and the waits for a
 * ring slot to come back (and for the last batch), medians over the
 * rounds (the three need not add up to the loop's median).
 * Uses its own copy of volk; no salvo. Exit 0, 1 on an error or a wrong
 * value, 77 without a device.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <volk.h>

#include "add.spv.h"

enum {
    ROUNDS = 9,
    SLICE = 256, /* bytes per dispatch: its 64 words */
    WAYS = 6
};

#define CHECK(call)                                                                               \
    do {                                                                                          \
        VkResult check_r = (call);                                                                \
        if (check_r != VK_SUCCESS) {                                                              \
            fprintf(stderr, "%s: VkResult %d\n", #call, (int)check_r);                           \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

typedef enum way { SAME, PUSH, PUSH_CONST, SETS, DYNAMIC, DYNAMIC_CONST } way;
static const char *const way_names[WAYS] = {"same",  "push",    "push+const",
                                            "sets",  "dynamic", "dynamic+const"};

/* The three layouts a binding can be given to the same kernel. */
enum { LAYOUT_PUSH, LAYOUT_SET, LAYOUT_DYNAMIC, LAYOUTS };

typedef struct gpu {
    VkInstance instance;
    VkDevice device;
    VkQueue queue;
    uint32_t family;
    bool cpu;
    VkShaderModule module;
    VkDescriptorSetLayout set_layouts[LAYOUTS];
    VkPipelineLayout layouts[LAYOUTS];
    VkPipeline pipelines[LAYOUTS];
    VkDescriptorPool dpool;
    VkDescriptorSet *sets;  /* one per slice (LAYOUT_SET) */
    VkDescriptorSet dynamic; /* LAYOUT_DYNAMIC's */
    VkBuffer buffer;
    VkDeviceMemory memory;
    uint32_t *mapped;
    uint64_t stride; /* bytes between slices: SLICE, aligned */
    VkCommandPool pool;
    VkCommandBuffer cb;
    VkSemaphore timeline;
    uint64_t value;
    uint32_t n;     /* dispatches per command buffer */
    uint32_t chunk; /* dispatches per command buffer of the ring */
    VkDescriptorUpdateTemplate push_template;
} gpu;

/* The ring's setups (the second table). */
typedef enum setup { RESET_BIT, TRANSIENT, POOL_RESET, REUSABLE, TEMPLATE, SETUPS } setup;
static const char *const setup_names[SETUPS] = {"reset bit", "transient", "pool reset",
                                                "reusable", "template"};
enum { RING = 3 };

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

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, by_value);
    return v[n / 2];
}

static bool has_extension(VkPhysicalDevice pd, const char *name)
{
    uint32_t n = 0;
    vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL);
    VkExtensionProperties *e = calloc(n ? n : 1, sizeof *e);
    vkEnumerateDeviceExtensionProperties(pd, NULL, &n, e);
    bool found = false;
    for (uint32_t i = 0; i < n && !found; i++)
        found = strcmp(e[i].extensionName, name) == 0;
    free(e);
    return found;
}

static int device_open(gpu *g, VkPhysicalDeviceProperties *props)
{
    if (volkInitialize() != VK_SUCCESS)
        return 77;
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                             .pApplicationName = "vk-bind-floor",
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
    for (uint32_t i = 0; i < n; i++) {
        vkGetPhysicalDeviceProperties(pds[i], props);
        if (props->deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) {
            pd = pds[i];
            break;
        }
    }
    vkGetPhysicalDeviceProperties(pd, props);
    if (props->apiVersion < VK_API_VERSION_1_2 ||
        !has_extension(pd, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME)) {
        fprintf(stderr, "%s: needs Vulkan 1.2 and push descriptors\n", props->deviceName);
        return 77;
    }
    VkQueueFamilyProperties fam[16];
    uint32_t fam_count = 16;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &fam_count, fam);
    g->family = fam_count;
    for (uint32_t i = 0; i < fam_count; i++) /* compute without graphics first */
        if ((fam[i].queueFlags & VK_QUEUE_COMPUTE_BIT) &&
            (g->family == fam_count || !(fam[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)))
            g->family = i;
    if (g->family == fam_count)
        return 77;
    g->cpu = props->deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    g->stride = SLICE;
    while (g->stride % props->limits.minStorageBufferOffsetAlignment)
        g->stride += SLICE;

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueFamilyIndex = g->family,
                                   .queueCount = 1,
                                   .pQueuePriorities = &priority};
    VkPhysicalDeviceVulkan12Features v12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .timelineSemaphore = VK_TRUE};
    const char *ext = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                              .pNext = &v12,
                              .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &qci,
                              .enabledExtensionCount = 1,
                              .ppEnabledExtensionNames = &ext};
    CHECK(vkCreateDevice(pd, &dci, NULL, &g->device));
    volkLoadDevice(g->device);
    vkGetDeviceQueue(g->device, g->family, 0, &g->queue);

    /* The buffer, host-visible so the values can be checked. */
    VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                              .size = g->stride * g->n,
                              .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT};
    CHECK(vkCreateBuffer(g->device, &bci, NULL, &g->buffer));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(g->device, g->buffer, &req);
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    const VkMemoryPropertyFlags want =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t type = mp.memoryTypeCount;
    for (uint32_t i = 0; i < mp.memoryTypeCount; i++) {
        VkMemoryPropertyFlags f = mp.memoryTypes[i].propertyFlags;
        if (!(req.memoryTypeBits & (1u << i)) || (f & want) != want)
            continue;
        if (type == mp.memoryTypeCount || (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
            type = i;
    }
    if (type == mp.memoryTypeCount)
        return 77;
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .allocationSize = req.size,
                                .memoryTypeIndex = type};
    CHECK(vkAllocateMemory(g->device, &mai, NULL, &g->memory));
    CHECK(vkBindBufferMemory(g->device, g->buffer, g->memory, 0));
    CHECK(vkMapMemory(g->device, g->memory, 0, VK_WHOLE_SIZE, 0, (void **)&g->mapped));
    memset(g->mapped, 0, g->stride * g->n);
    return 0;
}

static void pipelines_make(gpu *g)
{
    VkShaderModuleCreateInfo smi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                    .codeSize = sizeof add_spv,
                                    .pCode = add_spv};
    CHECK(vkCreateShaderModule(g->device, &smi, NULL, &g->module));
    const uint32_t local = 64;
    VkSpecializationMapEntry entry = {.constantID = 0, .offset = 0, .size = sizeof local};
    VkSpecializationInfo spec = {.mapEntryCount = 1,
                                 .pMapEntries = &entry,
                                 .dataSize = sizeof local,
                                 .pData = &local};
    VkPushConstantRange range = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = 8};
    for (int l = 0; l < LAYOUTS; l++) {
        VkDescriptorSetLayoutBinding b = {
            .binding = 0,
            .descriptorType = l == LAYOUT_DYNAMIC ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC
                                                  : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .descriptorCount = 1,
            .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
        VkDescriptorSetLayoutCreateInfo sli = {
            .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
            .flags = l == LAYOUT_PUSH ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR : 0,
            .bindingCount = 1,
            .pBindings = &b};
        CHECK(vkCreateDescriptorSetLayout(g->device, &sli, NULL, &g->set_layouts[l]));
        VkPipelineLayoutCreateInfo pli = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                          .setLayoutCount = 1,
                                          .pSetLayouts = &g->set_layouts[l],
                                          .pushConstantRangeCount = 1,
                                          .pPushConstantRanges = &range};
        CHECK(vkCreatePipelineLayout(g->device, &pli, NULL, &g->layouts[l]));
        VkComputePipelineCreateInfo cpi = {
            .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
            .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                      .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                      .module = g->module,
                      .pName = "main",
                      .pSpecializationInfo = &spec},
            .layout = g->layouts[l]};
        CHECK(vkCreateComputePipelines(g->device, VK_NULL_HANDLE, 1, &cpi, NULL,
                                       &g->pipelines[l]));
    }
    VkDescriptorPoolSize sizes[2] = {
        {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, g->n},
        {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC, 1},
    };
    VkDescriptorPoolCreateInfo dpi = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                      .maxSets = g->n + 1,
                                      .poolSizeCount = 2,
                                      .pPoolSizes = sizes};
    CHECK(vkCreateDescriptorPool(g->device, &dpi, NULL, &g->dpool));
    g->sets = calloc(g->n, sizeof *g->sets);
    VkDescriptorSetLayout *many = calloc(g->n, sizeof *many);
    for (uint32_t i = 0; i < g->n; i++)
        many[i] = g->set_layouts[LAYOUT_SET];
    VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorPool = g->dpool,
                                      .descriptorSetCount = g->n,
                                      .pSetLayouts = many};
    CHECK(vkAllocateDescriptorSets(g->device, &ai, g->sets));
    free(many);
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &g->set_layouts[LAYOUT_DYNAMIC];
    CHECK(vkAllocateDescriptorSets(g->device, &ai, &g->dynamic));
    for (uint32_t i = 0; i <= g->n; i++) {
        bool dyn = i == g->n;
        VkDescriptorBufferInfo info = {g->buffer, dyn ? 0 : i * g->stride, SLICE};
        VkWriteDescriptorSet w = {
            .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
            .dstSet = dyn ? g->dynamic : g->sets[i],
            .descriptorCount = 1,
            .descriptorType = dyn ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC
                                  : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .pBufferInfo = &info};
        vkUpdateDescriptorSets(g->device, 1, &w, 0, NULL);
    }
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                   .queueFamilyIndex = g->family};
    CHECK(vkCreateCommandPool(g->device, &pci, NULL, &g->pool));
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = g->pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
    CHECK(vkAllocateCommandBuffers(g->device, &cai, &g->cb));
    VkSemaphoreTypeCreateInfo sti = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                     .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
    VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &sti};
    CHECK(vkCreateSemaphore(g->device, &sci, NULL, &g->timeline));
    VkDescriptorUpdateTemplateEntry tentry = {.descriptorCount = 1,
                                             .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                             .stride = sizeof(VkDescriptorBufferInfo)};
    VkDescriptorUpdateTemplateCreateInfo tci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_UPDATE_TEMPLATE_CREATE_INFO,
        .descriptorUpdateEntryCount = 1,
        .pDescriptorUpdateEntries = &tentry,
        .templateType = VK_DESCRIPTOR_UPDATE_TEMPLATE_TYPE_PUSH_DESCRIPTORS_KHR,
        .descriptorSetLayout = g->set_layouts[LAYOUT_PUSH],
        .pipelineBindPoint = VK_PIPELINE_BIND_POINT_COMPUTE,
        .pipelineLayout = g->layouts[LAYOUT_PUSH]};
    CHECK(vkCreateDescriptorUpdateTemplate(g->device, &tci, NULL, &g->push_template));
}

/* The pushed descriptor of a slice: info's range (its offset set per
 * dispatch). */
static VkWriteDescriptorSet slice_write(const VkDescriptorBufferInfo *info)
{
    return (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                  .descriptorCount = 1,
                                  .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                  .pBufferInfo = info};
}

/* Records the n dispatches one way; returns the host's time in us. */
static double record(gpu *g, way w)
{
    static const int layout_of[WAYS] = {LAYOUT_PUSH, LAYOUT_PUSH, LAYOUT_PUSH,
                                        LAYOUT_SET,  LAYOUT_DYNAMIC, LAYOUT_DYNAMIC};
    int l = layout_of[w];
    bool constants_each = w == PUSH_CONST || w == DYNAMIC_CONST;
    uint32_t push[2] = {64, 1};
    VkDescriptorBufferInfo info = {g->buffer, 0, SLICE};
    VkWriteDescriptorSet write = slice_write(&info);
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    double t0 = now_us();
    CHECK(vkBeginCommandBuffer(g->cb, &bi));
    vkCmdBindPipeline(g->cb, VK_PIPELINE_BIND_POINT_COMPUTE, g->pipelines[l]);
    vkCmdPushConstants(g->cb, g->layouts[l], VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, push);
    if (w == SAME)
        vkCmdPushDescriptorSetKHR(g->cb, VK_PIPELINE_BIND_POINT_COMPUTE, g->layouts[l], 0, 1,
                                  &write);
    for (uint32_t i = 0; i < g->n; i++) {
        uint32_t offset = (uint32_t)(i * g->stride);
        if (w == PUSH || w == PUSH_CONST) {
            info.offset = offset;
            vkCmdPushDescriptorSetKHR(g->cb, VK_PIPELINE_BIND_POINT_COMPUTE, g->layouts[l], 0, 1,
                                      &write);
        } else if (w == SETS) {
            vkCmdBindDescriptorSets(g->cb, VK_PIPELINE_BIND_POINT_COMPUTE, g->layouts[l], 0, 1,
                                    &g->sets[i], 0, NULL);
        } else if (w != SAME) {
            vkCmdBindDescriptorSets(g->cb, VK_PIPELINE_BIND_POINT_COMPUTE, g->layouts[l], 0, 1,
                                    &g->dynamic, 1, &offset);
        }
        if (constants_each)
            vkCmdPushConstants(g->cb, g->layouts[l], VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push,
                               push);
        vkCmdDispatch(g->cb, 1, 1, 1);
    }
    CHECK(vkEndCommandBuffer(g->cb));
    return now_us() - t0;
}

/* Submits the recording and polls the timeline until it completes;
 * returns the time in us from the submit. */
static double run(gpu *g)
{
    uint64_t value = ++g->value;
    VkTimelineSemaphoreSubmitInfo tsi = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                         .signalSemaphoreValueCount = 1,
                                         .pSignalSemaphoreValues = &value};
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .pNext = &tsi,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &g->cb,
                       .signalSemaphoreCount = 1,
                       .pSignalSemaphores = &g->timeline};
    double t0 = now_us();
    CHECK(vkQueueSubmit(g->queue, 1, &si, VK_NULL_HANDLE));
    uint64_t seen = 0;
    while (seen < value)
        CHECK(vkGetSemaphoreCounterValue(g->device, g->timeline, &seen));
    return now_us() - t0;
}

static void wait_value(gpu *g, uint64_t value)
{
    uint64_t seen = 0;
    while (seen < value)
        CHECK(vkGetSemaphoreCounterValue(g->device, g->timeline, &seen));
}

/* Where a ring loop's host time went, in us: the recordings (begin to
 * end), the submits, and the waits for a ring slot or the last batch. */
typedef struct {
    double record, submit, wait;
} ring_times;

/* The n dispatches in command buffers of g->chunk, a ring of RING as
 * setup s makes them; returns the host's time in us for the loop (to the
 * last completion) and, in *parts, where it went. */
static double ring_run(gpu *g, setup s, ring_times *parts)
{
    VkCommandPool pools[RING];
    VkCommandBuffer cbs[RING];
    uint64_t values[RING] = {0};
    VkCommandPoolCreateFlags pf = s == POOL_RESET  ? 0
                                  : s == TRANSIENT ? VK_COMMAND_POOL_CREATE_TRANSIENT_BIT |
                                                         VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT
                                                   : VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    for (int i = 0; i < RING; i++) {
        VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                       .flags = pf,
                                       .queueFamilyIndex = g->family};
        CHECK(vkCreateCommandPool(g->device, &pci, NULL, &pools[i]));
        VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                           .commandPool = pools[i],
                                           .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                           .commandBufferCount = 1};
        CHECK(vkAllocateCommandBuffers(g->device, &cai, &cbs[i]));
    }
    VkPipelineLayout layout = g->layouts[LAYOUT_PUSH];
    uint32_t push[2] = {64, 1};
    VkDescriptorBufferInfo info = {g->buffer, 0, SLICE};
    VkWriteDescriptorSet write = slice_write(&info);
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = s == REUSABLE ? 0
                                                          : VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    ring_times p = {0};
    double t0 = now_us();
    for (uint32_t done = 0, k = 0; done < g->n; k = (k + 1) % RING) {
        double w0 = now_us();
        wait_value(g, values[k]);
        double r0 = now_us();
        p.wait += r0 - w0;
        if (s == POOL_RESET)
            CHECK(vkResetCommandPool(g->device, pools[k], 0));
        CHECK(vkBeginCommandBuffer(cbs[k], &bi));
        vkCmdBindPipeline(cbs[k], VK_PIPELINE_BIND_POINT_COMPUTE, g->pipelines[LAYOUT_PUSH]);
        vkCmdPushConstants(cbs[k], layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, push);
        uint32_t end = done + g->chunk < g->n ? done + g->chunk : g->n;
        for (; done < end; done++) {
            info.offset = done * g->stride;
            if (s == TEMPLATE)
                vkCmdPushDescriptorSetWithTemplateKHR(cbs[k], g->push_template, layout, 0, &info);
            else
                vkCmdPushDescriptorSetKHR(cbs[k], VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1,
                                          &write);
            vkCmdDispatch(cbs[k], 1, 1, 1);
        }
        CHECK(vkEndCommandBuffer(cbs[k]));
        double s0 = now_us();
        p.record += s0 - r0;
        values[k] = ++g->value;
        VkTimelineSemaphoreSubmitInfo tsi = {
            .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
            .signalSemaphoreValueCount = 1,
            .pSignalSemaphoreValues = &values[k]};
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .pNext = &tsi,
                           .commandBufferCount = 1,
                           .pCommandBuffers = &cbs[k],
                           .signalSemaphoreCount = 1,
                           .pSignalSemaphores = &g->timeline};
        CHECK(vkQueueSubmit(g->queue, 1, &si, VK_NULL_HANDLE));
        p.submit += now_us() - s0;
    }
    double w0 = now_us();
    wait_value(g, g->value);
    double t = now_us() - t0;
    p.wait += now_us() - w0;
    for (int i = 0; i < RING; i++)
        vkDestroyCommandPool(g->device, pools[i], NULL);
    *parts = p;
    return t;
}

/* Every slice's 64 words hold rounds; for SAME, slice 0 alone was
 * written, by n dispatches a round that may overlap (no barriers: their
 * additions race), so it holds from 1 to n times rounds, the rest 0. */
static bool check(const gpu *g, way w, uint32_t rounds)
{
    for (uint32_t i = 0; i < g->n; i++) {
        uint32_t want = w == SAME ? (i == 0 ? g->n * rounds : 0) : rounds;
        const uint32_t *s = g->mapped + i * g->stride / sizeof *g->mapped;
        for (int k = 0; k < 64; k++)
            if (w == SAME && i == 0 ? s[k] == 0 || s[k] > want : s[k] != want) {
                fprintf(stderr, "%s: slice %u word %d is %u, want %u\n", way_names[w], i, k, s[k],
                        want);
                return false;
            }
    }
    return true;
}

static void device_close(gpu *g)
{
    vkDeviceWaitIdle(g->device);
    vkDestroyDescriptorUpdateTemplate(g->device, g->push_template, NULL);
    vkDestroySemaphore(g->device, g->timeline, NULL);
    vkDestroyCommandPool(g->device, g->pool, NULL);
    vkDestroyDescriptorPool(g->device, g->dpool, NULL);
    for (int l = 0; l < LAYOUTS; l++) {
        vkDestroyPipeline(g->device, g->pipelines[l], NULL);
        vkDestroyPipelineLayout(g->device, g->layouts[l], NULL);
        vkDestroyDescriptorSetLayout(g->device, g->set_layouts[l], NULL);
    }
    vkDestroyShaderModule(g->device, g->module, NULL);
    vkDestroyBuffer(g->device, g->buffer, NULL);
    vkFreeMemory(g->device, g->memory, NULL);
    vkDestroyDevice(g->device, NULL);
    vkDestroyInstance(g->instance, NULL);
    free(g->sets);
}

int main(int argc, char **argv)
{
    gpu g = {0};
    g.n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 10000;
    g.chunk = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 128;
    if (g.n == 0 || g.chunk == 0) {
        fprintf(stderr, "usage: vk-bind-floor [dispatches per command buffer [per batch]]\n");
        return 2;
    }
    VkPhysicalDeviceProperties props;
    int r = device_open(&g, &props);
    if (r)
        return r;
    pipelines_make(&g);
    printf("device: %s, queue family %u; %u dispatches per command buffer, %d rounds\n",
           props.deviceName, g.family, g.n, ROUNDS);
    printf("%-14s %18s %18s\n", "binding", "record ns/disp", "device ns/disp");
    for (int w = 0; w < WAYS; w++) {
        double rec[ROUNDS], dev[ROUNDS];
        memset(g.mapped, 0, g.stride * g.n);
        record(&g, (way)w); /* warm-up, not run */
        for (int i = 0; i < ROUNDS; i++) {
            rec[i] = record(&g, (way)w) * 1e3 / g.n;
            dev[i] = run(&g) * 1e3 / g.n;
        }
        if (!check(&g, (way)w, ROUNDS))
            return 1;
        printf("%-14s %18.1f %18.1f\n", way_names[w], median(rec, ROUNDS), median(dev, ROUNDS));
    }
    printf("\nthe same %u dispatches, a buffer pushed before each, in batches of %u (a ring of "
           "%d command buffers, each submitted as it fills)\n",
           g.n, g.chunk, RING);
    printf("%-14s %18s %18s %18s %18s\n", "setup", "loop ns/disp", "record ns/disp",
           "submit ns/disp", "wait ns/disp");
    for (int s = 0; s < SETUPS; s++) {
        double loop[ROUNDS], rec[ROUNDS], sub[ROUNDS], wait[ROUNDS];
        ring_times p;
        memset(g.mapped, 0, g.stride * g.n);
        ring_run(&g, (setup)s, &p); /* warm-up, checked with the rounds */
        for (int i = 0; i < ROUNDS; i++) {
            loop[i] = ring_run(&g, (setup)s, &p) * 1e3 / g.n;
            rec[i] = p.record * 1e3 / g.n;
            sub[i] = p.submit * 1e3 / g.n;
            wait[i] = p.wait * 1e3 / g.n;
        }
        if (!check(&g, PUSH, ROUNDS + 1))
            return 1;
        printf("%-14s %18.1f %18.1f %18.1f %18.1f\n", setup_names[s], median(loop, ROUNDS),
               median(rec, ROUNDS), median(sub, ROUNDS), median(wait, ROUNDS));
    }
    device_close(&g);
    return 0;
}
