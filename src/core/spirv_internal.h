/*
 * What the files of the SPIR-V reflection (reflect.c and spirv_*.c) share:
 * SPIR-V's numbers, the table of the ids that matter, and the passes each
 * file offers the one above it.
 *
 * Reflection needs no SPIR-V library and no allocation. A module may
 * declare millions of ids, so nothing here is indexed by id. Instead the
 * walk keeps a small table of the ids that matter (the resource variables,
 * the types they lead to, the local-size constants) and fills it in a few
 * passes over the instruction stream:
 *
 *   1. validate the header and every instruction's length; find the entry;
 *   2. seed: the entry's execution modes, buffer/push/opaque/workgroup
 *      variables and the WorkgroupSize builtin;
 *   3. close: look up the definitions of the wanted ids; each definition may
 *      want further ids (its operands), so repeat until nothing new appears;
 *   4. decorate: collect the decorations of the ids in the table.
 *
 * Every table is fixed-size; a module that needs more is refused as "too
 * complex" rather than half-reflected. Pass 1 proves every instruction lies
 * within the module and is long enough for the operands later passes read,
 * so those passes index without further checks except where an operand
 * count varies.
 *
 * Calls go one way, so the files form a tree:
 *
 *   reflect.c               reflect_spirv: runs the passes in order
 *     spirv_scan.c          passes 1b-4: what the entry point uses
 *     spirv_declarations.c  local size, capabilities, extensions
 *     spirv_resources.c     bindings: buffers, images, samplers, access
 *     spirv_layout.c        bytes: push-constant and workgroup sizes
 *       spirv_walk.c        reasons, the id table, pass 1 (the words)
 */
#ifndef SALVO_CORE_SPIRV_INTERNAL_H
#define SALVO_CORE_SPIRV_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/reflect.h"

enum {
    SPV_MAGIC = 0x07230203u,
    SPV_MAGIC_SWAPPED = 0x03022307u,
    /* SPIR-V's universal limit on ids (spec, "Universal Limits"). */
    SPV_MAX_BOUND = 0x400000u,
    HEADER_WORDS = 5,
};

/* Opcodes. */
enum {
    OP_EXTENSION = 10,
    OP_ENTRY_POINT = 15,
    OP_EXECUTION_MODE = 16,
    OP_CAPABILITY = 17,
    OP_TYPE_BOOL = 20,
    OP_TYPE_INT = 21,
    OP_TYPE_FLOAT = 22,
    OP_TYPE_VECTOR = 23,
    OP_TYPE_MATRIX = 24,
    OP_TYPE_IMAGE = 25,
    OP_TYPE_SAMPLER = 26,
    OP_TYPE_SAMPLED_IMAGE = 27,
    OP_TYPE_ARRAY = 28,
    OP_TYPE_RUNTIME_ARRAY = 29,
    OP_TYPE_STRUCT = 30,
    OP_TYPE_POINTER = 32,
    OP_FUNCTION = 54,
    OP_FUNCTION_END = 56,
    OP_FUNCTION_CALL = 57,
    OP_CONSTANT_TRUE = 41,
    OP_CONSTANT_FALSE = 42,
    OP_CONSTANT = 43,
    OP_CONSTANT_COMPOSITE = 44,
    OP_CONSTANT_NULL = 46,
    OP_SPEC_CONSTANT_TRUE = 48,
    OP_SPEC_CONSTANT_FALSE = 49,
    OP_SPEC_CONSTANT = 50,
    OP_SPEC_CONSTANT_COMPOSITE = 51,
    OP_SPEC_CONSTANT_OP = 52,
    OP_VARIABLE = 59,
    OP_DECORATE = 71,
    OP_MEMBER_DECORATE = 72,
    OP_EXECUTION_MODE_ID = 331,
    OP_TYPE_RAY_QUERY = 4472,
    OP_TYPE_ACCELERATION_STRUCTURE = 5341,
};

enum {
    DIM_BUFFER = 5,
    CAP_PHYSICAL_STORAGE_BUFFER_ADDRESSES = 5347,
};

enum {
    EXEC_MODEL_GLCOMPUTE = 5,
    MODE_LOCAL_SIZE = 17,
    MODE_LOCAL_SIZE_ID = 38,
    /* DenormPreserve, DenormFlushToZero, SignedZeroInfNanPreserve,
     * RoundingModeRTE, RoundingModeRTZ: consecutive, each with a width. */
    MODE_FLOAT_CONTROLS_FIRST = 4459,
    MODE_FLOAT_CONTROLS_LAST = 4463,
};

enum {
    SC_UNIFORM_CONSTANT = 0,
    SC_UNIFORM = 2,
    SC_WORKGROUP = 4,
    SC_PUSH_CONSTANT = 9,
    SC_STORAGE_BUFFER = 12,
    SC_PHYSICAL_STORAGE_BUFFER = 5349,
};

enum {
    DEC_SPEC_ID = 1,
    DEC_BLOCK = 2,
    DEC_BUFFER_BLOCK = 3,
    DEC_ROW_MAJOR = 4,
    DEC_COL_MAJOR = 5,
    DEC_ARRAY_STRIDE = 6,
    DEC_MATRIX_STRIDE = 7,
    DEC_BUILTIN = 11,
    DEC_NON_WRITABLE = 24,
    DEC_NON_READABLE = 25,
    DEC_BINDING = 33,
    DEC_DESCRIPTOR_SET = 34,
    DEC_OFFSET = 35,
    BUILTIN_WORKGROUP_SIZE = 25,
};

/* Table sizes: generous for real compute kernels (a handful of buffers and
 * one push block), small enough to live on the stack (~20 KiB). */
enum {
    MAX_NODES = 256,
    NODE_SLOTS = 512, /* power of two, twice MAX_NODES */
    MAX_MEMBERS = 512,
    MEMBER_SLOTS = 1024, /* power of two, twice MAX_MEMBERS */
    /* Functions tracked to find what the entry point uses; a module with
     * more counts every variable as used. */
    MAX_FUNCTIONS = 512,
};

/* How far to follow a node's operands once its definition is known. */
enum {
    FOLLOW_NONE = 0, /* only the definition itself is needed */
    FOLLOW_ONE = 1,  /* also the definitions of its operands */
    FOLLOW_TWO = 2,  /* and theirs (a variable's pointer, its pointee, and an
                        array's element type and length) */
    FOLLOW_ALL = 3,  /* the whole type tree below it (push blocks) */
};

enum {
    NF_SET = 1u << 0,
    NF_BINDING = 1u << 1,
    NF_SPEC_ID = 1u << 2,
    NF_ARRAY_STRIDE = 1u << 3,
    NF_NON_WRITABLE = 1u << 4,
    NF_NON_READABLE = 1u << 5,
    NF_BLOCK = 1u << 6,
    NF_BUFFER_BLOCK = 1u << 7,
    NF_RESOURCE = 1u << 8, /* a module-scope variable seeded as a resource */
    NF_WORKGROUP = 1u << 9, /* a Workgroup variable */
    NF_USED = 1u << 10,     /* a variable the entry point's call tree names */
};

enum {
    MF_OFFSET = 1u << 0,
    MF_MATRIX_STRIDE = 1u << 1,
    MF_ROW_MAJOR = 1u << 2,
    MF_NON_WRITABLE = 1u << 3,
    MF_NON_READABLE = 1u << 4,
};

typedef struct node {
    uint32_t id;
    uint32_t at; /* word index of the defining instruction; 0 = not found */
    uint32_t set;
    uint32_t binding;
    uint32_t spec_id;
    uint32_t array_stride;
    uint32_t size; /* a struct's size, once sized is set */
    uint16_t opcode;
    uint16_t flags;
    uint8_t follow;
    uint8_t expanded; /* the follow level its operands were wanted at */
    bool sized;
    /* Its std430 size and alignment as workgroup memory, once wg_sized. */
    bool wg_sized;
    uint8_t wg_sizing; /* reflect_sizing */
    uint32_t wg_size;
    uint32_t wg_align;
} node;

typedef struct member {
    uint32_t struct_id;
    uint32_t index;
    uint32_t offset;
    uint32_t matrix_stride;
    uint32_t flags;
} member;

typedef struct ctx {
    const uint32_t *w;
    uint32_t n; /* words */
    uint32_t bound;
    char *reason;
    size_t reason_size;

    uint32_t entry_at; /* the OpEntryPoint; 0 = not found */
    uint32_t entry_fn;
    uint32_t local_size_at;    /* OpExecutionMode LocalSize */
    uint32_t local_size_id_at; /* OpExecutionModeId LocalSizeId */
    uint32_t workgroup_size_id;
    /* The values the caller gives spec constants, by SpecId: array lengths
     * and the local size are read with them. */
    const salvo_spec_constant *spec;
    uint32_t spec_count;
    uint32_t float_controls; /* SALVO_FLOAT_CONTROL bits of the entry's modes */
    /* Function ids reachable from the entry point, sorted, and whether
     * every variable counts as used (too many functions to tell). */
    bool all_used;
    uint32_t function_count;
    struct function_span {
        uint32_t id, at, end; /* OpFunction .. OpFunctionEnd */
        bool reached;
    } functions[MAX_FUNCTIONS];

    uint32_t node_count;
    node nodes[MAX_NODES];
    uint16_t node_slot[NODE_SLOTS]; /* node index + 1; 0 = empty */

    uint32_t member_count;
    member members[MAX_MEMBERS];
    uint16_t member_slot[MEMBER_SLOTS];
} ctx;

static inline uint32_t wc_of(uint32_t word) { return word >> 16; }
static inline uint32_t op_of(uint32_t word) { return word & 0xffffu; }

/* spirv_walk.c: reasons, the table, the words. */

/* The module is not what it claims (or not SPIR-V). */
__attribute__((format(printf, 2, 3))) salvo_status spirv_walk_fail(ctx *c, const char *fmt, ...);
/* A valid module that declares what salvo does not bind. */
__attribute__((format(printf, 2, 3))) salvo_status spirv_walk_unsupported(ctx *c, const char *fmt,
                                                                          ...);
node *spirv_walk_node_find(ctx *c, uint32_t id);
salvo_status spirv_walk_want(ctx *c, uint32_t id, uint8_t follow, node **out);
member *spirv_walk_member_find(ctx *c, uint32_t struct_id, uint32_t index);
salvo_status spirv_walk_member_get(ctx *c, uint32_t struct_id, uint32_t index, member **out);
salvo_status spirv_walk_defined(ctx *c, uint32_t id, node **out);
/* Whether the caller gives the spec constant nd (an OpSpecConstant with
 * a SpecId) a value, and the value. */
bool spirv_walk_spec_given(const ctx *c, const node *nd, uint32_t *value);
bool spirv_walk_string_equals(const ctx *c, uint32_t at, uint32_t from, const char *name);
salvo_status spirv_walk_check_header(ctx *c, const uint32_t *words, size_t size_bytes);
salvo_status spirv_walk_validate(ctx *c, const char *entry);

/* spirv_scan.c: passes 1b-4, in this order. */
void spirv_scan_functions(ctx *c);
salvo_status spirv_scan_seed(ctx *c);
void spirv_scan_use(ctx *c);
salvo_status spirv_scan_close(ctx *c);
salvo_status spirv_scan_decorate(ctx *c);

/* spirv_declarations.c: what the module asks of a launch and a device. */
salvo_status spirv_declarations_local_size(ctx *c, const char *entry, reflect_module *out);
salvo_status spirv_declarations_read(ctx *c, reflect_module *out);
/* sizes[i]: the bytes specialization gives c->spec[i] (see
 * reflect_spirv_specialized); refuses 64-bit constants and values that
 * do not fit their width. */
salvo_status spirv_declarations_spec_sizes(ctx *c, uint8_t *sizes);

/* spirv_resources.c: a used resource variable's bindings. */
salvo_status spirv_resources_add(ctx *c, const node *var, reflect_module *out);
/* A refusal where the entry point's call tree compares with a depth
 * reference (OpImageSample*Dref*, OpImage*DrefGather), whatever image it
 * names: after the bindings, which name a depth image's binding first. */
salvo_status spirv_resources_depth_compare(ctx *c);
/* out->image_float_atomics: the 32-bit float atomics the entry point's
 * call tree makes through OpImageTexelPointer. */
void spirv_resources_image_atomics(ctx *c, reflect_module *out);
/* out->pairs: the separate textures and samplers the entry point's call
 * tree combines (OpSampledImage), by binding. */
void spirv_resources_sampler_pairs(ctx *c, reflect_module *out);

/* spirv_layout.c: sizes in bytes. */
salvo_status spirv_layout_push(ctx *c, const node *var, reflect_module *out);
void spirv_layout_workgroup(ctx *c, reflect_module *out);

#endif
