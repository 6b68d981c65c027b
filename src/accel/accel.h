/*
 * The accelerator interface: every device operation the core uses.
 *
 * The core (src/core, src/api) drives devices only through this table. The
 * Vulkan implementation (vulkan/, a file per concern) is the only code that
 * names a Vulkan function; a fake one (tests/fake_accel.c) runs the state
 * machines without a device; the fault decorator (accel_fault.c) wraps
 * either and fails chosen calls.
 *
 * Results use VkResult's numbers (so a fault spec can name any of them)
 * without this header needing Vulkan's.
 *
 * Handles are opaque pointers owned by the implementation. Every call gets
 * the implementation's `self` and the device handle. Destroy calls accept
 * NULL and cannot fail. Calls on one accel_device may come from several
 * threads, but the core serialises: submit, wait_idle and everything on one
 * command buffer are externally synchronised (as Vulkan requires).
 */
#ifndef SALVO_ACCEL_H
#define SALVO_ACCEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "salvo/salvo.h"

typedef int32_t accel_result;
enum {
    ACCEL_SUCCESS = 0,
    ACCEL_NOT_READY = 1,
    ACCEL_TIMEOUT = 2,
    ACCEL_INCOMPLETE = 5,
    ACCEL_ERROR_OUT_OF_HOST_MEMORY = -1,
    ACCEL_ERROR_OUT_OF_DEVICE_MEMORY = -2,
    ACCEL_ERROR_INITIALIZATION_FAILED = -3,
    ACCEL_ERROR_DEVICE_LOST = -4,
    ACCEL_ERROR_LAYER_NOT_PRESENT = -6,
    ACCEL_ERROR_EXTENSION_NOT_PRESENT = -7,
    ACCEL_ERROR_FEATURE_NOT_PRESENT = -8,
    ACCEL_ERROR_INCOMPATIBLE_DRIVER = -9,
    ACCEL_ERROR_UNKNOWN = -13,
    ACCEL_ERROR_OUT_OF_POOL_MEMORY = -1000069000,
    ACCEL_ERROR_INVALID_EXTERNAL_HANDLE = -1000072003
};

/* Name of a result ("VK_ERROR_DEVICE_LOST"); parse_result is its inverse
 * (also accepts short forms "device_lost", "oom_device", "oom_host",
 * "timeout"). Both in accel_common.c. */
const char *accel_result_name(accel_result r);
bool accel_result_parse(const char *text, accel_result *out);

typedef struct accel_device accel_device;
typedef struct accel_buffer accel_buffer;
typedef struct accel_pipeline accel_pipeline;
typedef struct accel_cmd accel_cmd;         /* one command buffer (with its own pool) */
typedef struct accel_fence accel_fence;
typedef struct accel_descpool accel_descpool;
typedef struct accel_timeline accel_timeline; /* timeline semaphore */
typedef struct accel_querypool accel_querypool; /* GPU timestamps (traces) */
typedef struct accel_image accel_image;     /* an image with its view */
typedef struct accel_sampler accel_sampler;

/* Options the core passes when opening a device. */
typedef struct accel_open_options {
    uint32_t index;      /* index into the enumeration order */
    bool validation;     /* enable VK_LAYER_KHRONOS_validation */
    bool sync_validation;
    /* Bind buffers through per-slot descriptor pools even where the device
     * offers push descriptors (which are used by default there). */
    bool pool_descriptors;
    /* Validation and driver messages; counted by the caller. */
    salvo_log_fn log;
    void *log_user;
    /* A file the pipeline cache is loaded from at open (when it holds a
     * cache for this device) and written back to at close; NULL: none. */
    const char *pipeline_cache_path;
    /* Run on objects the application owns instead of creating them (the
     * Vulkan accelerator: a checked salvo_vk_device_import; index, and the
     * validation flags, are then unused). NULL: open device index. */
    const void *import;
    /* Open no transfer-only queue even where the device has one. */
    bool no_transfer_queue;
    /* Deliver what kernels print (GLSL debugPrintfEXT) to log, at INFO
     * from file "printf", as "kernel 'name': text" for kernels whose
     * format strings carry ACCEL_PRINTF_TAG (Vulkan: the validation
     * layer's debug printf; needs validation). Not on an imported device. */
    bool printf;
    /* Where a refused open may say why, for the caller's error message
     * (left as it is when there is nothing to add); NULL: nowhere. */
    char *why;
    size_t why_size;
} accel_open_options;

/* What a device can do; filled by device_open. */
typedef struct accel_caps {
    salvo_device_info info; /* identity, limits, capabilities (settings left 0) */
    bool device_memory_host_visible; /* DEVICE-domain memory can be mapped */
    /* cmd_dispatch pushes: the pool is unused, but for pipelines that bind
     * arrays of buffers (cmd_dispatch) */
    bool push_descriptors_used;
    /* GPU timestamps: the queue can write them (Vulkan: its family's
     * timestampValidBits > 0), each tick lasting timestamp_period_ns; a
     * tick count wraps past timestamp_valid_bits bits (1..64). */
    double timestamp_period_ns;
    bool timestamps;
    uint32_t timestamp_valid_bits;
    /* Hardware queues opened (1..ACCEL_MAX_QUEUES), all of one family that
     * can compute: submissions to different ones may run side by side. */
    uint32_t queue_count;
    /* The last queue (of three or more) runs at a higher priority. */
    bool high_priority_queue;
    /* One more queue, of a family that only copies (a copy engine), at
     * index queue_count: command buffers made for it record copies and
     * barriers only, and every buffer may be used on it as on the others
     * (Vulkan: concurrent sharing between the two families). */
    bool transfer_queue;
    /* Largest image extents: 1D width, 2D width and height, 3D extents,
     * 2D-array layers (0: not known, the implementation checks). */
    uint32_t max_image_1d, max_image_2d, max_image_3d, max_image_layers;
    /* Uniform blocks a kernel may bind (Vulkan: maxPerStageDescriptorUniformBuffers;
     * 0: not known, the implementation checks). */
    uint32_t max_uniform_bindings;
    /* Kernels' printf output is delivered (accel_open_options.printf was
     * honoured). Each submission then returns only once its work is done:
     * the layer reads the output there. */
    bool shader_printf;
} accel_caps;

enum { ACCEL_MAX_QUEUES = 8 };

typedef struct accel_buffer_desc {
    uint64_t size;
    salvo_domain domain;
    /* Non-NULL: import this host memory (size and pointer aligned). */
    void *import_host;
    /* Internal staging/transfer use as well as storage. */
    bool transfer;
} accel_buffer_desc;

/* Buffer as the core sees it. */
typedef struct accel_buffer_info {
    void *mapped;             /* persistent mapping, NULL if not host-visible */
    bool host_coherent;
    /* Where kernels reach it through buffer references; 0 when the
     * device has no buffer device addresses. */
    uint64_t device_address;
} accel_buffer_info;

/* One resource the pipeline binds: an array of n has n entries
 * (elements 0..n-1, each with count n); the layout has one binding per
 * array. kind: a salvo_binding_kind (BUFFER: uniform says which). */
typedef struct accel_pipeline_binding {
    uint32_t binding;
    uint32_t element;
    uint32_t count;
    bool uniform; /* uniform buffer, else storage buffer */
    uint8_t kind;
} accel_pipeline_binding;

/* An image: extent, layers (2D arrays; else 1), format and uses as the
 * public description has them (checked by the caller). */
typedef struct accel_image_desc {
    salvo_image_type type;
    salvo_format format;
    uint32_t width, height, depth, layers;
    uint32_t usage; /* SALVO_IMAGE_STORAGE | SALVO_IMAGE_SAMPLED */
} accel_image_desc;

/* A box of an image's texels (whole extents resolved, layers counted). */
typedef struct accel_image_region {
    uint32_t x, y, z, width, height, depth, layer, layers;
} accel_image_region;

typedef struct accel_sampler_desc {
    bool linear;
    uint8_t address[3]; /* salvo_address_mode */
    bool unnormalized;
} accel_sampler_desc;

typedef struct accel_pipeline_desc {
    const uint32_t *spirv;
    size_t spirv_size; /* bytes */
    const char *entry;
    const accel_pipeline_binding *bindings; /* all in descriptor set 0 */
    uint32_t binding_count;
    uint32_t push_constant_size;
    const salvo_spec_constant *spec_constants;
    uint32_t spec_constant_count;
    /* Bytes each value is passed in (1, 2 or 4: the constant's width),
     * spec_constant_count entries; the low bytes of the value. */
    const uint8_t *spec_constant_sizes;
    /* The kernel's name: the pipeline carries it where the implementation
     * can name objects for tools and layers (Vulkan: debug utils). */
    const char *name;
} accel_pipeline_desc;

/* Shader printf: a kernel's module is built with each format string
 * prefixed by ACCEL_PRINTF_TAG_OPEN, the kernel's name (each '%' doubled,
 * the two tag characters replaced by '?') and ACCEL_PRINTF_TAG_CLOSE, so
 * that the implementation can name the kernel of each line printed,
 * whatever the layer says of its pipeline. */
#define ACCEL_PRINTF_TAG_OPEN '\x1e'
#define ACCEL_PRINTF_TAG_CLOSE '\x1f'

/* One bound range, image or sampler at dispatch time. kind: a
 * salvo_binding_kind; for a buffer (0) buffer, offset and size, else image
 * and/or sampler. */
typedef struct accel_bind {
    uint32_t binding;
    uint32_t element; /* in an array; else 0 */
    bool uniform;
    /* The host never maps the buffer (device-local memory, not imported):
     * what a batch writes there needs no barrier to the host at its end.
     * false, the default, where not known. */
    bool unmapped;
    uint8_t kind;
    accel_buffer *buffer;
    uint64_t offset;
    uint64_t size;
    accel_image *image;
    accel_sampler *sampler;
} accel_bind;

/* What hazard tracking and gate-held batches know a bind by: its buffer,
 * or its image (a sampler is never written: its own identity). */
static inline const void *accel_bind_target(const accel_bind *b)
{
    return b->buffer ? (const void *)b->buffer
                     : b->image ? (const void *)b->image : (const void *)b->sampler;
}

/* What cmd_fill_bytes takes from a pool: one set of this many storage
 * buffers (its partial words at either end). */
enum { ACCEL_FILL_BYTES_DESCRIPTORS = 2 };

typedef enum accel_barrier {
    ACCEL_BARRIER_COMPUTE_COMPUTE, /* shader writes -> later shader reads/writes */
    ACCEL_BARRIER_TRANSFER_COMPUTE,/* transfer writes -> shader reads/writes */
    ACCEL_BARRIER_COMPUTE_TRANSFER,/* shader writes -> transfer reads/writes */
    ACCEL_BARRIER_ALL_HOST,        /* shader and transfer writes -> host reads */
    ACCEL_BARRIER_WORK,            /* shader and transfer writes -> later shader and
                                      transfer reads/writes: what a stream puts
                                      between launches and copies */
    ACCEL_BARRIER_INDIRECT         /* shader and transfer writes -> the indirect
                                      counts read of the next dispatch (and its
                                      shaders): before each indirect dispatch only,
                                      so that no other barrier waits at that stage */
} accel_barrier;

typedef struct accel_sem_op {
    accel_timeline *timeline;
    uint64_t value;
} accel_sem_op;

typedef struct accel_submit_desc {
    uint32_t queue; /* which of caps.queue_count (that index: the transfer queue) */
    accel_cmd *cmd;
    accel_fence *fence; /* signalled when the command buffer completes */
    const accel_sem_op *waits;   /* timeline waits before it starts */
    uint32_t wait_count;
    const accel_sem_op *signals; /* timeline values it signals */
    uint32_t signal_count;
} accel_submit_desc;

typedef struct accel_vtable {
    const char *name;

    /* Instance level. enumerate: as salvo_device_enumerate. */
    accel_result (*enumerate)(void *self, salvo_device_entry *entries, uint32_t *count);
    accel_result (*device_open)(void *self, const accel_open_options *opt, accel_device **out,
                                accel_caps *caps);
    void (*device_close)(void *self, accel_device *dev);
    /* Wait until every queue has no work. */
    accel_result (*queue_wait_idle)(void *self, accel_device *dev);

    /* Buffers: create allocates, binds and (where host-visible) maps. */
    accel_result (*buffer_create)(void *self, accel_device *dev, const accel_buffer_desc *desc,
                                  accel_buffer **out, accel_buffer_info *info);
    void (*buffer_destroy)(void *self, accel_device *dev, accel_buffer *buf);

    /* Pipelines with their set layout and pipeline layout. */
    accel_result (*pipeline_create)(void *self, accel_device *dev, const accel_pipeline_desc *desc,
                                    accel_pipeline **out);
    void (*pipeline_destroy)(void *self, accel_device *dev, accel_pipeline *pipe);

    /* Descriptor pools: room for max_sets sets of up to bindings_per_set
     * buffers each, and for image_bindings descriptors of each image and
     * sampler kind in all (storage image, sampled image, sampler, combined
     * image sampler: a binding naming an image or sampler counts once).
     * reset frees every set allocated from it. */
    accel_result (*descpool_create)(void *self, accel_device *dev, uint32_t max_sets,
                                    uint32_t bindings_per_set, uint32_t image_bindings,
                                    accel_descpool **out);
    accel_result (*descpool_reset)(void *self, accel_device *dev, accel_descpool *pool);
    void (*descpool_destroy)(void *self, accel_device *dev, accel_descpool *pool);

    /* Command buffers, each for submission to one queue (its family):
     * one for the transfer queue records copies and barriers only. begin
     * starts recording from the initial state (implicitly resetting);
     * reset returns any state to initial. */
    accel_result (*cmd_create)(void *self, accel_device *dev, uint32_t queue, accel_cmd **out);
    void (*cmd_destroy)(void *self, accel_device *dev, accel_cmd *cmd);
    accel_result (*cmd_begin)(void *self, accel_device *dev, accel_cmd *cmd);
    accel_result (*cmd_end)(void *self, accel_device *dev, accel_cmd *cmd);
    accel_result (*cmd_reset)(void *self, accel_device *dev, accel_cmd *cmd);
    /* Record bind + descriptors (pushed, or a set allocated from pool) +
     * push constants + dispatch. ACCEL_ERROR_OUT_OF_POOL_MEMORY when the pool
     * is full: nothing is recorded then. pool may be NULL where the device
     * pushes descriptors (push_descriptors_used), unless the pipeline binds
     * an array of buffers (a binding of count > 1): those take a set. */
    accel_result (*cmd_dispatch)(void *self, accel_device *dev, accel_cmd *cmd,
                                 accel_pipeline *pipe, accel_descpool *pool,
                                 const accel_bind *binds, uint32_t bind_count,
                                 const uint32_t groups[3], const void *push, uint32_t push_size);
    void (*cmd_barrier)(void *self, accel_device *dev, accel_cmd *cmd, accel_barrier kind);
    void (*cmd_copy)(void *self, accel_device *dev, accel_cmd *cmd, accel_buffer *src,
                     uint64_t src_offset, accel_buffer *dst, uint64_t dst_offset, uint64_t size);
    /* The native command buffer of cmd (Vulkan: its VkCommandBuffer) for
     * the program to record into; what the accelerator remembers of the
     * state it bound is forgotten, as the program may bind anything.
     * NULL where there is none (the fake: nothing to record into). */
    void *(*cmd_native)(void *self, accel_device *dev, accel_cmd *cmd);
    /* Fill size bytes of dst from offset (both multiples of 4) with the
     * 32-bit value repeated: a transfer-stage write, as a copy's. */
    void (*cmd_fill)(void *self, accel_device *dev, accel_cmd *cmd, accel_buffer *dst,
                     uint64_t offset, uint64_t size, uint32_t value);
    /* Reusable command buffers (graphs): recorded once between
     * cmd_begin_reusable and cmd_end with cmd_dispatch, cmd_barrier and
     * cmd_copy, then executed from batches' command buffers (cmd_execute)
     * any number of times, also while batches that executed it earlier
     * are still pending (Vulkan: secondary command buffers with
     * simultaneous use). cmd_destroy, cmd_end and cmd_reset serve them
     * too. One must not be begun again, reset or destroyed while a batch
     * that executes it is pending. */
    accel_result (*cmd_create_reusable)(void *self, accel_device *dev, uint32_t queue,
                                        accel_cmd **out);
    accel_result (*cmd_begin_reusable)(void *self, accel_device *dev, accel_cmd *cmd);
    /* Record, into the recording command buffer cmd, the execution of count
     * reusable command buffers (each ended, made for cmd's queue family).
     * What cmd had bound before is unknown after it. */
    void (*cmd_execute)(void *self, accel_device *dev, accel_cmd *cmd, accel_cmd *const *reusable,
                        uint32_t count);
    /* Begin a command buffer made by cmd_create (so: submitted, not
     * executed) to be submitted more than once, each time after the last
     * submission of it completed (Vulkan: begun without the one-time-submit
     * flag); cmd_begin's may be submitted once. NULL where the accelerator
     * has no such buffers: the core then records each time. */
    accel_result (*cmd_begin_resubmit)(void *self, accel_device *dev, accel_cmd *cmd);

    /* Fences. status: SUCCESS (signalled), NOT_READY, or an error. */
    accel_result (*fence_create)(void *self, accel_device *dev, accel_fence **out);
    void (*fence_destroy)(void *self, accel_device *dev, accel_fence *fence);
    accel_result (*fence_reset)(void *self, accel_device *dev, accel_fence *fence);
    accel_result (*fence_status)(void *self, accel_device *dev, accel_fence *fence);
    accel_result (*fence_wait)(void *self, accel_device *dev, accel_fence *fence,
                               uint64_t timeout_ns);

    /* Submit one command buffer to one of the device's queues: the one
     * it was made for. */
    accel_result (*submit)(void *self, accel_device *dev, const accel_submit_desc *desc);

    /* Timeline semaphores (only where caps.info.timeline_semaphores). */
    accel_result (*timeline_create)(void *self, accel_device *dev, uint64_t initial,
                                    accel_timeline **out);
    void (*timeline_destroy)(void *self, accel_device *dev, accel_timeline *tl);
    accel_result (*timeline_signal)(void *self, accel_device *dev, accel_timeline *tl,
                                    uint64_t value);
    accel_result (*timeline_value)(void *self, accel_device *dev, accel_timeline *tl,
                                   uint64_t *value);
    accel_result (*timeline_wait)(void *self, accel_device *dev, accel_timeline *tl,
                                  uint64_t value, uint64_t timeout_ns);

    /* Images (optional: NULL where the implementation has none; the core
     * then refuses images as unsupported). format_support: SALVO_IMAGE_*
     * bits the device offers for format (0: none). image_create makes the
     * image and its memory, image_view_create its view of all of it
     * (image_destroy destroys both); the image must then be brought into
     * use with cmd_image_init, recorded and completed before any other
     * command uses it. */
    uint32_t (*image_format_support)(void *self, accel_device *dev, salvo_format format);
    accel_result (*image_create)(void *self, accel_device *dev, const accel_image_desc *desc,
                                 accel_image **out);
    accel_result (*image_view_create)(void *self, accel_device *dev, accel_image *img);
    void (*image_destroy)(void *self, accel_device *dev, accel_image *img);
    accel_result (*sampler_create)(void *self, accel_device *dev, const accel_sampler_desc *desc,
                                   accel_sampler **out);
    void (*sampler_destroy)(void *self, accel_device *dev, accel_sampler *smp);
    /* Move a new image into the layout every later use works in (Vulkan:
     * UNDEFINED to GENERAL), its old contents discarded. */
    accel_result (*cmd_image_init)(void *self, accel_device *dev, accel_cmd *cmd,
                                   accel_image *img);
    /* Copy between buf (texels packed from offset) and region of img;
     * to_image says which way. A transfer-stage read and write, as
     * cmd_copy's. */
    void (*cmd_copy_image)(void *self, accel_device *dev, accel_cmd *cmd, accel_buffer *buf,
                           uint64_t offset, accel_image *img, const accel_image_region *region,
                           bool to_image);

    /* Release the implementation itself (after every device is closed). */
    void (*destroy)(void *self);

    /* Optional (NULL: the implementation has no native handles to give).
     * The implementation's own handles, for interop: with buf NULL, the
     * device's (Vulkan: fills a salvo_vk_handles); otherwise buf's
     * (Vulkan: a VkBuffer). Handles stay valid as long as their object. */
    accel_result (*native_handles)(void *self, accel_device *dev, accel_buffer *buf,
                                   void *out_struct);

    /* Optional (NULL, or caps.timestamps false: no GPU timestamps, so no
     * traces). Pools of count timestamp queries, for traces only. A query
     * must be reset (cmd_querypool_reset, recorded before) each time
     * before a timestamp is written to it. cmd_timestamp latches the
     * device's clock into query index: end_of_work false when the device
     * reaches it (Vulkan: top of pipe), true once every command recorded
     * before it has completed (bottom of pipe). querypool_results copies
     * ticks of queries [first, first + count), masked to the valid bits,
     * without waiting: ACCEL_NOT_READY when one of them has not been
     * written (nothing usable then). */
    accel_result (*querypool_create)(void *self, accel_device *dev, uint32_t count,
                                     accel_querypool **out);
    void (*querypool_destroy)(void *self, accel_device *dev, accel_querypool *pool);
    void (*cmd_querypool_reset)(void *self, accel_device *dev, accel_cmd *cmd,
                                accel_querypool *pool, uint32_t first, uint32_t count);
    void (*cmd_timestamp)(void *self, accel_device *dev, accel_cmd *cmd, accel_querypool *pool,
                          uint32_t index, bool end_of_work);
    accel_result (*querypool_results)(void *self, accel_device *dev, accel_querypool *pool,
                                      uint32_t first, uint32_t count, uint64_t *ticks);
    /* Optional (NULL, or ACCEL_ERROR_FEATURE_NOT_PRESENT where the device
     * cannot): reset queries [first, first + count) from the host, in
     * place of a cmd_querypool_reset recorded before their next write
     * (which costs the device time on the way to that write). None of
     * them may be used by work that is pending. */
    accel_result (*querypool_host_reset)(void *self, accel_device *dev, accel_querypool *pool,
                                         uint32_t first, uint32_t count);

    /* The device's memory heaps now, into out (zeroed by the caller), as
     * salvo_device_memory_info gives them: each heap's size and kind;
     * budget and usage the driver's where it measures them (Vulkan:
     * VK_EXT_memory_budget, enabled where offered; measured true), else
     * budget the size and usage what allocated says; allocated the bytes
     * of the heap held by this device's buffers and images, counted at
     * each allocation and free (imports of host memory aside). Reads no
     * state another call changes but those counts (atomics): any thread,
     * no lock. Cannot fail. */
    void (*memory_info)(void *self, accel_device *dev, salvo_memory_info *out);

    /* A dispatch whose workgroup counts (three uint32: x, y, z) the device
     * reads from counts at offset (a multiple of 4, the 12 bytes inside
     * the buffer) when it runs, so an earlier command of the same batch
     * may have written them (Vulkan: vkCmdDispatchIndirect). The read is
     * the indirect-command stage's, which every barrier kind that orders
     * later shader work orders too. A count of 0 runs nothing; counts
     * above the device's limits are the caller's to prevent. Otherwise as
     * cmd_dispatch (descriptors, push constants, OUT_OF_POOL_MEMORY). */
    accel_result (*cmd_dispatch_indirect)(void *self, accel_device *dev, accel_cmd *cmd,
                                          accel_pipeline *pipe, accel_descpool *pool,
                                          const accel_bind *binds, uint32_t bind_count,
                                          accel_buffer *counts, uint64_t offset,
                                          const void *push, uint32_t push_size);
    /* Fill size bytes (> 0) of dst from offset, any alignment: the byte at
     * each address a gets byte a % 4 of word as word lies in memory (a 1-,
     * 2- or 4-byte pattern repeated, turned to the phase of whole words).
     * Whole words are filled as cmd_fill fills them (a transfer-stage
     * write); the partial words at either end by a compute shader of the
     * accelerator's own, which changes only the bytes inside the range,
     * atomically, and takes one set of ACCEL_FILL_BYTES_DESCRIPTORS
     * storage buffers from pool as cmd_dispatch does (OUT_OF_POOL_MEMORY:
     * nothing recorded). A compute queue's command buffers only. Ordered
     * as both a copy and a dispatch: the caller puts a barrier of kind
     * WORK between it and what touches the bytes it binds, which run from
     * offset rounded down to caps.info.min_storage_buffer_offset_alignment
     * (and to 4) up to offset + size rounded up to 4: the shader's
     * bindings start at such an offset (Vulkan's validation takes a
     * binding's whole range for touched). */
    accel_result (*cmd_fill_bytes)(void *self, accel_device *dev, accel_cmd *cmd,
                                   accel_descpool *pool, accel_buffer *dst, uint64_t offset,
                                   uint64_t size, uint32_t word);
    /* Copy src_region of src to dst_region of dst: the same extents,
     * texels of the same size, images of one type (2D and 2D arrays
     * count as one), regions of one image in different layers. A
     * transfer-stage read and write, as cmd_copy_image's. NULL where the
     * image operations are. */
    void (*cmd_copy_image_to_image)(void *self, accel_device *dev, accel_cmd *cmd,
                                    accel_image *src, const accel_image_region *src_region,
                                    accel_image *dst, const accel_image_region *dst_region);
} accel_vtable;

/* An accelerator: a table and its state. */
typedef struct accel {
    const accel_vtable *vt;
    void *self;
} accel;

/* Constructors. Each returns false (and leaves *out untouched) on failure
 * to allocate. alloc may be NULL (malloc). */
bool accel_vulkan_create(const salvo_allocator *alloc, accel *out);
/* The Vulkan accelerator's process-wide loader lock (instance.c), for the
 * program's own loader calls (salvo_vk_loader_lock). */
void accel_vulkan_loader_lock(void);
void accel_vulkan_loader_unlock(void);

#endif /* SALVO_ACCEL_H */
