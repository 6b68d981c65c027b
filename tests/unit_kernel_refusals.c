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
#include "reflect_mixed.spv.h"
#include "reflect_sets.spv.h"
#include "support/fake_accel.h"

static void refused(const uint32_t *spirv, size_t size, salvo_status want, const char *says)
{
    fake_accel *f = fake_create();
    assert_non_null(f);
    salvo_device *dev = NULL;
    assert_int_equal(device_create_with_accel(NULL, fake_accel_get(f), &dev), SALVO_OK);
    salvo_kernel_desc kd = {.spirv = spirv, .spirv_size = size, .name = "refused"};
    salvo_kernel *k = (salvo_kernel *)&kd; /* must come back NULL */
    assert_int_equal(salvo_kernel_create(dev, &kd, &k), want);
    assert_null(k);
    if (!strstr(salvo_last_error(), says))
        fail_msg("message '%s' does not say '%s'", salvo_last_error(), says);
    salvo_stats s;
    assert_int_equal(salvo_device_stats(dev, &s), SALVO_OK);
    assert_int_equal(s.live_kernels, 0);
    salvo_device_destroy(dev);
    assert_int_equal(fake_live_total(f), 0);
    assert_int_equal(fake_illegal_total(f), 0);
    fake_free(f);
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
            "148 push bytes exceed the device's 32 / 128");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_other_than_0),
        cmocka_unit_test(test_push_over_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
