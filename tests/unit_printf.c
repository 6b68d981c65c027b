/*
 * Shader printf without a device: the tag put before each format string
 * of a kernel (core/spirv_printf.c: the module stays valid, reflects the
 * same, and only its format strings change), and the log line made from
 * the layer's message (accel/vulkan/printf.c: the kernel's name from the
 * tag, the layer's header dropped) and how the messenger sorts it (never a
 * validation message).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "accel/vulkan/vk_internal.h"
#include "api/spirv_check.h"
#include "core/reflect.h"
#include "core/spirv_printf.h"

#include "copy.spv.h"
#include "print_value.spv.h"

#define VK_1_1 ((1u << 22) | (1u << 12))

enum { OP_STRING = 7 };

/* The bindings' padding zeroed (entries are moved as whole structs, so
 * their padding holds whatever the stack did), the rest as it was: two
 * modules then compare byte for byte. */
static void normalize(reflect_module *m)
{
    for (uint32_t i = 0; i < SALVO_MAX_BINDINGS; i++) {
        reflect_binding b = m->bindings[i];
        memset(&m->bindings[i], 0, sizeof m->bindings[i]);
        m->bindings[i].set = b.set;
        m->bindings[i].binding = b.binding;
        m->bindings[i].element = b.element;
        m->bindings[i].count = b.count;
        m->bindings[i].access = b.access;
        m->bindings[i].uniform = b.uniform;
        m->bindings[i].kind = b.kind;
        m->bindings[i].image_type = b.image_type;
        m->bindings[i].image_format = b.image_format;
        m->bindings[i].sampled_class = b.sampled_class;
    }
}

/* The literal of the first OpString in words, into out. */
static void first_string(const uint32_t *w, size_t size, char *out, size_t out_size)
{
    for (size_t at = 5; at < size / 4; at += w[at] >> 16) {
        assert_true((w[at] >> 16) > 0);
        if ((w[at] & 0xffffu) != OP_STRING)
            continue;
        const char *s = (const char *)&w[at + 2];
        size_t max = ((w[at] >> 16) - 2) * 4;
        assert_non_null(memchr(s, '\0', max));
        assert_true(strlen(s) < out_size);
        strcpy(out, s);
        return;
    }
    fail_msg("no OpString");
}

static void test_tag_prefixes_the_format(void **state)
{
    (void)state;
    const char prefix[] = "\x1ek%%1\x1f";
    uint32_t *t = NULL;
    size_t n = 0;
    assert_int_equal(spirv_printf_tag(NULL, print_value_spv, sizeof print_value_spv, prefix, &t,
                                      &n),
                     SALVO_OK);
    assert_non_null(t);
    char before[256], after[256];
    first_string(print_value_spv, sizeof print_value_spv, before, sizeof before);
    first_string(t, n, after, sizeof after);
    assert_string_equal(before, "value %u at %u");
    assert_string_equal(after, "\x1ek%%1\x1fvalue %u at %u");
    /* Longer by the words the prefix took, nothing else moved: the same
     * instructions in the same order, each as it was but that string. */
    assert_true(n > sizeof print_value_spv);
    assert_true(n - sizeof print_value_spv <= 4 * ((sizeof prefix - 1 + 3) / 4 + 1));
    size_t a = 5, b = 5;
    assert_memory_equal(t, print_value_spv, 20);
    while (a < sizeof print_value_spv / 4 && b < n / 4) {
        uint32_t wa = print_value_spv[a], wb = t[b];
        assert_int_equal(wa & 0xffffu, wb & 0xffffu);
        if ((wa & 0xffffu) != OP_STRING)
            assert_memory_equal(&print_value_spv[a], &t[b], (wa >> 16) * 4);
        a += wa >> 16;
        b += wb >> 16;
    }
    assert_int_equal(a, sizeof print_value_spv / 4);
    assert_int_equal(b, n / 4);
    /* Still valid, and reflected the same. */
    char why[512];
    assert_int_equal(spirv_check(t, n, VK_1_1, why, sizeof why), SALVO_OK);
    reflect_module m1, m2;
    assert_int_equal(reflect_spirv(print_value_spv, sizeof print_value_spv, "main", &m1, why,
                                   sizeof why),
                     SALVO_OK);
    assert_int_equal(reflect_spirv(t, n, "main", &m2, why, sizeof why), SALVO_OK);
    normalize(&m1);
    normalize(&m2);
    assert_memory_equal(&m1, &m2, sizeof m1);
    free(t);
}

/* A module that prints nothing stays as it is: no copy. */
static void test_no_printf_no_copy(void **state)
{
    (void)state;
    uint32_t *t = (uint32_t *)&t; /* overwritten */
    size_t n = 1;
    assert_int_equal(spirv_printf_tag(NULL, copy_spv, sizeof copy_spv, "\x1ek\x1f", &t, &n),
                     SALVO_OK);
    assert_null(t);
    assert_int_equal(n, 0);
}

static void *refuse(void *user, size_t size)
{
    (void)user;
    (void)size;
    return NULL;
}

static void release(void *user, void *p)
{
    (void)user;
    free(p);
}

/* Out of memory, or an instruction running past the end: refused, *out NULL. */
static void test_refusals(void **state)
{
    (void)state;
    salvo_allocator none = {refuse, release, NULL};
    uint32_t *t = NULL;
    size_t n = 0;
    assert_int_equal(spirv_printf_tag(&none, print_value_spv, sizeof print_value_spv, "x", &t,
                                      &n),
                     SALVO_ERROR_OUT_OF_HOST_MEMORY);
    assert_null(t);
    uint32_t *w = malloc(sizeof print_value_spv);
    assert_non_null(w);
    memcpy(w, print_value_spv, sizeof print_value_spv);
    w[5] = (0xffffu << 16) | (w[5] & 0xffffu); /* the first instruction runs past the end */
    assert_int_equal(spirv_printf_tag(NULL, w, sizeof print_value_spv, "x", &t, &n),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_null(t);
    assert_int_equal(spirv_printf_tag(NULL, w, 12, "x", &t, &n), SALVO_ERROR_INVALID_ARGUMENT);
    free(w);
}

static void line_is(const char *message, const char *want)
{
    char out[256];
    memset(out, 'X', sizeof out);
    accel_vk_printf_line(message, out, sizeof out);
    assert_string_equal(out, want);
}

/* The layer's message as 1.3.239 sends it, with and without its verbose
 * setting, with and without a kernel's tag. */
static void test_line_from_the_message(void **state)
{
    (void)state;
    line_is("Validation Information: [ UNASSIGNED-DEBUG-PRINTF ] Object 0: handle = "
            "0x55d0c0e9a890, type = VK_OBJECT_TYPE_DEVICE; | MessageID = 0x92394c89 | "
            "\x1eprinter\x1fvalue 42 at 0\n",
            "kernel 'printer': value 42 at 0");
    line_is("Validation Information: [ UNASSIGNED-DEBUG-PRINTF ] Object 0: handle = "
            "0x55d0c0e9a890, type = VK_OBJECT_TYPE_DEVICE; | MessageID = 0x92394c89 | value 42",
            "value 42");
    line_is("Validation Information: [ UNASSIGNED-DEBUG-PRINTF ] Object 0: handle = 0x5585d04136e8, "
            "type = VK_OBJECT_TYPE_QUEUE; | MessageID = 0x92394c89 | Command buffer "
            "(0x5585d033a520). Compute Dispatch Index 0. Pipeline (half%off)(0x90000000009). "
            "Stage = Compute.  Global invocation ID (x, y, z) = (1, 0, 0 ) \x1ehalf%off\x1fvalue "
            "42 Unable to find SPIR-V OpLine for source information.",
            "kernel 'half%off': value 42 Unable to find SPIR-V OpLine for source information.");
    line_is("no header at all", "no header at all");
    line_is(NULL, "");
    /* Cut to the room given, terminated. */
    char small[12];
    memset(small, 'X', sizeof small);
    accel_vk_printf_line("| MessageID = 0x1 | \x1ek\x1f" "0123456789", small, sizeof small);
    assert_string_equal(small, "kernel 'k':");
    accel_vk_printf_line("| MessageID = 0x1 | abc", small, 1);
    assert_string_equal(small, "");
}

/* Lines printed are the program's output: never counted, at INFO (a
 * warning of the layer's about them at WARNING), from file "printf". */
static void test_classified_as_printf(void **state)
{
    (void)state;
    const VkDebugUtilsMessageTypeFlagsEXT validation = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
    accel_vk_message_class c = accel_vk_message_classify(
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT, validation, "UNASSIGNED-DEBUG-PRINTF");
    assert_true(c.printf);
    assert_false(c.validation);
    assert_int_equal(c.level, SALVO_LOG_INFO);
    assert_string_equal(c.file, "printf");
    c = accel_vk_message_classify(VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT, validation,
                                  "UNASSIGNED-Debug-Printf");
    assert_true(c.printf);
    assert_false(c.validation);
    assert_int_equal(c.level, SALVO_LOG_WARNING);
    /* A finding stays a finding. */
    c = accel_vk_message_classify(VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT, validation,
                                  "VUID-vkCmdDispatch-None-06479");
    assert_false(c.printf);
    assert_true(c.validation);
    c = accel_vk_message_classify(VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT,
                                  VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT, NULL);
    assert_false(c.printf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tag_prefixes_the_format),
        cmocka_unit_test(test_no_printf_no_copy),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_line_from_the_message),
        cmocka_unit_test(test_classified_as_printf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
