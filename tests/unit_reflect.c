/*
 * reflect_spirv: what glslang emits for real kernels, hand-assembled
 * modules for the forms glslang does not produce (LocalSizeId, old-style
 * BufferBlock, decorations on the variable), refusals, and a mutation sweep
 * that stands in for a fuzzer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/reflect.h"

#include "add.spv.h"
#include "empty.spv.h"
#include "image_float_atomics.spv.h"
#include "img_add.spv.h"
#include "img_separate.spv.h"
#include "img_separate_uint.spv.h"
#include "reflect_array.spv.h"
#include "reflect_image.spv.h"
#include "reflect_mixed.spv.h"
#include "reflect_sets.spv.h"
#include "saxpy.spv.h"
#include "uses_float64.spv.h"
#include "workgroup_memory.spv.h"

#define NO_SPEC UINT32_MAX

static char reason[256];

static salvo_status reflect(const uint32_t *words, size_t size, const char *entry,
                            reflect_module *out)
{
    memset(reason, 'X', sizeof reason);
    salvo_status st = reflect_spirv(words, size, entry, out, reason, sizeof reason);
    assert_non_null(memchr(reason, '\0', sizeof reason));
    if (st == SALVO_OK)
        assert_string_equal(reason, "");
    else
        assert_true(reason[0] != '\0');
    return st;
}

static void expect_refused_as(const uint32_t *words, size_t size, const char *entry,
                              salvo_status want, const char *needle)
{
    reflect_module m;
    assert_int_equal(reflect(words, size, entry, &m), want);
    if (strstr(reason, needle) == NULL)
        fail_msg("reason \"%s\" does not contain \"%s\"", reason, needle);
    /* A refusal leaves nothing half-reflected behind. */
    assert_int_equal(m.binding_count, 0);
    assert_int_equal(m.push_constant_size, 0);
}

/* Not a well-formed module. */
static void expect_refused(const uint32_t *words, size_t size, const char *entry,
                           const char *needle)
{
    expect_refused_as(words, size, entry, SALVO_ERROR_INVALID_ARGUMENT, needle);
}

/* Valid, but not something salvo binds. */
static void expect_unsupported(const uint32_t *words, size_t size, const char *entry,
                               const char *needle)
{
    expect_refused_as(words, size, entry, SALVO_ERROR_UNSUPPORTED, needle);
}

static void expect_binding(const reflect_module *m, uint32_t i, uint32_t set, uint32_t binding,
                           salvo_access access, bool uniform)
{
    assert_true(i < m->binding_count);
    assert_int_equal(m->bindings[i].set, set);
    assert_int_equal(m->bindings[i].binding, binding);
    assert_int_equal(m->bindings[i].access, access);
    assert_int_equal(m->bindings[i].uniform, uniform);
}

static void expect_local_size(const reflect_module *m, uint32_t x, uint32_t y, uint32_t z,
                              uint32_t sx, uint32_t sy, uint32_t sz)
{
    assert_int_equal(m->local_size[0], x);
    assert_int_equal(m->local_size[1], y);
    assert_int_equal(m->local_size[2], z);
    assert_int_equal(m->local_size_spec_id[0], sx);
    assert_int_equal(m->local_size_spec_id[1], sy);
    assert_int_equal(m->local_size_spec_id[2], sz);
    assert_int_equal(m->local_size_is_spec[0], sx != NO_SPEC);
    assert_int_equal(m->local_size_is_spec[1], sy != NO_SPEC);
    assert_int_equal(m->local_size_is_spec[2], sz != NO_SPEC);
}

/* ------------------------------------------------------------------ */
/* A tiny assembler for modules glslang will not write                 */
/* ------------------------------------------------------------------ */

enum {
    MOD_MAX = 8192
};

typedef struct mod {
    uint32_t w[MOD_MAX];
    uint32_t n;
} mod;

static void emit_words(mod *m, uint32_t op, const uint32_t *ops, size_t count)
{
    assert_true(m->n + 1 + count <= MOD_MAX);
    m->w[m->n++] = (uint32_t)((count + 1) << 16) | op;
    for (size_t i = 0; i < count; i++)
        m->w[m->n++] = ops[i];
}

#define EMIT(m, op, ...)                                                                           \
    emit_words((m), (op), (const uint32_t[]){__VA_ARGS__},                                         \
               sizeof((const uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t))
#define EMIT0(m, op) emit_words((m), (op), NULL, 0)

/* Literal strings are packed four characters a word, first in the low byte,
 * NUL-terminated (padding included) unless terminate is false. */
static void emit_entry(mod *m, uint32_t model, uint32_t fn, const char *name, bool terminate)
{
    uint32_t ops[32] = {model, fn};
    size_t len = strlen(name), count = 2;
    size_t bytes = terminate ? len + 1 : len;
    assert_true(bytes <= 4 * 30);
    for (size_t i = 0; i < (bytes + 3) / 4; i++) {
        uint32_t word = 0;
        for (size_t b = 0; b < 4 && 4 * i + b < len; b++)
            word |= (uint32_t)(unsigned char)name[4 * i + b] << (8 * b);
        ops[count++] = word;
    }
    emit_words(m, 15, ops, count);
}

enum {
    OpCapability = 17,
    OpMemoryModel = 14,
    OpExecutionMode = 16,
    OpExecutionModeId = 331,
    OpTypeVoid = 19,
    OpTypeBool = 20,
    OpTypeInt = 21,
    OpTypeFloat = 22,
    OpTypeVector = 23,
    OpTypeMatrix = 24,
    OpTypeArray = 28,
    OpTypeRuntimeArray = 29,
    OpTypeStruct = 30,
    OpTypePointer = 32,
    OpTypeFunction = 33,
    OpConstant = 43,
    OpConstantComposite = 44,
    OpSpecConstant = 50,
    OpSpecConstantOp = 52,
    OpExtension = 10,
    OpFunction = 54,
    OpFunctionEnd = 56,
    OpVariable = 59,
    OpCopyObject = 83,
    OpFunctionCall = 57,
    OpDecorate = 71,
    OpMemberDecorate = 72,
    OpLabel = 248,
    OpReturn = 253,
};

/* Ids every hand-made module shares; each test numbers its own from ID_FREE. */
enum {
    ID_MAIN = 1,
    ID_VOID,
    ID_FN_TYPE,
    ID_UINT,
    ID_FLOAT,
    ID_V3UINT,
    ID_FREE,
    BOUND = 1000
};

static void begin(mod *m)
{
    const uint32_t header[] = {0x07230203u, 0x00010300u, 0, BOUND, 0};
    memcpy(m->w, header, sizeof header);
    m->n = 5;
    EMIT(m, OpCapability, 1 /* Shader */);
    EMIT(m, OpMemoryModel, 0 /* Logical */, 1 /* GLSL450 */);
    emit_entry(m, 5, ID_MAIN, "main", true);
}

/* Types everything uses; goes after the decorations. */
static void common_types(mod *m)
{
    EMIT(m, OpTypeVoid, ID_VOID);
    EMIT(m, OpTypeFunction, ID_FN_TYPE, ID_VOID);
    EMIT(m, OpTypeInt, ID_UINT, 32, 0);
    EMIT(m, OpTypeFloat, ID_FLOAT, 32);
    EMIT(m, OpTypeVector, ID_V3UINT, ID_UINT, 3);
}

/* main, naming every module-scope variable declared so far (as a kernel
 * that uses them all would), unless it is in skip. */
static void end_using(mod *m, const uint32_t *skip, size_t skip_count)
{
    uint32_t vars[256][2];
    size_t count = 0;
    for (uint32_t at = 5; at < m->n && count < 256; at += m->w[at] >> 16) {
        if ((m->w[at] & 0xffffu) != OpVariable || (m->w[at] >> 16) < 4)
            continue;
        bool skipped = false;
        for (size_t i = 0; i < skip_count; i++)
            skipped |= skip[i] == m->w[at + 2];
        if (!skipped) {
            vars[count][0] = m->w[at + 1];
            vars[count][1] = m->w[at + 2];
            count++;
        }
        if ((m->w[at] >> 16) == 0)
            break;
    }
    EMIT(m, OpFunction, ID_VOID, ID_MAIN, 0, ID_FN_TYPE);
    EMIT(m, OpLabel, 999);
    for (size_t i = 0; i < count; i++)
        EMIT(m, OpCopyObject, vars[i][0], 700 + (uint32_t)i, vars[i][1]);
    EMIT0(m, OpReturn);
    EMIT0(m, OpFunctionEnd);
}

static void end(mod *m)
{
    end_using(m, NULL, 0);
}

static size_t mod_size(const mod *m) { return (size_t)m->n * 4; }

/* A storage buffer struct { uint data[]; } and its pointer in storage class
 * sc, returning the pointer type id; uses ids base .. base+2. */
static uint32_t buffer_type(mod *m, uint32_t base, uint32_t sc)
{
    EMIT(m, OpTypeRuntimeArray, base, ID_UINT);
    EMIT(m, OpTypeStruct, base + 1, base);
    EMIT(m, OpTypePointer, base + 2, sc, base + 1);
    return base + 2;
}

/* ------------------------------------------------------------------ */
/* Kernels compiled by glslang                                         */
/* ------------------------------------------------------------------ */

static void test_add(void **state)
{
    (void)state;
    reflect_module m;
    assert_int_equal(reflect(add_spv, sizeof add_spv, "main", &m), SALVO_OK);
    assert_int_equal(m.binding_count, 1);
    expect_binding(&m, 0, 0, 0, SALVO_ACCESS_READ_WRITE, false);
    assert_int_equal(m.push_constant_size, 8);
    /* local_size_x_id = 0: WorkgroupSize made of a spec constant (default 1). */
    expect_local_size(&m, 1, 1, 1, 0, NO_SPEC, NO_SPEC);
}

static void test_saxpy(void **state)
{
    (void)state;
    reflect_module m;
    assert_int_equal(reflect(saxpy_spv, sizeof saxpy_spv, "main", &m), SALVO_OK);
    assert_int_equal(m.binding_count, 2);
    expect_binding(&m, 0, 0, 0, SALVO_ACCESS_READ, false);
    expect_binding(&m, 1, 0, 1, SALVO_ACCESS_READ_WRITE, false);
    assert_int_equal(m.push_constant_size, 8);
    expect_local_size(&m, 1, 1, 1, 0, NO_SPEC, NO_SPEC);
}

static void test_empty_kernel(void **state)
{
    (void)state;
    reflect_module m;
    assert_int_equal(reflect(empty_spv, sizeof empty_spv, "main", &m), SALVO_OK);
    assert_int_equal(m.binding_count, 0);
    assert_int_equal(m.push_constant_size, 0);
    expect_local_size(&m, 1, 1, 1, NO_SPEC, NO_SPEC, NO_SPEC);
}

static void test_default_entry_name(void **state)
{
    (void)state;
    reflect_module m;
    assert_int_equal(reflect(add_spv, sizeof add_spv, NULL, &m), SALVO_OK);
    assert_int_equal(m.binding_count, 1);
}

static void test_mixed_access_and_push_layout(void **state)
{
    (void)state;
    reflect_module m;
    assert_int_equal(reflect(reflect_mixed_spv, sizeof reflect_mixed_spv, "main", &m), SALVO_OK);
    assert_int_equal(m.binding_count, 4);
    expect_binding(&m, 0, 0, 0, SALVO_ACCESS_READ, false);       /* readonly */
    expect_binding(&m, 1, 0, 1, SALVO_ACCESS_WRITE, false);      /* writeonly */
    expect_binding(&m, 2, 0, 2, SALVO_ACCESS_READ, true);        /* uniform */
    expect_binding(&m, 3, 0, 3, SALVO_ACCESS_READ_WRITE, false); /* plain */
    /*
     * std430 push block:
     *   vec3 a          offset   0, size 12
     *   float b         offset  12, size  4
     *   mat4 m          offset  16, size 64 (4 columns, stride 16)
     *   Inner inner     offset  80 (align 8), padded size 16
     *   float arr[3]    offset  96, stride 4: 12
     *   vec3 v3[2]      offset 112 (align 16), stride 16: 32
     *   uint last       offset 144, size 4  -> 148
     */
    assert_int_equal(m.push_constant_size, 148);
    /* A literal local size still arrives as a WorkgroupSize constant. */
    expect_local_size(&m, 8, 4, 2, NO_SPEC, NO_SPEC, NO_SPEC);
}

static void test_two_sets_sorted_and_spec_local_size(void **state)
{
    (void)state;
    reflect_module m;
    assert_int_equal(reflect(reflect_sets_spv, sizeof reflect_sets_spv, "main", &m), SALVO_OK);
    assert_int_equal(m.binding_count, 4);
    expect_binding(&m, 0, 0, 0, SALVO_ACCESS_READ, false);
    expect_binding(&m, 1, 0, 2, SALVO_ACCESS_READ_WRITE, false);
    expect_binding(&m, 2, 1, 0, SALVO_ACCESS_READ_WRITE, false);
    expect_binding(&m, 3, 1, 5, SALVO_ACCESS_READ, true);
    assert_int_equal(m.push_constant_size, 0);
    /* y: local_size_y_id = 1 with the literal 8 as its default. */
    expect_local_size(&m, 16, 8, 2, NO_SPEC, 1, NO_SPEC);
}

/* A storage image beside a buffer: its kind, type, declared format and
 * access. */
static void test_storage_image(void **state)
{
    (void)state;
    reflect_module r;
    assert_int_equal(reflect(reflect_image_spv, sizeof reflect_image_spv, "main", &r), SALVO_OK);
    assert_int_equal(r.binding_count, 2);
    expect_binding(&r, 0, 0, 0, SALVO_ACCESS_READ_WRITE, false);
    assert_int_equal(r.bindings[0].kind, SALVO_BINDING_BUFFER);
    expect_binding(&r, 1, 0, 1, SALVO_ACCESS_READ, false);
    assert_int_equal(r.bindings[1].kind, SALVO_BINDING_STORAGE_IMAGE);
    assert_int_equal(r.bindings[1].image_type, SALVO_IMAGE_2D);
    assert_int_equal(r.bindings[1].image_format, SALVO_FORMAT_R32_FLOAT);
    assert_int_equal(r.bindings[1].sampled_class, REFLECT_TEXEL_FLOAT);
}

/* The float atomics made on image texels, each kind, wherever in the call
 * tree; integer image atomics and plain image loads are none. */
static void test_image_float_atomics(void **state)
{
    (void)state;
    reflect_module r;
    assert_int_equal(reflect(image_float_atomics_spv, sizeof image_float_atomics_spv, "main", &r),
                     SALVO_OK);
    assert_int_equal(r.image_float_atomics, REFLECT_IMAGE_FLOAT_ATOMIC | REFLECT_IMAGE_FLOAT_ADD);
    assert_int_equal(reflect(img_add_spv, sizeof img_add_spv, "main", &r), SALVO_OK);
    assert_int_equal(r.image_float_atomics, 0);
    assert_int_equal(reflect(reflect_image_spv, sizeof reflect_image_spv, "main", &r), SALVO_OK);
    assert_int_equal(r.image_float_atomics, 0);
    /* The add's function cut off from main (its OpFunctionCall made an
     * OpNop): only the exchange is left. */
    uint32_t words[sizeof image_float_atomics_spv / 4];
    memcpy(words, image_float_atomics_spv, sizeof words);
    bool cut = false;
    for (size_t at = 5; at < sizeof words / 4; at += words[at] >> 16)
        if ((words[at] & 0xffffu) == 57u) { /* OpFunctionCall */
            uint32_t wc = words[at] >> 16;
            for (uint32_t k = 0; k < wc; k++)
                words[at + k] = (1u << 16) | 0u; /* OpNop */
            cut = true;
            break;
        }
    assert_true(cut);
    assert_int_equal(reflect(words, sizeof words, "main", &r), SALVO_OK);
    assert_int_equal(r.image_float_atomics, REFLECT_IMAGE_FLOAT_ATOMIC);
}

/* Separate textures and samplers sampled together are paired by binding;
 * a combined image sampler or a storage image makes no pair. */
static void test_sampler_pairs(void **state)
{
    (void)state;
    reflect_module r;
    assert_int_equal(reflect(img_separate_spv, sizeof img_separate_spv, "main", &r), SALVO_OK);
    assert_int_equal(r.pair_count, 1);
    assert_int_equal(r.pairs[0].texture, 0);
    assert_int_equal(r.pairs[0].sampler, 1);
    assert_false(r.pairs_partial);
    assert_int_equal(reflect(img_separate_uint_spv, sizeof img_separate_uint_spv, "main", &r),
                     SALVO_OK);
    assert_int_equal(r.pair_count, 1);
    assert_int_equal(r.pairs[0].texture, 0);
    assert_int_equal(r.pairs[0].sampler, 1);
    assert_int_equal(reflect(reflect_image_spv, sizeof reflect_image_spv, "main", &r), SALVO_OK);
    assert_int_equal(r.pair_count, 0);
    assert_false(r.pairs_partial);
}

/* An array of four buffers is four entries, elements 0..3 of binding 3. */
static void test_buffer_array(void **state)
{
    (void)state;
    reflect_module r;
    assert_int_equal(reflect(reflect_array_spv, sizeof reflect_array_spv, "main", &r), SALVO_OK);
    assert_int_equal(r.binding_count, 4);
    for (uint32_t e = 0; e < 4; e++) {
        expect_binding(&r, e, 0, 3, SALVO_ACCESS_READ_WRITE, false);
        assert_int_equal(r.bindings[e].element, e);
        assert_int_equal(r.bindings[e].count, 4);
    }
}

/* Aliases merge, arrays of constant length are accepted, and only what the
 * entry point's call tree names counts; what salvo cannot bind is refused
 * as unsupported, naming it. */
static void test_arrays_aliases_and_use(void **state)
{
    (void)state;
    static mod m;
    reflect_module r;
    enum {
        T = ID_FREE,              /* struct { uint x[]; } and its pointer: T .. T+2 */
        C3 = T + 3, C40, ARR, ARR_PTR, RARR, RARR_PTR, SPEC, SARR, SARR_PTR,
        IMG, IMG_PTR, FN_HELPER,
        V_READ, V_WRITE, V_ARRAY, V_UNUSED, V_IMAGE, V_CALLED, V_RUNTIME, V_SPEC, V_WIDE,
        WARR, WARR_PTR,
    };
    /* variant 0: the accepted module; 1: a runtime array used; 2: an
     * array sized by a spec constant used; 3: an array of 40 used; 4: the
     * (cube) image used. */
    for (int variant = 0; variant < 5; variant++) {
        memset(&m, 0, sizeof m);
        begin(&m);
        EMIT(&m, OpExecutionMode, ID_MAIN, 17, 1, 1, 1);
        EMIT(&m, OpDecorate, T + 1, 2 /* Block */);
        const uint32_t vars[] = {V_READ, V_WRITE, V_ARRAY, V_UNUSED, V_IMAGE,
                                 V_CALLED, V_RUNTIME, V_SPEC, V_WIDE};
        const uint32_t bindings[] = {0, 0, 2, 5, 6, 7, 8, 9, 10};
        for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
            EMIT(&m, OpDecorate, vars[i], 34, 0);
            EMIT(&m, OpDecorate, vars[i], 33, bindings[i]);
        }
        EMIT(&m, OpDecorate, V_READ, 24 /* NonWritable */);
        EMIT(&m, OpDecorate, V_WRITE, 25 /* NonReadable */);
        EMIT(&m, OpDecorate, SPEC, 1 /* SpecId */, 3);
        common_types(&m);
        buffer_type(&m, T, 12);
        EMIT(&m, OpConstant, ID_UINT, C3, 3);
        EMIT(&m, OpConstant, ID_UINT, C40, 40);
        EMIT(&m, OpSpecConstant, ID_UINT, SPEC, 2);
        EMIT(&m, OpTypeArray, ARR, T + 1, C3);
        EMIT(&m, OpTypePointer, ARR_PTR, 12, ARR);
        EMIT(&m, OpTypeRuntimeArray, RARR, T + 1);
        EMIT(&m, OpTypePointer, RARR_PTR, 12, RARR);
        EMIT(&m, OpTypeArray, SARR, T + 1, SPEC);
        EMIT(&m, OpTypePointer, SARR_PTR, 12, SARR);
        EMIT(&m, OpTypeArray, WARR, T + 1, C40);
        EMIT(&m, OpTypePointer, WARR_PTR, 12, WARR);
        EMIT(&m, 25 /* OpTypeImage */, IMG, ID_FLOAT, 3 /* Cube */, 0, 0, 0, 2 /* storage */,
             1 /* Rgba32f */);
        EMIT(&m, OpTypePointer, IMG_PTR, 0 /* UniformConstant */, IMG);
        EMIT(&m, OpVariable, T + 2, V_READ, 12);
        EMIT(&m, OpVariable, T + 2, V_WRITE, 12);
        EMIT(&m, OpVariable, ARR_PTR, V_ARRAY, 12);
        EMIT(&m, OpVariable, T + 2, V_UNUSED, 12);
        EMIT(&m, OpVariable, IMG_PTR, V_IMAGE, 0);
        EMIT(&m, OpVariable, T + 2, V_CALLED, 12);
        EMIT(&m, OpVariable, RARR_PTR, V_RUNTIME, 12);
        EMIT(&m, OpVariable, SARR_PTR, V_SPEC, 12);
        EMIT(&m, OpVariable, WARR_PTR, V_WIDE, 12);
        /* main names the aliases and the array (and per variant one more),
         * and calls a helper that names V_CALLED. */
        EMIT(&m, OpFunction, ID_VOID, ID_MAIN, 0, ID_FN_TYPE);
        EMIT(&m, OpLabel, 999);
        EMIT(&m, OpCopyObject, T + 2, 700, V_READ);
        EMIT(&m, OpCopyObject, T + 2, 701, V_WRITE);
        EMIT(&m, OpCopyObject, ARR_PTR, 702, V_ARRAY);
        const uint32_t extra[] = {0, V_RUNTIME, V_SPEC, V_WIDE, V_IMAGE};
        if (variant)
            EMIT(&m, OpCopyObject, T + 2, 703, extra[variant]);
        EMIT(&m, OpFunctionCall, ID_VOID, 704, FN_HELPER);
        EMIT0(&m, OpReturn);
        EMIT0(&m, OpFunctionEnd);
        EMIT(&m, OpFunction, ID_VOID, FN_HELPER, 0, ID_FN_TYPE);
        EMIT(&m, OpLabel, 998);
        EMIT(&m, OpCopyObject, T + 2, 705, V_CALLED);
        EMIT0(&m, OpReturn);
        EMIT0(&m, OpFunctionEnd);
        switch (variant) {
        case 0:
            assert_int_equal(reflect(m.w, mod_size(&m), "main", &r), SALVO_OK);
            assert_int_equal(r.binding_count, 5); /* 0, 2[0..2], 7 */
            expect_binding(&r, 0, 0, 0, SALVO_ACCESS_READ_WRITE, false);
            assert_int_equal(r.bindings[0].count, 1);
            for (uint32_t e = 0; e < 3; e++) {
                expect_binding(&r, 1 + e, 0, 2, SALVO_ACCESS_READ_WRITE, false);
                assert_int_equal(r.bindings[1 + e].element, e);
                assert_int_equal(r.bindings[1 + e].count, 3);
            }
            expect_binding(&r, 4, 0, 7, SALVO_ACCESS_READ_WRITE, false);
            break;
        case 1:
            expect_unsupported(m.w, mod_size(&m), "main",
                               "binding 8: runtime arrays of buffers");
            break;
        case 2:
            expect_unsupported(m.w, mod_size(&m), "main",
                               "binding 9: an array of buffers sized by a specialization");
            break;
        case 3:
            expect_unsupported(m.w, mod_size(&m), "main", "more than 32 buffers bound");
            break;
        default:
            expect_unsupported(m.w, mod_size(&m), "main", "binding 6: cube images");
            break;
        }
    }

    /* One binding both uniform and storage cannot be bound. */
    memset(&m, 0, sizeof m);
    enum { U = ID_FREE, S = U + 3, VU = S + 3, VS };
    begin(&m);
    EMIT(&m, OpExecutionMode, ID_MAIN, 17, 1, 1, 1);
    EMIT(&m, OpDecorate, U + 1, 2 /* Block */);
    EMIT(&m, OpDecorate, S + 1, 2);
    EMIT(&m, OpDecorate, VU, 34, 0);
    EMIT(&m, OpDecorate, VU, 33, 1);
    EMIT(&m, OpDecorate, VS, 34, 0);
    EMIT(&m, OpDecorate, VS, 33, 1);
    common_types(&m);
    buffer_type(&m, U, 2 /* Uniform */);
    buffer_type(&m, S, 12);
    EMIT(&m, OpVariable, U + 2, VU, 2);
    EMIT(&m, OpVariable, S + 2, VS, 12);
    end(&m);
    expect_unsupported(m.w, mod_size(&m), "main",
                       "binding 1: declared both as a uniform and as a storage buffer");
    /* Unused by main, the same pair is no conflict at all. */
    memset(&m, 0, sizeof m);
    begin(&m);
    EMIT(&m, OpExecutionMode, ID_MAIN, 17, 1, 1, 1);
    common_types(&m);
    buffer_type(&m, U, 2);
    EMIT(&m, OpVariable, U + 2, VU, 2);
    const uint32_t skip[] = {VU};
    end_using(&m, skip, 1);
    assert_int_equal(reflect(m.w, mod_size(&m), "main", &r), SALVO_OK);
    assert_int_equal(r.binding_count, 0);

    /* Two entry points: "other" uses a texel buffer and a workgroup array, main
     * a buffer. Each is reflected with only what it uses. */
    memset(&m, 0, sizeof m);
    enum { B = ID_FREE, IM = B + 3, IM_PTR, VB, VI, FN_OTHER, WG_ARR, WG_PTR, VW, C64 };
    begin(&m);
    emit_entry(&m, 5, FN_OTHER, "other", true);
    EMIT(&m, OpExecutionMode, ID_MAIN, 17, 1, 1, 1);
    EMIT(&m, OpExecutionMode, FN_OTHER, 17, 8, 1, 1);
    EMIT(&m, OpDecorate, B + 1, 2);
    EMIT(&m, OpDecorate, VB, 34, 0);
    EMIT(&m, OpDecorate, VB, 33, 0);
    EMIT(&m, OpDecorate, VI, 34, 0);
    EMIT(&m, OpDecorate, VI, 33, 1);
    common_types(&m);
    buffer_type(&m, B, 12);
    EMIT(&m, 25 /* OpTypeImage */, IM, ID_FLOAT, 5 /* Buffer */, 0, 0, 0, 2, 1);
    EMIT(&m, OpTypePointer, IM_PTR, 0, IM);
    EMIT(&m, OpConstant, ID_UINT, C64, 64);
    EMIT(&m, OpTypeArray, WG_ARR, ID_FLOAT, C64);
    EMIT(&m, OpTypePointer, WG_PTR, 4 /* Workgroup */, WG_ARR);
    EMIT(&m, OpVariable, B + 2, VB, 12);
    EMIT(&m, OpVariable, IM_PTR, VI, 0);
    EMIT(&m, OpVariable, WG_PTR, VW, 4);
    EMIT(&m, OpFunction, ID_VOID, ID_MAIN, 0, ID_FN_TYPE);
    EMIT(&m, OpLabel, 999);
    EMIT(&m, OpCopyObject, B + 2, 700, VB);
    EMIT0(&m, OpReturn);
    EMIT0(&m, OpFunctionEnd);
    EMIT(&m, OpFunction, ID_VOID, FN_OTHER, 0, ID_FN_TYPE);
    EMIT(&m, OpLabel, 998);
    EMIT(&m, OpCopyObject, IM_PTR, 701, VI);
    EMIT(&m, OpCopyObject, WG_PTR, 702, VW);
    EMIT0(&m, OpReturn);
    EMIT0(&m, OpFunctionEnd);
    assert_int_equal(reflect(m.w, mod_size(&m), "main", &r), SALVO_OK);
    assert_int_equal(r.binding_count, 1);
    expect_binding(&r, 0, 0, 0, SALVO_ACCESS_READ_WRITE, false);
    assert_int_equal(r.workgroup_memory, 0);
    expect_unsupported(m.w, mod_size(&m), "other", "binding 1: storage texel buffers");
}

/* ------------------------------------------------------------------ */
/* Malformed input                                                     */
/* ------------------------------------------------------------------ */

static void test_empty_input(void **state)
{
    (void)state;
    expect_refused(NULL, 0, "main", "empty");
    expect_refused(add_spv, 0, "main", "empty");
}

static void test_bad_magic(void **state)
{
    (void)state;
    uint32_t w[sizeof add_spv / 4];
    memcpy(w, add_spv, sizeof w);
    w[0] = 0xdeadbeefu;
    expect_refused(w, sizeof w, "main", "bad magic");
    w[0] = 0x03022307u;
    expect_refused(w, sizeof w, "main", "big-endian SPIR-V not supported");
}

static void test_short_and_unaligned_sizes(void **state)
{
    (void)state;
    expect_refused(add_spv, sizeof add_spv - 1, "main", "not a multiple of 4");
    expect_refused(add_spv, 6, "main", "not a multiple of 4");
    expect_refused(add_spv, 16, "main", "too short");
}

static void test_bad_bound(void **state)
{
    (void)state;
    uint32_t w[sizeof add_spv / 4];
    memcpy(w, add_spv, sizeof w);
    w[3] = 0;
    expect_refused(w, sizeof w, "main", "bound");
    w[3] = 0x80000000u;
    expect_refused(w, sizeof w, "main", "bound");
}

/* Word index of the first instruction with opcode op. */
static uint32_t find_op(const uint32_t *w, uint32_t n, uint32_t op)
{
    for (uint32_t at = 5; at < n; at += w[at] >> 16) {
        assert_true((w[at] >> 16) != 0);
        if ((w[at] & 0xffffu) == op)
            return at;
    }
    fail_msg("opcode %u not found", op);
    return 0;
}

static void test_truncated_instruction(void **state)
{
    (void)state;
    uint32_t n = sizeof add_spv / 4;
    uint32_t ep = find_op(add_spv, n, 15);
    /* The module ends two words into its OpEntryPoint. */
    expect_refused(add_spv, (size_t)(ep + 2) * 4, "main", "runs past the end");

    uint32_t w[sizeof add_spv / 4];
    memcpy(w, add_spv, sizeof w);
    w[ep] = (w[ep] & 0xffffu) | (0xffffu << 16);
    expect_refused(w, sizeof w, "main", "runs past the end");
    w[ep] &= 0xffffu;
    expect_refused(w, sizeof w, "main", "word count 0");
}

static void test_missing_entry_point(void **state)
{
    (void)state;
    expect_refused(add_spv, sizeof add_spv, "foo", "no GLCompute entry point 'foo'");
    /* A prefix of the real name is not the name. */
    expect_refused(add_spv, sizeof add_spv, "mai", "no GLCompute entry point 'mai'");
    expect_refused(add_spv, sizeof add_spv, "main2", "no GLCompute entry point 'main2'");
}

static void test_entry_point_not_compute_or_unterminated(void **state)
{
    (void)state;
    static mod m;
    memset(&m, 0, sizeof m);
    const uint32_t header[] = {0x07230203u, 0x00010300u, 0, BOUND, 0};
    memcpy(m.w, header, sizeof header);
    m.n = 5;
    emit_entry(&m, 0 /* Vertex */, ID_MAIN, "main", true);
    /* Eight characters and no terminator inside the instruction. */
    emit_entry(&m, 5, ID_MAIN, "mainmain", false);
    EMIT(&m, OpExecutionMode, ID_MAIN, 17, 1, 1, 1);
    common_types(&m);
    end(&m);
    expect_refused(m.w, mod_size(&m), "main", "no GLCompute entry point 'main'");
    expect_refused(m.w, mod_size(&m), "mainmain", "no GLCompute entry point 'mainmain'");
}

static void test_reason_buffer_sizes(void **state)
{
    (void)state;
    reflect_module m;
    char small[8];
    memset(small, 'X', sizeof small);
    assert_int_equal(reflect_spirv(add_spv, sizeof add_spv, "nope", &m, small, sizeof small),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(strlen(small), sizeof small - 1);
    char one = 'X';
    assert_int_equal(reflect_spirv(add_spv, 3, "main", &m, &one, 1), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(one, '\0');
    assert_int_equal(reflect_spirv(add_spv, 3, "main", &m, NULL, 0), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(reflect_spirv(add_spv, sizeof add_spv, "main", &m, NULL, 0), SALVO_OK);
    assert_int_equal(reflect_spirv(add_spv, sizeof add_spv, "main", NULL, reason, sizeof reason),
                     SALVO_ERROR_INVALID_ARGUMENT);
}

/* ------------------------------------------------------------------ */
/* Hand-assembled forms                                                */
/* ------------------------------------------------------------------ */

static void test_local_size_id(void **state)
{
    (void)state;
    static mod m;
    memset(&m, 0, sizeof m);
    enum { C64 = ID_FREE, S7, C1 };
    begin(&m);
    EMIT(&m, OpExecutionModeId, ID_MAIN, 38 /* LocalSizeId */, C64, S7, C1);
    EMIT(&m, OpDecorate, S7, 1 /* SpecId */, 3);
    common_types(&m);
    EMIT(&m, OpConstant, ID_UINT, C64, 64);
    EMIT(&m, OpSpecConstant, ID_UINT, S7, 7);
    EMIT(&m, OpConstant, ID_UINT, C1, 1);
    end(&m);
    reflect_module r;
    assert_int_equal(reflect(m.w, mod_size(&m), "main", &r), SALVO_OK);
    expect_local_size(&r, 64, 7, 1, NO_SPEC, 3, NO_SPEC);
}

/* What the module asks of the device: its capabilities (each once), its
 * extensions (known ones as bits, the first unknown one by name), its
 * version and LocalSizeId. */
static void test_declarations(void **state)
{
    (void)state;
    static mod m;
    memset(&m, 0, sizeof m);
    enum { C1 = ID_FREE };
    begin(&m);
    EMIT(&m, OpCapability, 10 /* Float64 */);
    EMIT(&m, OpCapability, 10);
    EMIT(&m, OpCapability, 4448 /* StorageBuffer8BitAccess */);
    const char *names[] = {"SPV_KHR_float_controls", "SPV_FOO_bar", "SPV_BAZ",
                           "SPV_KHR_8bit_storage"};
    for (size_t i = 0; i < 4; i++) {
        uint32_t ops[16] = {0};
        size_t len = strlen(names[i]);
        for (size_t b = 0; b < len; b++)
            ops[b / 4] |= (uint32_t)(unsigned char)names[i][b] << (8 * (b % 4));
        emit_words(&m, OpExtension, ops, len / 4 + 1);
    }
    EMIT(&m, OpExecutionModeId, ID_MAIN, 38 /* LocalSizeId */, C1, C1, C1);
    common_types(&m);
    EMIT(&m, OpConstant, ID_UINT, C1, 1);
    end(&m);
    reflect_module r;
    assert_int_equal(reflect(m.w, mod_size(&m), "main", &r), SALVO_OK);
    assert_int_equal(r.spirv_version, 0x00010300u);
    assert_int_equal(r.capability_count, 3);
    assert_int_equal(r.capabilities[0], 1);
    assert_int_equal(r.capabilities[1], 10);
    assert_int_equal(r.capabilities[2], 4448);
    assert_int_equal(r.extensions, REFLECT_EXT_VULKAN_1_2 | REFLECT_EXT_PLAIN);
    assert_string_equal(r.unknown_extension, "SPV_FOO_bar");
    assert_true(r.local_size_id);
    assert_int_equal(r.workgroup_memory, 0);

    /* From glslang: Float64, and the local size from LocalSize. */
    assert_int_equal(reflect(uses_float64_spv, sizeof uses_float64_spv, "main", &r), SALVO_OK);
    bool float64 = false;
    for (uint32_t i = 0; i < r.capability_count; i++)
        float64 |= r.capabilities[i] == 10;
    assert_true(float64);
    assert_false(r.local_size_id);
    assert_string_equal(r.unknown_extension, "");
}

/* Workgroup variables, laid out as std430 members one after another. */
static void test_workgroup_memory(void **state)
{
    (void)state;
    reflect_module r;
    /* shaders/workgroup_memory.comp: vec3[1000], float[3], struct[2]. */
    assert_int_equal(reflect(workgroup_memory_spv, sizeof workgroup_memory_spv, "main", &r),
                     SALVO_OK);
    assert_int_equal(r.workgroup_memory, 16048);
    assert_int_equal(r.workgroup_sizing, REFLECT_SIZE_EXACT);
    assert_int_equal(reflect(add_spv, sizeof add_spv, "main", &r), SALVO_OK);
    assert_int_equal(r.workgroup_memory, 0);
    assert_int_equal(r.workgroup_sizing, REFLECT_SIZE_EXACT);

    /* Lengths from a spec constant (its default: 10), then from a spec
     * constant expression (not sized). */
    static mod m;
    memset(&m, 0, sizeof m);
    enum { S10 = ID_FREE, ARR, PTR, VAR, SUM, ARR2, PTR2, VAR2 };
    begin(&m);
    EMIT(&m, OpExecutionMode, ID_MAIN, 17 /* LocalSize */, 1, 1, 1);
    EMIT(&m, OpDecorate, S10, 1 /* SpecId */, 5);
    common_types(&m);
    EMIT(&m, OpSpecConstant, ID_UINT, S10, 10);
    EMIT(&m, OpTypeArray, ARR, ID_FLOAT, S10);
    EMIT(&m, OpTypePointer, PTR, 4 /* Workgroup */, ARR);
    EMIT(&m, OpVariable, PTR, VAR, 4);
    end(&m);
    assert_int_equal(reflect(m.w, mod_size(&m), "main", &r), SALVO_OK);
    assert_int_equal(r.workgroup_memory, 40);
    assert_int_equal(r.workgroup_sizing, REFLECT_SIZE_DEFAULTS);

    memset(&m, 0, sizeof m);
    begin(&m);
    EMIT(&m, OpExecutionMode, ID_MAIN, 17 /* LocalSize */, 1, 1, 1);
    common_types(&m);
    EMIT(&m, OpSpecConstant, ID_UINT, S10, 10);
    EMIT(&m, OpSpecConstantOp, ID_UINT, SUM, 128 /* IAdd */, S10, S10);
    EMIT(&m, OpTypeArray, ARR2, ID_FLOAT, SUM);
    EMIT(&m, OpTypePointer, PTR2, 4, ARR2);
    EMIT(&m, OpVariable, PTR2, VAR2, 4);
    end(&m);
    assert_int_equal(reflect(m.w, mod_size(&m), "main", &r), SALVO_OK);
    assert_int_equal(r.workgroup_sizing, REFLECT_SIZE_UNKNOWN);
}

static void test_workgroup_size_overrides_local_size(void **state)
{
    (void)state;
    static mod m;
    memset(&m, 0, sizeof m);
    enum { C5 = ID_FREE, C6, S9, WGS };
    begin(&m);
    EMIT(&m, OpExecutionMode, ID_MAIN, 17 /* LocalSize */, 1, 1, 1);
    EMIT(&m, OpDecorate, WGS, 11 /* BuiltIn */, 25 /* WorkgroupSize */);
    EMIT(&m, OpDecorate, S9, 1 /* SpecId */, 12);
    common_types(&m);
    EMIT(&m, OpConstant, ID_UINT, C5, 5);
    EMIT(&m, OpConstant, ID_UINT, C6, 6);
    EMIT(&m, OpSpecConstant, ID_UINT, S9, 9);
    EMIT(&m, OpConstantComposite, ID_V3UINT, WGS, C5, C6, S9);
    end(&m);
    reflect_module r;
    assert_int_equal(reflect(m.w, mod_size(&m), "main", &r), SALVO_OK);
    expect_local_size(&r, 5, 6, 9, NO_SPEC, NO_SPEC, 12);
}

static void test_literal_local_size(void **state)
{
    (void)state;
    static mod m;
    memset(&m, 0, sizeof m);
    begin(&m);
    EMIT(&m, OpExecutionMode, ID_MAIN, 17, 32, 2, 3);
    common_types(&m);
    end(&m);
    reflect_module r;
    assert_int_equal(reflect(m.w, mod_size(&m), "main", &r), SALVO_OK);
    expect_local_size(&r, 32, 2, 3, NO_SPEC, NO_SPEC, NO_SPEC);

    /* Without any local size the entry point cannot be dispatched. */
    memset(&m, 0, sizeof m);
    begin(&m);
    common_types(&m);
    end(&m);
    expect_refused(m.w, mod_size(&m), "main", "no local size");
}

static void test_old_style_and_variable_decorations(void **state)
{
    (void)state;
    static mod m;
    memset(&m, 0, sizeof m);
    enum {
        V_SSBO_OLD = ID_FREE, /* Uniform + BufferBlock, NonWritable on the variable */
        V_UBO,                /* Uniform + Block */
        V_WRITE,              /* StorageBuffer, NonReadable on the variable */
        V_PUSH,
        T_OLD,      /* .. T_OLD + 2 */
        T_UBO = T_OLD + 3,
        T_SSBO = T_UBO + 3,
        T_V2 = T_SSBO + 3,
        T_MAT,
        T_PUSH,
        T_PUSH_PTR,
    };
    begin(&m);
    EMIT(&m, OpExecutionMode, ID_MAIN, 17, 1, 1, 1);
    EMIT(&m, OpDecorate, T_OLD + 1, 3 /* BufferBlock */);
    EMIT(&m, OpDecorate, T_UBO + 1, 2 /* Block */);
    EMIT(&m, OpDecorate, T_SSBO + 1, 2 /* Block */);
    EMIT(&m, OpDecorate, V_SSBO_OLD, 34, 2);
    EMIT(&m, OpDecorate, V_SSBO_OLD, 33, 7);
    EMIT(&m, OpDecorate, V_SSBO_OLD, 24 /* NonWritable */);
    EMIT(&m, OpDecorate, V_UBO, 34, 2);
    EMIT(&m, OpDecorate, V_UBO, 33, 1);
    EMIT(&m, OpDecorate, V_WRITE, 34, 0);
    EMIT(&m, OpDecorate, V_WRITE, 33, 4);
    EMIT(&m, OpDecorate, V_WRITE, 25 /* NonReadable */);
    /* push { row_major mat3x2 (3 columns of vec2, MatrixStride 16) at 0;
     * uint at 4 }: row-major, it spans 2 rows * 16 = 32 bytes. */
    EMIT(&m, OpMemberDecorate, T_PUSH, 0, 35 /* Offset */, 0);
    EMIT(&m, OpMemberDecorate, T_PUSH, 0, 4 /* RowMajor */);
    EMIT(&m, OpMemberDecorate, T_PUSH, 0, 7 /* MatrixStride */, 16);
    EMIT(&m, OpMemberDecorate, T_PUSH, 1, 35, 4);
    EMIT(&m, OpDecorate, T_PUSH, 2);
    common_types(&m);
    buffer_type(&m, T_OLD, 2 /* Uniform */);
    buffer_type(&m, T_UBO, 2);
    buffer_type(&m, T_SSBO, 12 /* StorageBuffer */);
    EMIT(&m, OpTypeVector, T_V2, ID_FLOAT, 2);
    EMIT(&m, OpTypeMatrix, T_MAT, T_V2, 3);
    EMIT(&m, OpTypeStruct, T_PUSH, T_MAT, ID_UINT);
    EMIT(&m, OpTypePointer, T_PUSH_PTR, 9 /* PushConstant */, T_PUSH);
    EMIT(&m, OpVariable, T_OLD + 2, V_SSBO_OLD, 2);
    EMIT(&m, OpVariable, T_UBO + 2, V_UBO, 2);
    EMIT(&m, OpVariable, T_SSBO + 2, V_WRITE, 12);
    EMIT(&m, OpVariable, T_PUSH_PTR, V_PUSH, 9);
    end(&m);

    reflect_module r;
    assert_int_equal(reflect(m.w, mod_size(&m), "main", &r), SALVO_OK);
    assert_int_equal(r.binding_count, 3);
    expect_binding(&r, 0, 0, 4, SALVO_ACCESS_WRITE, false);
    expect_binding(&r, 1, 2, 1, SALVO_ACCESS_READ, true);
    expect_binding(&r, 2, 2, 7, SALVO_ACCESS_READ, false);
    assert_int_equal(r.push_constant_size, 32);

    /* The same matrix column-major: 3 columns * 16. */
    uint32_t at = find_op(m.w, m.n, OpMemberDecorate);
    for (; at < m.n; at += m.w[at] >> 16)
        if ((m.w[at] & 0xffffu) == OpMemberDecorate && m.w[at + 3] == 4)
            m.w[at + 3] = 5; /* ColMajor */
    assert_int_equal(reflect(m.w, mod_size(&m), "main", &r), SALVO_OK);
    assert_int_equal(r.push_constant_size, 48);
}

/* A module with count buffers at set 0, bindings[i]. */
static void build_buffers(mod *m, uint32_t count, const uint32_t *bindings)
{
    memset(m, 0, sizeof *m);
    enum { T = ID_FREE, V = T + 3 };
    begin(m);
    EMIT(m, OpExecutionMode, ID_MAIN, 17, 1, 1, 1);
    EMIT(m, OpDecorate, T + 1, 2);
    for (uint32_t i = 0; i < count; i++) {
        EMIT(m, OpDecorate, V + i, 34, 0);
        EMIT(m, OpDecorate, V + i, 33, bindings[i]);
    }
    common_types(m);
    buffer_type(m, T, 12);
    for (uint32_t i = 0; i < count; i++)
        EMIT(m, OpVariable, T + 2, V + i, 12);
    end(m);
}

static void test_binding_limits(void **state)
{
    (void)state;
    static mod m;
    uint32_t b[SALVO_MAX_BINDINGS + 1];
    for (uint32_t i = 0; i < SALVO_MAX_BINDINGS + 1; i++)
        b[i] = SALVO_MAX_BINDINGS - i; /* reversed, to exercise the sort */

    build_buffers(&m, SALVO_MAX_BINDINGS, b);
    reflect_module r;
    assert_int_equal(reflect(m.w, mod_size(&m), "main", &r), SALVO_OK);
    assert_int_equal(r.binding_count, SALVO_MAX_BINDINGS);
    for (uint32_t i = 0; i < SALVO_MAX_BINDINGS; i++)
        expect_binding(&r, i, 0, i + 1, SALVO_ACCESS_READ_WRITE, false);

    build_buffers(&m, SALVO_MAX_BINDINGS + 1, b);
    expect_unsupported(m.w, mod_size(&m), "main", "more than 32 buffers bound");

    /* Two variables on binding 3 are one binding (aliases). */
    const uint32_t dup[] = {3, 1, 3};
    build_buffers(&m, 3, dup);
    assert_int_equal(reflect(m.w, mod_size(&m), "main", &r), SALVO_OK);
    assert_int_equal(r.binding_count, 2);
    expect_binding(&r, 0, 0, 1, SALVO_ACCESS_READ_WRITE, false);
    expect_binding(&r, 1, 0, 3, SALVO_ACCESS_READ_WRITE, false);
}

static void test_missing_binding_refused(void **state)
{
    (void)state;
    static mod m;
    memset(&m, 0, sizeof m);
    enum { T = ID_FREE, V = T + 3 };
    begin(&m);
    EMIT(&m, OpExecutionMode, ID_MAIN, 17, 1, 1, 1);
    EMIT(&m, OpDecorate, T + 1, 2);
    EMIT(&m, OpDecorate, V, 34, 0);
    common_types(&m);
    buffer_type(&m, T, 12);
    EMIT(&m, OpVariable, T + 2, V, 12);
    end(&m);
    expect_refused(m.w, mod_size(&m), "main", "no Binding");
}

/* push { T_n x; } where T_0 = uint[1] and T_k = struct { T_(k-1) }: nesting
 * depth + 2 deep. */
static void build_nested_push(mod *m, uint32_t depth)
{
    memset(m, 0, sizeof *m);
    enum { C1 = ID_FREE, PUSH, PTR, VAR, T0 };
    begin(m);
    EMIT(m, OpExecutionMode, ID_MAIN, 17, 1, 1, 1);
    EMIT(m, OpMemberDecorate, PUSH, 0, 35, 0);
    EMIT(m, OpDecorate, PUSH, 2);
    EMIT(m, OpDecorate, T0, 6 /* ArrayStride */, 4);
    for (uint32_t k = 1; k <= depth; k++)
        EMIT(m, OpMemberDecorate, T0 + k, 0, 35, 0);
    common_types(m);
    EMIT(m, OpConstant, ID_UINT, C1, 1);
    EMIT(m, OpTypeArray, T0, ID_UINT, C1);
    for (uint32_t k = 1; k <= depth; k++)
        EMIT(m, OpTypeStruct, T0 + k, T0 + k - 1);
    EMIT(m, OpTypeStruct, PUSH, T0 + depth);
    EMIT(m, OpTypePointer, PTR, 9, PUSH);
    EMIT(m, OpVariable, PTR, VAR, 9);
    end(m);
}

static void test_complexity_bounds(void **state)
{
    (void)state;
    static mod m;
    reflect_module r;
    build_nested_push(&m, 4);
    assert_int_equal(reflect(m.w, mod_size(&m), "main", &r), SALVO_OK);
    assert_int_equal(r.push_constant_size, 4);

    build_nested_push(&m, 20);
    expect_refused(m.w, mod_size(&m), "main", "deep");
    build_nested_push(&m, 100);
    expect_refused(m.w, mod_size(&m), "main", "deep");

    /* A push block of 300 distinct member types outgrows the id table. */
    memset(&m, 0, sizeof m);
    enum { PUSH = ID_FREE, PTR, VAR, T0 };
    begin(&m);
    EMIT(&m, OpExecutionMode, ID_MAIN, 17, 1, 1, 1);
    EMIT(&m, OpDecorate, PUSH, 2);
    common_types(&m);
    uint32_t members[300];
    for (uint32_t i = 0; i < 300; i++) {
        EMIT(&m, OpTypeInt, T0 + i, 32, 0);
        members[i] = T0 + i;
    }
    uint32_t ops[301];
    ops[0] = PUSH;
    memcpy(&ops[1], members, sizeof members);
    emit_words(&m, OpTypeStruct, ops, 301);
    EMIT(&m, OpTypePointer, PTR, 9, PUSH);
    EMIT(&m, OpVariable, PTR, VAR, 9);
    end(&m);
    expect_refused(m.w, mod_size(&m), "main", "too complex");
}

/* ------------------------------------------------------------------ */
/* Mutation sweep: a cheap, deterministic stand-in for the fuzzer      */
/* ------------------------------------------------------------------ */

static void check_any(const uint32_t *w, size_t size)
{
    reflect_module r;
    salvo_status st = reflect(w, size, "main", &r);
    assert_true(st == SALVO_OK || st == SALVO_ERROR_INVALID_ARGUMENT || st == SALVO_ERROR_UNSUPPORTED);
    if (st != SALVO_OK)
        return;
    assert_true(r.binding_count <= SALVO_MAX_BINDINGS);
    for (uint32_t i = 1; i < r.binding_count; i++) {
        const reflect_binding *a = &r.bindings[i - 1], *b = &r.bindings[i];
        assert_true(a->set < b->set || (a->set == b->set && a->binding < b->binding) ||
                    (a->set == b->set && a->binding == b->binding && a->element + 1 == b->element &&
                     a->count == b->count));
    }
    for (uint32_t i = 0; i < r.binding_count; i++)
        assert_true(r.bindings[i].access >= SALVO_ACCESS_READ &&
                    r.bindings[i].access <= SALVO_ACCESS_READ_WRITE);
}

static void sweep(const uint32_t *spv, size_t size)
{
    /* Heap copies sized exactly, so that a sanitizer sees any overread. */
    uint32_t *w = malloc(size);
    assert_non_null(w);
    for (size_t len = 0; len <= size; len++) {
        memcpy(w, spv, size);
        check_any(w, len);
    }
    static const uint8_t masks[] = {0xff, 0x01, 0x80};
    for (size_t i = 0; i < size; i++) {
        for (size_t k = 0; k < sizeof masks; k++) {
            memcpy(w, spv, size);
            ((uint8_t *)w)[i] ^= masks[k];
            check_any(w, size);
        }
    }
    /* Whole-word rewrites to small values reach id and operand paths that
     * byte flips rarely hit. */
    uint64_t rng = 0x9e3779b97f4a7c15u;
    for (int iter = 0; iter < 20000; iter++) {
        memcpy(w, spv, size);
        for (int j = 0; j < 3; j++) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            size_t at = 5 + (size_t)(rng % (size / 4 - 5));
            uint32_t v = (uint32_t)(rng >> 40) % 64;
            w[at] = (rng >> 32) & 1 ? v : (w[at] & 0xffff0000u) | v;
        }
        check_any(w, size);
    }
    free(w);
}

static void test_sweep_add(void **state)
{
    (void)state;
    sweep(add_spv, sizeof add_spv);
}

static void test_sweep_mixed(void **state)
{
    (void)state;
    sweep(reflect_mixed_spv, sizeof reflect_mixed_spv);
}

static void test_sweep_sets(void **state)
{
    (void)state;
    sweep(reflect_sets_spv, sizeof reflect_sets_spv);
}

static void test_sweep_hand_made(void **state)
{
    (void)state;
    static mod m;
    build_nested_push(&m, 6);
    sweep(m.w, mod_size(&m));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add),
        cmocka_unit_test(test_saxpy),
        cmocka_unit_test(test_empty_kernel),
        cmocka_unit_test(test_default_entry_name),
        cmocka_unit_test(test_mixed_access_and_push_layout),
        cmocka_unit_test(test_two_sets_sorted_and_spec_local_size),
        cmocka_unit_test(test_storage_image),
        cmocka_unit_test(test_image_float_atomics),
        cmocka_unit_test(test_sampler_pairs),
        cmocka_unit_test(test_buffer_array),
        cmocka_unit_test(test_arrays_aliases_and_use),
        cmocka_unit_test(test_empty_input),
        cmocka_unit_test(test_bad_magic),
        cmocka_unit_test(test_short_and_unaligned_sizes),
        cmocka_unit_test(test_bad_bound),
        cmocka_unit_test(test_truncated_instruction),
        cmocka_unit_test(test_missing_entry_point),
        cmocka_unit_test(test_entry_point_not_compute_or_unterminated),
        cmocka_unit_test(test_reason_buffer_sizes),
        cmocka_unit_test(test_local_size_id),
        cmocka_unit_test(test_workgroup_size_overrides_local_size),
        cmocka_unit_test(test_declarations),
        cmocka_unit_test(test_workgroup_memory),
        cmocka_unit_test(test_literal_local_size),
        cmocka_unit_test(test_old_style_and_variable_decorations),
        cmocka_unit_test(test_binding_limits),
        cmocka_unit_test(test_missing_binding_refused),
        cmocka_unit_test(test_complexity_bounds),
        cmocka_unit_test(test_sweep_add),
        cmocka_unit_test(test_sweep_mixed),
        cmocka_unit_test(test_sweep_sets),
        cmocka_unit_test(test_sweep_hand_made),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
