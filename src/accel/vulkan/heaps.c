/*
 * Memory heaps: what the device holds of each (counted at every
 * allocation and free of its buffers' and images' memory), and, where the
 * driver measures them (VK_EXT_memory_budget), the process's budget and
 * usage of each.
 */
#include "accel/vulkan/vk_internal.h"

#include <string.h>

void accel_vk_heap_note(accel_device *d, uint32_t type, uint64_t bytes, bool freed)
{
    if (type >= d->mem.memoryTypeCount || bytes == 0)
        return;
    uint32_t heap = d->mem.memoryTypes[type].heapIndex;
    if (freed)
        atomic_fetch_sub_explicit(&d->heap_allocated[heap], bytes, memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&d->heap_allocated[heap], bytes, memory_order_relaxed);
}

void accel_vk_memory_info(void *self, accel_device *d, salvo_memory_info *out)
{
    (void)self;
    /* Asked again each time: the budget follows other processes, and
     * VK_EXT_memory_budget's figures are only current as of the query. */
    VkPhysicalDeviceMemoryBudgetPropertiesEXT budget = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
    VkPhysicalDeviceMemoryProperties2 props = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2,
        .pNext = d->memory_budget ? &budget : NULL,
    };
    if (d->memory_properties2)
        d->memory_properties2(d->phys, &props);
    else
        props.memoryProperties = d->mem;
    const VkPhysicalDeviceMemoryProperties *m = &props.memoryProperties;
    uint32_t n = m->memoryHeapCount;
    if (n > sizeof out->heaps / sizeof out->heaps[0])
        n = sizeof out->heaps / sizeof out->heaps[0];
    out->measured = d->memory_budget && d->memory_properties2;
    out->heap_count = n;
    for (uint32_t i = 0; i < n; i++) {
        salvo_heap_usage *h = &out->heaps[i];
        h->size = m->memoryHeaps[i].size;
        h->device_local = (m->memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0;
        h->allocated = atomic_load_explicit(&d->heap_allocated[i], memory_order_relaxed);
        h->budget = out->measured ? budget.heapBudget[i] : h->size;
        h->usage = out->measured ? budget.heapUsage[i] : h->allocated;
    }
}

bool accel_vk_heap_holds(const accel_device *d, uint32_t type, uint64_t bytes)
{
    if (type >= d->mem.memoryTypeCount)
        return false;
    return bytes <= d->mem.memoryHeaps[d->mem.memoryTypes[type].heapIndex].size;
}
