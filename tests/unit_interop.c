/*
 * salvo_vulkan.h on accelerators without native handles: the fake leaves
 * the vtable's native_handles entry NULL, and the fault decorator over it
 * passes the absence through. Both must report SALVO_ERROR_UNSUPPORTED and
 * leave the outputs cleared, never crash or hand out garbage. (The Vulkan
 * accelerator's handles are checked on a real device by tests/embed/.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "accel/accel_fault.h"
#include "api/internal.h"
#include "salvo/salvo_vulkan.h"
#include "support/fake_accel.h"

/* Device on acc, one buffer; every interop call unsupported; all released.
 * fa (optional): the fault decorator inside acc, which must have injected
 * nothing; read before the device is destroyed, since that frees it. */
static void expect_unsupported(fake_accel *f, accel acc, fault_accel *fa)
{
    salvo_device *dev = NULL;
    assert_int_equal(device_create_with_accel(NULL, acc, &dev), SALVO_OK);
    salvo_buffer *buf = NULL;
    assert_int_equal(salvo_buffer_create(dev, 256, SALVO_DOMAIN_DEVICE, &buf), SALVO_OK);

    salvo_vk_handles h;
    memset(&h, 0xab, sizeof h);
    assert_int_equal(salvo_device_vk_handles(dev, &h), SALVO_ERROR_UNSUPPORTED);
    assert_non_null(strstr(salvo_last_error(), "device_vk_handles"));
    assert_null(h.instance);
    assert_null(h.physical_device);
    assert_null(h.device);
    assert_null(h.queue);
    assert_int_equal(h.queue_family_index, 0);
    assert_null(h.get_instance_proc_addr);

    VkBuffer vb = (VkBuffer)(uintptr_t)0x1234;
    assert_int_equal(salvo_buffer_vk_handle(buf, &vb), SALVO_ERROR_UNSUPPORTED);
    assert_true(vb == VK_NULL_HANDLE);
    assert_non_null(strstr(salvo_last_error(), "buffer_vk_handle"));

    /* The failure is not a device failure: the device works on. */
    assert_false(salvo_device_is_lost(dev));
    assert_int_equal(salvo_device_synchronize(dev), SALVO_OK);

    if (fa)
        assert_int_equal(accel_fault_injected(fa), 0);
    salvo_buffer_destroy(buf);
    salvo_device_destroy(dev);
    assert_int_equal(fake_live_total(f), 0);
    assert_int_equal(fake_illegal_total(f), 0);
}

static void test_fake_has_no_handles(void **state)
{
    (void)state;
    fake_accel *f = fake_create();
    assert_non_null(f);
    expect_unsupported(f, fake_accel_get(f), NULL);
    fake_free(f);
}

static void test_fault_decorator_passes_absence_through(void **state)
{
    (void)state;
    fake_accel *f = fake_create();
    assert_non_null(f);
    accel wrapped;
    fault_accel *fa = NULL;
    assert_true(accel_fault_wrap(NULL, fake_accel_get(f), &wrapped, &fa));
    /* A rule on another operation must not touch this path. */
    assert_true(accel_fault_add(fa, "submit", 1, ACCEL_ERROR_DEVICE_LOST, FAULT_ALWAYS));
    expect_unsupported(f, wrapped, fa);
    fake_free(f);
}

static void test_null_arguments(void **state)
{
    (void)state;
    salvo_vk_handles h;
    VkBuffer vb;
    assert_int_equal(salvo_device_vk_handles(NULL, &h), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_device_vk_handles(NULL, NULL), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_buffer_vk_handle(NULL, &vb), SALVO_ERROR_INVALID_ARGUMENT);
    assert_true(vb == VK_NULL_HANDLE);
    assert_int_equal(salvo_buffer_vk_handle(NULL, NULL), SALVO_ERROR_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fake_has_no_handles),
        cmocka_unit_test(test_fault_decorator_passes_absence_through),
        cmocka_unit_test(test_null_arguments),
    };
    return cmocka_run_group_tests_name("interop", tests, NULL, NULL);
}
