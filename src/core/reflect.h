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

/* One buffer a launch binds: a binding, or one element of an array of
 * buffers (an array of n has n entries, elements 0..n-1, each with
 * count n). */
typedef struct reflect_binding {
    uint32_t set;
    uint32_t binding;
    uint32_t element;
    uint32_t count;
    /* READ if NonWritable, WRITE if NonReadable, else READ_WRITE; the
     * union over the variables that alias the binding. */
    salvo_access access;
    bool uniform; /* Uniform block (UBO) rather than a storage buffer */
    /* salvo_binding_kind; for images the type the kernel declares, the
     * format it names (SALVO_FORMAT_UNDEFINED: none) and the numbers its
     * texels read as (REFLECT_TEXEL_*). */
    uint8_t kind;
    uint8_t image_type;
    uint8_t image_format;
    uint8_t sampled_class;
} reflect_binding;

enum { REFLECT_TEXEL_FLOAT = 0, REFLECT_TEXEL_SINT = 1, REFLECT_TEXEL_UINT = 2 };

enum {
    REFLECT_ANY_ELEMENT = 0xFFFFFFFFu,
    REFLECT_MAX_PAIRS = 16,
    REFLECT_MAX_CAPABILITIES = 48,
    REFLECT_NAME_MAX = 64,
};

/* SPIR-V extensions the module declares that are known here; others are
 * named in unknown_extension. */
enum {
    /* Need nothing beyond the capabilities they bring (each checked on
     * its own). */
    REFLECT_EXT_PLAIN = 1u << 0,
    /* SPV_KHR_float_controls, SPV_KHR_no_integer_wrap_decoration: core
     * in Vulkan 1.2. */
    REFLECT_EXT_VULKAN_1_2 = 1u << 1,
    /* SPV_KHR_non_semantic_info: core in Vulkan 1.3. */
    REFLECT_EXT_VULKAN_1_3 = 1u << 2,
};

/* How far workgroup_memory can be trusted. */
typedef enum reflect_sizing {
    REFLECT_SIZE_EXACT = 0,    /* every array length is a constant */
    /* some are spec constants the caller gave no value: sized with their
     * defaults, as the pipeline will be */
    REFLECT_SIZE_DEFAULTS = 1,
    REFLECT_SIZE_UNKNOWN = 2,  /* some are spec constant expressions or unsized types */
} reflect_sizing;

typedef struct reflect_module {
    uint32_t binding_count; /* entries in bindings: array elements count */
    reflect_binding bindings[SALVO_MAX_BINDINGS]; /* sorted by (set, binding, element) */
    uint32_t push_constant_size; /* bytes, 0 when none */
    /* LocalSize execution mode of the entry point; when given by
     * specialization constants (LocalSizeId or a WorkgroupSize builtin made
     * of spec constants), their values (the caller's, else the defaults),
     * and local_size_spec_id[i] is the spec constant id (or UINT32_MAX
     * when literal).
     * local_size_is_spec[i] tells the two apart: UINT32_MAX is a valid
     * SpecId too. */
    uint32_t local_size[3];
    uint32_t local_size_spec_id[3];
    bool local_size_is_spec[3];
    /* The local size comes from the LocalSizeId execution mode (Vulkan:
     * needs maintenance4). */
    bool local_size_id;
    /* The header's version word: 0x00MMmm00 for SPIR-V MM.mm. */
    uint32_t spirv_version;
    /* OpCapability operands, each once, in module order. */
    uint32_t capability_count;
    uint32_t capabilities[REFLECT_MAX_CAPABILITIES];
    uint32_t extensions; /* REFLECT_EXT_* */
    /* Declares PhysicalStorageBufferAddresses: may reach any buffer whose
     * address the program passed it. */
    bool buffer_addresses;
    /* The entry point's float-controls execution modes (SALVO_FLOAT_CONTROL
     * bits). */
    uint32_t float_controls;
    char unknown_extension[REFLECT_NAME_MAX]; /* the first one; "" when none */
    /* Bytes of the module's Workgroup variables, laid out one after another
     * as members of a std430 block would be (Vulkan's bound on what a
     * driver may use); see workgroup_sizing. */
    uint32_t workgroup_memory;
    reflect_sizing workgroup_sizing;
    /* REFLECT_IMAGE_FLOAT_*: the 32-bit float atomics the entry point's
     * call tree makes on storage image texels (each needs a feature of its
     * own, whatever capabilities the module declares). */
    uint32_t image_float_atomics;
    /* The (texture, sampler) bindings of set 0 the call tree samples
     * together (OpSampledImage of a separate texture and sampler), each
     * once, for the launch to check as it checks a combined image
     * sampler. Only pairs whose values trace back to their variables
     * through loads, access chains and copies (not through a function's
     * parameters), and the first REFLECT_MAX_PAIRS of them: pairs_partial
     * says some were left out, unchecked. */
    uint32_t pair_count;
    struct reflect_pair {
        uint32_t texture, sampler;
        /* The elements of arrays it samples with (0 where not an array):
         * REFLECT_ANY_ELEMENT where the index is not a constant. */
        uint32_t texture_element, sampler_element;
    } pairs[REFLECT_MAX_PAIRS];
    bool pairs_partial;
} reflect_module;

enum {
    REFLECT_IMAGE_FLOAT_ATOMIC = 1u << 0, /* OpAtomicLoad, OpAtomicStore, OpAtomicExchange */
    REFLECT_IMAGE_FLOAT_ADD = 1u << 1,    /* OpAtomicFAddEXT */
};

/*
 * Reflect the GLCompute entry point named entry. On failure writes a
 * reason (NUL-terminated, at most reason_size bytes) and returns
 * SALVO_ERROR_INVALID_ARGUMENT for a module that is not well formed ("not
 * SPIR-V (bad magic)", "no GLCompute entry point 'main'") or
 * SALVO_ERROR_UNSUPPORTED for a valid one that declares what salvo does
 * not bind ("binding 3: storage images are not supported ...", "more than
 * 32 buffers bound"). Only the variables that the entry point's call tree
 * names count: what another entry point uses is ignored.
 * Accepted resources: storage buffers (StorageBuffer storage class, or
 * Uniform storage class with a BufferBlock-decorated struct) and uniform
 * buffers (Uniform storage class with a Block struct); storage images,
 * sampled images, samplers and combined image samplers of 1D, 2D, 3D and
 * 2D-array images; each alone or in arrays of constant length, several
 * variables on one binding (aliases) when they agree on the kind and
 * length; a push-constant block. Anything else bound to a descriptor
 * (texel buffers, cube, multisampled or 1D-array images, depth images,
 * image formats with no salvo_format, acceleration structures, runtime
 * arrays) is refused with a reason, and so is a comparison with a depth
 * reference (OpImageSample*Dref*, OpImage*DrefGather) anywhere in the
 * entry point's call tree: salvo has no depth formats or compare samplers.
 * Capabilities, extensions and workgroup memory are only reported: whether
 * a device runs them is the caller's question.
 */
salvo_status reflect_spirv(const uint32_t *words, size_t size_bytes, const char *entry,
                           reflect_module *out, char *reason, size_t reason_size);

/*
 * reflect_spirv with the values a kernel gives its spec constants (spec,
 * spec_count entries, ids distinct): array lengths made of spec constants
 * (in the push block and the workgroup variables) and the local size are
 * read with them, defaults serving the others. spec_sizes (spec_count
 * entries) receives the bytes each value is passed to Vulkan in: a spec
 * constant's own width (1 or 2 for 8- and 16-bit types), 4 for 32-bit
 * and bool ones and for ids the module does not declare. Refused: a value
 * for a 64-bit constant (SALVO_ERROR_UNSUPPORTED: the value holds 32
 * bits) and a value that neither fits an 8- or 16-bit constant's width
 * nor is a negative number of that width sign-extended
 * (SALVO_ERROR_INVALID_ARGUMENT).
 */
salvo_status reflect_spirv_specialized(const uint32_t *words, size_t size_bytes,
                                       const char *entry, const salvo_spec_constant *spec,
                                       uint32_t spec_count, uint8_t *spec_sizes,
                                       reflect_module *out, char *reason, size_t reason_size);

#endif
