/* Kernels that need device features, on a real device (lavapipe in CI)
 * with the validation layer on: each one the device offers builds, runs
 * once and gives exactly the expected bytes; each one it does not is
 * refused (SALVO_ERROR_UNSUPPORTED) with the capability named, before any
 * pipeline is made. Workgroup memory over the device's limit is refused
 * with the sizes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "local_size_id.spv.h"
#include "salvo/salvo.h"
#include "support/lava.h"
#include "workgroup_memory.spv.h"

#define LOCAL 64u
#define OUT_BYTES 1024u

typedef struct feature_case {
    const char *name;
    const char *glsl;                 /* else spirv */
    const uint32_t *spirv;
    size_t spirv_size;
    bool (*offered)(const salvo_device_info *in);
    const char *refusal;              /* what the message says when it is not */
    void (*expect)(uint8_t *out);     /* the OUT_BYTES the kernel writes */
} feature_case;

/* ---- Int64 ---- */
static const char INT64[] =
    "#version 450\n"
    "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n"
    "layout(local_size_x = 64) in;\n"
    "layout(std430, binding = 0) buffer D { uint64_t d[]; };\n"
    "void main()\n"
    "{\n"
    "    uint i = gl_GlobalInvocationID.x;\n"
    "    d[i] = (uint64_t(i) << 40) + 0x123456789ul;\n"
    "}\n";
static bool int64_offered(const salvo_device_info *in) { return in->features.shader_int64; }
static void int64_expect(uint8_t *out)
{
    for (uint64_t i = 0; i < LOCAL; i++) {
        uint64_t v = (i << 40) + 0x123456789ull;
        memcpy(out + 8 * i, &v, 8);
    }
}

/* ---- Float64: values a float cannot hold ---- */
static const char FLOAT64[] =
    "#version 450\n"
    "layout(local_size_x = 64) in;\n"
    "layout(std430, binding = 0) buffer D { double d[]; };\n"
    "void main()\n"
    "{\n"
    "    uint i = gl_GlobalInvocationID.x;\n"
    "    d[i] = double(i) * 0.25LF + 1099511627776.0LF;\n"
    "}\n";
static bool float64_offered(const salvo_device_info *in) { return in->features.shader_float64; }
static void float64_expect(uint8_t *out)
{
    for (uint32_t i = 0; i < LOCAL; i++) {
        double v = (double)i * 0.25 + 1099511627776.0;
        memcpy(out + 8 * i, &v, 8);
    }
}

/* ---- Int16 arithmetic and 16-bit storage ---- */
static const char INT16[] =
    "#version 450\n"
    "#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require\n"
    "#extension GL_EXT_shader_16bit_storage : require\n"
    "layout(local_size_x = 64) in;\n"
    "layout(std430, binding = 0) buffer D { int16_t d[]; };\n"
    "void main()\n"
    "{\n"
    "    uint i = gl_GlobalInvocationID.x;\n"
    "    d[i] = int16_t(i) * int16_t(-300) + int16_t(5);\n"
    "}\n";
static bool int16_offered(const salvo_device_info *in)
{
    return in->features.shader_int16 && in->features.storage_buffer_16bit;
}
static void int16_expect(uint8_t *out)
{
    for (int32_t i = 0; i < (int32_t)LOCAL; i++) {
        int16_t v = (int16_t)(i * -300 + 5);
        memcpy(out + 2 * i, &v, 2);
    }
}

/* ---- Int8 arithmetic and 8-bit storage ---- */
static const char INT8[] =
    "#version 450\n"
    "#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require\n"
    "#extension GL_EXT_shader_8bit_storage : require\n"
    "layout(local_size_x = 64) in;\n"
    "layout(std430, binding = 0) buffer D { uint8_t d[]; };\n"
    "void main()\n"
    "{\n"
    "    uint i = gl_GlobalInvocationID.x;\n"
    "    d[i] = uint8_t(i) * uint8_t(7) + uint8_t(3);\n"
    "}\n";
static bool int8_offered(const salvo_device_info *in)
{
    return in->features.shader_int8 && in->features.storage_buffer_8bit;
}
static void int8_expect(uint8_t *out)
{
    for (uint32_t i = 0; i < LOCAL; i++)
        out[i] = (uint8_t)(i * 7 + 3);
}

/* ---- Float16 arithmetic (32-bit storage) ---- */
static const char FLOAT16[] =
    "#version 450\n"
    "#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require\n"
    "layout(local_size_x = 64) in;\n"
    "layout(std430, binding = 0) buffer D { uint d[]; };\n"
    "void main()\n"
    "{\n"
    "    uint i = gl_GlobalInvocationID.x;\n"
    "    float16_t h = float16_t(i) * float16_t(0.5) + float16_t(0.25);\n"
    "    d[i] = floatBitsToUint(float(h));\n"
    "}\n";
static bool float16_offered(const salvo_device_info *in) { return in->features.shader_float16; }
static void float16_expect(uint8_t *out)
{
    for (uint32_t i = 0; i < LOCAL; i++) {
        float v = (float)i * 0.5f + 0.25f;
        memcpy(out + 4 * i, &v, 4);
    }
}

/* ---- The Vulkan memory model, device scope ---- */
static const char MEMORY_MODEL[] =
    "#version 450\n"
    "#pragma use_vulkan_memory_model\n"
    "#extension GL_KHR_memory_scope_semantics : require\n"
    "layout(local_size_x = 64) in;\n"
    "layout(std430, binding = 0) buffer D { uint count; uint d[]; };\n"
    "void main()\n"
    "{\n"
    "    uint i = gl_GlobalInvocationID.x;\n"
    "    atomicAdd(count, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);\n"
    "    atomicStore(d[i], i * 5u, gl_ScopeDevice, gl_StorageSemanticsBuffer,\n"
    "                gl_SemanticsRelease);\n"
    "}\n";
static bool memory_model_offered(const salvo_device_info *in)
{
    return in->features.vulkan_memory_model && in->features.vulkan_memory_model_device_scope;
}
static void memory_model_expect(uint8_t *out)
{
    uint32_t count = LOCAL;
    memcpy(out, &count, 4);
    for (uint32_t i = 0; i < LOCAL; i++) {
        uint32_t v = i * 5;
        memcpy(out + 4 + 4 * i, &v, 4);
    }
}

/* ---- 64-bit atomics on a buffer ---- */
static const char INT64_ATOMICS[] =
    "#version 450\n"
    "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n"
    "#extension GL_EXT_shader_atomic_int64 : require\n"
    "layout(local_size_x = 64) in;\n"
    "layout(std430, binding = 0) buffer D { uint64_t total; };\n"
    "void main() { atomicAdd(total, uint64_t(1) << 33); }\n";
static bool int64_atomics_offered(const salvo_device_info *in)
{
    return in->features.shader_int64 && in->features.buffer_int64_atomics;
}
static void int64_atomics_expect(uint8_t *out)
{
    uint64_t total = (uint64_t)LOCAL << 33;
    memcpy(out, &total, 8);
}

/* ---- Subgroup arithmetic (64 invocations: whole subgroups) ---- */
static const char SUBGROUP[] =
    "#version 450\n"
    "#extension GL_KHR_shader_subgroup_arithmetic : require\n"
    "layout(local_size_x = 64) in;\n"
    "layout(std430, binding = 0) buffer D { uint d[]; };\n"
    "void main()\n"
    "{\n"
    "    uint i = gl_GlobalInvocationID.x;\n"
    "    d[i] = subgroupAdd(1u) == gl_SubgroupSize ? i + 1u : 0u;\n"
    "}\n";
static bool subgroup_offered(const salvo_device_info *in)
{
    uint32_t need = SALVO_SUBGROUP_BASIC | SALVO_SUBGROUP_ARITHMETIC;
    return (in->features.subgroup_operations & need) == need;
}
static void subgroup_expect(uint8_t *out)
{
    for (uint32_t i = 0; i < LOCAL; i++) {
        uint32_t v = i + 1;
        memcpy(out + 4 * i, &v, 4);
    }
}

/* ---- LocalSizeId: SPIR-V 1.6, local size 64 through spec constant 0 ---- */
static bool local_size_id_offered(const salvo_device_info *in)
{
    return in->features.maintenance4 && ((in->api_version >> 12) & 0x3ffu) >= 3;
}
static void local_size_id_expect(uint8_t *out)
{
    for (uint32_t i = 0; i < LOCAL; i++) {
        uint32_t v = i * 3 + LOCAL;
        memcpy(out + 4 * i, &v, 4);
    }
}

/* ---- Workgroup memory within the limit (16048 bytes) ---- */
static bool workgroup_offered(const salvo_device_info *in)
{
    return in->max_workgroup_memory >= 16048;
}
static void workgroup_expect(uint8_t *out)
{
    for (uint32_t i = 0; i < LOCAL; i++) {
        float v = (float)(63 - i) + 1.0f + 3.0f;
        memcpy(out + 4 * i, &v, 4);
    }
}

static const feature_case cases[] = {
    {"int64", INT64, NULL, 0, int64_offered, "Int64", int64_expect},
    {"float64", FLOAT64, NULL, 0, float64_offered, "Float64", float64_expect},
    {"int16", INT16, NULL, 0, int16_offered, "needs capability", int16_expect},
    {"int8", INT8, NULL, 0, int8_offered, "needs capability", int8_expect},
    {"float16", FLOAT16, NULL, 0, float16_offered, "Float16", float16_expect},
    {"memory_model", MEMORY_MODEL, NULL, 0, memory_model_offered, "VulkanMemoryModel",
     memory_model_expect},
    {"int64_atomics", INT64_ATOMICS, NULL, 0, int64_atomics_offered, "needs capability Int64",
     int64_atomics_expect},
    {"subgroup", SUBGROUP, NULL, 0, subgroup_offered, "needs capability GroupNonUniform",
     subgroup_expect},
    {"local_size_id", NULL, local_size_id_spv, sizeof local_size_id_spv, local_size_id_offered,
     "SPIR-V 1.6", local_size_id_expect},
    {"workgroup_memory", NULL, workgroup_memory_spv, sizeof workgroup_memory_spv,
     workgroup_offered, "bytes of workgroup memory", workgroup_expect},
};

static bool glsl_built(salvo_device *dev)
{
    salvo_kernel_desc kd = {.glsl = "layout(local_size_x = 1) in; void main() {}\n"};
    salvo_kernel *k = NULL;
    salvo_status st = salvo_kernel_create(dev, &kd, &k);
    salvo_kernel_destroy(k);
    return st != SALVO_ERROR_UNSUPPORTED;
}

static void run_case(salvo_device *dev, const salvo_device_info *in, const feature_case *c)
{
    salvo_spec_constant sc = {0, LOCAL};
    salvo_kernel_desc kd = {.glsl = c->glsl, .spirv = c->spirv, .spirv_size = c->spirv_size,
                            .name = c->name};
    if (c->spirv) {
        kd.spec_constants = &sc;
        kd.spec_constant_count = 1;
    }
    salvo_kernel *k = (salvo_kernel *)1;
    salvo_status st = salvo_kernel_create(dev, &kd, &k);
    if (!c->offered(in)) {
        print_message("%-16s refused: %s\n", c->name, salvo_last_error());
        assert_int_equal(st, SALVO_ERROR_UNSUPPORTED);
        assert_null(k);
        if (!strstr(salvo_last_error(), c->refusal) || !strstr(salvo_last_error(), c->name))
            fail_msg("'%s' does not name the kernel and say '%s'", salvo_last_error(), c->refusal);
        return;
    }
    if (st != SALVO_OK)
        fail_msg("%s: %s", c->name, salvo_last_error());
    salvo_buffer *buf = NULL;
    assert_int_equal(salvo_buffer_create(dev, OUT_BYTES, SALVO_DOMAIN_DEVICE, &buf), SALVO_OK);
    uint8_t got[OUT_BYTES] = {0}, want[OUT_BYTES] = {0};
    assert_int_equal(salvo_buffer_write(buf, 0, got, OUT_BYTES), SALVO_OK);
    salvo_stream *s = NULL;
    assert_int_equal(salvo_stream_create(dev, NULL, &s), SALVO_OK);
    salvo_binding b = {.binding = 0, .buffer = buf};
    uint32_t groups[3] = {1, 1, 1};
    assert_int_equal(salvo_launch(s, k, groups, &b, 1, NULL, 0), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(s), SALVO_OK);
    assert_int_equal(salvo_buffer_read(buf, 0, got, OUT_BYTES), SALVO_OK);
    c->expect(want);
    assert_memory_equal(got, want, OUT_BYTES);
    print_message("%-16s ran\n", c->name);
    salvo_stream_destroy(s);
    salvo_buffer_destroy(buf);
    salvo_kernel_destroy(k);
}

static void features_run_or_refuse(void **state)
{
    (void)state;
    salvo_device *dev = lava_open(0, 0);
    salvo_device_info in;
    assert_int_equal(salvo_device_info_get(dev, &in), SALVO_OK);
    const salvo_device_features *f = &in.features;
    print_message("%s (Vulkan 1.%u): float64 %d int64 %d int16 %d int8 %d float16 %d "
                  "storage8 %d/%d/%d storage16 %d/%d/%d memory_model %d/%d bda %d "
                  "varptr %d/%d int64_atomics %d/%d float_atomic_add %d/%d dot %d "
                  "maintenance4 %d zero_init %d subgroup_size_control %d full_subgroups %d "
                  "subgroup_ops 0x%x workgroup memory %u\n",
                  in.name, (in.api_version >> 12) & 0x3ffu, f->shader_float64, f->shader_int64,
                  f->shader_int16, f->shader_int8, f->shader_float16, f->storage_buffer_8bit,
                  f->uniform_buffer_8bit, f->push_constant_8bit, f->storage_buffer_16bit,
                  f->uniform_buffer_16bit, f->push_constant_16bit, f->vulkan_memory_model,
                  f->vulkan_memory_model_device_scope, f->buffer_device_address,
                  f->variable_pointers_storage_buffer, f->variable_pointers,
                  f->buffer_int64_atomics, f->shared_int64_atomics, f->buffer_float32_atomic_add,
                  f->buffer_float64_atomic_add, f->integer_dot_product, f->maintenance4,
                  f->zero_initialize_workgroup_memory, f->subgroup_size_control,
                  f->compute_full_subgroups, f->subgroup_operations, in.max_workgroup_memory);
    assert_true(f->checked);
    /* What runs and what is refused below follows these fields: on
     * lavapipe, those it offers must read on (lava_core compares them all
     * with the driver's). */
    lava_expect_lavapipe_features(&in);
    bool glsl = glsl_built(dev);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (cases[i].spirv || glsl)
            run_case(dev, &in, &cases[i]);
    salvo_stats st;
    assert_int_equal(salvo_device_stats(dev, &st), SALVO_OK);
    assert_int_equal(st.live_kernels, 0);
    assert_int_equal(st.validation_messages, 0);
    lava_close(dev);
}

/* One uint past the device's limit: refused with both sizes. */
static void workgroup_memory_over_limit(void **state)
{
    (void)state;
    salvo_device *dev = lava_open(0, 0);
    if (!glsl_built(dev)) {
        lava_close(dev);
        skip();
    }
    salvo_device_info in;
    assert_int_equal(salvo_device_info_get(dev, &in), SALVO_OK);
    char src[512], says[128];
    uint32_t words = in.max_workgroup_memory / 4 + 1;
    snprintf(src, sizeof src,
             "#version 450\n"
             "layout(local_size_x = 64) in;\n"
             "layout(std430, binding = 0) buffer D { uint d[]; };\n"
             "shared uint big[%u];\n"
             "void main()\n"
             "{\n"
             "    big[gl_LocalInvocationID.x] = 1u;\n"
             "    barrier();\n"
             "    d[gl_LocalInvocationID.x] = big[63u - gl_LocalInvocationID.x];\n"
             "}\n",
             words);
    snprintf(says, sizeof says, "declares %u bytes of workgroup memory; the device allows %u",
             words * 4, in.max_workgroup_memory);
    salvo_kernel_desc kd = {.glsl = src, .name = "too_much_shared"};
    salvo_kernel *k = (salvo_kernel *)1;
    assert_int_equal(salvo_kernel_create(dev, &kd, &k), SALVO_ERROR_UNSUPPORTED);
    assert_null(k);
    if (!strstr(salvo_last_error(), says))
        fail_msg("'%s' does not say '%s'", salvo_last_error(), says);
    lava_close(dev);
}

int main(void)
{
    lava_require_device();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(features_run_or_refuse),
        cmocka_unit_test(workgroup_memory_over_limit),
    };
    return lava_run_tests(tests);
}
