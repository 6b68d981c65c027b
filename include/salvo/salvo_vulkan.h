/*
 * salvo interop with Vulkan: the native handles behind salvo's objects, for
 * programs that also use Vulkan themselves (share a buffer with their own
 * pipelines, name objects for a debugger, query the physical device).
 *
 * Only this header names Vulkan types; salvo.h needs none. It includes
 * <vulkan/vulkan_core.h> and works with VK_NO_PROTOTYPES (volk users)
 * as well as without (programs linking the Vulkan loader): it declares no
 * Vulkan function. As with any Vulkan header, a volk user includes volk.h
 * first or defines VK_NO_PROTOTYPES for the whole program.
 *
 * salvo loads Vulkan through its own private copy of volk. The handles are
 * those of salvo's own VkInstance and VkDevice: call Vulkan on them through
 * function pointers loaded for that instance or device (get_instance_proc_addr
 * below, or your loader's vkGetInstanceProcAddr / vkGetDeviceProcAddr with
 * these handles). The same libvulkan.so.1 serves both, so loader trampolines
 * (a program linked with -lvulkan) work on them too.
 *
 * Not yet supported (TODO): handing salvo an instance, device and queue of
 * your own to run on. salvo always creates its own.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SALVO_SALVO_VULKAN_H
#define SALVO_SALVO_VULKAN_H

#include <vulkan/vulkan_core.h>

#include "salvo/salvo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The Vulkan objects a salvo device runs on. All are owned by salvo. */
typedef struct salvo_vk_handles {
    VkInstance instance;
    VkPhysicalDevice physical_device;
    VkDevice device;
    /* The one queue every stream of the device submits to. Vulkan requires
     * submissions to a queue to be externally synchronized, and salvo
     * submits from inside many calls (launch, flush, synchronize, buffer
     * read and write, event and gate calls): submit to it yourself only
     * while no salvo call on this device is in progress. */
    VkQueue queue;
    uint32_t queue_family_index;
    /* Vulkan version salvo uses on the device: min(instance, device). */
    uint32_t api_version;
    /* The loader entry salvo resolved (libvulkan.so.1's); loads functions
     * for the instance and, through vkGetDeviceProcAddr, the device. */
    PFN_vkGetInstanceProcAddr get_instance_proc_addr;
} salvo_vk_handles;

/* The Vulkan handles of device's instance, physical device, device and
 * queue. SALVO_ERROR_UNSUPPORTED when the device does not run on Vulkan
 * (a test accelerator).
 * Thread safety: any thread.
 * Lifetime: valid until salvo_device_destroy. Destroy nothing you get
 * here; destroy what you created from them before the device. */
SALVO_API salvo_status salvo_device_vk_handles(salvo_device *device, salvo_vk_handles *out);

/* The VkBuffer behind buffer: salvo_buffer_size(buffer) bytes from offset
 * 0, bound to memory salvo allocated (or imported). Created with storage,
 * uniform, transfer-source and transfer-destination usage.
 * SALVO_ERROR_UNSUPPORTED when the device does not run on Vulkan.
 * salvo orders its own launches and transfers on the buffer, not your work:
 * synchronize the streams that use the buffer before your work touches it,
 * and wait for your work before salvo uses the buffer again.
 * Thread safety: any thread.
 * Lifetime: valid until salvo_buffer_destroy, which must come after your
 * own work on the buffer has completed (salvo defers the free only for
 * its own launches). */
SALVO_API salvo_status salvo_buffer_vk_handle(salvo_buffer *buffer, VkBuffer *out);

#ifdef __cplusplus
}
#endif

#endif /* SALVO_SALVO_VULKAN_H */
