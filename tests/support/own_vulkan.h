/*
 * A program's own Vulkan instance, device and queue, made the way an
 * application would, to hand to salvo_device_create_vk. Header only: the
 * embed programs (loader or volk) and the integration suite include it
 * with whichever Vulkan they use, calling vkCreateInstance and friends by
 * name. A volk user passes volkLoadInstance as load_instance; a program
 * linking the loader passes NULL.
 */
#ifndef SALVO_TESTS_OWN_VULKAN_H
#define SALVO_TESTS_OWN_VULKAN_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "salvo/salvo_vulkan.h"

#define OWN_VK_SKIP 77

typedef struct own_vk_options {
    /* The validation layer and VK_EXT_debug_utils on the instance, with a
     * messenger of the program's own counting warnings and errors. */
    bool validation;
    /* Enable each of these on the device where it is offered. */
    bool push_descriptor;
    bool host_import;
    bool timeline;
    /* VkApplicationInfo.apiVersion; 0: the loader's, at most 1.3. */
    uint32_t api_version;
} own_vk_options;

typedef struct own_vk {
    VkInstance instance;
    VkPhysicalDevice phys;
    VkDevice device;
    VkQueue queue;
    uint32_t family;
    uint32_t api_version; /* the instance's */
    VkDebugUtilsMessengerEXT messenger;
    const char *extensions[3];
    uint32_t extension_count;
    bool timeline; /* the feature was enabled */
    /* Validation warnings and errors the program's own messenger saw
     * (loader notices left out: see own_vk_on_message). */
    unsigned messages;
    char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
} own_vk;

/* Counts what salvo's own messenger counts (accel_vk_message_classify):
 * a warning or error of type VALIDATION, whoever sent it (the loader sends
 * the invalid usage it catches as GENERAL | VALIDATION), or PERFORMANCE
 * from other than the loader. The rest are notices: the loader's
 * ("Loader Message": a layer added from VK_INSTANCE_LAYERS, a manifest
 * it skipped) are about the machine's setup, not the program's calls. */
static VKAPI_ATTR VkBool32 VKAPI_CALL own_vk_on_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    own_vk *o = user;
    const char *text = data && data->pMessage ? data->pMessage : "";
    const bool loader = data && data->pMessageIdName &&
                        strcmp(data->pMessageIdName, "Loader Message") == 0;
    const bool serious = severity & (VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                     VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT);
    const bool finding = (types & VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT) ||
                         (!loader && (types & VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT));
    if (serious && finding) {
        o->messages++;
        fprintf(stderr, "APP VALIDATION: %s\n", text);
    } else if (serious) {
        fprintf(stderr, "app notice (not counted): %s\n", text);
    }
    return VK_FALSE;
}

static inline bool own_vk_offers(VkPhysicalDevice pd, const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS || n == 0)
        return false;
    VkExtensionProperties *p = calloc(n, sizeof *p);
    bool found = false;
    if (p && vkEnumerateDeviceExtensionProperties(pd, NULL, &n, p) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++)
            found = strcmp(p[i].extensionName, name) == 0;
    free(p);
    return found;
}

/* Destroys what exists; o stays zeroed. */
static inline void own_vk_close(own_vk *o)
{
    if (o->device)
        vkDestroyDevice(o->device, NULL);
    if (o->messenger) {
        PFN_vkDestroyDebugUtilsMessengerEXT destroy =
            (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
                o->instance, "vkDestroyDebugUtilsMessengerEXT");
        destroy(o->instance, o->messenger, NULL);
    }
    if (o->instance)
        vkDestroyInstance(o->instance, NULL);
    unsigned messages = o->messages;
    memset(o, 0, sizeof *o);
    o->messages = messages;
}

/* 0, OWN_VK_SKIP (no driver or device) or 1, after printing why. The
 * device is the first one with a compute queue family, with one queue of
 * the first such family. */
static inline int own_vk_open(own_vk *o, const own_vk_options *opt, void (*load_instance)(VkInstance))
{
    memset(o, 0, sizeof *o);
    uint32_t loader = VK_API_VERSION_1_0;
    if (vkEnumerateInstanceVersion(&loader) != VK_SUCCESS)
        loader = VK_API_VERSION_1_0;
    uint32_t api = opt->api_version ? opt->api_version : loader;
    if (api > VK_API_VERSION_1_3)
        api = VK_API_VERSION_1_3;
    o->api_version = api;

    const char *layer = "VK_LAYER_KHRONOS_validation";
    const char *instance_ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    VkDebugUtilsMessengerCreateInfoEXT mi = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT,
        .pfnUserCallback = own_vk_on_message,
        .pUserData = o,
    };
    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "salvo-own-vulkan",
        .apiVersion = api,
    };
    VkInstanceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pNext = opt->validation ? &mi : NULL,
        .pApplicationInfo = &app,
        .enabledLayerCount = opt->validation ? 1 : 0,
        .ppEnabledLayerNames = &layer,
        .enabledExtensionCount = opt->validation ? 1 : 0,
        .ppEnabledExtensionNames = &instance_ext,
    };
    VkResult r = vkCreateInstance(&ci, NULL, &o->instance);
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER) {
        fprintf(stderr, "own instance: no Vulkan driver: skipped\n");
        o->instance = VK_NULL_HANDLE;
        return OWN_VK_SKIP;
    }
    if (r != VK_SUCCESS) {
        fprintf(stderr, "own instance: vkCreateInstance: %d\n", (int)r);
        o->instance = VK_NULL_HANDLE;
        return 1;
    }
    if (load_instance)
        load_instance(o->instance);
    if (opt->validation) {
        PFN_vkCreateDebugUtilsMessengerEXT create =
            (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
                o->instance, "vkCreateDebugUtilsMessengerEXT");
        if (!create || create(o->instance, &mi, NULL, &o->messenger) != VK_SUCCESS) {
            fprintf(stderr, "own instance: no debug messenger\n");
            o->messenger = VK_NULL_HANDLE;
            own_vk_close(o);
            return 1;
        }
    }

    VkPhysicalDevice pds[16];
    uint32_t n = 16;
    r = vkEnumeratePhysicalDevices(o->instance, &n, pds);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE)
        n = 0;
    for (uint32_t i = 0; i < n && !o->phys; i++) {
        VkQueueFamilyProperties fam[16];
        uint32_t fam_count = 16;
        vkGetPhysicalDeviceQueueFamilyProperties(pds[i], &fam_count, fam);
        for (uint32_t f = 0; f < fam_count && !o->phys; f++) {
            if (fam[f].queueFlags & VK_QUEUE_COMPUTE_BIT) {
                o->phys = pds[i];
                o->family = f;
            }
        }
    }
    if (!o->phys) {
        fprintf(stderr, "own instance: no Vulkan device with a compute queue: skipped\n");
        own_vk_close(o);
        return OWN_VK_SKIP;
    }
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(o->phys, &props);
    memcpy(o->name, props.deviceName, sizeof o->name);
    uint32_t device_api = props.apiVersion < api ? props.apiVersion : api;

    if (opt->push_descriptor && own_vk_offers(o->phys, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME))
        o->extensions[o->extension_count++] = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
    if (opt->host_import && own_vk_offers(o->phys, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME))
        o->extensions[o->extension_count++] = VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME;
    VkPhysicalDeviceTimelineSemaphoreFeatures timeline = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES,
        .timelineSemaphore = VK_TRUE,
    };
    /* Core from 1.2; the extension before (and lavapipe has both). */
    if (opt->timeline) {
        if (device_api >= VK_API_VERSION_1_2) {
            o->timeline = true;
        } else if (own_vk_offers(o->phys, VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME)) {
            o->extensions[o->extension_count++] = VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME;
            o->timeline = true;
        }
    }
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = o->family,
        .queueCount = 1,
        .pQueuePriorities = &priority,
    };
    VkDeviceCreateInfo dci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pNext = o->timeline ? &timeline : NULL,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = &queue,
        .enabledExtensionCount = o->extension_count,
        .ppEnabledExtensionNames = o->extensions,
    };
    r = vkCreateDevice(o->phys, &dci, NULL, &o->device);
    if (r != VK_SUCCESS) {
        fprintf(stderr, "own device: vkCreateDevice: %d\n", (int)r);
        o->device = VK_NULL_HANDLE;
        own_vk_close(o);
        return 1;
    }
    vkGetDeviceQueue(o->device, o->family, 0, &o->queue);
    return 0;
}

/* What salvo_device_create_vk needs to know of o. */
static inline salvo_vk_device_import own_vk_import(const own_vk *o)
{
    return (salvo_vk_device_import){
        .get_instance_proc_addr = vkGetInstanceProcAddr,
        .instance = o->instance,
        .instance_api_version = o->api_version,
        .instance_debug_utils = o->messenger != VK_NULL_HANDLE,
        .physical_device = o->phys,
        .device = o->device,
        .device_extensions = o->extensions,
        .device_extension_count = o->extension_count,
        .timeline_semaphores = o->timeline,
        .queue = o->queue,
        .queue_family_index = o->family,
    };
}

#endif
