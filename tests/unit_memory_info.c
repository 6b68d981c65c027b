/* salvo_device_memory_info on the fake accelerator (one heap, nothing
 * measured): buffers and images counted as they are made and released,
 * imports not; through the fault decorator; and on an accelerator that
 * reports nothing, the heaps of the device's info. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "accel/accel_fault.h"
#include "api/internal.h"
#include "support/fake_accel.h"

static salvo_device *open_on(fake_accel *f, accel acc)
{
    (void)f;
    salvo_device *dev = NULL;
    assert_int_equal(device_create_with_accel(NULL, acc, &dev), SALVO_OK);
    return dev;
}

static uint64_t allocated(salvo_device *dev)
{
    salvo_memory_info mi;
    assert_int_equal(salvo_device_memory_info(dev, &mi), SALVO_OK);
    assert_int_equal(mi.heap_count, 1);
    assert_false(mi.measured);
    assert_int_equal(mi.heaps[0].budget, mi.heaps[0].size);
    assert_int_equal(mi.heaps[0].usage, mi.heaps[0].allocated);
    return mi.heaps[0].allocated;
}

/* Buffers and images count from their creation until their release has
 * run (after the work that uses them); imported host memory never. */
static void test_counts_what_the_device_holds(void **state)
{
    (void)state;
    fake_accel *f = fake_create();
    assert_non_null(f);
    f->device_memory_limit = 1ull << 30;
    salvo_device *dev = open_on(f, fake_accel_get(f));
    salvo_memory_info mi;
    assert_int_equal(salvo_device_memory_info(dev, &mi), SALVO_OK);
    assert_int_equal(mi.heaps[0].size, 1ull << 30);
    assert_true(mi.heaps[0].device_local);
    uint64_t base = allocated(dev);

    salvo_buffer *a = NULL, *b = NULL, *imp = NULL;
    assert_int_equal(salvo_buffer_create(dev, 1 << 20, SALVO_DOMAIN_DEVICE, &a), SALVO_OK);
    assert_int_equal(allocated(dev), base + (1 << 20));
    assert_int_equal(salvo_buffer_create(dev, 4096, SALVO_DOMAIN_HOST, &b), SALVO_OK);
    assert_int_equal(allocated(dev), base + (1 << 20) + 4096);
    void *host = aligned_alloc(4096, 8192);
    assert_non_null(host);
    assert_int_equal(salvo_buffer_import_host(dev, host, 8192, SALVO_DOMAIN_HOST, &imp), SALVO_OK);
    assert_int_equal(allocated(dev), base + (1 << 20) + 4096);
    salvo_image *img = NULL;
    salvo_image_desc id = {.type = SALVO_IMAGE_2D, .format = SALVO_FORMAT_R32_FLOAT,
                           .width = 64, .height = 16};
    assert_int_equal(salvo_image_create(dev, &id, &img), SALVO_OK);
    assert_int_equal(allocated(dev), base + (1 << 20) + 4096 + 64 * 16 * 4);

    salvo_buffer_destroy(a);
    salvo_image_destroy(img);
    salvo_buffer_destroy(imp);
    assert_int_equal(salvo_device_synchronize(dev), SALVO_OK);
    assert_int_equal(allocated(dev), base + 4096);
    salvo_buffer_destroy(b);
    assert_int_equal(salvo_device_synchronize(dev), SALVO_OK);
    assert_int_equal(allocated(dev), base);

    assert_int_equal(salvo_device_memory_info(NULL, &mi), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_device_memory_info(dev, NULL), SALVO_ERROR_INVALID_ARGUMENT);
    salvo_device_destroy(dev);
    free(host);
    assert_int_equal(fake_live_total(f), 0);
    assert_int_equal(fake_illegal_total(f), 0);
    fake_free(f);
}

/* The fault decorator passes the query through, after an injected loss
 * too: the memory is still held until it is freed. */
static void test_through_the_fault_decorator(void **state)
{
    (void)state;
    fake_accel *f = fake_create();
    assert_non_null(f);
    accel wrapped;
    fault_accel *fa = NULL;
    assert_true(accel_fault_wrap(NULL, fake_accel_get(f), &wrapped, &fa));
    assert_true(accel_fault_add(fa, "submit", 1, ACCEL_ERROR_DEVICE_LOST, FAULT_LOST));
    salvo_device *dev = open_on(f, wrapped);
    uint64_t base = allocated(dev);
    salvo_buffer *a = NULL;
    assert_int_equal(salvo_buffer_create(dev, 1 << 16, SALVO_DOMAIN_DEVICE, &a), SALVO_OK);
    assert_int_equal(allocated(dev), base + (1 << 16));
    salvo_stream *s = NULL;
    assert_int_equal(salvo_stream_create(dev, NULL, &s), SALVO_OK);
    assert_int_equal(salvo_fill(s, a, 0, 1 << 16, 7), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(s), SALVO_ERROR_DEVICE_LOST);
    assert_true(salvo_device_is_lost(dev));
    assert_int_equal(allocated(dev), base + (1 << 16));
    salvo_stream_destroy(s);
    salvo_buffer_destroy(a);
    salvo_device_destroy(dev);
    assert_int_equal(fake_live_total(f), 0);
    fake_free(f);
}

/* An accelerator without the entry: the heaps the device reported at
 * open, nothing measured, nothing counted. */
static void test_accelerator_without_it(void **state)
{
    (void)state;
    fake_accel *f = fake_create();
    assert_non_null(f);
    accel acc = fake_accel_get(f);
    static accel_vtable without;
    without = *acc.vt;
    without.memory_info = NULL;
    acc.vt = &without;
    salvo_device *dev = open_on(f, acc);
    salvo_device_info di;
    assert_int_equal(salvo_device_info_get(dev, &di), SALVO_OK);
    salvo_memory_info mi;
    assert_int_equal(salvo_device_memory_info(dev, &mi), SALVO_OK);
    assert_false(mi.measured);
    assert_int_equal(mi.heap_count, di.memory_heap_count);
    assert_int_equal(mi.heaps[0].size, di.memory_heaps[0].size);
    assert_int_equal(mi.heaps[0].budget, di.memory_heaps[0].size);
    assert_int_equal(mi.heaps[0].usage, 0);
    assert_int_equal(mi.heaps[0].allocated, 0);
    salvo_device_destroy(dev);
    fake_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_what_the_device_holds),
        cmocka_unit_test(test_through_the_fault_decorator),
        cmocka_unit_test(test_accelerator_without_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
