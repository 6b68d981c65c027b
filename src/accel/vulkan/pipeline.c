/*
 * Compute pipelines (set layout, pipeline layout, specialisation
 * constants; built through the device's pipeline cache) and the descriptor
 * pools dispatches allocate sets from where descriptors are not pushed.
 */
#include "accel/vulkan/vk_internal.h"

#include <stddef.h>
#include <string.h>

void accel_vk_pipeline_destroy(void *self, accel_device *d, accel_pipeline *p)
{
    (void)self;
    if (!p)
        return;
    d->vk.vkDestroyPipeline(d->device, p->pipeline, NULL);
    d->vk.vkDestroyPipelineLayout(d->device, p->layout, NULL);
    d->vk.vkDestroyDescriptorSetLayout(d->device, p->set_layout, NULL);
    salvo_mem_free(d->alloc, p);
}

static VkResult layouts_create(accel_device *d, const accel_pipeline_desc *desc, accel_pipeline *p)
{
    VkDescriptorSetLayoutBinding bindings[SALVO_MAX_BINDINGS];
    uint32_t count = 0; /* one per binding: an array's elements share it */
    bool arrays = false;
    for (uint32_t i = 0; i < desc->binding_count; i++) {
        arrays |= desc->bindings[i].count > 1;
        if (desc->bindings[i].element != 0)
            continue;
        bindings[count++] = (VkDescriptorSetLayoutBinding){
            .binding = desc->bindings[i].binding,
            .descriptorType =
                accel_vk_descriptor_type(desc->bindings[i].kind, desc->bindings[i].uniform),
            .descriptorCount = desc->bindings[i].count ? desc->bindings[i].count : 1,
            .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        };
    }
    /* Arrays of buffers go through descriptor sets: pushed writes to
     * array elements read the wrong buffer on lavapipe (Mesa 22.3; the
     * lava_compat buffer_array case), and sets are what every driver
     * has tested most. */
    p->push = d->push && desc->binding_count > 0 && !arrays;
    VkDescriptorSetLayoutCreateInfo si = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .flags = p->push ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR : 0,
        .bindingCount = count,
        .pBindings = bindings,
    };
    VkDescriptorSetLayout set_layout;
    VkResult r = d->vk.vkCreateDescriptorSetLayout(d->device, &si, NULL, &set_layout);
    if (r != VK_SUCCESS)
        return r;
    p->set_layout = set_layout;
    VkPushConstantRange push = {
        .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        .size = (desc->push_constant_size + 3u) & ~3u, /* whole words (dispatch_state) */
    };
    VkPipelineLayoutCreateInfo li = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1,
        .pSetLayouts = &p->set_layout,
        .pushConstantRangeCount = desc->push_constant_size > 0 ? 1 : 0,
        .pPushConstantRanges = &push,
    };
    VkPipelineLayout layout;
    r = d->vk.vkCreatePipelineLayout(d->device, &li, NULL, &layout);
    if (r == VK_SUCCESS)
        p->layout = layout;
    return r;
}

static VkResult compute_pipeline_create(accel_device *d, const accel_pipeline_desc *desc,
                                        accel_pipeline *p)
{
    VkSpecializationMapEntry *entries = NULL;
    uint32_t n = desc->spec_constant_count;
    /* One allocation: the entries, then a word of data each, the value's
     * low bytes at the constant's own width (Vulkan reads exactly that
     * many bytes; copying them keeps the order right on any host). */
    if (n > 0) {
        entries = salvo_mem_alloc(d->alloc, (size_t)n * (sizeof *entries + 4));
        if (!entries)
            return VK_ERROR_OUT_OF_HOST_MEMORY;
    }
    unsigned char *data = (unsigned char *)(entries + n);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t size = desc->spec_constant_sizes ? desc->spec_constant_sizes[i] : 4;
        uint32_t v = desc->spec_constants[i].value;
        uint16_t v16 = (uint16_t)v;
        uint8_t v8 = (uint8_t)v;
        memcpy(data + 4 * i, size == 1 ? (void *)&v8 : size == 2 ? (void *)&v16 : (void *)&v,
               size);
        entries[i] = (VkSpecializationMapEntry){
            .constantID = desc->spec_constants[i].id,
            .offset = 4 * i,
            .size = size,
        };
    }
    VkSpecializationInfo spec = {
        .mapEntryCount = n,
        .pMapEntries = entries,
        .dataSize = (size_t)n * 4,
        .pData = data,
    };
    VkShaderModuleCreateInfo mi = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
        .codeSize = desc->spirv_size,
        .pCode = desc->spirv,
    };
    VkShaderModule module;
    VkResult r = d->vk.vkCreateShaderModule(d->device, &mi, NULL, &module);
    if (r == VK_SUCCESS) {
        VkComputePipelineCreateInfo ci = {
            .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
            .stage = {
                .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = module,
                .pName = desc->entry ? desc->entry : "main",
                .pSpecializationInfo = n > 0 ? &spec : NULL,
            },
            .layout = p->layout,
        };
        r = d->vk.vkCreateComputePipelines(d->device, d->pipeline_cache, 1, &ci, NULL,
                                           &p->pipeline);
        /* The kernel's name on the pipeline: the validation layer's
         * messages then name it ("VkPipeline 0x...[saxpy]"), and so do
         * capture tools. */
        if (r == VK_SUCCESS && desc->name && d->set_object_name) {
            VkDebugUtilsObjectNameInfoEXT ni = {
                .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT,
                .objectType = VK_OBJECT_TYPE_PIPELINE,
                .objectHandle = (uint64_t)p->pipeline,
                .pObjectName = desc->name,
            };
            d->set_object_name(d->device, &ni);
        }
        /* The pipeline holds all it needs; keeping modules only costs memory. */
        d->vk.vkDestroyShaderModule(d->device, module, NULL);
    }
    salvo_mem_free(d->alloc, entries);
    return r;
}

accel_result accel_vk_pipeline_create(void *self, accel_device *d, const accel_pipeline_desc *desc,
                                      accel_pipeline **out)
{
    *out = NULL;
    if (desc->binding_count > SALVO_MAX_BINDINGS)
        return VK_ERROR_INITIALIZATION_FAILED;
    accel_pipeline *p = salvo_mem_calloc(d->alloc, 1, sizeof *p);
    if (!p)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    p->binding_count = desc->binding_count;
    VkResult r = layouts_create(d, desc, p);
    if (r == VK_SUCCESS)
        r = compute_pipeline_create(d, desc, p);
    if (r != VK_SUCCESS) {
        accel_vk_pipeline_destroy(self, d, p);
        return r;
    }
    *out = p;
    return ACCEL_SUCCESS;
}

accel_result accel_vk_descpool_create(void *self, accel_device *d, uint32_t max_sets,
                                      uint32_t bindings_per_set, uint32_t image_bindings,
                                      accel_descpool **out)
{
    (void)self;
    *out = NULL;
    accel_descpool *pool = salvo_mem_calloc(d->alloc, 1, sizeof *pool);
    if (!pool)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    /* Zero counts are invalid usage; a pool of one costs nothing. */
    uint64_t per_type = (uint64_t)max_sets * bindings_per_set;
    if (per_type == 0)
        per_type = 1;
    if (per_type > UINT32_MAX)
        per_type = UINT32_MAX;
    uint32_t images = image_bindings ? image_bindings : 1;
    VkDescriptorPoolSize sizes[6] = {
        {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, (uint32_t)per_type},
        {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, (uint32_t)per_type},
        {VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, images},
        {VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, images},
        {VK_DESCRIPTOR_TYPE_SAMPLER, images},
        {VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, images},
    };
    VkDescriptorPoolCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
        .maxSets = max_sets > 0 ? max_sets : 1,
        .poolSizeCount = 6,
        .pPoolSizes = sizes,
    };
    VkResult r = d->vk.vkCreateDescriptorPool(d->device, &ci, NULL, &pool->pool);
    if (r != VK_SUCCESS) {
        salvo_mem_free(d->alloc, pool);
        return r;
    }
    *out = pool;
    return ACCEL_SUCCESS;
}

accel_result accel_vk_descpool_reset(void *self, accel_device *d, accel_descpool *pool)
{
    (void)self;
    if (!pool->taken) /* nothing to return: no call on the round trip's path */
        return ACCEL_SUCCESS;
    pool->taken = false;
    return d->vk.vkResetDescriptorPool(d->device, pool->pool, 0);
}

void accel_vk_descpool_destroy(void *self, accel_device *d, accel_descpool *pool)
{
    (void)self;
    if (!pool)
        return;
    d->vk.vkDestroyDescriptorPool(d->device, pool->pool, NULL);
    salvo_mem_free(d->alloc, pool);
}
