/*
 * An application that links the Vulkan loader (-lvulkan) and calls it
 * directly, with salvo (static or shared) in the same program. Before
 * salvo renamed its private volk, the static archive defined vkCreateInstance
 * and friends as data: the program's calls below resolved to those pointers
 * instead of the loader's functions.
 *
 * Exit 0 on success, 77 without a Vulkan device, 1 on failure.
 */
#include <stdio.h>

#include <vulkan/vulkan.h>

#include "embed/embed_salvo.h"

static int app_vulkan(const char *when)
{
    uint32_t version = 0;
    VkResult r = vkEnumerateInstanceVersion(&version);
    if (r != VK_SUCCESS || version < VK_API_VERSION_1_1) {
        fprintf(stderr, "%s: vkEnumerateInstanceVersion: %d, version %#x\n", when, (int)r, version);
        return 1;
    }
    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "salvo-embed-loader",
        .apiVersion = VK_API_VERSION_1_1,
    };
    VkInstanceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pApplicationInfo = &app,
    };
    VkInstance instance = VK_NULL_HANDLE;
    r = vkCreateInstance(&ci, NULL, &instance);
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER) {
        fprintf(stderr, "%s: no Vulkan driver: skipped\n", when);
        return EMBED_SKIP;
    }
    if (r != VK_SUCCESS) {
        fprintf(stderr, "%s: vkCreateInstance: %d\n", when, (int)r);
        return 1;
    }
    uint32_t count = 0;
    r = vkEnumeratePhysicalDevices(instance, &count, NULL);
    int rc = 0;
    if (r != VK_SUCCESS) {
        fprintf(stderr, "%s: vkEnumeratePhysicalDevices: %d\n", when, (int)r);
        rc = 1;
    } else if (count == 0) {
        fprintf(stderr, "%s: no Vulkan device: skipped\n", when);
        rc = EMBED_SKIP;
    } else {
        VkPhysicalDevice pd;
        count = 1;
        r = vkEnumeratePhysicalDevices(instance, &count, &pd);
        if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
            fprintf(stderr, "%s: vkEnumeratePhysicalDevices: %d\n", when, (int)r);
            rc = 1;
        } else {
            VkPhysicalDeviceProperties props;
            vkGetPhysicalDeviceProperties(pd, &props);
            printf("%s: loader %u.%u, own instance sees %s\n", when, VK_API_VERSION_MAJOR(version),
                   VK_API_VERSION_MINOR(version), props.deviceName);
        }
    }
    vkDestroyInstance(instance, NULL);
    return rc;
}

int main(void)
{
    /* The program's Vulkan before salvo loads its own, salvo, then the
     * program's again (salvo must not have changed what it calls). */
    int rc = app_vulkan("before salvo");
    if (rc != 0)
        return rc;
    rc = embed_run_salvo(vkGetInstanceProcAddr, NULL);
    if (rc != 0)
        return rc;
    rc = app_vulkan("after salvo");
    if (rc != 0)
        return rc;
    /* salvo on the program's own Vulkan objects. */
    return embed_run_salvo_on_own(NULL);
}
