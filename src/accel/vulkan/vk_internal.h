/*
 * The Vulkan accelerator's private header: the objects behind accel.h's
 * handles, and what the files of src/accel/vulkan/ call in one another.
 * Only these files, and volk_impl.c, include volk.h.
 *
 * Every device-level call goes through the device's own VolkDeviceTable,
 * so several devices (each with its own instance, or on an application's
 * instance and device: open_imported) can live side by side.
 * Instance-level calls use volk's globals, which volkLoadInstanceOnly
 * overwrites for whichever instance loaded last; instance_lock covers the
 * load and every use, and the two entry points a device needs after open
 * (to tear itself down) are copied out while the lock is held.
 *
 * Failure paths: each object is built into a zeroed struct and freed by its
 * own destroy function, which skips null handles. A failed Vulkan call
 * leaves its output handle undefined, so handles are stored only on
 * success.
 *
 * Host memory: salvo's own structures come from the device's allocator
 * (salvo_mem_*); every pAllocator is NULL, so the loader, the layers and
 * the driver allocate for themselves (see accel_vk_instance_create for
 * why).
 *
 * Names shared between the files start with accel_vk_, never vk_: the
 * static archive must define no global vk* or volk* symbol (see
 * volk_impl.c), and hidden visibility does not hide a name inside an
 * archive.
 */
#ifndef SALVO_ACCEL_VULKAN_VK_INTERNAL_H
#define SALVO_ACCEL_VULKAN_VK_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "accel/accel.h"

/* First: renames volk's globals to salvo_volk_* (see volk_impl.c). */
#include "salvo_volk_names.h"
#define VOLK_NO_DEVICE_PROTOTYPES
#include <volk.h>

#include "base/alloc.h"
#include "base/diag.h"

#define VALIDATION_LAYER "VK_LAYER_KHRONOS_validation"

typedef struct vk_self {
    salvo_allocator allocator;    /* a copy: the caller's may not outlive us */
    const salvo_allocator *alloc; /* &allocator, or NULL for malloc */
} vk_self;

struct accel_device {
    const salvo_allocator *alloc;
    salvo_log_sink log;
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    PFN_vkDestroyInstance destroy_instance;
    PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger;
    PFN_vkGetInstanceProcAddr get_instance_proc_addr; /* for salvo_device_vk_handles */
    VkPhysicalDevice phys;
    VkDevice device;
    VkQueue queues[ACCEL_MAX_QUEUES]; /* of queue_family; [0] the application's when imported */
    uint32_t queue_count;
    uint32_t queue_family;
    /* A queue of a family that only copies (a copy engine), submitted to
     * as queue index queue_count; transfer_family UINT32_MAX: none. Every
     * buffer is then shared by the two families (concurrent sharing). */
    VkQueue transfer_queue;
    uint32_t transfer_family;
    uint32_t api_version; /* min(device, instance) */
    VkPhysicalDeviceMemoryProperties mem;
    bool host_import;
    bool timeline;
    /* The shader features enabled at vkCreateDevice; all false (and
     * unchecked) on the application's device. */
    salvo_device_features features;
    uint32_t timestamp_bits; /* the queue family's timestampValidBits; 0: none */
    bool host_query_reset;   /* hostQueryReset enabled: vkResetQueryPool */
    bool pool_descriptors; /* asked for pools even where pushing works */
    bool push;             /* descriptors are pushed (VK_KHR_push_descriptor) */
    /* Core 1.2 or VK_KHR_timeline_semaphore, whichever the device has. */
    PFN_vkSignalSemaphore signal_semaphore;
    PFN_vkGetSemaphoreCounterValue semaphore_value;
    PFN_vkWaitSemaphores wait_semaphores;
    /* Pipeline cache persisted at cache_path (see
     * accel_vk_pipeline_cache_open); VK_NULL_HANDLE without a path. What a
     * cache file must have been written for: this device's identity,
     * copied at open. */
    VkPipelineCache pipeline_cache;
    char *cache_path;
    uint32_t vendor_id, device_id;
    uint8_t cache_uuid[VK_UUID_SIZE];
    /* The instance, device and queue are the application's
     * (salvo_device_create_vk): used, never destroyed. */
    bool imported;
    /* The layer's debug printf is on (accel_open_options.printf): the
     * messenger takes INFO messages too, and lines printed go to the log
     * as printf.c makes them. */
    bool printf;
    void (*queue_lock)(void *user); /* the application's queue lock, or NULL */
    void (*queue_unlock)(void *user);
    void *queue_lock_user;
    /* SALVO_IMAGE_* bits each format offers (image.c), read at open. */
    uint32_t image_usage[SALVO_FORMAT_COUNT];
    /* Bytes of the largest image of each format (maxResourceSize, the
     * least over the image types with the usage salvo asks for); 0 where
     * the driver did not say. Read at device open, where the instance's
     * functions may be called (volk's globals are rewritten by another
     * device's open). */
    uint64_t image_max_bytes[SALVO_FORMAT_COUNT];
    /* Memory heaps (heaps.c): the driver measures budget and usage
     * (VK_EXT_memory_budget enabled); the instance's
     * vkGetPhysicalDeviceMemoryProperties2, copied at open as the
     * teardown entry points are; bytes of each heap this device holds. */
    bool memory_budget;
    PFN_vkGetPhysicalDeviceMemoryProperties2 memory_properties2;
    /* The instance's vkSetDebugUtilsObjectNameEXT where it has debug
     * utils (pipelines carry their kernel's name), else NULL. */
    PFN_vkSetDebugUtilsObjectNameEXT set_object_name;
    _Atomic uint64_t heap_allocated[VK_MAX_MEMORY_HEAPS];
    /* The partial words of fills (fill.c): made at the first, NULL before. */
    _Atomic(accel_pipeline *) fill_pipe;
    VkDeviceSize storage_align; /* minStorageBufferOffsetAlignment */
    struct VolkDeviceTable vk;
};

struct accel_buffer {
    VkBuffer buffer;
    VkDeviceMemory memory;
    uint64_t memory_bytes; /* counted in heaps.c; 0: imported, or none */
    uint32_t memory_type;
};

struct accel_pipeline {
    VkPipeline pipeline;
    VkPipelineLayout layout;
    VkDescriptorSetLayout set_layout;
    uint32_t binding_count;
    bool push; /* its set layout is a push-descriptor layout */
};

struct accel_descpool {
    VkDescriptorPool pool;
    /* A set was asked of pool since its last reset: a reset of a pool
     * nothing was taken from (every set pushed) is skipped. */
    bool taken;
};

struct accel_cmd {
    VkCommandPool pool;
    VkCommandBuffer cb;
    bool transfer; /* for the transfer queue: copies and barriers only */
    VkPipeline bound; /* last pipeline bound since begin: rebinding costs on some drivers */
    /* What the last dispatch left bound, so an identical next one records
     * only the dispatch (a dependent chain repeats its bindings and push
     * constants launch after launch). Valid while state_layout is the
     * layout of the pipeline dispatched; cleared at begin and reset. */
    VkPipelineLayout state_layout;
    uint32_t pushed_count; /* descriptors pushed, or UINT32_MAX: unknown */
    accel_bind pushed[SALVO_MAX_BINDINGS];
    uint32_t constants_size; /* UINT32_MAX: unknown */
    unsigned char constants[128];
};

struct accel_fence {
    VkFence fence;
};

struct accel_timeline {
    VkSemaphore semaphore;
};

/* ---- instance.c: the loader, instances, physical devices */

/* The result of loading libvulkan (done once, at the first call). */
VkResult accel_vk_loader_ready(void);
/* instance_lock: around volkLoadInstanceOnly and every use of volk's
 * instance-level globals, and around salvo's vkCreateInstance,
 * vkCreateDevice with the table's load (vkGetDeviceProcAddr) and its
 * vkDestroyDevice and vkDestroyInstance: the loader walks and changes its
 * lists of devices with no lock of its own (device.c, device_release). The
 * program takes it around its own such calls (salvo_vk_loader_lock). */
void accel_vk_instance_lock(void);
void accel_vk_instance_unlock(void);
/* The messenger that passes the layers' and the loader's messages to d's
 * log, as accel_vk_message_classify sorts them. */
VkDebugUtilsMessengerCreateInfoEXT accel_vk_messenger_info(accel_device *d);

/* What one VK_EXT_debug_utils message is to salvo. Only a finding about
 * salvo's use of Vulkan, at WARNING or ERROR, is a validation message: type
 * VALIDATION (the layer's, or the invalid use the loader catches itself,
 * sent as GENERAL | VALIDATION), or a layer's PERFORMANCE. It is delivered
 * with file "validation", by which the core counts it
 * (salvo_stats.validation_messages). Anything else is a notice: GENERAL
 * alone at any severity (the loader's, id name "Loader Message", such as
 * "env var 'VK_INSTANCE_LAYERS' defined and adding layers" at WARNING; a
 * layer's or a driver's), or any message below WARNING. A notice goes to
 * the log a level lower (WARNING and ERROR as INFO, the rest as DEBUG),
 * uncounted. */
typedef struct accel_vk_message_class {
    bool validation;       /* a finding: counted */
    bool printf;           /* a line a shader printed (message id "...DEBUG-PRINTF") */
    salvo_log_level level; /* the level the log callback receives */
    const char *file;      /* ACCEL_VK_FILE_* : the file it receives */
} accel_vk_message_class;

#define ACCEL_VK_FILE_VALIDATION "validation"
#define ACCEL_VK_FILE_LOADER "vulkan-loader"
#define ACCEL_VK_FILE_OTHER "vulkan" /* a general notice of a layer or driver */
#define ACCEL_VK_FILE_PRINTF "printf" /* a line a shader printed */
#define ACCEL_VK_LOADER_MESSAGE_ID "Loader Message"

/* Pure: decided by the callback data alone (id_name may be NULL). */
accel_vk_message_class accel_vk_message_classify(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT types,
                                                 const char *id_name);
VkResult accel_vk_extensions_get(const salvo_allocator *alloc, VkPhysicalDevice pd,
                                 const char *layer, VkExtensionProperties **out,
                                 uint32_t *count);
bool accel_vk_has_extension(const VkExtensionProperties *p, uint32_t n, const char *name);
/* Call without instance_lock (taken around vkCreateInstance). */
VkResult accel_vk_instance_create(const salvo_allocator *alloc, const accel_open_options *opt,
                                  accel_device *d, VkInstance *out, uint32_t *api_out);
uint32_t accel_vk_compute_family(VkPhysicalDevice pd);
/* The family salvo's own device takes its queues from (see instance.c). */
uint32_t accel_vk_stream_family(VkPhysicalDevice pd);
/* Keep the Vulkan drivers loaded for the rest of the process (a bare
 * instance, made once; see instance.c). Call without instance_lock. */
void accel_vk_keep_drivers(void);
/* A family that copies and neither computes nor draws (a copy engine),
 * or UINT32_MAX (see instance.c). */
uint32_t accel_vk_transfer_family(VkPhysicalDevice pd);
VkResult accel_vk_compute_devices(const salvo_allocator *alloc, VkInstance instance,
                                  VkPhysicalDevice **out, uint32_t *count);
salvo_device_type accel_vk_device_type(VkPhysicalDeviceType t);
void accel_vk_copy_name(char dst[SALVO_NAME_MAX], const char *src, size_t src_max);
/* Replace d's hot entry points by counting, timing ones where built with
 * SALVO_DRIVER_CLOCK, else nothing (see driver_clock.c). */
void accel_vk_driver_clock_install(accel_device *d);
/* Zero the counts (a probe calls it after its warm-up). */
void accel_vk_driver_clock_reset(void);

/* ---- memory.c */

VkResult accel_vk_device_memory_host_visible(accel_device *d, bool *out);

/* ---- printf.c: shader printf */

/* The line a shader printed, from the layer's message, into out (cut to
 * size, NUL-terminated): "kernel 'name': text" where the format carried a
 * kernel's tag (ACCEL_PRINTF_TAG_OPEN), else the text alone; the layer's
 * header ("Validation Information: [ ... ] ... | MessageID = 0x... | ")
 * and trailing newlines dropped. Pure: any thread. */
void accel_vk_printf_line(const char *message, char *out, size_t size);

/* ---- heaps.c */

/* Count bytes allocated from memory type type (freed false), or given
 * back (true), in what the device holds of the type's heap. */
void accel_vk_heap_note(accel_device *d, uint32_t type, uint64_t bytes, bool freed);
/* Whether an allocation of bytes from memory type type can be asked at
 * all: no larger than the type's heap (a larger one is invalid usage, not
 * an out-of-memory the driver reports). */
bool accel_vk_heap_holds(const accel_device *d, uint32_t type, uint64_t bytes);

/* ---- pipeline_cache.c */

void accel_vk_pipeline_cache_open(accel_device *d, const char *path);
void accel_vk_pipeline_cache_store(accel_device *d);

/* ---- The accel_vtable's entries (vtable.c), by the file that defines them */

/* instance.c */
accel_result accel_vk_enumerate(void *self_, salvo_device_entry *entries, uint32_t *count);
/* device.c */
accel_result accel_vk_device_open(void *self_, const accel_open_options *opt, accel_device **out,
                                  accel_caps *caps);
void accel_vk_device_close(void *self, accel_device *d);
/* queue.c */
accel_result accel_vk_queue_wait_idle(void *self, accel_device *d);
accel_result accel_vk_submit(void *self, accel_device *d, const accel_submit_desc *desc);
/* memory.c */
accel_result accel_vk_buffer_create(void *self, accel_device *d, const accel_buffer_desc *desc,
                                    accel_buffer **out, accel_buffer_info *info);
void accel_vk_buffer_destroy(void *self, accel_device *d, accel_buffer *b);
/* pipeline.c */
accel_result accel_vk_pipeline_create(void *self, accel_device *d,
                                      const accel_pipeline_desc *desc, accel_pipeline **out);
void accel_vk_pipeline_destroy(void *self, accel_device *d, accel_pipeline *p);
accel_result accel_vk_descpool_create(void *self, accel_device *d, uint32_t max_sets,
                                      uint32_t bindings_per_set, uint32_t image_bindings,
                                      accel_descpool **out);
accel_result accel_vk_descpool_reset(void *self, accel_device *d, accel_descpool *pool);
void accel_vk_descpool_destroy(void *self, accel_device *d, accel_descpool *pool);
/* commands.c */
accel_result accel_vk_cmd_create(void *self, accel_device *d, uint32_t queue, accel_cmd **out);
void accel_vk_cmd_destroy(void *self, accel_device *d, accel_cmd *c);
accel_result accel_vk_cmd_begin(void *self, accel_device *d, accel_cmd *c);
accel_result accel_vk_cmd_create_reusable(void *self, accel_device *d, uint32_t queue,
                                          accel_cmd **out);
accel_result accel_vk_cmd_begin_reusable(void *self, accel_device *d, accel_cmd *c);
accel_result accel_vk_cmd_begin_resubmit(void *self, accel_device *d, accel_cmd *c);
void accel_vk_cmd_execute(void *self, accel_device *d, accel_cmd *c, accel_cmd *const *reusable,
                          uint32_t count);
accel_result accel_vk_cmd_end(void *self, accel_device *d, accel_cmd *c);
accel_result accel_vk_cmd_reset(void *self, accel_device *d, accel_cmd *c);
accel_result accel_vk_cmd_dispatch(void *self, accel_device *d, accel_cmd *c, accel_pipeline *p,
                                   accel_descpool *pool, const accel_bind *binds,
                                   uint32_t bind_count, const uint32_t groups[3],
                                   const void *push, uint32_t push_size);
void accel_vk_cmd_barrier(void *self, accel_device *d, accel_cmd *c, accel_barrier kind);
void *accel_vk_cmd_native(void *self, accel_device *d, accel_cmd *c);
void accel_vk_cmd_fill(void *self, accel_device *d, accel_cmd *c, accel_buffer *dst,
                       uint64_t offset, uint64_t size, uint32_t value);
void accel_vk_cmd_copy(void *self, accel_device *d, accel_cmd *c, accel_buffer *src,
                       uint64_t src_offset, accel_buffer *dst, uint64_t dst_offset,
                       uint64_t size);
accel_result accel_vk_cmd_dispatch_indirect(void *self, accel_device *d, accel_cmd *c,
                                            accel_pipeline *p, accel_descpool *pool,
                                            const accel_bind *binds, uint32_t bind_count,
                                            accel_buffer *counts, uint64_t offset,
                                            const void *push, uint32_t push_size);
/* fill.c */
accel_result accel_vk_cmd_fill_bytes(void *self, accel_device *d, accel_cmd *c,
                                     accel_descpool *pool, accel_buffer *dst, uint64_t offset,
                                     uint64_t size, uint32_t word);
/* Destroy the fill kernel's pipeline, if made (device teardown). */
void accel_vk_fill_release(accel_device *d);
/* sync.c */
accel_result accel_vk_fence_create(void *self, accel_device *d, accel_fence **out);
void accel_vk_fence_destroy(void *self, accel_device *d, accel_fence *f);
accel_result accel_vk_fence_reset(void *self, accel_device *d, accel_fence *f);
accel_result accel_vk_fence_status(void *self, accel_device *d, accel_fence *f);
accel_result accel_vk_fence_wait(void *self, accel_device *d, accel_fence *f,
                                 uint64_t timeout_ns);
accel_result accel_vk_timeline_create(void *self, accel_device *d, uint64_t initial,
                                      accel_timeline **out);
void accel_vk_timeline_destroy(void *self, accel_device *d, accel_timeline *t);
accel_result accel_vk_timeline_signal(void *self, accel_device *d, accel_timeline *t,
                                      uint64_t value);
accel_result accel_vk_timeline_value(void *self, accel_device *d, accel_timeline *t,
                                     uint64_t *value);
accel_result accel_vk_timeline_wait(void *self, accel_device *d, accel_timeline *t,
                                    uint64_t value, uint64_t timeout_ns);
/* query.c */
accel_result accel_vk_querypool_create(void *self, accel_device *d, uint32_t count,
                                       accel_querypool **out);
void accel_vk_querypool_destroy(void *self, accel_device *d, accel_querypool *q);
void accel_vk_cmd_querypool_reset(void *self, accel_device *d, accel_cmd *c, accel_querypool *q,
                                  uint32_t first, uint32_t count);
void accel_vk_cmd_timestamp(void *self, accel_device *d, accel_cmd *c, accel_querypool *q,
                            uint32_t index, bool end_of_work);
accel_result accel_vk_querypool_host_reset(void *self, accel_device *d, accel_querypool *q,
                                          uint32_t first, uint32_t count);
accel_result accel_vk_querypool_results(void *self, accel_device *d, accel_querypool *q,
                                        uint32_t first, uint32_t count, uint64_t *ticks);
/* image.c */
/* Fill d->image_usage. Call with instance_lock held and volk loaded for
 * d->instance. */
void accel_vk_image_formats_query(accel_device *d);
uint32_t accel_vk_image_format_support(void *self, accel_device *d, salvo_format format);
accel_result accel_vk_image_create(void *self, accel_device *d, const accel_image_desc *desc,
                                   accel_image **out);
accel_result accel_vk_image_view_create(void *self, accel_device *d, accel_image *img);
void accel_vk_image_destroy(void *self, accel_device *d, accel_image *img);
accel_result accel_vk_sampler_create(void *self, accel_device *d, const accel_sampler_desc *desc,
                                     accel_sampler **out);
void accel_vk_sampler_destroy(void *self, accel_device *d, accel_sampler *s);
accel_result accel_vk_cmd_image_init(void *self, accel_device *d, accel_cmd *c,
                                     accel_image *img);
void accel_vk_cmd_copy_image(void *self, accel_device *d, accel_cmd *c, accel_buffer *buf,
                             uint64_t offset, accel_image *img, const accel_image_region *r,
                             bool to_image);
void accel_vk_cmd_copy_image_to_image(void *self, accel_device *d, accel_cmd *c,
                                      accel_image *src, const accel_image_region *sr,
                                      accel_image *dst, const accel_image_region *dr);
VkImageView accel_vk_image_view(const accel_image *img);
VkSampler accel_vk_sampler_handle(const accel_sampler *s);
/* The descriptor type of a binding of this salvo_binding_kind. Inline:
 * every dispatch asks, for each of its descriptors. */
static inline VkDescriptorType accel_vk_descriptor_type(uint8_t kind, bool uniform)
{
    switch (kind) {
    case SALVO_BINDING_STORAGE_IMAGE:
        return VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
    case SALVO_BINDING_SAMPLED_IMAGE:
        return VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE;
    case SALVO_BINDING_SAMPLER:
        return VK_DESCRIPTOR_TYPE_SAMPLER;
    case SALVO_BINDING_IMAGE_SAMPLER:
        return VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    default:
        return uniform ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    }
}
/* interop.c */
accel_result accel_vk_native_handles(void *self, accel_device *d, accel_buffer *b,
                                     void *out_struct);
/* heaps.c */
void accel_vk_memory_info(void *self, accel_device *d, salvo_memory_info *out);

#endif /* SALVO_ACCEL_VULKAN_VK_INTERNAL_H */
