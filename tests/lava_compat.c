/* The kernel compatibility suite, on a real device (lavapipe in CI) with
 * the validation layer on: one small kernel per device feature and per
 * refusal reason (tests/compat/NAME.comp), each compiled at build time for
 * the Vulkan targets its "// targets:" line names (1.0, 1.1, 1.2, 1.3:
 * SPIR-V 1.0, 1.3, 1.5, 1.6); an optional one this glslang does not compile
 * is assembled from NAME.spvasm instead, where there is one. For every
 * module, one of:
 *  - ran: salvo_kernel_create accepts it, a launch runs it, and the bytes
 *    read back are exactly the expected ones;
 *  - refused: salvo_kernel_create refuses it with the expected status and
 *    a message naming the reason (a capability the device does not offer,
 *    a resource kind salvo does not bind, a size over a device limit, a
 *    SPIR-V version newer than the device takes);
 *  - skipped: an optional module this glslang does not compile and no
 *    NAME.spvasm stands in for, or a feature salvo has no field for that
 *    the device lacks.
 * Whether a feature kernel runs or is refused follows
 * salvo_device_info.features, so the same suite covers any device. One
 * line per module says which, so the log shows the suite's coverage. No
 * case may cause a validation message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compat_modules.h" /* generated from tests/compat/ (tests/CMakeLists.txt) */
#include "salvo/salvo.h"
#include "support/lava.h"

#define LOCAL 64u
#define N_MODULES (sizeof compat_modules / sizeof compat_modules[0])

/* ------------------------------------------------------------------ */
/* The device, and what each case leaves behind (destroyed after it,    */
/* pass or fail)                                                       */
/* ------------------------------------------------------------------ */
static salvo_device *dev;
static salvo_device_info info;
static uint32_t dev_minor; /* Vulkan 1.x of the device */
static bool claimed[N_MODULES];

enum {
    MAX_HELD = 16
};
static salvo_buffer *held_buffers[MAX_HELD];
static salvo_stream *held_streams[MAX_HELD];
static salvo_kernel *held_kernels[MAX_HELD];
static uint32_t held_buffer_count, held_stream_count, held_kernel_count;

static void release_held(void)
{
    for (uint32_t i = 0; i < held_stream_count; i++)
        salvo_stream_destroy(held_streams[i]);
    for (uint32_t i = 0; i < held_kernel_count; i++)
        salvo_kernel_destroy(held_kernels[i]);
    for (uint32_t i = 0; i < held_buffer_count; i++)
        salvo_buffer_destroy(held_buffers[i]);
    held_buffer_count = held_stream_count = held_kernel_count = 0;
}

static salvo_buffer *buffer_with(size_t bytes, const void *init)
{
    assert_true(held_buffer_count < MAX_HELD);
    salvo_buffer *b = NULL;
    assert_int_equal(salvo_buffer_create(dev, bytes, SALVO_DOMAIN_DEVICE, &b), SALVO_OK);
    held_buffers[held_buffer_count++] = b;
    uint8_t *zeros = NULL;
    if (!init) {
        zeros = calloc(1, bytes);
        assert_non_null(zeros);
        init = zeros;
    }
    assert_int_equal(salvo_buffer_write(b, 0, init, bytes), SALVO_OK);
    free(zeros);
    return b;
}

static salvo_stream *stream_new(void)
{
    assert_true(held_stream_count < MAX_HELD);
    salvo_stream *s = NULL;
    assert_int_equal(salvo_stream_create(dev, NULL, &s), SALVO_OK);
    held_streams[held_stream_count++] = s;
    return s;
}

static void launch(salvo_stream *s, salvo_kernel *k, uint32_t groups_x, const salvo_binding *b,
                   uint32_t binding_count, const void *push, uint32_t push_size)
{
    uint32_t groups[3] = {groups_x, 1, 1};
    salvo_status st = salvo_launch(s, k, groups, b, binding_count, push, push_size);
    if (st != SALVO_OK)
        fail_msg("launch: %s: %s", salvo_status_string(st), salvo_last_error());
}

static void synchronize(salvo_stream *s)
{
    salvo_status st = salvo_stream_synchronize(s);
    if (st != SALVO_OK)
        fail_msg("synchronize: %s: %s", salvo_status_string(st), salvo_last_error());
}

static void read_back(salvo_buffer *b, void *dst, size_t bytes)
{
    salvo_status st = salvo_buffer_read(b, 0, dst, bytes);
    if (st != SALVO_OK)
        fail_msg("read: %s: %s", salvo_status_string(st), salvo_last_error());
}

/* ------------------------------------------------------------------ */
/* Modules and cases                                                   */
/* ------------------------------------------------------------------ */
static uint32_t env_minor(const compat_module *m)
{
    return (uint32_t)(m->env[strlen(m->env) - 1] - '0');
}

/* The module of file name built for env, or NULL. */
static const compat_module *find_module(const char *name, const char *env)
{
    for (size_t i = 0; i < N_MODULES; i++)
        if (strcmp(compat_modules[i].name, name) == 0 && strcmp(compat_modules[i].env, env) == 0) {
            claimed[i] = true;
            return &compat_modules[i];
        }
    return NULL;
}

static void kernel_name(const compat_module *m, char *out, size_t size)
{
    snprintf(out, size, "%s-%s", m->name, m->env);
}

static salvo_status create(const compat_module *m, const salvo_spec_constant *sc,
                           uint32_t sc_count, salvo_kernel **out)
{
    char name[96];
    kernel_name(m, name, sizeof name);
    salvo_kernel_desc kd = {.spirv = m->spirv, .spirv_size = m->spirv_size, .name = name,
                            .spec_constants = sc, .spec_constant_count = sc_count};
    *out = (salvo_kernel *)1;
    salvo_status st = salvo_kernel_create(dev, &kd, out);
    if (st == SALVO_OK) {
        assert_true(held_kernel_count < MAX_HELD);
        held_kernels[held_kernel_count++] = *out;
    }
    return st;
}

static salvo_kernel *must_create(const compat_module *m, const salvo_spec_constant *sc,
                                 uint32_t sc_count)
{
    salvo_kernel *k = NULL;
    salvo_status st = create(m, sc, sc_count, &k);
    if (st != SALVO_OK)
        fail_msg("%s (%s): kernel_create: %s: %s", m->name, m->env, salvo_status_string(st),
                 salvo_last_error());
    return k;
}

/* What the case's line says after the module's name. */
static char outcome[512];

/* salvo_kernel_create must refuse m with status, saying says. */
static void must_refuse(const compat_module *m, const salvo_spec_constant *sc, uint32_t sc_count,
                        salvo_status status, const char *says)
{
    salvo_kernel *k = NULL;
    salvo_status st = create(m, sc, sc_count, &k);
    if (st == SALVO_OK)
        fail_msg("%s (%s): accepted; expected %s saying '%s'", m->name, m->env,
                 salvo_status_string(status), says);
    assert_null(k);
    if (st != status)
        fail_msg("%s (%s): %s (%s); expected %s saying '%s'", m->name, m->env,
                 salvo_status_string(st), salvo_last_error(), salvo_status_string(status), says);
    const char *msg = salvo_last_error();
    char name[96];
    kernel_name(m, name, sizeof name);
    if (!strstr(msg, says))
        fail_msg("%s (%s): '%s' does not say '%s'", m->name, m->env, msg, says);
    if (!strstr(msg, name))
        fail_msg("%s (%s): '%s' does not name the kernel '%s'", m->name, m->env, msg, name);
    snprintf(outcome, sizeof outcome, "refused: %s", msg);
}

typedef struct compat_case compat_case;
struct compat_case {
    const char *label;
    const char *modules[2];  /* tests/compat/<name>.comp, each of its targets */
    const char *uses;        /* a module fn finds for itself (find_module), or NULL */
    const char *what;
    /* NULL when the device runs the module; else the capability (or
     * reason) the refusal must name, with SALVO_ERROR_UNSUPPORTED; or,
     * starting with "skip:", why the case cannot say. */
    const char *(*needs)(const compat_case *c, const compat_module *m);
    /* Runs (or refuses) the module and checks everything. NULL: run_simple. */
    void (*fn)(const compat_case *c, const compat_module *m);
    /* run_simple: the bytes of binding 0 after one workgroup. */
    void (*expect)(uint8_t *out);
    uint32_t out_bytes;
    uint32_t subgroup_bit; /* SALVO_SUBGROUP_* the module needs beside BASIC */
    const char *subgroup_cap;
    bool awaiting_core;    /* a core feature landing now */
};

/* One workgroup, binding 0 zeroed before and compared after. */
static void run_simple(const compat_case *c, const compat_module *m)
{
    salvo_kernel *k = must_create(m, NULL, 0);
    salvo_buffer *out = buffer_with(c->out_bytes, NULL);
    salvo_stream *s = stream_new();
    salvo_binding b = {.binding = 0, .buffer = out};
    launch(s, k, 1, &b, 1, NULL, 0);
    synchronize(s);
    uint8_t *got = calloc(1, c->out_bytes), *want = calloc(1, c->out_bytes);
    assert_non_null(got);
    assert_non_null(want);
    read_back(out, got, c->out_bytes);
    c->expect(want);
    uint32_t at = 0;
    while (at < c->out_bytes && got[at] == want[at])
        at++;
    uint32_t g = 0, w = 0;
    if (at < c->out_bytes) {
        at &= ~3u; /* the word holding the first byte that differs */
        memcpy(&g, got + at, c->out_bytes - at < 4 ? c->out_bytes - at : 4);
        memcpy(&w, want + at, c->out_bytes - at < 4 ? c->out_bytes - at : 4);
    }
    free(got);
    free(want);
    if (at < c->out_bytes)
        fail_msg("%s (%s): bytes %u..%u are 0x%08x, not 0x%08x", m->name, m->env, at, at + 3, g,
                 w);
}

static void put32(uint8_t *out, uint32_t word, uint32_t v) { memcpy(out + 4 * word, &v, 4); }
static void putf(uint8_t *out, uint32_t word, float v) { memcpy(out + 4 * word, &v, 4); }

/* Half-precision bits of a value exactly representable as a normal half. */
static uint16_t half_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) == 0)
        return (uint16_t)(x >> 16);
    int32_t e = (int32_t)((x >> 23) & 0xffu) - 127 + 15;
    assert_true(e > 0 && e < 31 && (x & 0x1fffu) == 0);
    return (uint16_t)(((x >> 16) & 0x8000u) | ((uint32_t)e << 10) | ((x & 0x7fffffu) >> 13));
}

/* ------------------------------------------------------------------ */
/* Feature kernels                                                     */
/* ------------------------------------------------------------------ */
#define F (&info.features)

static void plain_expect(uint8_t *out)
{
    for (uint32_t i = 0; i < LOCAL; i++) {
        putf(out, i, (float)i * 1.5f + 0.25f);
        put32(out, 64 + i, (uint32_t)(3 - 7 * (int32_t)i));
    }
}

static const char *float64_needs(const compat_case *c, const compat_module *m)
{
    (void)m;
    (void)c;
    return F->shader_float64 ? NULL : "Float64";
}
static void float64_expect(uint8_t *out)
{
    for (uint32_t i = 0; i < LOCAL; i++) {
        double v = (double)i * 0.125 + 1099511627776.0;
        memcpy(out + 8 * i, &v, 8);
    }
}

static const char *int64_needs(const compat_case *c, const compat_module *m)
{
    (void)m;
    (void)c;
    return F->shader_int64 ? NULL : "Int64";
}
static void int64_expect(uint8_t *out)
{
    for (uint64_t i = 0; i < LOCAL; i++) {
        uint64_t v = (i << 36) * 3u + 0xfedcba987ull;
        memcpy(out + 8 * i, &v, 8);
    }
}

static const char *int16_needs(const compat_case *c, const compat_module *m)
{
    (void)m;
    (void)c;
    return F->shader_int16 ? NULL : "Int16";
}
static void int16_expect(uint8_t *out)
{
    for (uint32_t i = 0; i < LOCAL; i++) {
        int16_t v = (int16_t)(uint16_t)(i * 1000u + 7u);
        put32(out, i, (uint32_t)(int32_t)v);
    }
}

static const char *int8_needs(const compat_case *c, const compat_module *m)
{
    (void)m;
    (void)c;
    return F->shader_int8 ? NULL : "Int8";
}
static void int8_expect(uint8_t *out)
{
    for (uint32_t i = 0; i < LOCAL; i++)
        put32(out, i, (uint8_t)(i * 11u + 5u));
}

static const char *float16_needs(const compat_case *c, const compat_module *m)
{
    (void)m;
    (void)c;
    return F->shader_float16 ? NULL : "Float16";
}
static void float16_expect(uint8_t *out)
{
    for (uint32_t i = 0; i < LOCAL; i++)
        putf(out, i, (float)i * 0.5f + 0.25f);
}

/* 8-bit storage: uint8_t in, uint8_t out. */
static const char *storage8_needs(const compat_case *c, const compat_module *m)
{
    (void)m;
    (void)c;
    return F->storage_buffer_8bit ? NULL : "StorageBuffer8BitAccess";
}
static void storage8_run(const compat_case *c, const compat_module *m)
{
    (void)c;
    uint8_t in[LOCAL], got[LOCAL];
    for (uint32_t j = 0; j < LOCAL; j++)
        in[j] = (uint8_t)(j * 37u + 11u);
    salvo_kernel *k = must_create(m, NULL, 0);
    salvo_buffer *out = buffer_with(LOCAL, NULL), *src = buffer_with(LOCAL, in);
    salvo_stream *s = stream_new();
    salvo_binding b[] = {{.binding = 0, .buffer = out}, {.binding = 1, .buffer = src}};
    launch(s, k, 1, b, 2, NULL, 0);
    synchronize(s);
    read_back(out, got, LOCAL);
    for (uint32_t i = 0; i < LOCAL; i++)
        assert_int_equal(got[i], (uint8_t)(in[63 - i] * 3u + 1u));
}

/* 16-bit storage: uint16_t and float16_t in, the same out. */
static const char *storage16_needs(const compat_case *c, const compat_module *m)
{
    (void)m;
    (void)c;
    return F->storage_buffer_16bit ? NULL : "StorageBuffer16BitAccess";
}
static void storage16_run(const compat_case *c, const compat_module *m)
{
    (void)c;
    uint16_t in[2 * LOCAL], got[2 * LOCAL];
    for (uint32_t j = 0; j < LOCAL; j++) {
        in[j] = (uint16_t)(j * 1000u + 3u);
        in[LOCAL + j] = half_bits((float)j * 0.25f);
    }
    salvo_kernel *k = must_create(m, NULL, 0);
    salvo_buffer *out = buffer_with(sizeof got, NULL), *src = buffer_with(sizeof in, in);
    salvo_stream *s = stream_new();
    salvo_binding b[] = {{.binding = 0, .buffer = out}, {.binding = 1, .buffer = src}};
    launch(s, k, 1, b, 2, NULL, 0);
    synchronize(s);
    read_back(out, got, sizeof got);
    for (uint32_t i = 0; i < LOCAL; i++) {
        assert_int_equal(got[i], (uint16_t)(in[63 - i] * 5u + 2u));
        assert_int_equal(got[LOCAL + i], half_bits((float)i * 0.5f + 0.5f));
    }
}

/* 16-bit push constants. */
static const char *push16_needs(const compat_case *c, const compat_module *m)
{
    (void)m;
    (void)c;
    return F->push_constant_16bit ? NULL : "StoragePushConstant16";
}
static void push16_run(const compat_case *c, const compat_module *m)
{
    (void)c;
    struct {
        uint16_t a, b, h, g;
    } push = {3, 500, half_bits(2.5f), half_bits(7.0f)};
    salvo_kernel *k = must_create(m, NULL, 0);
    salvo_kernel_info ki;
    assert_int_equal(salvo_kernel_info_get(k, &ki), SALVO_OK);
    assert_int_equal(ki.push_constant_size, sizeof push);
    salvo_buffer *out = buffer_with(4 * LOCAL, NULL);
    salvo_stream *s = stream_new();
    salvo_binding b = {.binding = 0, .buffer = out};
    launch(s, k, 1, &b, 1, &push, sizeof push);
    synchronize(s);
    uint32_t got[LOCAL];
    read_back(out, got, sizeof got);
    for (uint32_t i = 0; i < LOCAL; i++)
        assert_int_equal(got[i], 3u * i + 500u + 10u + 7u);
}

static const char *memory_model_needs(const compat_case *c, const compat_module *m)
{
    (void)m;
    (void)c;
    if (!F->vulkan_memory_model)
        return "VulkanMemoryModel";
    return F->vulkan_memory_model_device_scope ? NULL : "VulkanMemoryModelDeviceScope";
}
static void memory_model_expect(uint8_t *out)
{
    put32(out, 0, LOCAL);
    put32(out, 1, LOCAL * (LOCAL - 1) / 2);
    for (uint32_t i = 0; i < LOCAL; i++)
        put32(out, 2 + i, i * 9u + 1u);
}

static const char *atomic64_needs(const compat_case *c, const compat_module *m)
{
    (void)m;
    (void)c;
    if (!F->shader_int64)
        return "Int64";
    if (!F->buffer_int64_atomics && !F->shared_int64_atomics)
        return "Int64Atomics";
    /* salvo takes Int64Atomics with either kind: this one is on a buffer. */
    return F->buffer_int64_atomics ? NULL : "skip: 64-bit atomics on workgroup memory only";
}
static void atomic64_expect(uint8_t *out)
{
    uint64_t total = 0, top = ((uint64_t)(LOCAL - 1) << 40) | 0x55u;
    for (uint64_t i = 0; i < LOCAL; i++)
        total += (i + 1) << 33;
    memcpy(out, &total, 8);
    memcpy(out + 8, &top, 8);
}

static const char *atomic_float_needs(const compat_case *c, const compat_module *m)
{
    (void)m;
    (void)c;
    return F->buffer_float32_atomic_add ? NULL : "AtomicFloat32AddEXT";
}
static void atomic_float_expect(uint8_t *out)
{
    putf(out, 0, (float)(LOCAL * (LOCAL - 1) / 2));
    putf(out, 1, (float)LOCAL * 0.5f);
    for (uint32_t p = 0; p < 4; p++)
        putf(out, 2 + p, (float)(LOCAL / 4));
}

static const char *atomic_float64_needs(const compat_case *c, const compat_module *m)
{
    (void)m;
    (void)c;
    if (!F->shader_float64)
        return "Float64";
    return F->buffer_float64_atomic_add ? NULL : "AtomicFloat64AddEXT";
}
static void atomic_float64_expect(uint8_t *out)
{
    double total = (double)(LOCAL * (LOCAL - 1) / 2) + 0.25 * LOCAL;
    memcpy(out, &total, 8);
}

/* Subgroups: the kernel checks itself, d[i] = i + 1 where all held. */
static const char *subgroup_needs(const compat_case *c, const compat_module *m)
{
    (void)m;
    uint32_t ops = F->subgroup_operations;
    if (!(ops & SALVO_SUBGROUP_BASIC))
        return "GroupNonUniform";
    if (c->subgroup_bit && !(ops & c->subgroup_bit))
        return c->subgroup_cap;
    return NULL;
}
static void subgroup_expect(uint8_t *out)
{
    for (uint32_t i = 0; i < LOCAL; i++)
        put32(out, i, i + 1);
}
static void subgroup_basic_run(const compat_case *c, const compat_module *m)
{
    (void)c;
    salvo_kernel *k = must_create(m, NULL, 0);
    salvo_buffer *out = buffer_with(4 * 66, NULL);
    salvo_stream *s = stream_new();
    salvo_binding b = {.binding = 0, .buffer = out};
    launch(s, k, 1, &b, 1, NULL, 0);
    synchronize(s);
    uint32_t got[66];
    read_back(out, got, sizeof got);
    for (uint32_t i = 0; i < LOCAL; i++)
        assert_int_equal(got[i], i + 1);
    /* As many elections as subgroups, and at least one subgroup. */
    assert_int_equal(got[64], got[65]);
    assert_in_range(got[65], 1, LOCAL);
    snprintf(outcome, sizeof outcome, "ran (%u subgroups of the 64 invocations)", got[65]);
}

static const char *dot_product_needs(const compat_case *c, const compat_module *m)
{
    (void)m;
    (void)c;
    return F->integer_dot_product ? NULL : "DotProduct";
}
static void dot_product_expect(uint8_t *out)
{
    for (uint32_t i = 0; i < LOCAL; i++)
        put32(out, i, (uint32_t)(3 * (int32_t)i - 13));
}

/* Zero-initialised workgroup memory: no SPIR-V capability says so, and
 * salvo has nothing to refuse it by. */
static const char *null_init_needs(const compat_case *c, const compat_module *m)
{
    (void)m;
    (void)c;
    return F->zero_initialize_workgroup_memory
               ? NULL
               : "skip: the device does not offer zero-initialised workgroup memory";
}
static void null_init_expect(uint8_t *out)
{
    for (uint32_t i = 0; i < LOCAL; i++)
        put32(out, i, (63u - i + 1000u) * 2u);
}

/* The local size from spec constant 0 (32), 2 workgroups; MUL = 5. */
static const char *local_size_id_needs(const compat_case *c, const compat_module *m)
{
    (void)c;
    return strcmp(m->name, "local_size_id") != 0 || F->maintenance4 ? NULL : "LocalSizeId";
}
static void spec_local_size_run(const compat_case *c, const compat_module *m)
{
    (void)c;
    salvo_spec_constant sc[] = {{0, 32}, {1, 5}};
    salvo_kernel *k = must_create(m, sc, 2);
    salvo_kernel_info ki;
    assert_int_equal(salvo_kernel_info_get(k, &ki), SALVO_OK);
    assert_int_equal(ki.local_size[0], 32);
    assert_int_equal(ki.local_size[1], 1);
    assert_int_equal(ki.local_size[2], 1);
    salvo_buffer *out = buffer_with(4 * LOCAL, NULL);
    salvo_stream *s = stream_new();
    salvo_binding b = {.binding = 0, .buffer = out};
    launch(s, k, 2, &b, 1, NULL, 0);
    synchronize(s);
    uint32_t got[LOCAL];
    read_back(out, got, sizeof got);
    for (uint32_t i = 0; i < LOCAL; i++)
        assert_int_equal(got[i], i * 5u + 32000u + i / 32u);
}

static void shared_memory_expect(uint8_t *out)
{
    for (uint32_t i = 0; i < LOCAL; i++)
        put32(out, i, 1023u - i + 4u * (i % 16u));
}

/* A uniform block at binding 1 between two storage buffers. */
static void uniform_storage_run(const compat_case *c, const compat_module *m)
{
    (void)c;
    salvo_kernel *k = must_create(m, NULL, 0);
    salvo_kernel_info ki;
    assert_int_equal(salvo_kernel_info_get(k, &ki), SALVO_OK);
    assert_int_equal(ki.binding_count, 3);
    assert_int_equal(ki.bindings[1].binding, 1);
    assert_true(ki.bindings[1].uniform);
    assert_int_equal(ki.bindings[1].access, SALVO_ACCESS_READ);
    assert_false(ki.bindings[0].uniform);
    assert_int_equal(ki.bindings[0].access, SALVO_ACCESS_WRITE);
    assert_int_equal(ki.bindings[2].access, SALVO_ACCESS_READ);
    struct {
        float k[4];
        uint32_t add[4];
    } params = {{2.0f, 0.5f, 0.0f, 0.0f}, {0, 0, 3, 0}};
    float x[LOCAL], got[LOCAL];
    for (uint32_t i = 0; i < LOCAL; i++)
        x[i] = (float)i * 0.25f;
    salvo_buffer *out = buffer_with(sizeof got, NULL), *u = buffer_with(sizeof params, &params),
                 *in = buffer_with(sizeof x, x);
    salvo_stream *s = stream_new();
    salvo_binding b[] = {{.binding = 0, .buffer = out},
                         {.binding = 1, .buffer = u},
                         {.binding = 2, .buffer = in}};
    launch(s, k, 1, b, 3, NULL, 0);
    synchronize(s);
    read_back(out, got, sizeof got);
    for (uint32_t i = 0; i < LOCAL; i++)
        assert_true(got[i] == (float)i * 0.5f + 3.5f);
}

static void push_constants_run(const compat_case *c, const compat_module *m)
{
    (void)c;
    struct {
        float a;
        uint32_t b;
        float cx, cy;
        uint32_t e[4];
    } push = {2.0f, 100, 3.0f, 4.0f, {1, 2, 3, 4}};
    salvo_kernel *k = must_create(m, NULL, 0);
    salvo_kernel_info ki;
    assert_int_equal(salvo_kernel_info_get(k, &ki), SALVO_OK);
    assert_int_equal(ki.push_constant_size, sizeof push);
    salvo_buffer *out = buffer_with(4 * LOCAL, NULL);
    salvo_stream *s = stream_new();
    salvo_binding b = {.binding = 0, .buffer = out};
    launch(s, k, 1, &b, 1, &push, sizeof push);
    synchronize(s);
    uint32_t got[LOCAL];
    read_back(out, got, sizeof got);
    for (uint32_t i = 0; i < LOCAL; i++)
        assert_int_equal(got[i], 2u * i + 100u + 12u + push.e[i % 4]);
}

/* Scalar block layout: salvo enables scalarBlockLayout where the device
 * has it, and has no feature field saying so; a Vulkan 1.2 device may
 * lack it. */
static const char *scalar_layout_needs(const compat_case *c, const compat_module *m)
{
    (void)m;
    (void)c;
    return dev_minor >= 2 ? NULL : "skip: scalar block layout is not known to be offered";
}
static void scalar_layout_expect(uint8_t *out)
{
    for (uint32_t i = 0; i < LOCAL; i++) {
        float f = (float)i;
        putf(out, 3 * i, f + 0.5f);
        putf(out, 3 * i + 1, f * 2.0f + 0.5f);
        putf(out, 3 * i + 2, f * 3.0f + 0.5f);
        putf(out, 192 + 4 * i, -f);
        putf(out, 192 + 4 * i + 1, f + 0.25f);
        putf(out, 192 + 4 * i + 2, f + 0.5f);
        putf(out, 192 + 4 * i + 3, f + 0.75f);
    }
}

/* ------------------------------------------------------------------ */
/* Features landing in the core now                                    */
/* ------------------------------------------------------------------ */

/* Two block types on binding 0: one binding, read and written. */
static void aliased_run(const compat_case *c, const compat_module *m)
{
    (void)c;
    salvo_kernel *k = must_create(m, NULL, 0);
    salvo_kernel_info ki;
    assert_int_equal(salvo_kernel_info_get(k, &ki), SALVO_OK);
    assert_int_equal(ki.binding_count, 1);
    assert_int_equal(ki.bindings[0].binding, 0);
    assert_int_equal(ki.bindings[0].access, SALVO_ACCESS_READ_WRITE);
    assert_int_equal(ki.bindings[0].count, 1);
    assert_false(ki.bindings[0].uniform);
    float data[LOCAL], got[LOCAL];
    for (uint32_t j = 0; j < LOCAL; j++)
        data[j] = (float)j + 1.0f;
    salvo_buffer *buf = buffer_with(sizeof data, data);
    salvo_stream *s = stream_new();
    salvo_binding b = {.binding = 0, .buffer = buf};
    launch(s, k, 1, &b, 1, NULL, 0);
    synchronize(s);
    read_back(buf, got, sizeof got);
    for (uint32_t i = 0; i < LOCAL / 4; i++)
        for (uint32_t e = 0; e < 4; e++)
            assert_true(got[4 * i + e] == data[4 * i + 3 - e] * 2.0f + 1.0f);
}

/* ins[3] on binding 1: out[i] = ins[0][i] + 10 ins[1][i] + 100 ins[2][i]. */
static void buffer_array_inputs(float in[3][LOCAL])
{
    for (uint32_t i = 0; i < LOCAL; i++) {
        in[0][i] = (float)i;
        in[1][i] = 2.0f;
        in[2][i] = 0.5f * (float)(i % 4);
    }
}
static void buffer_array_info(salvo_kernel *k)
{
    salvo_kernel_info ki;
    assert_int_equal(salvo_kernel_info_get(k, &ki), SALVO_OK);
    assert_int_equal(ki.binding_count, 2);
    assert_int_equal(ki.bindings[0].binding, 0);
    assert_int_equal(ki.bindings[0].count, 1);
    assert_int_equal(ki.bindings[0].access, SALVO_ACCESS_WRITE);
    assert_int_equal(ki.bindings[1].binding, 1);
    assert_int_equal(ki.bindings[1].count, 3);
    assert_int_equal(ki.bindings[1].access, SALVO_ACCESS_READ);
}
static void buffer_array_run(const compat_case *c, const compat_module *m)
{
    (void)c;
    salvo_kernel *k = must_create(m, NULL, 0);
    buffer_array_info(k);
    float in[3][LOCAL], got[LOCAL];
    buffer_array_inputs(in);
    salvo_buffer *out = buffer_with(sizeof got, NULL);
    salvo_buffer *ins[3];
    for (int e = 0; e < 3; e++)
        ins[e] = buffer_with(sizeof in[e], in[e]);
    salvo_stream *s = stream_new();
    /* The elements in any order. */
    salvo_binding b[] = {{.binding = 1, .element = 2, .buffer = ins[2]},
                         {.binding = 0, .buffer = out},
                         {.binding = 1, .element = 0, .buffer = ins[0]},
                         {.binding = 1, .element = 1, .buffer = ins[1]}};
    launch(s, k, 1, b, 4, NULL, 0);
    synchronize(s);
    read_back(out, got, sizeof got);
    for (uint32_t i = 0; i < LOCAL; i++)
        if (got[i] != (float)i + 20.0f + 50.0f * (float)(i % 4))
            fail_msg("out[%u] = %g, not %g = %g + 10 * %g + 100 * %g", i, (double)got[i],
                     (double)((float)i + 20.0f + 50.0f * (float)(i % 4)), (double)in[0][i],
                     (double)in[1][i], (double)in[2][i]);
}

/* Bad array bindings: an element past the array, a missing element. */
static void buffer_array_bad_run(const compat_case *c, const compat_module *m)
{
    (void)c;
    salvo_kernel *k = must_create(m, NULL, 0);
    salvo_buffer *out = buffer_with(4 * LOCAL, NULL), *in = buffer_with(4 * LOCAL, NULL);
    salvo_stream *s = stream_new();
    uint32_t groups[3] = {1, 1, 1};
    salvo_binding past[] = {{.binding = 0, .buffer = out},
                            {.binding = 1, .element = 0, .buffer = in},
                            {.binding = 1, .element = 1, .buffer = in},
                            {.binding = 1, .element = 2, .buffer = in},
                            {.binding = 1, .element = 3, .buffer = in}};
    assert_int_equal(salvo_launch(s, k, groups, past, 5, NULL, 0), SALVO_ERROR_INVALID_ARGUMENT);
    char past_msg[256];
    snprintf(past_msg, sizeof past_msg, "%s", salvo_last_error());
    salvo_binding missing[] = {{.binding = 0, .buffer = out},
                               {.binding = 1, .element = 0, .buffer = in},
                               {.binding = 1, .element = 2, .buffer = in}};
    assert_int_equal(salvo_launch(s, k, groups, missing, 3, NULL, 0),
                     SALVO_ERROR_INVALID_ARGUMENT);
    const char *msg = salvo_last_error();
    if (!strstr(msg, "binding 1") || !strstr(msg, "element 1"))
        fail_msg("missing element: '%s' does not name 'binding 1' and 'element 1'", msg);
    snprintf(outcome, sizeof outcome,
             "ran (element 3 of 3: %s; element 1 missing: %s)", past_msg, msg);
    /* Nothing was recorded: the stream is fine. */
    synchronize(s);
}

/* Buffer device addresses: bda_write writes through an address in push
 * constants; bda_read, the next launch on the stream, reads what it wrote
 * through the same address. The buffer behind it is never bound. */
static void buffer_address_run(const compat_case *c, const compat_module *m)
{
    (void)c;
    salvo_buffer *target = buffer_with(4 * LOCAL, NULL);
    uint64_t addr = 0;
    salvo_status st = salvo_buffer_address(target, &addr);
    const compat_module *reader = find_module("bda_read", m->env);
    assert_non_null(reader);
    if (!F->buffer_device_address) {
        assert_int_equal(st, SALVO_ERROR_UNSUPPORTED);
        must_refuse(m, NULL, 0, SALVO_ERROR_UNSUPPORTED, "PhysicalStorageBufferAddresses");
        must_refuse(reader, NULL, 0, SALVO_ERROR_UNSUPPORTED, "PhysicalStorageBufferAddresses");
        return;
    }
    if (st != SALVO_OK)
        fail_msg("buffer_address: %s: %s", salvo_status_string(st), salvo_last_error());
    assert_true(addr != 0);
    uint64_t again = 0;
    assert_int_equal(salvo_buffer_address(target, &again), SALVO_OK);
    assert_true(again == addr);

    salvo_kernel *writer = must_create(m, NULL, 0), *rk = must_create(reader, NULL, 0);
    salvo_kernel_info ki;
    assert_int_equal(salvo_kernel_info_get(writer, &ki), SALVO_OK);
    assert_int_equal(ki.binding_count, 0);
    struct {
        uint64_t dst;
        uint32_t mul, add;
    } wpush = {addr, 3, 7};
    assert_int_equal(ki.push_constant_size, sizeof wpush);
    struct {
        uint64_t src;
    } rpush = {addr};
    salvo_buffer *out = buffer_with(4 * LOCAL, NULL);
    salvo_stream *s = stream_new();
    salvo_binding b = {.binding = 0, .buffer = out};
    launch(s, writer, 1, NULL, 0, &wpush, sizeof wpush);
    launch(s, rk, 1, &b, 1, &rpush, sizeof rpush);
    synchronize(s);
    uint32_t got[LOCAL];
    read_back(target, got, sizeof got);
    for (uint32_t i = 0; i < LOCAL; i++)
        assert_int_equal(got[i], 3u * i + 7u);
    read_back(out, got, sizeof got);
    for (uint32_t i = 0; i < LOCAL; i++)
        assert_int_equal(got[i], 2u * (3u * i + 7u) + 1u);

    /* A host read of the buffer behind an address waits for the launches
     * that may write it, with no synchronize. */
    wpush.mul = 11;
    wpush.add = 1;
    launch(s, writer, 1, NULL, 0, &wpush, sizeof wpush);
    read_back(target, got, sizeof got);
    for (uint32_t i = 0; i < LOCAL; i++)
        assert_int_equal(got[i], 11u * i + 1u);
    synchronize(s);
}

/* An image declared and not used by main: no binding for it. */
static void unused_image_run(const compat_case *c, const compat_module *m)
{
    (void)c;
    salvo_kernel *k = must_create(m, NULL, 0);
    salvo_kernel_info ki;
    assert_int_equal(salvo_kernel_info_get(k, &ki), SALVO_OK);
    assert_int_equal(ki.binding_count, 1);
    assert_int_equal(ki.bindings[0].binding, 0);
    salvo_buffer *out = buffer_with(4 * LOCAL, NULL);
    salvo_stream *s = stream_new();
    salvo_binding b = {.binding = 0, .buffer = out};
    launch(s, k, 1, &b, 1, NULL, 0);
    synchronize(s);
    uint32_t got[LOCAL];
    read_back(out, got, sizeof got);
    for (uint32_t i = 0; i < LOCAL; i++)
        assert_int_equal(got[i], 7u * i + 2u);
}

static salvo_image *image_with(salvo_format format, uint32_t w, uint32_t h, const void *texels)
{
    salvo_image *img = NULL;
    salvo_image_desc d = {SALVO_IMAGE_2D, format, w, h, 1, 1, 0};
    salvo_status st = salvo_image_create(dev, &d, &img);
    if (st != SALVO_OK)
        fail_msg("image_create: %s: %s", salvo_status_string(st), salvo_last_error());
    if (texels)
        assert_int_equal(salvo_image_write(img, NULL, texels,
                                           (uint64_t)w * h * salvo_format_texel_size(format)),
                         SALVO_OK);
    return img;
}

/* A storage image written by every invocation of an 8x8 group. */
static void storage_image_run(const compat_case *c, const compat_module *m)
{
    (void)c;
    salvo_kernel *k = must_create(m, NULL, 0);
    salvo_buffer *out = buffer_with(4 * 64, NULL);
    salvo_image *img = image_with(SALVO_FORMAT_RGBA8_UNORM, 8, 8, NULL);
    salvo_stream *s = stream_new();
    salvo_binding b[2] = {{.binding = 0, .buffer = out}, {.binding = 1, .image = img}};
    launch(s, k, 1, b, 2, NULL, 0);
    synchronize(s);
    uint8_t texels[8 * 8 * 4];
    assert_int_equal(salvo_image_read(img, NULL, texels, sizeof texels), SALVO_OK);
    for (size_t i = 0; i < sizeof texels; i++)
        assert_int_equal(texels[i], 255);
    uint32_t got[64];
    read_back(out, got, sizeof got);
    for (int i = 0; i < 64; i++)
        assert_int_equal(got[i], 1u);
    salvo_image_destroy(img);
}

/* Float atomics on the texels of an R32_FLOAT image: an exchange that
 * hands back each old value, and adds (exact in any order). */
static const char *image_float_exchange_needs(const compat_case *c, const compat_module *m)
{
    (void)c;
    (void)m;
    return F->image_float32_atomics ? NULL : "shaderImageFloat32Atomics";
}
static const char *image_float_add_needs(const compat_case *c, const compat_module *m)
{
    (void)c;
    (void)m;
    if (!F->buffer_float32_atomic_add)
        return "AtomicFloat32AddEXT"; /* the capability, refused first */
    return F->image_float32_atomic_add ? NULL : "shaderImageFloat32AtomicAdd";
}
static void image_float_atomic_run(const compat_case *c, const compat_module *m)
{
    bool add = strcmp(c->modules[0], "image_float_add") == 0;
    salvo_kernel *k = must_create(m, NULL, 0);
    float texels[64];
    for (int i = 0; i < 64; i++)
        texels[i] = add ? 0.0f : (float)i * 2.0f;
    salvo_image *img = image_with(SALVO_FORMAT_R32_FLOAT, 64, 1, texels);
    salvo_buffer *out = buffer_with(4 * 64, NULL);
    salvo_stream *s = stream_new();
    salvo_binding b[2] = {{.binding = 0, .buffer = out}, {.binding = 1, .image = img}};
    if (add)
        b[0] = (salvo_binding){.binding = 0, .image = img};
    launch(s, k, 1, b, add ? 1 : 2, NULL, 0);
    synchronize(s);
    float got[64];
    assert_int_equal(salvo_image_read(img, NULL, got, sizeof got), SALVO_OK);
    if (add) {
        for (int i = 0; i < 4; i++)
            assert_true(got[i] == 16.0f);
        assert_true(got[4] == 32.0f);
    } else {
        float old[64];
        read_back(out, old, sizeof old);
        for (int i = 0; i < 64; i++) {
            assert_true(got[i] == (float)i + 0.5f);
            assert_true(old[i] == (float)i * 2.0f);
        }
    }
    salvo_image_destroy(img);
}

/* Texels of a 64x1 R32_FLOAT image read through a sampler, combined in
 * the module or put together from a texture and a sampler. */
static void sampled_image_run(const compat_case *c, const compat_module *m)
{
    bool separate = strcmp(c->modules[0], "separate_sampler") == 0;
    salvo_kernel *k = must_create(m, NULL, 0);
    float texels[64];
    for (int i = 0; i < 64; i++)
        texels[i] = (float)i * 0.5f + 3.0f;
    salvo_image *img = image_with(SALVO_FORMAT_R32_FLOAT, 64, 1, texels);
    salvo_sampler *smp = NULL;
    assert_int_equal(salvo_sampler_create(dev, NULL, &smp), SALVO_OK);
    salvo_buffer *out = buffer_with(4 * 64, NULL);
    salvo_stream *s = stream_new();
    salvo_binding b[3] = {{.binding = 0, .buffer = out}};
    uint32_t n = 2;
    if (separate) {
        b[1] = (salvo_binding){.binding = 1, .sampler = smp};
        b[2] = (salvo_binding){.binding = 2, .image = img};
        n = 3;
    } else {
        b[1] = (salvo_binding){.binding = 1, .image = img, .sampler = smp};
    }
    launch(s, k, 1, b, n, NULL, 0);
    synchronize(s);
    float got[64];
    read_back(out, got, sizeof got);
    /* Nearest sampling at texel i's left edge, or texelFetch: texel i. */
    for (int i = 0; i < 64; i++)
        assert_true(got[i] == texels[i]);
    salvo_sampler_destroy(smp);
    salvo_image_destroy(img);
}

/* ------------------------------------------------------------------ */
/* Refusals                                                            */
/* ------------------------------------------------------------------ */
static void refuse_set1(const compat_case *c, const compat_module *m)
{
    (void)c;
    must_refuse(m, NULL, 0, SALVO_ERROR_INVALID_ARGUMENT, "set 1");
}
static void refuse_texel_buffer(const compat_case *c, const compat_module *m)
{
    (void)c;
    must_refuse(m, NULL, 0, SALVO_ERROR_UNSUPPORTED, "texel buffers");
}
static void refuse_cube(const compat_case *c, const compat_module *m)
{
    (void)c;
    must_refuse(m, NULL, 0, SALVO_ERROR_UNSUPPORTED, "cube");
}
static void refuse_accel(const compat_case *c, const compat_module *m)
{
    (void)c;
    must_refuse(m, NULL, 0, SALVO_ERROR_UNSUPPORTED, "acceleration structure");
}
static void refuse_runtime_array(const compat_case *c, const compat_module *m)
{
    (void)c;
    must_refuse(m, NULL, 0, SALVO_ERROR_UNSUPPORTED, "runtime array");
}
static void refuse_workgroup_memory(const compat_case *c, const compat_module *m)
{
    (void)c;
    if (info.max_workgroup_memory >= 3u * 1024 * 1024) {
        snprintf(outcome, sizeof outcome, "skipped: the device allows %u bytes of workgroup memory",
                 info.max_workgroup_memory);
        return;
    }
    must_refuse(m, NULL, 0, SALVO_ERROR_UNSUPPORTED, "workgroup memory");
}
static void cooperative_matrix_refused(const compat_case *c, const compat_module *m)
{
    (void)c;
    /* salvo_device_features has no cooperative matrix field: never offered. */
    must_refuse(m, NULL, 0, SALVO_ERROR_UNSUPPORTED, "CooperativeMatrix");
}

/* 272 bytes of push constants: refused over the device's limit, else run. */
static void push_large_run(const compat_case *c, const compat_module *m)
{
    (void)c;
    float v[17][4];
    if (sizeof v > info.max_push_constants_size) {
        must_refuse(m, NULL, 0, SALVO_ERROR_UNSUPPORTED, "push");
        return;
    }
    for (uint32_t r = 0; r < 17; r++)
        for (uint32_t e = 0; e < 4; e++)
            v[r][e] = (float)(4 * r + e);
    salvo_kernel *k = must_create(m, NULL, 0);
    salvo_buffer *out = buffer_with(4 * LOCAL, NULL);
    salvo_stream *s = stream_new();
    salvo_binding b = {.binding = 0, .buffer = out};
    launch(s, k, 1, &b, 1, v, sizeof v);
    synchronize(s);
    float got[LOCAL];
    read_back(out, got, sizeof got);
    for (uint32_t i = 0; i < LOCAL; i++)
        assert_true(got[i] == v[i % 17][i % 4] + v[16][3]);
}

/* A local size over the device's limits, through spec constants: one
 * past the largest x, and (where the module has a y) the invocation
 * limit passed within the per-dimension limits. */
static void local_size_over_run(const compat_case *c, const compat_module *m)
{
    (void)c;
    salvo_spec_constant x_over[] = {{0, info.max_workgroup_size[0] + 1}, {2, 1}};
    must_refuse(m, x_over, 2, SALVO_ERROR_INVALID_ARGUMENT, "local size");
    char first[sizeof outcome];
    snprintf(first, sizeof first, "%s", outcome);
    uint32_t x = info.max_workgroup_size[0] < info.max_workgroup_invocations
                     ? info.max_workgroup_size[0]
                     : info.max_workgroup_invocations;
    uint32_t y = info.max_workgroup_invocations / x + 1;
    if (strcmp(m->name, "spec_local_size") == 0 && y <= info.max_workgroup_size[1]) {
        salvo_spec_constant xy_over[] = {{0, x}, {2, y}};
        must_refuse(m, xy_over, 2, SALVO_ERROR_INVALID_ARGUMENT, "local size");
        snprintf(outcome, sizeof outcome, "%.400s; %u x %u: refused too", first, x, y);
    }
}

/* ------------------------------------------------------------------ */
/* The cases                                                           */
/* ------------------------------------------------------------------ */
/* A case of modules m (and m2), running or refused by fn (run_simple). */
#define CASE(l, m, w) .label = (l), .modules = {(m), NULL}, .what = (w)
#define CASE2(l, m, m2, w) .label = (l), .modules = {(m), (m2)}, .what = (w)
#define SG(bit, cap)                                                                               \
    .needs = subgroup_needs, .expect = subgroup_expect, .out_bytes = 4 * LOCAL,                    \
    .subgroup_bit = (bit), .subgroup_cap = (cap)

static const compat_case cases[] = {
    /* Runs where offered */
    {CASE("plain", "plain", "32-bit float and int"), .expect = plain_expect, .out_bytes = 512},
    {CASE("float64", "float64", "Float64"), .needs = float64_needs, .expect = float64_expect,
     .out_bytes = 512},
    {CASE("int64", "int64", "Int64"), .needs = int64_needs, .expect = int64_expect,
     .out_bytes = 512},
    {CASE("int16", "int16", "Int16 arithmetic"), .needs = int16_needs, .expect = int16_expect,
     .out_bytes = 256},
    {CASE("int8", "int8", "Int8 arithmetic"), .needs = int8_needs, .expect = int8_expect,
     .out_bytes = 256},
    {CASE("float16", "float16", "Float16 arithmetic"), .needs = float16_needs,
     .expect = float16_expect, .out_bytes = 256},
    {CASE("storage8", "storage8", "8-bit storage"), .needs = storage8_needs, .fn = storage8_run},
    {CASE("storage16", "storage16", "16-bit storage"), .needs = storage16_needs,
     .fn = storage16_run},
    {CASE("push16", "push16", "16-bit push constants"), .needs = push16_needs, .fn = push16_run},
    {CASE("memory_model", "memory_model", "Vulkan memory model"), .needs = memory_model_needs,
     .expect = memory_model_expect, .out_bytes = 264},
    {CASE("atomic64", "atomic64", "64-bit buffer atomics"), .needs = atomic64_needs,
     .expect = atomic64_expect, .out_bytes = 16},
    {CASE("atomic_float", "atomic_float", "float32 atomic add"), .needs = atomic_float_needs,
     .expect = atomic_float_expect, .out_bytes = 24},
    {CASE("atomic_float64", "atomic_float64", "float64 atomic add"),
     .needs = atomic_float64_needs, .expect = atomic_float64_expect, .out_bytes = 8},
    {CASE("subgroup_basic", "subgroup_basic", "subgroup basic"), .needs = subgroup_needs,
     .fn = subgroup_basic_run},
    {CASE("subgroup_vote", "subgroup_vote", "subgroup vote"),
     SG(SALVO_SUBGROUP_VOTE, "GroupNonUniformVote")},
    {CASE("subgroup_arithmetic", "subgroup_arithmetic", "subgroup arithmetic"),
     SG(SALVO_SUBGROUP_ARITHMETIC, "GroupNonUniformArithmetic")},
    {CASE("subgroup_ballot", "subgroup_ballot", "subgroup ballot"),
     SG(SALVO_SUBGROUP_BALLOT, "GroupNonUniformBallot")},
    {CASE("subgroup_shuffle", "subgroup_shuffle", "subgroup shuffle"),
     SG(SALVO_SUBGROUP_SHUFFLE, "GroupNonUniformShuffle")},
    {CASE("subgroup_shuffle_relative", "subgroup_shuffle_relative", "subgroup relative shuffle"),
     SG(SALVO_SUBGROUP_SHUFFLE_RELATIVE, "GroupNonUniformShuffleRelative")},
    {CASE("subgroup_clustered", "subgroup_clustered", "subgroup clustered"),
     SG(SALVO_SUBGROUP_CLUSTERED, "GroupNonUniformClustered")},
    {CASE("subgroup_quad", "subgroup_quad", "subgroup quad"),
     SG(SALVO_SUBGROUP_QUAD, "GroupNonUniformQuad")},
    {CASE("dot_product", "dot_product", "integer dot product"), .needs = dot_product_needs,
     .expect = dot_product_expect, .out_bytes = 256},
    {CASE("null_init", "null_init", "zero-initialised workgroup memory"),
     .needs = null_init_needs, .expect = null_init_expect, .out_bytes = 256},
    {CASE("local_size_id", "local_size_id", "LocalSizeId"), .needs = local_size_id_needs,
     .fn = spec_local_size_run},
    {CASE("spec_local_size", "spec_local_size", "local size from spec constants"),
     .fn = spec_local_size_run},
    {CASE("shared_memory", "shared_memory", "workgroup memory within the limit"),
     .expect = shared_memory_expect, .out_bytes = 256},
    {CASE("uniform_storage", "uniform_storage", "uniform and storage buffers"),
     .fn = uniform_storage_run},
    {CASE("push_constants", "push_constants", "push constants"), .fn = push_constants_run},
    {CASE("scalar_layout", "scalar_layout", "scalar block layout"), .needs = scalar_layout_needs,
     .expect = scalar_layout_expect, .out_bytes = 1792},
    /* Landing in the core now */
    {CASE("aliased", "aliased", "aliased binding"), .fn = aliased_run, .awaiting_core = true},
    {CASE("buffer_array", "buffer_array", "array of buffers"), .fn = buffer_array_run,
     .awaiting_core = true},
    {CASE("buffer_array_bad", "buffer_array", "array of buffers, bad elements"),
     .fn = buffer_array_bad_run, .awaiting_core = true},
    {CASE("buffer_address", "bda_write", "buffer device address"), .uses = "bda_read",
     .fn = buffer_address_run, .awaiting_core = true},
    {CASE("unused_image", "unused_image", "unused image: per-entry reflection"),
     .fn = unused_image_run, .awaiting_core = true},
    /* Refused */
    {CASE("refuse_set1", "refuse_set1", "descriptor set 1"), .fn = refuse_set1},
    {CASE("storage_image", "storage_image", "storage image"), .fn = storage_image_run},
    {CASE("sampled_image", "sampled_image", "combined image sampler"), .fn = sampled_image_run},
    {CASE("image_float_exchange", "image_float_exchange", "float atomic exchange on an image"),
     .needs = image_float_exchange_needs, .fn = image_float_atomic_run},
    {CASE("image_float_add", "image_float_add", "float atomic add on an image"),
     .needs = image_float_add_needs, .fn = image_float_atomic_run},
    {CASE("separate_sampler", "separate_sampler", "sampler and texture"), .fn = sampled_image_run},
    {CASE("refuse_texel_buffer", "refuse_texel_buffer", "storage texel buffer"),
     .fn = refuse_texel_buffer},
    {CASE("refuse_cube", "refuse_cube", "cube map"), .fn = refuse_cube},
    {CASE("refuse_accel_struct", "refuse_accel_struct", "acceleration structure"),
     .fn = refuse_accel},
    {CASE("refuse_runtime_array", "refuse_runtime_array", "runtime array of buffers"),
     .fn = refuse_runtime_array},
    {CASE("refuse_workgroup_memory", "refuse_workgroup_memory", "3 MiB of workgroup memory"),
     .fn = refuse_workgroup_memory},
    {CASE("push_large", "push_large", "272 bytes of push constants"), .fn = push_large_run},
    {CASE2("local_size_over", "spec_local_size", "local_size_id", "local size over the limits"),
     .needs = local_size_id_needs, .fn = local_size_over_run},
    {CASE("cooperative_matrix", "cooperative_matrix", "cooperative matrix"),
     .fn = cooperative_matrix_refused},
};

#define N_CASES (sizeof cases / sizeof cases[0])

/* One module of a case: the SPIR-V version rule first (a module newer
 * than the device takes is refused whatever it holds), then the device's
 * features, then the case itself. */
typedef struct compat_test {
    const compat_case *c;
    const compat_module *m; /* spirv NULL: left out of this build */
    char name[160];
} compat_test;

static void run_case(void **state)
{
    const compat_test *t = *state;
    const compat_case *c = t->c;
    const compat_module *m = t->m;
    if (!m->spirv) {
        print_message("compat %-26s %-9s skipped: this glslangValidator does not compile "
                      "tests/compat/%s.comp and there is no %s.spvasm\n",
                      c->label, m->env, m->name, m->name);
        skip(); /* counted as skipped, not as passed */
    }
    uint64_t messages = lava_validation_messages();
    snprintf(outcome, sizeof outcome, "ran");
    const char *needs = NULL;
    if (env_minor(m) > dev_minor)
        must_refuse(m, NULL, 0, SALVO_ERROR_UNSUPPORTED, "SPIR-V");
    else if (c->needs && (needs = c->needs(c, m)) != NULL) {
        if (strncmp(needs, "skip:", 5) == 0)
            snprintf(outcome, sizeof outcome, "skipped:%s", needs + 5);
        else
            must_refuse(m, NULL, 0, SALVO_ERROR_UNSUPPORTED, needs);
    } else if (c->fn)
        c->fn(c, m);
    else
        run_simple(c, m);
    release_held();
    if (lava_validation_messages() != messages)
        fail_msg("%s (%s): %llu validation message(s)", m->name, m->env,
                 (unsigned long long)(lava_validation_messages() - messages));
    print_message("compat %-26s %-9s %s\n", c->label, m->env, outcome);
}

static int case_teardown(void **state)
{
    (void)state;
    release_held();
    return 0;
}

/* Whether a feature kernel runs or is refused follows info.features: on
 * lavapipe, the features it offers must read on there (lava_core compares
 * every field with the driver's). */
static void features_lavapipe_offers(void **state)
{
    (void)state;
    lava_expect_lavapipe_features(&info);
}

/* Every module built is some case's. */
static void every_module_covered(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_MODULES; i++)
        if (!claimed[i])
            fail_msg("tests/compat/%s.comp (%s) is no case's", compat_modules[i].name,
                     compat_modules[i].env);
    print_message("compat: %zu modules (%zu left out) in %zu cases\n", N_MODULES,
                  sizeof compat_left_out / sizeof compat_left_out[0] - 1, N_CASES);
}

static int group_setup(void **state)
{
    (void)state;
    dev = lava_open(0, 0);
    assert_int_equal(salvo_device_info_get(dev, &info), SALVO_OK);
    dev_minor = (info.api_version >> 12) & 0x3ffu;
    const salvo_device_features *f = &info.features;
    print_message(
        "%s (Vulkan 1.%u, %s): float64 %d int64 %d int16 %d int8 %d float16 %d "
        "storage8 %d/%d/%d storage16 %d/%d/%d memory_model %d/%d bda %d varptr %d/%d "
        "int64_atomics %d/%d float_atomic_add %d/%d dot %d maintenance4 %d zero_init %d "
        "subgroup_size_control %d full_subgroups %d subgroup_ops 0x%x subgroup_size %u; "
        "workgroup memory %u, push constants %u, local size %u x %u x %u, %u invocations\n",
        info.name, dev_minor, info.driver_name, f->shader_float64, f->shader_int64,
        f->shader_int16, f->shader_int8, f->shader_float16, f->storage_buffer_8bit,
        f->uniform_buffer_8bit, f->push_constant_8bit, f->storage_buffer_16bit,
        f->uniform_buffer_16bit, f->push_constant_16bit, f->vulkan_memory_model,
        f->vulkan_memory_model_device_scope, f->buffer_device_address,
        f->variable_pointers_storage_buffer, f->variable_pointers, f->buffer_int64_atomics,
        f->shared_int64_atomics, f->buffer_float32_atomic_add, f->buffer_float64_atomic_add,
        f->integer_dot_product, f->maintenance4, f->zero_initialize_workgroup_memory,
        f->subgroup_size_control, f->compute_full_subgroups, f->subgroup_operations,
        info.subgroup_size, info.max_workgroup_memory, info.max_push_constants_size,
        info.max_workgroup_size[0], info.max_workgroup_size[1], info.max_workgroup_size[2],
        info.max_workgroup_invocations);
    assert_true(f->checked);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    release_held();
    salvo_stats st;
    assert_int_equal(salvo_device_stats(dev, &st), SALVO_OK);
    lava_close(dev);
    if (st.live_kernels || st.live_buffers || st.live_streams) {
        fprintf(stderr, "left alive: %llu kernels, %llu buffers, %llu streams\n",
                (unsigned long long)st.live_kernels, (unsigned long long)st.live_buffers,
                (unsigned long long)st.live_streams);
        return -1;
    }
    return 0;
}

enum {
    MAX_TESTS = 256
};

static void add_test(struct CMUnitTest *tests, compat_test *ct, size_t *n, const compat_case *c,
                     const compat_module *m)
{
    assert_true(*n < MAX_TESTS);
    compat_test *t = &ct[*n];
    t->c = c;
    t->m = m;
    snprintf(t->name, sizeof t->name, "%s %s: %s%s", c->label, m->env, c->what,
             c->awaiting_core ? " (core feature landing now)" : "");
    tests[*n] = (struct CMUnitTest){.name = t->name,
                                    .test_func = run_case,
                                    .teardown_func = case_teardown,
                                    .initial_state = t};
    (*n)++;
}

int main(void)
{
    lava_require_device();
    static struct CMUnitTest tests[MAX_TESTS + 1];
    static compat_test ct[MAX_TESTS];
    size_t n = 0;
    tests[n++] = (struct CMUnitTest){.name = "features_lavapipe_offers",
                                     .test_func = features_lavapipe_offers};
    for (size_t ci = 0; ci < N_CASES; ci++) {
        const compat_case *c = &cases[ci];
        size_t before = n;
        for (int mi = 0; mi < 2 && c->modules[mi]; mi++) {
            for (size_t i = 0; i < N_MODULES; i++)
                if (strcmp(compat_modules[i].name, c->modules[mi]) == 0) {
                    claimed[i] = true;
                    add_test(tests, ct, &n, c, &compat_modules[i]);
                }
            for (const compat_module *m = compat_left_out; m->name; m++)
                if (strcmp(m->name, c->modules[mi]) == 0)
                    add_test(tests, ct, &n, c, m);
        }
        if (n == before) {
            fprintf(stderr, "case %s: no module %s in compat_modules.h\n", c->label,
                    c->modules[0]);
            return 1;
        }
    }
    /* Modules a case reaches for itself (find_module). */
    for (size_t ci = 0; ci < N_CASES; ci++)
        for (size_t i = 0; cases[ci].uses && i < N_MODULES; i++)
            if (strcmp(compat_modules[i].name, cases[ci].uses) == 0)
                claimed[i] = true;
    tests[n++] = (struct CMUnitTest){.name = "every_module_covered",
                                     .test_func = every_module_covered};
    int failed = _cmocka_run_group_tests("lava_compat", tests, n, group_setup, group_teardown);
    if (lava_validation_messages()) {
        fprintf(stderr, "%llu validation message(s)\n",
                (unsigned long long)lava_validation_messages());
        return 1;
    }
    return failed;
}
