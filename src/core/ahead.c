/*
 * Batches recorded ahead (see ahead.h).
 */
#include "core/ahead.h"

#include <string.h>

#define VT(q) ((q)->acc->vt)
#define SELF(q) ((q)->acc->self)

void ahead_forget(ahead_ring *r)
{
    for (uint32_t i = 0; i < AHEAD_RING; i++)
        r->at[i].fresh = false;
    r->settled = false;
}

/* Record d as c's batch: lead, c, the barrier to the host where needed.
 * A failure (returned) leaves d reset, not fresh. Dispatches recorded
 * here push their descriptors (the callers see to it): no pool. */
static accel_result record(queue *q, ahead_cmd *d, accel_barrier lead, const command *c,
                           bool to_host)
{
    accel_result ar = VT(q)->cmd_begin_resubmit(SELF(q), q->adev, d->cmd);
    if (ar == ACCEL_SUCCESS) {
        VT(q)->cmd_barrier(SELF(q), q->adev, d->cmd, lead);
        bool partial;
        ar = c->kind == COMMAND_GRAPH
                 ? command_record_graph(q->acc, q->adev, d->cmd, NULL, c, &partial)
                 : command_record(q->acc, q->adev, d->cmd, NULL, c);
    }
    if (ar == ACCEL_SUCCESS) {
        if (to_host)
            VT(q)->cmd_barrier(SELF(q), q->adev, d->cmd, ACCEL_BARRIER_ALL_HOST);
        ar = VT(q)->cmd_end(SELF(q), q->adev, d->cmd);
    }
    d->fresh = ar == ACCEL_SUCCESS;
    if (!d->fresh)
        VT(q)->cmd_reset(SELF(q), q->adev, d->cmd);
    return ar;
}

accel_cmd *ahead_take_locked(ahead_ring *r, queue *q, uint64_t serial, accel_barrier lead,
                             const command *c, bool to_host)
{
    if (r->off || !VT(q)->cmd_begin_resubmit)
        return NULL;
    /* A free one that holds the parameters first, else a free one to
     * record (made where none is). */
    ahead_cmd *take = NULL;
    for (uint32_t i = 0; i < AHEAD_RING; i++) {
        ahead_cmd *d = &r->at[i];
        if (d->serial && !queue_batch_done_locked(q, d->serial))
            continue;
        if (d->cmd && d->fresh) {
            take = d;
            break;
        }
        if (!take || (!take->cmd && d->cmd))
            take = d;
    }
    if (!take)
        return NULL;
    bool reuse = take->fresh;
    /* Another recording only once those that hold the parameters were
     * each submitted again: until a recording has paid for itself, a
     * command whose recording is in flight records into its batch. */
    if (!reuse)
        for (uint32_t i = 0; i < AHEAD_RING; i++)
            if (r->at[i].fresh && !r->at[i].again)
                return NULL;
    /* To record: not at the first use of new parameters. */
    if (!take->fresh && !r->settled) {
        r->settled = true;
        return NULL;
    }
    if (!take->cmd && VT(q)->cmd_create(SELF(q), q->adev, 0, &take->cmd) != ACCEL_SUCCESS) {
        take->cmd = NULL;
        r->off = true;
        return NULL;
    }
    if (!take->fresh && record(q, take, lead, c, to_host) != ACCEL_SUCCESS) {
        r->off = true;
        return NULL;
    }
    take->again = reuse;
    take->serial = serial;
    return take->cmd;
}

accel_result ahead_make_locked(ahead_ring *r, queue *q, accel_barrier lead, const command *c,
                               bool to_host)
{
    if (r->off || !VT(q)->cmd_begin_resubmit)
        return ACCEL_SUCCESS;
    for (uint32_t i = 0; i < AHEAD_RING; i++) {
        ahead_cmd *d = &r->at[i];
        if (d->fresh || (d->serial && !queue_batch_done_locked(q, d->serial)))
            continue;
        accel_result ar = ACCEL_SUCCESS;
        if (!d->cmd)
            ar = VT(q)->cmd_create(SELF(q), q->adev, 0, &d->cmd);
        if (ar != ACCEL_SUCCESS) {
            d->cmd = NULL;
            return ar;
        }
        ar = record(q, d, lead, c, to_host);
        if (ar != ACCEL_SUCCESS)
            return ar;
        d->again = true; /* made to be used again: no need to prove it */
    }
    r->settled = true;
    return ACCEL_SUCCESS;
}

void ahead_fini(ahead_ring *r, queue *q)
{
    for (uint32_t i = 0; i < AHEAD_RING; i++)
        if (r->at[i].cmd)
            VT(q)->cmd_destroy(SELF(q), q->adev, r->at[i].cmd);
    memset(r, 0, sizeof *r);
}

/* Whether binding a and b are the same: field by field (their padding
 * is not theirs to compare). */
static bool same_bind(const accel_bind *a, const accel_bind *b)
{
    return a->binding == b->binding && a->element == b->element && a->uniform == b->uniform &&
           a->unmapped == b->unmapped && a->kind == b->kind && a->buffer == b->buffer &&
           a->offset == b->offset && a->size == b->size && a->image == b->image &&
           a->sampler == b->sampler;
}

accel_cmd *ahead_launch_take_locked(ahead_launch *a, queue *q, uint64_t serial,
                                    accel_barrier lead, const command *c)
{
    if (!command_is_dispatch(c) || command_takes_pool(c, q->push_descriptors) ||
        command_touches_any(c) ||
        c->bind_count > AHEAD_BINDS || c->push_size > AHEAD_PUSH || a->ring.off)
        return NULL;
    const engine_kernel *k = c->object;
    uint64_t released = atomic_load_explicit(&q->released, memory_order_acquire);
    bool same = a->keyed && a->key.kind == c->kind && a->key.kernel == k &&
                a->key.pipe == k->pipe && a->key.released == released &&
                a->key.bind_count == c->bind_count &&
                a->key.push_size == c->push_size &&
                !memcmp(a->key.groups, c->groups, sizeof a->key.groups) &&
                (!c->push_size || !memcmp(a->key.push, c->push, c->push_size));
    for (uint32_t i = 0; same && i < c->bind_count; i++)
        same = same_bind(&a->key.binds[i], &c->binds[i]);
    if (same)
        return ahead_take_locked(&a->ring, q, serial, lead, c, command_writes_host(c));
    /* New parameters: this launch is their first use. */
    a->keyed = true;
    a->key.kind = c->kind;
    a->key.kernel = k;
    a->key.pipe = k->pipe;
    a->key.released = released;
    memcpy(a->key.groups, c->groups, sizeof a->key.groups);
    a->key.bind_count = c->bind_count;
    a->key.push_size = c->push_size;
    if (c->bind_count)
        memcpy(a->key.binds, c->binds, c->bind_count * sizeof *c->binds);
    if (c->push_size)
        memcpy(a->key.push, c->push, c->push_size);
    ahead_forget(&a->ring);
    a->ring.settled = true;
    return NULL;
}
