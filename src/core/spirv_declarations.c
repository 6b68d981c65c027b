/*
 * What a module asks of a launch and of a device beyond its bindings: the
 * entry point's local size (literal or from specialization constants),
 * and the capabilities and extensions it declares, which are only
 * reported: whether a device runs them is the caller's question.
 */
#include "core/spirv_internal.h"

/* One local-size component: an integer constant, or a spec constant's
 * value (the caller's, else its default) and its SpecId. */
static salvo_status local_size_component(ctx *c, uint32_t id, uint32_t *value, uint32_t *spec_id,
                                         bool *is_spec)
{
    node *nd = NULL;
    salvo_status st = spirv_walk_defined(c, id, &nd);
    if (st != SALVO_OK)
        return st;
    if (nd->opcode != OP_CONSTANT && nd->opcode != OP_SPEC_CONSTANT)
        return spirv_walk_fail(c, "local size component (id %u) is not an integer constant", id);
    if (!spirv_walk_spec_given(c, nd, value))
        *value = c->w[nd->at + 3];
    *is_spec = nd->opcode == OP_SPEC_CONSTANT && (nd->flags & NF_SPEC_ID);
    *spec_id = *is_spec ? nd->spec_id : UINT32_MAX;
    return SALVO_OK;
}

salvo_status spirv_declarations_local_size(ctx *c, const char *entry, reflect_module *out)
{
    const uint32_t *ids = NULL;
    /* Vulkan: a WorkgroupSize builtin overrides the execution mode. */
    if (c->workgroup_size_id != 0) {
        node *nd = spirv_walk_node_find(c, c->workgroup_size_id);
        if (nd &&
            (nd->opcode == OP_CONSTANT_COMPOSITE || nd->opcode == OP_SPEC_CONSTANT_COMPOSITE)) {
            if (wc_of(c->w[nd->at]) != 6)
                return spirv_walk_fail(c, "WorkgroupSize (id %u) does not have 3 components",
                                       nd->id);
            ids = &c->w[nd->at + 3];
        }
    }
    if (ids == NULL && c->local_size_id_at != 0)
        ids = &c->w[c->local_size_id_at + 3];
    if (ids != NULL) {
        for (int i = 0; i < 3; i++) {
            salvo_status st =
                local_size_component(c, ids[i], &out->local_size[i], &out->local_size_spec_id[i],
                                     &out->local_size_is_spec[i]);
            if (st != SALVO_OK)
                return st;
        }
        return SALVO_OK;
    }
    if (c->local_size_at == 0)
        return spirv_walk_fail(c, "entry point '%s' declares no local size", entry);
    for (int i = 0; i < 3; i++) {
        out->local_size[i] = c->w[c->local_size_at + 3 + (uint32_t)i];
        out->local_size_spec_id[i] = UINT32_MAX;
        out->local_size_is_spec[i] = false;
    }
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
salvo_status spirv_declarations_read(ctx *c, reflect_module *out)
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
                return spirv_walk_fail(c, "module too complex (more than %d capabilities)",
                                       REFLECT_MAX_CAPABILITIES);
            out->capabilities[out->capability_count++] = cap;
        } else if (op == OP_EXTENSION) {
            bool known = false;
            for (size_t i = 0; i < sizeof known_extensions / sizeof known_extensions[0]; i++)
                if (spirv_walk_string_equals(c, at, 1, known_extensions[i].name)) {
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

/* The instruction that defines id among the spec constants and scalar
 * types (result id at word `result`), or 0. */
static uint32_t defined_at(const ctx *c, uint32_t id, bool types)
{
    for (uint32_t at = HEADER_WORDS; at < c->n; at += wc_of(c->w[at])) {
        uint32_t op = op_of(c->w[at]);
        if (types && (op == OP_TYPE_INT || op == OP_TYPE_FLOAT || op == OP_TYPE_BOOL) &&
            c->w[at + 1] == id)
            return at;
        if (!types &&
            (op == OP_SPEC_CONSTANT || op == OP_SPEC_CONSTANT_TRUE ||
             op == OP_SPEC_CONSTANT_FALSE) &&
            c->w[at + 2] == id)
            return at;
    }
    return 0;
}

/* The constant a SpecId decorates, or 0 when the module has none. */
static uint32_t decorated_with(const ctx *c, uint32_t spec_id)
{
    for (uint32_t at = HEADER_WORDS; at < c->n; at += wc_of(c->w[at]))
        if (op_of(c->w[at]) == OP_DECORATE && wc_of(c->w[at]) >= 4 &&
            c->w[at + 2] == DEC_SPEC_ID && c->w[at + 3] == spec_id)
            return c->w[at + 1];
    return 0;
}

/* Vulkan passes each spec constant at its type's width (a bool as a
 * 32-bit VkBool32). A scan of the words for each constant given: callers
 * give a handful, and the table holds only the ids resources need. */
salvo_status spirv_declarations_spec_sizes(ctx *c, uint8_t *sizes)
{
    for (uint32_t i = 0; i < c->spec_count; i++) {
        sizes[i] = 4;
        uint32_t id = decorated_with(c, c->spec[i].id);
        uint32_t at = id ? defined_at(c, id, false) : 0;
        if (at == 0 || op_of(c->w[at]) != OP_SPEC_CONSTANT)
            continue; /* none (Vulkan ignores the entry), or a bool */
        uint32_t type = defined_at(c, c->w[at + 1], true);
        if (type == 0 || op_of(c->w[type]) == OP_TYPE_BOOL)
            continue;
        uint32_t bits = c->w[type + 2], v = c->spec[i].value;
        if (bits == 64)
            return spirv_walk_unsupported(c,
                                          "spec constant %u is 64-bit; salvo_spec_constant "
                                          "holds 32 bits (leave it at its default)",
                                          c->spec[i].id);
        if (bits != 8 && bits != 16)
            continue;
        /* The value's low bits, or a negative value sign-extended. */
        uint32_t high = ~0u << (bits - 1);
        if (v >= (1u << bits) && (v & high) != high)
            return spirv_walk_fail(c, "spec constant %u is %u-bit; value 0x%x does not fit",
                                   c->spec[i].id, bits, v);
        sizes[i] = (uint8_t)(bits / 8);
    }
    return SALVO_OK;
}
