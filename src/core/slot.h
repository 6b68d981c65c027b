/*
 * The batch: the slot and fence state machine.
 *
 * A slot is one batch of a stream: its command buffer, its fence, the
 * descriptor pool its launches allocate from, the names of the kernels
 * recorded in it, what it waits for and signals. A stream owns a small
 * ring of them so that recording the next batch overlaps the execution of
 * the previous one. Its state changes here only, each change checked
 * against the diagram below (slot_move: an assertion in checked builds).
 *
 *            begin               submit
 *   IDLE ------------> RECORDING ---------------------------> IN_FLIGHT
 *    ^  ^                 |    \  submit, held      send_held  ^    |
 *    |  |                 |     `-----------> HELD -------------'    |
 *    |  +--- discard -----+                     |                    |
 *    |  +--- refused (submit or send, not lost) +                    |
 *    +--------------------------------------------- fence seen ------+
 *                                                   signalled = done
 *
 *   any state --abandon (device lost)--> ABANDONED   (terminal: the work is
 *                                                     over, nothing more
 *                                                     will be observed)
 *
 * A batch that signals a timeline (a stream's, on a device with several
 * queues) is submitted with no fence: its timeline value says when it is
 * done (slot_poll, slot_wait); otherwise its fence does.
 *
 * HELD: ended, its fence reset, kept on the host because it waits on a
 * host gate that is down and its queue is shared (core/queue.c decides);
 * it has not been given to the device, so its fence is neither waited on
 * nor polled. IN_FLIGHT: given to the device.
 *
 * Every active batch (RECORDING, HELD, IN_FLIGHT) is in its device's
 * table by serial (slot_env.table): which batch a serial names, and
 * whether it is done, is asked of that table and of the batch itself,
 * never worked out by comparing serials (batches on different hardware
 * queues complete in any order).
 *
 * Invariants:
 *  - Only IDLE may begin, only RECORDING may record or submit, only HELD
 *    may be sent, only IN_FLIGHT may complete or be waited for; any other
 *    call returns SALVO_ERROR_INVALID_STATE and changes nothing.
 *  - A wait that fails for any reason but device loss (timeout, out of
 *    memory) leaves the slot IN_FLIGHT: the next wait tries again.
 *  - Going back to IDLE (retire) allocates nothing and cannot fail. A
 *    refused or discarded batch resets the command buffer to the initial
 *    state whatever state the interrupted step left it in.
 *  - That reset is the one recovery step that can fail (a driver out of
 *    memory): it is tried SLOT_RESET_ATTEMPTS times, then given up. The
 *    slot is IDLE all the same, its command buffer marked unreset; the
 *    next begin resets it first (SLOT_RESET_ATTEMPTS tries again) and,
 *    failing that, fails cleanly and leaves the slot IDLE, so a command
 *    buffer is never begun in a state Vulkan forbids and the stream stays
 *    usable: a later begin tries again.
 *  - An abandoned slot still owns its handles; slot_destroy releases them.
 *
 * The slot does no locking: its owner (the device's batch lock) does.
 */
#ifndef SALVO_CORE_SLOT_H
#define SALVO_CORE_SLOT_H

#include <stdbool.h>
#include <stdint.h>

#include "accel/accel.h"
#include "base/diag.h"

typedef enum slot_state {
    SLOT_IDLE = 0,
    SLOT_RECORDING,
    SLOT_HELD,
    SLOT_IN_FLIGHT,
    SLOT_ABANDONED
} slot_state;

typedef struct slot slot;

/* The device's active batches by serial: open addressing, room kept for
 * every slot of every stream (slot_table_reserve at stream creation), so
 * that entering a batch never allocates. */
typedef struct slot_table {
    slot **cells;
    uint32_t mask; /* cells - 1; 0 with no cells */
    uint32_t count;
} slot_table;

/* What a slot needs of its device. table NULL: no table kept (a slot
 * tested alone). */
typedef struct slot_env {
    const accel *acc;
    accel_device *dev;
    const salvo_log_sink *log;
    slot_table *table;
} slot_env;

enum {
    SLOT_MAX_NAMES = 8,
    SLOT_MAX_MORE = 24,
    SLOT_MAX_WAITS = 16,
    SLOT_RESET_ATTEMPTS = 3,
    SLOT_MAX_NOTED_BUFFERS = 32
};

/* What a batch must wait for before it starts: a timeline value (a host
 * gate). serial/owner (op.timeline NULL) name another batch that only
 * needs to be submitted first; the streams do not use that form (an event
 * wait submits the event's batch at once), the slot still accepts it. */
typedef struct slot_dep {
    accel_sem_op op;
    uint64_t serial; /* 0: a host gate, never dropped early */
    void *owner;     /* the stream whose batch signals it, or NULL */
} slot_dep;

struct slot {
    slot_state state;
    void *owner; /* the stream whose ring it is in (set by the stream) */
    accel_cmd *cmd;
    /* RECORDING or later: the batch is this command buffer, recorded
     * ahead (a graph's, ended, its own lead barrier first), submitted in
     * place of cmd; cmd then holds its lead barrier only and is taken,
     * still begun, by the next batch (prepared again when this one
     * completes). Set by the owner while cmd holds nothing else; NULL. */
    accel_cmd *direct;
    /* A recording into cmd after all (slot_direct_cmd) failed part-way:
     * cmd is begun again before the next one. */
    bool direct_dirty;
    /* HELD or IN_FLIGHT as a stand-in: the queue refused the batch (none
     * of it runs), and it is submitted with no command buffer, its waits
     * and its signal only (see slot_submit). */
    bool empty;
    bool cmd_unreset; /* a reset was refused: the next begin resets first */
    /* IDLE with cmd begun ahead and its lead barrier recorded
     * (slot_prepare): the next begin records nothing more. */
    bool prepared;
    accel_fence *fence;
    accel_descpool *pool;
    uint64_t serial;   /* device-wide batch serial, taken at begin */
    /* Threads inside a wait on this slot's fence with the owner's lock
     * dropped. The fence must not be reset (the slot must not begin again)
     * until they are out: resetting a fence another thread waits on is a
     * race the driver may not survive. */
    uint32_t waiters;
    uint32_t launches; /* launches recorded in this batch */
    /* An event's point is the end of this batch (recorded while it was
     * open): a wait added later goes into the next batch, or the point
     * would wait for it too. */
    bool pointed;
    /* A command of the batch may write memory the host maps (or any
     * memory): the batch ends with a barrier to the host. */
    bool to_host;
    /* Distinct kernel names recorded, first SLOT_MAX_NAMES kept; the
     * kernels outlive the slot's work (their release waits for it). */
    uint32_t name_count;
    uint32_t names_dropped; /* distinct kernels past the first SLOT_MAX_NAMES */
    const char *names[SLOT_MAX_NAMES];
    const char *more[SLOT_MAX_MORE]; /* those, to count each once */
    /* Device-side waits (added while RECORDING) and the value the batch
     * signals on its stream's timeline (0: none). */
    uint32_t wait_count;
    slot_dep waits[SLOT_MAX_WAITS];
    accel_sem_op signal;
    uint32_t queue; /* the hardware queue it is submitted to (cmd was made for it) */
    /* For a batch that waits on a gate (held or not): the buffers it binds
     * (noted_count past SLOT_MAX_NOTED_BUFFERS: not known, any), so that a
     * host transfer of another buffer need not wait for the gate. */
    bool buffers_noted;
    uint32_t noted_count;
    const void *noted_buffers[SLOT_MAX_NOTED_BUFFERS];
    /* A buffer the host call before this batch reads where it is (a
     * direct stream read): noted as if bound, since the batch, behind the
     * call's gate, ends after the read. host_reads past 1: any. */
    const void *host_read;
    uint32_t host_reads;
    /* The command buffer for the stream's other queue (its copy queue),
     * made the first time a batch goes there; slot_use_queue swaps it
     * with cmd (and queue with alt_queue). */
    accel_cmd *alt_cmd;
    bool alt_unreset;
    uint32_t alt_queue;
};

/* Make room in t for needed active batches (never shrinks).
 * SALVO_ERROR_OUT_OF_HOST_MEMORY leaves t as it was. */
salvo_status slot_table_reserve(slot_table *t, const salvo_allocator *alloc, uint32_t needed);
void slot_table_free(slot_table *t, const salvo_allocator *alloc);
/* The active batch with this serial, or NULL (serial 0: NULL). */
slot *slot_table_find(const slot_table *t, uint64_t serial);

/* Create the slot's handles; IDLE on success. On failure nothing is left
 * allocated and the slot is zeroed. fenced: it gets a fence, to be known
 * done by; a slot of a stream that signals a timeline (every batch of it
 * does, known done by the value) has none. Its descriptor pool holds
 * max_sets sets of bindings_per_set buffers, and slot_image_bindings of
 * each image and sampler kind. */
salvo_status slot_init(slot *s, const slot_env *env, uint32_t max_sets, uint32_t bindings_per_set,
                       bool fenced);
/* Images and samplers are rarer than buffers: a quarter as many of each
 * kind (a pool that runs out moves the batch to a fresh one), but never
 * less than one launch of the widest kernel needs, so that a fresh pool
 * always takes it. */
uint32_t slot_image_bindings(uint32_t max_sets, uint32_t bindings_per_set);
/* Release the handles. The slot must not be RECORDING or IN_FLIGHT unless
 * the device is lost (then it is ABANDONED). */
void slot_destroy(slot *s, const slot_env *env);

/* Make an IDLE slot's next batch go to queue: its command buffer for that
 * queue is made the first time (a slot serves two queues at most: its
 * stream's and the copy queue). On failure the slot is as it was and
 * nothing is reported (the caller goes on with the queue it had). */
salvo_status slot_use_queue(slot *s, const slot_env *env, uint32_t queue);
/* IDLE -> RECORDING, with the given serial; the batch will signal
 * signal.timeline at signal.value when it completes (timeline NULL: none).
 * A failed begin leaves it IDLE. A prepared slot's command buffer is
 * taken as it is (begun, its lead barrier in it). */
salvo_status slot_begin(slot *s, const slot_env *env, uint64_t serial, accel_sem_op signal);
/* Begin an IDLE slot's command buffer ahead of its batch and record lead
 * in it (the barrier every batch opens with), so that the batch's begin,
 * later, costs nothing: the owner calls it while the device runs the
 * batch before. Stays IDLE; does nothing where the slot is not IDLE, is
 * prepared already or has an unreset command buffer. A failure is not
 * reported: the slot is left as it was (the begin will try, and report).
 * slot_use_queue to another queue undoes it. */
void slot_prepare(slot *s, const slot_env *env, accel_barrier lead);
/* A direct batch's cmd, to record into after all: as it was left (its
 * lead barrier only), or, after a failed attempt, reset and begun again
 * with lead. A failure leaves it marked for the next attempt. */
accel_result slot_direct_cmd(slot *s, const slot_env *env, accel_barrier lead);
/* Note a name for the batch's failures without counting a launch. */
void slot_note_name(slot *s, const char *name);
/* Note one launch of the named kernel recorded (RECORDING only). Inline,
 * the batch's first name looked at here: every launch's path, and a batch
 * often runs one kernel. */
static inline void slot_note_launch(slot *s, const char *kernel_name)
{
    s->launches++;
    if (s->name_count == 0 || s->names[0] != kernel_name)
        slot_note_name(s, kernel_name);
}
/* Add a dependency to a RECORDING slot: one entry per timeline (the higher
 * value kept), or per batch serial for ordering-only ones (timeline NULL:
 * the owner guarantees order by submitting that batch first). SALVO_ERROR_INVALID_STATE when full or not recording. */
salvo_status slot_add_wait(slot *s, const slot_env *env, const slot_dep *w);
/* RECORDING -> IN_FLIGHT (end, fence reset, submit with the slot's
 * timeline waits and signal: cmd, or direct where set, which is not
 * ended; ordering-only waits are the caller's). hold: stop before the
 * submit: RECORDING -> HELD (slot_send_held submits later).
 * Refused (not device loss): returns the error naming the batch's
 * kernels. None of the batch runs, yet what comes after it must still
 * come after what it waited for (a host call, a gate, another stream's
 * batch) and see its value signalled or its fence: it stands in empty
 * (empty set, launches 0, command buffer reset), -> HELD where hold,
 * else submitted with its waits, signal and fence and no command buffer
 * -> IN_FLIGHT. Where its fence cannot be reset or that submit is
 * refused too: -> IDLE with the command buffer reset. Device lost: ->
 * ABANDONED. */
salvo_status slot_submit(slot *s, const slot_env *env, bool hold);
/* HELD -> IN_FLIGHT: submit a held slot; on success it is on the device;
 * a refusal or loss as for slot_submit. A stand-in refused again goes
 * IDLE: the batch's refusal was reported already, and the caller reports
 * nothing more. */
salvo_status slot_send_held(slot *s, const slot_env *env);
/* IDLE or RECORDING -> RECORDING as a stand-in (empty: see slot_submit)
 * for a batch whose work was dropped before it was submitted (a cancel
 * that could not record it again): this serial, signal and waits, its
 * command buffer unused (what was recorded is dropped). slot_submit then
 * sends it with no command buffer; its own failure there goes unreported
 * (the drop is the caller's to report). */
void slot_reopen_empty(slot *s, const slot_env *env, uint64_t serial, accel_sem_op signal,
                       const slot_dep *waits, uint32_t wait_count);
/* RECORDING -> IDLE, dropping what was recorded (nothing was submitted). */
salvo_status slot_discard(slot *s, const slot_env *env);
/* Apply an observed fence result to an IN_FLIGHT slot:
 *   SUCCESS -> retire (IDLE), returns SALVO_OK;
 *   NOT_READY -> stays, returns SALVO_NOT_READY;
 *   TIMEOUT -> stays, returns SALVO_TIMEOUT;
 *   DEVICE_LOST -> ABANDONED, returns SALVO_ERROR_DEVICE_LOST naming the kernels;
 *   other errors -> stays, returns the error naming the kernels. */
salvo_status slot_complete(slot *s, const slot_env *env, accel_result observed);
/* Query the fence without blocking, then slot_complete (HELD:
 * SALVO_NOT_READY, its fence untouched). */
salvo_status slot_poll(slot *s, const slot_env *env);
/* Wait up to timeout_ns, then slot_complete. Refused for a held slot. */
salvo_status slot_wait(slot *s, const slot_env *env, uint64_t timeout_ns);
/* Any state -> ABANDONED. */
void slot_abandon(slot *s, const slot_env *env);

/* RECORDING, HELD or IN_FLIGHT: work that may still reference resources
 * (the batch is not done). */
static inline bool slot_active(const slot *s)
{
    return s->state == SLOT_RECORDING || s->state == SLOT_HELD || s->state == SLOT_IN_FLIGHT;
}
/* What a wait for s looks at: its timeline value (true, *op filled), or
 * its fence (false). */
static inline bool slot_done_on_timeline(const slot *s, accel_sem_op *op)
{
    *op = s->signal;
    return s->signal.timeline != NULL;
}
/* HELD or IN_FLIGHT: ended, not done (a wait for it may block). */
static inline bool slot_submitted(const slot *s)
{
    return s->state == SLOT_HELD || s->state == SLOT_IN_FLIGHT;
}

/* "add, saxpy (+2 more)" into buf. */
void slot_kernel_list(const slot *s, char *buf, size_t size);
const char *slot_state_name(slot_state st);
/* Map an accelerator result to a status. */
salvo_status salvo_status_from_accel(accel_result r);

#endif
