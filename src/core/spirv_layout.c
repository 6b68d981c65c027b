/*
 * Sizes in bytes: a push-constant block's, by its members' offsets and
 * strides, and the workgroup memory of the used Workgroup variables, laid
 * out as std430 members.
 */
#include "core/spirv_internal.h"

enum {
    /* Type nesting followed when sizing a push-constant block. */
    MAX_DEPTH = 16,
};

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
        return spirv_walk_fail(c, "push constant block larger than 4 GiB");
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
        const member *m = spirv_walk_member_find(c, nd->id, i);
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
        return spirv_walk_fail(c, "push constant types nested more than %d deep", MAX_DEPTH);
    node *nd = NULL;
    salvo_status st = spirv_walk_defined(c, id, &nd);
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
        if ((st = spirv_walk_defined(c, in[2], &col)) != SALVO_OK)
            return st;
        if (col->opcode != OP_TYPE_VECTOR)
            return spirv_walk_fail(c, "matrix type %u: column type is not a vector", nd->id);
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
        if ((st = spirv_walk_defined(c, in[3], &len)) != SALVO_OK)
            return st;
        if (len->opcode != OP_CONSTANT && len->opcode != OP_SPEC_CONSTANT)
            return spirv_walk_fail(c, "array type %u: length is not an integer constant", nd->id);
        uint32_t given;
        uint64_t length = c->w[len->at + 3];
        if (spirv_walk_spec_given(c, len, &given))
            length = given;
        else if (wc_of(c->w[len->at]) > 4 && c->w[len->at + 4] != 0)
            return spirv_walk_fail(c, "push constant block larger than 4 GiB");
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
        return spirv_walk_fail(
            c, "push constant: pointer type %u is not a physical storage buffer pointer", nd->id);
    default:
        return spirv_walk_fail(c, "push constant: type %u (opcode %u) is not supported", nd->id,
                               nd->opcode);
    }
}

salvo_status spirv_layout_push(ctx *c, const node *var, reflect_module *out)
{
    node *ptr = NULL;
    salvo_status st = spirv_walk_defined(c, c->w[var->at + 1], &ptr);
    if (st != SALVO_OK)
        return st;
    if (ptr->opcode != OP_TYPE_POINTER)
        return spirv_walk_fail(c, "push constant variable %u: type is not a pointer", var->id);
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
    node *nd = spirv_walk_node_find(c, id);
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
            node *len = spirv_walk_node_find(c, in[3]);
            if (len && len->at && len->opcode == OP_CONSTANT) {
                length = c->w[len->at + 3];
                if (wc_of(c->w[len->at]) > 4 && c->w[len->at + 4] != 0)
                    length = UINT32_MAX;
            } else if (len && len->at && len->opcode == OP_SPEC_CONSTANT) {
                uint32_t given;
                length = c->w[len->at + 3];
                if (spirv_walk_spec_given(c, len, &given))
                    length = given;
                else
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
void spirv_layout_workgroup(ctx *c, reflect_module *out)
{
    uint64_t total = 0;
    uint8_t sizing = REFLECT_SIZE_EXACT;
    for (uint32_t i = 0; i < c->node_count; i++) {
        const node *v = &c->nodes[i];
        if (!(v->flags & NF_WORKGROUP) || !(v->flags & NF_USED))
            continue;
        node *ptr = spirv_walk_node_find(c, c->w[v->at + 1]);
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
