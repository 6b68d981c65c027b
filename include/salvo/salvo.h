/*
 * salvo: batched Vulkan compute with CUDA-like streams and events.
 *
 * One public header. No Vulkan types are needed to use it. Every fallible
 * function returns a salvo_status (0 success, positive = not an error,
 * negative = error); salvo_last_error() gives this thread's detail message.
 *
 * Conventions:
 *  - create functions set *out to NULL first and only set it on success;
 *  - destroy functions accept NULL and never block, never fail;
 *  - a zeroed or NULL desc means defaults.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SALVO_SALVO_H
#define SALVO_SALVO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define SALVO_API
#else
#define SALVO_API __attribute__((visibility("default")))
#endif

#define SALVO_VERSION_MAJOR 0
#define SALVO_VERSION_MINOR 1
#define SALVO_VERSION_PATCH 0

/* ------------------------------------------------------------------ */
/* Status codes: Vulkan's sign convention. Callers treat any unknown   */
/* negative value as an error; codes may be added later.               */
/* ------------------------------------------------------------------ */
typedef enum salvo_status {
    SALVO_OK = 0,
    SALVO_NOT_READY = 1,  /* work not complete yet (queries)            */
    SALVO_TIMEOUT = 2,    /* a bounded wait expired; the work goes on    */
    SALVO_CANCELLED = 3,  /* the event's launches were withdrawn         */
    SALVO_ERROR_INVALID_ARGUMENT = -1,
    SALVO_ERROR_OUT_OF_HOST_MEMORY = -2,
    SALVO_ERROR_OUT_OF_DEVICE_MEMORY = -3,
    SALVO_ERROR_DEVICE_LOST = -4,
    SALVO_ERROR_UNSUPPORTED = -5,
    SALVO_ERROR_NO_DEVICE = -6,     /* no Vulkan device (or none matched) */
    SALVO_ERROR_BATCH_FAILED = -7,  /* a batch failed; the message names its kernels */
    SALVO_ERROR_INVALID_STATE = -8, /* the call is not valid in the current state */
    SALVO_ERROR_UNKNOWN = -9,       /* an unexpected driver error */
    SALVO_ERROR_TIMEOUT = -10       /* a bounded wait expired before the call could do
                                       its work: nothing was done (see "Timeouts") */
} salvo_status;

/* Timeouts. salvo_device_desc.fence_timeout_s bounds each wait salvo makes
 * for the device (none by default), but for the copies of a staged buffer
 * or image transfer once they have begun (see salvo_buffer_write). When a bound expires, what the status
 * says about the call's work is exact:
 *  - SALVO_TIMEOUT (not an error): the call did its work, only a wait on
 *    that work expired; the work goes on and a later wait sees it end.
 *    From salvo_stream_synchronize, salvo_device_synchronize and
 *    salvo_event_synchronize; and, with a batch size of 1, from every call
 *    that records device work on a stream (salvo_launch, salvo_copy,
 *    salvo_fill, salvo_stream_write, salvo_stream_read, the image copies,
 *    salvo_graph_launch, salvo_vk_stream_record): each such command is
 *    recorded, submitted and then waited for before the call returns.
 *  - SALVO_ERROR_TIMEOUT (an error): the call had to wait before it could
 *    do its work, and nothing was done. From salvo_launch, salvo_copy and
 *    salvo_stream_wait_gate when the stream's oldest batch still held its
 *    slot (the launch or copy was not recorded, the wait not registered:
 *    make the call again), from salvo_stream_wait_event likewise where the
 *    event's stream runs on another queue, and from salvo_buffer_write
 *    and salvo_buffer_read when work before them did not complete (not a
 *    byte was copied).
 * salvo_stream_flush, the queries and every create or destroy never wait
 * for the device, but salvo_image_create, which waits for its own layout
 * change (see there).
 *
 * Gates and waits. Work that waits on a gate not raised yet holds, until
 * it is raised, everything that waits for that work: its stream's
 * synchronize, a launch that needs its batch slot (a stream has 3), a
 * buffer read or write of a buffer it uses, a device synchronize, and
 * another stream's work ordered after it by an event. It holds up nothing
 * else: where its queue is shared with other work (a device with one
 * queue, such as lavapipe; more streams than queues), the batch is kept
 * on the host until the gate is raised rather than given to the device,
 * where it would stall everything behind it; the raise (or the next salvo
 * call that submits or waits) sends it. Without a fence timeout a wait for
 * gated work lasts until the gate is raised, so raise from another thread,
 * or raise before waiting; none of these waits holds a lock that
 * salvo_gate_raise or another stream's launch, flush or destroy needs. A
 * batch waits on at most 16 gates (SALVO_ERROR_INVALID_STATE beyond). */

/* Name of a status ("SALVO_ERROR_DEVICE_LOST"); never allocates, never NULL.
 * Thread safety: any thread. */
SALVO_API const char *salvo_status_string(salvo_status status);

/* Detail of this thread's last failure: where, what, and for a batch the
 * kernels recorded in it. Empty string when there is none.
 * Thread safety: thread-local. Lifetime: valid until this thread's next
 * salvo call. */
SALVO_API const char *salvo_last_error(void);

/* ------------------------------------------------------------------ */
/* Opaque objects                                                      */
/* ------------------------------------------------------------------ */
typedef struct salvo_device salvo_device;
typedef struct salvo_stream salvo_stream;
typedef struct salvo_event salvo_event;
typedef struct salvo_graph salvo_graph;
typedef struct salvo_buffer salvo_buffer;
typedef struct salvo_kernel salvo_kernel;
typedef struct salvo_gate salvo_gate;

/* ------------------------------------------------------------------ */
/* Device                                                              */
/* ------------------------------------------------------------------ */
typedef enum salvo_device_type {
    SALVO_DEVICE_TYPE_OTHER = 0,
    SALVO_DEVICE_TYPE_INTEGRATED = 1,
    SALVO_DEVICE_TYPE_DISCRETE = 2,
    SALVO_DEVICE_TYPE_VIRTUAL = 3,
    SALVO_DEVICE_TYPE_CPU = 4
} salvo_device_type;

typedef enum salvo_log_level {
    SALVO_LOG_DEBUG = 0,
    SALVO_LOG_INFO = 1,
    SALVO_LOG_WARNING = 2,
    SALVO_LOG_ERROR = 3,
    /* Never passed to a callback: salvo_device_info.log_level when
     * $SALVO_LOG=off silences the stderr sink. */
    SALVO_LOG_OFF = 4
} salvo_log_level;

/* Receives every message the library has to say, at every level. With no
 * callback, messages go to stderr instead, a line each starting "salvo: ",
 * from the level $SALVO_LOG names on (off, error, warning, info, debug;
 * by default warning, or info on a device with validation on).
 * message is the text alone: it never repeats file and line,
 * which arrive as arguments of their own (salvo_last_error(), which has
 * no such arguments, starts with "file:line: "). file/line name the place
 * in salvo's source (file is a base name, "kernel.c"). Validation
 * findings (the layer's, or invalid use the loader catches itself) arrive
 * with file "validation" and line 0, at WARNING or ERROR, and are what
 * salvo_stats.validation_messages counts; the loader's notices
 * (file "vulkan-loader", VK_INSTANCE_LAYERS' "adding layers" among them)
 * and other layers' or drivers' general notices (file "vulkan") arrive at
 * INFO or DEBUG, line 0, and are not counted. May be called from any thread
 * that calls into salvo, with the device's lock held: call no salvo
 * function from it except the destroy functions, which never block (their
 * release then waits for the next drain point). Any other call would also
 * replace the message of the failure being reported. */
typedef void (*salvo_log_fn)(void *user, salvo_log_level level, const char *file, int line,
                             const char *message);

/* Host allocator. Every host allocation salvo makes goes through one: a
 * device's (salvo_device_desc.allocator), else the process-wide default
 * (salvo_default_allocator_set), else malloc/free. alloc returns memory
 * aligned for any object (as malloc) or NULL; salvo then returns
 * SALVO_ERROR_OUT_OF_HOST_MEMORY from the call that needed it (or does
 * without), and never needs memory to return a batch's resources, to
 * recover from a failure or to destroy anything (writing the pipeline
 * cache file at device destroy aside: skipped when refused).
 * Not through it: the Vulkan loader's, layers' and driver's own
 * allocations (no VkAllocationCallbacks are passed: Vulkan asks for
 * aligned allocation and reallocation, which this interface has not), and
 * those of the glslang compiler behind salvo_kernel_desc.glsl (C++ new). */
typedef struct salvo_allocator {
    void *(*alloc)(void *user, size_t size);
    void (*free)(void *user, void *ptr);
    void *user;
} salvo_allocator;

/* Set the process-wide default allocator, used where no device's applies:
 * salvo_device_enumerate, and every device created with
 * salvo_device_desc.allocator NULL. The allocator is copied; NULL restores
 * malloc/free. alloc and free must be given together
 * (SALVO_ERROR_INVALID_ARGUMENT otherwise, and nothing changes).
 * Thread safety: any thread. Lifetime: a device keeps the allocator it was
 * created with until it is destroyed, whatever the default becomes; the
 * allocator's user data must outlive every device using it. */
SALVO_API salvo_status salvo_default_allocator_set(const salvo_allocator *allocator);

enum {
    SALVO_NAME_MAX = 256
};

typedef struct salvo_device_entry {
    char name[SALVO_NAME_MAX]; /* the enumerated name: what desc.name matches */
    salvo_device_type type;
    uint32_t vendor_id;
    uint32_t device_id;
    uint32_t api_version; /* Vulkan version, VK_MAKE_API_VERSION encoding */
} salvo_device_entry;

/* Device creation flags. */
enum {
    /* Enable VK_LAYER_KHRONOS_validation; its messages go to the log
     * callback and are counted in salvo_stats.validation_messages.
     * Also enabled by the environment variable SALVO_VALIDATION=1. */
    SALVO_DEVICE_VALIDATION = 1u << 0,
    /* Also enable synchronization validation (implies VALIDATION).
     * SALVO_VALIDATION=2 in the environment. */
    SALVO_DEVICE_SYNC_VALIDATION = 1u << 1,
    /* Move every explicit transfer through a staging buffer even where
     * device memory is host-visible (tests the staged path; transfers
     * from 8 MiB on still import the caller's memory, as staged ones do). */
    SALVO_DEVICE_FORCE_STAGING = 1u << 2,
    /* Bind buffers through descriptor pools even where the device has push
     * descriptors (the default there). $SALVO_DESCRIPTORS=pool likewise. */
    SALVO_DEVICE_POOL_DESCRIPTORS = 1u << 3,
    /* Shader printf: each line a kernel prints (GLSL debugPrintfEXT,
     * GL_EXT_debug_printf) goes to the log at INFO, file "printf", line 0,
     * as "kernel 'name': text", and is not a validation message. Through
     * the validation layer's debug printf: implies VALIDATION (the stderr
     * sink then prints from info on). The device runs one hardware queue,
     * and each submission returns only once its work is done (the layer
     * reads what was printed there); work waiting on a gate is kept on the
     * host until the gate is raised. Lines print as the layer formats them
     * (%d, %u, %x, %f, vectors with %v...). Also $SALVO_PRINTF=1. Not on a
     * device from salvo_device_create_vk. */
    SALVO_DEVICE_PRINTF = 1u << 4,
    /* A wait polls for spin_us (100 us by default) and then blocks, even
     * on a GPU, where a wait otherwise polls to its end while fewer
     * threads poll than the process has CPUs (salvo_device_info's
     * poll_whole_wait; CUDA's cudaDeviceScheduleBlockingSync against its
     * default). Setting $SALVO_SPIN_US does the same. */
    SALVO_DEVICE_BLOCKING_WAIT = 1u << 5
};

typedef struct salvo_device_desc {
    /* Exact enumerated name; NULL: $SALVO_DEVICE, else the preferred device
     * (discrete > integrated > virtual > CPU > other). */
    const char *name;
    /* Launches per submitted batch. 0: $SALVO_BATCH, else the default.
     * 1: submit and wait at every command (launch, copy, fill, stream
     * transfer, image copy, graph replay, recorded Vulkan commands).
     * At most 1048576 (2**20): a larger one is refused
     * (SALVO_ERROR_INVALID_ARGUMENT). */
    uint32_t batch_size;
    /* Bound on each fence wait, in seconds. 0: $SALVO_FENCE_TIMEOUT_S,
     * else no bound. More than 1e9 (INFINITY too): no bound. Negative or
     * NaN: refused (SALVO_ERROR_INVALID_ARGUMENT). */
    double fence_timeout_s;
    /* Queued releases past which the next launch first runs them.
     * 0: $SALVO_RELEASE_MAX_COUNT / $SALVO_RELEASE_MAX_BYTES, else defaults. */
    uint32_t release_max_count;
    uint64_t release_max_bytes;
    salvo_log_fn log;
    void *log_user;
    const salvo_allocator *allocator; /* NULL: the default (salvo_default_allocator_set) */
    uint32_t flags;                   /* SALVO_DEVICE_* */
    /* Fault injection (see README, "Testing your failure handling"), same
     * syntax as $SALVO_FAULT: "op:n:result[:always][,...]". NULL: $SALVO_FAULT. */
    const char *fault;
    /* A file holding the driver's pipeline cache across processes: read at
     * create (a missing, short, unreadable or foreign file, one written for
     * another device or driver, starts the cache empty), used by every
     * kernel creation, written back at destroy (to a temporary file in the
     * same directory, then renamed over it). NULL: $SALVO_PIPELINE_CACHE,
     * else no file (the cache then lives only as long as the device). */
    const char *pipeline_cache_path;
} salvo_device_desc;

typedef struct salvo_memory_heap {
    uint64_t size;
    bool device_local;
} salvo_memory_heap;

/* Subgroup operations kernels may use (SPIR-V GroupNonUniform*
 * capabilities); the bits are Vulkan's VkSubgroupFeatureFlagBits. */
enum {
    SALVO_SUBGROUP_BASIC = 1u << 0,
    SALVO_SUBGROUP_VOTE = 1u << 1,
    SALVO_SUBGROUP_ARITHMETIC = 1u << 2,
    SALVO_SUBGROUP_BALLOT = 1u << 3,
    SALVO_SUBGROUP_SHUFFLE = 1u << 4,
    SALVO_SUBGROUP_SHUFFLE_RELATIVE = 1u << 5,
    SALVO_SUBGROUP_CLUSTERED = 1u << 6,
    SALVO_SUBGROUP_QUAD = 1u << 7
};

/* Float-controls execution modes a kernel may declare (SPIR-V
 * DenormPreserve, DenormFlushToZero, SignedZeroInfNanPreserve,
 * RoundingModeRTE, RoundingModeRTZ), each per float width: bit
 * SALVO_FLOAT_CONTROL(mode, width) of salvo_device_features.float_controls,
 * with width 16, 32 or 64 (Vulkan 1.2's float-controls properties). */
enum {
    SALVO_FLOAT_DENORM_PRESERVE = 0,
    SALVO_FLOAT_DENORM_FLUSH_TO_ZERO = 1,
    SALVO_FLOAT_SIGNED_ZERO_INF_NAN_PRESERVE = 2,
    SALVO_FLOAT_ROUNDING_RTE = 3,
    SALVO_FLOAT_ROUNDING_RTZ = 4
};
#define SALVO_FLOAT_CONTROL(mode, width)                                                           \
    (1u << ((mode) * 3u + ((width) == 16 ? 0u : (width) == 32 ? 1u : 2u)))

/* The shader features salvo enabled on the device: every one of these the
 * device offers. salvo_kernel_create refuses (SALVO_ERROR_UNSUPPORTED) a
 * module that declares a SPIR-V capability needing one that is false here.
 * Names follow Vulkan's feature fields. */
typedef struct salvo_device_features {
    /* Kernels are checked against these fields. false on a device made
     * with salvo_device_create_vk: salvo cannot see what the application
     * enabled, so the fields are false and kernels are not checked. */
    bool checked;
    bool shader_float64;          /* capability Float64 */
    bool shader_int64;            /* Int64 */
    bool shader_int16;            /* Int16 */
    bool shader_int8;             /* Int8 */
    bool shader_float16;          /* Float16 */
    bool storage_buffer_8bit;     /* StorageBuffer8BitAccess */
    bool uniform_buffer_8bit;     /* UniformAndStorageBuffer8BitAccess */
    bool push_constant_8bit;      /* StoragePushConstant8 */
    bool storage_buffer_16bit;    /* StorageBuffer16BitAccess */
    bool uniform_buffer_16bit;    /* UniformAndStorageBuffer16BitAccess */
    bool push_constant_16bit;     /* StoragePushConstant16 */
    bool vulkan_memory_model;     /* VulkanMemoryModel */
    bool vulkan_memory_model_device_scope; /* VulkanMemoryModelDeviceScope */
    bool buffer_device_address;   /* PhysicalStorageBufferAddresses */
    bool variable_pointers_storage_buffer; /* VariablePointersStorageBuffer */
    bool variable_pointers;       /* VariablePointers */
    bool buffer_int64_atomics;    /* Int64Atomics on buffers */
    bool shared_int64_atomics;    /* Int64Atomics on workgroup memory */
    bool buffer_float32_atomic_add; /* AtomicFloat32AddEXT (VK_EXT_shader_atomic_float) */
    bool buffer_float64_atomic_add; /* AtomicFloat64AddEXT */
    bool integer_dot_product;     /* DotProduct* */
    /* SPV_KHR_non_semantic_info: modules with non-semantic instructions
     * (debugPrintfEXT's); Vulkan 1.3, or VK_KHR_shader_non_semantic_info. */
    bool non_semantic_info;
    /* Modules may use the LocalSizeId execution mode (SPIR-V 1.6 modules
     * from glslang carry it for local_size_x_id). */
    bool maintenance4;
    bool zero_initialize_workgroup_memory; /* workgroup variables with an initializer */
    bool subgroup_size_control;
    bool compute_full_subgroups;
    uint32_t subgroup_operations; /* SALVO_SUBGROUP_* usable in compute kernels */
    /* Dynamic (uniform, not per-invocation) indexing of arrays of buffers
     * (UniformBufferArrayDynamicIndexing, StorageBufferArrayDynamicIndexing). */
    bool uniform_buffer_array_dynamic_indexing;
    bool storage_buffer_array_dynamic_indexing;
    /* Image capabilities a module may declare (StorageImageExtendedFormats,
     * StorageImageReadWithoutFormat, StorageImageWriteWithoutFormat). */
    bool storage_image_extended_formats;
    bool storage_image_read_without_format;
    bool storage_image_write_without_format;
    uint32_t float_controls; /* SALVO_FLOAT_CONTROL bits */
    /* Dynamic indexing of arrays of images (SampledImageArrayDynamicIndexing,
     * StorageImageArrayDynamicIndexing): an array of textures or storage
     * images indexed by a value uniform across the launch. */
    bool sampled_image_array_dynamic_indexing;
    bool storage_image_array_dynamic_indexing;
    /* 32-bit float atomics on storage images: load, store and exchange
     * (imageAtomicExchange on an r32f image), and add (imageAtomicAdd,
     * AtomicFloat32AddEXT). A kernel that uses one the device does not
     * offer is refused with the reason. */
    bool image_float32_atomics;
    bool image_float32_atomic_add;
} salvo_device_features;

typedef struct salvo_device_info {
    char name[SALVO_NAME_MAX];
    salvo_device_type type;
    uint32_t vendor_id;
    uint32_t device_id;
    uint32_t api_version;
    uint32_t driver_version;
    char driver_name[SALVO_NAME_MAX];
    char driver_info[SALVO_NAME_MAX];
    /* compute limits */
    uint32_t max_workgroup_count[3];
    uint32_t max_workgroup_size[3];
    uint32_t max_workgroup_invocations;
    uint32_t max_push_constants_size;
    uint32_t max_storage_buffer_range;
    uint32_t max_bindings; /* storage buffers per kernel */
    uint64_t min_storage_buffer_offset_alignment;
    uint32_t max_uniform_buffer_range; /* bytes a uniform binding may cover */
    uint64_t min_uniform_buffer_offset_alignment;
    uint32_t subgroup_size;
    /* capabilities */
    /* Timeline semaphores: with them, each stream's batches signal a
     * timeline of the stream's own, and waits for its work are on that
     * (on one queue as on several); without them, on fences. */
    bool timeline_semaphores;
    bool host_import;
    uint64_t host_import_alignment; /* 0 when host_import is false */
    bool push_descriptors;      /* the device offers them */
    /* Hardware queues salvo runs streams on (streams take them in turn, so
     * streams on different queues run side by side); 1 where the device
     * has one, or no timeline semaphores. */
    uint32_t queue_count;
    /* The last of those queues is kept for streams that ask for a high
     * priority (salvo_stream_desc.priority), at a higher queue priority. */
    bool high_priority_queue;
    /* One more queue, of the device's copy engine: a stream's copy to or
     * from a HOST buffer that starts a batch runs there, beside kernels
     * (and staged salvo_buffer_write/read copy there); the stream stays in
     * order across its two queues. false where the device has no
     * transfer-only queue family, no timeline semaphores, or
     * $SALVO_TRANSFER_QUEUE is 0. */
    bool transfer_queue;
    bool push_descriptors_used; /* launches bind through them */
    uint32_t memory_heap_count;
    salvo_memory_heap memory_heaps[16];
    /* effective settings */
    uint32_t batch_size;
    double fence_timeout_s; /* 0 = unbounded */
    /* Bytes of workgroup (GLSL shared) memory a kernel may declare. */
    uint32_t max_workgroup_memory;
    salvo_device_features features;
    /* More effective settings, each from its salvo_device_desc field or
     * flag, else its environment variable (README, "Configuration"), else
     * the default. A variable whose value cannot be used is named in a
     * warning, with the value taken instead. */
    uint32_t validation;        /* 0 off, 1 the validation layer, 2 also synchronization validation */
    bool spirv_validate;        /* salvo_kernel_create runs SPIRV-Tools' validator */
    uint32_t spin_us;           /* a wait polls this long before it blocks */
    /* A wait polls until its work is done (or the fence timeout ends
     * it, as any wait), as long as fewer threads poll at once than the
     * process has CPUs: those its creating thread may run on, fewer where
     * a container's CPU limit allows fewer (a thread beyond them polls
     * spin_us, then blocks). The default
     * on a GPU: a core spent for the wait's length buys the driver's
     * wake-up, and a host that stays awake makes the next submit cheaper.
     * false on a CPU device, with SALVO_DEVICE_BLOCKING_WAIT, or with
     * $SALVO_SPIN_US set. */
    bool poll_whole_wait;
    uint32_t release_max_count; /* queued releases past which the next launch runs them first */
    uint64_t release_max_bytes; /* bytes of queued releases likewise */
    bool transfer_import;       /* staged transfers from 8 MiB import the caller's memory */
    bool fault_injection;       /* SALVO_FAULT rules are in force */
    bool pipeline_cache_file;   /* a file keeps the pipeline cache across runs */
    bool trace_file;            /* $SALVO_TRACE: a trace is written from create to destroy */
    uint32_t queue_family;      /* the Vulkan queue family streams run on (0 off Vulkan) */
    /* With no log callback: the level from which messages go to stderr
     * (SALVO_LOG_OFF: none). */
    salvo_log_level log_level;
} salvo_device_info;

typedef struct salvo_stats {
    /* live objects */
    uint64_t live_buffers;
    uint64_t live_kernels;
    uint64_t live_streams;
    uint64_t live_events;
    uint64_t live_gates;
    uint64_t live_buffer_bytes;
    /* deferred releases */
    uint64_t releases_pending;
    uint64_t release_bytes_pending;
    uint64_t releases_run;
    /* work */
    uint64_t launches_pending; /* open batches + batches in flight */
    uint64_t launches_total;
    uint64_t batches_submitted;
    uint64_t barriers_emitted;
    uint64_t transfer_bytes; /* explicit write/read */
    uint64_t direct_bindings;
    uint64_t validation_messages;
    /* Of transfer_bytes, those a staged salvo_buffer_write/read (from
     * 8 MiB on, on devices with host import) had the device copy straight
     * from or into the caller's own memory, imported for the call, with
     * no host copy. */
    uint64_t transfer_bytes_imported;
    uint64_t live_graphs; /* graphs made and not yet released (captures in progress count) */
    uint64_t live_images;
    uint64_t live_image_bytes; /* texel bytes (what the driver allocates may be more) */
    uint64_t live_samplers;
    /* Graph replays that were a batch of their own, submitted as the
     * graph's recording made ahead (nothing recorded at the replay):
     * those made into a stream with nothing else recorded since its last
     * submission, while one of the graph's few such recordings was free. */
    uint64_t replays_ahead;
    /* Launches that were a batch of their own submitted as a recording
     * made ahead: a launch (direct or indirect) into a stream with nothing
     * else recorded since its last submission that repeats the stream's
     * launch before it (same kernel, workgroup counts or count buffer,
     * bindings and push constants, and no buffer, image, sampler or
     * kernel released in between), on a device that pushes descriptors,
     * the kernel binding no array of buffers and reaching no buffer by
     * address (the guide's "Streams and batching"). */
    uint64_t launches_ahead;
} salvo_stats;

/* List the Vulkan devices that can run compute. With entries NULL, sets
 * *count to the number available; otherwise fills up to *count entries and
 * sets *count to the number written. Thread safety: any thread. */
SALVO_API salvo_status salvo_device_enumerate(salvo_device_entry *entries, uint32_t *count);

/* Open a device (see salvo_device_desc for the choice).
 * Thread safety: any thread. Lifetime: until salvo_device_destroy; every
 * object created from it must be destroyed first (or is reclaimed then). */
SALVO_API salvo_status salvo_device_create(const salvo_device_desc *desc, salvo_device **out);

/* Wait for all work, run every queued release, destroy what is left and
 * close the device. Gates still alive are first raised as salvo_gate_destroy
 * raises them, so that work waiting on them (and host calls behind it) runs
 * and the wait ends. Objects still alive are reclaimed (logged as a warning);
 * their handles must not be used again. NULL is a no-op.
 * Thread safety: no other call on this device may be in progress. */
SALVO_API void salvo_device_destroy(salvo_device *device);

/* Identity, limits, capabilities and effective settings.
 * Thread safety: any thread. */
SALVO_API salvo_status salvo_device_info_get(salvo_device *device, salvo_device_info *out);

/* True once the device has reported that it is lost. Sticky.
 * Thread safety: any thread. */
SALVO_API bool salvo_device_is_lost(salvo_device *device);

/* Submit and wait for every stream of the device. Every stream is drained
 * even when one fails; returns the first failure (consuming every
 * stream's kept failure). Once the device is lost it returns
 * SALVO_ERROR_DEVICE_LOST, whatever failure was kept before the loss
 * (salvo_last_error() names that one too).
 * Thread safety: no stream of the device may be used meanwhile. */
SALVO_API salvo_status salvo_device_synchronize(salvo_device *device);

/* A snapshot of the device's counters, consistent with one another: taken
 * under the device's lock (from a log callback, which may run under it,
 * without). Releases that found the lock busy are taken in first; it runs
 * nothing else. Thread safety: any thread. */
SALVO_API salvo_status salvo_device_stats(salvo_device *device, salvo_stats *out);

/* One memory heap of the device, as salvo_device_memory_info finds it. */
typedef struct salvo_heap_usage {
    uint64_t size;     /* bytes (as salvo_device_info.memory_heaps) */
    bool device_local; /* the device's own memory (VRAM), not the host's */
    /* Bytes the process may hold in the heap before allocations fail or
     * slow the device down, what it holds included: the driver's figure,
     * which follows other processes' use (VK_EXT_memory_budget's
     * heapBudget). Where the device gives none (measured false): size. */
    uint64_t budget;
    /* Bytes the process holds in the heap now, every device and the
     * driver's own allocations included (heapUsage). Where the device
     * gives none (measured false): allocated, the part salvo knows of. */
    uint64_t usage;
    /* Bytes this device's buffers and images (and salvo's staging and
     * scratch buffers) hold in the heap, as salvo counts its own
     * allocations; memory imported from the host is not counted. */
    uint64_t allocated;
} salvo_heap_usage;

typedef struct salvo_memory_info {
    /* budget and usage are the driver's (the device has
     * VK_EXT_memory_budget, which salvo then enables; on a device from
     * salvo_device_create_vk, where the application enabled it). false:
     * budget is each heap's size and usage salvo's own count. */
    bool measured;
    uint32_t heap_count;
    salvo_heap_usage heaps[16];
} salvo_memory_info;

/* The device's memory heaps now: sizes, what the process may use and uses
 * of each, what this device allocated (as cudaMemGetInfo, per heap: the
 * memory free to allocate in a heap is about budget - usage). The figures
 * move with every allocation and free of the process (a destroyed
 * buffer's memory goes once no pending work uses it: synchronize first to
 * see it gone) and, where measured, with other processes' use; a driver
 * may update its figures only now and then.
 * SALVO_ERROR_INVALID_ARGUMENT: device or out NULL.
 * Thread safety: any thread; it takes no lock of salvo's. */
SALVO_API salvo_status salvo_device_memory_info(salvo_device *device, salvo_memory_info *out);

/* ------------------------------------------------------------------ */
/* Traces                                                              */
/* ------------------------------------------------------------------ */

/* Write a trace of the device's batches and launches to path (created or
 * truncated), in the Trace Event JSON format that Perfetto and
 * chrome://tracing open: per stream, each launch and copy as the host
 * recorded it and each batch's submit, and the device's start and end of
 * each batch and of each launch in it (GPU timestamps). Only batches opened
 * while tracing are traced, each written once it is seen complete. GPU
 * times are placed on the host clock by one offset, taken from the first
 * traced batch: an approximation (see README, "Traces"). Tracing costs
 * host time (a clock read per launch, the events written at each batch's
 * end) and two GPU timestamps per launch; off, it allocates nothing and
 * costs a few pointer tests per launch.
 * $SALVO_TRACE=path starts it at salvo_device_create (a failure is then
 * only logged). SALVO_ERROR_INVALID_STATE when the device is tracing
 * already; SALVO_ERROR_UNSUPPORTED when it cannot write GPU timestamps;
 * SALVO_ERROR_INVALID_ARGUMENT when path cannot be created.
 * Thread safety: any thread. Lifetime: until salvo_trace_stop or
 * salvo_device_destroy. */
SALVO_API salvo_status salvo_trace_start(salvo_device *device, const char *path);

/* Write what completed batches are left to write, then close the file
 * (valid JSON). Batches still open or running are left out (synchronize
 * first to include them; salvo_device_destroy does, then stops tracing
 * itself). SALVO_ERROR_INVALID_STATE when the device is not tracing;
 * SALVO_ERROR_UNKNOWN when a write failed (the file is incomplete).
 * Thread safety: any thread. */
SALVO_API salvo_status salvo_trace_stop(salvo_device *device);

/* ------------------------------------------------------------------ */
/* Buffers                                                             */
/* ------------------------------------------------------------------ */
typedef enum salvo_domain {
    SALVO_DOMAIN_DEVICE = 0, /* device-local; write/read are staged */
    SALVO_DOMAIN_HOST = 1,   /* host-visible, cached where possible; mappable */
    SALVO_DOMAIN_SHARED = 2  /* host-visible device-local where the device has it; mappable */
} salvo_domain;

/* Allocate exactly size bytes (size > 0) in domain. Contents are undefined.
 * Thread safety: any thread. Lifetime: until salvo_buffer_destroy. */
SALVO_API salvo_status salvo_buffer_create(salvo_device *device, uint64_t size, salvo_domain domain,
                                           salvo_buffer **out);

/* Import caller-owned host memory (VK_EXT_external_memory_host) as a HOST or
 * SHARED buffer. ptr and size must be multiples of
 * salvo_device_info.host_import_alignment.
 * Lifetime: the memory must stay allocated until the buffer is destroyed and
 * no launch that bound it is still pending.
 * Thread safety: any thread. */
SALVO_API salvo_status salvo_buffer_import_host(salvo_device *device, void *ptr, uint64_t size,
                                                salvo_domain domain, salvo_buffer **out);

/* Copy host memory into the buffer. Ordered after every launch already
 * made on any stream of the device that uses the buffer; returns once the
 * bytes are in place. Not ordered with host calls: a pending
 * salvo_stream_host_call whose fn writes the buffer through its mapping
 * may run before or after this write (synchronize the stream first). SALVO_ERROR_TIMEOUT, nothing written, when that work
 * (or, for a staged write, work a gate holds ahead of it on the queue) did
 * not complete within the fence timeout; once its copies have begun a
 * write waits for them to the end, whatever the fence timeout (a copy left
 * running would race with whatever the program does next with the
 * buffer). The bytes are copied with no lock held. Where the buffer cannot be mapped (device memory of
 * most GPUs), the bytes go through a staging buffer; from 8 MiB on, on a
 * device with host import, the page-aligned middle of src is imported for
 * the call instead and copied by the device with no host copy (counted in
 * salvo_stats.transfer_bytes_imported; memory the driver will not import
 * is staged; $SALVO_TRANSFER_IMPORT=0 stages everything). Thread safety:
 * any thread. */
SALVO_API salvo_status salvo_buffer_write(salvo_buffer *buffer, uint64_t offset, const void *src,
                                          uint64_t size);

/* Copy buffer contents to host memory, after every launch already made that
 * uses the buffer has completed (their batches are submitted first). Large
 * reads import the middle of dst as writes import src's. Not ordered with
 * host calls: a pending salvo_stream_host_call whose fn writes the buffer
 * through its mapping may not have run yet (synchronize its stream first). Timeouts as for
 * salvo_buffer_write (SALVO_ERROR_TIMEOUT: nothing read).
 * Thread safety: any thread; not concurrently with a write of the same bytes. */
SALVO_API salvo_status salvo_buffer_read(salvo_buffer *buffer, uint64_t offset, void *dst,
                                         uint64_t size);

/* Persistent pointer to a HOST or SHARED buffer's memory (coherent). The
 * host must synchronize the streams that use the buffer before reading what
 * they wrote. SALVO_ERROR_INVALID_ARGUMENT for a DEVICE buffer.
 * Lifetime: valid until the buffer is destroyed.
 * Thread safety: any thread. */
SALVO_API salvo_status salvo_buffer_map(salvo_buffer *buffer, void **out);

/* Size in bytes.
 * Thread safety: any thread. */
SALVO_API uint64_t salvo_buffer_size(const salvo_buffer *buffer);

/* The buffer's device address, for kernels that reach memory through
 * buffer references (GL_EXT_buffer_reference; SPIR-V
 * PhysicalStorageBufferAddresses): pass it in push constants or store it
 * in another buffer. Needs salvo_device_info.features.buffer_device_address
 * (SALVO_ERROR_UNSUPPORTED otherwise). The address is fixed for the
 * buffer's life and valid while the buffer lives.
 * What salvo cannot see it treats conservatively: a launch of a kernel
 * that declares PhysicalStorageBufferAddresses is ordered after all
 * earlier work of its stream and before all later work (a full barrier on
 * either side, in batches and in graphs); a host read or write of a buffer
 * whose address was taken waits for every such launch made before it, on
 * any stream; and the buffer's memory, as every buffer's, is freed only
 * once all work made before salvo_buffer_destroy is complete. Across
 * streams, order the work with events, as for bound buffers.
 * Thread safety: any thread. */
SALVO_API salvo_status salvo_buffer_address(salvo_buffer *buffer, uint64_t *out);

/* Release the buffer. Never blocks: the memory is freed once no pending
 * launch can read it. NULL is a no-op. Thread safety: any thread, once no
 * other call uses this buffer. */
SALVO_API void salvo_buffer_destroy(salvo_buffer *buffer);

/* ------------------------------------------------------------------ */
/* Images and samplers                                                 */
/* ------------------------------------------------------------------ */
typedef struct salvo_image salvo_image;
typedef struct salvo_sampler salvo_sampler;

typedef enum salvo_image_type {
    SALVO_IMAGE_1D = 1,
    SALVO_IMAGE_2D = 2,
    SALVO_IMAGE_3D = 3,
    SALVO_IMAGE_2D_ARRAY = 4 /* layers of 2D images (GLSL image2DArray, sampler2DArray) */
} salvo_image_type;

/* Texel formats: R, RG and RGBA of 8, 16 and 32-bit components. UNORM and
 * SNORM read as floats in [0, 1] and [-1, 1]; UINT and SINT as integers;
 * FLOAT as floats (16 and 32-bit). Host memory holds texels tightly
 * packed, components in R, G, B, A order, each in the host's byte order.
 * Which ones a device offers, for which use: salvo_image_format_support. */
typedef enum salvo_format {
    SALVO_FORMAT_UNDEFINED = 0,
    SALVO_FORMAT_R8_UNORM, SALVO_FORMAT_R8_SNORM, SALVO_FORMAT_R8_UINT, SALVO_FORMAT_R8_SINT,
    SALVO_FORMAT_RG8_UNORM, SALVO_FORMAT_RG8_SNORM, SALVO_FORMAT_RG8_UINT, SALVO_FORMAT_RG8_SINT,
    SALVO_FORMAT_RGBA8_UNORM, SALVO_FORMAT_RGBA8_SNORM, SALVO_FORMAT_RGBA8_UINT,
    SALVO_FORMAT_RGBA8_SINT,
    SALVO_FORMAT_R16_UNORM, SALVO_FORMAT_R16_SNORM, SALVO_FORMAT_R16_UINT, SALVO_FORMAT_R16_SINT,
    SALVO_FORMAT_R16_FLOAT,
    SALVO_FORMAT_RG16_UNORM, SALVO_FORMAT_RG16_SNORM, SALVO_FORMAT_RG16_UINT,
    SALVO_FORMAT_RG16_SINT, SALVO_FORMAT_RG16_FLOAT,
    SALVO_FORMAT_RGBA16_UNORM, SALVO_FORMAT_RGBA16_SNORM, SALVO_FORMAT_RGBA16_UINT,
    SALVO_FORMAT_RGBA16_SINT, SALVO_FORMAT_RGBA16_FLOAT,
    SALVO_FORMAT_R32_UINT, SALVO_FORMAT_R32_SINT, SALVO_FORMAT_R32_FLOAT,
    SALVO_FORMAT_RG32_UINT, SALVO_FORMAT_RG32_SINT, SALVO_FORMAT_RG32_FLOAT,
    SALVO_FORMAT_RGBA32_UINT, SALVO_FORMAT_RGBA32_SINT, SALVO_FORMAT_RGBA32_FLOAT,
    SALVO_FORMAT_COUNT /* not a format: one past the last */
} salvo_format;

/* Uses of an image (salvo_image_desc.usage) and what a format supports
 * (salvo_image_format_support). */
enum {
    SALVO_IMAGE_STORAGE = 1u << 0, /* imageLoad/imageStore (storage image binding) */
    SALVO_IMAGE_SAMPLED = 1u << 1, /* texelFetch/texture through a sampler */
    /* Only from salvo_image_format_support: a sampler may filter it
     * linearly (SALVO_FILTER_LINEAR). */
    SALVO_IMAGE_LINEAR_FILTER = 1u << 2
};

typedef struct salvo_image_desc {
    salvo_image_type type;
    salvo_format format;
    uint32_t width;
    uint32_t height; /* 1D: 0 or 1 */
    uint32_t depth;  /* 3D only; otherwise 0 or 1 */
    uint32_t layers; /* 2D_ARRAY only (at least 1); otherwise 0 or 1 */
    /* SALVO_IMAGE_STORAGE and/or SALVO_IMAGE_SAMPLED; 0: every use the
     * device offers for the format. */
    uint32_t usage;
} salvo_image_desc;

/* Bytes of one texel of format (1 to 16), 0 for an unknown one. Pure:
 * any thread. */
SALVO_API uint32_t salvo_format_texel_size(salvo_format format);
/* "RGBA8_UNORM"; "UNDEFINED" for SALVO_FORMAT_UNDEFINED, "unknown" for a
 * value that is no format; a static string. Pure: any thread. */
SALVO_API const char *salvo_format_name(salvo_format format);

/* What the device offers for format in images: SALVO_IMAGE_* bits in
 * *usage (0: the format cannot be used). Thread safety: any thread. */
SALVO_API salvo_status salvo_image_format_support(salvo_device *device, salvo_format format,
                                                  uint32_t *usage);

/* Create an image in device memory, ready for use (salvo keeps every
 * image in the one layout that storage, sampled and transfer use all
 * accept, so nothing is transitioned between launches). Bringing it into
 * that layout is device work, which the call waits for (a layout change:
 * microseconds) so that every later use, on any stream or queue, finds
 * the image ready without ordering itself after it; it goes to a queue no
 * gate holds, so the call never waits for other work (where every queue
 * has gated work on the device it waits for that, bounded by the fence
 * timeout: SALVO_ERROR_TIMEOUT, nothing created). Its texels hold
 * nothing defined until written. A format or usage the device does not
 * offer: SALVO_ERROR_UNSUPPORTED naming the format; extents of 0, beyond
 * the device's limits, or inconsistent with the type:
 * SALVO_ERROR_INVALID_ARGUMENT. Counted in salvo_stats.live_images and
 * live_image_bytes. Thread safety: any thread. */
SALVO_API salvo_status salvo_image_create(salvo_device *device, const salvo_image_desc *desc,
                                          salvo_image **out);

/* The image's description (usage as resolved at create); NULL image or
 * out: SALVO_ERROR_INVALID_ARGUMENT. Thread safety: any thread, while the
 * image lives. */
SALVO_API salvo_status salvo_image_desc_get(const salvo_image *image, salvo_image_desc *out);

/* A box of texels: origin (x, y, z) and extent; for 2D arrays, layers
 * [layer, layer + layers). Zero extents (and layers 0) mean "to the end"
 * from the origin, so a zeroed region, or a NULL pointer where one is
 * taken, is the whole image. Host memory for a region is tightly packed:
 * width texels a row, height rows a slice, depth slices a layer. */
typedef struct salvo_image_region {
    uint32_t x, y, z;
    uint32_t width, height, depth;
    uint32_t layer, layers;
} salvo_image_region;

/* Host <-> image, staged through a buffer and waited for, as
 * salvo_buffer_write/read: the call first waits for every batch that used
 * the image, then returns with the copy done. Not ordered with host
 * calls: a pending salvo_stream_host_call's fn may run before or after
 * (synchronize its stream first). SALVO_ERROR_INVALID_STATE from a host
 * call's fn. size must equal the
 * region's bytes (texels times salvo_format_texel_size). Thread safety:
 * any thread; a write must not run beside launches that use the image. */
SALVO_API salvo_status salvo_image_write(salvo_image *image, const salvo_image_region *region,
                                         const void *src, uint64_t size);
SALVO_API salvo_status salvo_image_read(salvo_image *image, const salvo_image_region *region,
                                        void *dst, uint64_t size);

/* Stream-ordered copies between a buffer (texels tightly packed from
 * offset, a multiple of the texel size) and a region of an image, in
 * batches as salvo_copy, ordered against launches by what they read and
 * write, and captured into graphs. Thread safety: as salvo_launch. */
SALVO_API salvo_status salvo_copy_buffer_to_image(salvo_stream *stream, salvo_buffer *src,
                                                  uint64_t src_offset, salvo_image *dst,
                                                  const salvo_image_region *region);
SALVO_API salvo_status salvo_copy_image_to_buffer(salvo_stream *stream, salvo_image *src,
                                                  const salvo_image_region *region,
                                                  salvo_buffer *dst, uint64_t dst_offset);

/* Copy src_region of src into dst_region of dst on the device, in stream
 * order and batched as salvo_copy_buffer_to_image (ordered against
 * launches by what they read and write, captured into graphs). Regions as
 * salvo_image_region says (NULL: the whole image); once resolved, the two
 * must have the same extents. The formats need texels of one size (bytes
 * are copied as they are: R32_UINT to RGBA8_UNORM is a copy of the bits),
 * the types must match (2D and 2D arrays count as one), and within one
 * image (a 2D array's layers) the two regions must be in different layers:
 * SALVO_ERROR_INVALID_ARGUMENT with a message otherwise, nothing
 * recorded. Counts in salvo_stats.transfer_bytes.
 * Thread safety: as salvo_launch. Lifetime: both images as any a stream
 * uses (their releases wait for the copy). */
SALVO_API salvo_status salvo_copy_image(salvo_stream *stream, salvo_image *src,
                                        const salvo_image_region *src_region, salvo_image *dst,
                                        const salvo_image_region *dst_region);

/* Release the image: as salvo_buffer_destroy, never blocks, the memory is
 * freed once no pending work can use it. NULL is a no-op. */
SALVO_API void salvo_image_destroy(salvo_image *image);

typedef enum salvo_filter {
    SALVO_FILTER_NEAREST = 0,
    SALVO_FILTER_LINEAR = 1 /* needs SALVO_IMAGE_LINEAR_FILTER for the image's format */
} salvo_filter;

typedef enum salvo_address_mode {
    SALVO_ADDRESS_CLAMP_TO_EDGE = 0,
    SALVO_ADDRESS_REPEAT = 1,
    SALVO_ADDRESS_MIRRORED_REPEAT = 2,
    SALVO_ADDRESS_CLAMP_TO_BORDER = 3 /* outside reads as 0 (transparent black) */
} salvo_address_mode;

typedef struct salvo_sampler_desc {
    salvo_filter filter;            /* magnification and minification */
    salvo_address_mode address[3];  /* u, v, w */
    /* Coordinates in texels rather than in [0, 1]. Then (Vulkan's rule)
     * the address modes must be CLAMP_TO_EDGE or CLAMP_TO_BORDER, and the
     * sampler may be used with 1D and 2D images only. */
    bool unnormalized;
} salvo_sampler_desc;

/* A sampler, bound beside a sampled image (salvo_binding.sampler) for a
 * kernel's sampler2D and the like, or alone for a `sampler`. NULL desc:
 * nearest, clamp to edge, normalized. Counted in salvo_stats.live_samplers.
 * Thread safety: any thread. */
SALVO_API salvo_status salvo_sampler_create(salvo_device *device, const salvo_sampler_desc *desc,
                                            salvo_sampler **out);
/* As salvo_image_destroy. */
SALVO_API void salvo_sampler_destroy(salvo_sampler *sampler);

/* ------------------------------------------------------------------ */
/* Kernels                                                             */
/* ------------------------------------------------------------------ */
typedef struct salvo_spec_constant {
    uint32_t id;
    /* int, uint, float bits or bool (0/1). For an 8- or 16-bit constant
     * the low bits (a negative value may come sign-extended); a value for
     * a 64-bit constant is refused (see salvo_kernel_create). */
    uint32_t value;
} salvo_spec_constant;

typedef struct salvo_kernel_desc {
    const uint32_t *spirv; /* SPIR-V module words */
    size_t spirv_size;     /* in bytes, a multiple of 4 */
    const char *entry;     /* entry point; NULL = "main" */
    const char *name;      /* used in error messages; NULL = entry */
    const salvo_spec_constant *spec_constants;
    uint32_t spec_constant_count;
    /* GLSL source of a compute shader (NUL-terminated), compiled at run
     * time when spirv is NULL: as salvo_add_shader() does at build time
     * (Vulkan 1.1, SPIR-V 1.3, entry "main"; no #version line reads as
     * 450). Give exactly one of spirv and glsl. */
    const char *glsl;
} salvo_kernel_desc;

/* What a kernel declares, reflected from its module. */
typedef enum salvo_access {
    SALVO_ACCESS_READ = 1,
    SALVO_ACCESS_WRITE = 2,
    SALVO_ACCESS_READ_WRITE = 3
} salvo_access;

/* What a binding holds (salvo_kernel_binding.kind). */
typedef enum salvo_binding_kind {
    SALVO_BINDING_BUFFER = 0,        /* a storage or uniform buffer (.uniform says which) */
    SALVO_BINDING_STORAGE_IMAGE = 1, /* image2D and the like: salvo_binding.image */
    SALVO_BINDING_SAMPLED_IMAGE = 2, /* texture2D (separate from its sampler): .image */
    SALVO_BINDING_SAMPLER = 3,       /* sampler: .sampler */
    SALVO_BINDING_IMAGE_SAMPLER = 4  /* sampler2D and the like: .image and .sampler */
} salvo_binding_kind;

typedef struct salvo_kernel_binding {
    uint32_t binding;
    salvo_access access; /* merged over the declarations that alias the binding */
    bool uniform; /* a uniform buffer rather than a storage buffer */
    uint32_t count; /* array elements (1 when not an array) */
    salvo_binding_kind kind;
    /* Images: the dimensionality the kernel declares, and for a storage
     * image the format it names (SALVO_FORMAT_UNDEFINED: none, or one
     * salvo has no enumerator for); a bound image must match both. */
    salvo_image_type image_type;
    salvo_format image_format;
} salvo_kernel_binding;

/* The most buffers one launch binds: bindings, counting each element of
 * an array of buffers. */
enum {
    SALVO_MAX_BINDINGS = 32
};

typedef struct salvo_kernel_info {
    char name[SALVO_NAME_MAX];
    uint32_t binding_count;
    salvo_kernel_binding bindings[SALVO_MAX_BINDINGS];
    uint32_t push_constant_size;
    uint32_t local_size[3];
} salvo_kernel_info;

/* Build a compute pipeline from SPIR-V or from GLSL compiled first.
 * Bindings (descriptor set 0: storage or uniform buffers; storage images,
 * sampled images, samplers and combined image samplers of 1D, 2D, 3D and
 * 2D-array images; each alone or in arrays of constant length), their
 * access (and for images their type and declared format), the
 * push-constant size and the
 * local size are reflected from the module, counting only what the chosen
 * entry point's call tree uses (what other entry points of the module use
 * is ignored). Several declarations of one binding (aliases: one buffer
 * seen as several block types) are one binding whose access is the union
 * of theirs; they must agree on uniform or storage and on the array
 * length. A module that is not well-formed SPIR-V, has no such entry
 * point or puts a binding outside descriptor set 0, GLSL that does not
 * compile (salvo_last_error() then carries the compiler's messages), or
 * both or neither of spirv and glsl returns SALVO_ERROR_INVALID_ARGUMENT;
 * GLSL in a salvo built without it (SALVO_GLSL=OFF) returns
 * SALVO_ERROR_UNSUPPORTED. Given SPIR-V is checked in full by SPIRV-Tools'
 * validator (spirv-val's rules for the device's Vulkan version;
 * SALVO_ERROR_INVALID_ARGUMENT with its first message) when the device
 * runs with the validation layer (SALVO_DEVICE_VALIDATION, $SALVO_VALIDATION)
 * or $SALVO_SPIRV_VALIDATE=1 ($SALVO_SPIRV_VALIDATE=0: never), and where
 * salvo was built with SPIRV-Tools (SALVO_SPIRV_VALIDATE); it costs about
 * 50 to 170 us per KB of SPIR-V. The validator runs before every other
 * check but the SPIR-V version's, so an invalid module is refused as
 * invalid whatever it declares. Otherwise salvo checks the structure it
 * reads (header, instruction lengths, the entry point, the types of what
 * it binds) and leaves the rest of an invalid module to the driver. A
 * valid module that binds what salvo does not (texel buffers, cube,
 * multisampled or 1D-array images, an image format with no salvo_format
 * (named as SPIR-V names it), depth-comparison samplers (sampler2DShadow
 * and the like: salvo has no depth formats or compare samplers),
 * acceleration structures, runtime arrays, more than SALVO_MAX_BINDINGS
 * resources) returns
 * SALVO_ERROR_UNSUPPORTED naming the binding and the kind. A module the device
 * cannot run returns SALVO_ERROR_UNSUPPORTED with a message saying why: a
 * SPIR-V capability needing a feature the device does not offer
 * (salvo_device_info.features; "needs capability Float64, which the device
 * does not offer"), a capability salvo enables nothing for (by its SPIR-V
 * name and number, "which salvo does not support": CooperativeMatrixKHR,
 * RayQueryKHR, DerivativeControl; a number SPIR-V has no name for is said
 * "unknown"), a SPIR-V extension salvo does not know (named), a float-controls execution mode the device lacks for that
 * width (features.float_controls), a SPIR-V version newer than the
 * device's Vulkan version accepts (1.3 for Vulkan 1.1, 1.5 for 1.2, 1.6
 * for 1.3), the LocalSizeId execution mode without maintenance4, more
 * buffers than max_bindings, more uniform blocks than the device allows a
 * kernel (Vulkan's maxPerStageDescriptorUniformBuffers), a push-constant
 * block (rounded up to whole 4-byte words) larger than
 * max_push_constants_size, or workgroup (shared)
 * variables larger in total than salvo_device_info.max_workgroup_memory
 * (sized by Vulkan's rule: each variable laid out as a std430 block member,
 * one after another; an array sized by a specialization constant counts
 * with the value spec_constants gives it, else its default, here and in
 * the push-constant block; lengths given by spec constant expressions are
 * left to the driver). A value for a 64-bit spec constant returns
 * SALVO_ERROR_UNSUPPORTED (salvo_spec_constant holds 32 bits: leave it at
 * its default), and one that does not fit an 8- or 16-bit constant
 * SALVO_ERROR_INVALID_ARGUMENT, each naming the constant. On a
 * device from salvo_device_create_vk only the workgroup memory is checked
 * (features.checked is false). With
 * salvo_device_desc.pipeline_cache_path, a pipeline built before (by this
 * or an earlier process) comes from the cache. Thread safety: any thread. */
SALVO_API salvo_status salvo_kernel_create(salvo_device *device, const salvo_kernel_desc *desc,
                                           salvo_kernel **out);

SALVO_API salvo_status salvo_kernel_info_get(const salvo_kernel *kernel, salvo_kernel_info *out);

/* Release the kernel; never blocks (deferred while launches use it).
 * Thread safety: any thread, once no other call uses this kernel. */
SALVO_API void salvo_kernel_destroy(salvo_kernel *kernel);

/* ------------------------------------------------------------------ */
/* Streams and launches                                                */
/* ------------------------------------------------------------------ */
typedef struct salvo_stream_desc {
    uint32_t batch_size; /* 0 = the device's */
    /* Launches in the first batch after the stream was created or
     * synchronized; each following batch doubles up to batch_size, so the
     * device starts early and long runs still get full batches.
     * 0 = the default (16); batch_size or more = full batches at once. */
    uint32_t first_batch;
    /* 0: normal. Positive: high; the stream runs on the device's
     * high-priority queue, which salvo keeps for such streams where it
     * uses three queues or more (salvo_device_info.high_priority_queue):
     * the queue is created with a higher priority than the others, which
     * drivers may use to prefer its work. Where there is none, the stream
     * runs as a normal one. Negative values are as 0. */
    int32_t priority;
} salvo_stream_desc;

typedef struct salvo_binding {
    uint32_t binding;      /* binding number in descriptor set 0 */
    salvo_buffer *buffer;
    uint64_t offset;       /* multiple of min_storage_buffer_offset_alignment
                              (min_uniform_buffer_offset_alignment for a
                              uniform block) */
    uint64_t size;         /* 0 = to the end of the buffer; at most
                              max_storage_buffer_range (max_uniform_buffer_range) */
    /* Element of an array of buffers (`buffer B {...} b[4]`): each element
     * is bound by its own salvo_binding, every one of them at each launch.
     * 0 for a binding that is not an array. */
    uint32_t element;
    /* For image and sampler bindings (salvo_binding_kind), instead of
     * buffer, offset and size, which are then left 0: the image, and the
     * sampler. */
    salvo_image *image;
    salvo_sampler *sampler;
} salvo_binding;

/* An in-order queue of launches. Thread safety: a stream is used by one
 * thread at a time. Lifetime: until salvo_stream_destroy. */
SALVO_API salvo_status salvo_stream_create(salvo_device *device, const salvo_stream_desc *desc,
                                           salvo_stream **out);

/* Release the stream. Never blocks and never submits: launches already
 * made are submitted at the device's next drain point (any flush,
 * synchronize or device destroy) and run to completion; a failure among
 * them is logged, as no caller is left to report it to. NULL is a no-op.
 * Thread safety: any thread, once no other call uses this stream. */
SALVO_API void salvo_stream_destroy(salvo_stream *stream);

/* Record one dispatch of kernel with groups[0..2] workgroups. Every binding
 * the kernel declares must be given exactly once (each element of an array
 * of buffers by its own salvo_binding, so binding_count counts elements);
 * push_size must equal the
 * kernel's push-constant size. Sees the writes of every earlier launch on
 * the stream. May submit the batch (when full). Waits only when the
 * stream's next batch slot is still in flight (SALVO_ERROR_TIMEOUT: not
 * recorded) or, with a batch size of 1, for the launch itself
 * (SALVO_TIMEOUT: recorded and running); see "Timeouts".
 * Thread safety: the one thread using the stream at a time; other streams of the device may be used from other threads meanwhile. */
SALVO_API salvo_status salvo_launch(salvo_stream *stream, salvo_kernel *kernel,
                                    const uint32_t groups[3], const salvo_binding *bindings,
                                    uint32_t binding_count, const void *push, uint32_t push_size);

/* Record one dispatch of kernel whose workgroup counts the device reads
 * when the dispatch runs: three uint32 (x, y, z) in count_buffer at
 * offset (a multiple of 4, the 12 bytes inside the buffer), as
 * cudaLaunchKernel cannot and vkCmdDispatchIndirect does. So an earlier
 * launch, copy or fill on the stream may compute them: the dispatch reads
 * them after that work, and later work that writes them waits for the
 * read, as for any buffer the launch binds (in graphs too: replay a graph
 * after the counts changed and the dispatch takes the new ones). A count
 * of 0 runs no workgroup. Counts above salvo_device_info's
 * max_workgroup_count are not checked (the device reads them) and are
 * the program's to prevent. Bindings and push constants as salvo_launch;
 * any buffer may hold the counts (one the kernel binds as well, or a
 * HOST buffer written through its mapping before the launch). A kernel
 * with SALVO_MAX_BINDINGS bindings is refused (the counts take one more
 * of a command's ranges). Counts as a launch; batches, waits and
 * timeouts as salvo_launch; in a capture, a node that salvo_graph_set_bindings
 * and salvo_graph_set_push update as a launch's (the count buffer stays).
 * Thread safety: as salvo_launch. Lifetime: count_buffer as a bound
 * buffer (its release waits for the launch). */
SALVO_API salvo_status salvo_launch_indirect(salvo_stream *stream, salvo_kernel *kernel,
                                             salvo_buffer *count_buffer, uint64_t offset,
                                             const salvo_binding *bindings,
                                             uint32_t binding_count, const void *push,
                                             uint32_t push_size);

/* Fill size bytes of buffer from offset (both multiples of 4) with the
 * 32-bit value repeated (as cudaMemsetAsync with a 32-bit pattern; a byte
 * pattern b is value = b * 0x01010101u), in stream order and batched like
 * a launch: a later launch on the stream sees the values, an earlier one's
 * use of the range is over first. Any domain. In a capture it is a node of
 * the graph. Counts as a launch in the batch. Timeouts as for salvo_copy.
 * Thread safety: as salvo_launch. */
SALVO_API salvo_status salvo_fill(salvo_stream *stream, salvo_buffer *buffer, uint64_t offset,
                                  uint64_t size, uint32_t value);

/* Fill size bytes of buffer from offset with a pattern of pattern_size
 * bytes (1, 2 or 4: as cudaMemsetD8, D16 and D32) repeated, starting at
 * offset: byte offset + i gets pattern[i % pattern_size]. Any offset;
 * size a whole number of patterns (not 0). Bytes outside the range keep
 * their values. Ordered, batched and captured as salvo_fill, which it is
 * where offset and size are multiples of 4; otherwise the partial words
 * at either end are written by a small kernel of salvo's (atomically:
 * another stream's write to the other bytes of those words is kept), on
 * the stream's compute queue, and later work that touches any byte of
 * those words waits for the fill, as earlier such work comes before it.
 * Counts as a launch in the batch. Timeouts as for salvo_copy.
 * Thread safety: as salvo_launch. Lifetime: pattern is read before the
 * call returns. */
SALVO_API salvo_status salvo_fill_pattern(salvo_stream *stream, salvo_buffer *buffer,
                                          uint64_t offset, uint64_t size, const void *pattern,
                                          uint32_t pattern_size);

/* Copy size bytes from src at src_offset to dst at dst_offset on the
 * device, in stream order (after the stream's earlier launches and copies,
 * before its later ones), batched like a launch. Any domains: a HOST buffer
 * the host filled through salvo_buffer_map and copied to a DEVICE buffer is
 * the fastest way in (and the reverse the fastest way out). Ranges of one
 * buffer must not overlap. Counts in salvo_stats.transfer_bytes.
 * Timeouts as for salvo_launch.
 * Thread safety: as salvo_launch. */
SALVO_API salvo_status salvo_copy(salvo_stream *stream, salvo_buffer *src, uint64_t src_offset,
                                  salvo_buffer *dst, uint64_t dst_offset, uint64_t size);

/* Submit the open batch without waiting. A failure found here is kept for
 * the stream's next synchronize, unless it is returned now.
 * Thread safety: as salvo_launch. */
SALVO_API salvo_status salvo_stream_flush(salvo_stream *stream);

/* Submit and wait for every launch on the stream, and for the work of the
 * events it waits for (salvo_stream_wait_event); returns the first
 * failure (a deferred one included), exactly once, but for device loss:
 * once the device is lost every synchronize returns
 * SALVO_ERROR_DEVICE_LOST (a failure kept before the loss is named in
 * salvo_last_error() and not returned later). SALVO_TIMEOUT when the
 * fence timeout expired first: the work goes on. Unless it expired, the
 * stream's host calls (and stream reads) made so far have run when it
 * returns, even where the work before them failed or the device was lost
 * (their fn runs then; a read leaves dst alone); the same holds for
 * salvo_device_synchronize and every stream's calls.
 * Thread safety: as salvo_launch. */
SALVO_API salvo_status salvo_stream_synchronize(salvo_stream *stream);

/* Whether every piece of work recorded on stream so far is complete, never
 * blocking: SALVO_OK when it is, SALVO_NOT_READY while some runs, waits on
 * a gate or an event, or is held back on the host behind a gate (as
 * cudaStreamQuery). The open batch, if any, is submitted (as a flush
 * would), so that a polling loop ends; nothing else is submitted but an
 * empty batch where the stream waits on an event of a stream that shares
 * its hardware queue (see salvo_stream_wait_event). Once all
 * the work is over, a failure kept for the stream (a batch that failed,
 * found by a flush, a query or someone else's wait) is returned here, once,
 * exactly as salvo_stream_synchronize would return it (a query that found
 * the work complete and reported it is a synchronization point: a later
 * synchronize does not report it again). SALVO_ERROR_DEVICE_LOST once the
 * device is lost (capturing or not); else SALVO_ERROR_INVALID_STATE while
 * the stream is capturing
 * (its work runs when the graph is replayed).
 * Thread safety: as salvo_launch (the thread using the stream). Lifetime:
 * the stream's. */
SALVO_API salvo_status salvo_stream_query(salvo_stream *stream);

/* ------------------------------------------------------------------ */
/* Stream-ordered host transfers and host calls                        */
/* ------------------------------------------------------------------ */

/* Write size bytes from host memory src into dst at offset, in stream
 * order (as cudaMemcpyAsync): a later launch, copy or read on the stream
 * sees the bytes; earlier work's use of the range is over first. Returns
 * at once. src is copied at the call into host-visible staging memory
 * salvo owns, so the program may change or free src as soon as the call
 * returns: writes up to 64 KiB into a shared 1 MiB staging block (one
 * allocation for many small writes), larger ones into a staging buffer of
 * their own, filled without holding the device's lock, so that other
 * threads' calls go on meanwhile (host memory of size bytes held until the
 * copy is over; no
 * import of the caller's pages, whose import Vulkan requires to outlive
 * salvo's use of it). The device's copy is batched like salvo_copy's and
 * counts in salvo_stats.transfer_bytes. Any domain. Staging memory is
 * released through the retire queue once the copy is over.
 * SALVO_ERROR_INVALID_ARGUMENT: NULL stream, buffer or src, size 0, range
 * outside the buffer, buffer of another device. SALVO_ERROR_INVALID_STATE:
 * the stream is capturing (a graph cannot hold host memory), or the call
 * is made from a host call's fn. Out of memory for the staging memory:
 * SALVO_ERROR_OUT_OF_DEVICE_MEMORY / _HOST_MEMORY, nothing done.
 * Timeouts as for salvo_copy.
 * Thread safety: as salvo_launch. Lifetime: dst must not be destroyed
 * before the stream has passed this point (destroying it is deferred like
 * any buffer's, so this is only about its contents). */
SALVO_API salvo_status salvo_stream_write(salvo_stream *stream, salvo_buffer *dst, uint64_t offset,
                                          const void *src, uint64_t size);

/* Read size bytes of src at offset into host memory dst, in stream order
 * (as cudaMemcpyAsync): dst holds what the stream's earlier work left
 * there once the stream has passed this point (salvo_stream_synchronize,
 * an event recorded after it, or salvo_stream_query, say so). Returns at
 * once; the device copies into a staging buffer of size bytes, then
 * salvo's host-call thread copies it to dst (a host call, see
 * salvo_stream_host_call: the stream's later work waits for it). From a
 * buffer the host sees coherently (HOST and SHARED buffers, and DEVICE
 * ones where device memory is mapped, as on CPU devices and most
 * integrated GPUs) there is no staging and no device copy: the host call
 * copies straight from the buffer, and the program's own salvo_buffer_write
 * or salvo_buffer_read of that buffer waits for it. The
 * program leaves dst alone (neither reads nor frees it) until then. Where
 * the device has no timeline semaphores the call waits until dst is
 * filled. If the read fails at the call, dst is not written; should the
 * work before it fail, dst is written with what the copy found, and the
 * failure is reported by the stream as usual; on a lost device dst is not
 * written. Nor is it where salvo gives up waiting for the copy (logged):
 * after three waits for it that failed, or, in salvo_device_destroy, that
 * expired (the fence timeout); the copy, should it still run, writes only
 * salvo's staging memory. Bad input and capture: as salvo_stream_write.
 * Thread safety: as salvo_launch. Lifetime: dst until the stream has
 * passed this point, or until salvo_device_destroy returns (it waits for
 * pending reads, within the bound above, and fills their dst). */
SALVO_API salvo_status salvo_stream_read(salvo_stream *stream, salvo_buffer *src, uint64_t offset,
                                         void *dst, uint64_t size);

/* Run fn(user) on a thread of salvo's once every earlier piece of work on
 * the stream is over, and start the stream's later work only after fn has
 * returned (as cudaLaunchHostFunc). fn may read and write mapped memory
 * (salvo_buffer_map) that the earlier work wrote or the later work reads.
 * The call returns at once (the stream's open batch is submitted). Host
 * calls run one at a time on one thread per device (started at the first
 * call, ended by salvo_device_destroy), first in first out across all
 * the device's streams: in the order the salvo_stream_host_call calls
 * were made, whatever their streams. A call therefore also waits for the
 * calls made before it on other streams, and for the work each of those
 * waits for: a call held behind a gate holds back every later host call
 * of the device until the gate is raised (and the later streams' work
 * behind those calls).
 * fn must return, and must not wait for anything that later work or a
 * later host call provides. From fn these return SALVO_ERROR_INVALID_STATE
 * and do nothing: salvo_stream_synchronize, salvo_device_synchronize,
 * salvo_event_synchronize, salvo_buffer_read, salvo_buffer_write,
 * salvo_stream_host_call, salvo_stream_write, salvo_stream_read,
 * salvo_image_create, salvo_image_read, salvo_image_write and the
 * stream copies to, from and between images (each could wait for work
 * held behind this very call), and
 * salvo_device_destroy (logged, nothing destroyed). fn may call
 * salvo_gate_raise, the queries, salvo_buffer_map, stats and destroys of
 * buffers, events, kernels and streams; it should not launch, copy or
 * flush (a launch may wait for a batch slot held behind the call).
 * fn runs exactly once for every call that returned SALVO_OK: also when
 * the earlier work failed (the stream's next synchronize reports that)
 * and when the device was lost (the work was abandoned; mapped memory
 * then holds whatever it holds), so resources handed to it can always be
 * freed there. Destroying the stream with calls pending: they still run,
 * and its later work after them. salvo_device_destroy runs every pending
 * call (after the work before it is over, as destroy waits for all work)
 * before it returns.
 * Where the device has no timeline semaphores, the call waits until fn
 * has run (the stream's later work is then necessarily after it).
 * SALVO_ERROR_INVALID_ARGUMENT: NULL stream or fn. SALVO_ERROR_INVALID_STATE:
 * the stream is capturing (a graph cannot hold a host call), or called
 * from fn. Timeouts as for salvo_stream_wait_gate (the later work's batch
 * may need a free slot).
 * Thread safety: as salvo_launch. Lifetime: user is the program's; it
 * must stay valid until fn has run. */
SALVO_API salvo_status salvo_stream_host_call(salvo_stream *stream, void (*fn)(void *user),
                                              void *user);

/* ------------------------------------------------------------------ */
/* Events                                                              */
/* ------------------------------------------------------------------ */

/* A marker in a stream, as in CUDA. Thread safety: any thread. Waits,
 * queries and synchronizes may run while the event is recorded again from
 * another thread (they use the mark current at the call); two records of
 * one event must not run at once. Lifetime: until
 * salvo_event_destroy; waits already issued keep what they need. */
SALVO_API salvo_status salvo_event_create(salvo_device *device, salvo_event **out);

/* Flags of salvo_event_create_flags. */
typedef enum salvo_event_flag {
    /* Only a point to wait for, as CUDA's cudaEventDisableTiming: its
     * records write no timestamp, so a record on a stream with no open
     * batch opens none (the mark is then the end of the last batch
     * submitted, as on a device without timestamps), and a launch or
     * replay the batch holds recorded ahead stays so. salvo_event_elapsed
     * refuses it. */
    SALVO_EVENT_DISABLE_TIMING = 1u << 0
} salvo_event_flag;

/* salvo_event_create with flags (salvo_event_flag, or-ed; 0 is
 * salvo_event_create). SALVO_ERROR_INVALID_ARGUMENT for a bit it does not
 * know. Thread safety and lifetime as salvo_event_create. */
SALVO_API salvo_status salvo_event_create_flags(salvo_device *device, uint32_t flags,
                                                salvo_event **out);

/* Mark the point after every launch recorded on stream so far, and after
 * the work of the events the stream waits for (salvo_stream_wait_event)
 * (re-recording moves the mark; waits already issued keep the old one).
 * Where the device has timestamps the record writes one for
 * salvo_event_elapsed (unless the event was made with
 * SALVO_EVENT_DISABLE_TIMING): on a stream with no open batch it opens
 * one (as a launch would, so it may return SALVO_ERROR_TIMEOUT, nothing
 * recorded, when no batch slot frees up within the fence timeout), and the event
 * completes once that batch has run. It opens one likewise, timestamps or
 * not, where the stream waits on an event of a stream that shares its
 * hardware queue. A record that fails (that timeout, out of memory while
 * opening the batch, the device lost) records nothing: the event keeps
 * the mark it had, and what a query, wait or cancel of it does.
 * Thread safety: the thread using stream; not concurrently with another record of this event. */
SALVO_API salvo_status salvo_event_record(salvo_event *event, salvo_stream *stream);

/* SALVO_OK when the work up to the mark is complete (or the event was never
 * recorded), SALVO_NOT_READY while it runs, or the failure: device loss,
 * or that of the batch holding the mark where it was refused at its submit
 * (it never ran; among the device's last 16 refusals; its stream's next
 * synchronize still reports it).
 * Never blocks; submits the batch holding the mark if it is still open, so
 * a polling loop ends.
 * Thread safety: any thread. */
SALVO_API salvo_status salvo_event_query(salvo_event *event);

/* Block until the work up to the mark is complete. A failure of that work
 * (as salvo_event_query says) is returned here and still reported by its
 * own stream's synchronize.
 * Thread safety: any thread. */
SALVO_API salvo_status salvo_event_synchronize(salvo_event *event);

/* salvo_event_synchronize with a bound: block (without holding salvo's
 * lock: other threads' calls and gate raises go on) until the work up to
 * the mark is complete or timeout_ns has passed. SALVO_OK: complete (or
 * never recorded); SALVO_TIMEOUT: the bound (or the device's fence
 * timeout, whichever is shorter) expired first: the work goes on and the
 * event stays usable (wait, query or synchronize again). timeout_ns 0
 * only looks (submitting the mark's batch if it is open, as
 * salvo_event_query): SALVO_TIMEOUT where the query says
 * SALVO_NOT_READY; UINT64_MAX: no bound. SALVO_CANCELLED,
 * SALVO_ERROR_INVALID_STATE (recorded in a capture) and
 * SALVO_ERROR_DEVICE_LOST as salvo_event_synchronize; a failure of the
 * work itself stays with its stream.
 * Thread safety: any thread, as salvo_event_synchronize (it uses the mark
 * current at the call). Lifetime: the event must outlive the call. */
SALVO_API salvo_status salvo_event_wait(salvo_event *event, uint64_t timeout_ns);

/* GPU time in nanoseconds between the marks of two recorded events, from
 * timestamps (as cudaEventElapsedTime, in ns). Where the device has
 * timestamps, salvo_event_record writes one into the batch at the event's
 * point: the device's clock once all work submitted before the point on
 * its queue is complete (work after the point that does not depend on
 * what came before may have started already). A record on a stream with
 * no open batch then opens one, as a launch would (it may wait for a free
 * batch slot like a launch: SALVO_ERROR_TIMEOUT, nothing recorded), and
 * the event completes once that batch has run. Ticks are converted with
 * the device's timestamp period, across a wrap of its valid bits.
 *  - SALVO_NOT_READY until both marks are complete (their open batches
 *    are submitted, as by salvo_event_query); *ns is 0.
 *  - SALVO_ERROR_UNSUPPORTED where the device's compute queue has no
 *    timestamps (where salvo_trace_start is refused likewise).
 *  - SALVO_ERROR_INVALID_ARGUMENT: an event NULL, never recorded, made
 *    with SALVO_EVENT_DISABLE_TIMING, or the two of different devices; ns
 *    NULL.
 *  - SALVO_ERROR_INVALID_STATE: an event recorded during a capture (a
 *    point of a graph); end's point came before start's on the device.
 *    A salvo_event_cancel keeps the times of the batch's other events:
 *    those recorded among the withdrawn launches then all mark the
 *    batch's start, one time for all (the elapsed time between two of
 *    them is 0), the others stay where they were among the launches that
 *    remain.
 *  - SALVO_CANCELLED: either event was cancelled.
 *  - SALVO_ERROR_BATCH_FAILED: an event's batch did not run (its failure
 *    is reported to its stream).
 * Where several apply, the first of this order wins: INVALID_ARGUMENT
 * (NULL, different devices, DISABLE_TIMING), DEVICE_LOST, UNSUPPORTED,
 * INVALID_ARGUMENT for an event never recorded, INVALID_STATE for a
 * capture's event, CANCELLED, NOT_READY, then what each event's time says
 * (start's before end's).
 * The first timed record of a device makes a pool of timestamp queries
 * (more are made as records pending at once outgrow it): a record that
 * cannot make it (or open its batch) returns that failure and records
 * nothing.
 * Re-recording an event replaces its time. Events of different streams
 * may be compared: Vulkan promises comparable timestamps only within one
 * submission (across submissions and queues of a device with
 * VK_KHR_calibrated_timestamps, which salvo does not need); in practice a
 * device has one timestamp clock (lavapipe, NVIDIA), but two streams'
 * events are ordered only if an event or a synchronize orders them.
 * Thread safety: any thread (it uses the marks current at the call).
 * Lifetime: the events must outlive the call. */
SALVO_API salvo_status salvo_event_elapsed(salvo_event *start, salvo_event *end, uint64_t *ns);

/* Withdraw the launches (and copies) recorded on the event's stream before
 * the event that are still waiting to be submitted: those since the
 * stream's last submission. They never run; launches recorded after the
 * event still run, in order. The event then reads SALVO_CANCELLED (query,
 * synchronize) and waiting on it is no wait, until it is recorded again.
 * Once any of that work was submitted (a full batch, a flush, a
 * synchronize, a host read or another stream's wait on it), returns
 * SALVO_ERROR_INVALID_STATE and changes nothing; likewise when nothing
 * before the event is pending. SALVO_ERROR_OUT_OF_HOST_MEMORY, changing
 * nothing, when the record of that work could not be kept (a launch since
 * the last submission went ahead without it, for lack of host memory).
 * Cancelling twice is SALVO_OK. Any other failure (recording the kept
 * work again failed: out of memory, device loss) withdraws nothing: the
 * launches still run; should they be lost (the batch could not even be
 * restored), the stream's next synchronize returns
 * SALVO_ERROR_BATCH_FAILED saying so.
 * Thread safety: not concurrently with launches on the event's stream. */
SALVO_API salvo_status salvo_event_cancel(salvo_event *event);

/* Release the event. Never blocks. NULL is a no-op.
 * Thread safety: any thread, once no other call uses this event. */
SALVO_API void salvo_event_destroy(salvo_event *event);

/* Make the launches recorded on stream from now on wait, on the device,
 * until the event's work is complete; the stream's later synchronize,
 * query, event records and host calls cover that work too (as in CUDA).
 * No host thread blocks: the event's batch is submitted ahead of the
 * waiting one, and the device orders them. Where the two streams share a
 * hardware queue, its order alone does it: those later calls then submit
 * (or, a record, open) an empty batch on the stream, unless it has a batch
 * of its own to submit, since the end of the stream's earlier batches is
 * not past the event's.
 * An event never recorded is no wait at all (as in CUDA), and so is an
 * event of this same stream (it runs in order: nothing is submitted for
 * it). SALVO_ERROR_INVALID_STATE: an event recorded during a capture
 * that has ended (record it again on a stream), or one of another
 * capture than the stream's; on a capturing stream, an event recorded
 * outside the capture whose work is not complete, this same stream's
 * included (the graph may be replayed on any stream, where nothing
 * orders it after that work). SALVO_ERROR_DEVICE_LOST
 * once the device is lost. Where the
 * event's stream runs on another hardware queue, the wait goes into this
 * stream's next batch, which may wait for a free slot as a launch does
 * (SALVO_ERROR_TIMEOUT: not registered).
 * Thread safety: the thread using stream (as salvo_launch). */
SALVO_API salvo_status salvo_stream_wait_event(salvo_stream *stream, salvo_event *event);

/* ------------------------------------------------------------------ */
/* Host gates                                                          */
/* ------------------------------------------------------------------ */

/* A gate at value 0 over a timeline semaphore; SALVO_ERROR_UNSUPPORTED when
 * the device has none. Lifetime: until salvo_gate_destroy.
 * Thread safety: any thread. */
SALVO_API salvo_status salvo_gate_create(salvo_device *device, salvo_gate **out);

/* Raise the gate to value. Monotonic: a value below the current one is
 * refused with SALVO_ERROR_INVALID_ARGUMENT; an equal one changes nothing.
 * Every host write made before the raise is visible to the work it
 * releases. Thread safety: any thread. */
SALVO_API salvo_status salvo_gate_raise(salvo_gate *gate, uint64_t value);

/* The highest value raised so far.
 * Thread safety: any thread. */
SALVO_API uint64_t salvo_gate_value(const salvo_gate *gate);

/* Make the launches recorded on stream from now on wait, on the device,
 * until the gate reaches value. Until then the host may still write those
 * launches' inputs (in HOST, SHARED or imported buffers): the raise orders
 * those writes before the device reads them. The wait goes into the
 * stream's next batch, opened now: like a launch, that may wait for a
 * free batch slot (SALVO_ERROR_TIMEOUT: the wait was not registered).
 * A batch waits on at most 16 gates: waiting for a 17th before a launch
 * or flush returns SALVO_ERROR_INVALID_STATE. See "Gates and waits" at the
 * top of this file for what waits behind gated work.
 * Thread safety: the thread using stream (as salvo_launch). */
SALVO_API salvo_status salvo_stream_wait_gate(salvo_stream *stream, salvo_gate *gate,
                                              uint64_t value);

/* Release the gate. Work still waiting on it is released first (the gate is
 * raised to the highest value any stream waits for), so nothing waits
 * forever; the semaphore is freed once that work is over. Never blocks.
 * Thread safety: any thread, once no other call uses this gate. */
SALVO_API void salvo_gate_destroy(salvo_gate *gate);

/* ------------------------------------------------------------------ */
/* Graphs: capture once, replay many times                             */
/* ------------------------------------------------------------------ */

/* Start capturing stream's work into a graph. Until
 * salvo_stream_end_capture, salvo_launch and salvo_copy on the stream are
 * recorded as nodes, not run: node i is the i-th such call that returned
 * SALVO_OK, counted from 0. Work made on the stream before the call is
 * submitted now (it runs; the graph does not hold it).
 *
 * Several streams: an event recorded on a capturing stream marks a point
 * of the capture; a stream that waits for it (salvo_stream_wait_event)
 * joins the capture from there (its earlier work is submitted first), as
 * in CUDA: its later launches and copies are nodes of the same graph,
 * ordered after what came before the point. The capturing stream joins
 * the branch back by waiting for an event recorded on the joined one.
 * End of capture ends it for every stream that joined.
 *
 * While a stream captures, these calls return SALVO_ERROR_INVALID_STATE
 * (with a message) and the capture goes on: synchronizing it (once the
 * device is lost, SALVO_ERROR_DEVICE_LOST instead, as every synchronize); waiting on
 * a gate; waiting for an event recorded outside the capture whose work is
 * not complete; replaying a graph on it; reading (salvo_buffer_read) a
 * buffer that a node of a capture in progress writes; querying,
 * synchronizing or cancelling an event recorded during a capture (it
 * marks a point of the graph, not of a stream, until it is recorded
 * again on a stream that is not capturing). salvo_stream_flush is
 * SALVO_OK and does nothing. Beginning a capture on a stream that
 * captures already (or joined one) is SALVO_ERROR_INVALID_STATE.
 * Destroying the stream that began a capture abandons it (no graph); a
 * stream that joined leaves it. (A destroy that finds salvo's lock busy,
 * one from a log callback say, leaves that to the next synchronize or
 * capture call.)
 * Thread safety: the thread using stream (as salvo_launch). */
SALVO_API salvo_status salvo_stream_begin_capture(salvo_stream *stream);

/* End the capture that stream began and make the graph: barriers are
 * computed once here (a node waits only for the earlier nodes whose
 * writes it reads or whose reads and writes it overwrites; nodes that
 * are independent, those of separate branches among them, run side by
 * side), and the graph's command buffers are recorded once: its parts,
 * and a few recordings of a whole replay that its first replays into an
 * idle stream submit as they are (salvo_stats.replays_ahead). Nodes of
 * branches the program left unordered (no event between them) that
 * conflict (one writes what the other reads or writes) run in capture
 * order, the order their calls returned: a replay never races them, as
 * the streams themselves would have. On failure
 * (out of memory, device loss) the capture is over all the same and no
 * graph is made. SALVO_ERROR_INVALID_STATE when stream is not capturing,
 * or joined a capture that another stream began (end it there).
 * Thread safety: the thread using stream. */
SALVO_API salvo_status salvo_stream_end_capture(salvo_stream *stream, salvo_graph **out);

/* Whether stream's calls go to a capture (as cudaStreamIsCapturing):
 * *out true from salvo_stream_begin_capture on it, or from the
 * salvo_stream_wait_event that joined it to another stream's capture,
 * until that capture ends (salvo_stream_end_capture, or the destroy of the
 * stream that began it). A capture goes on through the calls it refuses
 * and through a device loss, so *out stays true then. Never blocks, never
 * submits. SALVO_ERROR_INVALID_ARGUMENT: stream or out NULL (*out false).
 * Thread safety: any thread (takes the device's lock: not from a log
 * callback). Lifetime: the stream must outlive the call. */
SALVO_API salvo_status salvo_stream_is_capturing(salvo_stream *stream, bool *out);

/* Replay the graph on stream, in the stream's order (after its earlier
 * work, before its later work, with barriers only where those touch what
 * the graph touches), from the command buffers recorded at the end of
 * capture: no host work per node. Any stream of the device; several
 * replays of one graph may be pending at once, on one stream or several.
 * Batched like a launch (the replay counts as its node count of
 * launches; the replay of an empty graph does nothing). A failed replay
 * is reported as a failed batch, naming the
 * graph ("graph N") and its kernels. Timeouts as for salvo_launch.
 * SALVO_ERROR_INVALID_STATE on a capturing stream.
 * Thread safety: the thread using stream; not concurrently with an update
 * or destroy of this graph (replays of one graph on several streams from
 * several threads are fine). */
SALVO_API salvo_status salvo_graph_launch(salvo_graph *graph, salvo_stream *stream);

/* Give launch node `node` new bindings (all the kernel declares, checked
 * as for salvo_launch) or new push constants (push_size must be the
 * kernel's). Only replays made after the call see the change; replays
 * made before, pending or not, keep what they had. The next replay
 * records again the part of the graph the change touches (and, for
 * bindings that change which nodes depend on which, the barriers: the
 * whole graph). SALVO_ERROR_INVALID_ARGUMENT for a node that does not
 * exist or is a copy, or for bad bindings or sizes; nothing changes then.
 * Thread safety: not concurrently with another call on this graph. */
SALVO_API salvo_status salvo_graph_set_bindings(salvo_graph *graph, uint32_t node,
                                                const salvo_binding *bindings,
                                                uint32_t binding_count);
SALVO_API salvo_status salvo_graph_set_push(salvo_graph *graph, uint32_t node, const void *push,
                                            uint32_t push_size);
/* Update every node of graph at once from from, a graph of the same shape
 * (as cudaGraphExecUpdate): captured as the same sequence of calls, so
 * that node i of each is the same kind of command (a launch, an indirect
 * launch, a copy, a fill, ...), a launch of the same kernel, with as many
 * ranges and push constant bytes. A salvo_fill_pattern whose range starts
 * and ends on whole 4-byte words is a fill as salvo_fill's; one that
 * starts or ends within a word is a kind of its own (a kernel writes its
 * partial words): the two do not update each other. Each node takes from's node's
 * parameters: workgroup counts, bindings and ranges, push constants,
 * fill values. Only replays made after the call see the change (replays
 * made before keep what they had); the next replay records the whole
 * graph again. graph keeps alive what from uses; from is left as it was
 * and may be destroyed. SALVO_ERROR_INVALID_ARGUMENT, naming the first
 * node that differs, when the shapes differ or the graphs belong to
 * different devices; nothing changes then. from == graph: records the
 * graph again at the next replay, nothing else.
 * Thread safety: not concurrently with another call on either graph. */
SALVO_API salvo_status salvo_graph_update(salvo_graph *graph, const salvo_graph *from);

/* Nodes in the graph (0 for NULL). Thread safety: any thread. */
SALVO_API uint32_t salvo_graph_node_count(const salvo_graph *graph);

/* Release the graph. Never blocks: its command buffers are freed once its
 * replays are complete. A graph keeps the buffers and kernels it uses
 * alive: destroying one of them while a graph uses it defers its release
 * until every such graph is destroyed and its replays are complete. NULL
 * is a no-op.
 * Thread safety: any thread, once no other call uses this graph. */
SALVO_API void salvo_graph_destroy(salvo_graph *graph);

#ifdef __cplusplus
}
#endif

#endif /* SALVO_SALVO_H */
