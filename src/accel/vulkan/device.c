/*
 * A device: salvo's own (its instance, the physical device asked for, a
 * VkDevice with one compute queue) or the application's
 * (salvo_vk_device_import); what it can do (accel_caps); its teardown.
 */
#include "accel/vulkan/vk_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "salvo/salvo_vulkan.h"

/* Tears down whatever part of a device exists: both close and a failed
 * open end here. */
static void device_release(accel_device *d)
{
    if (d->device)
        accel_vk_fill_release(d);
    if (d->pipeline_cache)
        d->vk.vkDestroyPipelineCache(d->device, d->pipeline_cache, NULL);
    salvo_mem_free(d->alloc, d->cache_path);
    /* Under instance_lock, as device creation is: the loader does not
     * guard its lists of devices (a vkDestroyDevice frees a node another
     * thread's vkCreateDevice or vkGetDeviceProcAddr may be walking, on any
     * instance: Vulkan-Loader issue 2018), so one device of salvo's closing
     * while another opens on another thread could crash it. */
    accel_vk_instance_lock();
    if (d->device && !d->imported)
        d->vk.vkDestroyDevice(d->device, NULL);
    if (d->messenger)
        d->destroy_messenger(d->instance, d->messenger, NULL);
    if (d->instance && !d->imported)
        d->destroy_instance(d->instance, NULL);
    accel_vk_instance_unlock();
    salvo_mem_free(d->alloc, d);
}

static void fill_info(salvo_device_info *info, const accel_device *d,
                      const VkPhysicalDeviceProperties *p,
                      const VkPhysicalDeviceSubgroupProperties *subgroup,
                      const VkPhysicalDeviceDriverProperties *driver)
{
    const VkPhysicalDeviceLimits *l = &p->limits;
    accel_vk_copy_name(info->name, p->deviceName, sizeof p->deviceName);
    info->type = accel_vk_device_type(p->deviceType);
    info->vendor_id = p->vendorID;
    info->device_id = p->deviceID;
    info->api_version = d->api_version;
    info->driver_version = p->driverVersion;
    if (driver) {
        accel_vk_copy_name(info->driver_name, driver->driverName, sizeof driver->driverName);
        accel_vk_copy_name(info->driver_info, driver->driverInfo, sizeof driver->driverInfo);
    }
    for (int i = 0; i < 3; i++) {
        info->max_workgroup_count[i] = l->maxComputeWorkGroupCount[i];
        info->max_workgroup_size[i] = l->maxComputeWorkGroupSize[i];
    }
    info->max_workgroup_invocations = l->maxComputeWorkGroupInvocations;
    info->max_push_constants_size = l->maxPushConstantsSize;
    info->max_storage_buffer_range = l->maxStorageBufferRange;
    info->max_bindings = l->maxPerStageDescriptorStorageBuffers < SALVO_MAX_BINDINGS
                             ? l->maxPerStageDescriptorStorageBuffers
                             : SALVO_MAX_BINDINGS;
    info->min_storage_buffer_offset_alignment = l->minStorageBufferOffsetAlignment;
    info->max_uniform_buffer_range = l->maxUniformBufferRange;
    info->min_uniform_buffer_offset_alignment = l->minUniformBufferOffsetAlignment;
    info->subgroup_size = subgroup->subgroupSize;
    info->max_workgroup_memory = l->maxComputeSharedMemorySize;
    info->features = d->features;
    info->timeline_semaphores = d->timeline;
    info->host_import = d->host_import;
    uint32_t heaps = d->mem.memoryHeapCount < 16 ? d->mem.memoryHeapCount : 16;
    info->memory_heap_count = heaps;
    for (uint32_t i = 0; i < heaps; i++) {
        info->memory_heaps[i].size = d->mem.memoryHeaps[i].size;
        info->memory_heaps[i].device_local =
            (d->mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0;
    }
}

/* The feature structs salvo reads and enables, chained as the device's
 * version and extensions allow (chaining a struct the device does not know
 * is invalid usage): the query and the enable have the same shape. */
typedef struct feature_chain {
    VkPhysicalDeviceFeatures2 core;
    VkPhysicalDeviceVulkan11Features v11;                /* 1.2 and up */
    VkPhysicalDeviceVulkan12Features v12;                /* 1.2 and up */
    VkPhysicalDeviceVulkan13Features v13;                /* 1.3 */
    VkPhysicalDevice16BitStorageFeatures storage16;      /* 1.1 */
    VkPhysicalDeviceVariablePointersFeatures varptr;     /* 1.1 */
    VkPhysicalDeviceTimelineSemaphoreFeatures timeline;  /* 1.1, extension */
    VkPhysicalDeviceShaderIntegerDotProductFeatures dot; /* before 1.3, extension */
    VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomic_float; /* extension */
} feature_chain;

/* Which of the chain's extension structs to link. */
typedef struct feature_exts {
    bool timeline, dot, atomic_float;
} feature_exts;

static void chain_init(feature_chain *c, uint32_t api, feature_exts ext)
{
    memset(c, 0, sizeof *c);
    c->core.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    void **tail = &c->core.pNext;
#define LINK(member, type)                                                                         \
    do {                                                                                           \
        c->member.sType = type;                                                                    \
        *tail = &c->member;                                                                        \
        tail = &c->member.pNext;                                                                   \
    } while (0)
    if (api >= VK_API_VERSION_1_2) {
        LINK(v11, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES);
        LINK(v12, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
    } else {
        LINK(storage16, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES);
        LINK(varptr, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VARIABLE_POINTERS_FEATURES);
        if (ext.timeline)
            LINK(timeline, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES);
    }
    if (api >= VK_API_VERSION_1_3)
        LINK(v13, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES);
    else if (ext.dot)
        LINK(dot, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES);
    if (ext.atomic_float)
        LINK(atomic_float, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT);
#undef LINK
}

/* Into on (chained by chain_init as offered was): every feature offered that
 * a kernel can declare, and the layouts kernels may be written with;
 * nothing that costs when unused (robust access, say). The same choice,
 * as salvo reports it, into *f. */
static void features_choose(const feature_chain *offered, feature_chain *on, uint32_t api,
                            salvo_device_features *f)
{
#define ON(field) (on->field = offered->field)
    f->shader_float64 = ON(core.features.shaderFloat64);
    f->shader_int64 = ON(core.features.shaderInt64);
    f->shader_int16 = ON(core.features.shaderInt16);
    f->uniform_buffer_array_dynamic_indexing =
        ON(core.features.shaderUniformBufferArrayDynamicIndexing);
    f->storage_buffer_array_dynamic_indexing =
        ON(core.features.shaderStorageBufferArrayDynamicIndexing);
    f->storage_image_extended_formats = ON(core.features.shaderStorageImageExtendedFormats);
    f->storage_image_read_without_format = ON(core.features.shaderStorageImageReadWithoutFormat);
    f->storage_image_write_without_format =
        ON(core.features.shaderStorageImageWriteWithoutFormat);
    f->sampled_image_array_dynamic_indexing =
        ON(core.features.shaderSampledImageArrayDynamicIndexing);
    f->storage_image_array_dynamic_indexing =
        ON(core.features.shaderStorageImageArrayDynamicIndexing);
    if (api >= VK_API_VERSION_1_2) {
        f->storage_buffer_16bit = ON(v11.storageBuffer16BitAccess);
        f->uniform_buffer_16bit = ON(v11.uniformAndStorageBuffer16BitAccess);
        f->push_constant_16bit = ON(v11.storagePushConstant16);
        f->variable_pointers_storage_buffer = ON(v11.variablePointersStorageBuffer);
        f->variable_pointers = ON(v11.variablePointers);
        f->storage_buffer_8bit = ON(v12.storageBuffer8BitAccess);
        f->uniform_buffer_8bit = ON(v12.uniformAndStorageBuffer8BitAccess);
        f->push_constant_8bit = ON(v12.storagePushConstant8);
        f->buffer_int64_atomics = ON(v12.shaderBufferInt64Atomics);
        f->shared_int64_atomics = ON(v12.shaderSharedInt64Atomics);
        f->shader_float16 = ON(v12.shaderFloat16);
        f->shader_int8 = ON(v12.shaderInt8);
        f->buffer_device_address = ON(v12.bufferDeviceAddress);
        f->vulkan_memory_model = ON(v12.vulkanMemoryModel);
        f->vulkan_memory_model_device_scope = ON(v12.vulkanMemoryModelDeviceScope);
        ON(v12.vulkanMemoryModelAvailabilityVisibilityChains);
        ON(v12.scalarBlockLayout);
        ON(v12.uniformBufferStandardLayout);
        ON(v12.shaderSubgroupExtendedTypes);
    } else {
        f->storage_buffer_16bit = ON(storage16.storageBuffer16BitAccess);
        f->uniform_buffer_16bit = ON(storage16.uniformAndStorageBuffer16BitAccess);
        f->push_constant_16bit = ON(storage16.storagePushConstant16);
        f->variable_pointers_storage_buffer = ON(varptr.variablePointersStorageBuffer);
        f->variable_pointers = ON(varptr.variablePointers);
    }
    if (api >= VK_API_VERSION_1_3) {
        f->maintenance4 = ON(v13.maintenance4);
        f->zero_initialize_workgroup_memory = ON(v13.shaderZeroInitializeWorkgroupMemory);
        f->subgroup_size_control = ON(v13.subgroupSizeControl);
        f->compute_full_subgroups = ON(v13.computeFullSubgroups);
        f->integer_dot_product = ON(v13.shaderIntegerDotProduct);
    } else {
        f->integer_dot_product = ON(dot.shaderIntegerDotProduct);
    }
    f->buffer_float32_atomic_add = ON(atomic_float.shaderBufferFloat32AtomicAdd);
    f->buffer_float64_atomic_add = ON(atomic_float.shaderBufferFloat64AtomicAdd);
    ON(atomic_float.shaderBufferFloat32Atomics);
    ON(atomic_float.shaderBufferFloat64Atomics);
    ON(atomic_float.shaderSharedFloat32Atomics);
    ON(atomic_float.shaderSharedFloat32AtomicAdd);
    ON(atomic_float.shaderSharedFloat64Atomics);
    ON(atomic_float.shaderSharedFloat64AtomicAdd);
    f->image_float32_atomics = ON(atomic_float.shaderImageFloat32Atomics);
    f->image_float32_atomic_add = ON(atomic_float.shaderImageFloat32AtomicAdd);
#undef ON
    f->checked = true;
}

/* The float-controls modes the device offers, as SALVO_FLOAT_CONTROL bits. */
static uint32_t float_controls_bits(const VkPhysicalDeviceFloatControlsProperties *p)
{
    const VkBool32 offered[5][3] = {
        {p->shaderDenormPreserveFloat16, p->shaderDenormPreserveFloat32,
         p->shaderDenormPreserveFloat64},
        {p->shaderDenormFlushToZeroFloat16, p->shaderDenormFlushToZeroFloat32,
         p->shaderDenormFlushToZeroFloat64},
        {p->shaderSignedZeroInfNanPreserveFloat16, p->shaderSignedZeroInfNanPreserveFloat32,
         p->shaderSignedZeroInfNanPreserveFloat64},
        {p->shaderRoundingModeRTEFloat16, p->shaderRoundingModeRTEFloat32,
         p->shaderRoundingModeRTEFloat64},
        {p->shaderRoundingModeRTZFloat16, p->shaderRoundingModeRTZFloat32,
         p->shaderRoundingModeRTZFloat64},
    };
    uint32_t bits = 0;
    for (unsigned m = 0; m < 5; m++)
        for (unsigned w = 0; w < 3; w++)
            if (offered[m][w])
                bits |= 1u << (m * 3 + w);
    return bits;
}

/* Creates salvo's own VkDevice on d->phys with one queue of
 * d->queue_family and what salvo uses of the device's extensions; loads
 * its table. Call with instance_lock held and volk loaded for d->instance. */
static VkResult device_make(accel_device *d, bool push_descriptor, bool host_import,
                            bool portability, bool core12, const feature_chain *on,
                            feature_exts ext)
{
    const char *names[12];
    uint32_t name_count = 0;
    if (push_descriptor)
        names[name_count++] = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
    if (host_import)
        names[name_count++] = VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME;
    /* The spec requires enabling it whenever the device lists it. */
    if (portability)
        names[name_count++] = "VK_KHR_portability_subset";
    if (d->timeline && !core12)
        names[name_count++] = VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME;
    if (ext.dot)
        names[name_count++] = VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME;
    if (ext.atomic_float)
        names[name_count++] = VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME;
    if (d->memory_budget)
        names[name_count++] = VK_EXT_MEMORY_BUDGET_EXTENSION_NAME;
    /* Kernels with non-semantic instructions (debugPrintfEXT's): core in
     * Vulkan 1.3, before it this extension, where the device has it. */
    if (d->features.non_semantic_info && d->api_version < VK_API_VERSION_1_3)
        names[name_count++] = VK_KHR_SHADER_NON_SEMANTIC_INFO_EXTENSION_NAME;

    /* Several queues of the family where it has them, so that streams run
     * side by side; streams order each other through timeline semaphores,
     * so without them one queue serves all. */
    VkQueueFamilyProperties fam[64];
    uint32_t fam_count = 64;
    vkGetPhysicalDeviceQueueFamilyProperties(d->phys, &fam_count, fam);
    uint32_t count = d->queue_family < fam_count ? fam[d->queue_family].queueCount : 1;
    if (count > ACCEL_MAX_QUEUES)
        count = ACCEL_MAX_QUEUES;
    if (!d->timeline || count == 0)
        count = 1;
    /* The last queue (of three or more) is the high-priority one streams
     * may ask for. */
    float priorities[ACCEL_MAX_QUEUES];
    for (uint32_t i = 0; i < count; i++)
        priorities[i] = count > 2 && i == count - 1 ? 1.0f : 0.5f;
    VkDeviceQueueCreateInfo queues[2] = {{
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = d->queue_family,
        .queueCount = count,
        .pQueuePriorities = priorities,
    }};
    /* And a copy engine's queue, where the device has one: copies there
     * run beside kernels on the others (streams order them through their
     * timelines, so it needs those too). */
    uint32_t queue_infos = 1;
    if (d->timeline && d->transfer_family != UINT32_MAX)
        queues[queue_infos++] = (VkDeviceQueueCreateInfo){
            .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
            .queueFamilyIndex = d->transfer_family,
            .queueCount = 1,
            .pQueuePriorities = priorities,
        };
    else
        d->transfer_family = UINT32_MAX;
    VkDeviceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pNext = &on->core,
        .queueCreateInfoCount = queue_infos,
        .pQueueCreateInfos = queues,
        .enabledExtensionCount = name_count,
        .ppEnabledExtensionNames = names,
    };
    VkDevice device;
    /* pAllocator NULL: the driver allocates for itself (see accel_vk_instance_create). */
    VkResult r = vkCreateDevice(d->phys, &ci, NULL, &device);
    if (r != VK_SUCCESS)
        return r;
    d->device = device;
    /* volk resolves through the global vkGetDeviceProcAddr: still ours here. */
    volkLoadDeviceTable(&d->vk, d->device);
    for (uint32_t i = 0; i < count; i++)
        d->vk.vkGetDeviceQueue(d->device, d->queue_family, i, &d->queues[i]);
    d->queue_count = count;
    if (d->transfer_family != UINT32_MAX)
        d->vk.vkGetDeviceQueue(d->device, d->transfer_family, 0, &d->transfer_queue);
    return VK_SUCCESS;
}

/* Whether the application enabled extension name on its device. */
static bool enabled_extension(const salvo_vk_device_import *imp, const char *name)
{
    for (uint32_t i = 0; i < imp->device_extension_count; i++)
        if (imp->device_extensions[i] && strcmp(imp->device_extensions[i], name) == 0)
            return true;
    return false;
}

/* Why an open is refused: into the caller's message, else to the log. */
static void refuse(accel_device *d, const accel_open_options *opt, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void refuse(accel_device *d, const accel_open_options *opt, const char *fmt, ...)
{
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (opt->why && opt->why_size)
        snprintf(opt->why, opt->why_size, "%s", text);
    else
        SALVO_LOG(&d->log, SALVO_LOG_ERROR, "%s", text);
}

/* Queries d->phys, creates the VkDevice (or takes the application's:
 * opt->import) and loads its table. Call with instance_lock held and volk
 * loaded for d->instance. */
static VkResult device_create(accel_device *d, const accel_open_options *opt, accel_caps *caps)
{
    const salvo_vk_device_import *imp = opt->import;
    VkExtensionProperties *ext;
    uint32_t ext_count;
    VkResult r = accel_vk_extensions_get(d->alloc, d->phys, NULL, &ext, &ext_count);
    if (r != VK_SUCCESS)
        return r;
    /* What the device offers; of the application's device, only what it
     * enabled. (Physical-device queries need the extension offered only.) */
    bool push_descriptor =
        accel_vk_has_extension(ext, ext_count, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
    bool host_import =
        accel_vk_has_extension(ext, ext_count, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
    bool portability = accel_vk_has_extension(ext, ext_count, "VK_KHR_portability_subset");
    bool timeline_ext =
        accel_vk_has_extension(ext, ext_count, VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME);
    bool driver_ext =
        accel_vk_has_extension(ext, ext_count, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
    bool dot_ext =
        accel_vk_has_extension(ext, ext_count, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
    bool float_ext =
        accel_vk_has_extension(ext, ext_count, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
    bool non_semantic_ext =
        accel_vk_has_extension(ext, ext_count, VK_KHR_SHADER_NON_SEMANTIC_INFO_EXTENSION_NAME);
    /* Budget and usage per heap (salvo_device_memory_info); on the
     * application's device, where it enabled the extension. */
    d->memory_budget =
        accel_vk_has_extension(ext, ext_count, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME) &&
        (!imp || enabled_extension(imp, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME));
    salvo_mem_free(d->alloc, ext);
    bool host_props = host_import;
    if (imp) {
        push_descriptor = push_descriptor && enabled_extension(imp, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
        host_import = host_import && enabled_extension(imp, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
        timeline_ext = timeline_ext && enabled_extension(imp, VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME);
    }

    VkPhysicalDeviceProperties2 props = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    vkGetPhysicalDeviceProperties(d->phys, &props.properties);
    uint32_t device_api = props.properties.apiVersion;
    if (device_api < VK_API_VERSION_1_1) {
        refuse(d, opt, "%s supports only Vulkan 1.0; salvo needs 1.1", props.properties.deviceName);
        return VK_ERROR_INCOMPATIBLE_DRIVER;
    }
    if (device_api < d->api_version)
        d->api_version = device_api;
    bool core12 = d->api_version >= VK_API_VERSION_1_2;

    /* Chain only structs the device knows: anything else is invalid usage. */
    VkPhysicalDeviceSubgroupProperties subgroup = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceDriverProperties driver = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceExternalMemoryHostPropertiesEXT host = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
    VkPhysicalDeviceFloatControlsProperties fc = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES};
    props.pNext = &subgroup;
    void **tail = &subgroup.pNext;
    if (core12) {
        *tail = &fc;
        tail = &fc.pNext;
    }
    bool have_driver = core12 || driver_ext;
    if (have_driver) {
        *tail = &driver;
        tail = &driver.pNext;
    }
    if (host_props)
        *tail = &host;
    vkGetPhysicalDeviceProperties2(d->phys, &props);

    /* What the device offers (a physical-device query needs the
     * extensions offered only). */
    feature_exts offered_ext = {
        .timeline = timeline_ext, .dot = dot_ext, .atomic_float = float_ext};
    feature_chain offered;
    chain_init(&offered, d->api_version, offered_ext);
    vkGetPhysicalDeviceFeatures2(d->phys, &offered.core);
    VkBool32 timeline =
        core12 ? offered.v12.timelineSemaphore : offered.timeline.timelineSemaphore;
    d->timeline = timeline == VK_TRUE && (!imp || imp->timeline_semaphores);
    /* What salvo enables: the extension structs of the extensions it
     * enables only. */
    feature_exts on_ext = {.timeline = d->timeline && !core12,
                           .dot = dot_ext && d->api_version < VK_API_VERSION_1_3,
                           .atomic_float = float_ext};
    feature_chain on;
    chain_init(&on, d->api_version, on_ext);
    if (!imp)
        features_choose(&offered, &on, d->api_version, &d->features);
    if (core12)
        on.v12.timelineSemaphore = d->timeline;
    else
        on.timeline.timelineSemaphore = d->timeline;
    /* Queries reset from the host: a timestamp then costs the device no
     * reset command (Vulkan 1.2; a program's own device, not enabled). */
    d->host_query_reset = core12 && !imp && offered.v12.hostQueryReset == VK_TRUE;
    if (d->host_query_reset)
        on.v12.hostQueryReset = VK_TRUE;
    if ((subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) && !imp)
        d->features.subgroup_operations = subgroup.supportedOperations & 0xffu;
    if (core12 && !imp)
        d->features.float_controls = float_controls_bits(&fc);
    if (!imp)
        d->features.non_semantic_info = d->api_version >= VK_API_VERSION_1_3 || non_semantic_ext;
    vkGetPhysicalDeviceMemoryProperties(d->phys, &d->mem);
    /* Core in 1.1 (the instance's floor): kept for queries after open,
     * which run without instance_lock. */
    d->memory_properties2 = vkGetPhysicalDeviceMemoryProperties2;
    /* Objects are named where the instance has debug utils (a messenger). */
    d->set_object_name = d->messenger ? vkSetDebugUtilsObjectNameEXT : NULL;
    accel_vk_image_formats_query(d);
    if (imp) {
        d->device = imp->device;
        d->queues[0] = imp->queue;
        d->queue_count = 1;
        volkLoadDeviceTable(&d->vk, d->device);
    } else {
        r = device_make(d, push_descriptor, host_import, portability, core12, &on, on_ext);
        if (r != VK_SUCCESS)
            return r;
    }

    if (d->timeline) {
        d->signal_semaphore = core12 ? d->vk.vkSignalSemaphore : d->vk.vkSignalSemaphoreKHR;
        d->semaphore_value = core12 ? d->vk.vkGetSemaphoreCounterValue
                                    : d->vk.vkGetSemaphoreCounterValueKHR;
        d->wait_semaphores = core12 ? d->vk.vkWaitSemaphores : d->vk.vkWaitSemaphoresKHR;
        d->timeline = d->signal_semaphore && d->semaphore_value && d->wait_semaphores;
    }
    accel_vk_driver_clock_install(d); /* nothing, unless built with SALVO_DRIVER_CLOCK */
    d->host_import = host_import;
    /* Timestamps are a property of the queue family, not the device. */
    VkQueueFamilyProperties fam[64];
    uint32_t fam_count = 64;
    vkGetPhysicalDeviceQueueFamilyProperties(d->phys, &fam_count, fam);
    d->timestamp_bits = d->queue_family < fam_count ? fam[d->queue_family].timestampValidBits : 0;
    d->vendor_id = props.properties.vendorID;
    d->device_id = props.properties.deviceID;
    d->storage_align = props.properties.limits.minStorageBufferOffsetAlignment;
    memcpy(d->cache_uuid, props.properties.pipelineCacheUUID, VK_UUID_SIZE);

    memset(caps, 0, sizeof *caps);
    fill_info(&caps->info, d, &props.properties, &subgroup, have_driver ? &driver : NULL);
    caps->info.push_descriptors = push_descriptor;
    caps->max_image_1d = props.properties.limits.maxImageDimension1D;
    caps->max_image_2d = props.properties.limits.maxImageDimension2D;
    caps->max_image_3d = props.properties.limits.maxImageDimension3D;
    caps->max_image_layers = props.properties.limits.maxImageArrayLayers;
    caps->max_uniform_bindings = props.properties.limits.maxPerStageDescriptorUniformBuffers;
    /* A push per dispatch skips allocating and updating a set. */
    d->push = push_descriptor && !d->pool_descriptors;
    caps->push_descriptors_used = d->push;
    caps->info.host_import_alignment = host_import ? host.minImportedHostPointerAlignment : 0;
    caps->timestamps = d->timestamp_bits > 0;
    caps->timestamp_period_ns = props.properties.limits.timestampPeriod;
    caps->timestamp_valid_bits = d->timestamp_bits;
    caps->queue_count = d->queue_count;
    caps->high_priority_queue = d->queue_count > 2;
    caps->transfer_queue = d->transfer_family != UINT32_MAX;
    caps->info.queue_count = d->queue_count;
    return VK_SUCCESS;
}

/* salvo's own instance, and the device opt->index of it. */
static VkResult open_own(vk_self *self, const accel_open_options *opt, accel_device *d,
                         accel_caps *caps)
{
    accel_vk_keep_drivers();
    VkResult r = accel_vk_instance_create(self->alloc, opt, d, &d->instance, &d->api_version);
    if (r == VK_ERROR_LAYER_NOT_PRESENT)
        refuse(d, opt, "validation requested but %s is not installed", VALIDATION_LAYER);
    if (r != VK_SUCCESS)
        return r;

    accel_vk_instance_lock();
    volkLoadInstanceOnly(d->instance);
    d->destroy_instance = vkDestroyInstance;
    d->destroy_messenger = vkDestroyDebugUtilsMessengerEXT;
    d->get_instance_proc_addr = vkGetInstanceProcAddr;
    if (opt->validation || opt->sync_validation) {
        VkDebugUtilsMessengerCreateInfoEXT mi = accel_vk_messenger_info(d);
        VkDebugUtilsMessengerEXT messenger;
        r = vkCreateDebugUtilsMessengerEXT(d->instance, &mi, NULL, &messenger);
        if (r == VK_SUCCESS)
            d->messenger = messenger;
    }
    VkPhysicalDevice *pd = NULL;
    uint32_t n = 0;
    if (r == VK_SUCCESS)
        r = accel_vk_compute_devices(d->alloc, d->instance, &pd, &n);
    if (r == VK_SUCCESS && opt->index >= n) {
        refuse(d, opt, "device index %u out of range (%u devices)", opt->index, n);
        r = VK_ERROR_INITIALIZATION_FAILED;
    }
    if (r == VK_SUCCESS) {
        d->phys = pd[opt->index];
        d->queue_family = accel_vk_stream_family(d->phys);
        if (!opt->no_transfer_queue)
            d->transfer_family = accel_vk_transfer_family(d->phys);
        r = device_create(d, opt, caps);
    }
    salvo_mem_free(d->alloc, pd);
    accel_vk_instance_unlock();
    return r;
}

/* The application's instance, device and queue (opt->import, its required
 * handles checked by the caller). volk's globals are loaded through the
 * application's vkGetInstanceProcAddr while the lock is held, then pointed
 * back at salvo's loader for the other devices. */
static VkResult open_imported(const accel_open_options *opt, accel_device *d, accel_caps *caps)
{
    const salvo_vk_device_import *imp = opt->import;
    d->imported = true;
    d->instance = imp->instance;
    d->phys = imp->physical_device;
    d->queue_family = imp->queue_family_index;
    /* The version the instance was made for (variant bits aside), capped
     * as for salvo's own instance; device_create lowers it to the device's. */
    uint32_t api = imp->instance_api_version & 0x1FFFFFFFu;
    d->api_version = api > VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : api;
    d->queue_lock = imp->queue_lock;
    d->queue_unlock = imp->queue_unlock;
    d->queue_lock_user = imp->queue_lock_user;

    accel_vk_instance_lock();
    PFN_vkGetInstanceProcAddr ours = vkGetInstanceProcAddr;
    if (imp->get_instance_proc_addr)
        vkGetInstanceProcAddr = imp->get_instance_proc_addr;
    VkResult r = VK_SUCCESS;
    if (!vkGetInstanceProcAddr) {
        refuse(d, opt, "no Vulkan loader: give get_instance_proc_addr");
        r = VK_ERROR_INITIALIZATION_FAILED;
    }
    if (r == VK_SUCCESS) {
        volkLoadInstanceOnly(d->instance);
        d->get_instance_proc_addr = vkGetInstanceProcAddr;
        d->destroy_messenger = vkDestroyDebugUtilsMessengerEXT;
        VkQueueFamilyProperties fam[64];
        uint32_t fam_count = 64;
        vkGetPhysicalDeviceQueueFamilyProperties(d->phys, &fam_count, fam);
        if (d->queue_family >= fam_count) {
            refuse(d, opt, "queue family %u: the physical device has %u", d->queue_family,
                   fam_count);
            r = VK_ERROR_INVALID_EXTERNAL_HANDLE;
        } else if (!(fam[d->queue_family].queueFlags & VK_QUEUE_COMPUTE_BIT)) {
            refuse(d, opt, "queue family %u cannot run compute work", d->queue_family);
            r = VK_ERROR_INVALID_EXTERNAL_HANDLE;
        }
    }
    if (r == VK_SUCCESS && imp->instance_debug_utils) {
        if (vkCreateDebugUtilsMessengerEXT) {
            VkDebugUtilsMessengerCreateInfoEXT mi = accel_vk_messenger_info(d);
            VkDebugUtilsMessengerEXT messenger;
            r = vkCreateDebugUtilsMessengerEXT(d->instance, &mi, NULL, &messenger);
            if (r == VK_SUCCESS)
                d->messenger = messenger;
        } else {
            refuse(d, opt, "instance_debug_utils: VK_EXT_debug_utils is not enabled on the instance");
            r = VK_ERROR_EXTENSION_NOT_PRESENT;
        }
    }
    if (r == VK_SUCCESS)
        r = device_create(d, opt, caps);
    vkGetInstanceProcAddr = ours;
    accel_vk_instance_unlock();
    return r;
}

accel_result accel_vk_device_open(void *self_, const accel_open_options *opt, accel_device **out,
                                  accel_caps *caps)
{
    vk_self *self = self_;
    *out = NULL;
    const salvo_vk_device_import *imp = opt->import;
    /* An application's own vkGetInstanceProcAddr needs no loader of ours. */
    VkResult r = accel_vk_loader_ready();
    if (r != VK_SUCCESS && !(imp && imp->get_instance_proc_addr))
        return r;
    accel_device *d = salvo_mem_calloc(self->alloc, 1, sizeof *d);
    if (!d)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    d->alloc = self->alloc;
    d->log = (salvo_log_sink){opt->log, opt->log_user};
    d->pool_descriptors = opt->pool_descriptors;
    d->transfer_family = UINT32_MAX;
    d->printf = opt->printf && !imp && (opt->validation || opt->sync_validation);

    r = imp ? open_imported(opt, d, caps) : open_own(self, opt, d, caps);
    if (r == VK_SUCCESS)
        r = accel_vk_device_memory_host_visible(d, &caps->device_memory_host_visible);
    caps->shader_printf = d->printf;
    if (r != VK_SUCCESS) {
        device_release(d);
        return r;
    }
    /* File I/O outside instance_lock: other devices may open meanwhile. */
    if (opt->pipeline_cache_path)
        accel_vk_pipeline_cache_open(d, opt->pipeline_cache_path);
    *out = d;
    return ACCEL_SUCCESS;
}

void accel_vk_device_close(void *self, accel_device *d)
{
    (void)self;
    if (!d)
        return;
    accel_vk_pipeline_cache_store(d);
    device_release(d);
}
