/*
 * SPIR-V reflection without a SPIR-V library and without allocation: the
 * entry point of reflect.h, running the passes of spirv_*.c in order
 * (spirv_internal.h describes them).
 */
#include "core/reflect.h"

#include <string.h>

#include "core/spirv_internal.h"

salvo_status reflect_spirv(const uint32_t *words, size_t size_bytes, const char *entry,
                           reflect_module *out, char *reason, size_t reason_size)
{
    return reflect_spirv_specialized(words, size_bytes, entry, NULL, 0, NULL, out, reason,
                                     reason_size);
}

salvo_status reflect_spirv_specialized(const uint32_t *words, size_t size_bytes,
                                       const char *entry, const salvo_spec_constant *spec,
                                       uint32_t spec_count, uint8_t *spec_sizes,
                                       reflect_module *out, char *reason, size_t reason_size)
{
    /* ~20 KiB: the tables bound the work, and keep the walk allocation-free. */
    ctx c;
    memset(&c, 0, sizeof c);
    c.reason = reason;
    c.reason_size = reason_size;
    c.spec = spec;
    c.spec_count = spec ? spec_count : 0;
    if (reason && reason_size > 0)
        reason[0] = '\0';
    if (out == NULL)
        return spirv_walk_fail(&c, "no output");
    memset(out, 0, sizeof *out);
    if (entry == NULL)
        entry = "main";

    salvo_status st = spirv_walk_check_header(&c, words, size_bytes);
    if (st == SALVO_OK)
        st = spirv_walk_validate(&c, entry);
    if (st == SALVO_OK) {
        spirv_scan_functions(&c);
        st = spirv_scan_seed(&c);
    }
    if (st == SALVO_OK)
        spirv_scan_use(&c);
    if (st == SALVO_OK)
        st = spirv_scan_close(&c);
    if (st == SALVO_OK)
        st = spirv_scan_decorate(&c);
    if (st == SALVO_OK && c.spec_count > 0)
        st = spirv_declarations_spec_sizes(&c, spec_sizes);
    if (st == SALVO_OK)
        st = spirv_declarations_local_size(&c, entry, out);
    if (st == SALVO_OK)
        st = spirv_declarations_read(&c, out);
    if (st == SALVO_OK) {
        out->local_size_id = c.local_size_id_at != 0;
        out->float_controls = c.float_controls;
        spirv_layout_workgroup(&c, out);
    }
    for (uint32_t i = 0; st == SALVO_OK && i < c.node_count; i++) {
        const node *nd = &c.nodes[i];
        if (!(nd->flags & NF_RESOURCE) || !(nd->flags & NF_USED))
            continue;
        if (c.w[nd->at + 3] == SC_PUSH_CONSTANT)
            st = spirv_layout_push(&c, nd, out);
        else
            st = spirv_resources_add(&c, nd, out);
    }
    if (st == SALVO_OK)
        st = spirv_resources_depth_compare(&c);
    if (st == SALVO_OK) {
        spirv_resources_image_atomics(&c, out);
        spirv_resources_sampler_pairs(&c, out);
    }
    if (st != SALVO_OK) {
        memset(out, 0, sizeof *out);
        return st;
    }
    return SALVO_OK;
}
