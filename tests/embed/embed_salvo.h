/*
 * The salvo half of the embed programs: open the default device, run
 * shaders/add.comp twice over a buffer, read it back and check it, and
 * reach salvo's Vulkan objects through salvo_vulkan.h with the program's
 * own Vulkan (loader or volk), given as its vkGetInstanceProcAddr.
 *
 * Returns 0, EMBED_SKIP when there is no Vulkan device, or 1 (after
 * printing why). Validation messages (SALVO_VALIDATION=1) count as
 * failures.
 */
#ifndef SALVO_TESTS_EMBED_SALVO_H
#define SALVO_TESTS_EMBED_SALVO_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "salvo/salvo.h"
#include "salvo/salvo_vulkan.h"
#include "support/own_vulkan.h"

#include "add.spv.h"

#define EMBED_SKIP 77

enum {
    EMBED_N = 1000
};

static unsigned embed_validation_messages;

static void embed_log(void *user, salvo_log_level level, const char *file, int line,
                      const char *message)
{
    (void)user;
    (void)line;
    if (file && strcmp(file, "validation") == 0) {
        embed_validation_messages++;
        fprintf(stderr, "VALIDATION: %s\n", message);
    } else if (level >= SALVO_LOG_WARNING) {
        fprintf(stderr, "salvo: %s\n", message);
    }
}

#define EMBED_CHECK(cond)                                                                         \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            fprintf(stderr, "%s:%d: check failed: %s (last salvo error: %s)\n", __FILE__,         \
                    __LINE__, #cond, salvo_last_error());                                         \
            goto out;                                                                             \
        }                                                                                         \
    } while (0)

/* Also checks that salvo's handles are real: the program's Vulkan, loading
 * through app_gipa for salvo's instance, sees the device salvo reports and
 * a buffer of the right size. imp non-NULL: salvo runs on the program's
 * own instance, device and queue (salvo_device_create_vk) and must report
 * exactly those handles. */
static int embed_run_salvo(PFN_vkGetInstanceProcAddr app_gipa, const salvo_vk_device_import *imp)
{
    int rc = 1;
    salvo_device *dev = NULL;
    salvo_buffer *buf = NULL;
    salvo_kernel *kernel = NULL;
    salvo_stream *stream = NULL;
    static uint32_t data[EMBED_N];
    salvo_device_info info;
    memset(&info, 0, sizeof info);

    /* No loader, no driver or no device: skip. (With a loader but no
     * driver, device_create reports the failed enumeration instead.) */
    uint32_t count = 0;
    salvo_status st = salvo_device_enumerate(NULL, &count);
    if (st != SALVO_OK || count == 0) {
        fprintf(stderr, "no Vulkan device: skipped (%s)\n", salvo_status_string(st));
        return EMBED_SKIP;
    }
    salvo_device_desc desc = {.log = embed_log};
    st = imp ? salvo_device_create_vk(imp, &desc, &dev) : salvo_device_create(&desc, &dev);
    if (st == SALVO_ERROR_NO_DEVICE) {
        fprintf(stderr, "no Vulkan device: skipped (%s)\n", salvo_last_error());
        return EMBED_SKIP;
    }
    EMBED_CHECK(st == SALVO_OK);
    EMBED_CHECK(salvo_device_info_get(dev, &info) == SALVO_OK);

    for (uint32_t i = 0; i < EMBED_N; i++)
        data[i] = i;
    EMBED_CHECK(salvo_buffer_create(dev, sizeof data, SALVO_DOMAIN_DEVICE, &buf) == SALVO_OK);
    EMBED_CHECK(salvo_buffer_write(buf, 0, data, sizeof data) == SALVO_OK);
    salvo_spec_constant local = {.id = 0, .value = 64};
    salvo_kernel_desc kd = {.spirv = add_spv, .spirv_size = sizeof add_spv,
                            .spec_constants = &local, .spec_constant_count = 1};
    EMBED_CHECK(salvo_kernel_create(dev, &kd, &kernel) == SALVO_OK);
    EMBED_CHECK(salvo_stream_create(dev, NULL, &stream) == SALVO_OK);
    struct {
        uint32_t n, value;
    } push = {EMBED_N, 5};
    salvo_binding b = {.binding = 0, .buffer = buf};
    uint32_t groups[3] = {(EMBED_N + 63) / 64, 1, 1};
    EMBED_CHECK(salvo_launch(stream, kernel, groups, &b, 1, &push, sizeof push) == SALVO_OK);
    push.value = 7;
    EMBED_CHECK(salvo_launch(stream, kernel, groups, &b, 1, &push, sizeof push) == SALVO_OK);
    EMBED_CHECK(salvo_stream_synchronize(stream) == SALVO_OK);
    memset(data, 0, sizeof data);
    EMBED_CHECK(salvo_buffer_read(buf, 0, data, sizeof data) == SALVO_OK);
    for (uint32_t i = 0; i < EMBED_N; i++) {
        if (data[i] != i + 12) {
            fprintf(stderr, "data[%u] = %u, want %u\n", i, data[i], i + 12);
            goto out;
        }
    }

    /* Interop: salvo's handles, used through the program's own Vulkan. */
    salvo_vk_handles h;
    EMBED_CHECK(salvo_device_vk_handles(dev, &h) == SALVO_OK);
    EMBED_CHECK(h.instance && h.physical_device && h.device && h.queue);
    EMBED_CHECK(h.get_instance_proc_addr != NULL);
    EMBED_CHECK(h.api_version == info.api_version);
    if (imp) {
        EMBED_CHECK(h.instance == imp->instance && h.physical_device == imp->physical_device);
        EMBED_CHECK(h.device == imp->device && h.queue == imp->queue);
        EMBED_CHECK(h.queue_family_index == imp->queue_family_index);
    }
    PFN_vkGetPhysicalDeviceProperties get_props =
        (PFN_vkGetPhysicalDeviceProperties)app_gipa(h.instance, "vkGetPhysicalDeviceProperties");
    PFN_vkGetPhysicalDeviceQueueFamilyProperties get_families =
        (PFN_vkGetPhysicalDeviceQueueFamilyProperties)app_gipa(
            h.instance, "vkGetPhysicalDeviceQueueFamilyProperties");
    PFN_vkGetDeviceProcAddr get_dpa =
        (PFN_vkGetDeviceProcAddr)app_gipa(h.instance, "vkGetDeviceProcAddr");
    EMBED_CHECK(get_props && get_families && get_dpa);
    VkPhysicalDeviceProperties props;
    get_props(h.physical_device, &props);
    EMBED_CHECK(strcmp(props.deviceName, info.name) == 0);
    EMBED_CHECK(props.vendorID == info.vendor_id && props.deviceID == info.device_id);
    VkQueueFamilyProperties families[16];
    uint32_t family_count = 16;
    get_families(h.physical_device, &family_count, families);
    EMBED_CHECK(h.queue_family_index < family_count);
    EMBED_CHECK(families[h.queue_family_index].queueFlags & VK_QUEUE_COMPUTE_BIT);

    VkBuffer vb = VK_NULL_HANDLE;
    EMBED_CHECK(salvo_buffer_vk_handle(buf, &vb) == SALVO_OK);
    EMBED_CHECK(vb != VK_NULL_HANDLE);
    PFN_vkGetBufferMemoryRequirements get_reqs =
        (PFN_vkGetBufferMemoryRequirements)get_dpa(h.device, "vkGetBufferMemoryRequirements");
    EMBED_CHECK(get_reqs != NULL);
    VkMemoryRequirements req;
    get_reqs(h.device, vb, &req);
    EMBED_CHECK(req.size >= sizeof data);

    salvo_stats stats;
    EMBED_CHECK(salvo_device_stats(dev, &stats) == SALVO_OK);
    EMBED_CHECK(stats.launches_total == 2);
    EMBED_CHECK(embed_validation_messages == 0);
    rc = 0;
out:
    salvo_stream_destroy(stream);
    salvo_kernel_destroy(kernel);
    salvo_buffer_destroy(buf);
    salvo_device_destroy(dev);
    if (rc == 0 && embed_validation_messages) {
        fprintf(stderr, "%u validation message(s)\n", embed_validation_messages);
        rc = 1;
    }
    if (rc == 0)
        printf("salvo on %s (%s): launches checked, Vulkan handles match\n", info.name,
               imp ? "the program's own device" : "salvo's own device");
    return rc;
}

/* The same on the program's own instance, device and queue, made with
 * the program's Vulkan (load_instance: volkLoadInstance for a volk user),
 * validation on under SALVO_VALIDATION; afterwards the program's device
 * must still work and its own messenger must have seen nothing, the
 * layer's report of objects left on the device at vkDestroyDevice
 * included. */
static inline int embed_run_salvo_on_own(void (*load_instance)(VkInstance))
{
    own_vk o;
    const own_vk_options opt = {.validation = getenv("SALVO_VALIDATION") != NULL,
                                .push_descriptor = true,
                                .timeline = true};
    int rc = own_vk_open(&o, &opt, load_instance);
    if (rc != 0)
        return rc;
    salvo_vk_device_import imp = own_vk_import(&o);
    rc = embed_run_salvo(vkGetInstanceProcAddr, &imp);
    if (rc == 0 && vkDeviceWaitIdle(o.device) != VK_SUCCESS) {
        fprintf(stderr, "the program's device does not work after salvo\n");
        rc = 1;
    }
    own_vk_close(&o);
    if (rc == 0 && o.messages) {
        fprintf(stderr, "%u validation message(s) on the program's instance\n", o.messages);
        rc = 1;
    }
    return rc;
}

#endif
