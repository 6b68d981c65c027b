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
 * A program that has its own instance, device and queue can also hand them
 * to salvo (salvo_device_create_vk): salvo then runs on them and destroys
 * none of them.
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

/* The Vulkan objects a salvo device runs on: owned by salvo, or by the
 * program when the device came from salvo_device_create_vk. */
typedef struct salvo_vk_handles {
    VkInstance instance;
    VkPhysicalDevice physical_device;
    VkDevice device;
    /* The device's first queue of queue_family_index. On a device from
     * salvo_device_create_vk it is the program's queue, and every stream
     * submits to it. On salvo's own device, streams take the family's
     * queues in turn (salvo_device_info.queue_count of them; $SALVO_QUEUES
     * caps it): the first stream, and every stream where queue_count is 1,
     * submits to this one; copies between host and device memory may go
     * to the copy engine's queue (salvo_device_info.transfer_queue).
     * Vulkan requires submissions to a queue to be externally
     * synchronized, and salvo submits from inside many calls (launch,
     * flush, synchronize, buffer read and write, event and gate calls):
     * submit to it yourself only while no salvo call on this device is in
     * progress -- or, on a device from salvo_device_create_vk, under the
     * queue lock given there. */
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

/* What a program hands salvo to run on its own Vulkan objects
 * (salvo_device_create_vk). Zero-initialize it and fill in what you have:
 * the fields a device needs are marked "required". */
typedef struct salvo_vk_device_import {
    /* The vkGetInstanceProcAddr the instance was created through. NULL:
     * the one salvo loads from libvulkan.so.1 -- the same loader a program
     * linking -lvulkan, or loading it with volk, uses. */
    PFN_vkGetInstanceProcAddr get_instance_proc_addr;
    VkInstance instance; /* required */
    /* VkApplicationInfo.apiVersion the instance was created with (0 reads
     * as 1.0, as in Vulkan). Required: salvo needs 1.1 or newer. */
    uint32_t instance_api_version;
    /* VK_EXT_debug_utils is enabled on the instance: salvo then adds a
     * messenger of its own, so that warnings and errors of the layers you
     * enabled reach the device's log callback and are counted in
     * salvo_stats.validation_messages (your own messengers still get them
     * too). Without it salvo sees no validation messages. */
    bool instance_debug_utils;
    VkPhysicalDevice physical_device; /* required */
    VkDevice device;                  /* required, created from physical_device */
    /* The device extensions enabled at vkCreateDevice. salvo uses
     * VK_KHR_push_descriptor (binding without descriptor pools),
     * VK_EXT_external_memory_host (salvo_buffer_import) and, before
     * Vulkan 1.2, VK_KHR_timeline_semaphore, when they are listed here; it
     * runs without each of them. Names not listed are never used. */
    const char *const *device_extensions;
    uint32_t device_extension_count;
    /* VkPhysicalDeviceTimelineSemaphoreFeatures.timelineSemaphore (or the
     * Vulkan 1.2 features' field) was enabled at vkCreateDevice: gates and
     * salvo_stream_wait_gate need it. */
    bool timeline_semaphores;
    /* Required: a queue of device, of a family with VK_QUEUE_COMPUTE_BIT.
     * Every stream of the salvo device submits to it. */
    VkQueue queue;
    uint32_t queue_family_index;
    /* Vulkan requires submissions to a queue to be externally
     * synchronized. A program that submits to the same queue itself gives
     * a lock here that its own submissions take too; salvo holds it around
     * each vkQueueSubmit and vkQueueWaitIdle of its own and never while
     * waiting for a fence; the device's log callback can run while it is
     * held (a validation message about the submit). Both NULL: the program does not use the queue while a salvo call on
     * this device may be running. Given together or not at all. */
    void (*queue_lock)(void *user);
    void (*queue_unlock)(void *user);
    void *queue_lock_user;
} salvo_vk_device_import;

/* Create a salvo device on the program's own instance, physical device,
 * device and queue (see salvo_vk_device_import). desc is as for
 * salvo_device_create, except that desc.name and $SALVO_DEVICE are not
 * used (the device is the one given) and the validation flags and
 * $SALVO_VALIDATION enable nothing: which layers run is the instance's
 * choice. desc may be NULL.
 *
 * salvo creates only objects of its own on the device (buffers, memory,
 * pipelines, command pools, fences, semaphores, query pools, a pipeline
 * cache and, with instance_debug_utils, a debug messenger) and destroys
 * them all in salvo_device_destroy; it never destroys the instance, the
 * device or the queue.
 *
 * salvo cannot see which features you enabled on the device, so it reports
 * none (salvo_device_info.features.checked is false) and does not check
 * kernels' SPIR-V capabilities against them: a kernel needing a feature
 * you did not enable fails in the driver, not in salvo_kernel_create.
 *
 * Errors: SALVO_ERROR_INVALID_ARGUMENT for a missing required handle,
 * a queue family the physical device does not have or that cannot compute,
 * a lone queue_lock or queue_unlock, or device_extension_count > 0 with
 * device_extensions NULL; SALVO_ERROR_UNSUPPORTED when the instance or the
 * device is older than Vulkan 1.1.
 * Thread safety: any thread; the handles must stay valid throughout.
 * The Vulkan loader (up to 1.4.341 at least) does not guard its lists of
 * devices: a vkCreateDevice or vkDestroyDevice of yours on one thread
 * while another thread is in salvo_device_create, salvo_device_create_vk
 * or salvo_device_destroy (which make, look up and destroy devices through
 * those lists, one at a time among themselves) can crash the loader. Make
 * those calls of yours under salvo_vk_loader_lock (below).
 * Lifetime: keep the instance, the device and the queue alive until
 * salvo_device_destroy has returned. A device lost under salvo is lost for
 * the program too: salvo reports it (salvo_device_is_lost) and the
 * program decides what to recreate. */
SALVO_API salvo_status salvo_device_create_vk(const salvo_vk_device_import *vk,
                                              const salvo_device_desc *desc,
                                              salvo_device **out);

/* salvo's lock over the Vulkan loader's lists of instances and devices,
 * one per process. The loader does not guard its lists of devices (see
 * salvo_device_create_vk), so salvo makes every loader call of its own that
 * creates, looks up or destroys a VkInstance or a VkDevice under this lock
 * (within salvo_device_create, salvo_device_create_vk, salvo_device_destroy
 * and salvo_device_enumerate). A program that makes Vulkan devices of its
 * own on one thread while salvo opens or closes devices on another takes
 * the lock around its own vkCreateDevice, vkGetDeviceProcAddr (which
 * searches the loader's lists), vkDestroyDevice, vkCreateInstance and
 * vkDestroyInstance, and those calls are then never made beside salvo's.
 * Hold it briefly: salvo's device creation and destruction on every
 * thread wait while it is held.
 * Thread safety: any thread. Not recursive: call no salvo function between
 * salvo_vk_loader_lock and salvo_vk_loader_unlock (one that opens or closes
 * a device would wait for the lock forever); unlock on the thread that
 * locked.
 * Lifetime: the process's; usable before any device is made and after the
 * last is destroyed. */
SALVO_API void salvo_vk_loader_lock(void);
SALVO_API void salvo_vk_loader_unlock(void);

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

/* A range of a salvo buffer that commands recorded by the program touch,
 * and how (read, write or both). */
typedef struct salvo_vk_buffer_use {
    salvo_buffer *buffer;
    uint64_t offset;
    uint64_t size; /* 0 = to the end of the buffer */
    salvo_access access;
} salvo_vk_buffer_use;

/* Records the program's commands into command_buffer. */
typedef void (*salvo_vk_record_fn)(VkCommandBuffer command_buffer, void *user);

/* Record Vulkan commands of the program's own into stream, in stream
 * order: record(command_buffer, user) runs during this call and records
 * into the stream's open batch (a command buffer of the stream's compute
 * queue family, in the recording state), so the commands run after the
 * stream's earlier work and before its later work, batched with it
 * (libraries such as VkFFT record their dispatches this way).
 * uses (use_count, at most SALVO_MAX_BINDINGS) declares every range of a
 * salvo buffer the commands touch: salvo puts barriers where they conflict
 * with the stream's other work and keeps the buffers alive until the batch
 * completes, as for its own launches. With no uses declared the commands
 * are ordered after all earlier work of the stream and before all later
 * work (full barriers). Memory of the program's own (its own VkBuffers) is
 * the program's to keep alive and to order.
 * What record may do: record compute and transfer commands (bind its
 * pipelines, descriptor sets and push constants, dispatch, copy, fill,
 * pipeline barriers); salvo binds its own state again afterwards. It must
 * not begin or end the command buffer, begin render passes, leave queries
 * active, or call salvo (the device's lock is held: a salvo call deadlocks).
 * record may be called again later for the same point, to record the same
 * commands into a fresh command buffer, when salvo records the batch again
 * (salvo_event_cancel of an earlier event): it must record the same
 * commands each time, and user must stay valid until the stream has
 * passed this point.
 * Returns SALVO_ERROR_UNSUPPORTED where the device does not run on Vulkan,
 * SALVO_ERROR_INVALID_STATE while the stream captures a graph, and
 * SALVO_ERROR_INVALID_ARGUMENT for bad uses (NULL buffer, another device's,
 * a range outside it, more than SALVO_MAX_BINDINGS).
 * Thread safety: as salvo_launch. */
SALVO_API salvo_status salvo_vk_stream_record(salvo_stream *stream, const salvo_vk_buffer_use *uses,
                                              uint32_t use_count, salvo_vk_record_fn record,
                                              void *user);

#ifdef __cplusplus
}
#endif

#endif /* SALVO_SALVO_VULKAN_H */
