/*
 * vk-two-queues: what the hardware gives two queues, in raw Vulkan, for
 * the two measurements of salvo-bench's "streams side by side":
 *  - two queues each running 8 single-workgroup kernels of a few ms, one
 *    after the other with a barrier between (an in-order stream): the time
 *    for both together over the time for one alone (1.00: side by side);
 *  - a 256 MiB host-to-device copy on one queue beside kernels of about
 *    its length on another: 0 when they overlap fully, 1 when they run one
 *    after the other.
 * Each is measured for pairs of queues from every family that has them
 * (two queues of one family) and, for the copy, from a transfer-only
 * family beside a compute queue. Medians of 5. Uses its own copy of volk;
 * no salvo. Exit 0, 77 without a device.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <volk.h>

#include "spin.spv.h"

#define CHECK(call)                                                                               \
    do {                                                                                          \
        VkResult check_r = (call);                                                                \
        if (check_r != VK_SUCCESS) {                                                              \
            fprintf(stderr, "%s:%d: %s: VkResult %d\n", __FILE__, __LINE__, #call,               \
                    (int)check_r);                                                                \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

enum { REPEATS = 5, KERNELS = 8, MAX_FAMILIES = 16 };
#define COPY_BYTES (256ull << 20)

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return v[n / 2];
}

typedef struct ctx {
    VkInstance instance;
    VkPhysicalDevice pd;
    VkDevice device;
    VkQueueFamilyProperties fam[MAX_FAMILIES];
    uint32_t fam_count;
    VkQueue queues[MAX_FAMILIES][2];
    uint32_t queue_count[MAX_FAMILIES];
    VkCommandPool pools[MAX_FAMILIES];
    VkPhysicalDeviceMemoryProperties mem;
    VkDescriptorSetLayout dsl;
    VkPipelineLayout layout;
    VkPipeline pipeline;
    VkDescriptorPool dpool;
    VkDescriptorSet set;
    VkBuffer out, src, dst;
    VkDeviceMemory out_mem, src_mem, dst_mem;
    VkShaderModule module;
} ctx;

static uint32_t memory_type(ctx *c, uint32_t bits, VkMemoryPropertyFlags want)
{
    for (uint32_t i = 0; i < c->mem.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (c->mem.memoryTypes[i].propertyFlags & want) == want)
            return i;
    fprintf(stderr, "no memory type with flags 0x%x\n", want);
    exit(1);
}

static void buffer(ctx *c, VkDeviceSize size, VkBufferUsageFlags usage,
                   VkMemoryPropertyFlags props, VkBuffer *b, VkDeviceMemory *m)
{
    VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                             .size = size,
                             .usage = usage,
                             .sharingMode = VK_SHARING_MODE_CONCURRENT,
                             .queueFamilyIndexCount = 0};
    /* Every family that has queues may touch it: concurrent sharing. */
    uint32_t families[MAX_FAMILIES], n = 0;
    for (uint32_t f = 0; f < c->fam_count; f++)
        if (c->queue_count[f])
            families[n++] = f;
    if (n > 1) {
        bi.queueFamilyIndexCount = n;
        bi.pQueueFamilyIndices = families;
    } else {
        bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    }
    CHECK(vkCreateBuffer(c->device, &bi, NULL, b));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(c->device, *b, &req);
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                               .allocationSize = req.size,
                               .memoryTypeIndex = memory_type(c, req.memoryTypeBits, props)};
    CHECK(vkAllocateMemory(c->device, &ai, NULL, m));
    CHECK(vkBindBufferMemory(c->device, *b, *m, 0));
}

static int open_ctx(ctx *c)
{
    memset(c, 0, sizeof *c);
    if (volkInitialize() != VK_SUCCESS)
        return 77;
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                             .pApplicationName = "vk-two-queues",
                             .apiVersion = VK_API_VERSION_1_1};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                .pApplicationInfo = &app};
    if (vkCreateInstance(&ici, NULL, &c->instance) != VK_SUCCESS)
        return 77;
    volkLoadInstance(c->instance);
    VkPhysicalDevice pds[16];
    uint32_t n = 16;
    VkResult r = vkEnumeratePhysicalDevices(c->instance, &n, pds);
    if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || n == 0)
        return 77;
    c->pd = pds[0];
    VkPhysicalDeviceProperties props;
    for (uint32_t i = 0; i < n; i++) {
        vkGetPhysicalDeviceProperties(pds[i], &props);
        if (props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) {
            c->pd = pds[i];
            break;
        }
    }
    vkGetPhysicalDeviceProperties(c->pd, &props);
    printf("device: %s\n", props.deviceName);
    c->fam_count = MAX_FAMILIES;
    vkGetPhysicalDeviceQueueFamilyProperties(c->pd, &c->fam_count, c->fam);
    vkGetPhysicalDeviceMemoryProperties(c->pd, &c->mem);
    VkDeviceQueueCreateInfo qci[MAX_FAMILIES];
    const float priorities[2] = {1, 1};
    uint32_t qn = 0;
    for (uint32_t f = 0; f < c->fam_count; f++) {
        VkQueueFlags fl = c->fam[f].queueFlags;
        printf("family %u: %u queue(s)%s%s%s\n", f, c->fam[f].queueCount,
               fl & VK_QUEUE_GRAPHICS_BIT ? " graphics" : "",
               fl & VK_QUEUE_COMPUTE_BIT ? " compute" : "",
               fl & VK_QUEUE_TRANSFER_BIT ? " transfer" : "");
        if (!(fl & (VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT)))
            continue;
        c->queue_count[f] = c->fam[f].queueCount < 2 ? c->fam[f].queueCount : 2;
        qci[qn++] = (VkDeviceQueueCreateInfo){.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                              .queueFamilyIndex = f,
                                              .queueCount = c->queue_count[f],
                                              .pQueuePriorities = priorities};
    }
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                              .queueCreateInfoCount = qn,
                              .pQueueCreateInfos = qci};
    CHECK(vkCreateDevice(c->pd, &dci, NULL, &c->device));
    volkLoadDevice(c->device);
    for (uint32_t f = 0; f < c->fam_count; f++) {
        for (uint32_t i = 0; i < c->queue_count[f]; i++)
            vkGetDeviceQueue(c->device, f, i, &c->queues[f][i]);
        if (!c->queue_count[f])
            continue;
        VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                       .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                       .queueFamilyIndex = f};
        CHECK(vkCreateCommandPool(c->device, &pci, NULL, &c->pools[f]));
    }

    VkShaderModuleCreateInfo smi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                    .codeSize = sizeof spin_spv,
                                    .pCode = spin_spv};
    CHECK(vkCreateShaderModule(c->device, &smi, NULL, &c->module));
    VkDescriptorSetLayoutBinding b0 = {.binding = 0,
                                       .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                       .descriptorCount = 1,
                                       .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    VkDescriptorSetLayoutCreateInfo dli = {.sType =
                                               VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                           .bindingCount = 1,
                                           .pBindings = &b0};
    CHECK(vkCreateDescriptorSetLayout(c->device, &dli, NULL, &c->dsl));
    VkPushConstantRange pcr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = 4};
    VkPipelineLayoutCreateInfo pli = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                      .setLayoutCount = 1,
                                      .pSetLayouts = &c->dsl,
                                      .pushConstantRangeCount = 1,
                                      .pPushConstantRanges = &pcr};
    CHECK(vkCreatePipelineLayout(c->device, &pli, NULL, &c->layout));
    VkComputePipelineCreateInfo cpi = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = c->module,
                  .pName = "main"},
        .layout = c->layout};
    CHECK(vkCreateComputePipelines(c->device, VK_NULL_HANDLE, 1, &cpi, NULL, &c->pipeline));
    VkDescriptorPoolSize ps = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = 1};
    VkDescriptorPoolCreateInfo dpi = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                      .maxSets = 1,
                                      .poolSizeCount = 1,
                                      .pPoolSizes = &ps};
    CHECK(vkCreateDescriptorPool(c->device, &dpi, NULL, &c->dpool));
    VkDescriptorSetAllocateInfo dsa = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                       .descriptorPool = c->dpool,
                                       .descriptorSetCount = 1,
                                       .pSetLayouts = &c->dsl};
    CHECK(vkAllocateDescriptorSets(c->device, &dsa, &c->set));
    buffer(c, 4096, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
           &c->out, &c->out_mem);
    buffer(c, COPY_BYTES, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
           &c->src, &c->src_mem);
    buffer(c, COPY_BYTES, VK_BUFFER_USAGE_TRANSFER_DST_BIT, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
           &c->dst, &c->dst_mem);
    VkDescriptorBufferInfo dbi = {.buffer = c->out, .range = VK_WHOLE_SIZE};
    VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                              .dstSet = c->set,
                              .descriptorCount = 1,
                              .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                              .pBufferInfo = &dbi};
    vkUpdateDescriptorSets(c->device, 1, &w, 0, NULL);
    return 0;
}

/* A command buffer of family f: count spins (a barrier between each, as
 * an in-order stream has) or one copy (count 0). */
static VkCommandBuffer record(ctx *c, uint32_t f, int count, uint32_t iterations)
{
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = c->pools[f],
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
    VkCommandBuffer cb;
    CHECK(vkAllocateCommandBuffers(c->device, &cai, &cb));
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    CHECK(vkBeginCommandBuffer(cb, &begin));
    if (count == 0) {
        VkBufferCopy region = {.size = COPY_BYTES};
        vkCmdCopyBuffer(cb, c->src, c->dst, 1, &region);
    } else {
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, c->pipeline);
        vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, c->layout, 0, 1, &c->set, 0,
                                NULL);
        vkCmdPushConstants(cb, c->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &iterations);
        VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                              .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                              .dstAccessMask = VK_ACCESS_SHADER_WRITE_BIT};
        for (int i = 0; i < count; i++) {
            if (i)
                vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, NULL, 0,
                                     NULL);
            vkCmdDispatch(cb, 1, 1, 1);
        }
    }
    CHECK(vkEndCommandBuffer(cb));
    return cb;
}

/* Submit each command buffer to its queue at once, wait for all. */
static double run(ctx *c, int n, const VkQueue *q, const VkCommandBuffer *cb)
{
    VkFence fences[2];
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    for (int i = 0; i < n; i++)
        CHECK(vkCreateFence(c->device, &fci, NULL, &fences[i]));
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .commandBufferCount = 1,
                           .pCommandBuffers = &cb[i]};
        CHECK(vkQueueSubmit(q[i], 1, &si, fences[i]));
    }
    CHECK(vkWaitForFences(c->device, (uint32_t)n, fences, VK_TRUE, UINT64_MAX));
    double t = now_s() - t0;
    for (int i = 0; i < n; i++)
        vkDestroyFence(c->device, fences[i], NULL);
    return t;
}

/* Two queues of family f: spins side by side. */
static void two_streams(ctx *c, uint32_t f, uint32_t iterations)
{
    VkCommandBuffer a = record(c, f, KERNELS, iterations), b = record(c, f, KERNELS, iterations);
    VkQueue both[2] = {c->queues[f][0], c->queues[f][1]};
    VkCommandBuffer cbs[2] = {a, b};
    double one[REPEATS], two[REPEATS];
    run(c, 1, both, cbs); /* warm-up */
    for (int r = 0; r < REPEATS; r++) {
        one[r] = run(c, 1, both, cbs);
        two[r] = run(c, 2, both, cbs);
    }
    double m1 = median(one, REPEATS), m2 = median(two, REPEATS);
    printf("two queues of family %u, %d kernels of %.1f ms each: both together / one alone "
           "%.2f\n",
           f, KERNELS, m1 / KERNELS * 1e3, m2 / m1);
    vkFreeCommandBuffers(c->device, c->pools[f], 1, &a);
    vkFreeCommandBuffers(c->device, c->pools[f], 1, &b);
}

/* A copy on queue (fc, qc) beside spins on queue (fk, qk). */
static void copy_beside(ctx *c, uint32_t fc, uint32_t qc, uint32_t fk, uint32_t qk,
                        uint32_t iterations, double kernel_s)
{
    VkCommandBuffer copy = record(c, fc, 0, 0);
    VkQueue qcopy = c->queues[fc][qc];
    double copy_s = run(c, 1, &qcopy, &copy);
    copy_s = run(c, 1, &qcopy, &copy);
    int kernels = copy_s / kernel_s < 1 ? 1 : (int)(copy_s / kernel_s + 0.5);
    VkCommandBuffer spin = record(c, fk, kernels, iterations);
    VkQueue q[2] = {qcopy, c->queues[fk][qk]};
    VkCommandBuffer cbs[2] = {copy, spin};
    double tc[REPEATS], tk[REPEATS], tb[REPEATS];
    for (int r = 0; r < REPEATS; r++) {
        tc[r] = run(c, 1, &q[0], &cbs[0]);
        tk[r] = run(c, 1, &q[1], &cbs[1]);
        tb[r] = run(c, 2, q, cbs);
    }
    double mc = median(tc, REPEATS), mk = median(tk, REPEATS), mb = median(tb, REPEATS);
    double longer = mc > mk ? mc : mk, shorter = mc > mk ? mk : mc;
    printf("copy 256 MiB on family %u (%.1f ms) beside %d kernels on family %u (%.1f ms): %.2f "
           "of the way from overlapped (0) to serial (1)\n",
           fc, mc * 1e3, kernels, fk, mk * 1e3, (mb - longer) / shorter);
    vkFreeCommandBuffers(c->device, c->pools[fc], 1, &copy);
    vkFreeCommandBuffers(c->device, c->pools[fk], 1, &spin);
}

int main(void)
{
    ctx c;
    int rc = open_ctx(&c);
    if (rc) {
        fprintf(stderr, "no Vulkan device: skipped\n");
        return rc;
    }
    /* The kernels run where salvo runs them: the compute family that does
     * not draw with the most queues, else the first that computes (or
     * $KERNEL_FAMILY). */
    uint32_t fk = UINT32_MAX;
    for (uint32_t f = 0; f < c.fam_count; f++)
        if ((c.fam[f].queueFlags & VK_QUEUE_COMPUTE_BIT) &&
            !(c.fam[f].queueFlags & VK_QUEUE_GRAPHICS_BIT) && c.fam[f].queueCount > 1 &&
            (fk == UINT32_MAX || c.fam[f].queueCount > c.fam[fk].queueCount))
            fk = f;
    for (uint32_t f = 0; f < c.fam_count && fk == UINT32_MAX; f++)
        if (c.fam[f].queueFlags & VK_QUEUE_COMPUTE_BIT)
            fk = f;
    const char *env = getenv("KERNEL_FAMILY");
    if (env && *env && (uint32_t)atoi(env) < c.fam_count &&
        (c.fam[atoi(env)].queueFlags & VK_QUEUE_COMPUTE_BIT))
        fk = (uint32_t)atoi(env);
    if (fk == UINT32_MAX)
        return 77;
    /* Kernels of about 2 ms. */
    uint32_t it = 1024;
    double kernel_s = 0;
    for (;;) {
        VkCommandBuffer cb = record(&c, fk, 4, it);
        run(&c, 1, &c.queues[fk][0], &cb);
        kernel_s = run(&c, 1, &c.queues[fk][0], &cb) / 4;
        vkFreeCommandBuffers(c.device, c.pools[fk], 1, &cb);
        if (kernel_s >= 2e-3 || it >= (1u << 30))
            break;
        it *= 2;
    }
    for (uint32_t f = 0; f < c.fam_count; f++)
        if ((c.fam[f].queueFlags & VK_QUEUE_COMPUTE_BIT) && c.queue_count[f] >= 2)
            two_streams(&c, f, it);
    for (uint32_t f = 0; f < c.fam_count; f++) {
        if (!c.queue_count[f])
            continue;
        /* A second queue of the kernels' family, or a queue of another. */
        if (f == fk && c.queue_count[f] >= 2)
            copy_beside(&c, f, 1, fk, 0, it, kernel_s);
        else if (f != fk)
            copy_beside(&c, f, 0, fk, 0, it, kernel_s);
    }
    vkDeviceWaitIdle(c.device);
    return 0;
}
