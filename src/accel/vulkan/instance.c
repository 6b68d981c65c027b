/*
 * The Vulkan loader and instances: libvulkan loaded once, on first use;
 * instances (with the validation layer and its messenger when asked for);
 * the physical devices salvo can run on, in the order enumerate and
 * device_open share.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>

#include "accel/vulkan/vk_internal.h"
#include "base/env.h"

#include <pthread.h>
#include <string.h>

static pthread_once_t volk_once = PTHREAD_ONCE_INIT;
static VkResult volk_result;
/* Covers volkLoadInstanceOnly and every use of volk's instance-level
 * globals it loads (see vk_internal.h). */
static pthread_mutex_t instance_lock = PTHREAD_MUTEX_INITIALIZER;

static void volk_init_once(void)
{
    volk_result = volkInitialize();
}

/* Loading the loader is deferred to the first real use so that building
 * the table never fails on a machine without Vulkan. */
VkResult accel_vk_loader_ready(void)
{
    pthread_once(&volk_once, volk_init_once);
    return volk_result;
}

void accel_vk_instance_lock(void)
{
    pthread_mutex_lock(&instance_lock);
}

void accel_vk_instance_unlock(void)
{
    pthread_mutex_unlock(&instance_lock);
}

void accel_vulkan_loader_lock(void)
{
    accel_vk_instance_lock();
}

void accel_vulkan_loader_unlock(void)
{
    accel_vk_instance_unlock();
}

/* One bare instance kept for the life of the process [instance_lock].
 * The loader loads the drivers for each instance and unloads them with
 * the last one; the NVIDIA driver (580 on an H200) fails to load again
 * after a few such rounds in one process, so a program that created and
 * destroyed its tenth device found "no Vulkan driver". While this
 * instance lives the drivers stay loaded. Never destroyed: it holds no
 * device, and the process's exit releases it. */
static VkInstance keeper;

void accel_vk_keep_drivers(void)
{
    /* Bare (no layer, no extension), so that it allocates nothing of
     * salvo's: the first device of a process costs what any later one does. */
    accel_vk_instance_lock();
    if (keeper == VK_NULL_HANDLE) {
        VkApplicationInfo app = {
            .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
            .pEngineName = "salvo",
            .apiVersion = VK_API_VERSION_1_1,
        };
        VkInstanceCreateInfo ci = {
            .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
            .pApplicationInfo = &app,
        };
        /* A refusal keeps nothing: the caller's own instance says why. */
        if (vkCreateInstance(&ci, NULL, &keeper) != VK_SUCCESS)
            keeper = VK_NULL_HANDLE;
    }
    accel_vk_instance_unlock();
}

/* Whether a message id names debug printf ("UNASSIGNED-DEBUG-PRINTF";
 * layers have spelt it in several cases). */
static bool printf_id(const char *id_name)
{
    static const char want[] = "printf";
    for (const char *p = id_name; p && *p; p++) {
        size_t i = 0;
        while (want[i] && p[i] && (p[i] | 0x20) == want[i])
            i++;
        if (!want[i])
            return true;
    }
    return false;
}

accel_vk_message_class accel_vk_message_classify(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT types,
                                                 const char *id_name)
{
    const bool loader = id_name && strcmp(id_name, ACCEL_VK_LOADER_MESSAGE_ID) == 0;
    const bool serious = severity & (VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
                                     VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT);
    /* A line a shader printed, sent as a VALIDATION message at INFO: the
     * program's own output, never a finding (the layer's warning that a
     * line was cut short comes under the same id, at WARNING). */
    if (printf_id(id_name))
        return (accel_vk_message_class){
            .printf = true,
            .level = serious ? SALVO_LOG_WARNING : SALVO_LOG_INFO,
            .file = ACCEL_VK_FILE_PRINTF,
        };
    /* A finding is about the use of Vulkan: against the spec (VALIDATION,
     * whoever checked it: the loader sends the invalid usage it catches
     * itself as GENERAL | VALIDATION) or a layer's against its efficient
     * use (PERFORMANCE). A message of GENERAL alone is a notice. */
    const bool finding = (types & VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT) ||
                         (!loader && (types & VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT));
    if (finding && serious)
        return (accel_vk_message_class){
            .validation = true,
            .level = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) ? SALVO_LOG_ERROR
                                                                                 : SALVO_LOG_WARNING,
            .file = ACCEL_VK_FILE_VALIDATION,
        };
    /* A notice: a warning of the loader's (a layer added from the
     * environment, a manifest it skipped) is for whoever sets up the
     * machine, not an error of the program's; the layer's "active"
     * banner and the loader's search trace are detail. */
    return (accel_vk_message_class){
        .validation = false,
        .level = serious ? SALVO_LOG_INFO : SALVO_LOG_DEBUG,
        .file = loader ? ACCEL_VK_FILE_LOADER : ACCEL_VK_FILE_OTHER,
    };
}

static VKAPI_ATTR VkBool32 VKAPI_CALL on_debug_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    const accel_device *d = user;
    accel_vk_message_class c =
        accel_vk_message_classify(severity, types, data ? data->pMessageIdName : NULL);
    if (c.printf) {
        char line[SALVO_ERROR_MAX];
        accel_vk_printf_line(data ? data->pMessage : NULL, line, sizeof line);
        if (d->log.fn)
            d->log.fn(d->log.user, c.level, c.file, 0, line);
        return VK_FALSE;
    }
    if (d->log.fn)
        d->log.fn(d->log.user, c.level, c.file, 0, data && data->pMessage ? data->pMessage : "");
    /* Never make the layer fail the call: the core decides what a message means. */
    return VK_FALSE;
}

VkDebugUtilsMessengerCreateInfoEXT accel_vk_messenger_info(accel_device *d)
{
    return (VkDebugUtilsMessengerCreateInfoEXT){
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        /* Shader printf's lines come at INFO. */
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
                           (d && d->printf ? VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT : 0),
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = on_debug_message,
        .pUserData = d,
    };
}

/* Instance (pd NULL, optionally of one layer) or device extensions. The
 * list can grow between the two calls, hence the retry. */
VkResult accel_vk_extensions_get(const salvo_allocator *alloc, VkPhysicalDevice pd,
                                 const char *layer, VkExtensionProperties **out,
                                 uint32_t *count)
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

bool accel_vk_has_extension(const VkExtensionProperties *p, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(p[i].extensionName, name) == 0)
            return true;
    return false;
}

/* opt NULL: the bare instance enumerate uses. d receives validation
 * messages, including those of instance creation itself. */
VkResult accel_vk_instance_create(const salvo_allocator *alloc, const accel_open_options *opt,
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
    VkResult r = accel_vk_extensions_get(alloc, NULL, NULL, &ext, &ext_count);
    /* Asking for the layer's own extensions doubles as the presence check:
     * VK_ERROR_LAYER_NOT_PRESENT when it is not installed. */
    if (r == VK_SUCCESS && validation)
        r = accel_vk_extensions_get(alloc, NULL, VALIDATION_LAYER, &layer_ext, &layer_ext_count);
    if (r != VK_SUCCESS)
        goto done;

    const char *names[3];
    uint32_t name_count = 0;
    VkInstanceCreateFlags flags = 0;
    /* Without it the loader hides portability drivers (MoltenVK). */
    if (accel_vk_has_extension(ext, ext_count, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
        names[name_count++] = VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME;
        flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
    }

    VkDebugUtilsMessengerCreateInfoEXT messenger = accel_vk_messenger_info(d);
    /* Debug printf (1.3.239 and later) is a feature of the layer's own,
     * turned on as synchronization validation is. */
    bool shader_printf = validation && opt->printf;
    VkValidationFeatureEnableEXT enables[2];
    uint32_t enable_count = 0;
    if (opt && opt->sync_validation)
        enables[enable_count++] = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
    if (shader_printf)
        enables[enable_count++] = VK_VALIDATION_FEATURE_ENABLE_DEBUG_PRINTF_EXT;
    VkValidationFeaturesEXT features = {
        .sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
        .pNext = &messenger,
        .enabledValidationFeatureCount = enable_count,
        .pEnabledValidationFeatures = enables,
    };
    const void *chain = NULL;
    if (validation) {
        const char *want[2] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
        uint32_t want_count = enable_count ? 2 : 1;
        for (uint32_t i = 0; i < want_count; i++) {
            if (!accel_vk_has_extension(ext, ext_count, want[i]) &&
                !accel_vk_has_extension(layer_ext, layer_ext_count, want[i])) {
                r = VK_ERROR_EXTENSION_NOT_PRESENT;
                goto done;
            }
            names[name_count++] = want[i];
        }
        chain = enable_count ? (const void *)&features : (const void *)&messenger;
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
     * VK_ERROR_OUT_OF_HOST_MEMORY becomes SALVO_ERROR_OUT_OF_HOST_MEMORY.
     * Under instance_lock, as every loader call salvo makes that creates or
     * destroys an instance or a device (salvo_vk_loader_lock's promise). */
    accel_vk_instance_lock();
    r = vkCreateInstance(&ci, NULL, &instance);
    accel_vk_instance_unlock();
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
uint32_t accel_vk_compute_family(VkPhysicalDevice pd)
{
    VkQueueFamilyProperties fam[64];
    uint32_t n = 64;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, fam);
    for (uint32_t i = 0; i < n; i++)
        if (fam[i].queueFlags & VK_QUEUE_COMPUTE_BIT)
            return i;
    return UINT32_MAX;
}

uint32_t accel_vk_stream_family(VkPhysicalDevice pd)
{
    VkQueueFamilyProperties fam[64];
    uint32_t n = 64;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, fam);
    /* $SALVO_QUEUE_FAMILY: a family index to measure one against another.
     * One that cannot be used gives the default family; the device, which
     * has a log, says so (api/device_open.c). */
    uint64_t i = 0;
    char why[ENV_WHY_MAX];
    if (env_uint("SALVO_QUEUE_FAMILY", 0, UINT32_MAX, &i, why) == ENV_OK && i < n &&
        (fam[i].queueFlags & VK_QUEUE_COMPUTE_BIT))
        return (uint32_t)i;
    /* A family that computes and does not draw, with the most queues: the
     * queues a GPU runs compute work on side by side. */
    uint32_t best = UINT32_MAX;
    for (uint32_t i = 0; i < n; i++)
        if ((fam[i].queueFlags & VK_QUEUE_COMPUTE_BIT) &&
            !(fam[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) && fam[i].queueCount > 1 &&
            (best == UINT32_MAX || fam[i].queueCount > fam[best].queueCount))
            best = i;
    return best != UINT32_MAX ? best : accel_vk_compute_family(pd);
}

uint32_t accel_vk_transfer_family(VkPhysicalDevice pd)
{
    VkQueueFamilyProperties fam[64];
    uint32_t n = 64;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, fam);
    const VkQueueFlags other = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
    for (uint32_t i = 0; i < n; i++)
        if ((fam[i].queueFlags & VK_QUEUE_TRANSFER_BIT) && !(fam[i].queueFlags & other) &&
            fam[i].queueCount > 0)
            return i;
    return UINT32_MAX;
}

/* The devices we can use, in the loader's order: enumerate and device_open
 * must agree on what an index means. Call with instance_lock held. */
VkResult accel_vk_compute_devices(const salvo_allocator *alloc, VkInstance instance,
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
        if (accel_vk_compute_family(pd[i]) != UINT32_MAX)
            pd[kept++] = pd[i];
    *out = pd;
    *count = kept;
    return VK_SUCCESS;
}

salvo_device_type accel_vk_device_type(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return SALVO_DEVICE_TYPE_INTEGRATED;
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return SALVO_DEVICE_TYPE_DISCRETE;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return SALVO_DEVICE_TYPE_VIRTUAL;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return SALVO_DEVICE_TYPE_CPU;
    default: return SALVO_DEVICE_TYPE_OTHER;
    }
}

void accel_vk_copy_name(char dst[SALVO_NAME_MAX], const char *src, size_t src_max)
{
    size_t n = strnlen(src, src_max < SALVO_NAME_MAX ? src_max : SALVO_NAME_MAX - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

accel_result accel_vk_enumerate(void *self_, salvo_device_entry *entries, uint32_t *count)
{
    vk_self *self = self_;
    VkResult r = accel_vk_loader_ready();
    if (r != VK_SUCCESS)
        return r;
    accel_vk_keep_drivers();
    VkInstance instance;
    uint32_t api;
    r = accel_vk_instance_create(self->alloc, NULL, NULL, &instance, &api);
    if (r != VK_SUCCESS)
        return r;

    accel_vk_instance_lock();
    volkLoadInstanceOnly(instance);
    VkPhysicalDevice *pd;
    uint32_t n;
    r = accel_vk_compute_devices(self->alloc, instance, &pd, &n);
    if (r == VK_SUCCESS && entries) {
        if (n > *count)
            n = *count;
        for (uint32_t i = 0; i < n; i++) {
            VkPhysicalDeviceProperties p;
            vkGetPhysicalDeviceProperties(pd[i], &p);
            accel_vk_copy_name(entries[i].name, p.deviceName, sizeof p.deviceName);
            entries[i].type = accel_vk_device_type(p.deviceType);
            entries[i].vendor_id = p.vendorID;
            entries[i].device_id = p.deviceID;
            entries[i].api_version = p.apiVersion;
        }
    }
    if (r == VK_SUCCESS)
        *count = n;
    salvo_mem_free(self->alloc, pd);
    vkDestroyInstance(instance, NULL);
    accel_vk_instance_unlock();
    return r;
}
