/*
 * SPIR-V reflection without a SPIR-V library and without allocation.
 *
 * A module may declare millions of ids, so nothing here is indexed by id.
 * Instead the walk keeps a small table of the ids that matter (the resource
 * variables, the types they lead to, the local-size constants) and fills it
 * in a few passes over the instruction stream:
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
 */
#include "core/reflect.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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
    /* Closure rounds: each round resolves one more level of type nesting;
     * real modules need a handful. Bounds the work on hostile input. */
    MAX_ROUNDS = 32,
    /* Type nesting followed when sizing a push-constant block. */
    MAX_DEPTH = 16,
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

static void say(ctx *c, const char *fmt, va_list ap)
{
    if (c->reason && c->reason_size > 0) {
        int r = vsnprintf(c->reason, c->reason_size, fmt, ap);
        if (r < 0)
            c->reason[0] = '\0';
    }
}

/* The module is not what it claims (or not SPIR-V). */
__attribute__((format(printf, 2, 3))) static salvo_status fail(ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(c, fmt, ap);
    va_end(ap);
    return SALVO_ERROR_INVALID_ARGUMENT;
}

/* A valid module that declares what salvo does not bind. */
__attribute__((format(printf, 2, 3))) static salvo_status unsupported(ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(c, fmt, ap);
    va_end(ap);
    return SALVO_ERROR_UNSUPPORTED;
}

static uint32_t hash32(uint32_t x)
{
    /* Ids are dense small integers; a multiplicative hash spreads them. */
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

static node *node_find(ctx *c, uint32_t id)
{
    for (uint32_t h = hash32(id) & (NODE_SLOTS - 1);; h = (h + 1) & (NODE_SLOTS - 1)) {
        uint16_t s = c->node_slot[h];
        if (s == 0)
            return NULL;
        if (c->nodes[s - 1].id == id)
            return &c->nodes[s - 1];
    }
}

/* Asks for id's definition (and, per follow, what lies below it). */
static salvo_status want(ctx *c, uint32_t id, uint8_t follow, node **out)
{
    if (id == 0 || id >= c->bound)
        return fail(c, "id %u is out of range (bound %u)", id, c->bound);
    uint32_t h = hash32(id) & (NODE_SLOTS - 1);
    for (;; h = (h + 1) & (NODE_SLOTS - 1)) {
        uint16_t s = c->node_slot[h];
        if (s == 0)
            break;
        node *nd = &c->nodes[s - 1];
        if (nd->id == id) {
            if (follow > nd->follow)
                nd->follow = follow;
            if (out)
                *out = nd;
            return SALVO_OK;
        }
    }
    if (c->node_count == MAX_NODES)
        return fail(c, "module too complex (more than %d relevant ids)", MAX_NODES);
    node *nd = &c->nodes[c->node_count];
    memset(nd, 0, sizeof *nd);
    nd->id = id;
    nd->follow = follow;
    c->node_slot[h] = (uint16_t)(++c->node_count);
    if (out)
        *out = nd;
    return SALVO_OK;
}

static member *member_find(ctx *c, uint32_t struct_id, uint32_t index)
{
    uint32_t h = hash32(struct_id ^ hash32(index)) & (MEMBER_SLOTS - 1);
    for (;; h = (h + 1) & (MEMBER_SLOTS - 1)) {
        uint16_t s = c->member_slot[h];
        if (s == 0)
            return NULL;
        member *m = &c->members[s - 1];
        if (m->struct_id == struct_id && m->index == index)
            return m;
    }
}

static salvo_status member_get(ctx *c, uint32_t struct_id, uint32_t index, member **out)
{
    uint32_t h = hash32(struct_id ^ hash32(index)) & (MEMBER_SLOTS - 1);
    for (;; h = (h + 1) & (MEMBER_SLOTS - 1)) {
        uint16_t s = c->member_slot[h];
        if (s == 0)
            break;
        member *m = &c->members[s - 1];
        if (m->struct_id == struct_id && m->index == index) {
            *out = m;
            return SALVO_OK;
        }
    }
    if (c->member_count == MAX_MEMBERS)
        return fail(c, "module too complex (more than %d decorated struct members)", MAX_MEMBERS);
    member *m = &c->members[c->member_count];
    memset(m, 0, sizeof *m);
    m->struct_id = struct_id;
    m->index = index;
    c->member_slot[h] = (uint16_t)(++c->member_count);
    *out = m;
    return SALVO_OK;
}

static uint32_t wc_of(uint32_t word) { return word >> 16; }
static uint32_t op_of(uint32_t word) { return word & 0xffffu; }

/* Fewest words an instruction needs for the operands this file reads
 * unconditionally; 1 for opcodes it does not look into. */
static uint32_t min_words(uint32_t op)
{
    switch (op) {
    case OP_TYPE_BOOL:
    case OP_TYPE_STRUCT:
    case OP_CAPABILITY:
    case OP_EXTENSION:
    case OP_TYPE_RAY_QUERY:
    case OP_TYPE_ACCELERATION_STRUCTURE:
    case OP_TYPE_SAMPLER:
        return 2;
    case OP_TYPE_FLOAT:
    case OP_TYPE_RUNTIME_ARRAY:
    case OP_TYPE_IMAGE:
    case OP_TYPE_SAMPLED_IMAGE:
    case OP_EXECUTION_MODE:
    case OP_EXECUTION_MODE_ID:
    case OP_DECORATE:
    case OP_CONSTANT_COMPOSITE:
    case OP_SPEC_CONSTANT_COMPOSITE:
    case OP_CONSTANT_TRUE:
    case OP_CONSTANT_FALSE:
    case OP_CONSTANT_NULL:
    case OP_SPEC_CONSTANT_TRUE:
    case OP_SPEC_CONSTANT_FALSE:
    case OP_FUNCTION:
        return 3;
    case OP_ENTRY_POINT: /* model, function, at least one word of name */
    case OP_TYPE_INT:
    case OP_TYPE_VECTOR:
    case OP_TYPE_MATRIX:
    case OP_TYPE_ARRAY:
    case OP_TYPE_POINTER:
    case OP_CONSTANT:
    case OP_SPEC_CONSTANT:
    case OP_SPEC_CONSTANT_OP:
    case OP_VARIABLE:
    case OP_MEMBER_DECORATE:
    case OP_FUNCTION_CALL:
        return 4;
    default:
        return 1;
    }
}

/* Where an instruction that defines a type, constant or variable keeps its
 * result id; 0 for the instructions the closure never needs to find. */
static uint32_t result_word(uint32_t op)
{
    switch (op) {
    case OP_TYPE_BOOL:
    case OP_TYPE_INT:
    case OP_TYPE_FLOAT:
    case OP_TYPE_VECTOR:
    case OP_TYPE_MATRIX:
    case OP_TYPE_IMAGE:
    case OP_TYPE_SAMPLER:
    case OP_TYPE_SAMPLED_IMAGE:
    case OP_TYPE_ARRAY:
    case OP_TYPE_RUNTIME_ARRAY:
    case OP_TYPE_STRUCT:
    case OP_TYPE_POINTER:
    case OP_TYPE_RAY_QUERY:
    case OP_TYPE_ACCELERATION_STRUCTURE:
        return 1;
    case OP_CONSTANT_TRUE:
    case OP_CONSTANT_FALSE:
    case OP_CONSTANT:
    case OP_CONSTANT_COMPOSITE:
    case OP_CONSTANT_NULL:
    case OP_SPEC_CONSTANT_TRUE:
    case OP_SPEC_CONSTANT_FALSE:
    case OP_SPEC_CONSTANT:
    case OP_SPEC_CONSTANT_COMPOSITE:
    case OP_SPEC_CONSTANT_OP:
    case OP_VARIABLE:
        return 2;
    default:
        return 0;
    }
}

/* Whether the literal string starting at word `from` of the instruction at
 * `at` is NUL-terminated inside it and equals name. */
static bool string_equals(const ctx *c, uint32_t at, uint32_t from, const char *name)
{
    uint32_t wc = wc_of(c->w[at]);
    size_t k = 0;
    for (uint32_t i = from; i < wc; i++) {
        uint32_t word = c->w[at + i];
        for (unsigned b = 0; b < 4; b++) {
            /* SPIR-V packs the first character in the lowest-order byte. */
            char ch = (char)((word >> (8 * b)) & 0xffu);
            if (ch != name[k])
                return false;
            if (ch == '\0')
                return true;
            k++;
        }
    }
    return false; /* not terminated within the instruction */
}

static salvo_status check_header(ctx *c, const uint32_t *words, size_t size_bytes)
{
    if (words == NULL || size_bytes == 0)
        return fail(c, "empty module");
    if (size_bytes % 4 != 0)
        return fail(c, "module size %zu is not a multiple of 4", size_bytes);
    if (size_bytes / 4 < HEADER_WORDS)
        return fail(c, "module too short for a SPIR-V header (%zu bytes)", size_bytes);
    if (words[0] == SPV_MAGIC_SWAPPED)
        return fail(c, "big-endian SPIR-V not supported");
    if (words[0] != SPV_MAGIC)
        return fail(c, "not SPIR-V (bad magic 0x%08x)", words[0]);
    if ((uint64_t)(size_bytes / 4) > UINT32_MAX)
        return fail(c, "module too large");
    if (((words[1] >> 16) & 0xffu) != 1u)
        return fail(c, "unsupported SPIR-V version 0x%08x", words[1]);
    if (words[3] == 0 || words[3] > SPV_MAX_BOUND)
        return fail(c, "id bound %u out of range", words[3]);
    c->w = words;
    c->n = (uint32_t)(size_bytes / 4);
    c->bound = words[3];
    return SALVO_OK;
}

/* Pass 1: every instruction fits, and the entry point exists. */
static salvo_status pass_validate(ctx *c, const char *entry)
{
    for (uint32_t at = HEADER_WORDS; at < c->n;) {
        uint32_t wc = wc_of(c->w[at]), op = op_of(c->w[at]);
        if (wc == 0)
            return fail(c, "instruction at word %u has word count 0", at);
        if (wc > c->n - at)
            return fail(c, "instruction at word %u (opcode %u) runs past the end of the module",
                        at, op);
        if (wc < min_words(op))
            return fail(c, "instruction at word %u (opcode %u) is too short", at, op);
        if (op == OP_ENTRY_POINT && c->entry_at == 0 && c->w[at + 1] == EXEC_MODEL_GLCOMPUTE &&
            string_equals(c, at, 3, entry)) {
            c->entry_at = at;
            c->entry_fn = c->w[at + 2];
        }
        at += wc;
    }
    if (c->entry_at == 0)
        return fail(c, "no GLCompute entry point '%s'", entry);
    return SALVO_OK;
}

static struct function_span *function_find(ctx *c, uint32_t id)
{
    uint32_t lo = 0, hi = c->function_count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (c->functions[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->function_count && c->functions[lo].id == id ? &c->functions[lo] : NULL;
}

/* Pass 1b: the functions the entry point's call tree reaches. Each is
 * scanned once for calls, so the walk stays linear in the module. */
static void pass_functions(ctx *c)
{
    uint32_t open = UINT32_MAX;
    for (uint32_t at = HEADER_WORDS; at < c->n; at += wc_of(c->w[at])) {
        uint32_t op = op_of(c->w[at]);
        if (op == OP_FUNCTION) {
            if (c->function_count == MAX_FUNCTIONS) {
                c->all_used = true;
                return;
            }
            open = c->function_count++;
            c->functions[open] = (struct function_span){c->w[at + 2], at, c->n, false};
        } else if (op == OP_FUNCTION_END && open != UINT32_MAX) {
            c->functions[open].end = at;
            open = UINT32_MAX;
        }
    }
    /* Sorted by id for the lookups; insertion sort, as modules have few. */
    for (uint32_t i = 1; i < c->function_count; i++) {
        struct function_span f = c->functions[i];
        uint32_t j = i;
        for (; j > 0 && c->functions[j - 1].id > f.id; j--)
            c->functions[j] = c->functions[j - 1];
        c->functions[j] = f;
    }
    struct function_span *entry = function_find(c, c->entry_fn);
    if (entry == NULL) {
        c->all_used = true; /* declared but not defined: nothing to go by */
        return;
    }
    entry->reached = true;
    bool scanned[MAX_FUNCTIONS] = {false};
    for (bool progress = true; progress;) {
        progress = false;
        for (uint32_t i = 0; i < c->function_count; i++) {
            if (!c->functions[i].reached || scanned[i])
                continue;
            scanned[i] = true;
            progress = true;
            for (uint32_t at = c->functions[i].at; at < c->functions[i].end;
                 at += wc_of(c->w[at])) {
                if (op_of(c->w[at]) != OP_FUNCTION_CALL)
                    continue;
                struct function_span *callee = function_find(c, c->w[at + 3]);
                if (callee)
                    callee->reached = true;
            }
        }
    }
}

/* Pass 2b: mark the variables that an instruction of a reached function
 * names. Any operand word counts, so a literal that happens to equal a
 * variable's id only makes the answer conservative. */
static void pass_use(ctx *c)
{
    for (uint32_t i = 0; i < c->node_count; i++)
        if (c->all_used)
            c->nodes[i].flags |= NF_USED;
    if (c->all_used)
        return;
    for (uint32_t f = 0; f < c->function_count; f++) {
        if (!c->functions[f].reached)
            continue;
        for (uint32_t at = c->functions[f].at; at < c->functions[f].end; at += wc_of(c->w[at])) {
            uint32_t wc = wc_of(c->w[at]);
            for (uint32_t k = 1; k < wc; k++) {
                node *nd = node_find(c, c->w[at + k]);
                if (nd && nd->opcode == OP_VARIABLE && (nd->flags & (NF_RESOURCE | NF_WORKGROUP)))
                    nd->flags |= NF_USED;
            }
        }
    }
}

/* Pass 2: what the entry declares, and where the walk has to look next. */
static salvo_status pass_seed(ctx *c)
{
    salvo_status st = SALVO_OK;
    for (uint32_t at = HEADER_WORDS; at < c->n; at += wc_of(c->w[at])) {
        const uint32_t *in = &c->w[at];
        uint32_t wc = wc_of(in[0]), op = op_of(in[0]);
        if (op == OP_EXECUTION_MODE && in[1] == c->entry_fn &&
            in[2] >= MODE_FLOAT_CONTROLS_FIRST && in[2] <= MODE_FLOAT_CONTROLS_LAST) {
            uint32_t width = wc >= 4 ? in[3] : 0;
            if (width != 16 && width != 32 && width != 64)
                return fail(c, "float-controls execution mode at word %u: width %u", at, width);
            c->float_controls |= SALVO_FLOAT_CONTROL(in[2] - MODE_FLOAT_CONTROLS_FIRST, width);
        } else if (op == OP_EXECUTION_MODE && in[1] == c->entry_fn && in[2] == MODE_LOCAL_SIZE) {
            if (wc < 6)
                return fail(c, "LocalSize at word %u has too few operands", at);
            c->local_size_at = at;
        } else if ((op == OP_EXECUTION_MODE_ID || op == OP_EXECUTION_MODE) &&
                   in[1] == c->entry_fn && in[2] == MODE_LOCAL_SIZE_ID) {
            if (wc < 6)
                return fail(c, "LocalSizeId at word %u has too few operands", at);
            c->local_size_id_at = at;
            for (uint32_t i = 3; i < 6; i++)
                if ((st = want(c, in[i], FOLLOW_NONE, NULL)) != SALVO_OK)
                    return st;
        } else if (op == OP_DECORATE && in[2] == DEC_BUILTIN && wc >= 4 &&
                   in[3] == BUILTIN_WORKGROUP_SIZE && c->workgroup_size_id == 0) {
            if ((st = want(c, in[1], FOLLOW_ONE, NULL)) != SALVO_OK)
                return st;
            c->workgroup_size_id = in[1];
        } else if (op == OP_VARIABLE) {
            uint32_t sc = in[3];
            if (sc == SC_WORKGROUP) {
                node *v = NULL;
                if ((st = want(c, in[2], FOLLOW_NONE, &v)) != SALVO_OK)
                    return st;
                if (v->at != 0)
                    continue;
                v->at = at;
                v->opcode = OP_VARIABLE;
                v->flags |= NF_WORKGROUP;
                /* Its size depends on the whole tree below it. */
                if ((st = want(c, in[1], FOLLOW_ALL, NULL)) != SALVO_OK)
                    return st;
                continue;
            }
            if (sc != SC_UNIFORM_CONSTANT && sc != SC_UNIFORM && sc != SC_STORAGE_BUFFER &&
                sc != SC_PUSH_CONSTANT)
                continue;
            node *v = NULL;
            if ((st = want(c, in[2], FOLLOW_NONE, &v)) != SALVO_OK)
                return st;
            if (v->at != 0)
                continue; /* a second definition of the id: the first one counts */
            v->at = at;
            v->opcode = OP_VARIABLE;
            v->flags |= NF_RESOURCE;
            /* A buffer (or opaque) variable needs its pointee's kind and
             * decorations, and for an array the element type and length;
             * only a push block's size depends on the whole tree below it. */
            st = want(c, in[1], sc == SC_PUSH_CONSTANT ? FOLLOW_ALL : FOLLOW_TWO, NULL);
            if (st != SALVO_OK)
                return st;
        }
    }
    return SALVO_OK;
}

/* Wants the operands of a node whose definition is known. */
static salvo_status expand(ctx *c, node *nd)
{
    const uint32_t *in = &c->w[nd->at];
    uint32_t wc = wc_of(in[0]);
    uint8_t child = nd->follow == FOLLOW_ALL ? FOLLOW_ALL
                    : nd->follow > FOLLOW_NONE ? (uint8_t)(nd->follow - 1)
                                               : FOLLOW_NONE;
    uint32_t first = 0, last = 0; /* operand words [first, last) that are ids */
    switch (nd->opcode) {
    case OP_TYPE_IMAGE:         /* its sampled type (float, int or uint) */
    case OP_TYPE_SAMPLED_IMAGE: /* its image type */
        if (wc >= 3)
            first = 2, last = 3;
        break;
    case OP_TYPE_POINTER:
        /* Physical pointers are 8 bytes whatever they point to, and may
         * point back at the struct holding them. */
        if (in[2] != SC_PHYSICAL_STORAGE_BUFFER)
            first = 3, last = 4;
        break;
    case OP_TYPE_VECTOR:
    case OP_TYPE_MATRIX:
    case OP_TYPE_RUNTIME_ARRAY:
        first = 2, last = 3;
        break;
    case OP_TYPE_ARRAY:
        first = 2, last = 4;
        break;
    case OP_TYPE_STRUCT:
        first = 2, last = wc;
        break;
    case OP_CONSTANT_COMPOSITE:
    case OP_SPEC_CONSTANT_COMPOSITE:
        first = 3, last = wc;
        break;
    default:
        break;
    }
    for (uint32_t i = first; i < last; i++) {
        /* want() may append to the table, but nodes never move: nd stays valid. */
        salvo_status st = want(c, in[i], child, NULL);
        if (st != SALVO_OK)
            return st;
    }
    return SALVO_OK;
}

/* Pass 3: find the definitions of every wanted id, level by level. */
static salvo_status pass_close(ctx *c)
{
    for (unsigned round = 0;; round++) {
        bool progress = false;
        for (uint32_t i = 0; i < c->node_count; i++) {
            node *nd = &c->nodes[i];
            /* What a binding of an image is depends on the image type's
             * operands, however deep the image sits in the variable's type. */
            uint8_t need = nd->follow;
            if ((nd->opcode == OP_TYPE_IMAGE || nd->opcode == OP_TYPE_SAMPLED_IMAGE) &&
                need < FOLLOW_ONE)
                need = FOLLOW_ONE;
            if (nd->at != 0 && nd->expanded < need) {
                nd->follow = need;
                nd->expanded = need;
                salvo_status st = expand(c, nd);
                if (st != SALVO_OK)
                    return st;
                progress = true;
            }
        }
        uint32_t unresolved = 0;
        for (uint32_t i = 0; i < c->node_count; i++)
            unresolved += c->nodes[i].at == 0;
        if (unresolved == 0)
            return SALVO_OK;
        if (round == MAX_ROUNDS)
            return fail(c, "module too complex (types nested more than %d deep)", MAX_ROUNDS);
        for (uint32_t at = HEADER_WORDS; at < c->n && unresolved > 0; at += wc_of(c->w[at])) {
            uint32_t op = op_of(c->w[at]);
            uint32_t rw = result_word(op);
            if (rw == 0)
                continue;
            node *nd = node_find(c, c->w[at + rw]);
            if (nd == NULL || nd->at != 0)
                continue;
            nd->at = at;
            nd->opcode = (uint16_t)op;
            unresolved--;
            progress = true;
        }
        /* What is still unresolved has no definition the walk understands;
         * whoever needs it reports that. */
        if (!progress)
            return SALVO_OK;
    }
}

static salvo_status need_literal(ctx *c, uint32_t at, uint32_t wc, uint32_t index)
{
    if (index < wc)
        return SALVO_OK;
    return fail(c, "decoration at word %u is missing its operand", at);
}

/* Pass 4: the decorations of the ids in the table. */
static salvo_status pass_decorate(ctx *c)
{
    salvo_status st;
    for (uint32_t at = HEADER_WORDS; at < c->n; at += wc_of(c->w[at])) {
        const uint32_t *in = &c->w[at];
        uint32_t wc = wc_of(in[0]), op = op_of(in[0]);
        if (op == OP_DECORATE) {
            node *nd = node_find(c, in[1]);
            if (nd == NULL)
                continue;
            switch (in[2]) {
            case DEC_SPEC_ID:
                if ((st = need_literal(c, at, wc, 3)) != SALVO_OK)
                    return st;
                nd->spec_id = in[3];
                nd->flags |= NF_SPEC_ID;
                break;
            case DEC_BINDING:
                if ((st = need_literal(c, at, wc, 3)) != SALVO_OK)
                    return st;
                nd->binding = in[3];
                nd->flags |= NF_BINDING;
                break;
            case DEC_DESCRIPTOR_SET:
                if ((st = need_literal(c, at, wc, 3)) != SALVO_OK)
                    return st;
                nd->set = in[3];
                nd->flags |= NF_SET;
                break;
            case DEC_ARRAY_STRIDE:
                if ((st = need_literal(c, at, wc, 3)) != SALVO_OK)
                    return st;
                nd->array_stride = in[3];
                nd->flags |= NF_ARRAY_STRIDE;
                break;
            case DEC_NON_WRITABLE:
                nd->flags |= NF_NON_WRITABLE;
                break;
            case DEC_NON_READABLE:
                nd->flags |= NF_NON_READABLE;
                break;
            case DEC_BLOCK:
                nd->flags |= NF_BLOCK;
                break;
            case DEC_BUFFER_BLOCK:
                nd->flags |= NF_BUFFER_BLOCK;
                break;
            default:
                break;
            }
        } else if (op == OP_MEMBER_DECORATE) {
            uint32_t dec = in[3];
            if (dec != DEC_OFFSET && dec != DEC_MATRIX_STRIDE && dec != DEC_ROW_MAJOR &&
                dec != DEC_COL_MAJOR && dec != DEC_NON_WRITABLE && dec != DEC_NON_READABLE)
                continue;
            if (node_find(c, in[1]) == NULL)
                continue;
            member *m = NULL;
            if ((st = member_get(c, in[1], in[2], &m)) != SALVO_OK)
                return st;
            switch (dec) {
            case DEC_OFFSET:
                if ((st = need_literal(c, at, wc, 4)) != SALVO_OK)
                    return st;
                m->offset = in[4];
                m->flags |= MF_OFFSET;
                break;
            case DEC_MATRIX_STRIDE:
                if ((st = need_literal(c, at, wc, 4)) != SALVO_OK)
                    return st;
                m->matrix_stride = in[4];
                m->flags |= MF_MATRIX_STRIDE;
                break;
            case DEC_ROW_MAJOR:
                m->flags |= MF_ROW_MAJOR;
                break;
            case DEC_COL_MAJOR:
                m->flags &= ~(uint32_t)MF_ROW_MAJOR;
                break;
            case DEC_NON_WRITABLE:
                m->flags |= MF_NON_WRITABLE;
                break;
            default: /* DEC_NON_READABLE */
                m->flags |= MF_NON_READABLE;
                break;
            }
        }
    }
    return SALVO_OK;
}

/* The node for id with a known definition, or a reason. */
static salvo_status defined(ctx *c, uint32_t id, node **out)
{
    node *nd = node_find(c, id);
    if (nd == NULL || nd->at == 0)
        return fail(c, "id %u has no definition this reflection understands", id);
    *out = nd;
    return SALVO_OK;
}

/* One local-size component: an integer constant, or a spec constant's
 * default value and its SpecId. */
static salvo_status local_size_component(ctx *c, uint32_t id, uint32_t *value, uint32_t *spec_id)
{
    node *nd = NULL;
    salvo_status st = defined(c, id, &nd);
    if (st != SALVO_OK)
        return st;
    if (nd->opcode != OP_CONSTANT && nd->opcode != OP_SPEC_CONSTANT)
        return fail(c, "local size component (id %u) is not an integer constant", id);
    *value = c->w[nd->at + 3];
    *spec_id = nd->opcode == OP_SPEC_CONSTANT && (nd->flags & NF_SPEC_ID) ? nd->spec_id : UINT32_MAX;
    return SALVO_OK;
}

static salvo_status reflect_local_size(ctx *c, const char *entry, reflect_module *out)
{
    const uint32_t *ids = NULL;
    /* Vulkan: a WorkgroupSize builtin overrides the execution mode. */
    if (c->workgroup_size_id != 0) {
        node *nd = node_find(c, c->workgroup_size_id);
        if (nd && (nd->opcode == OP_CONSTANT_COMPOSITE || nd->opcode == OP_SPEC_CONSTANT_COMPOSITE)) {
            if (wc_of(c->w[nd->at]) != 6)
                return fail(c, "WorkgroupSize (id %u) does not have 3 components", nd->id);
            ids = &c->w[nd->at + 3];
        }
    }
    if (ids == NULL && c->local_size_id_at != 0)
        ids = &c->w[c->local_size_id_at + 3];
    if (ids != NULL) {
        for (int i = 0; i < 3; i++) {
            salvo_status st =
                local_size_component(c, ids[i], &out->local_size[i], &out->local_size_spec_id[i]);
            if (st != SALVO_OK)
                return st;
        }
        return SALVO_OK;
    }
    if (c->local_size_at == 0)
        return fail(c, "entry point '%s' declares no local size", entry);
    for (int i = 0; i < 3; i++) {
        out->local_size[i] = c->w[c->local_size_at + 3 + (uint32_t)i];
        out->local_size_spec_id[i] = UINT32_MAX;
    }
    return SALVO_OK;
}

/* Whether every member of the struct at nd carries member flag mf. */
static bool all_members(ctx *c, const node *nd, uint32_t mf)
{
    uint32_t count = wc_of(c->w[nd->at]) - 2;
    if (count == 0)
        return false;
    for (uint32_t i = 0; i < count; i++) {
        const member *m = member_find(c, nd->id, i);
        if (m == NULL || !(m->flags & mf))
            return false;
    }
    return true;
}

/* Adds binding b (element 0 and b->count elements, one entry each); a
 * second declaration of the same binding (an alias, as kernels that view
 * one buffer as several types have) merges its access into the first. */
static salvo_status add_binding(ctx *c, reflect_module *out, const reflect_binding *b)
{
    uint32_t i = 0;
    while (i < out->binding_count &&
           (out->bindings[i].set < b->set ||
            (out->bindings[i].set == b->set && out->bindings[i].binding < b->binding)))
        i++;
    if (i < out->binding_count && out->bindings[i].set == b->set &&
        out->bindings[i].binding == b->binding) {
        reflect_binding *first = &out->bindings[i];
        if (first->kind != b->kind || first->image_type != b->image_type)
            return unsupported(c, "binding %u: declared as two different kinds of resource",
                               b->binding);
        if (first->image_format != b->image_format || first->sampled_class != b->sampled_class)
            return unsupported(c, "binding %u: declared as images of two different formats",
                               b->binding);
        if (first->uniform != b->uniform)
            return unsupported(c, "binding %u: declared both as a uniform and as a storage buffer",
                               b->binding);
        if (first->count != b->count)
            return unsupported(c, "binding %u: declared as arrays of %u and of %u buffers",
                               b->binding, first->count, b->count);
        for (uint32_t e = 0; e < b->count; e++)
            first[e].access = (salvo_access)(first[e].access | b->access);
        return SALVO_OK;
    }
    if (b->count > SALVO_MAX_BINDINGS - out->binding_count)
        return unsupported(c, "more than %d buffers bound (each array element counts)",
                           SALVO_MAX_BINDINGS);
    memmove(&out->bindings[i + b->count], &out->bindings[i],
            (out->binding_count - i) * sizeof out->bindings[0]);
    for (uint32_t e = 0; e < b->count; e++) {
        out->bindings[i + e] = *b;
        out->bindings[i + e].element = e;
    }
    out->binding_count += b->count;
    return SALVO_OK;
}

/* What an opaque type is, in a refusal ("storage images"), or NULL. */
static const char *opaque_kind(ctx *c, const node *t)
{
    const uint32_t *in = &c->w[t->at];
    switch (t->opcode) {
    case OP_TYPE_IMAGE: {
        if (wc_of(in[0]) < 9)
            return "images";
        bool storage = in[7] == 2;
        if (in[3] == DIM_BUFFER)
            return storage ? "storage texel buffers" : "uniform texel buffers";
        return storage ? "storage images" : "sampled images";
    }
    case OP_TYPE_SAMPLER:
        return "samplers";
    case OP_TYPE_SAMPLED_IMAGE:
        return "combined image samplers";
    case OP_TYPE_ACCELERATION_STRUCTURE:
        return "acceleration structures";
    default:
        return NULL;
    }
}

/* SPIR-V's Image Format operand -> salvo_format; UINT32_MAX where salvo
 * has no such format (packed and 64-bit ones). */
static uint32_t image_format_of(uint32_t spv)
{
    static const uint8_t map[] = {
        [0] = SALVO_FORMAT_UNDEFINED,
        [1] = SALVO_FORMAT_RGBA32_FLOAT, [2] = SALVO_FORMAT_RGBA16_FLOAT,
        [3] = SALVO_FORMAT_R32_FLOAT, [4] = SALVO_FORMAT_RGBA8_UNORM,
        [5] = SALVO_FORMAT_RGBA8_SNORM, [6] = SALVO_FORMAT_RG32_FLOAT,
        [7] = SALVO_FORMAT_RG16_FLOAT, [9] = SALVO_FORMAT_R16_FLOAT,
        [10] = SALVO_FORMAT_RGBA16_UNORM, [12] = SALVO_FORMAT_RG16_UNORM,
        [13] = SALVO_FORMAT_RG8_UNORM, [14] = SALVO_FORMAT_R16_UNORM,
        [15] = SALVO_FORMAT_R8_UNORM, [16] = SALVO_FORMAT_RGBA16_SNORM,
        [17] = SALVO_FORMAT_RG16_SNORM, [18] = SALVO_FORMAT_RG8_SNORM,
        [19] = SALVO_FORMAT_R16_SNORM, [20] = SALVO_FORMAT_R8_SNORM,
        [21] = SALVO_FORMAT_RGBA32_SINT, [22] = SALVO_FORMAT_RGBA16_SINT,
        [23] = SALVO_FORMAT_RGBA8_SINT, [24] = SALVO_FORMAT_R32_SINT,
        [25] = SALVO_FORMAT_RG32_SINT, [26] = SALVO_FORMAT_RG16_SINT,
        [27] = SALVO_FORMAT_RG8_SINT, [28] = SALVO_FORMAT_R16_SINT,
        [29] = SALVO_FORMAT_R8_SINT, [30] = SALVO_FORMAT_RGBA32_UINT,
        [31] = SALVO_FORMAT_RGBA16_UINT, [32] = SALVO_FORMAT_RGBA8_UINT,
        [33] = SALVO_FORMAT_R32_UINT, [35] = SALVO_FORMAT_RG32_UINT,
        [36] = SALVO_FORMAT_RG16_UINT, [37] = SALVO_FORMAT_RG8_UINT,
        [38] = SALVO_FORMAT_R16_UINT, [39] = SALVO_FORMAT_R8_UINT,
    };
    if (spv == 0)
        return SALVO_FORMAT_UNDEFINED;
    if (spv >= sizeof map || map[spv] == SALVO_FORMAT_UNDEFINED)
        return UINT32_MAX;
    return map[spv];
}

/* Dimensionality names for refusals, by SPIR-V Dim. */
static const char *const dim_names[] = {"1D", "2D", "3D", "cube", "rect", "buffer", "subpass"};

/* A binding of an image, a sampler, or both (elem: the variable's type
 * after any array): kind, dimensionality, format and access, or a
 * refusal naming what salvo cannot bind. */
static salvo_status reflect_image(ctx *c, const node *var, const node *elem, reflect_binding *b)
{
    uint32_t binding = var->binding;
    if (elem->opcode == OP_TYPE_SAMPLER) {
        b->kind = SALVO_BINDING_SAMPLER;
        b->access = SALVO_ACCESS_READ;
        return SALVO_OK;
    }
    const node *im = elem;
    if (elem->opcode == OP_TYPE_SAMPLED_IMAGE) {
        node *inner = NULL;
        salvo_status st = defined(c, c->w[elem->at + 2], &inner);
        if (st != SALVO_OK)
            return st;
        if (inner->opcode != OP_TYPE_IMAGE)
            return fail(c, "binding %u: sampled image of a type that is not an image", binding);
        im = inner;
    }
    const uint32_t *in = &c->w[im->at];
    if (wc_of(in[0]) < 9)
        return fail(c, "binding %u: OpTypeImage too short", binding);
    uint32_t dim = in[3], arrayed = in[5], ms = in[6], sampled = in[7];
    const char *dname = dim < 7 ? dim_names[dim] : "unknown";
    if (dim == DIM_BUFFER)
        return unsupported(c, "binding %u: %s texel buffers are not supported", binding,
                           sampled == 2 ? "storage" : "uniform");
    if (ms)
        return unsupported(c, "binding %u: multisampled images are not supported", binding);
    if (dim > 2 || (arrayed && dim != 1))
        return unsupported(c,
                           "binding %u: %s%s images are not supported (salvo images are 1D, 2D, "
                           "3D and 2D arrays)",
                           binding, dname, arrayed ? " array" : "");
    b->image_type = arrayed ? SALVO_IMAGE_2D_ARRAY
                  : dim == 0 ? SALVO_IMAGE_1D
                  : dim == 1 ? SALVO_IMAGE_2D
                             : SALVO_IMAGE_3D;
    node *st_type = NULL;
    salvo_status st = defined(c, in[2], &st_type);
    if (st != SALVO_OK)
        return st;
    if (st_type->opcode == OP_TYPE_FLOAT)
        b->sampled_class = REFLECT_TEXEL_FLOAT;
    else if (st_type->opcode == OP_TYPE_INT && wc_of(c->w[st_type->at]) >= 4)
        b->sampled_class = c->w[st_type->at + 3] ? REFLECT_TEXEL_SINT : REFLECT_TEXEL_UINT;
    else
        return fail(c, "binding %u: image of a sampled type that is not a number", binding);
    uint32_t format = image_format_of(in[8]);
    if (format == UINT32_MAX)
        return unsupported(c, "binding %u: image format %u (SPIR-V ImageFormat) has no salvo format",
                           binding, in[8]);
    b->image_format = format;
    if (elem->opcode == OP_TYPE_SAMPLED_IMAGE) {
        b->kind = SALVO_BINDING_IMAGE_SAMPLER;
        b->access = SALVO_ACCESS_READ;
    } else if (sampled == 2) {
        b->kind = SALVO_BINDING_STORAGE_IMAGE;
        if (var->flags & NF_NON_WRITABLE)
            b->access = SALVO_ACCESS_READ;
        else if (var->flags & NF_NON_READABLE)
            b->access = SALVO_ACCESS_WRITE;
        else
            b->access = SALVO_ACCESS_READ_WRITE;
    } else if (sampled == 1) {
        b->kind = SALVO_BINDING_SAMPLED_IMAGE;
        b->access = SALVO_ACCESS_READ;
    } else {
        return unsupported(c,
                           "binding %u: an image that is neither sampled nor storage until run "
                           "time is not supported",
                           binding);
    }
    return SALVO_OK;
}

static salvo_status reflect_buffer(ctx *c, const node *var, reflect_module *out)
{
    uint32_t sc = c->w[var->at + 3];
    bool has_binding = (var->flags & NF_BINDING) != 0;
    uint32_t binding = var->binding;
    node *ptr = NULL, *pointee = NULL, *elem = NULL;
    salvo_status st = defined(c, c->w[var->at + 1], &ptr);
    if (st != SALVO_OK)
        return st;
    if (ptr->opcode != OP_TYPE_POINTER)
        return fail(c, "variable %u: type is not a pointer", var->id);
    if ((st = defined(c, c->w[ptr->at + 3], &pointee)) != SALVO_OK)
        return st;
    uint32_t count = 1;
    elem = pointee;
    if (pointee->opcode == OP_TYPE_ARRAY || pointee->opcode == OP_TYPE_RUNTIME_ARRAY) {
        if ((st = defined(c, c->w[pointee->at + 2], &elem)) != SALVO_OK)
            return st;
    }
    reflect_binding img = {0};
    if (elem->opcode == OP_TYPE_IMAGE || elem->opcode == OP_TYPE_SAMPLED_IMAGE ||
        elem->opcode == OP_TYPE_SAMPLER) {
        if ((st = reflect_image(c, var, elem, &img)) != SALVO_OK)
            return st;
    }
    const char *kind = img.kind ? NULL : opaque_kind(c, elem);
    if (kind && has_binding)
        return unsupported(c, "binding %u: %s are not supported (salvo binds buffers and images)",
                           binding, kind);
    if (kind)
        return unsupported(c, "variable %u: %s are not supported (salvo binds buffers and images)",
                           var->id, kind);
    if (sc == SC_UNIFORM_CONSTANT && !img.kind)
        return unsupported(c, "variable %u: resources of type opcode %u are not supported",
                           var->id, elem->opcode);
    if (!has_binding)
        return fail(c, "resource variable %u has no Binding decoration", var->id);
    if (!(var->flags & NF_SET))
        return fail(c, "binding %u: no DescriptorSet decoration", binding);
    if (pointee->opcode == OP_TYPE_RUNTIME_ARRAY)
        return unsupported(c,
                           "binding %u: runtime arrays of %s (descriptor indexing) are not "
                           "supported; give the array a length",
                           binding, img.kind ? "images or samplers" : "buffers");
    if (pointee->opcode == OP_TYPE_ARRAY) {
        node *len = NULL;
        if ((st = defined(c, c->w[pointee->at + 3], &len)) != SALVO_OK)
            return st;
        if (len->opcode == OP_SPEC_CONSTANT || len->opcode == OP_SPEC_CONSTANT_OP)
            return unsupported(c,
                               "binding %u: an array of buffers sized by a specialization "
                               "constant is not supported",
                               binding);
        if (len->opcode != OP_CONSTANT || wc_of(c->w[len->at]) < 4)
            return fail(c, "binding %u: array length is not an integer constant", binding);
        bool wide = wc_of(c->w[len->at]) > 4 && c->w[len->at + 4] != 0;
        count = wide ? UINT32_MAX : c->w[len->at + 3];
        if (count == 0)
            return fail(c, "binding %u: array of 0 buffers", binding);
    }
    if (img.kind) {
        img.set = var->set;
        img.binding = binding;
        img.count = count;
        return add_binding(c, out, &img);
    }
    if (elem->opcode != OP_TYPE_STRUCT)
        return fail(c, "binding %u: not a buffer block (unsupported resource type)", binding);

    reflect_binding b = {.set = var->set, .binding = binding, .count = count};
    if (sc == SC_UNIFORM && (elem->flags & NF_BUFFER_BLOCK)) {
        b.uniform = false; /* pre-SPIR-V 1.3 storage buffer */
    } else if (sc == SC_UNIFORM && (elem->flags & NF_BLOCK)) {
        b.uniform = true;
    } else if (sc == SC_UNIFORM) {
        return fail(c, "binding %u: Uniform struct is neither Block nor BufferBlock", binding);
    } else {
        b.uniform = false;
    }

    if (b.uniform || (var->flags & NF_NON_WRITABLE) || all_members(c, elem, MF_NON_WRITABLE))
        b.access = SALVO_ACCESS_READ;
    else if ((var->flags & NF_NON_READABLE) || all_members(c, elem, MF_NON_READABLE))
        b.access = SALVO_ACCESS_WRITE;
    else
        b.access = SALVO_ACCESS_READ_WRITE;
    return add_binding(c, out, &b);
}

/* Matrix layout inherited from the struct member that holds the matrix
 * (possibly through arrays). */
typedef struct layout {
    uint32_t matrix_stride; /* 0 = none given */
    bool row_major;
} layout;

static salvo_status size_of(ctx *c, uint32_t id, layout lay, unsigned depth, uint64_t *size);

static salvo_status checked(ctx *c, uint64_t v, uint64_t *size)
{
    if (v > UINT32_MAX)
        return fail(c, "push constant block larger than 4 GiB");
    *size = v;
    return SALVO_OK;
}

static salvo_status struct_size(ctx *c, node *nd, unsigned depth, uint64_t *size)
{
    /* A struct's size does not depend on where it is used, and a hostile
     * module can nest structs of thousands of members each: remembering
     * the size keeps the walk linear in the module. */
    if (nd->sized) {
        *size = nd->size;
        return SALVO_OK;
    }
    uint32_t count = wc_of(c->w[nd->at]) - 2;
    uint64_t end = 0, next = 0;
    for (uint32_t i = 0; i < count; i++) {
        const member *m = member_find(c, nd->id, i);
        /* Offsets are mandatory in push blocks; without one, pack after
         * the previous member rather than give up. */
        uint64_t offset = m && (m->flags & MF_OFFSET) ? m->offset : next;
        layout lay = {0, false};
        if (m && (m->flags & MF_MATRIX_STRIDE))
            lay.matrix_stride = m->matrix_stride;
        if (m && (m->flags & MF_ROW_MAJOR))
            lay.row_major = true;
        uint64_t msize;
        salvo_status st = size_of(c, c->w[nd->at + 2 + i], lay, depth + 1, &msize);
        if (st != SALVO_OK)
            return st;
        next = offset + msize; /* both <= UINT32_MAX: no overflow */
        if ((st = checked(c, next, &next)) != SALVO_OK)
            return st;
        if (next > end)
            end = next;
    }
    nd->size = (uint32_t)end;
    nd->sized = true;
    *size = end;
    return SALVO_OK;
}

static salvo_status size_of(ctx *c, uint32_t id, layout lay, unsigned depth, uint64_t *size)
{
    if (depth > MAX_DEPTH)
        return fail(c, "push constant types nested more than %d deep", MAX_DEPTH);
    node *nd = NULL;
    salvo_status st = defined(c, id, &nd);
    if (st != SALVO_OK)
        return st;
    const uint32_t *in = &c->w[nd->at];
    uint64_t inner;
    switch (nd->opcode) {
    case OP_TYPE_BOOL:
        *size = 4;
        return SALVO_OK;
    case OP_TYPE_INT:
    case OP_TYPE_FLOAT:
        *size = in[2] / 8;
        return SALVO_OK;
    case OP_TYPE_VECTOR:
        if ((st = size_of(c, in[2], lay, depth + 1, &inner)) != SALVO_OK)
            return st;
        return checked(c, inner * in[3], size);
    case OP_TYPE_MATRIX: {
        uint32_t columns = in[3];
        node *col = NULL;
        if ((st = defined(c, in[2], &col)) != SALVO_OK)
            return st;
        if (col->opcode != OP_TYPE_VECTOR)
            return fail(c, "matrix type %u: column type is not a vector", nd->id);
        uint32_t rows = c->w[col->at + 3];
        if (lay.matrix_stride != 0)
            return checked(c, (uint64_t)lay.matrix_stride * (lay.row_major ? rows : columns),
                           size);
        if ((st = size_of(c, in[2], lay, depth + 1, &inner)) != SALVO_OK)
            return st;
        return checked(c, inner * columns, size);
    }
    case OP_TYPE_ARRAY: {
        node *len = NULL;
        if ((st = defined(c, in[3], &len)) != SALVO_OK)
            return st;
        if (len->opcode != OP_CONSTANT && len->opcode != OP_SPEC_CONSTANT)
            return fail(c, "array type %u: length is not an integer constant", nd->id);
        if (wc_of(c->w[len->at]) > 4 && c->w[len->at + 4] != 0)
            return fail(c, "push constant block larger than 4 GiB");
        uint64_t length = c->w[len->at + 3];
        if (nd->flags & NF_ARRAY_STRIDE)
            return checked(c, length * nd->array_stride, size);
        if ((st = size_of(c, in[2], lay, depth + 1, &inner)) != SALVO_OK)
            return st;
        return checked(c, length * inner, size);
    }
    case OP_TYPE_RUNTIME_ARRAY:
        *size = 0; /* occupies no push-constant bytes of its own */
        return SALVO_OK;
    case OP_TYPE_STRUCT:
        return struct_size(c, nd, depth, size);
    case OP_TYPE_POINTER:
        if (in[2] == SC_PHYSICAL_STORAGE_BUFFER) {
            *size = 8;
            return SALVO_OK;
        }
        return fail(c, "push constant: pointer type %u is not a physical storage buffer pointer",
                    nd->id);
    default:
        return fail(c, "push constant: type %u (opcode %u) is not supported", nd->id, nd->opcode);
    }
}

static salvo_status reflect_push(ctx *c, const node *var, reflect_module *out)
{
    node *ptr = NULL;
    salvo_status st = defined(c, c->w[var->at + 1], &ptr);
    if (st != SALVO_OK)
        return st;
    if (ptr->opcode != OP_TYPE_POINTER)
        return fail(c, "push constant variable %u: type is not a pointer", var->id);
    uint64_t size;
    layout lay = {0, false};
    if ((st = size_of(c, c->w[ptr->at + 3], lay, 0, &size)) != SALVO_OK)
        return st;
    /* One push block per entry point; with several in the module (only
     * one used), the largest covers whichever it is. */
    if (size > out->push_constant_size)
        out->push_constant_size = (uint32_t)size;
    return SALVO_OK;
}

/* SPIR-V extensions whose needs are known: see REFLECT_EXT_*. */
static const struct {
    const char *name;
    uint32_t bit;
} known_extensions[] = {
    {"SPV_KHR_storage_buffer_storage_class", REFLECT_EXT_PLAIN},
    {"SPV_KHR_16bit_storage", REFLECT_EXT_PLAIN},
    {"SPV_KHR_8bit_storage", REFLECT_EXT_PLAIN},
    {"SPV_KHR_variable_pointers", REFLECT_EXT_PLAIN},
    {"SPV_KHR_vulkan_memory_model", REFLECT_EXT_PLAIN},
    {"SPV_KHR_physical_storage_buffer", REFLECT_EXT_PLAIN},
    {"SPV_EXT_physical_storage_buffer", REFLECT_EXT_PLAIN},
    {"SPV_KHR_shader_ballot", REFLECT_EXT_PLAIN},
    {"SPV_KHR_subgroup_vote", REFLECT_EXT_PLAIN},
    {"SPV_KHR_device_group", REFLECT_EXT_PLAIN},
    {"SPV_KHR_integer_dot_product", REFLECT_EXT_PLAIN},
    {"SPV_EXT_shader_atomic_float_add", REFLECT_EXT_PLAIN},
    {"SPV_KHR_float_controls", REFLECT_EXT_VULKAN_1_2},
    {"SPV_KHR_no_integer_wrap_decoration", REFLECT_EXT_VULKAN_1_2},
    {"SPV_KHR_non_semantic_info", REFLECT_EXT_VULKAN_1_3},
};

/* Capabilities and extensions: what the module asks of the device. */
static salvo_status pass_declarations(ctx *c, reflect_module *out)
{
    out->spirv_version = c->w[1];
    for (uint32_t at = HEADER_WORDS; at < c->n; at += wc_of(c->w[at])) {
        uint32_t op = op_of(c->w[at]);
        if (op == OP_CAPABILITY) {
            uint32_t cap = c->w[at + 1];
            bool seen = false;
            for (uint32_t i = 0; i < out->capability_count && !seen; i++)
                seen = out->capabilities[i] == cap;
            if (cap == CAP_PHYSICAL_STORAGE_BUFFER_ADDRESSES)
                out->buffer_addresses = true;
            if (seen)
                continue;
            if (out->capability_count == REFLECT_MAX_CAPABILITIES)
                return fail(c, "module too complex (more than %d capabilities)",
                            REFLECT_MAX_CAPABILITIES);
            out->capabilities[out->capability_count++] = cap;
        } else if (op == OP_EXTENSION) {
            bool known = false;
            for (size_t i = 0; i < sizeof known_extensions / sizeof known_extensions[0]; i++)
                if (string_equals(c, at, 1, known_extensions[i].name)) {
                    out->extensions |= known_extensions[i].bit;
                    known = true;
                }
            if (known || out->unknown_extension[0])
                continue;
            /* Copy the name for the message, cut short if it runs long or
             * is not terminated. */
            size_t k = 0;
            uint32_t wc = wc_of(c->w[at]);
            for (uint32_t i = 1; i < wc && k < REFLECT_NAME_MAX - 1; i++)
                for (unsigned b = 0; b < 4 && k < REFLECT_NAME_MAX - 1; b++) {
                    char ch = (char)((c->w[at + i] >> (8 * b)) & 0xffu);
                    if (ch == '\0') {
                        i = wc;
                        break;
                    }
                    out->unknown_extension[k++] = ch >= 0x20 && ch < 0x7f ? ch : '?';
                }
            out->unknown_extension[k] = '\0';
            if (k == 0)
                out->unknown_extension[0] = '?';
        }
    }
    return SALVO_OK;
}

static uint64_t round_up(uint64_t v, uint64_t align) { return (v + align - 1) / align * align; }

/* Sizes past 4 GiB are over any device's limit: keep them there. */
static uint32_t saturate(uint64_t v) { return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; }

/* Type id's size and alignment as workgroup memory: the layout of a
 * std430 block member (vec3 aligned as vec4, array strides rounded up to
 * the element's alignment, structs to their largest member's). What is
 * not a sized plain type makes the total REFLECT_SIZE_UNKNOWN. */
static void wg_layout(ctx *c, uint32_t id, unsigned depth, uint32_t *size, uint32_t *align,
                      uint8_t *sizing)
{
    *size = 0;
    *align = 1;
    node *nd = node_find(c, id);
    if (depth > MAX_DEPTH || nd == NULL || nd->at == 0) {
        *sizing = REFLECT_SIZE_UNKNOWN;
        return;
    }
    if (nd->wg_sized) {
        *size = nd->wg_size;
        *align = nd->wg_align;
        if (nd->wg_sizing > *sizing)
            *sizing = nd->wg_sizing;
        return;
    }
    const uint32_t *in = &c->w[nd->at];
    uint8_t mine = REFLECT_SIZE_EXACT;
    uint32_t esize, ealign;
    uint64_t total = 0, al = 1;
    switch (nd->opcode) {
    case OP_TYPE_BOOL:
        total = al = 4;
        break;
    case OP_TYPE_INT:
    case OP_TYPE_FLOAT:
        total = al = in[2] / 8 ? in[2] / 8 : 1;
        break;
    case OP_TYPE_VECTOR:
        wg_layout(c, in[2], depth + 1, &esize, &ealign, &mine);
        total = (uint64_t)esize * in[3];
        al = (uint64_t)ealign * (in[3] == 2 ? 2 : 4);
        break;
    case OP_TYPE_MATRIX: /* columns, as an array of column vectors */
    case OP_TYPE_ARRAY: {
        uint64_t length = in[3];
        if (nd->opcode == OP_TYPE_ARRAY) {
            node *len = node_find(c, in[3]);
            if (len && len->at && len->opcode == OP_CONSTANT) {
                length = c->w[len->at + 3];
                if (wc_of(c->w[len->at]) > 4 && c->w[len->at + 4] != 0)
                    length = UINT32_MAX;
            } else if (len && len->at && len->opcode == OP_SPEC_CONSTANT) {
                length = c->w[len->at + 3];
                mine = REFLECT_SIZE_DEFAULTS;
            } else {
                mine = REFLECT_SIZE_UNKNOWN;
            }
        }
        wg_layout(c, in[2], depth + 1, &esize, &ealign, &mine);
        uint64_t stride = round_up(esize, ealign);
        total = stride && length > UINT32_MAX / stride ? UINT32_MAX : length * stride;
        al = ealign;
        break;
    }
    case OP_TYPE_STRUCT:
        for (uint32_t i = 2; i < wc_of(in[0]); i++) {
            wg_layout(c, in[i], depth + 1, &esize, &ealign, &mine);
            total = round_up(total, ealign) + esize;
            if (total > UINT32_MAX)
                total = UINT32_MAX;
            if (ealign > al)
                al = ealign;
        }
        total = round_up(total, al);
        break;
    case OP_TYPE_POINTER:
        if (in[2] == SC_PHYSICAL_STORAGE_BUFFER) {
            total = al = 8;
            break;
        }
        mine = REFLECT_SIZE_UNKNOWN;
        break;
    default:
        mine = REFLECT_SIZE_UNKNOWN;
        break;
    }
    /* Remembered, as a struct's push size is: a hostile module can nest
     * wide structs, and the walk must stay linear in it. */
    nd->wg_size = saturate(total);
    /* At most 32 (a dvec4) in a valid module; kept nonzero and small
     * whatever a hostile one declares. */
    nd->wg_align = al == 0 ? 1 : al > 256 ? 256 : (uint32_t)al;
    nd->wg_sizing = mine;
    nd->wg_sized = true;
    *size = nd->wg_size;
    *align = nd->wg_align;
    if (mine > *sizing)
        *sizing = mine;
}

/* The Workgroup variables, one after another. */
static void reflect_workgroup(ctx *c, reflect_module *out)
{
    uint64_t total = 0;
    uint8_t sizing = REFLECT_SIZE_EXACT;
    for (uint32_t i = 0; i < c->node_count; i++) {
        const node *v = &c->nodes[i];
        if (!(v->flags & NF_WORKGROUP) || !(v->flags & NF_USED))
            continue;
        node *ptr = node_find(c, c->w[v->at + 1]);
        uint32_t size = 0, align = 1;
        if (ptr && ptr->at && ptr->opcode == OP_TYPE_POINTER)
            wg_layout(c, c->w[ptr->at + 3], 0, &size, &align, &sizing);
        else
            sizing = REFLECT_SIZE_UNKNOWN;
        total = round_up(total, align) + size;
    }
    out->workgroup_memory = saturate(total);
    out->workgroup_sizing = (reflect_sizing)sizing;
}

salvo_status reflect_spirv(const uint32_t *words, size_t size_bytes, const char *entry,
                           reflect_module *out, char *reason, size_t reason_size)
{
    /* ~20 KiB: the tables bound the work, and keep the walk allocation-free. */
    ctx c;
    memset(&c, 0, sizeof c);
    c.reason = reason;
    c.reason_size = reason_size;
    if (reason && reason_size > 0)
        reason[0] = '\0';
    if (out == NULL)
        return fail(&c, "no output");
    memset(out, 0, sizeof *out);
    if (entry == NULL)
        entry = "main";

    salvo_status st = check_header(&c, words, size_bytes);
    if (st == SALVO_OK)
        st = pass_validate(&c, entry);
    if (st == SALVO_OK) {
        pass_functions(&c);
        st = pass_seed(&c);
    }
    if (st == SALVO_OK)
        pass_use(&c);
    if (st == SALVO_OK)
        st = pass_close(&c);
    if (st == SALVO_OK)
        st = pass_decorate(&c);
    if (st == SALVO_OK)
        st = reflect_local_size(&c, entry, out);
    if (st == SALVO_OK)
        st = pass_declarations(&c, out);
    if (st == SALVO_OK) {
        out->local_size_id = c.local_size_id_at != 0;
        out->float_controls = c.float_controls;
        reflect_workgroup(&c, out);
    }
    for (uint32_t i = 0; st == SALVO_OK && i < c.node_count; i++) {
        const node *nd = &c.nodes[i];
        if (!(nd->flags & NF_RESOURCE) || !(nd->flags & NF_USED))
            continue;
        if (c.w[nd->at + 3] == SC_PUSH_CONSTANT)
            st = reflect_push(&c, nd, out);
        else
            st = reflect_buffer(&c, nd, out);
    }
    if (st != SALVO_OK) {
        memset(out, 0, sizeof *out);
        return st;
    }
    return SALVO_OK;
}
