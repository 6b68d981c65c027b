/*
 * vk-record: a library with a Vulkan pipeline of its own runs inside a
 * salvo stream, the way VkFFT records its dispatches into a command buffer
 * its caller hands it (salvo_vk_stream_record, salvo/salvo_vulkan.h).
 *
 * The library below (block_scan_*) knows nothing of salvo: it is given a
 * VkDevice and a way to load Vulkan functions, builds its own shader
 * module, layouts, pipeline and descriptor set once, and records a dispatch
 * into whatever command buffer it is given. Its kernel is
 * vk_record_scan.comp, an inclusive prefix sum within blocks of
 * SCAN_BLOCK elements, in place.
 *
 * The program runs, in one stream, with one synchronize at the end:
 *   salvo_stream_write      the input, host to device
 *   salvo_launch add        data[i] += ADD            (salvo's kernel)
 *   salvo_vk_stream_record  block scan of data        (the library's pipeline)
 *   salvo_launch scale      out[i] = data[i] * FACTOR (salvo's kernel)
 *   salvo_stream_read       out, device to host
 * and checks every value against the CPU. The library's dispatch declares
 * the range it reads and writes, so salvo puts the barriers between it and
 * the launches on either side, and keeps the buffer alive for it.
 *
 * Run it with SALVO_VALIDATION=2 (its ctest does) for the validation layer
 * with synchronization validation: any message the layer gives fails it.
 * Exit 0, 1 on an error or a wrong value, 77 without a Vulkan device.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* salvo loads Vulkan at run time and the program links no loader: every
 * Vulkan function is reached through a pointer salvo's loader entry
 * gives, so no prototype may be declared. */
#define VK_NO_PROTOTYPES
#include <salvo/salvo_vulkan.h>

#include "add.spv.h"
#include "scale.spv.h"
#include "vk_record_scan.spv.h"

/* ------------------------------------------------------------------ */
/* The library: a block prefix sum with a pipeline of its own          */
/* ------------------------------------------------------------------ */

/* The largest workgroup every Vulkan device runs (maxComputeWorkGroupSize[0]
 * and maxComputeWorkGroupInvocations are at least 128), so the library
 * need not query limits. Also the size of a scanned block. */
#define SCAN_BLOCK 128u
/* The least maxComputeWorkGroupCount[0] Vulkan allows: with one group per
 * block, the most blocks one dispatch covers on any device. */
#define SCAN_MAX_GROUPS 65535u

/* The entry points the library uses, loaded for its device alone (volk's
 * per-device table): no loader dispatch on the command-buffer path. */
#define BLOCK_SCAN_FUNCTIONS(X)                                                                    \
    X(vkCreateShaderModule)                                                                        \
    X(vkDestroyShaderModule)                                                                       \
    X(vkCreateDescriptorSetLayout)                                                                 \
    X(vkDestroyDescriptorSetLayout)                                                                \
    X(vkCreatePipelineLayout)                                                                      \
    X(vkDestroyPipelineLayout)                                                                     \
    X(vkCreateComputePipelines)                                                                    \
    X(vkDestroyPipeline)                                                                           \
    X(vkCreateDescriptorPool)                                                                      \
    X(vkDestroyDescriptorPool)                                                                     \
    X(vkAllocateDescriptorSets)                                                                    \
    X(vkUpdateDescriptorSets)                                                                      \
    X(vkCmdBindPipeline)                                                                           \
    X(vkCmdBindDescriptorSets)                                                                     \
    X(vkCmdPushConstants)                                                                          \
    X(vkCmdDispatch)

typedef struct block_scan_functions {
#define BLOCK_SCAN_MEMBER(name) PFN_##name name;
    BLOCK_SCAN_FUNCTIONS(BLOCK_SCAN_MEMBER)
#undef BLOCK_SCAN_MEMBER
} block_scan_functions;

/* A "plan", as VkFFT calls it: everything needed to scan one buffer range,
 * built once and recorded as often as wanted. */
typedef struct block_scan {
    VkDevice device;
    block_scan_functions vk;
    VkShaderModule module;
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    VkPipeline pipeline;
    VkDescriptorPool pool;
    VkDescriptorSet set; /* freed with pool */
    uint32_t n;          /* elements (uint32) in the bound range */
} block_scan;

static void block_scan_destroy(block_scan *s);

/* Build a plan scanning n uint32 at offset (a multiple of the device's
 * minStorageBufferOffsetAlignment) of buffer, on device. The handles and
 * the loader entry are the caller's (a salvo program takes them from
 * salvo_device_vk_handles). On failure nothing is left to destroy.
 * Lifetime: the buffer must outlive the plan; destroy the plan only once
 * every command buffer it was recorded into has completed. */
static VkResult block_scan_init(block_scan *s, VkInstance instance, VkDevice device,
                                PFN_vkGetInstanceProcAddr get_instance_proc_addr,
                                VkBuffer buffer, VkDeviceSize offset, uint32_t n)
{
    memset(s, 0, sizeof *s);
    if (n == 0 || n > SCAN_MAX_GROUPS * SCAN_BLOCK)
        return VK_ERROR_INITIALIZATION_FAILED;
    s->device = device;
    s->n = n;

    /* Device-level pointers through vkGetDeviceProcAddr, itself loaded
     * through the instance: the only way in without the loader's symbols. */
    PFN_vkGetDeviceProcAddr get_device_proc_addr =
        (PFN_vkGetDeviceProcAddr)get_instance_proc_addr(instance, "vkGetDeviceProcAddr");
    if (!get_device_proc_addr)
        return VK_ERROR_INITIALIZATION_FAILED;
#define BLOCK_SCAN_LOAD(name)                                                                      \
    s->vk.name = (PFN_##name)get_device_proc_addr(device, #name);                                  \
    if (!s->vk.name)                                                                               \
        return VK_ERROR_INITIALIZATION_FAILED;
    BLOCK_SCAN_FUNCTIONS(BLOCK_SCAN_LOAD)
#undef BLOCK_SCAN_LOAD

    VkResult r;
    const VkShaderModuleCreateInfo module_info = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
        .codeSize = sizeof vk_record_scan_spv,
        .pCode = vk_record_scan_spv,
    };
    r = s->vk.vkCreateShaderModule(device, &module_info, NULL, &s->module);
    if (r != VK_SUCCESS)
        goto fail;

    const VkDescriptorSetLayoutBinding binding = {
        .binding = 0,
        .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .descriptorCount = 1,
        .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
    };
    const VkDescriptorSetLayoutCreateInfo set_layout_info = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = 1,
        .pBindings = &binding,
    };
    r = s->vk.vkCreateDescriptorSetLayout(device, &set_layout_info, NULL, &s->set_layout);
    if (r != VK_SUCCESS)
        goto fail;

    /* The shader's push-constant block { uint n; }. */
    const VkPushConstantRange push_range = {
        .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        .offset = 0,
        .size = sizeof(uint32_t),
    };
    const VkPipelineLayoutCreateInfo layout_info = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1,
        .pSetLayouts = &s->set_layout,
        .pushConstantRangeCount = 1,
        .pPushConstantRanges = &push_range,
    };
    r = s->vk.vkCreatePipelineLayout(device, &layout_info, NULL, &s->layout);
    if (r != VK_SUCCESS)
        goto fail;

    /* The group (and block) size is the shader's specialization constant 0. */
    const uint32_t block = SCAN_BLOCK;
    const VkSpecializationMapEntry spec_entry = {.constantID = 0, .offset = 0,
                                                 .size = sizeof block};
    const VkSpecializationInfo spec = {
        .mapEntryCount = 1,
        .pMapEntries = &spec_entry,
        .dataSize = sizeof block,
        .pData = &block,
    };
    const VkComputePipelineCreateInfo pipeline_info = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage =
            {
                .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = s->module,
                .pName = "main",
                .pSpecializationInfo = &spec,
            },
        .layout = s->layout,
    };
    r = s->vk.vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &pipeline_info, NULL,
                                       &s->pipeline);
    if (r != VK_SUCCESS)
        goto fail;

    const VkDescriptorPoolSize pool_size = {
        .type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .descriptorCount = 1,
    };
    const VkDescriptorPoolCreateInfo pool_info = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
        .maxSets = 1,
        .poolSizeCount = 1,
        .pPoolSizes = &pool_size,
    };
    r = s->vk.vkCreateDescriptorPool(device, &pool_info, NULL, &s->pool);
    if (r != VK_SUCCESS)
        goto fail;
    const VkDescriptorSetAllocateInfo set_info = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
        .descriptorPool = s->pool,
        .descriptorSetCount = 1,
        .pSetLayouts = &s->set_layout,
    };
    r = s->vk.vkAllocateDescriptorSets(device, &set_info, &s->set);
    if (r != VK_SUCCESS)
        goto fail;

    /* Written now, while no command buffer uses the set: a set may not be
     * updated once recorded into a command buffer that is still pending. */
    const VkDescriptorBufferInfo buffer_info = {
        .buffer = buffer,
        .offset = offset,
        .range = (VkDeviceSize)n * sizeof(uint32_t),
    };
    const VkWriteDescriptorSet write = {
        .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
        .dstSet = s->set,
        .dstBinding = 0,
        .descriptorCount = 1,
        .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .pBufferInfo = &buffer_info,
    };
    s->vk.vkUpdateDescriptorSets(device, 1, &write, 0, NULL);
    return VK_SUCCESS;

fail:
    block_scan_destroy(s);
    return r;
}

/* Record the scan into cb, a command buffer in the recording state of a
 * queue family that computes. It records no barrier: ordering against the
 * commands around it is the caller's (in a salvo stream, salvo's, from the
 * declared use). It leaves its pipeline and set bound; the caller binds
 * its own state again. */
static void block_scan_record(const block_scan *s, VkCommandBuffer cb)
{
    s->vk.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, s->pipeline);
    s->vk.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, s->layout, 0, 1, &s->set, 0,
                                  NULL);
    s->vk.vkCmdPushConstants(cb, s->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof s->n, &s->n);
    s->vk.vkCmdDispatch(cb, (s->n + SCAN_BLOCK - 1) / SCAN_BLOCK, 1, 1);
}

/* Destroy what block_scan_init created; a zeroed plan (or one whose init
 * failed) is a no-op. Handles are tested before each call because a plan
 * whose loading failed has no destroy functions either. */
static void block_scan_destroy(block_scan *s)
{
    if (s->pool)
        s->vk.vkDestroyDescriptorPool(s->device, s->pool, NULL);
    if (s->pipeline)
        s->vk.vkDestroyPipeline(s->device, s->pipeline, NULL);
    if (s->layout)
        s->vk.vkDestroyPipelineLayout(s->device, s->layout, NULL);
    if (s->set_layout)
        s->vk.vkDestroyDescriptorSetLayout(s->device, s->set_layout, NULL);
    if (s->module)
        s->vk.vkDestroyShaderModule(s->device, s->module, NULL);
    memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------------ */
/* The program: salvo's work and the library's in one stream           */
/* ------------------------------------------------------------------ */

#define N 10000u /* not a multiple of SCAN_BLOCK: the last block is partial */
#define ADD 3u
#define FACTOR 2u
#define LOCAL_SIZE 64u /* salvo's kernels' local_size_x, set by spec constant 0 */

/* The glue salvo calls with the stream's command buffer: the library's
 * own entry point, with the arguments in salvo_vk_record_fn's order. It
 * runs under the device's lock, so it calls no salvo function. */
static void record_scan(VkCommandBuffer cb, void *user)
{
    block_scan_record(user, cb);
}

/* Counts every validation message, including those at teardown, after
 * salvo_device_stats can no longer be asked. */
static atomic_uint validation_seen;

static void log_message(void *user, salvo_log_level level, const char *file, int line,
                        const char *message)
{
    (void)user;
    (void)line;
    if (file && strcmp(file, "validation") == 0) {
        atomic_fetch_add(&validation_seen, 1);
        fprintf(stderr, "vk-record: validation: %s\n", message);
    } else if (level >= SALVO_LOG_WARNING) {
        fprintf(stderr, "vk-record: %s: %s\n", file ? file : "salvo", message);
    }
}

/* Remember which call failed; its status and message are printed at `done`. */
#define CHECK(call)                                                                                \
    do {                                                                                           \
        status = (call);                                                                           \
        if (status < 0) {                                                                          \
            failed = #call;                                                                        \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

static salvo_status kernel(salvo_device *device, const uint32_t *spirv, size_t size,
                           const char *name, salvo_kernel **out)
{
    const salvo_spec_constant local_size = {.id = 0, .value = LOCAL_SIZE};
    const salvo_kernel_desc desc = {
        .spirv = spirv,
        .spirv_size = size,
        .name = name,
        .spec_constants = &local_size,
        .spec_constant_count = 1,
    };
    return salvo_kernel_create(device, &desc, out);
}

int main(void)
{
    salvo_device *device = NULL;
    salvo_buffer *data = NULL, *out = NULL;
    salvo_kernel *add = NULL, *scale = NULL;
    salvo_stream *stream = NULL;
    block_scan scan = {0};
    salvo_status status = SALVO_OK;
    const char *failed = NULL;
    int result = 1;

    uint32_t *input = malloc(N * sizeof *input);
    uint32_t *result_host = malloc(N * sizeof *result_host);
    if (!input || !result_host) {
        fprintf(stderr, "vk-record: out of host memory\n");
        goto done;
    }
    /* Small scattered values: a block's sum stays far below 2^32. */
    for (uint32_t i = 0; i < N; i++)
        input[i] = (i * 2654435761u) >> 24;

    /* Validation comes from $SALVO_VALIDATION, so the program also runs
     * where the layer is not installed. */
    const salvo_device_desc desc = {.log = log_message};
    status = salvo_device_create(&desc, &device);
    if (status == SALVO_ERROR_NO_DEVICE) {
        fprintf(stderr, "vk-record: no Vulkan device: skipped\n");
        result = 77;
        goto done;
    }
    CHECK(status);

    salvo_vk_handles vk;
    CHECK(salvo_device_vk_handles(device, &vk));
    CHECK(salvo_buffer_create(device, N * sizeof(uint32_t), SALVO_DOMAIN_DEVICE, &data));
    CHECK(salvo_buffer_create(device, N * sizeof(uint32_t), SALVO_DOMAIN_DEVICE, &out));
    CHECK(kernel(device, add_spv, sizeof add_spv, "add", &add));
    CHECK(kernel(device, scale_spv, sizeof scale_spv, "scale", &scale));
    CHECK(salvo_stream_create(device, NULL, &stream));

    /* The library gets salvo's VkBuffer as any buffer of the caller's. */
    VkBuffer data_vk;
    CHECK(salvo_buffer_vk_handle(data, &data_vk));
    const VkResult vr = block_scan_init(&scan, vk.instance, vk.device, vk.get_instance_proc_addr,
                                        data_vk, 0, N);
    if (vr != VK_SUCCESS) {
        fprintf(stderr, "vk-record: block_scan_init failed: VkResult %d\n", (int)vr);
        goto done;
    }

    CHECK(salvo_stream_write(stream, data, 0, input, N * sizeof(uint32_t)));

    const uint32_t groups[3] = {(N + LOCAL_SIZE - 1) / LOCAL_SIZE, 1, 1};
    const salvo_binding data_binding = {.binding = 0, .buffer = data};
    const uint32_t add_push[2] = {N, ADD}; /* add.comp's { uint n; uint value; } */
    CHECK(salvo_launch(stream, add, groups, &data_binding, 1, add_push, sizeof add_push));

    /* The scan reads and writes data: salvo orders it after the add's
     * write and before the scale's read, and keeps data alive until the
     * batch holding it completes. */
    const salvo_vk_buffer_use use = {
        .buffer = data,
        .offset = 0,
        .size = N * sizeof(uint32_t),
        .access = SALVO_ACCESS_READ_WRITE,
    };
    CHECK(salvo_vk_stream_record(stream, &use, 1, record_scan, &scan));

    const salvo_binding scale_bindings[2] = {
        {.binding = 0, .buffer = data},
        {.binding = 1, .buffer = out},
    };
    const uint32_t scale_push[2] = {N, FACTOR}; /* scale.comp's { uint n; uint factor; } */
    CHECK(salvo_launch(stream, scale, groups, scale_bindings, 2, scale_push, sizeof scale_push));
    CHECK(salvo_stream_read(stream, out, 0, result_host, N * sizeof(uint32_t)));

    /* The one wait: result_host is filled once the stream has passed the read. */
    CHECK(salvo_stream_synchronize(stream));

    uint32_t wrong = 0, sum = 0;
    for (uint32_t i = 0; i < N; i++) {
        if (i % SCAN_BLOCK == 0)
            sum = 0;
        sum += input[i] + ADD;
        const uint32_t want = sum * FACTOR;
        if (result_host[i] != want && wrong++ < 5)
            fprintf(stderr, "vk-record: out[%u] = %u, expected %u\n", (unsigned)i,
                    (unsigned)result_host[i], (unsigned)want);
    }
    if (wrong) {
        fprintf(stderr, "vk-record: %u of %u values wrong\n", (unsigned)wrong, (unsigned)N);
        goto done;
    }

    salvo_stats stats;
    CHECK(salvo_device_stats(device, &stats));
    if (stats.validation_messages != 0) {
        fprintf(stderr, "vk-record: %llu validation messages\n",
                (unsigned long long)stats.validation_messages);
        goto done;
    }
    printf("vk-record: add, a library's block scan (blocks of %u) and scale in one stream, "
           "%u values: correct\n",
           (unsigned)SCAN_BLOCK, (unsigned)N);
    result = 0;

done:
    if (failed) {
        /* The status name first: salvo_last_error() is valid until the next salvo call. */
        const char *name = salvo_status_string(status);
        fprintf(stderr, "vk-record: %s failed: %s: %s\n", failed, name, salvo_last_error());
    }
    /* The library's objects must outlive the command buffers they were
     * recorded into, and salvo does not keep them alive (only its own
     * buffers): wait for all of the device's work first. On the error
     * paths some may still be in flight; what the wait reports was reported
     * above already, or is beside the point now. */
    if (device)
        (void)salvo_device_synchronize(device);
    block_scan_destroy(&scan);
    /* Destroy never blocks and accepts NULL; the device waits for the rest,
     * the pending read into result_host included. */
    salvo_stream_destroy(stream);
    salvo_kernel_destroy(scale);
    salvo_kernel_destroy(add);
    salvo_buffer_destroy(out);
    salvo_buffer_destroy(data);
    salvo_device_destroy(device);
    free(result_host);
    free(input);
    /* Teardown may draw messages too (a pipeline destroyed while in use). */
    if (result == 0 && atomic_load(&validation_seen) != 0) {
        fprintf(stderr, "vk-record: %u validation messages\n",
                (unsigned)atomic_load(&validation_seen));
        result = 1;
    }
    return result;
}
