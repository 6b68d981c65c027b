/* Host calls and stream transfers on the fake accelerator: the paths a
 * real device does not take on demand. Without timeline semaphores the
 * calls wait for their host side; a host call runs after a refused batch
 * and after device loss (exactly once, dst of a read left alone on loss);
 * a refused call runs nothing; nothing leaks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/internal.h"
#include "support/fake_accel.h"

static void quiet(void *user, salvo_log_level level, const char *file, int line,
                  const char *message)
{
    (void)user, (void)level, (void)file, (void)line, (void)message;
}

static salvo_device *open_fake(fake_accel *f)
{
    salvo_device *dev = NULL;
    salvo_device_desc d = {.log = quiet};
    assert_int_equal(device_create_with_accel(&d, fake_accel_get(f), &dev), SALVO_OK);
    return dev;
}

static _Atomic int runs;

static void count(void *user)
{
    (void)user;
    atomic_fetch_add(&runs, 1);
}

static void close_and_check(fake_accel *f, salvo_device *dev)
{
    salvo_device_destroy(dev);
    assert_int_equal(fake_live_total(f), 0);
    if (fake_illegal_total(f))
        fail_msg("illegal: %s", fake_illegal_last(f));
    fake_free(f);
}

/* No timeline semaphores: a host call returns once fn has run, a read
 * once dst is filled. */
static void without_timelines(void **state)
{
    (void)state;
    fake_accel *f = fake_create();
    f->timeline_semaphores = false;
    salvo_device *dev = open_fake(f);
    salvo_stream *st = NULL;
    salvo_buffer *b = NULL;
    assert_int_equal(salvo_stream_create(dev, NULL, &st), SALVO_OK);
    assert_int_equal(salvo_buffer_create(dev, 1 << 18, SALVO_DOMAIN_DEVICE, &b), SALVO_OK);
    static uint32_t in[1 << 16], out[1 << 16];
    for (uint32_t i = 0; i < 1 << 16; i++)
        in[i] = i * 7;
    atomic_store(&runs, 0);
    assert_int_equal(salvo_stream_write(st, b, 0, in, 100), SALVO_OK);
    assert_int_equal(salvo_stream_write(st, b, 100, (char *)in + 100, sizeof in - 100), SALVO_OK);
    assert_int_equal(salvo_stream_host_call(st, count, NULL), SALVO_OK);
    assert_int_equal(atomic_load(&runs), 1);
    assert_int_equal(salvo_stream_read(st, b, 0, out, sizeof out), SALVO_OK);
    assert_memory_equal(in, out, sizeof out);
    assert_int_equal(salvo_stream_synchronize(st), SALVO_OK);
    salvo_buffer_destroy(b);
    salvo_stream_destroy(st);
    close_and_check(f, dev);
}

/* The batch before the call was refused (reported by the flush): fn still
 * runs. A call whose own submission is refused runs nothing. */
static void after_a_refused_batch(void **state)
{
    (void)state;
    fake_accel *f = fake_create();
    salvo_device *dev = open_fake(f);
    salvo_stream *st = NULL;
    salvo_buffer *a = NULL, *b = NULL;
    assert_int_equal(salvo_stream_create(dev, NULL, &st), SALVO_OK);
    assert_int_equal(salvo_buffer_create(dev, 4096, SALVO_DOMAIN_DEVICE, &a), SALVO_OK);
    assert_int_equal(salvo_buffer_create(dev, 4096, SALVO_DOMAIN_DEVICE, &b), SALVO_OK);
    atomic_store(&runs, 0);
    assert_int_equal(salvo_copy(st, a, 0, b, 0, 4096), SALVO_OK);
    fake_set_result(f, "submit", 1, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_int_equal(salvo_stream_flush(st), SALVO_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_int_equal(salvo_stream_host_call(st, count, NULL), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(st), SALVO_OK);
    assert_int_equal(atomic_load(&runs), 1);
    /* Its own submission refused: not queued, never run. */
    assert_int_equal(salvo_copy(st, a, 0, b, 0, 4096), SALVO_OK);
    fake_set_result(f, "submit", 1, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_int_equal(salvo_stream_host_call(st, count, NULL), SALVO_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_int_equal(salvo_stream_synchronize(st), SALVO_OK);
    salvo_buffer_destroy(a);
    salvo_buffer_destroy(b);
    salvo_stream_destroy(st);
    close_and_check(f, dev);
    assert_int_equal(atomic_load(&runs), 1);
}

/* Lost with calls pending: the next wait says so, every fn runs once (at
 * the latest in device destroy), a read's dst is left alone, nothing
 * leaks. */
static void after_device_loss(void **state)
{
    (void)state;
    fake_accel *f = fake_create();
    f->complete = FAKE_COMPLETE_MANUAL;
    salvo_device *dev = open_fake(f);
    salvo_stream *st = NULL;
    salvo_buffer *b = NULL;
    assert_int_equal(salvo_stream_create(dev, NULL, &st), SALVO_OK);
    assert_int_equal(salvo_buffer_create(dev, 4096, SALVO_DOMAIN_DEVICE, &b), SALVO_OK);
    atomic_store(&runs, 0);
    uint32_t in[16] = {1, 2, 3}, out[16];
    memset(out, 0xaa, sizeof out);
    assert_int_equal(salvo_stream_write(st, b, 0, in, sizeof in), SALVO_OK);
    assert_int_equal(salvo_stream_host_call(st, count, NULL), SALVO_OK);
    /* Three batches: the ring's three slots (nothing completes). */
    assert_int_equal(salvo_stream_read(st, b, 0, out, sizeof out), SALVO_OK);
    fake_lose_device(f);
    salvo_status sync = salvo_stream_synchronize(st);
    if (sync != SALVO_ERROR_DEVICE_LOST)
        fail_msg("%s: %s", salvo_status_string(sync), salvo_last_error());
    assert_int_equal(salvo_stream_host_call(st, count, NULL), SALVO_ERROR_DEVICE_LOST);
    assert_int_equal(salvo_stream_write(st, b, 0, in, 4), SALVO_ERROR_DEVICE_LOST);
    salvo_buffer_destroy(b);
    salvo_stream_destroy(st);
    close_and_check(f, dev);
    assert_int_equal(atomic_load(&runs), 1);
    for (int i = 0; i < 16; i++)
        assert_int_equal(out[i], 0xaaaaaaaau);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(without_timelines),
        cmocka_unit_test(after_a_refused_batch),
        cmocka_unit_test(after_device_loss),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
