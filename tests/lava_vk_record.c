/* salvo_vk_stream_record on a real device under synchronization
 * validation: the program's own commands (a vkCmdFillBuffer on a salvo
 * buffer, through function pointers of its own) run in stream order
 * between salvo's launches, with the barriers the declared uses call for
 * (or full ones when none are declared); bad input and captures are
 * refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define VK_NO_PROTOTYPES
#include "salvo/salvo_vulkan.h"
#include "support/lava.h"

#define N 1024u

typedef lava_fixture fixture;

/* vkCmdFillBuffer of the device the setup opened. */
static PFN_vkCmdFillBuffer vk_fill;

typedef struct fill_job {
    PFN_vkCmdFillBuffer fill;
    VkBuffer buffer;
    VkDeviceSize offset, size;
    uint32_t value;
    int calls;
} fill_job;

static void record_fill(VkCommandBuffer cb, void *user)
{
    fill_job *j = user;
    j->fill(cb, j->buffer, j->offset, j->size, j->value);
    j->calls++;
}

static int setup(void **state)
{
    lava_setup(state);
    fixture *f = *state;
    salvo_vk_handles h;
    assert_int_equal(salvo_device_vk_handles(f->dev, &h), SALVO_OK);
    PFN_vkGetDeviceProcAddr gdpa =
        (PFN_vkGetDeviceProcAddr)h.get_instance_proc_addr(h.instance, "vkGetDeviceProcAddr");
    assert_non_null(gdpa);
    vk_fill = (PFN_vkCmdFillBuffer)gdpa(h.device, "vkCmdFillBuffer");
    assert_non_null(vk_fill);
    return 0;
}

static void add(fixture *f, salvo_buffer *b, uint32_t v)
{
    salvo_binding bd = {.binding = 0, .buffer = b};
    const uint32_t groups[3] = {N / 64, 1, 1};
    const uint32_t push[2] = {N, v};
    assert_int_equal(salvo_launch(f->st, f->add, groups, &bd, 1, push, sizeof push), SALVO_OK);
}

/* add 1, the program fills the first half with 7, add 5: 12 and 6. With
 * uses declared, and with none (full barriers). */
static void ordered_between_launches(void **state)
{
    fixture *f = *state;
    for (int declared = 0; declared < 2; declared++) {
        salvo_buffer *b = NULL;
        assert_int_equal(salvo_buffer_create(f->dev, N * 4, SALVO_DOMAIN_DEVICE, &b), SALVO_OK);
        assert_int_equal(salvo_fill(f->st, b, 0, N * 4, 0), SALVO_OK);
        fill_job j = {.fill = vk_fill, .size = N * 2, .value = 7};
        assert_int_equal(salvo_buffer_vk_handle(b, &j.buffer), SALVO_OK);
        salvo_vk_buffer_use use = {.buffer = b, .size = N * 2, .access = SALVO_ACCESS_WRITE};
        add(f, b, 1);
        assert_int_equal(salvo_vk_stream_record(f->st, declared ? &use : NULL, declared ? 1 : 0,
                                                record_fill, &j),
                         SALVO_OK);
        assert_int_equal(j.calls, 1);
        add(f, b, 5);
        assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
        static uint32_t got[N];
        assert_int_equal(salvo_buffer_read(b, 0, got, sizeof got), SALVO_OK);
        for (uint32_t i = 0; i < N; i++)
            if (got[i] != (i < N / 2 ? 12u : 6u))
                fail_msg("declared %d: b[%u] = %u", declared, i, got[i]);
        salvo_buffer_destroy(b);
    }
}

static void never_called(VkCommandBuffer cb, void *user)
{
    (void)cb;
    (*(int *)user)++;
}

static void bad_input_and_capture(void **state)
{
    fixture *f = *state;
    salvo_buffer *b = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, 256, SALVO_DOMAIN_DEVICE, &b), SALVO_OK);
    int calls = 0;
    salvo_vk_buffer_use use = {.buffer = b, .access = SALVO_ACCESS_READ};
    assert_int_equal(salvo_vk_stream_record(NULL, &use, 1, never_called, &calls),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_vk_stream_record(f->st, &use, 1, NULL, &calls),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_vk_stream_record(f->st, NULL, 1, never_called, &calls),
                     SALVO_ERROR_INVALID_ARGUMENT);
    salvo_vk_buffer_use bad = use;
    bad.buffer = NULL;
    assert_int_equal(salvo_vk_stream_record(f->st, &bad, 1, never_called, &calls),
                     SALVO_ERROR_INVALID_ARGUMENT);
    bad = use;
    bad.offset = 256;
    assert_int_equal(salvo_vk_stream_record(f->st, &bad, 1, never_called, &calls),
                     SALVO_ERROR_INVALID_ARGUMENT);
    bad = use;
    bad.access = (salvo_access)0;
    assert_int_equal(salvo_vk_stream_record(f->st, &bad, 1, never_called, &calls),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_vk_stream_record(f->st, &use, SALVO_MAX_BINDINGS + 1, never_called,
                                            &calls),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    assert_int_equal(salvo_vk_stream_record(f->st, &use, 1, never_called, &calls),
                     SALVO_ERROR_INVALID_STATE);
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_OK);
    salvo_graph_destroy(g);
    assert_int_equal(calls, 0);
    salvo_buffer_destroy(b);
}

int main(void)
{
    lava_require_device();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(ordered_between_launches, setup, lava_teardown),
        cmocka_unit_test_setup_teardown(bad_input_and_capture, setup, lava_teardown),
    };
    return lava_run_tests(tests);
}
