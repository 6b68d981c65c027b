/*
 * Fills of any alignment (cmd_fill_bytes): vkCmdFillBuffer for the whole
 * words, the accelerator's own kernel (shaders/fill_bytes.comp) for the
 * partial words at either end, whose pipeline is made at the first such
 * fill and kept until the device closes.
 */
#include "accel/vulkan/vk_internal.h"

#include "fill_bytes.spv.h"

/* Push constants of fill_bytes.comp. */
typedef struct edges {
    uint32_t word;
    uint32_t head_index, head_mask;
    uint32_t tail_index, tail_mask;
} edges;

/* The bits of bytes [from, to) of a word (0 <= from < to <= 4), bytes in
 * memory order: the device's words are little-endian, as the host's that
 * vkCmdFillBuffer's value comes from. */
static uint32_t byte_mask(uint64_t from, uint64_t to)
{
    uint32_t ones = to - from == 4 ? UINT32_MAX : (1u << (8 * (to - from))) - 1u;
    return ones << (8 * from);
}

/* The kernel's pipeline, made at the first use. The core records under
 * its own lock, but two devices' cores, or a program's, need not: the
 * first to publish it wins, a racer's copy is destroyed. */
static accel_result fill_pipeline(void *self, accel_device *d, accel_pipeline **out)
{
    accel_pipeline *p = atomic_load_explicit(&d->fill_pipe, memory_order_acquire);
    if (p) {
        *out = p;
        return ACCEL_SUCCESS;
    }
    static const accel_pipeline_binding bindings[2] = {
        {.binding = 0, .count = 1, .kind = SALVO_BINDING_BUFFER},
        {.binding = 1, .count = 1, .kind = SALVO_BINDING_BUFFER},
    };
    const accel_pipeline_desc desc = {
        .spirv = fill_bytes_spv,
        .spirv_size = sizeof fill_bytes_spv,
        .entry = "main",
        .bindings = bindings,
        .binding_count = 2,
        .push_constant_size = sizeof(edges),
    };
    accel_pipeline *made = NULL;
    accel_result r = accel_vk_pipeline_create(self, d, &desc, &made);
    if (r != ACCEL_SUCCESS)
        return r;
    if (!atomic_compare_exchange_strong_explicit(&d->fill_pipe, &p, made, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        accel_vk_pipeline_destroy(self, d, made);
        made = p;
    }
    *out = made;
    return ACCEL_SUCCESS;
}

void accel_vk_fill_release(accel_device *d)
{
    accel_vk_pipeline_destroy(NULL, d, atomic_exchange(&d->fill_pipe, NULL));
}

/* The bind of word (a byte address, a multiple of 4) as binding b, from
 * the aligned offset below it (Vulkan caps the alignment at 256: the
 * range is far below any maxStorageBufferRange), and its index there. */
static accel_bind edge_bind(const accel_device *d, accel_buffer *dst, uint32_t binding,
                            uint64_t word, uint32_t *index)
{
    uint64_t align = d->storage_align > 4 ? d->storage_align : 4;
    uint64_t base = word - word % align;
    *index = (uint32_t)((word - base) / 4);
    return (accel_bind){.binding = binding, .kind = SALVO_BINDING_BUFFER, .buffer = dst,
                        .offset = base, .size = word - base + 4};
}

accel_result accel_vk_cmd_fill_bytes(void *self, accel_device *d, accel_cmd *c,
                                     accel_descpool *pool, accel_buffer *dst, uint64_t offset,
                                     uint64_t size, uint32_t word)
{
    uint64_t end = offset + size;
    uint64_t first = (offset + 3) & ~(uint64_t)3; /* whole words: [first, last) */
    uint64_t last = end & ~(uint64_t)3;
    edges e = {.word = word};
    uint64_t head = offset & ~(uint64_t)3, tail = last;
    if (first > last) {
        /* Inside one word, touching neither of its ends. */
        e.head_mask = byte_mask(offset - head, end - head);
    } else {
        if (offset != first)
            e.head_mask = byte_mask(offset - head, 4);
        if (end != last)
            e.tail_mask = byte_mask(0, end - tail);
    }
    if (e.head_mask || e.tail_mask) {
        accel_pipeline *p;
        accel_result r = fill_pipeline(self, d, &p);
        if (r != ACCEL_SUCCESS)
            return r;
        /* An unused end binds the other's word, its mask 0. */
        uint64_t head_word = e.head_mask ? head : tail, tail_word = e.tail_mask ? tail : head;
        accel_bind binds[2] = {edge_bind(d, dst, 0, head_word, &e.head_index),
                               edge_bind(d, dst, 1, tail_word, &e.tail_index)};
        static const uint32_t one[3] = {1, 1, 1};
        /* First: a pool that is full leaves nothing recorded. */
        r = accel_vk_cmd_dispatch(self, d, c, p, pool, binds, 2, one, &e, sizeof e);
        if (r != ACCEL_SUCCESS)
            return r;
        /* The words between are not the shader's, but its bindings reach
         * into them: Vulkan orders by bound range. */
        if (first < last)
            accel_vk_cmd_barrier(self, d, c, ACCEL_BARRIER_COMPUTE_TRANSFER);
    }
    if (first < last)
        accel_vk_cmd_fill(self, d, c, dst, first, last - first, word);
    return ACCEL_SUCCESS;
}
