/*
 * What a module asks of a launch and of a device beyond its bindings: the
 * entry point's local size (literal or from specialization constants),
 * and the capabilities and extensions it declares, which are only
 * reported: whether a device runs them is the caller's question.
 */
#include "core/spirv_internal.h"

/* One local-size component: an integer constant, or a spec constant's
 * default value and its SpecId. */
static salvo_status local_size_component(ctx *c, uint32_t id, uint32_t *value, uint32_t *spec_id,
                                         bool *is_spec)
{
    node *nd = NULL;
    salvo_status st = spirv_walk_defined(c, id, &nd);
    if (st != SALVO_OK)
        return st;
    if (nd->opcode != OP_CONSTANT && nd->opcode != OP_SPEC_CONSTANT)
        return spirv_walk_fail(c, "local size component (id %u) is not an integer constant", id);
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
