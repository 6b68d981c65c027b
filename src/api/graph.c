/* Graphs: the public front of capture and replay (core/graph.c): the
 * capture's streams, the objects a graph keeps alive, the checks. */
#include <string.h>

#include "api/internal.h"

/* Keep r (a buffer, an image or a sampler), which a bind names by target,
 * alive for the graph: held once, counted for each bind; note a write. */
static salvo_status hold_locked(salvo_graph *gr, resource *r, const void *target, bool write)
    SALVO_REQUIRES(gr->dev->q.lock)
{
    SALVO_CHECK(r->kind == RESOURCE_BUFFER || r->kind == RESOURCE_IMAGE ||
                    r->kind == RESOURCE_SAMPLER,
                "a graph holds a %s as what a node touches", resource_kind_name(r->kind));
    for (size_t i = 0; i < gr->held_count; i++)
        if (gr->held[i].res == r) {
            gr->held[i].written |= write;
            gr->held[i].uses++;
            return SALVO_OK;
        }
    if (!salvo_mem_grow(gr->dev->alloc, (void **)&gr->held, &gr->held_cap, gr->held_count + 1,
                        sizeof *gr->held))
        return DEV_FAIL(gr->dev, SALVO_ERROR_OUT_OF_HOST_MEMORY,
                        "%s: out of host memory; nothing changed", gr->g.label);
    resource_hold(r);
    gr->held[gr->held_count++] = (graph_hold){r, target, 1, write};
    return SALVO_OK;
}

/* One bind of target fewer: the last lets go of what it names (pending
 * replays marked their use of it; its release waits for them). */
static void unhold_target_locked(salvo_graph *gr, const void *target)
    SALVO_REQUIRES(gr->dev->q.lock)
{
    for (size_t i = 0; i < gr->held_count; i++) {
        if (gr->held[i].target != target)
            continue;
        if (--gr->held[i].uses == 0) {
            resource_let_go_locked(gr->held[i].res, &gr->dev->q);
            gr->held[i] = gr->held[--gr->held_count];
        }
        return;
    }
    SALVO_CHECK(false, "%s: a bind names what the graph does not hold", gr->g.label);
}

/* Let go of a kernel's binds among binds (the first count), as
 * hold_launch_locked held them. */
static void unhold_launch_locked(salvo_graph *gr, const accel_bind *binds, uint32_t count)
    SALVO_REQUIRES(gr->dev->q.lock)
{
    for (uint32_t i = 0; i < count; i++) {
        unhold_target_locked(gr, accel_bind_target(&binds[i]));
        if (binds[i].image && binds[i].sampler)
            unhold_target_locked(gr, binds[i].sampler);
    }
}

static salvo_status hold_kernel_locked(salvo_graph *gr, salvo_kernel *k)
    SALVO_REQUIRES(gr->dev->q.lock)
{
    for (size_t i = 0; i < gr->kernel_count; i++)
        if (gr->kernels[i] == k)
            return SALVO_OK;
    if (!salvo_mem_grow(gr->dev->alloc, (void **)&gr->kernels, &gr->kernel_cap,
                        gr->kernel_count + 1, sizeof *gr->kernels))
        return DEV_FAIL(gr->dev, SALVO_ERROR_OUT_OF_HOST_MEMORY,
                        "%s: out of host memory; nothing changed", gr->g.label);
    resource_hold(&k->res);
    gr->kernels[gr->kernel_count++] = k;
    return SALVO_OK;
}

/* Hold what a launch binds, before it is a node (all or nothing: a failure
 * lets go of what it held). held[i] is what binds[i] names, and
 * held[SALVO_MAX_BINDINGS + i] the sampler beside an image. */
static salvo_status hold_launch_locked(salvo_graph *gr, salvo_kernel *k, const accel_bind *binds,
                                       resource *const *held) SALVO_REQUIRES(gr->dev->q.lock)
{
    salvo_status r = hold_kernel_locked(gr, k);
    uint32_t done = 0; /* binds held in full */
    for (; done < k->ek.refl.binding_count && r == SALVO_OK; done++) {
        const accel_bind *b = &binds[done];
        resource *beside = held[SALVO_MAX_BINDINGS + done];
        SALVO_CHECK(!beside == !(b->image && b->sampler),
                    "a sampler held beside a bind that has none");
        bool write = !b->uniform && (k->ek.refl.bindings[done].access & SALVO_ACCESS_WRITE);
        r = hold_locked(gr, held[done], accel_bind_target(b), write);
        if (r != SALVO_OK)
            break;
        if (beside && (r = hold_locked(gr, beside, b->sampler, false)) != SALVO_OK) {
            unhold_target_locked(gr, accel_bind_target(b));
            break;
        }
    }
    if (r != SALVO_OK)
        unhold_launch_locked(gr, binds, done);
    return r;
}

/* The recorder of every stream in capture gr: c becomes a node, once
 * what it uses is held (nothing stays held when it does not). Commands a
 * graph cannot replay are refused. */
static salvo_status capture_record(void *ctx, const command *c, const void *holds)
{
    salvo_graph *gr = ctx;
    const command_holds *h = holds;
    salvo_mutex_held(&gr->dev->q.lock); /* recorders run under the lock */
    if (c->kind == COMMAND_NATIVE)
        return DEV_FAIL(gr->dev, SALVO_ERROR_INVALID_STATE,
                        "vk_stream_record: the stream is capturing (%s); the program's own "
                        "commands cannot be captured",
                        gr->g.label);
    salvo_status r = SALVO_OK;
    uint32_t first = 0;
    if (h->kernel) {
        r = hold_launch_locked(gr, h->kernel, c->binds, h->of);
        if (r != SALVO_OK)
            return r;
        first = h->kernel->ek.refl.binding_count; /* an indirect launch's counts follow */
    }
    uint32_t done = first;
    for (; done < c->bind_count; done++)
        if (h->of[done] && (r = hold_locked(gr, h->of[done], accel_bind_target(&c->binds[done]),
                                            command_access(c, done) & SALVO_ACCESS_WRITE)) !=
                               SALVO_OK)
            break;
    if (r == SALVO_OK)
        r = graph_add_command(&gr->g, c);
    if (r != SALVO_OK) {
        for (uint32_t j = first; j < done; j++)
            if (h->of[j])
                unhold_target_locked(gr, accel_bind_target(&c->binds[j]));
        if (h->kernel)
            unhold_launch_locked(gr, c->binds, first);
    }
    return r;
}

/* st's calls go to capture gr from now on (NULL: to its batches again). */
static void capture_set_locked(salvo_stream *st, salvo_graph *gr) SALVO_REQUIRES(st->e.q->lock)
{
    st->capture = gr;
    stream_set_recorder_locked(&st->e, gr ? capture_record : NULL, gr);
}

/* Let go of everything the graph holds. Under the lock: a last hold
 * queues the object's release itself. */
static void drop_holds_locked(salvo_graph *gr) SALVO_REQUIRES(gr->dev->q.lock)
{
    queue *q = &gr->dev->q;
    salvo_mutex_same(&gr->dev->q.lock, &q->lock);
    for (size_t i = 0; i < gr->held_count; i++)
        resource_let_go_locked(gr->held[i].res, q);
    for (size_t i = 0; i < gr->kernel_count; i++)
        resource_let_go_locked(&gr->kernels[i]->res, q);
}

static void graph_release(retire_entry *e, bool abandoned)
{
    (void)abandoned;
    salvo_graph *gr = resource_as_graph(resource_of_release(e));
    salvo_device *dev = gr->dev;
    salvo_mutex_held(&gr->dev->q.lock); /* releases run under the lock */
    live_unlink_locked(gr->dev, &gr->res);
    /* Reclaiming at device destroy: what it holds is reclaimed too, maybe
     * already. */
    if (!dev->reclaiming)
        drop_holds_locked(gr);
    graph_fini(&gr->g);
    salvo_mem_free(dev->alloc, gr->members);
    salvo_mem_free(dev->alloc, gr->held);
    salvo_mem_free(dev->alloc, gr->kernels);
    COUNT_SUB(dev, live_graphs, 1);
    salvo_mem_free(dev->alloc, gr);
}

static void capture_close_locked(salvo_graph *gr) SALVO_REQUIRES(gr->dev->q.lock);

/* Streams destroyed while the lock was busy are still in their captures
 * (each capture holds a reference): take them out now, as their destroy
 * would have. */
void graph_captures_settle_locked(salvo_device *dev)
{
    if (!dev->captures)
        return;
    bool released = false;
    for (salvo_graph *gr = dev->captures, *next; gr; gr = next) {
        next = gr->next_capture;
        salvo_mutex_same(&dev->q.lock, &gr->dev->q.lock);
        if (gr->origin && atomic_load(&gr->origin->e.destroyed)) {
            salvo_mutex_same(&dev->q.lock, &gr->origin->e.q->lock);
            /* Its destroy first: the capture's reference is then the last
             * but its work's, and the stream goes with the capture. */
            stream_settle_locked(&gr->origin->e);
            capture_close_locked(gr);
            graph_release(&gr->res.release, false); /* nothing of it was ever submitted */
            released = true;
            continue;
        }
        for (size_t i = 0; i < gr->member_count;) {
            salvo_stream *m = gr->members[i];
            if (atomic_load(&m->e.destroyed)) {
                gr->members[i] = gr->members[--gr->member_count];
                salvo_mutex_same(&dev->q.lock, &m->e.q->lock);
                capture_set_locked(m, NULL);
                stream_settle_locked(&m->e);
                stream_let_go_locked(&m->e);
                released = true;
            } else {
                i++;
            }
        }
    }
    /* What that let go of (streams freed, buffers the capture held) may
     * have queued releases that wait for nothing: they run now. */
    if (released)
        queue_advance_locked(&dev->q);
}

salvo_graph *stream_capture_locked(salvo_stream *st)
{
    salvo_device *dev = stream_device(st);
    salvo_mutex_same(&st->e.q->lock, &dev->q.lock);
    if (dev->captures)
        graph_captures_settle_locked(dev);
    return st->capture;
}

salvo_graph *graph_capture_find_locked(salvo_device *dev, uint64_t id)
{
    graph_captures_settle_locked(dev);
    for (salvo_graph *gr = dev->captures; gr; gr = gr->next_capture)
        if (gr->capture_id == id)
            return gr;
    return NULL;
}

bool graph_capture_writes_locked(salvo_device *dev, const resource *r)
{
    graph_captures_settle_locked(dev);
    for (salvo_graph *gr = dev->captures; gr; gr = gr->next_capture)
        for (size_t i = 0; i < gr->held_count; i++)
            if (gr->held[i].res == r && gr->held[i].written)
                return true;
    return false;
}

/* The capture is over for every stream in it. */
static void capture_close_locked(salvo_graph *gr)
{
    salvo_device *dev = gr->dev;
    for (salvo_graph **p = &dev->captures; *p; p = &(*p)->next_capture)
        if (*p == gr) {
            *p = gr->next_capture;
            break;
        }
    gr->next_capture = NULL;
    salvo_stream *origin = gr->origin;
    gr->origin = NULL;
    if (origin) {
        salvo_mutex_same(&gr->dev->q.lock, &origin->e.q->lock);
        capture_set_locked(origin, NULL);
        stream_let_go_locked(&origin->e);
    }
    for (size_t i = 0; i < gr->member_count; i++) {
        salvo_stream *m = gr->members[i];
        salvo_mutex_same(&gr->dev->q.lock, &m->e.q->lock);
        capture_set_locked(m, NULL);
        stream_let_go_locked(&m->e);
    }
    gr->member_count = 0;
}

void graph_capture_leave_locked(salvo_stream *st)
{
    salvo_graph *gr = st->capture;
    salvo_mutex_same(&st->e.q->lock, &gr->dev->q.lock);
    if (gr->origin == st) {
        capture_close_locked(gr);
        graph_release(&gr->res.release, false); /* nothing of it was ever submitted */
        return;
    }
    for (size_t i = 0; i < gr->member_count; i++)
        if (gr->members[i] == st) {
            gr->members[i] = gr->members[--gr->member_count];
            break;
        }
    capture_set_locked(st, NULL);
    stream_let_go_locked(&st->e);
}

salvo_status graph_capture_join_locked(salvo_graph *gr, salvo_stream *st)
{
    salvo_device *dev = gr->dev;
    if (!salvo_mem_grow(dev->alloc, (void **)&gr->members, &gr->member_cap, gr->member_count + 1,
                        sizeof *gr->members))
        return DEV_FAIL(dev, SALVO_ERROR_OUT_OF_HOST_MEMORY,
                        "stream_wait_event: out of host memory; the stream did not join %s",
                        gr->g.label);
    /* Its work so far is not part of the graph: it goes now. */
    salvo_mutex_same(&gr->dev->q.lock, &st->e.q->lock);
    salvo_status r = stream_submit_locked(&st->e, true);
    if (r != SALVO_OK)
        return r;
    gr->members[gr->member_count++] = st;
    capture_set_locked(st, gr);
    stream_hold_locked(&st->e);
    return SALVO_OK;
}

salvo_status salvo_stream_begin_capture(salvo_stream *st)
{
    if (!st)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "stream_begin_capture: stream is NULL");
    salvo_device *dev = stream_device(st);
    salvo_graph *gr = salvo_mem_calloc(dev->alloc, 1, sizeof *gr);
    if (!gr)
        return DEV_FAIL(dev, SALVO_ERROR_OUT_OF_HOST_MEMORY,
                        "stream_begin_capture: out of host memory");
    salvo_mutex_lock(&dev->q.lock);
    salvo_mutex_same(&dev->q.lock, &st->e.q->lock);
    graph_captures_settle_locked(dev);
    salvo_status r = SALVO_OK;
    if (device_is_lost(dev))
        r = device_lost_error(dev);
    else if (st->capture)
        r = DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE,
                     "stream_begin_capture: the stream is in a capture already (%s)",
                     st->capture->g.label);
    else
        r = stream_submit_locked(&st->e, true);
    if (r != SALVO_OK) {
        salvo_mutex_unlock(&dev->q.lock);
        salvo_mem_free(dev->alloc, gr);
        return r;
    }
    gr->dev = dev;
    gr->capture_id = ++dev->graph_count;
    graph_init(&gr->g, &dev->q, dev->graph_count);
    gr->origin = st;
    resource_init(&gr->res, RESOURCE_GRAPH, graph_release, 0);
    gr->next_capture = dev->captures;
    dev->captures = gr;
    capture_set_locked(st, gr);
    stream_hold_locked(&st->e);
    live_link_locked(dev, &gr->res);
    COUNT_ADD(dev, live_graphs, 1);
    salvo_mutex_unlock(&dev->q.lock);
    salvo_clear_error();
    return SALVO_OK;
}

salvo_status salvo_stream_end_capture(salvo_stream *st, salvo_graph **out)
{
    if (out)
        *out = NULL;
    if (!st || !out)
        return SALVO_FAIL(st ? &stream_device(st)->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "stream_end_capture: %s is NULL", st ? "out" : "stream");
    salvo_device *dev = stream_device(st);
    salvo_mutex_lock(&dev->q.lock);
    graph_captures_settle_locked(dev);
    salvo_graph *gr = st->capture;
    salvo_status r = SALVO_OK;
    if (!gr)
        r = DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE, "stream_end_capture: the stream is not capturing");
    else if (gr->origin != st)
        r = DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE,
                     "stream_end_capture: the stream joined %s, which another stream began; end "
                     "it there",
                     gr->g.label);
    if (r != SALVO_OK) {
        salvo_mutex_unlock(&dev->q.lock);
        return r;
    }
    salvo_mutex_same(&dev->q.lock, &gr->dev->q.lock);
    salvo_mutex_same(&dev->q.lock, &gr->g.q->lock);
    capture_close_locked(gr);
    queue_advance_locked(&dev->q); /* streams destroyed while in it may have gone */
    r = device_is_lost(dev) ? device_lost_error(dev) : graph_compile_locked(&gr->g);
    if (r == SALVO_OK)
        r = graph_make_ahead_locked(&gr->g, STREAM_BATCH_LEAD);
    if (r != SALVO_OK) {
        graph_release(&gr->res.release, false); /* never executed */
        queue_advance_locked(&dev->q);      /* what its holds kept */
        salvo_mutex_unlock(&dev->q.lock);
        return r;
    }
    salvo_mutex_unlock(&dev->q.lock);
    salvo_clear_error();
    *out = gr;
    return SALVO_OK;
}

salvo_status salvo_graph_launch(salvo_graph *gr, salvo_stream *st)
{
    if (!gr || !st)
        return SALVO_FAIL(gr ? &gr->dev->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "graph_launch: %s is NULL", gr ? "stream" : "graph");
    salvo_device *dev = gr->dev;
    if (stream_device(st) != dev)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "graph_launch: the stream belongs to another device");
    salvo_mutex_lock(&dev->q.lock);
    salvo_mutex_same(&dev->q.lock, &st->e.q->lock);
    salvo_status r;
    uint64_t serial = 0;
    if (device_is_lost(dev))
        r = device_lost_error(dev);
    else if (stream_capture_locked(st))
        r = DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE,
                     "graph_launch of %s: the stream is capturing (%s); a replay cannot be "
                     "captured",
                     gr->g.label, st->capture->g.label);
    else
        r = stream_graph_locked(&st->e, &gr->g, &serial);
    /* Host reads and writes of its buffers wait for the replay. */
    if (serial && gr->g.addresses && serial > dev->q.address_serial)
        dev->q.address_serial = serial;
    if (serial)
        for (size_t i = 0; i < gr->held_count; i++)
            resource_note_use(gr->held[i].res, serial);
    salvo_mutex_unlock(&dev->q.lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}

/* The launch node n of gr, or NULL after failing (the message says why). */
static graph_node *launch_node(salvo_graph *gr, uint32_t n, const char *what)
{
    if (n >= gr->g.node_count) {
        DEV_FAIL(gr->dev, SALVO_ERROR_INVALID_ARGUMENT, "%s: %s has %u nodes, not node %u", what,
                 gr->g.label, gr->g.node_count, n);
        return NULL;
    }
    command c = graph_node_command(&gr->g, &gr->g.nodes[n]);
    if (!command_is_dispatch(&c)) {
        DEV_FAIL(gr->dev, SALVO_ERROR_INVALID_ARGUMENT, "%s: node %u of %s is not a launch: %s",
                 what, n, gr->g.label, command_name(&c));
        return NULL;
    }
    return &gr->g.nodes[n];
}

salvo_status salvo_graph_set_push(salvo_graph *gr, uint32_t node, const void *push,
                                  uint32_t push_size)
{
    if (!gr)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "graph_set_push: graph is NULL");
    graph_node *n = launch_node(gr, node, "graph_set_push");
    if (!n)
        return SALVO_ERROR_INVALID_ARGUMENT;
    if (push_size != n->push_size)
        return DEV_FAIL(gr->dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "graph_set_push: node %u (kernel '%s') takes %u bytes of push constants, "
                        "not %u",
                        node, n->kernel->name, n->push_size, push_size);
    if (push_size && !push)
        return DEV_FAIL(gr->dev, SALVO_ERROR_INVALID_ARGUMENT, "graph_set_push: push is NULL");
    salvo_mutex_lock(&gr->dev->q.lock);
    salvo_mutex_same(&gr->dev->q.lock, &gr->g.q->lock);
    salvo_status r = graph_set_push(&gr->g, node, push, push_size);
    salvo_mutex_unlock(&gr->dev->q.lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}

salvo_status salvo_graph_set_bindings(salvo_graph *gr, uint32_t node,
                                      const salvo_binding *bindings, uint32_t binding_count)
{
    if (!gr)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "graph_set_bindings: graph is NULL");
    graph_node *n = launch_node(gr, node, "graph_set_bindings");
    if (!n)
        return SALVO_ERROR_INVALID_ARGUMENT;
    salvo_device *dev = gr->dev;
    salvo_kernel *k = kernel_of_engine(n->kernel);
    accel_bind binds[SALVO_MAX_BINDINGS];
    resource *held[LAUNCH_HELD_MAX];
    /* An indirect launch keeps its counts: only the kernel's change. */
    salvo_status r = n->kind == COMMAND_DISPATCH
                         ? launch_check(dev, k, n->groups, bindings, binding_count,
                                        gr->g.push + n->push_at, n->push_size, binds, held)
                         : launch_check_bindings(dev, k, bindings, binding_count,
                                                 gr->g.push + n->push_at, n->push_size, binds,
                                                 held);
    if (r != SALVO_OK)
        return r;
    salvo_mutex_lock(&gr->dev->q.lock);
    salvo_mutex_same(&gr->dev->q.lock, &gr->g.q->lock);
    /* The node's binds before, let go of once the new ones are in (what
     * both name stays held throughout). */
    accel_bind old[SALVO_MAX_BINDINGS];
    uint32_t changed = k->ek.refl.binding_count;
    memcpy(old, &gr->g.binds[n->bind_at], changed * sizeof *old);
    r = hold_launch_locked(gr, k, binds, held);
    if (r == SALVO_OK) {
        r = graph_set_bindings_locked(&gr->g, node, binds);
        unhold_launch_locked(gr, r == SALVO_OK ? old : binds, changed);
    }
    salvo_mutex_unlock(&gr->dev->q.lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}

salvo_status salvo_graph_update(salvo_graph *gr, const salvo_graph *from)
{
    if (!gr || !from)
        return SALVO_FAIL(gr ? &gr->dev->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "graph_update: %s is NULL", !gr ? "graph" : "from");
    salvo_device *dev = gr->dev;
    if (from->dev != dev)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "graph_update: %s and %s belong to different devices", gr->g.label,
                        from->g.label);
    salvo_mutex_lock(&gr->dev->q.lock);
    salvo_mutex_same(&gr->dev->q.lock, &gr->g.q->lock);
    /* What from's nodes bind, graph's will: held before any node names it,
     * and what graph's nodes bound before let go of once they no longer do
     * (a refusal changes nothing). The kernels are the same: the same
     * shape. */
    salvo_status r = SALVO_OK;
    size_t count = from->held_count;
    graph_hold *taken = NULL;
    if (from != gr && count) {
        taken = salvo_mem_alloc(dev->alloc, count * sizeof *taken);
        if (!taken)
            r = DEV_FAIL(dev, SALVO_ERROR_OUT_OF_HOST_MEMORY,
                         "graph_update of %s: out of host memory; nothing changed", gr->g.label);
    }
    if (r == SALVO_OK)
        r = graph_update_locked(&gr->g, &from->g);
    if (r == SALVO_OK && from != gr) {
        if (count)
            memcpy(taken, from->held, count * sizeof *taken);
        for (size_t i = 0; i < count; i++)
            resource_hold(taken[i].res);
        for (size_t i = 0; i < gr->held_count; i++)
            resource_let_go_locked(gr->held[i].res, &gr->dev->q);
        salvo_mem_free(dev->alloc, gr->held);
        gr->held = taken;
        gr->held_count = gr->held_cap = count;
        taken = NULL;
    }
    salvo_mem_free(dev->alloc, taken);
    salvo_mutex_unlock(&gr->dev->q.lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}

uint32_t salvo_graph_node_count(const salvo_graph *gr)
{
    return gr ? gr->g.node_count : 0;
}

void salvo_graph_destroy(salvo_graph *gr)
{
    if (gr)
        device_let_go(gr->dev, &gr->res);
}
