/* Queries of a device and its streams on a real device with the
 * validation layer on: salvo_device_memory_info as buffers come and go,
 * salvo_stream_is_capturing through a capture's whole life (begun,
 * joined, refused calls, ended, abandoned). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "salvo/salvo.h"
#include "support/lava.h"

#define N 256u
#define BIG (64ull << 20) /* bytes of the buffer the heaps are watched through */

/* The heaps agree with the device's info, and with themselves where the
 * driver measures nothing. */
static salvo_memory_info memory_info(salvo_device *dev)
{
    salvo_memory_info mi;
    salvo_device_info di;
    assert_int_equal(salvo_device_memory_info(dev, &mi), SALVO_OK);
    assert_int_equal(salvo_device_info_get(dev, &di), SALVO_OK);
    assert_true(mi.heap_count > 0);
    assert_int_equal(mi.heap_count, di.memory_heap_count);
    for (uint32_t h = 0; h < mi.heap_count; h++) {
        const salvo_heap_usage *u = &mi.heaps[h];
        assert_true(u->size > 0);
        assert_int_equal(u->size, di.memory_heaps[h].size);
        assert_int_equal(u->device_local, di.memory_heaps[h].device_local);
        assert_true(u->budget > 0);
        if (!mi.measured) {
            assert_int_equal(u->budget, u->size);
            assert_int_equal(u->usage, u->allocated);
        }
    }
    return mi;
}

static uint64_t total(const salvo_memory_info *mi, bool usage)
{
    uint64_t sum = 0;
    for (uint32_t h = 0; h < mi->heap_count; h++)
        sum += usage ? mi->heaps[h].usage : mi->heaps[h].allocated;
    return sum;
}

/* A large DEVICE buffer shows in what the device holds (and, where the
 * driver measures it, in the process's usage) until it is destroyed and
 * its release has run. */
static void test_memory_info(void **state)
{
    (void)state;
    salvo_device *dev = lava_open(0, 0);
    salvo_memory_info before = memory_info(dev);
    print_message("heaps %u, %s", before.heap_count,
                  before.measured ? "measured by the driver (VK_EXT_memory_budget)"
                                  : "not measured: budget = size, usage = salvo's own count");
    for (uint32_t h = 0; h < before.heap_count; h++)
        print_message("; heap %u: %llu MiB%s, budget %llu MiB, usage %llu MiB, allocated %llu KiB",
                      h, (unsigned long long)(before.heaps[h].size >> 20),
                      before.heaps[h].device_local ? " device-local" : "",
                      (unsigned long long)(before.heaps[h].budget >> 20),
                      (unsigned long long)(before.heaps[h].usage >> 20),
                      (unsigned long long)(before.heaps[h].allocated >> 10));
    print_message("\n");

    salvo_buffer *big = NULL;
    assert_int_equal(salvo_buffer_create(dev, BIG, SALVO_DOMAIN_DEVICE, &big), SALVO_OK);
    salvo_memory_info held = memory_info(dev);
    assert_true(total(&held, false) >= total(&before, false) + BIG);
    if (held.measured)
        assert_true(total(&held, true) >= total(&before, true) + BIG);
    /* In a device-local heap, where the device has one. */
    bool local = false, grew_local = false;
    for (uint32_t h = 0; h < held.heap_count; h++) {
        local |= held.heaps[h].device_local;
        grew_local |= held.heaps[h].device_local &&
                      held.heaps[h].allocated >= before.heaps[h].allocated + BIG;
    }
    assert_true(grew_local || !local);

    /* An image's memory counts too: 1024 x 1024 RGBA8, 4 MiB at least. */
    salvo_image *img = NULL;
    salvo_image_desc id = {.type = SALVO_IMAGE_2D, .format = SALVO_FORMAT_RGBA8_UNORM,
                           .width = 1024, .height = 1024, .usage = SALVO_IMAGE_STORAGE};
    assert_int_equal(salvo_image_create(dev, &id, &img), SALVO_OK);
    salvo_memory_info with_image = memory_info(dev);
    assert_true(total(&with_image, false) >= total(&held, false) + (4u << 20));

    salvo_image_destroy(img);
    salvo_buffer_destroy(big);
    assert_int_equal(salvo_device_synchronize(dev), SALVO_OK);
    salvo_memory_info after = memory_info(dev);
    assert_int_equal(total(&after, false), total(&before, false));
    if (after.measured)
        assert_true(total(&after, true) + BIG <= total(&held, true));

    salvo_memory_info bad;
    assert_int_equal(salvo_device_memory_info(NULL, &bad), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(bad.heap_count, 0);
    assert_int_equal(salvo_device_memory_info(dev, NULL), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(lava_validation_messages(), 0);
    lava_close(dev);
}

static bool capturing(salvo_stream *st)
{
    bool out = !true; /* overwritten either way */
    assert_int_equal(salvo_stream_is_capturing(st, &out), SALVO_OK);
    return out;
}

/* Begun on one stream, joined by another through an event, ended: each
 * stream says so at every step, refused calls leave the capture going,
 * and the graph made runs the captured launch. */
static void test_is_capturing(void **state)
{
    (void)state;
    salvo_device *dev = lava_open(0, 0);
    salvo_kernel *add = lava_add_kernel(dev);
    salvo_stream *a = NULL, *b = NULL, *c = NULL;
    assert_int_equal(salvo_stream_create(dev, NULL, &a), SALVO_OK);
    assert_int_equal(salvo_stream_create(dev, NULL, &b), SALVO_OK);
    assert_int_equal(salvo_stream_create(dev, NULL, &c), SALVO_OK);
    salvo_buffer *x = NULL;
    assert_int_equal(salvo_buffer_create(dev, N * 4, SALVO_DOMAIN_DEVICE, &x), SALVO_OK);
    uint32_t host[N] = {0};
    assert_int_equal(salvo_buffer_write(x, 0, host, sizeof host), SALVO_OK);
    salvo_event *fork = NULL;
    assert_int_equal(salvo_event_create(dev, &fork), SALVO_OK);

    assert_false(capturing(a));
    assert_int_equal(salvo_stream_begin_capture(a), SALVO_OK);
    assert_true(capturing(a));
    assert_false(capturing(b));
    /* A refused call: the capture goes on. */
    assert_int_equal(salvo_stream_synchronize(a), SALVO_ERROR_INVALID_STATE);
    assert_true(capturing(a));

    struct { uint32_t n, value; } push = {N, 5};
    salvo_binding bind = {.binding = 0, .buffer = x};
    const uint32_t groups[3] = {N / 64, 1, 1};
    assert_int_equal(salvo_launch(a, add, groups, &bind, 1, &push, sizeof push), SALVO_OK);
    /* b joins through an event of the capture. */
    assert_int_equal(salvo_event_record(fork, a), SALVO_OK);
    assert_int_equal(salvo_stream_wait_event(b, fork), SALVO_OK);
    assert_true(capturing(b));
    assert_false(capturing(c));

    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_end_capture(a, &g), SALVO_OK);
    assert_false(capturing(a));
    assert_false(capturing(b));
    assert_int_equal(salvo_graph_node_count(g), 1);
    /* The captured launch ran only now: 0 + 5. */
    assert_int_equal(salvo_graph_launch(g, c), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(c), SALVO_OK);
    assert_int_equal(salvo_buffer_read(x, 0, host, sizeof host), SALVO_OK);
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(host[i], 5);

    /* A capture whose stream is destroyed is abandoned: the stream that
     * joined it is out of it. */
    assert_int_equal(salvo_stream_begin_capture(c), SALVO_OK);
    assert_int_equal(salvo_event_record(fork, c), SALVO_OK);
    assert_int_equal(salvo_stream_wait_event(b, fork), SALVO_OK);
    assert_true(capturing(b));
    salvo_stream_destroy(c);
    assert_false(capturing(b));

    /* Bad arguments: refused, *out false. */
    bool out = true;
    assert_int_equal(salvo_stream_is_capturing(NULL, &out), SALVO_ERROR_INVALID_ARGUMENT);
    assert_false(out);
    assert_int_equal(salvo_stream_is_capturing(a, NULL), SALVO_ERROR_INVALID_ARGUMENT);

    salvo_graph_destroy(g);
    salvo_event_destroy(fork);
    salvo_buffer_destroy(x);
    salvo_stream_destroy(b);
    salvo_stream_destroy(a);
    salvo_kernel_destroy(add);
    assert_int_equal(lava_validation_messages(), 0);
    lava_close(dev);
}

int main(void)
{
    lava_require_device();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_info),
        cmocka_unit_test(test_is_capturing),
    };
    return lava_run_tests(tests);
}
