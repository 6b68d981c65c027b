/*
 * The Vulkan accelerator: the accel_vtable on top of volk.
 *
 * Every device-level call goes through the device's own VolkDeviceTable,
 * so several devices (each with its own instance, or on an application's
 * instance and device: open_imported) can live side by side.
 * Instance-level calls use volk's globals, which volkLoadInstanceOnly
 * overwrites for whichever instance loaded last; instance_lock covers the
 * load and every use, and the two entry points a device needs after open
 * (to tear itself down) are copied out while the lock is held.
 *
 * Failure paths: each object is built into a zeroed struct and freed by its
 * own destroy function, which skips null handles. A failed Vulkan call
 * leaves its output handle undefined, so handles are stored only on
 * success.
 *
 * Host memory: salvo's own structures come from the device's allocator
 * (salvo_mem_*); every pAllocator is NULL, so the loader, the layers and
 * the driver allocate for themselves (see instance_create for why).
 */
#define _POSIX_C_SOURCE 200809L

#include "accel/accel.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* First: renames volk's globals to salvo_volk_* (see volk_impl.c). */
#include "salvo_volk_names.h"
#define VOLK_NO_DEVICE_PROTOTYPES
#include <volk.h>

#include "salvo/salvo_vulkan.h"

#include "accel/cache_file.h"
#include "base/alloc.h"
#include "base/diag.h"

#define VALIDATION_LAYER "VK_LAYER_KHRONOS_validation"

/* Every buffer can be bound either way and be a copy source or target:
 * the core decides per launch, and usage bits cost nothing on the drivers
 * we know of. */
static const VkBufferUsageFlags BUFFER_USAGE =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT |
    VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

typedef struct vk_self {
    salvo_allocator allocator;    /* a copy: the caller's may not outlive us */
    const salvo_allocator *alloc; /* &allocator, or NULL for malloc */
} vk_self;

struct accel_device {
    const salvo_allocator *alloc;
    salvo_log_sink log;
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    PFN_vkDestroyInstance destroy_instance;
    PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger;
    PFN_vkGetInstanceProcAddr get_instance_proc_addr; /* for salvo_device_vk_handles */
    VkPhysicalDevice phys;
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family;
    uint32_t api_version; /* min(device, instance) */
    VkPhysicalDeviceMemoryProperties mem;
    bool host_import;
    bool timeline;
    uint32_t timestamp_bits; /* the queue family's timestampValidBits; 0: none */
    bool pool_descriptors; /* asked for pools even where pushing works */
    bool push;             /* descriptors are pushed (VK_KHR_push_descriptor) */
    /* Core 1.2 or VK_KHR_timeline_semaphore, whichever the device has. */
    PFN_vkSignalSemaphore signal_semaphore;
    PFN_vkGetSemaphoreCounterValue semaphore_value;
    PFN_vkWaitSemaphores wait_semaphores;
    /* Pipeline cache persisted at cache_path (see pipeline_cache_open);
     * VK_NULL_HANDLE without a path. What a cache file must have been
     * written for: this device's identity, copied at open. */
    VkPipelineCache pipeline_cache;
    char *cache_path;
    uint32_t vendor_id, device_id;
    uint8_t cache_uuid[VK_UUID_SIZE];
    /* The instance, device and queue are the application's
     * (salvo_device_create_vk): used, never destroyed. */
    bool imported;
    void (*queue_lock)(void *user); /* the application's queue lock, or NULL */
    void (*queue_unlock)(void *user);
    void *queue_lock_user;
    struct VolkDeviceTable vk;
};

struct accel_buffer {
    VkBuffer buffer;
    VkDeviceMemory memory;
};

struct accel_pipeline {
    VkPipeline pipeline;
    VkPipelineLayout layout;
    VkDescriptorSetLayout set_layout;
    uint32_t binding_count;
    bool push; /* its set layout is a push-descriptor layout */
};

struct accel_descpool {
    VkDescriptorPool pool;
};

struct accel_cmd {
    VkCommandPool pool;
    VkCommandBuffer cb;
    VkPipeline bound; /* last pipeline bound since begin: rebinding costs on some drivers */
    /* What the last dispatch left bound, so an identical next one records
     * only the dispatch (a dependent chain repeats its bindings and push
     * constants launch after launch). Valid while state_layout is the
     * layout of the pipeline dispatched; cleared at begin and reset. */
    VkPipelineLayout state_layout;
    uint32_t pushed_count; /* descriptors pushed, or UINT32_MAX: unknown */
    accel_bind pushed[SALVO_MAX_BINDINGS];
    uint32_t constants_size; /* UINT32_MAX: unknown */
    unsigned char constants[128];
};

static void cmd_state_forget(accel_cmd *c)
{
    c->bound = VK_NULL_HANDLE;
    c->state_layout = VK_NULL_HANDLE;
    c->pushed_count = UINT32_MAX;
    c->constants_size = UINT32_MAX;
}

static bool same_binds(const accel_bind *a, const accel_bind *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (a[i].binding != b[i].binding || a[i].uniform != b[i].uniform ||
            a[i].buffer != b[i].buffer || a[i].offset != b[i].offset || a[i].size != b[i].size)
            return false;
    return true;
}

struct accel_fence {
    VkFence fence;
};

struct accel_timeline {
    VkSemaphore semaphore;
};

struct accel_querypool {
    VkQueryPool pool;
};

static pthread_once_t volk_once = PTHREAD_ONCE_INIT;
static VkResult volk_result;
static pthread_mutex_t instance_lock = PTHREAD_MUTEX_INITIALIZER;

static void volk_init_once(void)
{
    volk_result = volkInitialize();
}

/* Loading the loader is deferred to the first real use so that building
 * the table never fails on a machine without Vulkan. */
static VkResult volk_ready(void)
{
    pthread_once(&volk_once, volk_init_once);
    return volk_result;
}

/* ------------------------------------------------------------------ */
/* Instance                                                            */
/* ------------------------------------------------------------------ */

static VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    (void)types;
    const accel_device *d = user;
    salvo_log_level level;
    if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)
        level = SALVO_LOG_ERROR;
    else if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT)
        level = SALVO_LOG_WARNING;
    else
        return VK_FALSE;
    if (d->log.fn)
        d->log.fn(d->log.user, level, "validation", 0, data && data->pMessage ? data->pMessage : "");
    /* Never make the layer fail the call: the core decides what a message means. */
    return VK_FALSE;
}

static VkDebugUtilsMessengerCreateInfoEXT messenger_info(accel_device *d)
{
    return (VkDebugUtilsMessengerCreateInfoEXT){
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = on_validation_message,
        .pUserData = d,
    };
}

/* Instance (pd NULL, optionally of one layer) or device extensions. The
 * list can grow between the two calls, hence the retry. */
static VkResult extensions_get(const salvo_allocator *alloc, VkPhysicalDevice pd, const char *layer,
                               VkExtensionProperties **out, uint32_t *count)
{
    *out = NULL;
    *count = 0;
    for (;;) {
        uint32_t n = 0;
        VkResult r = pd ? vkEnumerateDeviceExtensionProperties(pd, layer, &n, NULL)
                        : vkEnumerateInstanceExtensionProperties(layer, &n, NULL);
        if (r != VK_SUCCESS || n == 0)
            return r;
        VkExtensionProperties *p = salvo_mem_alloc(alloc, n * sizeof *p);
        if (!p)
            return VK_ERROR_OUT_OF_HOST_MEMORY;
        r = pd ? vkEnumerateDeviceExtensionProperties(pd, layer, &n, p)
               : vkEnumerateInstanceExtensionProperties(layer, &n, p);
        if (r == VK_SUCCESS) {
            *out = p;
            *count = n;
            return r;
        }
        salvo_mem_free(alloc, p);
        if (r != VK_INCOMPLETE)
            return r;
    }
}

static bool has_extension(const VkExtensionProperties *p, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(p[i].extensionName, name) == 0)
            return true;
    return false;
}

/* opt NULL: the bare instance enumerate uses. d receives validation
 * messages, including those of instance creation itself. */
static VkResult instance_create(const salvo_allocator *alloc, const accel_open_options *opt,
                                accel_device *d, VkInstance *out, uint32_t *api_out)
{
    /* Ask for what the loader has, up to the newest version we know; 1.1
     * is the floor because we rely on Properties2/Features2 being core. */
    uint32_t api = volkGetInstanceVersion();
    if (api < VK_API_VERSION_1_1)
        return VK_ERROR_INCOMPATIBLE_DRIVER;
    if (api > VK_API_VERSION_1_3)
        api = VK_API_VERSION_1_3;

    bool validation = opt && (opt->validation || opt->sync_validation);
    VkExtensionProperties *ext = NULL, *layer_ext = NULL;
    uint32_t ext_count = 0, layer_ext_count = 0;
    VkResult r = extensions_get(alloc, NULL, NULL, &ext, &ext_count);
    /* Asking for the layer's own extensions doubles as the presence check:
     * VK_ERROR_LAYER_NOT_PRESENT when it is not installed. */
    if (r == VK_SUCCESS && validation)
        r = extensions_get(alloc, NULL, VALIDATION_LAYER, &layer_ext, &layer_ext_count);
    if (r != VK_SUCCESS)
        goto done;

    const char *names[3];
    uint32_t name_count = 0;
    VkInstanceCreateFlags flags = 0;
    /* Without it the loader hides portability drivers (MoltenVK). */
    if (has_extension(ext, ext_count, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
        names[name_count++] = VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME;
        flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
    }

    VkDebugUtilsMessengerCreateInfoEXT messenger = messenger_info(d);
    const VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
    VkValidationFeaturesEXT features = {
        .sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
        .pNext = &messenger,
        .enabledValidationFeatureCount = 1,
        .pEnabledValidationFeatures = &sync,
    };
    const void *chain = NULL;
    if (validation) {
        const char *want[2] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
        uint32_t want_count = opt->sync_validation ? 2 : 1;
        for (uint32_t i = 0; i < want_count; i++) {
            if (!has_extension(ext, ext_count, want[i]) &&
                !has_extension(layer_ext, layer_ext_count, want[i])) {
                r = VK_ERROR_EXTENSION_NOT_PRESENT;
                goto done;
            }
            names[name_count++] = want[i];
        }
        chain = opt->sync_validation ? (const void *)&features : (const void *)&messenger;
    }

    const char *layer = VALIDATION_LAYER;
    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pEngineName = "salvo",
        .engineVersion = VK_MAKE_API_VERSION(0, SALVO_VERSION_MAJOR, SALVO_VERSION_MINOR,
                                             SALVO_VERSION_PATCH),
        .apiVersion = api,
    };
    VkInstanceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pNext = chain,
        .flags = flags,
        .pApplicationInfo = &app,
        .enabledLayerCount = validation ? 1 : 0,
        .ppEnabledLayerNames = &layer,
        .enabledExtensionCount = name_count,
        .ppEnabledExtensionNames = names,
    };
    VkInstance instance;
    /* pAllocator NULL here and in every other vkCreate, vkAllocate, vkDestroy
     * and vkFree: the driver's host allocations are not salvo's and do not
     * go through salvo_allocator. They could not: VkAllocationCallbacks asks
     * for allocations of a given alignment (pfnAllocation) and for
     * reallocation (pfnReallocation, with its alignment), and
     * salvo_allocator has neither (alloc(size), malloc's alignment; free).
     * A driver out of host memory still reaches the caller: its
     * VK_ERROR_OUT_OF_HOST_MEMORY becomes SALVO_ERROR_OUT_OF_HOST_MEMORY. */
    r = vkCreateInstance(&ci, NULL, &instance);
    if (r == VK_SUCCESS) {
        *out = instance;
        *api_out = api;
    }
done:
    salvo_mem_free(alloc, ext);
    salvo_mem_free(alloc, layer_ext);
    return r;
}

/* First family with compute, or UINT32_MAX. Family lists are short; a fixed
 * array spares an allocation (the first compute family is never far down). */
static uint32_t compute_family(VkPhysicalDevice pd)
{
    VkQueueFamilyProperties fam[64];
    uint32_t n = 64;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, fam);
    for (uint32_t i = 0; i < n; i++)
        if (fam[i].queueFlags & VK_QUEUE_COMPUTE_BIT)
            return i;
    return UINT32_MAX;
}

/* The devices we can use, in the loader's order: enumerate and device_open
 * must agree on what an index means. Call with instance_lock held. */
static VkResult compute_devices(const salvo_allocator *alloc, VkInstance instance,
                                VkPhysicalDevice **out, uint32_t *count)
{
    *out = NULL;
    *count = 0;
    VkPhysicalDevice *pd = NULL;
    uint32_t n;
    for (;;) {
        n = 0;
        VkResult r = vkEnumeratePhysicalDevices(instance, &n, NULL);
        if (r != VK_SUCCESS || n == 0)
            return r;
        pd = salvo_mem_alloc(alloc, n * sizeof *pd);
        if (!pd)
            return VK_ERROR_OUT_OF_HOST_MEMORY;
        r = vkEnumeratePhysicalDevices(instance, &n, pd);
        if (r == VK_SUCCESS)
            break;
        salvo_mem_free(alloc, pd);
        if (r != VK_INCOMPLETE)
            return r;
    }
    uint32_t kept = 0;
    for (uint32_t i = 0; i < n; i++)
        if (compute_family(pd[i]) != UINT32_MAX)
            pd[kept++] = pd[i];
    *out = pd;
    *count = kept;
    return VK_SUCCESS;
}

static salvo_device_type device_type(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return SALVO_DEVICE_TYPE_INTEGRATED;
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return SALVO_DEVICE_TYPE_DISCRETE;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return SALVO_DEVICE_TYPE_VIRTUAL;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return SALVO_DEVICE_TYPE_CPU;
    default: return SALVO_DEVICE_TYPE_OTHER;
    }
}

static void copy_name(char dst[SALVO_NAME_MAX], const char *src, size_t src_max)
{
    size_t n = strnlen(src, src_max < SALVO_NAME_MAX ? src_max : SALVO_NAME_MAX - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static accel_result vk_enumerate(void *self_, salvo_device_entry *entries, uint32_t *count)
{
    vk_self *self = self_;
    VkResult r = volk_ready();
    if (r != VK_SUCCESS)
        return r;
    VkInstance instance;
    uint32_t api;
    r = instance_create(self->alloc, NULL, NULL, &instance, &api);
    if (r != VK_SUCCESS)
        return r;

    pthread_mutex_lock(&instance_lock);
    volkLoadInstanceOnly(instance);
    VkPhysicalDevice *pd;
    uint32_t n;
    r = compute_devices(self->alloc, instance, &pd, &n);
    if (r == VK_SUCCESS && entries) {
        if (n > *count)
            n = *count;
        for (uint32_t i = 0; i < n; i++) {
            VkPhysicalDeviceProperties p;
            vkGetPhysicalDeviceProperties(pd[i], &p);
            copy_name(entries[i].name, p.deviceName, sizeof p.deviceName);
            entries[i].type = device_type(p.deviceType);
            entries[i].vendor_id = p.vendorID;
            entries[i].device_id = p.deviceID;
            entries[i].api_version = p.apiVersion;
        }
    }
    if (r == VK_SUCCESS)
        *count = n;
    salvo_mem_free(self->alloc, pd);
    vkDestroyInstance(instance, NULL);
    pthread_mutex_unlock(&instance_lock);
    return r;
}

/* ------------------------------------------------------------------ */
/* Device                                                              */
/* ------------------------------------------------------------------ */

/* Tears down whatever part of a device exists: both close and a failed
 * open end here. */
static void device_release(accel_device *d)
{
    if (d->pipeline_cache)
        d->vk.vkDestroyPipelineCache(d->device, d->pipeline_cache, NULL);
    salvo_mem_free(d->alloc, d->cache_path);
    if (d->device && !d->imported)
        d->vk.vkDestroyDevice(d->device, NULL);
    if (d->messenger)
        d->destroy_messenger(d->instance, d->messenger, NULL);
    if (d->instance && !d->imported)
        d->destroy_instance(d->instance, NULL);
    salvo_mem_free(d->alloc, d);
}

static void fill_info(salvo_device_info *info, const accel_device *d,
                      const VkPhysicalDeviceProperties *p,
                      const VkPhysicalDeviceSubgroupProperties *subgroup,
                      const VkPhysicalDeviceDriverProperties *driver)
{
    const VkPhysicalDeviceLimits *l = &p->limits;
    copy_name(info->name, p->deviceName, sizeof p->deviceName);
    info->type = device_type(p->deviceType);
    info->vendor_id = p->vendorID;
    info->device_id = p->deviceID;
    info->api_version = d->api_version;
    info->driver_version = p->driverVersion;
    if (driver) {
        copy_name(info->driver_name, driver->driverName, sizeof driver->driverName);
        copy_name(info->driver_info, driver->driverInfo, sizeof driver->driverInfo);
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

/* Creates salvo's own VkDevice on d->phys with one queue of
 * d->queue_family and what salvo uses of the device's extensions; loads
 * its table. Call with instance_lock held and volk loaded for d->instance. */
static VkResult device_make(accel_device *d, bool push_descriptor, bool host_import,
                            bool portability, bool core12)
{
    const char *names[4];
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

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = d->queue_family,
        .queueCount = 1,
        .pQueuePriorities = &priority,
    };
    VkPhysicalDeviceTimelineSemaphoreFeatures enable_timeline = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES,
        .timelineSemaphore = VK_TRUE,
    };
    VkDeviceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pNext = d->timeline ? &enable_timeline : NULL,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = &queue,
        .enabledExtensionCount = name_count,
        .ppEnabledExtensionNames = names,
    };
    VkDevice device;
    /* pAllocator NULL: the driver allocates for itself (see instance_create). */
    VkResult r = vkCreateDevice(d->phys, &ci, NULL, &device);
    if (r != VK_SUCCESS)
        return r;
    d->device = device;
    /* volk resolves through the global vkGetDeviceProcAddr: still ours here. */
    volkLoadDeviceTable(&d->vk, d->device);
    d->vk.vkGetDeviceQueue(d->device, d->queue_family, 0, &d->queue);
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
    VkResult r = extensions_get(d->alloc, d->phys, NULL, &ext, &ext_count);
    if (r != VK_SUCCESS)
        return r;
    /* What the device offers; of the application's device, only what it
     * enabled. (Physical-device queries need the extension offered only.) */
    bool push_descriptor = has_extension(ext, ext_count, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
    bool host_import = has_extension(ext, ext_count, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
    bool portability = has_extension(ext, ext_count, "VK_KHR_portability_subset");
    bool timeline_ext = has_extension(ext, ext_count, VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME);
    bool driver_ext = has_extension(ext, ext_count, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
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
    props.pNext = &subgroup;
    void **tail = &subgroup.pNext;
    bool have_driver = core12 || driver_ext;
    if (have_driver) {
        *tail = &driver;
        tail = &driver.pNext;
    }
    if (host_props)
        *tail = &host;
    vkGetPhysicalDeviceProperties2(d->phys, &props);

    /* The 1.2 struct name serves both the core feature and the extension. */
    VkPhysicalDeviceTimelineSemaphoreFeatures timeline = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES};
    if (core12 || timeline_ext) {
        VkPhysicalDeviceFeatures2 features = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                              .pNext = &timeline};
        vkGetPhysicalDeviceFeatures2(d->phys, &features);
    }
    d->timeline = timeline.timelineSemaphore == VK_TRUE && (!imp || imp->timeline_semaphores);
    vkGetPhysicalDeviceMemoryProperties(d->phys, &d->mem);
    if (imp) {
        d->device = imp->device;
        d->queue = imp->queue;
        volkLoadDeviceTable(&d->vk, d->device);
    } else {
        r = device_make(d, push_descriptor, host_import, portability, core12);
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
    d->host_import = host_import;
    /* Timestamps are a property of the queue family, not the device. */
    VkQueueFamilyProperties fam[64];
    uint32_t fam_count = 64;
    vkGetPhysicalDeviceQueueFamilyProperties(d->phys, &fam_count, fam);
    d->timestamp_bits = d->queue_family < fam_count ? fam[d->queue_family].timestampValidBits : 0;
    d->vendor_id = props.properties.vendorID;
    d->device_id = props.properties.deviceID;
    memcpy(d->cache_uuid, props.properties.pipelineCacheUUID, VK_UUID_SIZE);

    memset(caps, 0, sizeof *caps);
    fill_info(&caps->info, d, &props.properties, &subgroup, have_driver ? &driver : NULL);
    caps->info.push_descriptors = push_descriptor;
    /* A push per dispatch skips allocating and updating a set. */
    d->push = push_descriptor && !d->pool_descriptors;
    caps->push_descriptors_used = d->push;
    caps->info.host_import_alignment = host_import ? host.minImportedHostPointerAlignment : 0;
    caps->timestamps = d->timestamp_bits > 0;
    caps->timestamp_period_ns = props.properties.limits.timestampPeriod;
    caps->timestamp_valid_bits = d->timestamp_bits;
    return VK_SUCCESS;
}

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

/* The core picks transfer paths by whether DEVICE memory maps; ask with a
 * throwaway buffer since memoryTypeBits depend on the buffer's usage. */
static VkResult device_memory_host_visible(accel_device *d, bool *out)
{
    VkBufferCreateInfo bi = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = 256,
        .usage = BUFFER_USAGE,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
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

/* ------------------------------------------------------------------ */
/* Pipeline cache persisted in a file                                  */
/* ------------------------------------------------------------------ */

/* Whether blob is a cache this device wrote (VkPipelineCacheHeaderVersionOne:
 * same vendor, device and pipelineCacheUUID, which changes with the driver
 * build). Drivers check the same, but a blob that fails here is never
 * handed to them. */
static bool cache_blob_ours(const accel_device *d, const void *blob, size_t size)
{
    VkPipelineCacheHeaderVersionOne h;
    if (size < sizeof h)
        return false;
    memcpy(&h, blob, sizeof h);
    return h.headerSize >= sizeof h && h.headerSize <= size &&
           h.headerVersion == VK_PIPELINE_CACHE_HEADER_VERSION_ONE &&
           h.vendorID == d->vendor_id && h.deviceID == d->device_id &&
           memcmp(h.pipelineCacheUUID, d->cache_uuid, VK_UUID_SIZE) == 0;
}

/* Create the device's pipeline cache, seeded from path when that holds a
 * cache of this device. Never fails the open: whatever goes wrong, the
 * device runs with an empty cache, or with none. */
static void pipeline_cache_open(accel_device *d, const char *path)
{
    d->cache_path = salvo_mem_strdup(d->alloc, path);
    if (!d->cache_path) {
        SALVO_LOG(&d->log, SALVO_LOG_WARNING, "pipeline cache: out of host memory; none used");
        return;
    }
    void *blob = NULL;
    size_t size = 0;
    char reason[256 + SALVO_NAME_MAX];
    cache_file_status fs = cache_file_read(d->alloc, path, &blob, &size, reason, sizeof reason);
    if (fs == CACHE_FILE_MISSING)
        SALVO_LOG(&d->log, SALVO_LOG_INFO, "pipeline cache: no file '%s' yet; starting empty",
                  path);
    else if (fs != CACHE_FILE_OK)
        SALVO_LOG(&d->log, SALVO_LOG_WARNING, "pipeline cache: %s; starting empty", reason);
    else if (!cache_blob_ours(d, blob, size)) {
        SALVO_LOG(&d->log, SALVO_LOG_INFO,
                  "pipeline cache: '%s' was written for another device or driver; starting "
                  "empty",
                  path);
        salvo_mem_free(d->alloc, blob);
        blob = NULL;
        size = 0;
    }
    VkPipelineCacheCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
        .initialDataSize = size,
        .pInitialData = blob,
    };
    VkPipelineCache cache;
    VkResult r = d->vk.vkCreatePipelineCache(d->device, &ci, NULL, &cache);
    if (r != VK_SUCCESS && blob) {
        /* The driver refused the data it would otherwise ignore: start over. */
        SALVO_LOG(&d->log, SALVO_LOG_WARNING,
                  "pipeline cache: the driver refused the data from '%s' (%s); starting empty",
                  path, accel_result_name(r));
        ci.initialDataSize = 0;
        ci.pInitialData = NULL;
        r = d->vk.vkCreatePipelineCache(d->device, &ci, NULL, &cache);
    } else if (r == VK_SUCCESS && blob) {
        SALVO_LOG(&d->log, SALVO_LOG_INFO, "pipeline cache: %zu bytes loaded from '%s'", size,
                  path);
    }
    salvo_mem_free(d->alloc, blob);
    if (r != VK_SUCCESS) {
        SALVO_LOG(&d->log, SALVO_LOG_WARNING, "pipeline cache: cannot create one (%s); none used",
                  accel_result_name(r));
        return;
    }
    d->pipeline_cache = cache;
}

/* Write the cache back to its file. Failures are logged: a cache not
 * saved costs the next run time, nothing else. This is the one host
 * allocation on a destroy path (the cache's data and the temporary file's
 * name, whose sizes are only known now), and only with a cache file: when
 * it is refused the file is not written, and the destroy goes on. */
static void pipeline_cache_store(accel_device *d)
{
    if (!d->pipeline_cache || !d->cache_path)
        return;
    /* The size can grow between the two calls (another thread's pipeline):
     * VK_INCOMPLETE then, and another try. */
    for (int attempt = 0; attempt < 4; attempt++) {
        size_t size = 0;
        VkResult r = d->vk.vkGetPipelineCacheData(d->device, d->pipeline_cache, &size, NULL);
        if (r != VK_SUCCESS || size == 0) {
            SALVO_LOG(&d->log, SALVO_LOG_WARNING, "pipeline cache: no data to write (%s)",
                      accel_result_name(r));
            return;
        }
        void *blob = salvo_mem_alloc(d->alloc, size);
        if (!blob) {
            SALVO_LOG(&d->log, SALVO_LOG_WARNING,
                      "pipeline cache: out of host memory; '%s' not written", d->cache_path);
            return;
        }
        r = d->vk.vkGetPipelineCacheData(d->device, d->pipeline_cache, &size, blob);
        if (r == VK_SUCCESS) {
            char reason[256 + SALVO_NAME_MAX];
            if (cache_file_write(d->alloc, d->cache_path, blob, size, reason, sizeof reason))
                SALVO_LOG(&d->log, SALVO_LOG_INFO, "pipeline cache: %zu bytes written to '%s'",
                          size, d->cache_path);
            else
                SALVO_LOG(&d->log, SALVO_LOG_WARNING, "pipeline cache: %s", reason);
        }
        salvo_mem_free(d->alloc, blob);
        if (r != VK_INCOMPLETE) {
            if (r != VK_SUCCESS)
                SALVO_LOG(&d->log, SALVO_LOG_WARNING, "pipeline cache: cannot read it back (%s)",
                          accel_result_name(r));
            return;
        }
    }
}

/* salvo's own instance, and the device opt->index of it. */
static VkResult open_own(vk_self *self, const accel_open_options *opt, accel_device *d,
                         accel_caps *caps)
{
    VkResult r = instance_create(self->alloc, opt, d, &d->instance, &d->api_version);
    if (r == VK_ERROR_LAYER_NOT_PRESENT)
        refuse(d, opt, "validation requested but %s is not installed", VALIDATION_LAYER);
    if (r != VK_SUCCESS)
        return r;

    pthread_mutex_lock(&instance_lock);
    volkLoadInstanceOnly(d->instance);
    d->destroy_instance = vkDestroyInstance;
    d->destroy_messenger = vkDestroyDebugUtilsMessengerEXT;
    d->get_instance_proc_addr = vkGetInstanceProcAddr;
    if (opt->validation || opt->sync_validation) {
        VkDebugUtilsMessengerCreateInfoEXT mi = messenger_info(d);
        VkDebugUtilsMessengerEXT messenger;
        r = vkCreateDebugUtilsMessengerEXT(d->instance, &mi, NULL, &messenger);
        if (r == VK_SUCCESS)
            d->messenger = messenger;
    }
    VkPhysicalDevice *pd = NULL;
    uint32_t n = 0;
    if (r == VK_SUCCESS)
        r = compute_devices(d->alloc, d->instance, &pd, &n);
    if (r == VK_SUCCESS && opt->index >= n) {
        refuse(d, opt, "device index %u out of range (%u devices)", opt->index, n);
        r = VK_ERROR_INITIALIZATION_FAILED;
    }
    if (r == VK_SUCCESS) {
        d->phys = pd[opt->index];
        d->queue_family = compute_family(d->phys);
        r = device_create(d, opt, caps);
    }
    salvo_mem_free(d->alloc, pd);
    pthread_mutex_unlock(&instance_lock);
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

    pthread_mutex_lock(&instance_lock);
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
            VkDebugUtilsMessengerCreateInfoEXT mi = messenger_info(d);
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
    pthread_mutex_unlock(&instance_lock);
    return r;
}

static accel_result vk_device_open(void *self_, const accel_open_options *opt, accel_device **out,
                                   accel_caps *caps)
{
    vk_self *self = self_;
    *out = NULL;
    const salvo_vk_device_import *imp = opt->import;
    /* An application's own vkGetInstanceProcAddr needs no loader of ours. */
    VkResult r = volk_ready();
    if (r != VK_SUCCESS && !(imp && imp->get_instance_proc_addr))
        return r;
    accel_device *d = salvo_mem_calloc(self->alloc, 1, sizeof *d);
    if (!d)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    d->alloc = self->alloc;
    d->log = (salvo_log_sink){opt->log, opt->log_user};
    d->pool_descriptors = opt->pool_descriptors;

    r = imp ? open_imported(opt, d, caps) : open_own(self, opt, d, caps);
    if (r == VK_SUCCESS)
        r = device_memory_host_visible(d, &caps->device_memory_host_visible);
    if (r != VK_SUCCESS) {
        device_release(d);
        return r;
    }
    /* File I/O outside instance_lock: other devices may open meanwhile. */
    if (opt->pipeline_cache_path)
        pipeline_cache_open(d, opt->pipeline_cache_path);
    *out = d;
    return ACCEL_SUCCESS;
}

static void vk_device_close(void *self, accel_device *d)
{
    (void)self;
    if (!d)
        return;
    pipeline_cache_store(d);
    device_release(d);
}

/* The application's lock on a queue it shares with salvo (see
 * salvo_vk_device_import.queue_lock), around salvo's submits and idle waits. */
static void queue_lock(accel_device *d)
{
    if (d->queue_lock)
        d->queue_lock(d->queue_lock_user);
}

static void queue_unlock(accel_device *d)
{
    if (d->queue_unlock)
        d->queue_unlock(d->queue_lock_user);
}

static accel_result vk_queue_wait_idle(void *self, accel_device *d)
{
    (void)self;
    queue_lock(d);
    VkResult r = d->vk.vkQueueWaitIdle(d->queue);
    queue_unlock(d);
    return r;
}

/* ------------------------------------------------------------------ */
/* Buffers                                                             */
/* ------------------------------------------------------------------ */

static void vk_buffer_destroy(void *self, accel_device *d, accel_buffer *b)
{
    (void)self;
    if (!b)
        return;
    d->vk.vkDestroyBuffer(d->device, b->buffer, NULL);
    d->vk.vkFreeMemory(d->device, b->memory, NULL); /* also unmaps */
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
        VkMemoryAllocateInfo ai = {
            .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
            .allocationSize = req.size,
            .memoryTypeIndex = type,
        };
        VkDeviceMemory memory;
        r = d->vk.vkAllocateMemory(d->device, &ai, NULL, &memory);
        if (r == VK_SUCCESS)
            b->memory = memory;
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
    VkMemoryAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .pNext = &import,
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

static accel_result vk_buffer_create(void *self, accel_device *d, const accel_buffer_desc *desc,
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
    VkBufferCreateInfo bi = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .pNext = desc->import_host ? &external : NULL,
        .size = desc->size,
        .usage = BUFFER_USAGE,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    VkBuffer buffer;
    VkResult r = d->vk.vkCreateBuffer(d->device, &bi, NULL, &buffer);
    if (r == VK_SUCCESS) {
        b->buffer = buffer;
        r = desc->import_host ? memory_import(d, b, desc, info)
                              : memory_allocate(d, b, desc->domain, info);
    }
    if (r == VK_SUCCESS)
        r = d->vk.vkBindBufferMemory(d->device, b->buffer, b->memory, 0);
    if (r != VK_SUCCESS) {
        vk_buffer_destroy(self, d, b);
        memset(info, 0, sizeof *info);
        return r;
    }
    *out = b;
    return ACCEL_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Pipelines and descriptor pools                                      */
/* ------------------------------------------------------------------ */

static void vk_pipeline_destroy(void *self, accel_device *d, accel_pipeline *p)
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
    for (uint32_t i = 0; i < desc->binding_count; i++) {
        bindings[i] = (VkDescriptorSetLayoutBinding){
            .binding = desc->bindings[i].binding,
            .descriptorType = desc->bindings[i].uniform ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
                                                        : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .descriptorCount = 1,
            .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        };
    }
    p->push = d->push && desc->binding_count > 0;
    VkDescriptorSetLayoutCreateInfo si = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .flags = p->push ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR : 0,
        .bindingCount = desc->binding_count,
        .pBindings = bindings,
    };
    VkDescriptorSetLayout set_layout;
    VkResult r = d->vk.vkCreateDescriptorSetLayout(d->device, &si, NULL, &set_layout);
    if (r != VK_SUCCESS)
        return r;
    p->set_layout = set_layout;
    VkPushConstantRange push = {
        .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        .size = desc->push_constant_size,
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
    if (n > 0) {
        entries = salvo_mem_alloc(d->alloc, n * sizeof *entries);
        if (!entries)
            return VK_ERROR_OUT_OF_HOST_MEMORY;
    }
    /* The constants array itself is the data block: each value is read in
     * place, so nothing needs copying. */
    for (uint32_t i = 0; i < n; i++) {
        entries[i] = (VkSpecializationMapEntry){
            .constantID = desc->spec_constants[i].id,
            .offset = (uint32_t)(i * sizeof(salvo_spec_constant) + offsetof(salvo_spec_constant, value)),
            .size = 4,
        };
    }
    VkSpecializationInfo spec = {
        .mapEntryCount = n,
        .pMapEntries = entries,
        .dataSize = n * sizeof(salvo_spec_constant),
        .pData = desc->spec_constants,
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
        /* The pipeline holds all it needs; keeping modules only costs memory. */
        d->vk.vkDestroyShaderModule(d->device, module, NULL);
    }
    salvo_mem_free(d->alloc, entries);
    return r;
}

static accel_result vk_pipeline_create(void *self, accel_device *d, const accel_pipeline_desc *desc,
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
        vk_pipeline_destroy(self, d, p);
        return r;
    }
    *out = p;
    return ACCEL_SUCCESS;
}

static accel_result vk_descpool_create(void *self, accel_device *d, uint32_t max_sets,
                                       uint32_t bindings_per_set, accel_descpool **out)
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
    VkDescriptorPoolSize sizes[2] = {
        {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, (uint32_t)per_type},
        {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, (uint32_t)per_type},
    };
    VkDescriptorPoolCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
        .maxSets = max_sets > 0 ? max_sets : 1,
        .poolSizeCount = 2,
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

static accel_result vk_descpool_reset(void *self, accel_device *d, accel_descpool *pool)
{
    (void)self;
    return d->vk.vkResetDescriptorPool(d->device, pool->pool, 0);
}

static void vk_descpool_destroy(void *self, accel_device *d, accel_descpool *pool)
{
    (void)self;
    if (!pool)
        return;
    d->vk.vkDestroyDescriptorPool(d->device, pool->pool, NULL);
    salvo_mem_free(d->alloc, pool);
}

/* ------------------------------------------------------------------ */
/* Command buffers                                                     */
/* ------------------------------------------------------------------ */

static void vk_cmd_destroy(void *self, accel_device *d, accel_cmd *c)
{
    (void)self;
    if (!c)
        return;
    d->vk.vkDestroyCommandPool(d->device, c->pool, NULL); /* frees the buffer too */
    salvo_mem_free(d->alloc, c);
}

static accel_result vk_cmd_create(void *self, accel_device *d, accel_cmd **out)
{
    *out = NULL;
    accel_cmd *c = salvo_mem_calloc(d->alloc, 1, sizeof *c);
    if (!c)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    /* A pool per command buffer lets streams record on different threads
     * without sharing a pool (pools are externally synchronised). */
    VkCommandPoolCreateInfo pi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
        .queueFamilyIndex = d->queue_family,
    };
    VkCommandPool pool;
    VkResult r = d->vk.vkCreateCommandPool(d->device, &pi, NULL, &pool);
    if (r == VK_SUCCESS) {
        c->pool = pool;
        VkCommandBufferAllocateInfo ai = {
            .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
            .commandPool = c->pool,
            .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
            .commandBufferCount = 1,
        };
        r = d->vk.vkAllocateCommandBuffers(d->device, &ai, &c->cb);
    }
    if (r != VK_SUCCESS) {
        vk_cmd_destroy(self, d, c);
        return r;
    }
    *out = c;
    return ACCEL_SUCCESS;
}

static accel_result vk_cmd_begin(void *self, accel_device *d, accel_cmd *c)
{
    (void)self;
    VkCommandBufferBeginInfo bi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    cmd_state_forget(c);
    return d->vk.vkBeginCommandBuffer(c->cb, &bi);
}

static accel_result vk_cmd_end(void *self, accel_device *d, accel_cmd *c)
{
    (void)self;
    return d->vk.vkEndCommandBuffer(c->cb);
}

static accel_result vk_cmd_reset(void *self, accel_device *d, accel_cmd *c)
{
    (void)self;
    cmd_state_forget(c);
    return d->vk.vkResetCommandBuffer(c->cb, 0);
}

static accel_result vk_cmd_dispatch(void *self, accel_device *d, accel_cmd *c, accel_pipeline *p,
                                    accel_descpool *pool, const accel_bind *binds,
                                    uint32_t bind_count, const uint32_t groups[3], const void *push,
                                    uint32_t push_size)
{
    (void)self;
    if (bind_count > SALVO_MAX_BINDINGS)
        return VK_ERROR_INITIALIZATION_FAILED;
    /* Dispatch is the hot path: no heap. */
    VkDescriptorBufferInfo infos[SALVO_MAX_BINDINGS];
    VkWriteDescriptorSet writes[SALVO_MAX_BINDINGS];
    for (uint32_t i = 0; i < bind_count; i++) {
        infos[i] = (VkDescriptorBufferInfo){
            .buffer = binds[i].buffer->buffer,
            .offset = binds[i].offset,
            .range = binds[i].size ? binds[i].size : VK_WHOLE_SIZE,
        };
        writes[i] = (VkWriteDescriptorSet){
            .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
            .dstBinding = binds[i].binding,
            .descriptorCount = 1,
            .descriptorType = binds[i].uniform ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
                                               : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .pBufferInfo = &infos[i],
        };
    }
    VkDescriptorSet set = VK_NULL_HANDLE;
    if (p->binding_count > 0 && !p->push) {
        VkDescriptorSetAllocateInfo ai = {
            .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
            .descriptorPool = pool->pool,
            .descriptorSetCount = 1,
            .pSetLayouts = &p->set_layout,
        };
        VkResult r = d->vk.vkAllocateDescriptorSets(d->device, &ai, &set);
        /* Both mean "this pool is spent": the core moves to a fresh one. */
        if (r == VK_ERROR_OUT_OF_POOL_MEMORY || r == VK_ERROR_FRAGMENTED_POOL)
            return ACCEL_ERROR_OUT_OF_POOL_MEMORY;
        if (r != VK_SUCCESS)
            return r;
        for (uint32_t i = 0; i < bind_count; i++)
            writes[i].dstSet = set;
        d->vk.vkUpdateDescriptorSets(d->device, bind_count, writes, 0, NULL);
    }
    if (c->bound != p->pipeline) {
        d->vk.vkCmdBindPipeline(c->cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipeline);
        c->bound = p->pipeline;
    }
    if (c->state_layout != p->layout) {
        c->state_layout = p->layout;
        c->pushed_count = UINT32_MAX;
        c->constants_size = UINT32_MAX;
    }
    if (set != VK_NULL_HANDLE) {
        d->vk.vkCmdBindDescriptorSets(c->cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0, 1, &set,
                                      0, NULL);
    } else if (p->push &&
               !(c->pushed_count == bind_count && same_binds(c->pushed, binds, bind_count))) {
        d->vk.vkCmdPushDescriptorSetKHR(c->cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0,
                                        bind_count, writes);
        memcpy(c->pushed, binds, bind_count * sizeof *binds);
        c->pushed_count = bind_count;
    }
    if (push_size > 0 &&
        !(c->constants_size == push_size && memcmp(c->constants, push, push_size) == 0)) {
        d->vk.vkCmdPushConstants(c->cb, p->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size, push);
        bool fits = push_size <= sizeof c->constants;
        if (fits)
            memcpy(c->constants, push, push_size);
        c->constants_size = fits ? push_size : UINT32_MAX;
    }
    d->vk.vkCmdDispatch(c->cb, groups[0], groups[1], groups[2]);
    return ACCEL_SUCCESS;
}

static const struct {
    VkPipelineStageFlags src_stage, dst_stage;
    VkAccessFlags src_access, dst_access;
} barriers[] = {
    [ACCEL_BARRIER_COMPUTE_COMPUTE] = {VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                       VK_ACCESS_SHADER_WRITE_BIT,
                                       VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT},
    [ACCEL_BARRIER_WORK] = {VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                            VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT},
    [ACCEL_BARRIER_TRANSFER_COMPUTE] = {VK_PIPELINE_STAGE_TRANSFER_BIT,
                                        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                        VK_ACCESS_TRANSFER_WRITE_BIT,
                                        VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT},
    [ACCEL_BARRIER_COMPUTE_TRANSFER] = {VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                        VK_PIPELINE_STAGE_TRANSFER_BIT,
                                        VK_ACCESS_SHADER_WRITE_BIT,
                                        VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT},
    [ACCEL_BARRIER_ALL_HOST] = {VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                                VK_PIPELINE_STAGE_HOST_BIT,
                                VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                                VK_ACCESS_HOST_READ_BIT},
};

static void vk_cmd_barrier(void *self, accel_device *d, accel_cmd *c, accel_barrier kind)
{
    (void)self;
    VkMemoryBarrier mb = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = barriers[kind].src_access,
        .dstAccessMask = barriers[kind].dst_access,
    };
    d->vk.vkCmdPipelineBarrier(c->cb, barriers[kind].src_stage, barriers[kind].dst_stage, 0, 1, &mb,
                               0, NULL, 0, NULL);
}

static void vk_cmd_copy(void *self, accel_device *d, accel_cmd *c, accel_buffer *src,
                        uint64_t src_offset, accel_buffer *dst, uint64_t dst_offset, uint64_t size)
{
    (void)self;
    VkBufferCopy region = {.srcOffset = src_offset, .dstOffset = dst_offset, .size = size};
    d->vk.vkCmdCopyBuffer(c->cb, src->buffer, dst->buffer, 1, &region);
}

/* ------------------------------------------------------------------ */
/* Fences, submission, timelines                                       */
/* ------------------------------------------------------------------ */

static accel_result vk_fence_create(void *self, accel_device *d, accel_fence **out)
{
    (void)self;
    *out = NULL;
    accel_fence *f = salvo_mem_calloc(d->alloc, 1, sizeof *f);
    if (!f)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    VkFenceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkResult r = d->vk.vkCreateFence(d->device, &ci, NULL, &f->fence);
    if (r != VK_SUCCESS) {
        salvo_mem_free(d->alloc, f);
        return r;
    }
    *out = f;
    return ACCEL_SUCCESS;
}

static void vk_fence_destroy(void *self, accel_device *d, accel_fence *f)
{
    (void)self;
    if (!f)
        return;
    d->vk.vkDestroyFence(d->device, f->fence, NULL);
    salvo_mem_free(d->alloc, f);
}

static accel_result vk_fence_reset(void *self, accel_device *d, accel_fence *f)
{
    (void)self;
    return d->vk.vkResetFences(d->device, 1, &f->fence);
}

static accel_result vk_fence_status(void *self, accel_device *d, accel_fence *f)
{
    (void)self;
    return d->vk.vkGetFenceStatus(d->device, f->fence);
}

static accel_result vk_fence_wait(void *self, accel_device *d, accel_fence *f, uint64_t timeout_ns)
{
    (void)self;
    return d->vk.vkWaitForFences(d->device, 1, &f->fence, VK_TRUE, timeout_ns);
}

/* At least the core's bound, SLOT_MAX_WAITS (16) waits plus one signal,
 * so that submitting a batch never allocates: device destroy submits the
 * batches still open, and a destroy must not need memory. */
enum { SUBMIT_STACK_OPS = 32 };

static accel_result vk_submit(void *self, accel_device *d, const accel_submit_desc *desc)
{
    (void)self;
    size_t waits = desc->wait_count, n = waits + desc->signal_count;
    /* Submits are per batch, but the common few semaphores fit the stack. */
    uint64_t value_buf[SUBMIT_STACK_OPS];
    VkSemaphore sem_buf[SUBMIT_STACK_OPS];
    VkPipelineStageFlags stage_buf[SUBMIT_STACK_OPS];
    uint64_t *values = value_buf;
    VkSemaphore *sems = sem_buf;
    VkPipelineStageFlags *stages = stage_buf;
    void *heap = NULL;
    if (n > SUBMIT_STACK_OPS) {
        heap = salvo_mem_alloc(d->alloc, n * (sizeof *values + sizeof *sems + sizeof *stages));
        if (!heap)
            return VK_ERROR_OUT_OF_HOST_MEMORY;
        values = heap;
        sems = (VkSemaphore *)(values + n);
        stages = (VkPipelineStageFlags *)(sems + n);
    }
    for (size_t i = 0; i < waits; i++) {
        sems[i] = desc->waits[i].timeline->semaphore;
        values[i] = desc->waits[i].value;
        stages[i] = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    }
    for (size_t i = 0; i < desc->signal_count; i++) {
        sems[waits + i] = desc->signals[i].timeline->semaphore;
        values[waits + i] = desc->signals[i].value;
    }
    VkTimelineSemaphoreSubmitInfo timeline = {
        .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
        .waitSemaphoreValueCount = desc->wait_count,
        .pWaitSemaphoreValues = values,
        .signalSemaphoreValueCount = desc->signal_count,
        .pSignalSemaphoreValues = values + waits,
    };
    VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .pNext = n > 0 ? &timeline : NULL,
        .waitSemaphoreCount = desc->wait_count,
        .pWaitSemaphores = sems,
        .pWaitDstStageMask = stages,
        .commandBufferCount = desc->cmd ? 1 : 0,
        .pCommandBuffers = desc->cmd ? &desc->cmd->cb : NULL,
        .signalSemaphoreCount = desc->signal_count,
        .pSignalSemaphores = sems + waits,
    };
    queue_lock(d);
    VkResult r = d->vk.vkQueueSubmit(d->queue, 1, &si,
                                     desc->fence ? desc->fence->fence : VK_NULL_HANDLE);
    queue_unlock(d);
    salvo_mem_free(d->alloc, heap);
    return r;
}

static accel_result vk_timeline_create(void *self, accel_device *d, uint64_t initial,
                                       accel_timeline **out)
{
    (void)self;
    *out = NULL;
    if (!d->timeline)
        return VK_ERROR_FEATURE_NOT_PRESENT;
    accel_timeline *t = salvo_mem_calloc(d->alloc, 1, sizeof *t);
    if (!t)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    VkSemaphoreTypeCreateInfo type = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
        .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
        .initialValue = initial,
    };
    VkSemaphoreCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type};
    VkResult r = d->vk.vkCreateSemaphore(d->device, &ci, NULL, &t->semaphore);
    if (r != VK_SUCCESS) {
        salvo_mem_free(d->alloc, t);
        return r;
    }
    *out = t;
    return ACCEL_SUCCESS;
}

static void vk_timeline_destroy(void *self, accel_device *d, accel_timeline *t)
{
    (void)self;
    if (!t)
        return;
    d->vk.vkDestroySemaphore(d->device, t->semaphore, NULL);
    salvo_mem_free(d->alloc, t);
}

static accel_result vk_timeline_signal(void *self, accel_device *d, accel_timeline *t,
                                       uint64_t value)
{
    (void)self;
    VkSemaphoreSignalInfo si = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO,
        .semaphore = t->semaphore,
        .value = value,
    };
    return d->signal_semaphore(d->device, &si);
}

static accel_result vk_timeline_value(void *self, accel_device *d, accel_timeline *t,
                                      uint64_t *value)
{
    (void)self;
    return d->semaphore_value(d->device, t->semaphore, value);
}

static accel_result vk_timeline_wait(void *self, accel_device *d, accel_timeline *t,
                                     uint64_t value, uint64_t timeout_ns)
{
    (void)self;
    VkSemaphoreWaitInfo wi = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
        .semaphoreCount = 1,
        .pSemaphores = &t->semaphore,
        .pValues = &value,
    };
    return d->wait_semaphores(d->device, &wi, timeout_ns);
}

/* ------------------------------------------------------------------ */
/* Timestamp queries (traces)                                          */
/* ------------------------------------------------------------------ */

static accel_result vk_querypool_create(void *self, accel_device *d, uint32_t count,
                                        accel_querypool **out)
{
    (void)self;
    *out = NULL;
    if (!d->timestamp_bits)
        return VK_ERROR_FEATURE_NOT_PRESENT;
    accel_querypool *q = salvo_mem_calloc(d->alloc, 1, sizeof *q);
    if (!q)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    VkQueryPoolCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
        .queryType = VK_QUERY_TYPE_TIMESTAMP,
        .queryCount = count,
    };
    VkResult r = d->vk.vkCreateQueryPool(d->device, &ci, NULL, &q->pool);
    if (r != VK_SUCCESS) {
        salvo_mem_free(d->alloc, q);
        return r;
    }
    *out = q;
    return ACCEL_SUCCESS;
}

static void vk_querypool_destroy(void *self, accel_device *d, accel_querypool *q)
{
    (void)self;
    if (!q)
        return;
    d->vk.vkDestroyQueryPool(d->device, q->pool, NULL);
    salvo_mem_free(d->alloc, q);
}

static void vk_cmd_querypool_reset(void *self, accel_device *d, accel_cmd *c, accel_querypool *q,
                                   uint32_t first, uint32_t count)
{
    (void)self;
    d->vk.vkCmdResetQueryPool(c->cb, q->pool, first, count);
}

static void vk_cmd_timestamp(void *self, accel_device *d, accel_cmd *c, accel_querypool *q,
                             uint32_t index, bool end_of_work)
{
    (void)self;
    d->vk.vkCmdWriteTimestamp(c->cb,
                              end_of_work ? VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT
                                          : VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                              q->pool, index);
}

/* Called once the fence of the work that wrote them has signalled, so no
 * WAIT: a query not written (NOT_READY) is a bug of the caller's, not a
 * reason to block. */
static accel_result vk_querypool_results(void *self, accel_device *d, accel_querypool *q,
                                         uint32_t first, uint32_t count, uint64_t *ticks)
{
    (void)self;
    VkResult r = d->vk.vkGetQueryPoolResults(d->device, q->pool, first, count,
                                             (size_t)count * sizeof *ticks, ticks, sizeof *ticks,
                                             VK_QUERY_RESULT_64_BIT);
    if (r != VK_SUCCESS)
        return r;
    /* The bits above timestampValidBits are undefined. */
    if (d->timestamp_bits < 64) {
        uint64_t mask = (1ull << d->timestamp_bits) - 1;
        for (uint32_t i = 0; i < count; i++)
            ticks[i] &= mask;
    }
    return ACCEL_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Interop (salvo_vulkan.h)                                            */
/* ------------------------------------------------------------------ */

/* Every field read here is set once at open (or buffer create) and never
 * changes, so no lock is needed. */
static accel_result vk_native_handles(void *self, accel_device *d, accel_buffer *b,
                                      void *out_struct)
{
    (void)self;
    if (b) {
        *(VkBuffer *)out_struct = b->buffer;
        return ACCEL_SUCCESS;
    }
    *(salvo_vk_handles *)out_struct = (salvo_vk_handles){
        .instance = d->instance,
        .physical_device = d->phys,
        .device = d->device,
        .queue = d->queue,
        .queue_family_index = d->queue_family,
        .api_version = d->api_version,
        .get_instance_proc_addr = d->get_instance_proc_addr,
    };
    return ACCEL_SUCCESS;
}

static void vk_destroy(void *self_)
{
    vk_self *self = self_;
    /* Free through a copy: the allocator lives inside the block being freed. */
    salvo_allocator allocator = self->allocator;
    salvo_mem_free(self->alloc ? &allocator : NULL, self);
}

static const accel_vtable vulkan_vtable = {
    .name = "vulkan",
    .enumerate = vk_enumerate,
    .device_open = vk_device_open,
    .device_close = vk_device_close,
    .queue_wait_idle = vk_queue_wait_idle,
    .buffer_create = vk_buffer_create,
    .buffer_destroy = vk_buffer_destroy,
    .pipeline_create = vk_pipeline_create,
    .pipeline_destroy = vk_pipeline_destroy,
    .descpool_create = vk_descpool_create,
    .descpool_reset = vk_descpool_reset,
    .descpool_destroy = vk_descpool_destroy,
    .cmd_create = vk_cmd_create,
    .cmd_destroy = vk_cmd_destroy,
    .cmd_begin = vk_cmd_begin,
    .cmd_end = vk_cmd_end,
    .cmd_reset = vk_cmd_reset,
    .cmd_dispatch = vk_cmd_dispatch,
    .cmd_barrier = vk_cmd_barrier,
    .cmd_copy = vk_cmd_copy,
    .fence_create = vk_fence_create,
    .fence_destroy = vk_fence_destroy,
    .fence_reset = vk_fence_reset,
    .fence_status = vk_fence_status,
    .fence_wait = vk_fence_wait,
    .submit = vk_submit,
    .timeline_create = vk_timeline_create,
    .timeline_destroy = vk_timeline_destroy,
    .timeline_signal = vk_timeline_signal,
    .timeline_value = vk_timeline_value,
    .timeline_wait = vk_timeline_wait,
    .destroy = vk_destroy,
    .native_handles = vk_native_handles,
    .querypool_create = vk_querypool_create,
    .querypool_destroy = vk_querypool_destroy,
    .cmd_querypool_reset = vk_cmd_querypool_reset,
    .cmd_timestamp = vk_cmd_timestamp,
    .querypool_results = vk_querypool_results,
};

bool accel_vulkan_create(const salvo_allocator *alloc, accel *out)
{
    vk_self *self = salvo_mem_calloc(alloc, 1, sizeof *self);
    if (!self)
        return false;
    if (alloc) {
        self->allocator = *alloc;
        self->alloc = &self->allocator;
    }
    out->vt = &vulkan_vtable;
    out->self = self;
    return true;
}
