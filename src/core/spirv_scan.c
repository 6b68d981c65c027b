/*
 * What the entry point uses, found in passes 1b-4 over the words: the
 * functions its call tree reaches, the variables and execution modes it
 * declares (seed), the definitions they lead to (close) and their
 * decorations. Fills the table of spirv_walk.c for the passes above.
 */
#include "core/spirv_internal.h"

enum {
    /* Closure rounds: each round resolves one more level of type nesting;
     * real modules need a handful. Bounds the work on hostile input. */
    MAX_ROUNDS = 32,
};

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
void spirv_scan_functions(ctx *c)
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
void spirv_scan_use(ctx *c)
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
                node *nd = spirv_walk_node_find(c, c->w[at + k]);
                if (nd && nd->opcode == OP_VARIABLE && (nd->flags & (NF_RESOURCE | NF_WORKGROUP)))
                    nd->flags |= NF_USED;
            }
        }
    }
}

/* Pass 2: what the entry declares, and where the walk has to look next. */
salvo_status spirv_scan_seed(ctx *c)
{
    salvo_status st = SALVO_OK;
    for (uint32_t at = HEADER_WORDS; at < c->n; at += wc_of(c->w[at])) {
        const uint32_t *in = &c->w[at];
        uint32_t wc = wc_of(in[0]), op = op_of(in[0]);
        if (op == OP_EXECUTION_MODE && in[1] == c->entry_fn &&
            in[2] >= MODE_FLOAT_CONTROLS_FIRST && in[2] <= MODE_FLOAT_CONTROLS_LAST) {
            uint32_t width = wc >= 4 ? in[3] : 0;
            if (width != 16 && width != 32 && width != 64)
                return spirv_walk_fail(c, "float-controls execution mode at word %u: width %u", at,
                                       width);
            c->float_controls |= SALVO_FLOAT_CONTROL(in[2] - MODE_FLOAT_CONTROLS_FIRST, width);
        } else if (op == OP_EXECUTION_MODE && in[1] == c->entry_fn && in[2] == MODE_LOCAL_SIZE) {
            if (wc < 6)
                return spirv_walk_fail(c, "LocalSize at word %u has too few operands", at);
            c->local_size_at = at;
        } else if ((op == OP_EXECUTION_MODE_ID || op == OP_EXECUTION_MODE) &&
                   in[1] == c->entry_fn && in[2] == MODE_LOCAL_SIZE_ID) {
            if (wc < 6)
                return spirv_walk_fail(c, "LocalSizeId at word %u has too few operands", at);
            c->local_size_id_at = at;
            for (uint32_t i = 3; i < 6; i++)
                if ((st = spirv_walk_want(c, in[i], FOLLOW_NONE, NULL)) != SALVO_OK)
                    return st;
        } else if (op == OP_DECORATE && in[2] == DEC_BUILTIN && wc >= 4 &&
                   in[3] == BUILTIN_WORKGROUP_SIZE && c->workgroup_size_id == 0) {
            if ((st = spirv_walk_want(c, in[1], FOLLOW_ONE, NULL)) != SALVO_OK)
                return st;
            c->workgroup_size_id = in[1];
        } else if (op == OP_VARIABLE) {
            uint32_t sc = in[3];
            if (sc == SC_WORKGROUP) {
                node *v = NULL;
                if ((st = spirv_walk_want(c, in[2], FOLLOW_NONE, &v)) != SALVO_OK)
                    return st;
                if (v->at != 0)
                    continue;
                v->at = at;
                v->opcode = OP_VARIABLE;
                v->flags |= NF_WORKGROUP;
                /* Its size depends on the whole tree below it. */
                if ((st = spirv_walk_want(c, in[1], FOLLOW_ALL, NULL)) != SALVO_OK)
                    return st;
                continue;
            }
            if (sc != SC_UNIFORM_CONSTANT && sc != SC_UNIFORM && sc != SC_STORAGE_BUFFER &&
                sc != SC_PUSH_CONSTANT)
                continue;
            node *v = NULL;
            if ((st = spirv_walk_want(c, in[2], FOLLOW_NONE, &v)) != SALVO_OK)
                return st;
            if (v->at != 0)
                continue; /* a second definition of the id: the first one counts */
            v->at = at;
            v->opcode = OP_VARIABLE;
            v->flags |= NF_RESOURCE;
            /* A buffer (or opaque) variable needs its pointee's kind and
             * decorations, and for an array the element type and length;
             * only a push block's size depends on the whole tree below it. */
            st = spirv_walk_want(c, in[1], sc == SC_PUSH_CONSTANT ? FOLLOW_ALL : FOLLOW_TWO, NULL);
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
        /* spirv_walk_want() may append to the table, but nodes never move: nd stays valid. */
        salvo_status st = spirv_walk_want(c, in[i], child, NULL);
        if (st != SALVO_OK)
            return st;
    }
    return SALVO_OK;
}

/* Pass 3: find the definitions of every wanted id, level by level. */
salvo_status spirv_scan_close(ctx *c)
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
            return spirv_walk_fail(c, "module too complex (types nested more than %d deep)",
                                   MAX_ROUNDS);
        for (uint32_t at = HEADER_WORDS; at < c->n && unresolved > 0; at += wc_of(c->w[at])) {
            uint32_t op = op_of(c->w[at]);
            uint32_t rw = result_word(op);
            if (rw == 0)
                continue;
            node *nd = spirv_walk_node_find(c, c->w[at + rw]);
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
    return spirv_walk_fail(c, "decoration at word %u is missing its operand", at);
}

/* Pass 4: the decorations of the ids in the table. */
salvo_status spirv_scan_decorate(ctx *c)
{
    salvo_status st;
    for (uint32_t at = HEADER_WORDS; at < c->n; at += wc_of(c->w[at])) {
        const uint32_t *in = &c->w[at];
        uint32_t wc = wc_of(in[0]), op = op_of(in[0]);
        if (op == OP_DECORATE) {
            node *nd = spirv_walk_node_find(c, in[1]);
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
            if (spirv_walk_node_find(c, in[1]) == NULL)
                continue;
            member *m = NULL;
            if ((st = spirv_walk_member_get(c, in[1], in[2], &m)) != SALVO_OK)
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
