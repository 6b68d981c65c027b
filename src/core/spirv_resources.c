/*
 * The bindings of a used resource variable: buffers (storage or uniform)
 * with the access their decorations allow, images, samplers and combined
 * image samplers, alone or in arrays of constant length; aliases merged.
 * What salvo cannot bind is refused with a reason naming it, depth
 * comparisons among it.
 */
#include "core/spirv_internal.h"
#include "core/spirv_names.h"

#include <string.h>

/* Whether every member of the struct at nd carries member flag mf. */
static bool all_members(ctx *c, const node *nd, uint32_t mf)
{
    uint32_t count = wc_of(c->w[nd->at]) - 2;
    if (count == 0)
        return false;
    for (uint32_t i = 0; i < count; i++) {
        const member *m = spirv_walk_member_find(c, nd->id, i);
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
            return spirv_walk_unsupported(
                c, "binding %u: declared as two different kinds of resource", b->binding);
        if (first->image_format != b->image_format || first->sampled_class != b->sampled_class)
            return spirv_walk_unsupported(
                c, "binding %u: declared as images of two different formats", b->binding);
        if (first->uniform != b->uniform)
            return spirv_walk_unsupported(
                c, "binding %u: declared both as a uniform and as a storage buffer", b->binding);
        if (first->count != b->count)
            return spirv_walk_unsupported(c,
                                          "binding %u: declared as arrays of %u and of %u buffers",
                                          b->binding, first->count, b->count);
        for (uint32_t e = 0; e < b->count; e++)
            first[e].access = (salvo_access)(first[e].access | b->access);
        return SALVO_OK;
    }
    if (b->count > SALVO_MAX_BINDINGS - out->binding_count)
        return spirv_walk_unsupported(c, "more than %d buffers bound (each array element counts)",
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

/* The GLSL type a depth image is declared as, for the refusal. */
static const char *shadow_glsl_name(uint32_t dim, uint32_t arrayed, bool combined)
{
    if (!combined)
        return "a texture used with samplerShadow";
    if (dim == 0)
        return arrayed ? "sampler1DArrayShadow" : "sampler1DShadow";
    if (dim == 3)
        return arrayed ? "samplerCubeArrayShadow" : "samplerCubeShadow";
    if (dim == 4)
        return "sampler2DRectShadow";
    return arrayed ? "sampler2DArrayShadow" : "sampler2DShadow";
}

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
        salvo_status st = spirv_walk_defined(c, c->w[elem->at + 2], &inner);
        if (st != SALVO_OK)
            return st;
        if (inner->opcode != OP_TYPE_IMAGE)
            return spirv_walk_fail(c, "binding %u: sampled image of a type that is not an image",
                                   binding);
        im = inner;
    }
    const uint32_t *in = &c->w[im->at];
    if (wc_of(in[0]) < 9)
        return spirv_walk_fail(c, "binding %u: OpTypeImage too short", binding);
    uint32_t dim = in[3], arrayed = in[5], ms = in[6], sampled = in[7];
    const char *dname = dim < 7 ? dim_names[dim] : "unknown";
    /* Depth 1 is a depth image, read through a comparison sampler
     * (sampler2DShadow; texture2D with samplerShadow): its view would need
     * a depth format whose features include depth comparison, and salvo
     * has neither depth formats nor compare samplers. Refused here, by
     * name, rather than left to fail validation at the dispatch. */
    if (in[4] == 1)
        return spirv_walk_unsupported(
            c,
            "binding %u: depth-comparison sampler (%s) is not supported: salvo has no depth "
            "formats or compare samplers",
            binding, shadow_glsl_name(dim, arrayed, elem->opcode == OP_TYPE_SAMPLED_IMAGE));
    if (dim == DIM_BUFFER)
        return spirv_walk_unsupported(c, "binding %u: %s texel buffers are not supported", binding,
                                      sampled == 2 ? "storage" : "uniform");
    if (ms)
        return spirv_walk_unsupported(c, "binding %u: multisampled images are not supported",
                                      binding);
    if (dim > 2 || (arrayed && dim != 1))
        return spirv_walk_unsupported(
            c,
            "binding %u: %s%s images are not supported (salvo images are 1D, 2D, "
            "3D and 2D arrays)",
            binding, dname, arrayed ? " array" : "");
    b->image_type = arrayed ? SALVO_IMAGE_2D_ARRAY
                  : dim == 0 ? SALVO_IMAGE_1D
                  : dim == 1 ? SALVO_IMAGE_2D
                             : SALVO_IMAGE_3D;
    node *st_type = NULL;
    salvo_status st = spirv_walk_defined(c, in[2], &st_type);
    if (st != SALVO_OK)
        return st;
    if (st_type->opcode == OP_TYPE_FLOAT)
        b->sampled_class = REFLECT_TEXEL_FLOAT;
    else if (st_type->opcode == OP_TYPE_INT && wc_of(c->w[st_type->at]) >= 4)
        b->sampled_class = c->w[st_type->at + 3] ? REFLECT_TEXEL_SINT : REFLECT_TEXEL_UINT;
    else
        return spirv_walk_fail(c, "binding %u: image of a sampled type that is not a number",
                               binding);
    uint32_t format = image_format_of(in[8]);
    if (format == UINT32_MAX) {
        const char *fname = spirv_image_format_name(in[8]);
        return spirv_walk_unsupported(
            c, "binding %u: image format %s (SPIR-V ImageFormat %u) has no salvo format", binding,
            fname ? fname : "unknown", in[8]);
    }
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
        return spirv_walk_unsupported(
            c,
            "binding %u: an image that is neither sampled nor storage until run "
            "time is not supported",
            binding);
    }
    return SALVO_OK;
}

salvo_status spirv_resources_add(ctx *c, const node *var, reflect_module *out)
{
    uint32_t sc = c->w[var->at + 3];
    bool has_binding = (var->flags & NF_BINDING) != 0;
    uint32_t binding = var->binding;
    node *ptr = NULL, *pointee = NULL, *elem = NULL;
    salvo_status st = spirv_walk_defined(c, c->w[var->at + 1], &ptr);
    if (st != SALVO_OK)
        return st;
    if (ptr->opcode != OP_TYPE_POINTER)
        return spirv_walk_fail(c, "variable %u: type is not a pointer", var->id);
    if ((st = spirv_walk_defined(c, c->w[ptr->at + 3], &pointee)) != SALVO_OK)
        return st;
    uint32_t count = 1;
    elem = pointee;
    if (pointee->opcode == OP_TYPE_ARRAY || pointee->opcode == OP_TYPE_RUNTIME_ARRAY) {
        if ((st = spirv_walk_defined(c, c->w[pointee->at + 2], &elem)) != SALVO_OK)
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
        return spirv_walk_unsupported(
            c, "binding %u: %s are not supported (salvo binds buffers and images)", binding, kind);
    if (kind)
        return spirv_walk_unsupported(
            c, "variable %u: %s are not supported (salvo binds buffers and images)", var->id, kind);
    if (sc == SC_UNIFORM_CONSTANT && !img.kind)
        return spirv_walk_unsupported(
            c, "variable %u: resources of type opcode %u are not supported", var->id, elem->opcode);
    if (!has_binding)
        return spirv_walk_fail(c, "resource variable %u has no Binding decoration", var->id);
    if (!(var->flags & NF_SET))
        return spirv_walk_fail(c, "binding %u: no DescriptorSet decoration", binding);
    if (pointee->opcode == OP_TYPE_RUNTIME_ARRAY)
        return spirv_walk_unsupported(
            c,
            "binding %u: runtime arrays of %s (descriptor indexing) are not "
            "supported; give the array a length",
            binding, img.kind ? "images or samplers" : "buffers");
    if (pointee->opcode == OP_TYPE_ARRAY) {
        node *len = NULL;
        if ((st = spirv_walk_defined(c, c->w[pointee->at + 3], &len)) != SALVO_OK)
            return st;
        if (len->opcode == OP_SPEC_CONSTANT || len->opcode == OP_SPEC_CONSTANT_OP)
            return spirv_walk_unsupported(
                c,
                "binding %u: an array of buffers sized by a specialization "
                "constant is not supported",
                binding);
        if (len->opcode != OP_CONSTANT || wc_of(c->w[len->at]) < 4)
            return spirv_walk_fail(c, "binding %u: array length is not an integer constant",
                                   binding);
        bool wide = wc_of(c->w[len->at]) > 4 && c->w[len->at + 4] != 0;
        count = wide ? UINT32_MAX : c->w[len->at + 3];
        if (count == 0)
            return spirv_walk_fail(c, "binding %u: array of 0 buffers", binding);
    }
    if (img.kind) {
        img.set = var->set;
        img.binding = binding;
        img.count = count;
        return add_binding(c, out, &img);
    }
    if (elem->opcode != OP_TYPE_STRUCT)
        return spirv_walk_fail(c, "binding %u: not a buffer block (unsupported resource type)",
                               binding);

    reflect_binding b = {.set = var->set, .binding = binding, .count = count};
    if (sc == SC_UNIFORM && (elem->flags & NF_BUFFER_BLOCK)) {
        b.uniform = false; /* pre-SPIR-V 1.3 storage buffer */
    } else if (sc == SC_UNIFORM && (elem->flags & NF_BLOCK)) {
        b.uniform = true;
    } else if (sc == SC_UNIFORM) {
        return spirv_walk_fail(c, "binding %u: Uniform struct is neither Block nor BufferBlock",
                               binding);
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

/* The image instructions that compare with a reference value (Dref):
 * they need a depth image and a compare sampler. */
static const char *depth_compare_name(uint32_t op)
{
    switch (op) {
    case 89: return "OpImageSampleDrefImplicitLod";
    case 90: return "OpImageSampleDrefExplicitLod";
    case 93: return "OpImageSampleProjDrefImplicitLod";
    case 94: return "OpImageSampleProjDrefExplicitLod";
    case 97: return "OpImageDrefGather";
    case 307: return "OpImageSparseSampleDrefImplicitLod";
    case 308: return "OpImageSparseSampleDrefExplicitLod";
    case 311: return "OpImageSparseSampleProjDrefImplicitLod";
    case 312: return "OpImageSparseSampleProjDrefExplicitLod";
    case 315: return "OpImageSparseDrefGather";
    default: return NULL;
    }
}

static salvo_status depth_compare_in(ctx *c, uint32_t from, uint32_t to)
{
    for (uint32_t at = from; at < to; at += wc_of(c->w[at])) {
        const char *name = depth_compare_name(op_of(c->w[at]));
        if (name)
            return spirv_walk_unsupported(
                c,
                "compares with a depth reference (%s: a depth-comparison sampler, "
                "sampler2DShadow and the like), which is not supported: salvo has no depth "
                "formats or compare samplers",
                name);
    }
    return SALVO_OK;
}

salvo_status spirv_resources_depth_compare(ctx *c)
{
    if (c->all_used)
        return depth_compare_in(c, HEADER_WORDS, c->n);
    for (uint32_t f = 0; f < c->function_count; f++) {
        if (!c->functions[f].reached)
            continue;
        salvo_status st = depth_compare_in(c, c->functions[f].at, c->functions[f].end);
        if (st != SALVO_OK)
            return st;
    }
    return SALVO_OK;
}

/* ---- definitions looked up by id -------------------------------------- */

enum {
    OP_LOAD = 61,
    OP_ACCESS_CHAIN = 65,
    OP_IN_BOUNDS_ACCESS_CHAIN = 66,
    OP_COPY_OBJECT = 83,
};

/* The word index of the instruction defining id, or 0: where type, an
 * OpTypePointer or OpTypeFloat (result in word 1, before the functions);
 * else a load, an access chain, a copy or a variable (result in word 2). */
static uint32_t defined_at(const ctx *c, uint32_t id, bool type)
{
    for (uint32_t at = HEADER_WORDS; at < c->n; at += wc_of(c->w[at])) {
        uint32_t op = op_of(c->w[at]), wc = wc_of(c->w[at]);
        if (wc < 1 || at + wc > c->n || (type && op == OP_FUNCTION))
            return 0;
        if (type ? wc >= 2 && c->w[at + 1] == id && (op == OP_TYPE_POINTER || op == OP_TYPE_FLOAT)
                 : wc >= 4 && c->w[at + 2] == id &&
                       (op == OP_LOAD || op == OP_ACCESS_CHAIN ||
                        op == OP_IN_BOUNDS_ACCESS_CHAIN || op == OP_COPY_OBJECT ||
                        op == OP_VARIABLE))
            return at;
    }
    return 0;
}

/* ---- float atomics on image texels ------------------------------------ */

enum {
    OP_IMAGE_TEXEL_POINTER = 60,
    OP_ATOMIC_LOAD = 227,
    OP_ATOMIC_STORE = 228,
    OP_ATOMIC_EXCHANGE = 229,
    OP_ATOMIC_FADD = 6035,
    /* Texel pointers followed; past that many, the module's float texel
     * pointers all count as used by the atomics that name any. */
    TEXEL_POINTERS_MAX = 64,
};

/* Whether pointer type id points at a 32-bit float. */
static bool float32_pointer(const ctx *c, uint32_t id)
{
    uint32_t p = defined_at(c, id, true);
    if (!p || op_of(c->w[p]) != OP_TYPE_POINTER || wc_of(c->w[p]) < 4)
        return false;
    uint32_t t = defined_at(c, c->w[p + 3], true);
    return t && op_of(c->w[t]) == OP_TYPE_FLOAT && wc_of(c->w[t]) >= 3 && c->w[t + 2] == 32;
}

enum {
    /* Pointer types looked up (each a pass over the types); a module with
     * more texel pointer types than this counts the rest as float. */
    TEXEL_TYPES_MAX = 16,
};

typedef struct texel_pointers {
    uint32_t count;
    bool overflow;
    uint32_t id[TEXEL_POINTERS_MAX];
    uint32_t type_count;
    uint32_t type[TEXEL_TYPES_MAX];
    bool type_float[TEXEL_TYPES_MAX];
} texel_pointers;

/* float32_pointer(type), remembered, so that a module of many texel
 * pointers costs one pass over its types per pointer type. */
static bool texel_type_float(const ctx *c, texel_pointers *tp, uint32_t type)
{
    for (uint32_t i = 0; i < tp->type_count; i++)
        if (tp->type[i] == type)
            return tp->type_float[i];
    if (tp->type_count == TEXEL_TYPES_MAX)
        return true;
    bool is = float32_pointer(c, type);
    tp->type[tp->type_count] = type;
    tp->type_float[tp->type_count++] = is;
    return is;
}

static void texel_pointers_in(const ctx *c, uint32_t from, uint32_t to, texel_pointers *tp)
{
    for (uint32_t at = from; at < to && !tp->overflow; at += wc_of(c->w[at])) {
        if (op_of(c->w[at]) != OP_IMAGE_TEXEL_POINTER || wc_of(c->w[at]) < 6 ||
            !texel_type_float(c, tp, c->w[at + 1]))
            continue;
        if (tp->count == TEXEL_POINTERS_MAX)
            tp->overflow = true;
        else
            tp->id[tp->count++] = c->w[at + 2];
    }
}

static uint32_t float_atomics_in(const ctx *c, uint32_t from, uint32_t to,
                                 const texel_pointers *tp)
{
    uint32_t found = 0;
    for (uint32_t at = from; at < to; at += wc_of(c->w[at])) {
        uint32_t op = op_of(c->w[at]), wc = wc_of(c->w[at]), pointer;
        uint32_t kind = op == OP_ATOMIC_FADD ? REFLECT_IMAGE_FLOAT_ADD : REFLECT_IMAGE_FLOAT_ATOMIC;
        if (op == OP_ATOMIC_STORE && wc >= 5)
            pointer = c->w[at + 1];
        else if ((op == OP_ATOMIC_LOAD || op == OP_ATOMIC_EXCHANGE || op == OP_ATOMIC_FADD) &&
                 wc >= 6)
            pointer = c->w[at + 3];
        else
            continue;
        for (uint32_t i = 0; i < tp->count; i++)
            if (tp->id[i] == pointer)
                found |= kind;
    }
    return found;
}

void spirv_resources_image_atomics(ctx *c, reflect_module *out)
{
    texel_pointers tp = {0};
    uint32_t found = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (c->all_used) {
            if (pass == 0)
                texel_pointers_in(c, HEADER_WORDS, c->n, &tp);
            else
                found |= float_atomics_in(c, HEADER_WORDS, c->n, &tp);
        }
        for (uint32_t f = 0; !c->all_used && f < c->function_count; f++) {
            if (!c->functions[f].reached)
                continue;
            if (pass == 0)
                texel_pointers_in(c, c->functions[f].at, c->functions[f].end, &tp);
            else
                found |= float_atomics_in(c, c->functions[f].at, c->functions[f].end, &tp);
        }
    }
    /* Too many to follow: what the module could do, as if each did. */
    if (tp.overflow)
        found = REFLECT_IMAGE_FLOAT_ATOMIC | REFLECT_IMAGE_FLOAT_ADD;
    out->image_float_atomics = found;
}

/* ---- textures and samplers sampled together --------------------------- */

enum {
    OP_SAMPLED_IMAGE = 86,
    /* OpSampledImage instructions traced; the rest are left unchecked. */
    SAMPLED_IMAGES_MAX = 32,
    /* Steps from a loaded value back to its variable. */
    TRACE_STEPS_MAX = 8,
};

/* The set-0 binding of variable var, or UINT32_MAX. */
static uint32_t variable_binding(const ctx *c, uint32_t var)
{
    uint32_t binding = UINT32_MAX, set = 0;
    for (uint32_t at = HEADER_WORDS; at < c->n; at += wc_of(c->w[at])) {
        uint32_t op = op_of(c->w[at]), wc = wc_of(c->w[at]);
        if (wc < 1 || at + wc > c->n || op == OP_FUNCTION)
            break;
        if (op == OP_DECORATE && wc >= 4 && c->w[at + 1] == var) {
            if (c->w[at + 2] == DEC_BINDING)
                binding = c->w[at + 3];
            else if (c->w[at + 2] == DEC_DESCRIPTOR_SET)
                set = c->w[at + 3];
        }
    }
    return set == 0 ? binding : UINT32_MAX;
}

/* The value of integer constant id, or UINT32_MAX where it is none. */
static uint32_t constant_value(const ctx *c, uint32_t id)
{
    for (uint32_t at = HEADER_WORDS; at < c->n; at += wc_of(c->w[at])) {
        uint32_t op = op_of(c->w[at]), wc = wc_of(c->w[at]);
        if (wc < 1 || at + wc > c->n || op == OP_FUNCTION)
            break;
        if (op == OP_CONSTANT && wc >= 4 && c->w[at + 2] == id)
            return c->w[at + 3];
    }
    return UINT32_MAX;
}

/* The binding value id was loaded from (through access chains and
 * copies), or UINT32_MAX where that is not plain to see; *element: the
 * array element the chain nearest the variable picks (0 with none;
 * REFLECT_ANY_ELEMENT where the index is not a constant). */
static uint32_t loaded_binding(const ctx *c, uint32_t id, uint32_t *element)
{
    *element = 0;
    for (int step = 0; step < TRACE_STEPS_MAX; step++) {
        uint32_t at = defined_at(c, id, false);
        if (!at)
            return UINT32_MAX;
        uint32_t op = op_of(c->w[at]);
        if (op == OP_VARIABLE)
            return variable_binding(c, id);
        if ((op == OP_ACCESS_CHAIN || op == OP_IN_BOUNDS_ACCESS_CHAIN) && wc_of(c->w[at]) >= 5)
            *element = constant_value(c, c->w[at + 4]);
        id = c->w[at + 3]; /* the pointer loaded, the chain's base, the copied object */
    }
    return UINT32_MAX;
}

static void pair_add(reflect_module *out, struct reflect_pair p)
{
    if (p.texture == UINT32_MAX || p.sampler == UINT32_MAX) {
        out->pairs_partial = true;
        return;
    }
    for (uint32_t i = 0; i < out->pair_count; i++)
        if (!memcmp(&out->pairs[i], &p, sizeof p))
            return;
    if (out->pair_count == REFLECT_MAX_PAIRS)
        out->pairs_partial = true;
    else
        out->pairs[out->pair_count++] = p;
}

static void sampled_images_in(const ctx *c, uint32_t from, uint32_t to, uint32_t *seen,
                              reflect_module *out)
{
    for (uint32_t at = from; at < to; at += wc_of(c->w[at])) {
        if (op_of(c->w[at]) != OP_SAMPLED_IMAGE || wc_of(c->w[at]) < 5)
            continue;
        if (++*seen > SAMPLED_IMAGES_MAX) {
            out->pairs_partial = true;
            return;
        }
        struct reflect_pair p;
        p.texture = loaded_binding(c, c->w[at + 3], &p.texture_element);
        p.sampler = loaded_binding(c, c->w[at + 4], &p.sampler_element);
        pair_add(out, p);
    }
}

void spirv_resources_sampler_pairs(ctx *c, reflect_module *out)
{
    uint32_t seen = 0;
    out->pair_count = 0;
    out->pairs_partial = false;
    if (c->all_used) {
        sampled_images_in(c, HEADER_WORDS, c->n, &seen, out);
        return;
    }
    for (uint32_t f = 0; f < c->function_count; f++)
        if (c->functions[f].reached)
            sampled_images_in(c, c->functions[f].at, c->functions[f].end, &seen, out);
}
