/*
 * spirv_check alone, no device: every module the build compiles validates
 * for each Vulkan version it targets; modules broken by hand (an OpStore
 * through a non-pointer, an id never defined, a bad magic number, a cut
 * module) are refused with the validator's message; empty and partial
 * input is refused; the reason buffer is respected; threads validate at
 * once. In a build without SPIRV-Tools (SALVO_SPIRV_VALIDATE=OFF) every
 * test but the one checking that everything passes is skipped.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/glsl.h"
#include "api/spirv_check.h"

#include "add.spv.h"
#include "copy.spv.h"
#include "empty.spv.h"
#include "jacobi.spv.h"
#include "local_size_id.spv.h"
#include "mark.spv.h"
#include "reflect_array.spv.h"
#include "reflect_image.spv.h"
#include "reflect_mixed.spv.h"
#include "reflect_sets.spv.h"
#include "saxpy.spv.h"
#include "scale.spv.h"
#include "spin.spv.h"
#include "uniform_read.spv.h"
#include "uses_float64.spv.h"
#include "workgroup_memory.spv.h"

#define VK_1_0 ((1u << 22) | (0u << 12))
#define VK_1_1 ((1u << 22) | (1u << 12))
#define VK_1_2 ((1u << 22) | (2u << 12))
#define VK_1_3 ((1u << 22) | (3u << 12))
#define VK_1_4 ((1u << 22) | (4u << 12))

enum {
    OP_STORE = 62,
    HEADER_WORDS = 5,
};

typedef struct module {
    const char *name;
    const uint32_t *words;
    size_t size;
} module;

#define MODULE(n) {#n, n##_spv, sizeof n##_spv}
/* What salvo_add_shader compiles for Vulkan 1.1 (SPIR-V 1.3). */
static const module vk11_modules[] = {
    MODULE(add),           MODULE(copy),          MODULE(empty),         MODULE(jacobi),
    MODULE(mark),          MODULE(reflect_array), MODULE(reflect_image), MODULE(reflect_mixed),
    MODULE(reflect_sets),  MODULE(saxpy),         MODULE(scale),         MODULE(spin),
    MODULE(uniform_read),  MODULE(uses_float64),  MODULE(workgroup_memory),
};

static char reason[1024];

static salvo_status check(const uint32_t *words, size_t size, uint32_t api)
{
    memset(reason, 'X', sizeof reason);
    salvo_status st = spirv_check(words, size, api, reason, sizeof reason);
    assert_non_null(memchr(reason, '\0', sizeof reason));
    if (st == SALVO_OK)
        assert_string_equal(reason, "");
    else
        assert_true(reason[0] != '\0');
    return st;
}

static void expect_contains(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("\"%s\" does not contain \"%s\"", text, needle);
}

static void expect_refused(const uint32_t *words, size_t size, uint32_t api, const char *says)
{
    assert_int_equal(check(words, size, api), SALVO_ERROR_INVALID_ARGUMENT);
    if (says)
        expect_contains(reason, says);
    /* One line: the validator's disassembly lines are joined. */
    assert_null(strchr(reason, '\n'));
}

static uint32_t *copy_of(const uint32_t *words, size_t size)
{
    uint32_t *w = malloc(size);
    assert_non_null(w);
    memcpy(w, words, size);
    return w;
}

/* The word index of the first instruction with opcode op; fails without. */
static size_t find_op(const uint32_t *w, size_t size, uint32_t op)
{
    size_t n = size / 4;
    for (size_t at = HEADER_WORDS; at < n;) {
        uint32_t count = w[at] >> 16;
        assert_true(count > 0);
        if ((w[at] & 0xffffu) == op)
            return at;
        at += count;
    }
    fail_msg("no instruction with opcode %u", op);
    return 0;
}

static void skip_unless_available(void)
{
    if (!spirv_check_available())
        skip();
}

/* Without SPIRV-Tools, every module passes (and reason is emptied). */
static void everything_passes_when_not_built(void **state)
{
    (void)state;
    if (spirv_check_available())
        skip();
    uint32_t junk[4] = {0};
    assert_int_equal(check(junk, sizeof junk, VK_1_1), SALVO_OK);
    assert_int_equal(check(NULL, 0, VK_1_1), SALVO_OK);
    assert_int_equal(check(add_spv, sizeof add_spv, VK_1_1), SALVO_OK);
}

static void built_modules_validate(void **state)
{
    (void)state;
    skip_unless_available();
    const uint32_t apis[] = {VK_1_1, VK_1_2, VK_1_3, VK_1_4};
    for (size_t i = 0; i < sizeof vk11_modules / sizeof vk11_modules[0]; i++)
        for (size_t a = 0; a < sizeof apis / sizeof apis[0]; a++)
            if (check(vk11_modules[i].words, vk11_modules[i].size, apis[a]) != SALVO_OK)
                fail_msg("%s on Vulkan 1.%u: %s", vk11_modules[i].name, (apis[a] >> 12) & 0x3ffu,
                         reason);
}

/* SPIR-V 1.6 (LocalSizeId): Vulkan 1.3 takes it; 1.1 and 1.2 do not,
 * and the message names the version. */
static void version_follows_the_api(void **state)
{
    (void)state;
    skip_unless_available();
    assert_int_equal(check(local_size_id_spv, sizeof local_size_id_spv, VK_1_3), SALVO_OK);
    expect_refused(local_size_id_spv, sizeof local_size_id_spv, VK_1_1, "for Vulkan 1.1: ");
    expect_contains(reason, "version 1.6");
    expect_refused(local_size_id_spv, sizeof local_size_id_spv, VK_1_2, "for Vulkan 1.2: ");
    /* SPIR-V 1.3 is newer than Vulkan 1.0 takes (1.0). */
    expect_refused(add_spv, sizeof add_spv, VK_1_0, "for Vulkan 1.0: ");
}

/* add.comp's first OpStore, its pointer replaced by the object stored (a
 * uint, not a pointer). */
static void store_through_a_non_pointer(void **state)
{
    (void)state;
    skip_unless_available();
    uint32_t *w = copy_of(add_spv, sizeof add_spv);
    size_t at = find_op(w, sizeof add_spv, OP_STORE);
    assert_int_equal(w[at] >> 16, 3); /* OpStore %pointer %object, no memory operands */
    w[at + 1] = w[at + 2];
    expect_refused(w, sizeof add_spv, VK_1_1, "SPIR-V does not validate for Vulkan 1.1: ");
    expect_contains(reason, "OpStore");
    free(w);
}

/* The object stored is an id under the bound that nothing defines. */
static void undefined_id(void **state)
{
    (void)state;
    skip_unless_available();
    uint32_t *w = copy_of(add_spv, sizeof add_spv);
    uint32_t fresh = w[3]++; /* the bound: one id more, never defined */
    size_t at = find_op(w, sizeof add_spv, OP_STORE);
    w[at + 2] = fresh;
    expect_refused(w, sizeof add_spv, VK_1_1, "has not been defined");
    free(w);
}

static void bad_magic(void **state)
{
    (void)state;
    skip_unless_available();
    uint32_t *w = copy_of(saxpy_spv, sizeof saxpy_spv);
    w[0] = 0x12345678u;
    expect_refused(w, sizeof saxpy_spv, VK_1_2, "SPIR-V does not validate for Vulkan 1.2: ");
    free(w);
}

static void empty_and_partial_input(void **state)
{
    (void)state;
    skip_unless_available();
    expect_refused(NULL, 0, VK_1_1, "empty");
    expect_refused(NULL, 64, VK_1_1, "empty");
    expect_refused(add_spv, 0, VK_1_1, "empty");
    expect_refused(add_spv, 7, VK_1_1, "whole number of words");
    expect_refused(add_spv, sizeof add_spv - 2, VK_1_1, "whole number of words");
    /* Cut at a word boundary: magic only, the header only, the header and
     * part of the first instruction, all but the last word. */
    size_t cuts[] = {4, 4 * HEADER_WORDS, 4 * HEADER_WORDS + 4, sizeof add_spv / 2 & ~(size_t)3,
                     sizeof add_spv - 4};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
        expect_refused(add_spv, cuts[i], VK_1_1, NULL);
}

/* A reason buffer of any size is filled within it and terminated; none
 * at all is fine. */
static void reason_buffer_is_respected(void **state)
{
    (void)state;
    skip_unless_available();
    uint32_t *w = copy_of(add_spv, sizeof add_spv);
    size_t at = find_op(w, sizeof add_spv, OP_STORE);
    w[at + 1] = w[at + 2];
    char full[1024];
    assert_int_equal(spirv_check(w, sizeof add_spv, VK_1_1, full, sizeof full),
                     SALVO_ERROR_INVALID_ARGUMENT);
    size_t len = strlen(full);
    assert_true(len > 48);
    for (size_t size = 1; size <= len + 2; size++) {
        char small[1024];
        memset(small, 'X', sizeof small);
        assert_int_equal(spirv_check(w, sizeof add_spv, VK_1_1, small, size),
                         SALVO_ERROR_INVALID_ARGUMENT);
        size_t got = strlen(small);
        assert_true(got < size);
        assert_int_equal(small[size], 'X'); /* nothing written past it */
        /* What fits is the start of the whole (a join's "; " may be left
         * off the end). */
        assert_memory_equal(small, full, got);
    }
    assert_int_equal(spirv_check(w, sizeof add_spv, VK_1_1, NULL, 0),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spirv_check(w, sizeof add_spv, VK_1_1, full, 0),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spirv_check(add_spv, sizeof add_spv, VK_1_1, NULL, 0), SALVO_OK);
    free(w);
}

/* Kernels in the scalar block layout (GL_EXT_scalar_block_layout), which
 * salvo enables when offered, are taken: a vec3 array at offset 4 and a
 * float array of stride 4 in a uniform block. Compiled at run time, so
 * only where runtime GLSL is built in. */
static void scalar_layout_is_taken(void **state)
{
    (void)state;
    skip_unless_available();
    static const char SCALAR[] =
        "#version 450\n"
        "#extension GL_EXT_scalar_block_layout : require\n"
        "layout(local_size_x = 64) in;\n"
        "layout(scalar, binding = 0) buffer D { float a; vec3 v[]; };\n"
        "layout(scalar, binding = 1) uniform U { float s; vec3 b; float c[4]; };\n"
        "void main()\n"
        "{\n"
        "    uint i = gl_GlobalInvocationID.x;\n"
        "    v[i] = vec3(a + s, b.y, c[i & 3u]);\n"
        "}\n";
    uint32_t *w = NULL;
    size_t n = 0;
    char why[512];
    salvo_status st = glsl_compile(NULL, SCALAR, "scalar", &w, &n, why, sizeof why);
    if (st == SALVO_ERROR_UNSUPPORTED)
        skip(); /* no runtime GLSL in this build */
    assert_int_equal(st, SALVO_OK);
    if (check(w, n, VK_1_1) != SALVO_OK)
        fail_msg("scalar layout refused: %s", reason);
    assert_int_equal(check(w, n, VK_1_3), SALVO_OK);
    free(w);
}

/* Validation on several threads at once, valid and invalid modules mixed. */
enum { THREADS = 4, ROUNDS = 16 };

static void *check_rounds(void *arg)
{
    const uint32_t *broken = arg;
    for (int i = 0; i < ROUNDS; i++) {
        char why[256];
        bool good = i % 2;
        salvo_status st = spirv_check(good ? add_spv : broken, sizeof add_spv, VK_1_1, why,
                                      sizeof why);
        if (st != (good ? SALVO_OK : SALVO_ERROR_INVALID_ARGUMENT))
            return (void *)1;
        if (!good && !strstr(why, "OpStore"))
            return (void *)1;
    }
    return NULL;
}

static void threads_check_at_once(void **state)
{
    (void)state;
    skip_unless_available();
    uint32_t *w = copy_of(add_spv, sizeof add_spv);
    size_t at = find_op(w, sizeof add_spv, OP_STORE);
    w[at + 1] = w[at + 2];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, check_rounds, w), 0);
    for (int i = 0; i < THREADS; i++) {
        void *r = (void *)1;
        assert_int_equal(pthread_join(t[i], &r), 0);
        assert_null(r);
    }
    free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(everything_passes_when_not_built),
        cmocka_unit_test(built_modules_validate),
        cmocka_unit_test(version_follows_the_api),
        cmocka_unit_test(store_through_a_non_pointer),
        cmocka_unit_test(undefined_id),
        cmocka_unit_test(bad_magic),
        cmocka_unit_test(empty_and_partial_input),
        cmocka_unit_test(reason_buffer_is_respected),
        cmocka_unit_test(scalar_layout_is_taken),
        cmocka_unit_test(threads_check_at_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
