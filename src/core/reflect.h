/*
 * What a compute module declares, read from its SPIR-V words.
 *
 * Plain C, no Vulkan: a bounds-checked walk over the module that never
 * reads outside the words it was given, so any byte string is safe input.
 */
#ifndef SALVO_CORE_REFLECT_H
#define SALVO_CORE_REFLECT_H

#include <stddef.h>
#include <stdint.h>

#include "salvo/salvo.h"

typedef struct reflect_binding {
    uint32_t set;
    uint32_t binding;
    salvo_access access; /* READ if NonWritable, WRITE if NonReadable, else READ_WRITE */
    bool uniform;        /* Uniform block (UBO) rather than a storage buffer */
} reflect_binding;

typedef struct reflect_module {
    uint32_t binding_count;
    reflect_binding bindings[SALVO_MAX_BINDINGS]; /* sorted by (set, binding) */
    uint32_t push_constant_size; /* bytes, 0 when none */
    /* LocalSize execution mode of the entry point; when given by
     * specialization constants (LocalSizeId or a WorkgroupSize builtin made
     * of spec constants), the default values, and local_size_spec_id[i] is
     * the spec constant id (or UINT32_MAX when literal). */
    uint32_t local_size[3];
    uint32_t local_size_spec_id[3];
} reflect_module;

/*
 * Reflect the GLCompute entry point named entry. On failure returns
 * SALVO_ERROR_INVALID_ARGUMENT and writes a reason (NUL-terminated, at most
 * reason_size bytes) such as "not SPIR-V (bad magic)", "no GLCompute entry
 * point 'main'", "binding 3: images are not supported", "more than 32
 * bindings". Only resources statically used by the entry point's interface
 * need count; reflecting every module-scope buffer variable is fine.
 * Accepted resources: storage buffers (StorageBuffer storage class, or
 * Uniform storage class with a BufferBlock-decorated struct) and uniform
 * buffers (Uniform storage class with a Block struct), one per binding,
 * non-arrayed; a push-constant block. Anything else bound to a descriptor
 * (images, samplers, arrays of buffers) is refused with a reason.
 */
salvo_status reflect_spirv(const uint32_t *words, size_t size_bytes, const char *entry,
                           reflect_module *out, char *reason, size_t reason_size);

#endif
