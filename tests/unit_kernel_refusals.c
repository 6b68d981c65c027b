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
#include "copy.spv.h"
#include "local_size_id.spv.h"
#include "reflect_mixed.spv.h"
#include "reflect_sets.spv.h"
#include "support/fake_accel.h"
#include "uses_float64.spv.h"
#include "workgroup_memory.spv.h"

/* Creates the kernel on a device of f (then frees f): want, and a message
 * saying says (says NULL: created, and destroyed again). */
static void refused_on(fake_accel *f, const uint32_t *spirv, size_t size, salvo_status want,
                       const char *says)
{
    salvo_device *dev = NULL;
    assert_int_equal(device_create_with_accel(NULL, fake_accel_get(f), &dev), SALVO_OK);
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

/* A capability salvo has no name for: refused by number. */
static void test_unknown_capability(void **state)
{
    (void)state;
    uint32_t words[sizeof copy_spv / 4];
    memcpy(words, copy_spv, sizeof words);
    bool patched = false;
    for (size_t at = 5; at < sizeof words / 4 && !patched; at += words[at] >> 16)
        if (words[at] == (2u << 16 | 17u) && words[at + 1] == 1u) { /* OpCapability Shader */
            words[at + 1] = 9999u;
            patched = true;
        }
    assert_true(patched);
    refused(words, sizeof words, SALVO_ERROR_UNSUPPORTED,
            "needs SPIR-V capability 9999, which salvo does not know");
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capability_not_offered),
        cmocka_unit_test(test_capabilities_unchecked),
        cmocka_unit_test(test_unknown_capability),
        cmocka_unit_test(test_local_size_id_needs_maintenance4),
        cmocka_unit_test(test_workgroup_memory_limit),
        cmocka_unit_test(test_set_other_than_0),
        cmocka_unit_test(test_push_over_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
