/*
 * An application that compiles its own copy of volk.c and loads Vulkan
 * through it, with salvo (static or shared) in the same program. Before
 * salvo renamed its private volk, the static archive's volk calls resolved
 * to the program's copy: salvo's volkLoadInstanceOnly overwrote the
 * program's pointers with its own instance's (checked below), or, where
 * both copies were pulled in, the link failed on duplicate definitions.
 *
 * Exit 0 on success, 77 without a Vulkan device, 1 on failure.
 */
#include <stdio.h>

#include <volk.h>

#include "embed/embed_salvo.h"

int main(void)
{
    if (volkInitialize() != VK_SUCCESS) {
        fprintf(stderr, "volkInitialize: no Vulkan loader: skipped\n");
        return EMBED_SKIP;
    }
    uint32_t version = volkGetInstanceVersion();
    if (version < VK_API_VERSION_1_1 || !vkEnumerateInstanceVersion) {
        fprintf(stderr, "loader version %#x: want 1.1\n", version);
        return 1;
    }
    uint32_t direct = 0;
    if (vkEnumerateInstanceVersion(&direct) != VK_SUCCESS || direct != version) {
        fprintf(stderr, "vkEnumerateInstanceVersion: %#x, volk says %#x\n", direct, version);
        return 1;
    }
    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "salvo-embed-volk",
        .apiVersion = VK_API_VERSION_1_1,
    };
    VkInstanceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pApplicationInfo = &app,
    };
    VkInstance instance = VK_NULL_HANDLE;
    VkResult r = vkCreateInstance(&ci, NULL, &instance);
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER) {
        fprintf(stderr, "no Vulkan driver: skipped\n");
        return EMBED_SKIP;
    }
    if (r != VK_SUCCESS) {
        fprintf(stderr, "vkCreateInstance: %d\n", (int)r);
        return 1;
    }
    volkLoadInstance(instance);
    PFN_vkEnumeratePhysicalDevices enumerate_before = vkEnumeratePhysicalDevices;

    /* salvo loads Vulkan through its own volk meanwhile. */
    int rc = embed_run_salvo(vkGetInstanceProcAddr, NULL);

    /* The program's volk state is its own still. */
    if (rc == 0 && (volkGetLoadedInstance() != instance ||
                    vkEnumeratePhysicalDevices != enumerate_before)) {
        fprintf(stderr, "salvo changed the program's volk globals\n");
        rc = 1;
    }
    if (rc == 0) {
        uint32_t count = 0;
        r = vkEnumeratePhysicalDevices(instance, &count, NULL);
        if (r != VK_SUCCESS || count == 0) {
            fprintf(stderr, "vkEnumeratePhysicalDevices after salvo: %d, %u devices\n", (int)r,
                    count);
            rc = 1;
        } else {
            printf("own volk instance: %u device(s), version %u.%u\n", count,
                   VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version));
        }
    }
    vkDestroyInstance(instance, NULL);
    /* salvo on the program's own Vulkan objects, made through its volk. */
    if (rc == 0)
        rc = embed_run_salvo_on_own(volkLoadInstance);
    return rc;
}
