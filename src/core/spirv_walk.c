/*
 * The bottom of the SPIR-V reflection: the reasons a module is refused
 * with, the table of the ids that matter (hashed, as ids may run to
 * millions), and pass 1, which frames every instruction so that the
 * passes above index the words without checks of their own.
 */
#include "core/spirv_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void say(ctx *c, const char *fmt, va_list ap)
{
    if (c->reason && c->reason_size > 0) {
        int r = vsnprintf(c->reason, c->reason_size, fmt, ap);
        if (r < 0)
            c->reason[0] = '\0';
    }
}

/* The module is not what it claims (or not SPIR-V). */
__attribute__((format(printf, 2, 3))) salvo_status spirv_walk_fail(ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(c, fmt, ap);
    va_end(ap);
    return SALVO_ERROR_INVALID_ARGUMENT;
}

/* A valid module that declares what salvo does not bind. */
__attribute__((format(printf, 2, 3))) salvo_status spirv_walk_unsupported(ctx *c, const char *fmt,
                                                                          ...)
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

node *spirv_walk_node_find(ctx *c, uint32_t id)
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
salvo_status spirv_walk_want(ctx *c, uint32_t id, uint8_t follow, node **out)
{
    if (id == 0 || id >= c->bound)
        return spirv_walk_fail(c, "id %u is out of range (bound %u)", id, c->bound);
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
        return spirv_walk_fail(c, "module too complex (more than %d relevant ids)", MAX_NODES);
    node *nd = &c->nodes[c->node_count];
    memset(nd, 0, sizeof *nd);
    nd->id = id;
    nd->follow = follow;
    c->node_slot[h] = (uint16_t)(++c->node_count);
    if (out)
        *out = nd;
    return SALVO_OK;
}

member *spirv_walk_member_find(ctx *c, uint32_t struct_id, uint32_t index)
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

salvo_status spirv_walk_member_get(ctx *c, uint32_t struct_id, uint32_t index, member **out)
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
        return spirv_walk_fail(c, "module too complex (more than %d decorated struct members)",
                               MAX_MEMBERS);
    member *m = &c->members[c->member_count];
    memset(m, 0, sizeof *m);
    m->struct_id = struct_id;
    m->index = index;
    c->member_slot[h] = (uint16_t)(++c->member_count);
    *out = m;
    return SALVO_OK;
}

/* Fewest words an instruction needs for the operands the passes read
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

/* Whether the literal string starting at word `from` of the instruction at
 * `at` is NUL-terminated inside it and equals name. */
bool spirv_walk_string_equals(const ctx *c, uint32_t at, uint32_t from, const char *name)
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

salvo_status spirv_walk_check_header(ctx *c, const uint32_t *words, size_t size_bytes)
{
    if (words == NULL || size_bytes == 0)
        return spirv_walk_fail(c, "empty module");
    if (size_bytes % 4 != 0)
        return spirv_walk_fail(c, "module size %zu is not a multiple of 4", size_bytes);
    if (size_bytes / 4 < HEADER_WORDS)
        return spirv_walk_fail(c, "module too short for a SPIR-V header (%zu bytes)", size_bytes);
    if (words[0] == SPV_MAGIC_SWAPPED)
        return spirv_walk_fail(c, "big-endian SPIR-V not supported");
    if (words[0] != SPV_MAGIC)
        return spirv_walk_fail(c, "not SPIR-V (bad magic 0x%08x)", words[0]);
    if ((uint64_t)(size_bytes / 4) > UINT32_MAX)
        return spirv_walk_fail(c, "module too large");
    if (((words[1] >> 16) & 0xffu) != 1u)
        return spirv_walk_fail(c, "unsupported SPIR-V version 0x%08x", words[1]);
    if (words[3] == 0 || words[3] > SPV_MAX_BOUND)
        return spirv_walk_fail(c, "id bound %u out of range", words[3]);
    c->w = words;
    c->n = (uint32_t)(size_bytes / 4);
    c->bound = words[3];
    return SALVO_OK;
}

/* Pass 1: every instruction fits, and the entry point exists. */
salvo_status spirv_walk_validate(ctx *c, const char *entry)
{
    for (uint32_t at = HEADER_WORDS; at < c->n;) {
        uint32_t wc = wc_of(c->w[at]), op = op_of(c->w[at]);
        if (wc == 0)
            return spirv_walk_fail(c, "instruction at word %u has word count 0", at);
        if (wc > c->n - at)
            return spirv_walk_fail(
                c, "instruction at word %u (opcode %u) runs past the end of the module", at, op);
        if (wc < min_words(op))
            return spirv_walk_fail(c, "instruction at word %u (opcode %u) is too short", at, op);
        if (op == OP_ENTRY_POINT && c->entry_at == 0 && c->w[at + 1] == EXEC_MODEL_GLCOMPUTE &&
            spirv_walk_string_equals(c, at, 3, entry)) {
            c->entry_at = at;
            c->entry_fn = c->w[at + 2];
        }
        at += wc;
    }
    if (c->entry_at == 0)
        return spirv_walk_fail(c, "no GLCompute entry point '%s'", entry);
    return SALVO_OK;
}

/* The node for id with a known definition, or a reason. */
salvo_status spirv_walk_defined(ctx *c, uint32_t id, node **out)
{
    node *nd = spirv_walk_node_find(c, id);
    if (nd == NULL || nd->at == 0)
        return spirv_walk_fail(c, "id %u has no definition this reflection understands", id);
    *out = nd;
    return SALVO_OK;
}

bool spirv_walk_spec_given(const ctx *c, const node *nd, uint32_t *value)
{
    if (nd->opcode == OP_SPEC_CONSTANT && (nd->flags & NF_SPEC_ID))
        for (uint32_t i = 0; i < c->spec_count; i++)
            if (c->spec[i].id == nd->spec_id) {
                *value = c->spec[i].value;
                return true;
            }
    return false;
}
