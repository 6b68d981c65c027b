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
 * Then the floor under a host gate (salvo-bench's "gate latency"): the
 * dispatch waits on a second timeline that the host signals once the
 * device has reached the wait, and the time from the signal until the
 * dispatch's timeline reads complete is taken, beside the signal call
 * itself; and the same with the submit made only after the signal (the
 * work held on the host until the gate opens). Last, the host's part of a
 * graph replay on this driver: 10,000 dispatches (a barrier before each)
 * recorded once as 40 command buffers of 250, submitted as secondaries
 * that one primary executes or as 40 primaries in one submit (each waited
 * for), and the cost of recording one of them again with one dispatch.
 * Uses its own copy of volk; no salvo. Exit 0, 77 without a device.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <volk.h>

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
    VkSemaphore gate; /* signalled by the host */
    uint64_t gate_value;
    /* for teardown */
    VkShaderModule module;
    VkPipelineLayout layout;
    VkPipeline pipeline;
    VkCommandPool pool;
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
    printf("device: %s\n", props.deviceName);
    g->family = family;

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueFamilyIndex = family,
                                   .queueCount = 1,
                                   .pQueuePriorities = &priority};
    VkPhysicalDeviceVulkan12Features v12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .timelineSemaphore = VK_TRUE};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                              .pNext = &v12,
                              .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &qci};
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

/* The host's side of replaying 10,000 pre-recorded dispatches; see the
 * top of the file. Times in us, medians of REPS. */
static void replay_floor(gpu *g)
{
    enum { CHUNKS = 40, PER = 250, REPS = 60 };
    VkCommandPool pool;
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                   .queueFamilyIndex = g->family};
    CHECK(vkCreateCommandPool(g->device, &pci, NULL, &pool));
    VkCommandBuffer sec[CHUNKS], pri[CHUNKS], outer;
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_SECONDARY,
                                       .commandBufferCount = CHUNKS};
    CHECK(vkAllocateCommandBuffers(g->device, &cai, sec));
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    CHECK(vkAllocateCommandBuffers(g->device, &cai, pri));
    cai.commandBufferCount = 1;
    CHECK(vkAllocateCommandBuffers(g->device, &cai, &outer));
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT};
    VkCommandBufferInheritanceInfo ii = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
    static double secondary[REPS], primary[REPS], again[REPS];
    for (int r = -1; r < REPS; r++) {
        for (int c = 0; c < CHUNKS; c++)
            for (int k = 0; k < 2; k++) {
                VkCommandBuffer cb = k ? pri[c] : sec[c];
                VkCommandBufferBeginInfo bi = {
                    .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                    .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT,
                    .pInheritanceInfo = k ? NULL : &ii};
                /* After the first round only secondary 0 is recorded
                 * again, timed, with one dispatch. */
                bool timed = r >= 0;
                if (timed && (c != 0 || k != 0))
                    continue;
                double t0 = now_us();
                CHECK(vkBeginCommandBuffer(cb, &bi));
                vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, g->pipeline);
                for (int i = 0; i < (timed ? 1 : PER); i++) {
                    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, NULL,
                                         0, NULL);
                    vkCmdDispatch(cb, 1, 1, 1);
                }
                CHECK(vkEndCommandBuffer(cb));
                if (timed)
                    again[r] = now_us() - t0;
            }
        for (int k = 0; k < 2; k++) {
            double t0 = now_us();
            VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO};
            if (k == 0) {
                VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                               .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
                CHECK(vkBeginCommandBuffer(outer, &bi));
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
    printf("\n%d x %d dispatches (a barrier before each), recorded once; host us, medians of %d\n",
           CHUNKS, PER, REPS);
    printf("as secondaries, one primary executes them: record it + submit  %8.1f\n",
           quantile(secondary, REPS, 0.5));
    printf("as %d primaries in one submit                                   %8.1f\n", CHUNKS,
           quantile(primary, REPS, 0.5));
    printf("one secondary recorded again (one dispatch)                     %8.1f\n",
           quantile(again, REPS, 0.5));
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
    gpu_close(&g);
    return 0;
}
