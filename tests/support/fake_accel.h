/*
 * A fake accelerator: the accel_vtable of src/accel/accel.h with no GPU
 * behind it, so unit tests can drive the state machines through every
 * path, failures included.
 *
 * What it models, and how strictly:
 *  - Every handle is a small allocation the fake keeps a list of, so it can
 *    count the live ones per kind and check every handle it is given.
 *  - Command buffers follow Vulkan's lifecycle (initial, recording,
 *    executable, pending). Anything Vulkan calls invalid usage (beginning a
 *    buffer that is recording, resetting one that is pending, destroying a
 *    buffer that pending work reads, submitting with a fence that is not
 *    reset, ...) is counted as an "illegal" use under a name (see
 *    fake_illegal). Tests assert fake_illegal_total() == 0 to prove the
 *    library never relied on behaviour a real driver does not give.
 *  - Reusable command buffers (cmd_create_reusable) are Vulkan's secondary
 *    command buffers with simultaneous use: executed from other command
 *    buffers (cmd_execute), never submitted themselves, and they stay
 *    executable, not pending, while submissions that execute them are
 *    (fake_cmd_pending_uses counts those). Such a submission runs their
 *    records where the cmd_execute was recorded.
 *  - Each queue is strictly FIFO: a submission completes only after every
 *    earlier one on its queue, and only once its timeline waits are met;
 *    queues (queue_count) complete independently. Completing a
 *    submission runs its copies (so staged transfers really move bytes),
 *    counts its dispatches (which compute nothing, unless a test gives
 *    the kernels' semantics: dispatch_hook), applies its timeline signals
 *    and signals its fence. An indirect dispatch (cmd_dispatch_indirect)
 *    reads its counts from the buffer when it runs, as a device does: a
 *    count of 0 runs nothing (the hook is not called), one above 65535
 *    is illegal (dispatch_mismatch, counted at the submission's run).
 *    cmd_fill_bytes writes exactly its bytes, taking a descriptor set
 *    from the pool where a word is partial (the Vulkan accelerator's
 *    kernel for those words does); cmd_copy_image_to_image moves texels.
 *  - In FAKE_COMPLETE_AUTO mode whatever can complete does so as soon as
 *    the fake is called. In FAKE_COMPLETE_MANUAL mode submissions stay
 *    pending until fake_complete_next / fake_complete_all. The fake never
 *    blocks (unless blocking_waits): a wait that a real device would sit
 *    in returns ACCEL_TIMEOUT.
 *    queue_wait_idle means "the device finished": it completes everything
 *    that can complete, in either mode.
 *  - Images hold their texels in host memory, x fastest, then y, z and
 *    layer, so copies to and from them (cmd_copy_image) really move bytes;
 *    dispatches compute nothing with them. As in Vulkan an image is made
 *    in an undefined layout: a copy or dispatch that uses it must run
 *    after its cmd_image_init has run (earlier in the same submission or
 *    in one completed before), and must name an image that has its view.
 *    Images are the compute queues' (exclusive sharing, as the Vulkan
 *    accelerator makes them): image commands recorded for the transfer
 *    queue are illegal.
 *  - Device loss is sticky, as on a real device: once any call has returned
 *    ACCEL_ERROR_DEVICE_LOST (scripted, or after fake_lose_device), pending
 *    submissions are dropped unexecuted, submit, queue_wait_idle and every
 *    wait on something not yet signalled return DEVICE_LOST, and destroying
 *    handles that pending work used is allowed again.
 *
 * Ownership: the vtable's destroy() does NOT free the fake (it only marks
 * it destroyed, and later calls count as illegal "use_after_destroy"), so
 * a test can read the counters after salvo_device_destroy. The test frees
 * the fake with fake_free() at the end; fake_free also frees any handle
 * the library leaked, after the counters have been read.
 *
 * Thread safety: every entry point takes the fake's own mutex.
 */
#ifndef SALVO_TESTS_FAKE_ACCEL_H
#define SALVO_TESTS_FAKE_ACCEL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "accel/accel.h"

enum {
    FAKE_MAX_DEVICES = 8,
    FAKE_DISPATCH_TICKS = 10,
    FAKE_MAX_SPEC = 8 /* specialization constants a dispatch_hook sees */
};

typedef enum fake_complete_mode {
    FAKE_COMPLETE_AUTO = 0, /* submissions complete as soon as they can */
    FAKE_COMPLETE_MANUAL    /* only fake_complete_next / fake_complete_all complete them */
} fake_complete_mode;

typedef enum fake_kind {
    FAKE_DEVICE = 0,
    FAKE_BUFFER,
    FAKE_PIPELINE,
    FAKE_CMD,
    FAKE_FENCE,
    FAKE_DESCPOOL,
    FAKE_TIMELINE,
    FAKE_QUERYPOOL,
    FAKE_IMAGE,   /* with its view, once image_view_create made it */
    FAKE_SAMPLER,
    FAKE_KIND_COUNT
} fake_kind;

typedef enum fake_cmd_state {
    FAKE_CMD_INITIAL = 0,
    FAKE_CMD_RECORDING,
    FAKE_CMD_EXECUTABLE,
    FAKE_CMD_PENDING
} fake_cmd_state;

typedef struct fake_state fake_state;

/* One dispatch as the fake runs it, handed to fake_accel.dispatch_hook:
 * the kernel (fake_module_hash of the SPIR-V it was made from, and its
 * specialization constants), the groups and push constants recorded, and
 * what each bind names when the dispatch runs. */
typedef struct fake_dispatch_res {
    uint32_t binding, element;
    uint8_t kind; /* salvo_binding_kind */
    /* BUFFER: the bound range (mem from the bound offset, size bytes);
     * images: every texel (x fastest, then y, z and layer), size bytes.
     * mem NULL: the buffer or image is gone (or none was bound). */
    unsigned char *mem;
    uint64_t size;
    uint32_t width, height, depth, layers, texel; /* images; texel in bytes */
} fake_dispatch_res;

typedef struct fake_dispatch {
    uint64_t module_hash;
    uint32_t spec_count; /* the first FAKE_MAX_SPEC of them */
    salvo_spec_constant spec[FAKE_MAX_SPEC];
    uint32_t groups[3];
    const void *push;
    uint32_t push_size;
    uint32_t res_count; /* one per bind, in the order recorded */
    fake_dispatch_res res[SALVO_MAX_BINDINGS];
} fake_dispatch;

/* A test's hook into one of the fake's calls (fake_accel below). */
typedef void (*fake_hook)(void *user);

typedef struct fake_accel {
    /* Configuration. fake_create sets the defaults shown; change them
     * before the library opens a device (enumerate and device_open read
     * them), except complete, which may change at any time (through
     * fake_set_complete once another thread may call the fake). */
    uint32_t device_count;                            /* 1; at most FAKE_MAX_DEVICES */
    salvo_device_type device_types[FAKE_MAX_DEVICES]; /* all OTHER; names "fake0", "fake1", ... */
    bool device_not_mappable;    /* false; true: DEVICE-domain buffers have no mapping */
    bool timeline_semaphores;    /* true */
    bool host_import;            /* true, alignment 4096 */
    /* true: GPU timestamps, 1 ns a tick. The clock is a counter that a
     * dispatch advances by FAKE_DISPATCH_TICKS and every timestamp by 1. */
    bool timestamps;
    /* Queries can be reset from the host (querypool_host_reset). */
    bool host_query_reset;
    /* false; true: dispatches push their descriptors (push_descriptors_used,
     * as VK_KHR_push_descriptor): recording one takes no set from the
     * pool, so it never runs out (cmd_fill_bytes's partial words neither). */
    bool push_descriptors;
    /* 0 = unlimited; else bytes of live non-imported buffers and images */
    uint64_t device_memory_limit;
    fake_complete_mode complete; /* FAKE_COMPLETE_AUTO */
    /* The hooks below are atomic: a test sets and clears them while
     * salvo's threads (the host-call thread, a reaper) call the fake, and
     * each call reads its hook once. hook_user is set before the hook. */
    /* NULL; else called (without the fake's lock) at the start of every
     * timeline_value, so a test can act while a caller polls a timeline. */
    _Atomic(fake_hook) timeline_value_hook;
    /* NULL; else called likewise at the start of every fence_status. */
    _Atomic(fake_hook) fence_status_hook;
    void *hook_user;
    /* NULL; else called (without the fake's lock) at the start of every
     * buffer_destroy: salvo runs it inside a release, under its own lock,
     * so a test can act while a release is half done. */
    _Atomic(fake_hook) buffer_destroy_hook;
    /* 1: hardware queues offered (at most ACCEL_MAX_QUEUES). Each runs its
     * submissions in order; queues run independently of each other. */
    uint32_t queue_count;
    /* false; true: one more queue, at index queue_count, for copies only
     * (a copy engine): dispatches and query resets recorded for it are
     * illegal (transfer_queue_work). Offered with timeline semaphores only. */
    bool transfer_queue;
    /* Every feature on (checked true, every subgroup operation). */
    salvo_device_features features;
    uint32_t max_workgroup_memory; /* 32768 */
    /* What image_format_support answers, per format: SALVO_IMAGE_STORAGE
     * | SALVO_IMAGE_SAMPLED | SALVO_IMAGE_LINEAR_FILTER for every format
     * but UNDEFINED (which stays 0). Clear bits to withdraw a use, or an
     * entry to withdraw the format. image_create with a usage its format
     * does not offer here, and a dispatch that filters linearly an image
     * whose format lacks SALVO_IMAGE_LINEAR_FILTER, are illegal. */
    uint32_t image_format_usage[SALVO_FORMAT_COUNT];
    /* false; true: fake_accel_get hands out a table whose image operations
     * are NULL, as an accelerator without images. Read by fake_accel_get. */
    bool no_images;
    /* NULL: dispatches compute nothing. Else each dispatch, when a
     * completing submission runs it (in the order the device runs them),
     * calls dispatch_hook(dispatch_user, d) with the fake's lock held: the
     * hook is the kernel, reading and writing the memory d names (a
     * model-based test runs its kernels' semantics there). It must not
     * call the fake. Set before the library opens a device (only
     * dispatches recorded while it is set run it). */
    void (*dispatch_hook)(void *user, const fake_dispatch *d);
    void *dispatch_user;
    /* false: the fake never blocks (above). true: fence_wait and
     * timeline_wait with a timeout above 0 block, as a driver's do, until
     * the fence is signalled or the timeline reaches the value (a
     * submission completing, in AUTO mode at a gate's raise; in MANUAL
     * mode fake_complete_* from another thread), the device is lost, or
     * the timeout passes (UINT64_MAX: none); queue_wait_idle blocks
     * likewise until all the work has run. For tests where other threads
     * make the progress. */
    bool blocking_waits;

    fake_state *state; /* everything else: read it through the functions below */
} fake_accel;

/* A fake with the defaults above; NULL when out of memory. */
fake_accel *fake_create(void);
/* The accelerator to hand to the library: {vtable, f}. The library owns
 * it in the sense that it calls destroy(); the memory stays the test's. */
accel fake_accel_get(fake_accel *f);
/* Free the fake and every handle still live. NULL is a no-op. */
void fake_free(fake_accel *f);
/* True once the vtable's destroy() was called. */
bool fake_destroyed(fake_accel *f);

/* Live handles of one kind, and of all kinds. */
uint64_t fake_live(fake_accel *f, fake_kind kind);
uint64_t fake_live_total(fake_accel *f);

/* Calls of one vtable operation, by its field name in accel_vtable
 * ("submit", "fence_wait", ...), scripted failures included; and of all
 * operations. An unknown name aborts the test program (a typo must not
 * read as "never called"). */
uint64_t fake_calls(fake_accel *f, const char *op);
uint64_t fake_calls_total(fake_accel *f);
/* Barriers of one kind recorded into command buffers that were
 * recording. */
uint64_t fake_barriers(fake_accel *f, accel_barrier kind);

/* Illegal uses seen, by name; an unknown name aborts. The names:
 *   begin_while_recording  cmd_begin on a command buffer that is recording
 *   begin_while_pending    cmd_begin on a pending command buffer, or
 *                          cmd_begin_reusable on one a pending submission executes
 *   end_not_recording      cmd_end on a command buffer that is not recording
 *   record_not_recording   dispatch, barrier or copy outside recording
 *   reset_while_pending    cmd_reset on a pending command buffer, or on a
 *                          reusable one a pending submission executes
 *   submit_not_executable  submit of a command buffer that is not executable
 *   submit_invalidated     submit of a command buffer that recorded a use of
 *                          a handle destroyed (or a pool reset) since, or
 *                          executes a reusable one begun, reset, destroyed or
 *                          invalidated since
 *   submit_fence_busy      submit with a fence that is signalled or pending
 *   fence_reset_pending    fence_reset of a fence a pending submission owns
 *   wait_unsubmitted       fence_wait (timeout > 0) on an unsignalled fence
 *                          no submission will signal: a real wait would hang
 *   wait_idle_deadlock     queue_wait_idle with work that can never start
 *                          (its timeline wait is not met)
 *   destroy_in_use         destroying a handle pending work uses
 *   pool_reset_in_use      descpool_reset while pending work uses its sets
 *   dispatch_mismatch      dispatch not matching the pipeline or the limits
 *   copy_out_of_range      copy or fill outside a buffer (nothing recorded)
 *   bad_handle             NULL, freed, foreign or wrong-kind handle
 *   bad_argument           any other argument a real driver rejects
 *   close_with_children    device_close while handles of it are live
 *   use_after_destroy      any call after the vtable's destroy()
 *   timeline_not_increasing  a timeline signalled to a value not above its own
 *   timeline_unsupported   timeline_create with timeline_semaphores false
 *   transfer_queue_work    a dispatch, fill of bytes or query reset recorded for the
 *                          transfer queue
 *   submit_bad_queue       submit to a queue not of the command buffer's family,
 *                          or cmd_execute of a reusable one of another family
 *   reusable_mismatch      cmd_begin on a reusable command buffer,
 *                          cmd_begin_reusable on an ordinary one, submit of a
 *                          reusable one, cmd_execute into a reusable one or of
 *                          an ordinary one
 *   execute_not_executable cmd_execute of a reusable command buffer not ended,
 *                          or invalidated since
 *   query_not_reset        a timestamp written to a query not reset since
 *                          its last write, or outside its pool
 *   image_no_view          a dispatch or image copy recorded with an image
 *                          image_view_create has not given its view
 *   image_not_initialized  a dispatch or image copy run on an image before
 *                          any cmd_image_init of it has run (nothing copied)
 *
 * Image operations also count: copy_out_of_range for a cmd_copy_image
 * region outside the image or the buffer, or a cmd_copy_image_to_image
 * region outside its image (nothing recorded); bad_argument for a
 * cmd_copy_image_to_image whose extents, texel sizes or image types
 * differ, or whose regions of one image share a layer;
 * dispatch_mismatch for an image or sampler bind of the wrong kind, a
 * missing or foreign image or sampler, an image without the usage the
 * kind needs, a linear sampler on a format that cannot filter, or an
 * unnormalized sampler on an image that is not 1D or 2D; bad_argument for
 * an image description Vulkan rejects (extents of 0, extents a 1D or 2D
 * image cannot have, layers on a non-array image, an unknown format or a
 * usage the format does not offer), a second view, an unnormalized
 * sampler that does not clamp in u and v, or a buffer offset not a
 * multiple of the texel size; transfer_queue_work for cmd_image_init or
 * cmd_copy_image on the transfer queue's command buffer.
 */
uint64_t fake_illegal(fake_accel *f, const char *what);
uint64_t fake_illegal_total(fake_accel *f);
/* The last illegal use, with the call it came from ("" when none): for the
 * message of a failing assertion. Valid until the next call into the fake. */
const char *fake_illegal_last(fake_accel *f);

/* Script the nth call of op (1-based, counted from now) to return r
 * without doing anything else: no state changes (a scripted fence_status
 * or fence_wait leaves the fence as it was; a scripted submit submits
 * nothing) and nothing is created. nth 0: every call from now on. A
 * scripted ACCEL_ERROR_DEVICE_LOST also loses the device (see above).
 * Operations that return void cannot be scripted (aborts). */
void fake_set_result(fake_accel *f, const char *op, int nth, accel_result r);
/* As fake_set_result, for the nth call of op (nth >= 1, counted from
 * now) and every later one. */
void fake_set_result_from(fake_accel *f, const char *op, int nth, accel_result r);
/* Forget every script. */
void fake_clear_results(fake_accel *f);

/* The hash dispatch_hook's module_hash is: FNV-1a (64-bit) of the bytes. */
uint64_t fake_module_hash(const uint32_t *spirv, size_t size);
/* Record into the command buffer the library hands a program's recorder
 * (cmd_native: salvo_vk_stream_record's VkCommandBuffer on the fake) a
 * fill of the buffer whose device address (salvo_buffer_address) is
 * device_address, as cmd_fill. False, recording nothing, when native is
 * not a command buffer that records or no live buffer has that address. */
bool fake_record_fill(fake_accel *f, void *native_cmd, uint64_t device_address, uint64_t offset,
                      uint64_t size, uint32_t value);

/* Complete the oldest pending submission. False when there is none, the
 * device is lost, or it waits for a timeline value not reached yet. */
bool fake_complete_next(fake_accel *f);
/* The same, for one queue's oldest pending submission only: a device
 * that runs one queue ahead of the others. */
bool fake_complete_on(fake_accel *f, uint32_t queue);
/* Complete pending submissions in order until one cannot; returns how many. */
uint32_t fake_complete_all(fake_accel *f);
/* Change f->complete under the fake's lock: the way to switch modes while
 * another thread (salvo's host-call worker) may be calling the fake. */
void fake_set_complete(fake_accel *f, fake_complete_mode mode);
/* Submissions accepted and not yet completed (or dropped by loss). */
uint32_t fake_pending(fake_accel *f);
/* Lose the device now, as a real one would on its own. */
void fake_lose_device(fake_accel *f);
bool fake_is_lost(fake_accel *f);

/* Successful cmd_dispatch calls, and dispatches in completed submissions. */
uint64_t fake_dispatches_recorded(fake_accel *f);
uint64_t fake_dispatches_completed(fake_accel *f);
/* Bytes moved by completed copies (image copies included). */
uint64_t fake_copy_bytes(fake_accel *f);
/* cmd_image_init records run in completed submissions. */
uint64_t fake_image_inits(fake_accel *f);
/* Submissions made to one queue. */
uint64_t fake_queue_submits(fake_accel *f, uint32_t queue);
/* Index device_open was last called with; -1 before any. */
int fake_opened_index(fake_accel *f);

/* Inspect single handles (they must be live handles of this fake). */
fake_cmd_state fake_cmd_state_of(fake_accel *f, const accel_cmd *cmd);
/* Pending submissions that execute a reusable command buffer (one
 * executing it twice counts twice); 0 for an ordinary one. */
uint32_t fake_cmd_pending_uses(fake_accel *f, const accel_cmd *cmd);
bool fake_fence_signalled(fake_accel *f, const accel_fence *fence);
uint32_t fake_pool_sets_used(fake_accel *f, const accel_descpool *pool);

#endif
