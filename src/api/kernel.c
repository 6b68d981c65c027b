/* Kernels: a compute pipeline built from SPIR-V (given, or compiled from
 * GLSL at run time), with what it binds reflected from the module so every
 * launch can be checked against it. */
#include <stdio.h>
#include <string.h>

#include "api/glsl.h"
#include "api/spirv_check.h"
#include "api/internal.h"
#include "core/spirv_names.h"
#include "core/spirv_printf.h"

#define VT(dev) ((dev)->acc.vt)
#define SELF(dev) ((dev)->acc.self)

static void kernel_release(retire_entry *e, bool abandoned)
{
    (void)abandoned;
    salvo_kernel *k = resource_as_kernel(resource_of_release(e));
    salvo_device *dev = k->dev;
    salvo_mutex_held(&dev->q.lock); /* releases run under the lock */
    live_unlink_locked(dev, &k->res);
    VT(dev)->pipeline_destroy(SELF(dev), dev->adev, k->ek.pipe);
    COUNT_SUB(dev, live_kernels, 1);
    salvo_mem_free(dev->alloc, k->ek.name);
    salvo_mem_free(dev->alloc, k);
}

/* The capabilities salvo knows: their name, and whether the device runs
 * them (Shader and the like everywhere; Kernel, Geometry and the like
 * never in Vulkan compute; those of extensions salvo does not enable,
 * never). false for the others. Int64Atomics passes with either kind of
 * 64-bit atomics: which memory the atomics touch is not reflected, and the
 * driver checks that. The float-controls capabilities come with Vulkan
 * 1.2; which modes the device runs is checked per mode and width. */
static bool capability_known(const salvo_device_info *in, uint32_t cap, const char **name,
                             bool *offered, bool *never)
{
    const salvo_device_features *f = &in->features;
    uint32_t sg = f->subgroup_operations;
    bool v12 = ((in->api_version >> 12) & 0x3ffu) >= 2;
    *never = false;
#define CAP(number, text, cond)                                                                    \
    case number:                                                                                   \
        *name = text;                                                                              \
        *offered = (cond);                                                                         \
        return true
#define NEVER(number, text)                                                                        \
    case number:                                                                                   \
        *name = text;                                                                              \
        *offered = false;                                                                          \
        *never = true;                                                                             \
        return true
    switch (cap) {
        CAP(0, "Matrix", true);
        CAP(1, "Shader", true);
        NEVER(2, "Geometry");
        NEVER(3, "Tessellation");
        NEVER(4, "Addresses");
        NEVER(5, "Linkage");
        NEVER(6, "Kernel");
        CAP(9, "Float16", f->shader_float16);
        CAP(10, "Float64", f->shader_float64);
        CAP(11, "Int64", f->shader_int64);
        CAP(12, "Int64Atomics", f->buffer_int64_atomics || f->shared_int64_atomics);
        NEVER(7, "Vector16");
        NEVER(8, "Float16Buffer");
        NEVER(13, "ImageBasic");
        CAP(22, "Int16", f->shader_int16);
        CAP(28, "UniformBufferArrayDynamicIndexing", f->uniform_buffer_array_dynamic_indexing);
        CAP(29, "SampledImageArrayDynamicIndexing", f->sampled_image_array_dynamic_indexing);
        CAP(30, "StorageBufferArrayDynamicIndexing", f->storage_buffer_array_dynamic_indexing);
        CAP(31, "StorageImageArrayDynamicIndexing", f->storage_image_array_dynamic_indexing);
        CAP(39, "Int8", f->shader_int8);
        CAP(43, "Sampled1D", true);
        CAP(44, "Image1D", true);
        CAP(46, "SampledBuffer", true);
        CAP(47, "ImageBuffer", true);
        CAP(49, "StorageImageExtendedFormats", f->storage_image_extended_formats);
        CAP(50, "ImageQuery", true);
        CAP(55, "StorageImageReadWithoutFormat", f->storage_image_read_without_format);
        CAP(56, "StorageImageWriteWithoutFormat", f->storage_image_write_without_format);
        CAP(61, "GroupNonUniform", sg & SALVO_SUBGROUP_BASIC);
        CAP(62, "GroupNonUniformVote", sg & SALVO_SUBGROUP_VOTE);
        CAP(63, "GroupNonUniformArithmetic", sg & SALVO_SUBGROUP_ARITHMETIC);
        CAP(64, "GroupNonUniformBallot", sg & SALVO_SUBGROUP_BALLOT);
        CAP(65, "GroupNonUniformShuffle", sg & SALVO_SUBGROUP_SHUFFLE);
        CAP(66, "GroupNonUniformShuffleRelative", sg & SALVO_SUBGROUP_SHUFFLE_RELATIVE);
        CAP(67, "GroupNonUniformClustered", sg & SALVO_SUBGROUP_CLUSTERED);
        CAP(68, "GroupNonUniformQuad", sg & SALVO_SUBGROUP_QUAD);
        NEVER(4423, "SubgroupBallotKHR");
        NEVER(4427, "DrawParameters");
        NEVER(4428, "WorkgroupMemoryExplicitLayoutKHR");
        NEVER(4429, "WorkgroupMemoryExplicitLayout8BitAccessKHR");
        NEVER(4430, "WorkgroupMemoryExplicitLayout16BitAccessKHR");
        NEVER(4431, "SubgroupVoteKHR");
        CAP(4433, "StorageBuffer16BitAccess", f->storage_buffer_16bit);
        CAP(4434, "UniformAndStorageBuffer16BitAccess", f->uniform_buffer_16bit);
        CAP(4435, "StoragePushConstant16", f->push_constant_16bit);
        CAP(4437, "DeviceGroup", true);
        CAP(4441, "VariablePointersStorageBuffer", f->variable_pointers_storage_buffer);
        CAP(4442, "VariablePointers", f->variable_pointers);
        CAP(4448, "StorageBuffer8BitAccess", f->storage_buffer_8bit);
        CAP(4449, "UniformAndStorageBuffer8BitAccess", f->uniform_buffer_8bit);
        CAP(4450, "StoragePushConstant8", f->push_constant_8bit);
        CAP(4464, "DenormPreserve", v12);
        CAP(4465, "DenormFlushToZero", v12);
        CAP(4466, "SignedZeroInfNanPreserve", v12);
        CAP(4467, "RoundingModeRTE", v12);
        CAP(4468, "RoundingModeRTZ", v12);
        NEVER(4471, "RayQueryProvisionalKHR");
        NEVER(4472, "RayQueryKHR");
        NEVER(4479, "RayTracingKHR");
        NEVER(5055, "ShaderClockKHR");
        NEVER(5301, "ShaderNonUniform");
        NEVER(5302, "RuntimeDescriptorArray");
        NEVER(5306, "UniformBufferArrayNonUniformIndexing");
        NEVER(5308, "StorageBufferArrayNonUniformIndexing");
        CAP(5345, "VulkanMemoryModel", f->vulkan_memory_model);
        CAP(5346, "VulkanMemoryModelDeviceScope", f->vulkan_memory_model_device_scope);
        CAP(5347, "PhysicalStorageBufferAddresses", f->buffer_device_address);
        NEVER(5350, "ComputeDerivativeGroupLinearNV");
        NEVER(5357, "CooperativeMatrixNV");
        NEVER(5288, "ComputeDerivativeGroupQuadsNV");
        NEVER(5297, "GroupNonUniformPartitionedNV");
        CAP(6016, "DotProductInputAll", f->integer_dot_product);
        CAP(6017, "DotProductInput4x8Bit", f->integer_dot_product);
        CAP(6018, "DotProductInput4x8BitPacked", f->integer_dot_product);
        CAP(6019, "DotProduct", f->integer_dot_product);
        CAP(6033, "AtomicFloat32AddEXT", f->buffer_float32_atomic_add);
        CAP(6034, "AtomicFloat64AddEXT", f->buffer_float64_atomic_add);
        NEVER(6022, "CooperativeMatrixKHR");
        NEVER(5116, "BFloat16TypeKHR");
    default:
        return false;
    }
#undef CAP
#undef NEVER
}

/* Whether the module's SPIR-V version (its header's version word) is
 * newer than the device's Vulkan version takes, with why. Asked before
 * the validator, which would call such a module invalid for this Vulkan:
 * it is valid, the device just cannot run it. An application's own device
 * may have enabled what salvo cannot see (VK_KHR_spirv_1_4): its kernels
 * are its own to check. */
static bool version_refused(const salvo_device_info *in, uint32_t version, char *why,
                            size_t why_size)
{
    uint32_t minor = (in->api_version >> 12) & 0x3ffu;
    uint32_t spirv_max = minor >= 3 ? 0x10600u : minor == 2 ? 0x10500u : 0x10300u;
    if (!in->features.checked || version <= spirv_max)
        return false;
    snprintf(why, why_size, "SPIR-V %u.%u is newer than Vulkan 1.%u accepts (%u.%u)",
             (version >> 16) & 0xffu, (version >> 8) & 0xffu, minor, spirv_max >> 16,
             (spirv_max >> 8) & 0xffu);
    return true;
}

/* Why the device cannot run the module, into why; false when it can. A
 * pipeline made from such a module is invalid usage in Vulkan, so the
 * driver would give no reason (or crash): the refusal has to come first. */
static bool module_refused(const salvo_device_info *in, const reflect_module *m, char *why,
                           size_t why_size)
{
    const salvo_device_features *f = &in->features;
    uint32_t minor = (in->api_version >> 12) & 0x3ffu;
    /* An application's own device may have enabled what salvo cannot see
     * (features): its kernels are its own to check. */
    if (f->checked) {
        if (version_refused(in, m->spirv_version, why, why_size))
            return true;
        for (uint32_t i = 0; i < m->capability_count; i++) {
            const char *name = NULL;
            bool offered = false, never = false;
            if (!capability_known(in, m->capabilities[i], &name, &offered, &never)) {
                /* Not one salvo enables anything for: named where SPIR-V
                 * has a name for it, the number beside it either way. */
                const char *spv = spirv_capability_name(m->capabilities[i]);
                if (spv)
                    snprintf(why, why_size,
                             "needs capability %s (SPIR-V capability %u), which salvo does not "
                             "support",
                             spv, m->capabilities[i]);
                else
                    snprintf(why, why_size,
                             "needs SPIR-V capability %u (unknown), which salvo does not know",
                             m->capabilities[i]);
                return true;
            }
            if (!offered) {
                snprintf(why, why_size,
                         never ? "needs capability %s, which salvo does not support"
                             : "needs capability %s, which the device does not offer",
                         name);
                return true;
            }
        }
        if (m->unknown_extension[0]) {
            snprintf(why, why_size, "needs SPIR-V extension %s, which salvo does not know",
                     m->unknown_extension);
            return true;
        }
        /* SPV_KHR_non_semantic_info also comes with
         * VK_KHR_shader_non_semantic_info before 1.3. */
        bool needs_12 = (m->extensions & REFLECT_EXT_VULKAN_1_2) && minor < 2;
        bool needs_13 = (m->extensions & REFLECT_EXT_VULKAN_1_3) && minor < 3 &&
                        !f->non_semantic_info;
        if (needs_12 || needs_13) {
            snprintf(why, why_size, "needs a SPIR-V extension of Vulkan 1.%u; the device has 1.%u",
                     needs_13 ? 3u : 2u, minor);
            return true;
        }
        uint32_t modes = m->float_controls & ~f->float_controls;
        if (modes) {
            static const char *const mode_names[] = {"DenormPreserve", "DenormFlushToZero",
                                                     "SignedZeroInfNanPreserve",
                                                     "RoundingModeRTE", "RoundingModeRTZ"};
            unsigned bit = (unsigned)__builtin_ctz(modes);
            snprintf(why, why_size,
                     "uses execution mode %s for %u-bit floats, which the device does not offer",
                     mode_names[bit / 3], 16u << (bit % 3));
            return true;
        }
        if (((m->image_float_atomics & REFLECT_IMAGE_FLOAT_ATOMIC) && !f->image_float32_atomics) ||
            ((m->image_float_atomics & REFLECT_IMAGE_FLOAT_ADD) && !f->image_float32_atomic_add)) {
            snprintf(why, why_size,
                     "uses a 32-bit float atomic %s on a storage image, which the device does "
                     "not offer (%s)",
                     (m->image_float_atomics & REFLECT_IMAGE_FLOAT_ATOMIC) &&
                             !f->image_float32_atomics
                         ? "load, store or exchange"
                         : "add",
                     (m->image_float_atomics & REFLECT_IMAGE_FLOAT_ATOMIC) &&
                             !f->image_float32_atomics
                         ? "shaderImageFloat32Atomics"
                         : "shaderImageFloat32AtomicAdd");
            return true;
        }
        if (m->local_size_id && !f->maintenance4) {
            snprintf(why, why_size,
                     "uses the LocalSizeId execution mode, which needs maintenance4; the device "
                     "does not offer it");
            return true;
        }
    }
    /* Lengths made of spec constant expressions are left to the driver. */
    if (m->workgroup_sizing != REFLECT_SIZE_UNKNOWN &&
        m->workgroup_memory > in->max_workgroup_memory) {
        snprintf(why, why_size,
                 "declares %u bytes of workgroup memory; the device allows %u",
                 m->workgroup_memory, in->max_workgroup_memory);
        return true;
    }
    return false;
}

/* The tag each printf format of kernel name starts with (see
 * ACCEL_PRINTF_TAG_OPEN): the layer formats the tag with the line, so a
 * '%' of the name is doubled, and the tag's own characters may not
 * appear in it. Cut short to fit size. */
static void printf_prefix(const char *name, char *out, size_t size)
{
    size_t at = 0;
    out[at++] = ACCEL_PRINTF_TAG_OPEN;
    for (const char *p = name; *p && at + 3 < size; p++) {
        if (*p == '%')
            out[at++] = '%';
        out[at++] = *p == ACCEL_PRINTF_TAG_OPEN || *p == ACCEL_PRINTF_TAG_CLOSE ? '?' : *p;
    }
    out[at++] = ACCEL_PRINTF_TAG_CLOSE;
    out[at] = '\0';
}

/* The kernel from a module: reflect, check against the device, build. */
static salvo_status kernel_build(salvo_device *dev, const salvo_kernel_desc *desc,
                                 const uint32_t *spirv, size_t spirv_size, const char *entry,
                                 const char *name, bool validate, salvo_kernel **out)
{
    char reason[256];
    salvo_status st;
    /* Validation first, where it is on: a module that is not valid SPIR-V
     * is an invalid argument, whatever it declares (an unknown capability
     * in a broken module is not a capability the device lacks). Only the
     * version is asked before it, for the reason version_refused gives. */
    if (spirv_size >= 8 && spirv[0] == 0x07230203u &&
        version_refused(&dev->info, spirv[1], reason, sizeof reason))
        return DEV_FAIL(dev, SALVO_ERROR_UNSUPPORTED, "kernel '%s': %s", name, reason);
    if (validate && dev->spirv_validate) {
        char why[SALVO_ERROR_MAX - 128];
        st = spirv_check(spirv, spirv_size, dev->info.api_version, why, sizeof why);
        if (st != SALVO_OK)
            return DEV_FAIL(dev, st, "kernel '%s': %s", name, why);
    }
    salvo_kernel *k = salvo_mem_calloc(dev->alloc, 1, sizeof *k + desc->spec_constant_count);
    if (!k)
        return DEV_FAIL(dev, SALVO_ERROR_OUT_OF_HOST_MEMORY, "kernel '%s': out of host memory",
                        name);
    /* Each spec constant's width, for Vulkan: a byte each, after the
     * kernel in its allocation, so that every way out frees it. */
    uint8_t *sizes = (uint8_t *)(k + 1);
    st = reflect_spirv_specialized(spirv, spirv_size, entry, desc->spec_constants,
                                   desc->spec_constant_count, sizes, &k->ek.refl, reason,
                                   sizeof reason);
    if (st != SALVO_OK) {
        salvo_mem_free(dev->alloc, k);
        return DEV_FAIL(dev, st, "kernel '%s': %s", name, reason);
    }
    if (module_refused(&dev->info, &k->ek.refl, reason, sizeof reason)) {
        salvo_mem_free(dev->alloc, k);
        return DEV_FAIL(dev, SALVO_ERROR_UNSUPPORTED, "kernel '%s': %s", name, reason);
    }
    accel_pipeline_binding pb[SALVO_MAX_BINDINGS];
    for (uint32_t i = 0; i < k->ek.refl.binding_count; i++) {
        const reflect_binding *b = &k->ek.refl.bindings[i];
        if (b->set != 0) {
            /* The message first: b lives in k. */
            st = DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                          "kernel '%s': binding %u is in descriptor set %u; only set 0 is "
                          "supported",
                          name, b->binding, b->set);
            salvo_mem_free(dev->alloc, k);
            return st;
        }
        pb[i] = (accel_pipeline_binding){
            .binding = b->binding, .element = b->element, .count = b->count, .uniform = b->uniform,
            .kind = b->kind};
    }
    if (k->ek.refl.binding_count > dev->info.max_bindings) {
        st = DEV_FAIL(dev, SALVO_ERROR_UNSUPPORTED,
                      "kernel '%s': binds %u buffers (each array element counts); the device "
                      "allows %u",
                      name, k->ek.refl.binding_count, dev->info.max_bindings);
        salvo_mem_free(dev->alloc, k);
        return st;
    }
    uint32_t uniforms = 0;
    for (uint32_t i = 0; i < k->ek.refl.binding_count; i++)
        uniforms += k->ek.refl.bindings[i].uniform;
    if (dev->caps.max_uniform_bindings && uniforms > dev->caps.max_uniform_bindings) {
        st = DEV_FAIL(dev, SALVO_ERROR_UNSUPPORTED,
                      "kernel '%s': binds %u uniform blocks (each array element counts); the "
                      "device allows %u",
                      name, uniforms, dev->caps.max_uniform_bindings);
        salvo_mem_free(dev->alloc, k);
        return st;
    }
    if (((k->ek.refl.push_constant_size + 3u) & ~3u) > dev->info.max_push_constants_size) {
        st = DEV_FAIL(dev, SALVO_ERROR_UNSUPPORTED,
                      "kernel '%s': a push-constant block of %u bytes; the device allows %u", name,
                      k->ek.refl.push_constant_size, dev->info.max_push_constants_size);
        salvo_mem_free(dev->alloc, k);
        return st;
    }
    uint32_t ls[3]; /* k is freed before the message is made */
    memcpy(ls, k->ek.refl.local_size, sizeof ls);
    const salvo_device_info *in = &dev->info;
    if (ls[0] == 0 || ls[1] == 0 || ls[2] == 0 || ls[0] > in->max_workgroup_size[0] ||
        ls[1] > in->max_workgroup_size[1] || ls[2] > in->max_workgroup_size[2] ||
        (uint64_t)ls[0] * ls[1] * ls[2] > in->max_workgroup_invocations) {
        salvo_mem_free(dev->alloc, k);
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "kernel '%s': local size %u x %u x %u is outside the device's limits "
                        "(1..%u x 1..%u x 1..%u, %u invocations)",
                        name, ls[0], ls[1], ls[2], in->max_workgroup_size[0],
                        in->max_workgroup_size[1], in->max_workgroup_size[2],
                        in->max_workgroup_invocations);
    }
    k->ek.name = salvo_mem_strdup(dev->alloc, name);
    if (!k->ek.name) {
        salvo_mem_free(dev->alloc, k);
        return DEV_FAIL(dev, SALVO_ERROR_OUT_OF_HOST_MEMORY, "kernel '%s': out of host memory",
                        name);
    }
    /* With shader printf on, each format string starts with a tag naming
     * the kernel, so that each line printed says whose it is. */
    uint32_t *tagged = NULL;
    size_t tagged_size = 0;
    if (dev->caps.shader_printf) {
        char prefix[2 * SALVO_NAME_MAX + 3];
        printf_prefix(name, prefix, sizeof prefix);
        st = spirv_printf_tag(dev->alloc, spirv, spirv_size, prefix, &tagged, &tagged_size);
        if (st != SALVO_OK) {
            salvo_mem_free(dev->alloc, k->ek.name);
            salvo_mem_free(dev->alloc, k);
            return DEV_FAIL(dev, st, "kernel '%s': %s", name,
                            st == SALVO_ERROR_OUT_OF_HOST_MEMORY
                                ? "out of host memory"
                                : "a printf format string is not a terminated OpString");
        }
    }
    accel_pipeline_desc pd = {
        .spirv = tagged ? tagged : spirv,
        .spirv_size = tagged ? tagged_size : spirv_size,
        .entry = entry,
        .bindings = pb,
        .binding_count = k->ek.refl.binding_count,
        .push_constant_size = k->ek.refl.push_constant_size,
        .spec_constants = desc->spec_constants,
        .spec_constant_count = desc->spec_constant_count,
        .spec_constant_sizes = sizes,
        .name = name,
    };
    accel_result r = VT(dev)->pipeline_create(SELF(dev), dev->adev, &pd, &k->ek.pipe);
    salvo_mem_free(dev->alloc, tagged);
    if (r != ACCEL_SUCCESS) {
        salvo_mem_free(dev->alloc, k->ek.name);
        salvo_mem_free(dev->alloc, k);
        if (r == ACCEL_ERROR_DEVICE_LOST) {
            salvo_mutex_lock(&dev->q.lock);
            queue_mark_lost_locked(&dev->q);
            salvo_mutex_unlock(&dev->q.lock);
        }
        return DEV_FAIL(dev, salvo_status_from_accel(r), "kernel '%s': pipeline creation failed (%s)",
                        name, accel_result_name(r));
    }
    k->dev = dev;
    resource_init(&k->res, RESOURCE_KERNEL, kernel_release, 0);
    salvo_mutex_lock(&dev->q.lock);
    live_link_locked(dev, &k->res);
    salvo_mutex_unlock(&dev->q.lock);
    COUNT_ADD(dev, live_kernels, 1);
    salvo_clear_error();
    *out = k;
    return SALVO_OK;
}

salvo_status salvo_kernel_create(salvo_device *dev, const salvo_kernel_desc *desc,
                                 salvo_kernel **out)
{
    if (!out)
        return SALVO_FAIL(dev ? &dev->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "kernel_create: out is NULL");
    *out = NULL;
    if (!dev || !desc)
        return SALVO_FAIL(dev ? &dev->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "kernel_create: %s is NULL", dev ? "desc" : "device");
    const char *entry = desc->entry ? desc->entry : "main";
    const char *name = desc->name ? desc->name : entry;
    if (desc->glsl && (desc->spirv || desc->spirv_size))
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "kernel '%s': both SPIR-V and GLSL given; give exactly one", name);
    if (!desc->glsl && !desc->spirv)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "kernel '%s': neither SPIR-V nor GLSL given; give exactly one", name);
    if (desc->glsl && !*desc->glsl)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "kernel '%s': GLSL source is empty",
                        name);
    if (desc->spirv && (desc->spirv_size == 0 || desc->spirv_size % 4))
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "kernel '%s': SPIR-V must be a non-empty whole number of words", name);
    if (desc->spec_constant_count && !desc->spec_constants)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "kernel '%s': spec_constants is NULL", name);
    for (uint32_t i = 0; i < desc->spec_constant_count; i++)
        for (uint32_t j = 0; j < i; j++)
            if (desc->spec_constants[i].id == desc->spec_constants[j].id)
                return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                                "kernel '%s': spec constant %u is given twice", name,
                                desc->spec_constants[i].id);
    if (device_is_lost(dev))
        return device_lost_error(dev);
    if (desc->spirv)
        return kernel_build(dev, desc, desc->spirv, desc->spirv_size, entry, name, true, out);

    /* Room for the compiler's messages beside salvo's own prefix. */
    char reason[SALVO_ERROR_MAX - 128];
    uint32_t *words = NULL;
    size_t size = 0;
    salvo_status st = glsl_compile(dev->alloc, desc->glsl, name, &words, &size, reason,
                                   sizeof reason);
    if (st != SALVO_OK)
        return DEV_FAIL(dev, st, "kernel %s", reason);
    /* glslang's own output: not validated again. */
    st = kernel_build(dev, desc, words, size, entry, name, false, out);
    salvo_mem_free(dev->alloc, words);
    return st;
}

salvo_status salvo_kernel_info_get(const salvo_kernel *k, salvo_kernel_info *out)
{
    if (!k || !out)
        return SALVO_FAIL(k ? &k->dev->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "kernel_info: %s is NULL", k ? "out" : "kernel");
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", k->ek.name);
    /* One entry per binding: an array's elements share theirs. */
    for (uint32_t i = 0; i < k->ek.refl.binding_count; i++) {
        const reflect_binding *b = &k->ek.refl.bindings[i];
        if (b->element != 0)
            continue;
        out->bindings[out->binding_count++] = (salvo_kernel_binding){
            .binding = b->binding,
            .access = b->access,
            .uniform = b->uniform,
            .count = b->count,
            .kind = (salvo_binding_kind)b->kind,
            .image_type = (salvo_image_type)b->image_type,
            .image_format = (salvo_format)b->image_format,
        };
    }
    out->push_constant_size = k->ek.refl.push_constant_size;
    memcpy(out->local_size, k->ek.refl.local_size, sizeof out->local_size);
    salvo_clear_error();
    return SALVO_OK;
}

void salvo_kernel_destroy(salvo_kernel *k)
{
    if (k)
        device_let_go(k->dev, &k->res);
}
