/* Kernels from GLSL compiled at run time, on a real device (lavapipe in
 * CI) with the validation layer on: the same results as the prebuilt
 * SPIR-V of the same source, the compiler's messages on an error, and the
 * desc checks (exactly one of spirv and glsl). In a build without runtime
 * GLSL (SALVO_GLSL=OFF) a GLSL kernel must be UNSUPPORTED instead. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "add.spv.h"

#include "salvo/salvo.h"
#include "support/glsl_text.h"
#include "support/lava.h"

/* A syntax error on line 4. */
static const char BROKEN[] = "#version 450\n"
                             "layout(local_size_x = 64) in;\n"
                             "layout(std430, binding = 0) buffer Data { uint data[]; };\n"
                             "void main() { data[gl_GlobalInvocationID.x] = 1u }\n";

#define N 4096u
#define LOCAL 64u

static salvo_status glsl_kernel(salvo_device *dev, const char *src, const char *name,
                                salvo_kernel **out)
{
    salvo_spec_constant sc = {0, LOCAL};
    salvo_kernel_desc kd = {
        .glsl = src, .name = name, .spec_constants = &sc, .spec_constant_count = 1,
    };
    return salvo_kernel_create(dev, &kd, out);
}

static salvo_kernel *spirv_kernel(salvo_device *dev)
{
    salvo_spec_constant sc = {0, LOCAL};
    salvo_kernel_desc kd = {
        .spirv = add_spv, .spirv_size = sizeof add_spv, .name = "add_spirv",
        .spec_constants = &sc, .spec_constant_count = 1,
    };
    salvo_kernel *k = NULL;
    assert_int_equal(salvo_kernel_create(dev, &kd, &k), SALVO_OK);
    return k;
}

static void expect_error_contains(const char *needle)
{
    const char *e = salvo_last_error();
    if (!strstr(e, needle))
        fail_msg("salvo_last_error() \"%s\" does not contain \"%s\"", e, needle);
}

static void expect_no_kernels(salvo_device *dev)
{
    salvo_stats s;
    assert_int_equal(salvo_device_stats(dev, &s), SALVO_OK);
    assert_int_equal(s.live_kernels, 0);
    assert_int_equal(s.validation_messages, 0);
}

/* Run rounds of data[i] += value (value = round + 1) with kernel k over a
 * buffer of N zeros; return what is read back (malloc'd). */
static uint32_t *run_rounds(salvo_device *dev, salvo_kernel *k, uint32_t rounds, uint32_t n)
{
    salvo_buffer *buf = NULL;
    assert_int_equal(salvo_buffer_create(dev, N * 4ull, SALVO_DOMAIN_DEVICE, &buf), SALVO_OK);
    uint32_t *data = calloc(N, sizeof *data);
    assert_non_null(data);
    assert_int_equal(salvo_buffer_write(buf, 0, data, N * 4ull), SALVO_OK);
    salvo_stream *st = NULL;
    assert_int_equal(salvo_stream_create(dev, NULL, &st), SALVO_OK);
    salvo_binding b = {.binding = 0, .buffer = buf};
    uint32_t groups[3] = {(n + LOCAL - 1) / LOCAL, 1, 1};
    for (uint32_t r = 0; r < rounds; r++) {
        uint32_t push[2] = {n, r + 1};
        assert_int_equal(salvo_launch(st, k, groups, &b, 1, push, sizeof push), SALVO_OK);
    }
    assert_int_equal(salvo_stream_synchronize(st), SALVO_OK);
    assert_int_equal(salvo_buffer_read(buf, 0, data, N * 4ull), SALVO_OK);
    salvo_stream_destroy(st);
    salvo_buffer_destroy(buf);
    return data;
}

static bool glsl_built(void)
{
    salvo_device *dev = lava_open(0, 0);
    salvo_kernel *k = NULL;
    salvo_status st = glsl_kernel(dev, ADD_COMP, "probe", &k);
    salvo_kernel_destroy(k);
    lava_close(dev);
    return st != SALVO_ERROR_UNSUPPORTED;
}

static void unsupported_without_glsl(void **state)
{
    (void)state;
    salvo_device *dev = lava_open(0, 0);
    salvo_kernel *k = (salvo_kernel *)1;
    assert_int_equal(glsl_kernel(dev, ADD_COMP, "add_glsl", &k), SALVO_ERROR_UNSUPPORTED);
    assert_null(k);
    expect_error_contains("add_glsl");
    expect_error_contains("SALVO_GLSL=OFF");
    expect_no_kernels(dev);
    lava_close(dev);
}

static void glsl_matches_spirv(void **state)
{
    (void)state;
    salvo_device *dev = lava_open(0, 0);
    salvo_kernel *kg = NULL;
    assert_int_equal(glsl_kernel(dev, ADD_COMP, "add_glsl", &kg), SALVO_OK);
    salvo_kernel *ks = spirv_kernel(dev);

    /* What the launch is checked against: the same for both. */
    salvo_kernel_info ig, is;
    assert_int_equal(salvo_kernel_info_get(kg, &ig), SALVO_OK);
    assert_int_equal(salvo_kernel_info_get(ks, &is), SALVO_OK);
    assert_string_equal(ig.name, "add_glsl");
    assert_int_equal(ig.binding_count, 1);
    assert_int_equal(ig.binding_count, is.binding_count);
    assert_int_equal(ig.bindings[0].binding, is.bindings[0].binding);
    assert_int_equal(ig.bindings[0].access, is.bindings[0].access);
    assert_int_equal(ig.push_constant_size, 8);
    assert_int_equal(ig.push_constant_size, is.push_constant_size);
    assert_memory_equal(ig.local_size, is.local_size, sizeof ig.local_size);
    assert_int_equal(ig.local_size[0], LOCAL);

    /* n not a multiple of the local size: the bounds check runs too. */
    const uint32_t rounds = 37, n = N - 5;
    uint32_t *a = run_rounds(dev, kg, rounds, n);
    uint32_t *b = run_rounds(dev, ks, rounds, n);
    const uint32_t sum = rounds * (rounds + 1) / 2;
    for (uint32_t i = 0; i < N; i++) {
        assert_int_equal(a[i], i < n ? sum : 0);
        assert_int_equal(a[i], b[i]);
    }
    free(a);
    free(b);
    salvo_kernel_destroy(kg);
    salvo_kernel_destroy(ks);
    expect_no_kernels(dev);
    lava_close(dev);
}

static void syntax_error_names_kernel(void **state)
{
    (void)state;
    salvo_device *dev = lava_open(0, 0);
    salvo_kernel *k = (salvo_kernel *)1;
    assert_int_equal(glsl_kernel(dev, BROKEN, "broken_kernel", &k), SALVO_ERROR_INVALID_ARGUMENT);
    assert_null(k);
    expect_error_contains("ERROR");
    expect_error_contains("broken_kernel");
    expect_error_contains("0:4"); /* glslang's line number */
    expect_no_kernels(dev);
    /* The device is none the worse: a good kernel still builds and runs. */
    assert_int_equal(glsl_kernel(dev, ADD_COMP, "add_glsl", &k), SALVO_OK);
    uint32_t *out = run_rounds(dev, k, 3, N);
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(out[i], 6);
    free(out);
    salvo_kernel_destroy(k);
    expect_no_kernels(dev);
    lava_close(dev);
}

static void compiles_but_not_a_salvo_kernel(void **state)
{
    (void)state;
    salvo_device *dev = lava_open(0, 0);
    /* Valid GLSL, but a texel buffer binding: refused by reflection, as
     * SPIR-V with one would be. */
    const char *image = "#version 450\n"
                        "layout(local_size_x = 1) in;\n"
                        "layout(binding = 0, r32ui) uniform uimageBuffer img;\n"
                        "void main() { imageStore(img, 0, uvec4(1u)); }\n";
    salvo_kernel *k = (salvo_kernel *)1;
    assert_int_equal(glsl_kernel(dev, image, "image_kernel", &k), SALVO_ERROR_UNSUPPORTED);
    assert_null(k);
    expect_error_contains("image_kernel");
    /* GLSL always names its entry point main. */
    salvo_kernel_desc kd = {.glsl = ADD_COMP, .entry = "not_main", .name = "entry_kernel"};
    assert_int_equal(salvo_kernel_create(dev, &kd, &k), SALVO_ERROR_INVALID_ARGUMENT);
    assert_null(k);
    expect_error_contains("entry_kernel");
    expect_no_kernels(dev);
    lava_close(dev);
}

static void exactly_one_source(void **state)
{
    (void)state;
    salvo_device *dev = lava_open(0, 0);
    salvo_kernel *k = (salvo_kernel *)1;

    salvo_kernel_desc both = {
        .spirv = add_spv, .spirv_size = sizeof add_spv, .glsl = ADD_COMP, .name = "both_kernel",
    };
    assert_int_equal(salvo_kernel_create(dev, &both, &k), SALVO_ERROR_INVALID_ARGUMENT);
    assert_null(k);
    expect_error_contains("both_kernel");

    /* A size left over with GLSL counts as SPIR-V given. */
    salvo_kernel_desc size_only = {.spirv_size = sizeof add_spv, .glsl = ADD_COMP};
    assert_int_equal(salvo_kernel_create(dev, &size_only, &k), SALVO_ERROR_INVALID_ARGUMENT);
    assert_null(k);

    salvo_kernel_desc neither = {.name = "neither_kernel"};
    assert_int_equal(salvo_kernel_create(dev, &neither, &k), SALVO_ERROR_INVALID_ARGUMENT);
    assert_null(k);
    expect_error_contains("neither_kernel");

    salvo_kernel_desc empty = {.glsl = "", .name = "empty_kernel"};
    assert_int_equal(salvo_kernel_create(dev, &empty, &k), SALVO_ERROR_INVALID_ARGUMENT);
    assert_null(k);
    expect_error_contains("empty_kernel");

    expect_no_kernels(dev);
    lava_close(dev);
}

/* Kernel creation from GLSL on several threads of one device at once. */
enum { THREADS = 4, PER_THREAD = 3 };

static void *create_kernels(void *arg)
{
    salvo_device *dev = arg;
    for (int i = 0; i < PER_THREAD; i++) {
        salvo_kernel *k = NULL;
        if (glsl_kernel(dev, ADD_COMP, "threaded", &k) != SALVO_OK)
            return (void *)1;
        salvo_kernel_destroy(k);
    }
    return NULL;
}

static void threads_create_glsl_kernels(void **state)
{
    (void)state;
    salvo_device *dev = lava_open(0, 0);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, create_kernels, dev), 0);
    for (int i = 0; i < THREADS; i++) {
        void *r = (void *)1;
        assert_int_equal(pthread_join(t[i], &r), 0);
        assert_null(r);
    }
    expect_no_kernels(dev);
    lava_close(dev);
}

/* A push-constant block of 8- and 16-bit members whose size is no whole
 * number of words (7 bytes): the values arrive, with no validation
 * message (Vulkan pushes whole words; the range was once 7 bytes). */
static void push_block_mid_word(void **state)
{
    (void)state;
    salvo_device *dev = lava_open(0, 0);
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(dev, &info), SALVO_OK);
    if (!info.features.push_constant_8bit || !info.features.push_constant_16bit ||
        !info.features.shader_int8 || !info.features.shader_int16) {
        lava_close(dev);
        skip();
    }
    static const char src[] =
        "#version 450\n"
        "#extension GL_EXT_shader_16bit_storage : require\n"
        "#extension GL_EXT_shader_8bit_storage : require\n"
        "#extension GL_EXT_shader_explicit_arithmetic_types : require\n"
        "layout(local_size_x = 1) in;\n"
        "layout(std430, binding = 0) buffer Out { uint o[]; };\n"
        "layout(push_constant) uniform P { uint a; uint16_t b; uint8_t c; } p;\n"
        "void main() { o[0] = p.a; o[1] = uint(p.b); o[2] = uint(p.c); }\n";
    salvo_kernel_desc kd = {.glsl = src, .name = "push7"};
    salvo_kernel *k = NULL;
    salvo_status r = salvo_kernel_create(dev, &kd, &k);
    if (r != SALVO_OK)
        fail_msg("kernel_create: %s: %s", salvo_status_string(r), salvo_last_error());
    salvo_kernel_info ki;
    assert_int_equal(salvo_kernel_info_get(k, &ki), SALVO_OK);
    assert_int_equal(ki.push_constant_size, 7);
    salvo_buffer *out = NULL;
    assert_int_equal(salvo_buffer_create(dev, 16, SALVO_DOMAIN_HOST, &out), SALVO_OK);
    salvo_stream *st = NULL;
    assert_int_equal(salvo_stream_create(dev, NULL, &st), SALVO_OK);
    unsigned char push[7] = {0x78, 0x56, 0x34, 0x12, 0xcd, 0xab, 0x5a};
    salvo_binding b = {.binding = 0, .buffer = out};
    uint32_t groups[3] = {1, 1, 1};
    assert_int_equal(salvo_launch(st, k, groups, &b, 1, push, sizeof push), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(st), SALVO_OK);
    uint32_t v[3];
    assert_int_equal(salvo_buffer_read(out, 0, v, sizeof v), SALVO_OK);
    assert_int_equal(v[0], 0x12345678u);
    assert_int_equal(v[1], 0xabcdu);
    assert_int_equal(v[2], 0x5au);
    salvo_stream_destroy(st);
    salvo_buffer_destroy(out);
    salvo_kernel_destroy(k);
    salvo_stats s;
    assert_int_equal(salvo_device_stats(dev, &s), SALVO_OK);
    assert_int_equal(s.validation_messages, 0);
    lava_close(dev);
}

/* More uniform blocks than the device allows a kernel (lavapipe: 15) are
 * refused, naming why, before the driver sees them (they once reached
 * the pipeline layout, which the validation layer flagged); within the
 * limit the kernel is made and runs. */
static void uniform_blocks_within_the_limit(void **state)
{
    (void)state;
    salvo_device *dev = lava_open(0, 0);
    for (int blocks = 2; blocks <= 20; blocks += 18) {
        char src[4096];
        int n = snprintf(src, sizeof src,
                         "#version 450\nlayout(local_size_x = 1) in;\n"
                         "layout(std430, binding = 0) buffer Out { uint o[]; };\n");
        for (int i = 1; i <= blocks; i++)
            n += snprintf(src + n, sizeof src - (size_t)n,
                          "layout(std140, binding = %d) uniform U%d { uint v; } u%d;\n", i, i, i);
        n += snprintf(src + n, sizeof src - (size_t)n, "void main() { uint s = 0u;");
        for (int i = 1; i <= blocks; i++)
            n += snprintf(src + n, sizeof src - (size_t)n, " s += u%d.v;", i);
        snprintf(src + n, sizeof src - (size_t)n, " o[0] = s; }\n");
        salvo_kernel_desc kd = {.glsl = src, .name = "uniforms"};
        salvo_kernel *k = NULL;
        salvo_status r = salvo_kernel_create(dev, &kd, &k);
        if (r == SALVO_ERROR_UNSUPPORTED) {
            assert_int_equal(blocks, 20);
            expect_error_contains("uniform blocks");
            assert_null(k);
            continue;
        }
        assert_int_equal(r, SALVO_OK);
        salvo_stream *st = NULL;
        assert_int_equal(salvo_stream_create(dev, NULL, &st), SALVO_OK);
        salvo_buffer *out = NULL, *u = NULL;
        assert_int_equal(salvo_buffer_create(dev, 16, SALVO_DOMAIN_HOST, &out), SALVO_OK);
        assert_int_equal(salvo_buffer_create(dev, 256, SALVO_DOMAIN_HOST, &u), SALVO_OK);
        uint32_t three[64] = {0};
        three[0] = 3;
        assert_int_equal(salvo_buffer_write(u, 0, three, sizeof three), SALVO_OK);
        salvo_binding b[21] = {{.binding = 0, .buffer = out}};
        for (int i = 1; i <= blocks; i++)
            b[i] = (salvo_binding){.binding = (uint32_t)i, .buffer = u};
        uint32_t groups[3] = {1, 1, 1};
        assert_int_equal(salvo_launch(st, k, groups, b, (uint32_t)blocks + 1, NULL, 0), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(st), SALVO_OK);
        uint32_t v = 0;
        assert_int_equal(salvo_buffer_read(out, 0, &v, 4), SALVO_OK);
        assert_int_equal(v, 3u * (uint32_t)blocks);
        salvo_stream_destroy(st);
        salvo_buffer_destroy(out);
        salvo_buffer_destroy(u);
        salvo_kernel_destroy(k);
    }
    expect_no_kernels(dev); /* and no validation message */
    lava_close(dev);
}

/* Run a one-workgroup kernel with spec constants and return what it wrote
 * to o[0..1], or fail with salvo's message. push: the push bytes. */
static void run_specialized(salvo_device *dev, salvo_kernel *k, const void *push,
                            uint32_t push_size, int32_t out[2])
{
    salvo_buffer *o = NULL;
    assert_int_equal(salvo_buffer_create(dev, 8, SALVO_DOMAIN_HOST, &o), SALVO_OK);
    salvo_stream *st = NULL;
    assert_int_equal(salvo_stream_create(dev, NULL, &st), SALVO_OK);
    salvo_binding b = {.binding = 0, .buffer = o};
    uint32_t groups[3] = {1, 1, 1};
    salvo_status r = salvo_launch(st, k, groups, &b, 1, push, push_size);
    if (r != SALVO_OK)
        fail_msg("launch: %s: %s", salvo_status_string(r), salvo_last_error());
    assert_int_equal(salvo_stream_synchronize(st), SALVO_OK);
    assert_int_equal(salvo_buffer_read(o, 0, out, 8), SALVO_OK);
    salvo_stream_destroy(st);
    salvo_buffer_destroy(o);
}

/* Spec constants narrower than 32 bits reach the driver at their own
 * width (they once went as 4 bytes each, which the validation layer
 * flags), negative values sign-extended into the word; a value that does
 * not fit the width is refused, and so is a value for a 64-bit constant
 * (salvo_spec_constant holds 32 bits), while its default still serves. */
static void spec_constants_of_every_width(void **state)
{
    (void)state;
    salvo_device *dev = lava_open(0, 0);
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(dev, &info), SALVO_OK);
    if (!info.features.shader_int8 || !info.features.shader_int16 ||
        !info.features.shader_int64) {
        lava_close(dev);
        skip();
    }
    static const char src[] =
        "#version 450\n"
        "#extension GL_EXT_shader_explicit_arithmetic_types : require\n"
        "layout(local_size_x = 1) in;\n"
        "layout(constant_id = 1) const int16_t S = int16_t(7);\n"
        "layout(constant_id = 2) const uint8_t B = uint8_t(9);\n"
        "layout(constant_id = 3) const int64_t L = 5l;\n"
        "layout(std430, binding = 0) buffer Out { int o[]; };\n"
        /* Each constant meets a value of the invocation's first, so that
         * no conversion is folded into a spec constant operation (SPIR-V
         * 1.3 allows none of 8- or 16-bit types in a shader). */
        "void main() {\n"
        "  uint z = gl_LocalInvocationID.x;\n"
        "  o[0] = int(S + int16_t(z));\n"
        "  o[1] = int(B + uint8_t(z)) + int(L + int64_t(z));\n"
        "}\n";
    salvo_spec_constant sc[3] = {{1, (uint32_t)-3}, {2, 200}, {3, 1}};
    salvo_kernel_desc kd = {.glsl = src, .name = "widths", .spec_constants = sc,
                            .spec_constant_count = 2};
    salvo_kernel *k = NULL;
    salvo_status r = salvo_kernel_create(dev, &kd, &k);
    if (r != SALVO_OK)
        fail_msg("kernel_create: %s: %s", salvo_status_string(r), salvo_last_error());
    int32_t v[2];
    run_specialized(dev, k, NULL, 0, v);
    assert_int_equal(v[0], -3);
    assert_int_equal(v[1], 205);
    salvo_kernel_destroy(k);
    k = NULL;

    kd.spec_constant_count = 3; /* a value for the 64-bit L */
    assert_int_equal(salvo_kernel_create(dev, &kd, &k), SALVO_ERROR_UNSUPPORTED);
    expect_error_contains("64-bit");
    assert_null(k);
    sc[0].value = 0x12345; /* past 16 bits */
    kd.spec_constant_count = 1;
    assert_int_equal(salvo_kernel_create(dev, &kd, &k), SALVO_ERROR_INVALID_ARGUMENT);
    expect_error_contains("16-bit");
    assert_null(k);
    sc[0].value = 0x8000; /* 16 bits as given: -32768 */
    assert_int_equal(salvo_kernel_create(dev, &kd, &k), SALVO_OK);
    run_specialized(dev, k, NULL, 0, v);
    assert_int_equal(v[0], -32768);
    assert_int_equal(v[1], 14);
    salvo_kernel_destroy(k);
    expect_no_kernels(dev); /* and no validation message */
    lava_close(dev);
}

/* Array lengths given by spec constants are read with the values given:
 * a push block's size (it once kept the default's, so the launch's push
 * bytes were refused) and the workgroup memory, checked against the
 * device's limit before the driver sees it. */
static void spec_constant_lengths(void **state)
{
    (void)state;
    salvo_device *dev = lava_open(0, 0);
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(dev, &info), SALVO_OK);
    static const char src[] =
        "#version 450\n"
        "layout(local_size_x = 1) in;\n"
        "layout(constant_id = 0) const int N = 2;\n"
        "layout(constant_id = 1) const int M = 1;\n"
        "layout(push_constant) uniform P { uint v[N]; } p;\n"
        "layout(std430, binding = 0) buffer Out { int o[]; };\n"
        "shared uint s[M];\n"
        "void main() { s[M - 1] = 5u; barrier(); o[0] = int(p.v[N - 1]); o[1] = int(s[M - 1]); }\n";
    salvo_spec_constant sc[2] = {{0, 4}, {1, 16}};
    salvo_kernel_desc kd = {.glsl = src, .name = "lengths", .spec_constants = sc,
                            .spec_constant_count = 2};
    salvo_kernel *k = NULL;
    salvo_status r = salvo_kernel_create(dev, &kd, &k);
    if (r != SALVO_OK)
        fail_msg("kernel_create: %s: %s", salvo_status_string(r), salvo_last_error());
    salvo_kernel_info ki;
    assert_int_equal(salvo_kernel_info_get(k, &ki), SALVO_OK);
    assert_int_equal(ki.push_constant_size, 16);
    uint32_t push[4] = {1, 2, 3, 44};
    int32_t v[2];
    run_specialized(dev, k, push, sizeof push, v);
    assert_int_equal(v[0], 44);
    assert_int_equal(v[1], 5);
    salvo_kernel_destroy(k);
    k = NULL;

    sc[1].value = info.max_workgroup_memory / 4 + 1; /* one uint past the limit */
    assert_int_equal(salvo_kernel_create(dev, &kd, &k), SALVO_ERROR_UNSUPPORTED);
    expect_error_contains("workgroup memory");
    assert_null(k);
    expect_no_kernels(dev); /* and no validation message */
    lava_close(dev);
}

int main(void)
{
    lava_require_device();
    int failed;
    if (!glsl_built()) {
        const struct CMUnitTest off[] = {
            cmocka_unit_test(unsupported_without_glsl),
            cmocka_unit_test(exactly_one_source),
        };
        failed = cmocka_run_group_tests(off, NULL, NULL);
    } else {
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(glsl_matches_spirv),
            cmocka_unit_test(syntax_error_names_kernel),
            cmocka_unit_test(compiles_but_not_a_salvo_kernel),
            cmocka_unit_test(exactly_one_source),
            cmocka_unit_test(threads_create_glsl_kernels),
            cmocka_unit_test(push_block_mid_word),
            cmocka_unit_test(uniform_blocks_within_the_limit),
            cmocka_unit_test(spec_constants_of_every_width),
            cmocka_unit_test(spec_constant_lengths),
        };
        failed = cmocka_run_group_tests(tests, NULL, NULL);
    }
    return lava_tests_result(failed);
}
