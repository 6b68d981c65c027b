/* Kernels the device cannot take are refused with a message naming why,
 * built from what the refused module declared (the address sanitizer job
 * runs these paths: the message must not read what was freed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "api/internal.h"
#include "add.spv.h"
#include "api/spirv_check.h"
#include "copy.spv.h"
#include "image_float_atomics.spv.h"
#include "local_size_id.spv.h"
#include "reflect_mixed.spv.h"
#include "packed_format.spv.h"
#include "reflect_sets.spv.h"
#include "shadow_sampler.spv.h"
#include "shadow_separate.spv.h"
#include "support/fake_accel.h"
#include "uses_float64.spv.h"
#include "workgroup_memory.spv.h"

/* Creates the kernel on a device of f made with flags (then frees f):
 * want, and a message saying says (says NULL: created, and destroyed
 * again). */
static void refused_flags(fake_accel *f, uint32_t flags, const uint32_t *spirv, size_t size,
                          salvo_status want, const char *says)
{
    salvo_device *dev = NULL;
    salvo_device_desc dd = {.flags = flags};
    assert_int_equal(device_create_with_accel(&dd, fake_accel_get(f), &dev), SALVO_OK);
    salvo_kernel_desc kd = {.spirv = spirv, .spirv_size = size, .name = "refused"};
    salvo_kernel *k = (salvo_kernel *)&kd; /* overwritten either way */
    assert_int_equal(salvo_kernel_create(dev, &kd, &k), want);
    if (!says) {
        assert_non_null(k);
        salvo_kernel_destroy(k);
    } else {
        assert_null(k);
        if (!strstr(salvo_last_error(), says))
            fail_msg("message '%s' does not say '%s'", salvo_last_error(), says);
    }
    salvo_stats s;
    assert_int_equal(salvo_device_stats(dev, &s), SALVO_OK);
    assert_int_equal(s.live_kernels, 0);
    salvo_device_destroy(dev);
    assert_int_equal(fake_live_total(f), 0);
    assert_int_equal(fake_illegal_total(f), 0);
    fake_free(f);
}

static void refused_on(fake_accel *f, const uint32_t *spirv, size_t size, salvo_status want,
                       const char *says)
{
    refused_flags(f, 0, spirv, size, want, says);
}

static fake_accel *fake(void)
{
    fake_accel *f = fake_create();
    assert_non_null(f);
    return f;
}

static void refused(const uint32_t *spirv, size_t size, salvo_status want, const char *says)
{
    refused_on(fake(), spirv, size, want, says);
}

/* A binding outside descriptor set 0. */
static void test_set_other_than_0(void **state)
{
    (void)state;
    refused(reflect_sets_spv, sizeof reflect_sets_spv, SALVO_ERROR_INVALID_ARGUMENT,
            "binding 0 is in descriptor set 1");
}

/* A push block over the device's limit (the fake's: 128 bytes; this
 * kernel's: 148). */
static void test_push_over_limit(void **state)
{
    (void)state;
    refused(reflect_mixed_spv, sizeof reflect_mixed_spv, SALVO_ERROR_UNSUPPORTED,
            "a push-constant block of 148 bytes; the device allows 128");
}

/* A capability the device lacks is named; with the feature, the same
 * module builds. */
static void test_capability_not_offered(void **state)
{
    (void)state;
    fake_accel *f = fake();
    f->features.shader_float64 = false;
    refused_on(f, uses_float64_spv, sizeof uses_float64_spv, SALVO_ERROR_UNSUPPORTED,
               "kernel 'refused': needs capability Float64, which the device does not offer");
    refused(uses_float64_spv, sizeof uses_float64_spv, SALVO_OK, NULL);
}

/* On a device whose features salvo cannot see (the application's own),
 * nothing is refused for them. */
static void test_capabilities_unchecked(void **state)
{
    (void)state;
    fake_accel *f = fake();
    f->features = (salvo_device_features){.checked = false};
    refused_on(f, uses_float64_spv, sizeof uses_float64_spv, SALVO_OK, NULL);
}

/* copy.comp with its OpCapability Shader declaring capability cap
 * instead, into words (sizeof copy_spv bytes). */
static void copy_declaring(uint32_t *words, uint32_t cap)
{
    memcpy(words, copy_spv, sizeof copy_spv);
    bool patched = false;
    for (size_t at = 5; at < sizeof copy_spv / 4 && !patched; at += words[at] >> 16)
        if (words[at] == (2u << 16 | 17u) && words[at + 1] == 1u) { /* OpCapability Shader */
            words[at + 1] = cap;
            patched = true;
        }
    assert_true(patched);
}

/* A capability SPIR-V has no name for: refused by number, said unknown. */
static void test_unknown_capability(void **state)
{
    (void)state;
    uint32_t words[sizeof copy_spv / 4];
    copy_declaring(words, 9999u);
    refused(words, sizeof words, SALVO_ERROR_UNSUPPORTED,
            "needs SPIR-V capability 9999 (unknown), which salvo does not know");
}

/* A capability SPIR-V names but salvo enables nothing for: named, with
 * its number beside the name. */
static void test_capability_named(void **state)
{
    (void)state;
    uint32_t words[sizeof copy_spv / 4];
    copy_declaring(words, 51u);
    refused(words, sizeof words, SALVO_ERROR_UNSUPPORTED,
            "needs capability DerivativeControl (SPIR-V capability 51), which salvo does not "
            "support");
    copy_declaring(words, 5288u);
    refused(words, sizeof words, SALVO_ERROR_UNSUPPORTED,
            "needs capability ComputeDerivativeGroupQuadsNV, which salvo does not support");
    copy_declaring(words, 5116u);
    refused(words, sizeof words, SALVO_ERROR_UNSUPPORTED,
            "needs capability BFloat16TypeKHR, which salvo does not support");
    copy_declaring(words, 6025u);
    refused(words, sizeof words, SALVO_ERROR_UNSUPPORTED,
            "needs capability BitInstructions (SPIR-V capability 6025)");
}

/* With validation on, a module that is not valid SPIR-V is an invalid
 * argument even where it also declares what the device cannot run; off,
 * the declaration is what is refused. */
static void test_validation_comes_first(void **state)
{
    (void)state;
    if (!spirv_check_available())
        skip();
    uint32_t words[sizeof copy_spv / 4];
    copy_declaring(words, 9999u); /* no such capability: invalid SPIR-V too */
    refused_flags(fake(), SALVO_DEVICE_VALIDATION, words, sizeof words,
                  SALVO_ERROR_INVALID_ARGUMENT, "SPIR-V does not validate for Vulkan 1.3");
    refused_flags(fake(), 0, words, sizeof words, SALVO_ERROR_UNSUPPORTED,
                  "needs SPIR-V capability 9999 (unknown)");
    /* The version still comes before it: a module newer than the device
     * takes is one it cannot run (the validator would say invalid). */
    memcpy(words, copy_spv, sizeof copy_spv);
    words[1] = 0x00010700u;
    refused_flags(fake(), SALVO_DEVICE_VALIDATION, words, sizeof words, SALVO_ERROR_UNSUPPORTED,
                  "SPIR-V 1.7 is newer than Vulkan 1.3 accepts (1.6)");
}

/* Depth-comparison samplers: salvo has no depth formats and no compare
 * samplers, so the layer would fail the dispatch (a view without depth
 * comparison among its format features); refused at creation, by name. */
static void test_depth_comparison_sampler(void **state)
{
    (void)state;
    refused(shadow_sampler_spv, sizeof shadow_sampler_spv, SALVO_ERROR_UNSUPPORTED,
            "kernel 'refused': binding 0: depth-comparison sampler (sampler2DShadow) is not "
            "supported: salvo has no depth formats or compare samplers");
    refused(shadow_separate_spv, sizeof shadow_separate_spv, SALVO_ERROR_UNSUPPORTED,
            "binding 0: depth-comparison sampler (a texture used with samplerShadow) is not "
            "supported");
    /* The same comparison made through an image not declared as a depth
     * image (hand-made: glslang marks them): refused by the instruction. */
    uint32_t words[sizeof shadow_sampler_spv / 4];
    memcpy(words, shadow_sampler_spv, sizeof words);
    bool patched = false;
    for (size_t at = 5; at < sizeof words / 4; at += words[at] >> 16)
        if ((words[at] & 0xffffu) == 25u && words[at + 4] == 1u) { /* OpTypeImage, Depth 1 */
            words[at + 4] = 0u;
            patched = true;
        }
    assert_true(patched);
    refused(words, sizeof words, SALVO_ERROR_UNSUPPORTED,
            "compares with a depth reference (OpImageSampleDrefExplicitLod: a depth-comparison "
            "sampler, sampler2DShadow and the like), which is not supported");
}

/* An image format salvo has no salvo_format for is named as SPIR-V names
 * it; a number SPIR-V has no name for is said unknown. */
static void test_image_format_named(void **state)
{
    (void)state;
    refused(packed_format_spv, sizeof packed_format_spv, SALVO_ERROR_UNSUPPORTED,
            "binding 0: image format R11fG11fB10f (SPIR-V ImageFormat 8) has no salvo format");
    uint32_t words[sizeof packed_format_spv / 4];
    memcpy(words, packed_format_spv, sizeof words);
    bool patched = false;
    for (size_t at = 5; at < sizeof words / 4; at += words[at] >> 16)
        if ((words[at] & 0xffffu) == 25u && words[at + 8] == 8u) { /* OpTypeImage R11fG11fB10f */
            words[at + 8] = 99u;
            patched = true;
        }
    assert_true(patched);
    refused(words, sizeof words, SALVO_ERROR_UNSUPPORTED,
            "binding 0: image format unknown (SPIR-V ImageFormat 99) has no salvo format");
}

/* LocalSizeId (a SPIR-V 1.6 module from glslang) needs maintenance4. */
static void test_local_size_id_needs_maintenance4(void **state)
{
    (void)state;
    fake_accel *f = fake();
    f->features.maintenance4 = false;
    refused_on(f, local_size_id_spv, sizeof local_size_id_spv, SALVO_ERROR_UNSUPPORTED,
               "uses the LocalSizeId execution mode, which needs maintenance4");
    refused(local_size_id_spv, sizeof local_size_id_spv, SALVO_OK, NULL);
}

/* Float atomics on image texels need features of their own: each is
 * refused, naming it, on a device without it, and runs where offered. */
static void test_image_float_atomics(void **state)
{
    (void)state;
    fake_accel *f = fake();
    f->features.image_float32_atomics = false;
    refused_on(f, image_float_atomics_spv, sizeof image_float_atomics_spv, SALVO_ERROR_UNSUPPORTED,
               "uses a 32-bit float atomic load, store or exchange on a storage image, which the "
               "device does not offer (shaderImageFloat32Atomics)");
    f = fake();
    f->features.image_float32_atomic_add = false;
    refused_on(f, image_float_atomics_spv, sizeof image_float_atomics_spv, SALVO_ERROR_UNSUPPORTED,
               "uses a 32-bit float atomic add on a storage image, which the device does not "
               "offer (shaderImageFloat32AtomicAdd)");
    refused(image_float_atomics_spv, sizeof image_float_atomics_spv, SALVO_OK, NULL);
}

/* Workgroup variables sized as Vulkan sizes them (shaders/
 * workgroup_memory.comp: 16048 bytes, vec3 array strides of 16 and a
 * struct aligned to 16 included), against the device's limit. */
static void test_workgroup_memory_limit(void **state)
{
    (void)state;
    fake_accel *f = fake();
    f->max_workgroup_memory = 16047;
    refused_on(f, workgroup_memory_spv, sizeof workgroup_memory_spv, SALVO_ERROR_UNSUPPORTED,
               "declares 16048 bytes of workgroup memory; the device allows 16047");
    f = fake();
    f->max_workgroup_memory = 16048;
    refused_on(f, workgroup_memory_spv, sizeof workgroup_memory_spv, SALVO_OK, NULL);
}

/* The local size a kernel reports, made on a fresh fake with the given
 * spec constants. */
static void local_size_with(const uint32_t *spirv, size_t size, const salvo_spec_constant *sc,
                            uint32_t count, uint32_t want_x)
{
    fake_accel *f = fake();
    salvo_device *dev = NULL;
    assert_int_equal(device_create_with_accel(&(salvo_device_desc){0}, fake_accel_get(f), &dev),
                     SALVO_OK);
    salvo_kernel_desc kd = {.spirv = spirv, .spirv_size = size, .name = "sized",
                            .spec_constants = sc, .spec_constant_count = count};
    salvo_kernel *k = NULL;
    salvo_status st = salvo_kernel_create(dev, &kd, &k);
    if (st != SALVO_OK)
        fail_msg("kernel_create: %s: %s", salvo_status_string(st), salvo_last_error());
    salvo_kernel_info ki;
    assert_int_equal(salvo_kernel_info_get(k, &ki), SALVO_OK);
    assert_int_equal(ki.local_size[0], want_x);
    assert_int_equal(ki.local_size[1], 1);
    assert_int_equal(ki.local_size[2], 1);
    salvo_kernel_destroy(k);
    salvo_device_destroy(dev);
    assert_int_equal(fake_live_total(f), 0);
    fake_free(f);
}

/* Only a spec constant the local size is made of overrides it. A constant
 * the module does not declare changes nothing, whatever its id: one with
 * id 0xFFFFFFFF once replaced a literal local size (a value of 0 then had
 * the kernel refused as 0 x 0 x 0). That id is a valid SpecId as well: a
 * local size made of it is overridden by it. */
static void test_local_size_only_from_its_spec_constants(void **state)
{
    (void)state;
    const salvo_spec_constant stray[2] = {{UINT32_MAX, 0}, {7, 0}};
    local_size_with(copy_spv, sizeof copy_spv, stray, 2, 64); /* local_size_x = 64 */
    const salvo_spec_constant one = {UINT32_MAX, 1};
    local_size_with(copy_spv, sizeof copy_spv, &one, 1, 64);
    const salvo_spec_constant sized[2] = {{UINT32_MAX, 0}, {0, 32}};
    local_size_with(add_spv, sizeof add_spv, sized, 2, 32); /* local_size_x_id = 0 */

    /* add's local size with its SpecId made 0xFFFFFFFF by hand. */
    uint32_t words[sizeof add_spv / 4];
    memcpy(words, add_spv, sizeof words);
    int patched = 0;
    for (size_t at = 5; at < sizeof words / 4; at += words[at] >> 16)
        if (words[at] == (4u << 16 | 71u) && words[at + 2] == 1u) { /* OpDecorate SpecId */
            assert_int_equal(words[at + 3], 0);
            words[at + 3] = UINT32_MAX;
            patched++;
        }
    assert_int_equal(patched, 1);
    local_size_with(words, sizeof words, &sized[1], 1, 1); /* {0, 32} no longer applies: the default */
    const salvo_spec_constant max_id = {UINT32_MAX, 16};
    local_size_with(words, sizeof words, &max_id, 1, 16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capability_not_offered),
        cmocka_unit_test(test_capabilities_unchecked),
        cmocka_unit_test(test_unknown_capability),
        cmocka_unit_test(test_capability_named),
        cmocka_unit_test(test_validation_comes_first),
        cmocka_unit_test(test_depth_comparison_sampler),
        cmocka_unit_test(test_image_format_named),
        cmocka_unit_test(test_local_size_id_needs_maintenance4),
        cmocka_unit_test(test_local_size_only_from_its_spec_constants),
        cmocka_unit_test(test_image_float_atomics),
        cmocka_unit_test(test_workgroup_memory_limit),
        cmocka_unit_test(test_set_other_than_0),
        cmocka_unit_test(test_push_over_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
