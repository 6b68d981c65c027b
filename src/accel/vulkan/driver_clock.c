/*
 * The driver clock (built with -DSALVO_DRIVER_CLOCK=ON, never by
 * default): the device's hot entry points are replaced, once its table is
 * loaded, by ones that count their calls and the host time spent in the
 * driver. At exit a table goes to stderr: per entry point, the calls, the
 * total and the mean. A probe, for finding where a launch's host time
 * goes on a real driver; its counters are global and plain (one device,
 * one thread at a time).
 * accel_vk_driver_clock_reset starts the count again (after a warm-up).
 */
#define _POSIX_C_SOURCE 200809L
#include "accel/vulkan/vk_internal.h"

#ifdef SALVO_DRIVER_CLOCK

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Each: name, return type, parameters, arguments. */
#define CLOCKED_RESULT(X)                                                                          \
    X(vkBeginCommandBuffer, (VkCommandBuffer a, const VkCommandBufferBeginInfo *b), (a, b))        \
    X(vkEndCommandBuffer, (VkCommandBuffer a), (a))                                                \
    X(vkResetCommandBuffer, (VkCommandBuffer a, VkCommandBufferResetFlags b), (a, b))              \
    X(vkResetCommandPool, (VkDevice a, VkCommandPool b, VkCommandPoolResetFlags c), (a, b, c))     \
    X(vkQueueSubmit, (VkQueue a, uint32_t b, const VkSubmitInfo *c, VkFence e), (a, b, c, e))      \
    X(vkResetDescriptorPool, (VkDevice a, VkDescriptorPool b, VkDescriptorPoolResetFlags c),       \
      (a, b, c))                                                                                   \
    X(vkAllocateDescriptorSets,                                                                    \
      (VkDevice a, const VkDescriptorSetAllocateInfo *b, VkDescriptorSet *c), (a, b, c))           \
    X(vkResetFences, (VkDevice a, uint32_t b, const VkFence *c), (a, b, c))                        \
    X(vkGetFenceStatus, (VkDevice a, VkFence b), (a, b))                                           \
    X(vkWaitForFences, (VkDevice a, uint32_t b, const VkFence *c, VkBool32 e, uint64_t f),         \
      (a, b, c, e, f))                                                                             \
    X(vkGetQueryPoolResults,                                                                       \
      (VkDevice a, VkQueryPool b, uint32_t c, uint32_t e, size_t f, void *g, VkDeviceSize h,       \
       VkQueryResultFlags i),                                                                      \
      (a, b, c, e, f, g, h, i))

#define CLOCKED_VOID(X)                                                                            \
    X(vkCmdExecuteCommands, (VkCommandBuffer a, uint32_t b, const VkCommandBuffer *c), (a, b, c))  \
    X(vkCmdBindPipeline, (VkCommandBuffer a, VkPipelineBindPoint b, VkPipeline c), (a, b, c))      \
    X(vkCmdPushConstants,                                                                          \
      (VkCommandBuffer a, VkPipelineLayout b, VkShaderStageFlags c, uint32_t e, uint32_t f,        \
       const void *g),                                                                             \
      (a, b, c, e, f, g))                                                                          \
    X(vkCmdPushDescriptorSetKHR,                                                                   \
      (VkCommandBuffer a, VkPipelineBindPoint b, VkPipelineLayout c, uint32_t e, uint32_t f,       \
       const VkWriteDescriptorSet *g),                                                             \
      (a, b, c, e, f, g))                                                                          \
    X(vkCmdBindDescriptorSets,                                                                     \
      (VkCommandBuffer a, VkPipelineBindPoint b, VkPipelineLayout c, uint32_t e, uint32_t f,       \
       const VkDescriptorSet *g, uint32_t h, const uint32_t *i),                                   \
      (a, b, c, e, f, g, h, i))                                                                    \
    X(vkUpdateDescriptorSets,                                                                      \
      (VkDevice a, uint32_t b, const VkWriteDescriptorSet *c, uint32_t e,                          \
       const VkCopyDescriptorSet *f),                                                              \
      (a, b, c, e, f))                                                                             \
    X(vkCmdDispatch, (VkCommandBuffer a, uint32_t b, uint32_t c, uint32_t e), (a, b, c, e))        \
    X(vkCmdPipelineBarrier,                                                                        \
      (VkCommandBuffer a, VkPipelineStageFlags b, VkPipelineStageFlags c, VkDependencyFlags e,     \
       uint32_t f, const VkMemoryBarrier *g, uint32_t h, const VkBufferMemoryBarrier *i,           \
       uint32_t j, const VkImageMemoryBarrier *k),                                                 \
      (a, b, c, e, f, g, h, i, j, k))                                                              \
    X(vkCmdFillBuffer, (VkCommandBuffer a, VkBuffer b, VkDeviceSize c, VkDeviceSize e, uint32_t f), \
      (a, b, c, e, f))                                                                             \
    X(vkCmdWriteTimestamp,                                                                         \
      (VkCommandBuffer a, VkPipelineStageFlagBits b, VkQueryPool c, uint32_t e), (a, b, c, e))    \
    X(vkCmdResetQueryPool, (VkCommandBuffer a, VkQueryPool b, uint32_t c, uint32_t e),            \
      (a, b, c, e))

/* The timeline's three, reached through the device's own pointers. */
#define CLOCKED_TIMELINE(X)                                                                        \
    X(semaphore_value, PFN_vkGetSemaphoreCounterValue, (VkDevice a, VkSemaphore b, uint64_t *c),  \
      (a, b, c))                                                                                   \
    X(wait_semaphores, PFN_vkWaitSemaphores,                                                       \
      (VkDevice a, const VkSemaphoreWaitInfo *b, uint64_t c), (a, b, c))                           \
    X(signal_semaphore, PFN_vkSignalSemaphore, (VkDevice a, const VkSemaphoreSignalInfo *b), (a, b))

enum {
#define X(name, params, args) CLOCK_##name,
    CLOCKED_RESULT(X) CLOCKED_VOID(X)
#undef X
#define X(name, type, params, args) CLOCK_##name,
        CLOCKED_TIMELINE(X)
#undef X
            CLOCK_COUNT
};

static const char *const clock_names[CLOCK_COUNT] = {
#define X(name, params, args) #name,
    CLOCKED_RESULT(X) CLOCKED_VOID(X)
#undef X
#define X(name, type, params, args) #name,
        CLOCKED_TIMELINE(X)
#undef X
};

static struct {
    uint64_t calls, ns;
} clock_totals[CLOCK_COUNT];

static uint64_t clock_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void clock_add(int which, uint64_t t0)
{
    clock_totals[which].calls++;
    clock_totals[which].ns += clock_now() - t0;
}

#define X(name, params, args)                                                                      \
    static PFN_##name real_##name;                                                                 \
    static VKAPI_ATTR VkResult VKAPI_CALL clocked_##name params                                    \
    {                                                                                              \
        uint64_t t0 = clock_now();                                                                 \
        VkResult r = real_##name args;                                                             \
        clock_add(CLOCK_##name, t0);                                                               \
        return r;                                                                                  \
    }
CLOCKED_RESULT(X)
#undef X

#define X(name, params, args)                                                                      \
    static PFN_##name real_##name;                                                                 \
    static VKAPI_ATTR void VKAPI_CALL clocked_##name params                                        \
    {                                                                                              \
        uint64_t t0 = clock_now();                                                                 \
        real_##name args;                                                                          \
        clock_add(CLOCK_##name, t0);                                                               \
    }
CLOCKED_VOID(X)
#undef X

#define X(name, type, params, args)                                                                \
    static type real_##name;                                                                       \
    static VKAPI_ATTR VkResult VKAPI_CALL clocked_##name params                                    \
    {                                                                                              \
        uint64_t t0 = clock_now();                                                                 \
        VkResult r = real_##name args;                                                             \
        clock_add(CLOCK_##name, t0);                                                               \
        return r;                                                                                  \
    }
CLOCKED_TIMELINE(X)
#undef X

static void clock_report(void)
{
    fprintf(stderr, "salvo driver clock: host us in the driver\n");
    fprintf(stderr, "%-28s %10s %12s %9s\n", "entry point", "calls", "total", "per call");
    for (int i = 0; i < CLOCK_COUNT; i++)
        if (clock_totals[i].calls)
            fprintf(stderr, "%-28s %10llu %12.1f %9.3f\n", clock_names[i],
                    (unsigned long long)clock_totals[i].calls, clock_totals[i].ns / 1e3,
                    clock_totals[i].ns / 1e3 / (double)clock_totals[i].calls);
}

void accel_vk_driver_clock_reset(void)
{
    memset(clock_totals, 0, sizeof clock_totals);
}

void accel_vk_driver_clock_install(accel_device *d)
{
    static bool reported;
    if (!reported) {
        reported = true;
        atexit(clock_report);
    }
#define X(name, params, args)                                                                      \
    if (d->vk.name && d->vk.name != clocked_##name) {                                              \
        real_##name = d->vk.name;                                                                  \
        d->vk.name = clocked_##name;                                                               \
    }
    CLOCKED_RESULT(X) CLOCKED_VOID(X)
#undef X
#define X(name, type, params, args)                                                                \
    if (d->name && d->name != clocked_##name) {                                                    \
        real_##name = d->name;                                                                     \
        d->name = clocked_##name;                                                                  \
    }
    CLOCKED_TIMELINE(X)
#undef X
}

#else

void accel_vk_driver_clock_reset(void)
{
}

void accel_vk_driver_clock_install(accel_device *d)
{
    (void)d;
}

#endif
