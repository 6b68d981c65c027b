/*
 * Batches recorded ahead. A stream batch that holds one command and
 * nothing else (a graph replay, or a launch that repeats the one before
 * it) need not be recorded at the call: it can be submitted as a command
 * buffer recorded before, which holds the batch's lead barrier, the
 * command, and the barrier to the host where the command writes memory
 * the host maps. The batch's own command buffer then stays begun for the
 * next batch (slot.direct), so such a round trip costs the driver the
 * submit and the wait only.
 *
 * An ahead ring keeps AHEAD_RING such recordings of one set of
 * parameters (its owner says when they change: ahead_forget). Each goes
 * with the batch that last submitted it and is free again once that
 * batch is done. Parameters are recorded ahead at their second use, not
 * their first: the first records into its batch as any command does,
 * which costs less than a recording of its own, so a command whose
 * parameters change at every call costs what it did. For the same reason
 * a second recording of the same parameters (for a command made again
 * while the first is in flight) is made only once the first was submitted
 * again: a graph captured, waited for once and then replayed a few times
 * back to back begins one recording, not one per replay.
 *
 * A launch is recorded ahead only where the recording holds everything
 * it needs: descriptors pushed (no set from a pool that the batch
 * resets), no buffer reached by address, and parameters that fit the key
 * (ahead_launch). The key names its buffers, images and kernel by the
 * accelerator's handles, which a later object may reuse once the first is
 * released; the device's release count (queue.released) is part of the
 * key, so that no recording outlives a release it could confuse.
 *
 * Under the queue's lock, as the streams and graphs that own the rings.
 */
#ifndef SALVO_CORE_AHEAD_H
#define SALVO_CORE_AHEAD_H

#include <stdbool.h>
#include <stdint.h>

#include "accel/accel.h"
#include "core/command.h"
#include "core/queue.h"

enum {
    /* Recordings per ring: replays made back to back without a wait take
     * them in turn; past them a command records into its batch. */
    AHEAD_RING = 3,
    /* The widest launch recorded ahead: bindings, push constant bytes. */
    AHEAD_BINDS = 8,
    AHEAD_PUSH = 128
};

typedef struct ahead_cmd {
    accel_cmd *cmd;
    uint64_t serial; /* the batch that last submitted it; 0: none yet */
    bool fresh;      /* holds the ring's parameters as they are now */
    bool again;      /* fresh, and submitted more than once (or made to be) */
} ahead_cmd;

typedef struct ahead_ring {
    ahead_cmd at[AHEAD_RING];
    /* The parameters were used once since they changed: the next use
     * records them ahead. */
    bool settled;
    /* None can be made: the accelerator has no recording to submit again,
     * or making or recording one failed (the commands record into their
     * batches from then on). */
    bool off;
} ahead_ring;

/* The owner's parameters changed: no recording holds them, and the next
 * use is their first. Recordings still in flight stay until done. */
void ahead_forget(ahead_ring *r);

/* A recording of c (a dispatch or a graph replay; to_host: it writes
 * memory the host maps) for the batch with this serial, whose lead
 * barrier is lead: one that holds the parameters, else one recorded now
 * where the parameters settled. NULL where none is free or none can be
 * made: c then records into its batch, which reports what fails. */
accel_cmd *ahead_take_locked(ahead_ring *r, queue *q, uint64_t serial, accel_barrier lead,
                             const command *c, bool to_host) SALVO_REQUIRES(q->lock);

/* Make the ring's recordings of c now, before its first use (for a
 * command made to be made again: a graph's replay), each free and
 * holding the parameters; the parameters count as settled. Where one
 * cannot be made, none more is tried here and the failure is returned:
 * the caller reports the device lost; any other failure is for a use to
 * meet again (it records as ahead_take_locked does, and reports there). */
accel_result ahead_make_locked(ahead_ring *r, queue *q, accel_barrier lead, const command *c,
                               bool to_host) SALVO_REQUIRES(q->lock);

/* Free the ring's recordings (their batches done or abandoned). */
void ahead_fini(ahead_ring *r, queue *q);

/* A stream's launches recorded ahead: the ring, and the launch whose
 * parameters it holds. */
typedef struct ahead_launch {
    ahead_ring ring;
    bool keyed; /* key holds a launch */
    struct {
        command_kind kind; /* a dispatch, direct or indirect */
        const void *kernel;
        const void *pipe;
        uint64_t released; /* queue.released when the key was taken */
        uint32_t groups[3];
        uint32_t bind_count, push_size;
        accel_bind binds[AHEAD_BINDS];
        unsigned char push[AHEAD_PUSH];
    } key;
} ahead_launch;

/* A recording of dispatch c (direct or indirect) as the batch with this
 * serial (see ahead_take_locked), where c repeats the launch before it
 * that could be recorded ahead: same kind, kernel, groups, bindings (an
 * indirect one's counts among them) and push constants, and no object
 * released in between. Any other launch that could be becomes
 * the key (and records into its batch); one that could not (a set from a
 * pool, buffer addresses, too wide) leaves the key as it is. */
accel_cmd *ahead_launch_take_locked(ahead_launch *a, queue *q, uint64_t serial,
                                    accel_barrier lead, const command *c)
    SALVO_REQUIRES(q->lock);

#endif
