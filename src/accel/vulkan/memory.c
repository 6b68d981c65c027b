/*
 * Buffers and their memory: a memory type picked per domain, allocated,
 * bound and (where host-visible) mapped for good; or the caller's host
 * memory imported (VK_EXT_external_memory_host).
 */
#include "accel/vulkan/vk_internal.h"

#include <string.h>

/* Every buffer can be bound either way, be a copy source or target and
 * hold an indirect dispatch's counts: the core decides per launch, and
 * usage bits cost nothing on the drivers we know of (the indirect bit
 * leaves size, alignment and memory types alike on lavapipe and on
 * NVIDIA's H200 driver). */
static const VkBufferUsageFlags BUFFER_USAGE =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT |
    VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
    VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT;

/* Memory properties wanted per domain, best first; the last entry is the
 * minimum the domain accepts. */
static const VkMemoryPropertyFlags domain_memory[3][3] = {
    [SALVO_DOMAIN_DEVICE] = {VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0},
    [SALVO_DOMAIN_HOST] = {VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT |
                               VK_MEMORY_PROPERTY_HOST_CACHED_BIT,
                           VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                           VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT},
    [SALVO_DOMAIN_SHARED] = {VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                 VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                             VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT |
                                 VK_MEMORY_PROPERTY_HOST_CACHED_BIT,
                             VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT},
};

/* Best type among allowed for domain, or UINT32_MAX. */
static uint32_t memory_type_pick(const VkPhysicalDeviceMemoryProperties *mem, uint32_t allowed,
                                 salvo_domain domain)
{
    for (int k = 0; k < 3; k++) {
        VkMemoryPropertyFlags want = domain_memory[domain][k];
        for (uint32_t i = 0; i < mem->memoryTypeCount; i++)
            if ((allowed >> i & 1) && (mem->memoryTypes[i].propertyFlags & want) == want)
                return i;
    }
    return UINT32_MAX;
}

/* Every buffer, plus shader device addresses where enabled (a buffer's
 * address may be asked for at any time, and the bit costs nothing). */
static VkBufferUsageFlags buffer_usage(const accel_device *d)
{
    return BUFFER_USAGE |
           (d->features.buffer_device_address ? VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT : 0);
}

/* Memory for such buffers must be allocated for device addresses. */
static const void *address_flags(const accel_device *d, VkMemoryAllocateFlagsInfo *fi,
                                 const void *next)
{
    if (!d->features.buffer_device_address)
        return next;
    *fi = (VkMemoryAllocateFlagsInfo){
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
        .pNext = next,
        .flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT,
    };
    return fi;
}

/* Exclusive to the streams' family, or, with a transfer queue, shared by
 * both families (concurrent): a buffer then moves between a kernel on one
 * queue and a copy on the other with no ownership transfer, ordered by
 * the semaphores between the two. */
static void buffer_sharing(const accel_device *d, VkBufferCreateInfo *bi, uint32_t families[2])
{
    bi->sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    if (d->transfer_family == UINT32_MAX)
        return;
    families[0] = d->queue_family;
    families[1] = d->transfer_family;
    bi->sharingMode = VK_SHARING_MODE_CONCURRENT;
    bi->queueFamilyIndexCount = 2;
    bi->pQueueFamilyIndices = families;
}

/* The core picks transfer paths by whether DEVICE memory maps; ask with a
 * throwaway buffer since memoryTypeBits depend on the buffer's usage. */
VkResult accel_vk_device_memory_host_visible(accel_device *d, bool *out)
{
    uint32_t families[2];
    VkBufferCreateInfo bi = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = 256,
        .usage = buffer_usage(d),
    };
    buffer_sharing(d, &bi, families);
    VkBuffer probe;
    VkResult r = d->vk.vkCreateBuffer(d->device, &bi, NULL, &probe);
    if (r != VK_SUCCESS)
        return r;
    VkMemoryRequirements req;
    d->vk.vkGetBufferMemoryRequirements(d->device, probe, &req);
    d->vk.vkDestroyBuffer(d->device, probe, NULL);
    const VkMemoryPropertyFlags mappable =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t type = memory_type_pick(&d->mem, req.memoryTypeBits, SALVO_DOMAIN_DEVICE);
    *out = type != UINT32_MAX && (d->mem.memoryTypes[type].propertyFlags & mappable) == mappable;
    return VK_SUCCESS;
}

void accel_vk_buffer_destroy(void *self, accel_device *d, accel_buffer *b)
{
    (void)self;
    if (!b)
        return;
    d->vk.vkDestroyBuffer(d->device, b->buffer, NULL);
    d->vk.vkFreeMemory(d->device, b->memory, NULL); /* also unmaps */
    accel_vk_heap_note(d, b->memory_type, b->memory_bytes, true);
    salvo_mem_free(d->alloc, b);
}

static VkResult memory_allocate(accel_device *d, accel_buffer *b, salvo_domain domain,
                                accel_buffer_info *info)
{
    VkMemoryRequirements req;
    d->vk.vkGetBufferMemoryRequirements(d->device, b->buffer, &req);
    uint32_t allowed = req.memoryTypeBits;
    uint32_t type;
    VkResult r = VK_ERROR_OUT_OF_DEVICE_MEMORY;
    for (;;) {
        type = memory_type_pick(&d->mem, allowed, domain);
        if (type == UINT32_MAX)
            return r;
        VkMemoryAllocateFlagsInfo fi;
        VkMemoryAllocateInfo ai = {
            .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
            .pNext = address_flags(d, &fi, NULL),
            .allocationSize = req.size,
            .memoryTypeIndex = type,
        };
        VkDeviceMemory memory;
        r = accel_vk_heap_holds(d, type, req.size)
                ? d->vk.vkAllocateMemory(d->device, &ai, NULL, &memory)
                : VK_ERROR_OUT_OF_DEVICE_MEMORY;
        if (r == VK_SUCCESS) {
            b->memory = memory;
            b->memory_bytes = req.size;
            b->memory_type = type;
            accel_vk_heap_note(d, type, req.size, false);
        }
        if (r != VK_ERROR_OUT_OF_DEVICE_MEMORY)
            break;
        /* That heap is full; a lesser type elsewhere may still have room. */
        allowed &= ~(1u << type);
    }
    if (r != VK_SUCCESS)
        return r;
    VkMemoryPropertyFlags flags = d->mem.memoryTypes[type].propertyFlags;
    info->host_coherent = (flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
    if (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)
        r = d->vk.vkMapMemory(d->device, b->memory, 0, VK_WHOLE_SIZE, 0, &info->mapped);
    return r;
}

static VkResult memory_import(accel_device *d, accel_buffer *b, const accel_buffer_desc *desc,
                              accel_buffer_info *info)
{
    VkMemoryHostPointerPropertiesEXT host = {.sType = VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
    VkResult r = d->vk.vkGetMemoryHostPointerPropertiesEXT(
        d->device, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, desc->import_host, &host);
    if (r != VK_SUCCESS)
        return r;
    VkMemoryRequirements req;
    d->vk.vkGetBufferMemoryRequirements(d->device, b->buffer, &req);
    /* Binding needs req.size bytes, which must not reach past the caller's memory. */
    if (req.size > desc->size)
        return VK_ERROR_INVALID_EXTERNAL_HANDLE;
    uint32_t allowed = host.memoryTypeBits & req.memoryTypeBits;
    uint32_t type = UINT32_MAX;
    for (uint32_t i = 0; i < d->mem.memoryTypeCount; i++) {
        if (!(allowed >> i & 1))
            continue;
        if (type == UINT32_MAX)
            type = i;
        if (d->mem.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) {
            type = i;
            break;
        }
    }
    if (type == UINT32_MAX)
        return VK_ERROR_INVALID_EXTERNAL_HANDLE;
    VkImportMemoryHostPointerInfoEXT import = {
        .sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT,
        .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT,
        .pHostPointer = desc->import_host,
    };
    VkMemoryAllocateFlagsInfo fi;
    VkMemoryAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .pNext = address_flags(d, &fi, &import),
        .allocationSize = desc->size,
        .memoryTypeIndex = type,
    };
    VkDeviceMemory memory;
    r = d->vk.vkAllocateMemory(d->device, &ai, NULL, &memory);
    if (r != VK_SUCCESS)
        return r;
    b->memory = memory;
    info->mapped = desc->import_host;
    info->host_coherent =
        (d->mem.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
    return VK_SUCCESS;
}

accel_result accel_vk_buffer_create(void *self, accel_device *d, const accel_buffer_desc *desc,
                                    accel_buffer **out, accel_buffer_info *info)
{
    *out = NULL;
    memset(info, 0, sizeof *info);
    if ((unsigned)desc->domain > SALVO_DOMAIN_SHARED)
        return VK_ERROR_INITIALIZATION_FAILED;
    if (desc->import_host && !d->host_import)
        return VK_ERROR_FEATURE_NOT_PRESENT;
    accel_buffer *b = salvo_mem_calloc(d->alloc, 1, sizeof *b);
    if (!b)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    VkExternalMemoryBufferCreateInfo external = {
        .sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
        .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT,
    };
    uint32_t families[2];
    /* Whole words: the last bytes of a size that is not a multiple of 4
     * are bound, as their word, by fills of any alignment (fill.c). An
     * import's size is a multiple of the import alignment already. */
    VkBufferCreateInfo bi = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .pNext = desc->import_host ? &external : NULL,
        .size = desc->import_host ? desc->size : (desc->size + 3) & ~(uint64_t)3,
        .usage = buffer_usage(d),
    };
    buffer_sharing(d, &bi, families);
    VkBuffer buffer;
    VkResult r = d->vk.vkCreateBuffer(d->device, &bi, NULL, &buffer);
    if (r == VK_SUCCESS) {
        b->buffer = buffer;
        r = desc->import_host ? memory_import(d, b, desc, info)
                              : memory_allocate(d, b, desc->domain, info);
    }
    if (r == VK_SUCCESS)
        r = d->vk.vkBindBufferMemory(d->device, b->buffer, b->memory, 0);
    if (r == VK_SUCCESS && d->features.buffer_device_address) {
        VkBufferDeviceAddressInfo ai = {
            .sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO,
            .buffer = b->buffer,
        };
        info->device_address = d->vk.vkGetBufferDeviceAddress(d->device, &ai);
    }
    if (r != VK_SUCCESS) {
        accel_vk_buffer_destroy(self, d, b);
        memset(info, 0, sizeof *info);
        return r;
    }
    *out = b;
    return ACCEL_SUCCESS;
}
