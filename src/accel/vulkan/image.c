/*
 * Images (each with one view of all of it) and samplers. An image lives in
 * VK_IMAGE_LAYOUT_GENERAL from its init on, the layout storage and sampled
 * use in one kernel both need: launches never transition it, and the core
 * orders them with the same memory barriers as buffers. A copy moves it
 * into a transfer layout and back around itself.
 */
#include "accel/vulkan/vk_internal.h"

/* salvo_format -> VkFormat, in the enumeration's order. */
static const VkFormat formats[SALVO_FORMAT_COUNT] = {
    [SALVO_FORMAT_UNDEFINED] = VK_FORMAT_UNDEFINED,
    [SALVO_FORMAT_R8_UNORM] = VK_FORMAT_R8_UNORM,
    [SALVO_FORMAT_R8_SNORM] = VK_FORMAT_R8_SNORM,
    [SALVO_FORMAT_R8_UINT] = VK_FORMAT_R8_UINT,
    [SALVO_FORMAT_R8_SINT] = VK_FORMAT_R8_SINT,
    [SALVO_FORMAT_RG8_UNORM] = VK_FORMAT_R8G8_UNORM,
    [SALVO_FORMAT_RG8_SNORM] = VK_FORMAT_R8G8_SNORM,
    [SALVO_FORMAT_RG8_UINT] = VK_FORMAT_R8G8_UINT,
    [SALVO_FORMAT_RG8_SINT] = VK_FORMAT_R8G8_SINT,
    [SALVO_FORMAT_RGBA8_UNORM] = VK_FORMAT_R8G8B8A8_UNORM,
    [SALVO_FORMAT_RGBA8_SNORM] = VK_FORMAT_R8G8B8A8_SNORM,
    [SALVO_FORMAT_RGBA8_UINT] = VK_FORMAT_R8G8B8A8_UINT,
    [SALVO_FORMAT_RGBA8_SINT] = VK_FORMAT_R8G8B8A8_SINT,
    [SALVO_FORMAT_R16_UNORM] = VK_FORMAT_R16_UNORM,
    [SALVO_FORMAT_R16_SNORM] = VK_FORMAT_R16_SNORM,
    [SALVO_FORMAT_R16_UINT] = VK_FORMAT_R16_UINT,
    [SALVO_FORMAT_R16_SINT] = VK_FORMAT_R16_SINT,
    [SALVO_FORMAT_R16_FLOAT] = VK_FORMAT_R16_SFLOAT,
    [SALVO_FORMAT_RG16_UNORM] = VK_FORMAT_R16G16_UNORM,
    [SALVO_FORMAT_RG16_SNORM] = VK_FORMAT_R16G16_SNORM,
    [SALVO_FORMAT_RG16_UINT] = VK_FORMAT_R16G16_UINT,
    [SALVO_FORMAT_RG16_SINT] = VK_FORMAT_R16G16_SINT,
    [SALVO_FORMAT_RG16_FLOAT] = VK_FORMAT_R16G16_SFLOAT,
    [SALVO_FORMAT_RGBA16_UNORM] = VK_FORMAT_R16G16B16A16_UNORM,
    [SALVO_FORMAT_RGBA16_SNORM] = VK_FORMAT_R16G16B16A16_SNORM,
    [SALVO_FORMAT_RGBA16_UINT] = VK_FORMAT_R16G16B16A16_UINT,
    [SALVO_FORMAT_RGBA16_SINT] = VK_FORMAT_R16G16B16A16_SINT,
    [SALVO_FORMAT_RGBA16_FLOAT] = VK_FORMAT_R16G16B16A16_SFLOAT,
    [SALVO_FORMAT_R32_UINT] = VK_FORMAT_R32_UINT,
    [SALVO_FORMAT_R32_SINT] = VK_FORMAT_R32_SINT,
    [SALVO_FORMAT_R32_FLOAT] = VK_FORMAT_R32_SFLOAT,
    [SALVO_FORMAT_RG32_UINT] = VK_FORMAT_R32G32_UINT,
    [SALVO_FORMAT_RG32_SINT] = VK_FORMAT_R32G32_SINT,
    [SALVO_FORMAT_RG32_FLOAT] = VK_FORMAT_R32G32_SFLOAT,
    [SALVO_FORMAT_RGBA32_UINT] = VK_FORMAT_R32G32B32A32_UINT,
    [SALVO_FORMAT_RGBA32_SINT] = VK_FORMAT_R32G32B32A32_SINT,
    [SALVO_FORMAT_RGBA32_FLOAT] = VK_FORMAT_R32G32B32A32_SFLOAT,
};

struct accel_image {
    VkImage image;
    VkDeviceMemory memory;
    VkImageView view;
    VkImageViewType view_type;
    VkFormat format;
    uint32_t layers;
    uint64_t memory_bytes; /* counted in heaps.c */
    uint32_t memory_type;
};

struct accel_sampler {
    VkSampler sampler;
};

static VkImageCreateInfo image_info(const accel_image_desc *desc);

void accel_vk_image_formats_query(accel_device *d)
{
    /* Every image is also a copy source and target. */
    const VkFormatFeatureFlags copies =
        VK_FORMAT_FEATURE_TRANSFER_SRC_BIT | VK_FORMAT_FEATURE_TRANSFER_DST_BIT;
    for (int f = SALVO_FORMAT_UNDEFINED + 1; f < SALVO_FORMAT_COUNT; f++) {
        VkFormatProperties fp;
        vkGetPhysicalDeviceFormatProperties(d->phys, formats[f], &fp);
        VkFormatFeatureFlags have = fp.optimalTilingFeatures;
        uint32_t usage = 0;
        if ((have & copies) == copies) {
            if (have & VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT)
                usage |= SALVO_IMAGE_STORAGE;
            if (have & VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT)
                usage |= SALVO_IMAGE_SAMPLED;
            if (have & VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT)
                usage |= SALVO_IMAGE_LINEAR_FILTER;
        }
        d->image_usage[f] = usage;
        d->image_max_bytes[f] = 0;
        if (!(usage & (SALVO_IMAGE_STORAGE | SALVO_IMAGE_SAMPLED)))
            continue;
        static const VkImageType types[] = {VK_IMAGE_TYPE_1D, VK_IMAGE_TYPE_2D,
                                            VK_IMAGE_TYPE_3D};
        accel_image_desc all = {.format = (salvo_format)f, .usage = usage};
        VkImageUsageFlags bits = image_info(&all).usage;
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
            VkImageFormatProperties ip;
            if (vkGetPhysicalDeviceImageFormatProperties(d->phys, formats[f], types[t],
                                                         VK_IMAGE_TILING_OPTIMAL, bits, 0,
                                                         &ip) != VK_SUCCESS)
                continue;
            if (!d->image_max_bytes[f] || ip.maxResourceSize < d->image_max_bytes[f])
                d->image_max_bytes[f] = ip.maxResourceSize;
        }
    }
}

uint32_t accel_vk_image_format_support(void *self, accel_device *d, salvo_format format)
{
    (void)self;
    if (format <= SALVO_FORMAT_UNDEFINED || format >= SALVO_FORMAT_COUNT)
        return 0;
    return d->image_usage[format];
}

void accel_vk_image_destroy(void *self, accel_device *d, accel_image *img)
{
    (void)self;
    if (!img)
        return;
    d->vk.vkDestroyImageView(d->device, img->view, NULL);
    d->vk.vkDestroyImage(d->device, img->image, NULL);
    d->vk.vkFreeMemory(d->device, img->memory, NULL);
    accel_vk_heap_note(d, img->memory_type, img->memory_bytes, true);
    salvo_mem_free(d->alloc, img);
}

/* Device-local memory where the image allows it, else any type it allows. */
static uint32_t image_memory_type(const accel_device *d, uint32_t allowed)
{
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < d->mem.memoryTypeCount; i++)
            if ((allowed >> i & 1) &&
                (pass == 1 ||
                 (d->mem.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)))
                return i;
    return UINT32_MAX;
}

static VkImageCreateInfo image_info(const accel_image_desc *desc)
{
    VkImageCreateInfo ii = {
        .sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
        .imageType = desc->type == SALVO_IMAGE_1D   ? VK_IMAGE_TYPE_1D
                     : desc->type == SALVO_IMAGE_3D ? VK_IMAGE_TYPE_3D
                                                    : VK_IMAGE_TYPE_2D,
        .format = formats[desc->format],
        .extent = {desc->width, desc->height, desc->depth},
        .mipLevels = 1,
        .arrayLayers = desc->layers,
        .samples = VK_SAMPLE_COUNT_1_BIT,
        .tiling = VK_IMAGE_TILING_OPTIMAL,
        .usage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT |
                 (desc->usage & SALVO_IMAGE_STORAGE ? VK_IMAGE_USAGE_STORAGE_BIT : 0) |
                 (desc->usage & SALVO_IMAGE_SAMPLED ? VK_IMAGE_USAGE_SAMPLED_BIT : 0),
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
        .initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
    };
    return ii;
}

accel_result accel_vk_image_create(void *self, accel_device *d, const accel_image_desc *desc,
                                   accel_image **out)
{
    *out = NULL;
    if (desc->format <= SALVO_FORMAT_UNDEFINED || desc->format >= SALVO_FORMAT_COUNT)
        return VK_ERROR_FORMAT_NOT_SUPPORTED;
    accel_image *img = salvo_mem_calloc(d->alloc, 1, sizeof *img);
    if (!img)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    /* Images are used on the streams' family only: salvo records no
     * image copy on a copy engine's queue. */
    VkImageCreateInfo ii = image_info(desc);
    img->view_type = desc->type == SALVO_IMAGE_1D         ? VK_IMAGE_VIEW_TYPE_1D
                     : desc->type == SALVO_IMAGE_3D       ? VK_IMAGE_VIEW_TYPE_3D
                     : desc->type == SALVO_IMAGE_2D_ARRAY ? VK_IMAGE_VIEW_TYPE_2D_ARRAY
                                                          : VK_IMAGE_VIEW_TYPE_2D;
    img->format = ii.format;
    img->layers = desc->layers;
    /* An image past the format's largest resource is invalid usage, not an
     * allocation the driver refuses: said out of memory here, as one past
     * its heap is below. */
    uint64_t texels = (uint64_t)desc->width * desc->height * desc->depth * desc->layers;
    uint64_t most = d->image_max_bytes[desc->format];
    VkResult r = most && texels > most / salvo_format_texel_size(desc->format)
                     ? VK_ERROR_OUT_OF_DEVICE_MEMORY
                     : VK_SUCCESS;
    VkImage image;
    if (r == VK_SUCCESS)
        r = d->vk.vkCreateImage(d->device, &ii, NULL, &image);
    if (r == VK_SUCCESS) {
        img->image = image;
        VkMemoryRequirements req;
        d->vk.vkGetImageMemoryRequirements(d->device, image, &req);
        VkMemoryAllocateInfo ai = {
            .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
            .allocationSize = req.size,
            .memoryTypeIndex = image_memory_type(d, req.memoryTypeBits),
        };
        VkDeviceMemory memory;
        r = ai.memoryTypeIndex == UINT32_MAX || !accel_vk_heap_holds(d, ai.memoryTypeIndex, req.size)
                ? VK_ERROR_OUT_OF_DEVICE_MEMORY
                : d->vk.vkAllocateMemory(d->device, &ai, NULL, &memory);
        if (r == VK_SUCCESS) {
            img->memory = memory;
            img->memory_bytes = req.size;
            img->memory_type = ai.memoryTypeIndex;
            accel_vk_heap_note(d, ai.memoryTypeIndex, req.size, false);
            r = d->vk.vkBindImageMemory(d->device, image, memory, 0);
        }
    }
    if (r != VK_SUCCESS) {
        accel_vk_image_destroy(self, d, img);
        return r;
    }
    *out = img;
    return ACCEL_SUCCESS;
}

accel_result accel_vk_image_view_create(void *self, accel_device *d, accel_image *img)
{
    (void)self;
    VkImageViewCreateInfo vi = {
        .sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO,
        .image = img->image,
        .viewType = img->view_type,
        .format = img->format,
        .subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, img->layers},
    };
    VkImageView view;
    VkResult r = d->vk.vkCreateImageView(d->device, &vi, NULL, &view);
    if (r == VK_SUCCESS)
        img->view = view;
    return r;
}

static const VkSamplerAddressMode address_modes[4] = {
    VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE,
    VK_SAMPLER_ADDRESS_MODE_REPEAT,
    VK_SAMPLER_ADDRESS_MODE_MIRRORED_REPEAT,
    VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_BORDER,
};

accel_result accel_vk_sampler_create(void *self, accel_device *d, const accel_sampler_desc *desc,
                                     accel_sampler **out)
{
    (void)self;
    *out = NULL;
    accel_sampler *s = salvo_mem_calloc(d->alloc, 1, sizeof *s);
    if (!s)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    VkFilter filter = desc->linear ? VK_FILTER_LINEAR : VK_FILTER_NEAREST;
    VkSamplerCreateInfo si = {
        .sType = VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO,
        .magFilter = filter,
        .minFilter = filter,
        .mipmapMode = VK_SAMPLER_MIPMAP_MODE_NEAREST,
        .addressModeU = address_modes[desc->address[0] & 3],
        .addressModeV = address_modes[desc->address[1] & 3],
        .addressModeW = address_modes[desc->address[2] & 3],
        .maxLod = 0.0f,
        .borderColor = VK_BORDER_COLOR_FLOAT_TRANSPARENT_BLACK,
        .unnormalizedCoordinates = desc->unnormalized,
    };
    VkSampler sampler;
    VkResult r = d->vk.vkCreateSampler(d->device, &si, NULL, &sampler);
    if (r != VK_SUCCESS) {
        salvo_mem_free(d->alloc, s);
        return r;
    }
    s->sampler = sampler;
    *out = s;
    return ACCEL_SUCCESS;
}

void accel_vk_sampler_destroy(void *self, accel_device *d, accel_sampler *s)
{
    (void)self;
    if (!s)
        return;
    d->vk.vkDestroySampler(d->device, s->sampler, NULL);
    salvo_mem_free(d->alloc, s);
}

/* A layout change of r's layers of img (NULL: all of it), ordered after
 * earlier compute and transfer work and before later such work (the
 * access masks given). Only those layers: another stream may be using
 * the others meanwhile, in GENERAL. */
static void layout_barrier(accel_device *d, accel_cmd *c, accel_image *img,
                           const accel_image_region *r, VkImageLayout from, VkImageLayout to,
                           VkAccessFlags src, VkAccessFlags dst)
{
    const VkPipelineStageFlags work =
        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    VkImageMemoryBarrier ib = {
        .sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
        .srcAccessMask = src,
        .dstAccessMask = dst,
        .oldLayout = from,
        .newLayout = to,
        .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
        .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
        .image = img->image,
        .subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, r ? r->layer : 0,
                             r ? r->layers : VK_REMAINING_ARRAY_LAYERS},
    };
    d->vk.vkCmdPipelineBarrier(c->cb, from == VK_IMAGE_LAYOUT_UNDEFINED
                                          ? VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT
                                          : work,
                               work, 0, 0, NULL, 0, NULL, 1, &ib);
}

static const VkAccessFlags ANY_WORK = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                      VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;

accel_result accel_vk_cmd_image_init(void *self, accel_device *d, accel_cmd *c, accel_image *img)
{
    (void)self;
    layout_barrier(d, c, img, NULL, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL, 0,
                   ANY_WORK);
    return ACCEL_SUCCESS;
}

/* Copies run in the transfer layouts, which some devices copy faster
 * from and to, between two transitions that also order the copy after
 * and before all other work on the image: the image is back in GENERAL
 * for whatever comes next. */
void accel_vk_cmd_copy_image(void *self, accel_device *d, accel_cmd *c, accel_buffer *buf,
                             uint64_t offset, accel_image *img, const accel_image_region *r,
                             bool to_image)
{
    (void)self;
    VkImageLayout copy_layout =
        to_image ? VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL : VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    VkAccessFlags copy_access = to_image ? VK_ACCESS_TRANSFER_WRITE_BIT : VK_ACCESS_TRANSFER_READ_BIT;
    VkBufferImageCopy region = {
        .bufferOffset = offset,
        .imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, r->layer, r->layers},
        .imageOffset = {(int32_t)r->x, (int32_t)r->y, (int32_t)r->z},
        .imageExtent = {r->width, r->height, r->depth},
    };
    layout_barrier(d, c, img, r, VK_IMAGE_LAYOUT_GENERAL, copy_layout,
                   VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, copy_access);
    if (to_image)
        d->vk.vkCmdCopyBufferToImage(c->cb, buf->buffer, img->image, copy_layout, 1, &region);
    else
        d->vk.vkCmdCopyImageToBuffer(c->cb, img->image, copy_layout, buf->buffer, 1, &region);
    layout_barrier(d, c, img, r, copy_layout, VK_IMAGE_LAYOUT_GENERAL, copy_access, ANY_WORK);
}

/* The two ends of a copy between images (or layers of one image) into
 * the transfer layouts, or back to GENERAL, in one barrier that also
 * orders the copy after and before other work on them. */
static void copy_ends_barrier(accel_device *d, accel_cmd *c, accel_image *src,
                              const accel_image_region *sr, accel_image *dst,
                              const accel_image_region *dr, bool to_transfer)
{
    const VkPipelineStageFlags work =
        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    const VkAccessFlags written = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    const VkImageLayout layouts[2] = {VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                                      VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL};
    const VkAccessFlags copy_access[2] = {VK_ACCESS_TRANSFER_READ_BIT,
                                          VK_ACCESS_TRANSFER_WRITE_BIT};
    const accel_image *imgs[2] = {src, dst};
    const accel_image_region *rs[2] = {sr, dr};
    VkImageMemoryBarrier ib[2];
    for (int i = 0; i < 2; i++)
        ib[i] = (VkImageMemoryBarrier){
            .sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
            .srcAccessMask = to_transfer ? written : copy_access[i],
            .dstAccessMask = to_transfer ? copy_access[i] : ANY_WORK,
            .oldLayout = to_transfer ? VK_IMAGE_LAYOUT_GENERAL : layouts[i],
            .newLayout = to_transfer ? layouts[i] : VK_IMAGE_LAYOUT_GENERAL,
            .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
            .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
            .image = imgs[i]->image,
            .subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, rs[i]->layer, rs[i]->layers},
        };
    d->vk.vkCmdPipelineBarrier(c->cb, work, work, 0, 0, NULL, 0, NULL, 2, ib);
}

/* Between two images as between an image and a buffer: each end's layers
 * in their transfer layout for the copy. Layers of one image work the
 * same way: the caller keeps the two ends in different layers (a layer
 * cannot be in both transfer layouts, and in GENERAL the validation
 * layer warns of the copy's speed). */
void accel_vk_cmd_copy_image_to_image(void *self, accel_device *d, accel_cmd *c,
                                      accel_image *src, const accel_image_region *sr,
                                      accel_image *dst, const accel_image_region *dr)
{
    (void)self;
    VkImageCopy region = {
        .srcSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, sr->layer, sr->layers},
        .srcOffset = {(int32_t)sr->x, (int32_t)sr->y, (int32_t)sr->z},
        .dstSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, dr->layer, dr->layers},
        .dstOffset = {(int32_t)dr->x, (int32_t)dr->y, (int32_t)dr->z},
        .extent = {sr->width, sr->height, sr->depth},
    };
    copy_ends_barrier(d, c, src, sr, dst, dr, true);
    d->vk.vkCmdCopyImage(c->cb, src->image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, dst->image,
                         VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
    copy_ends_barrier(d, c, src, sr, dst, dr, false);
}

/* For descriptor writes (commands.c). */
VkImageView accel_vk_image_view(const accel_image *img)
{
    return img->view;
}

VkSampler accel_vk_sampler_handle(const accel_sampler *s)
{
    return s->sampler;
}
