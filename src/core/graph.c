/* Graphs: capture, compile (levels, order, chunks), record, update. See
 * graph.h; the replay itself is in stream_engine.c. */
#include "core/graph.h"

#include <stdio.h>
#include <string.h>

#define VT(q) ((q)->acc->vt)
#define SELF(q) ((q)->acc->self)

void graph_init(engine_graph *g, queue *q, uint32_t number)
{
    memset(g, 0, sizeof *g);
    g->q = q;
    snprintf(g->label, sizeof g->label, "graph %u", number);
}

static void recording_free(queue *q, graph_recording *rec)
{
    if (!rec)
        return;
    VT(q)->cmd_destroy(SELF(q), q->adev, rec->cmd);
    VT(q)->descpool_destroy(SELF(q), q->adev, rec->pool);
    salvo_mem_free(q->alloc, rec);
}

/* No batch that has not completed executes rec. */
static bool recording_idle_locked(const engine_graph *g, const graph_recording *rec)
    SALVO_REQUIRES(g->q->lock)
{
    for (uint32_t i = 0; i < g->use_count; i++)
        if (g->uses[i].replay >= rec->born && !queue_batch_done_locked(g->q, g->uses[i].serial))
            return false;
    return true;
}

/* A recording no chunk holds any more: freed now, or retired with the
 * batches that execute it. */
static void recording_let_go_locked(engine_graph *g, graph_recording *rec)
    SALVO_REQUIRES(g->q->lock)
{
    if (!rec)
        return;
    if (recording_idle_locked(g, rec))
        recording_free(g->q, rec);
    else
        retire_push(&g->q->retire, &rec->release, atomic_load(&g->q->next_serial));
}

static void recording_release(retire_entry *e, bool abandoned)
{
    (void)abandoned;
    graph_recording *rec = (graph_recording *)e;
    recording_free(rec->q, rec);
}

/* The compiled part: order, chunks, touches, names (not the recordings). */
static void plan_free(engine_graph *g)
{
    const salvo_allocator *a = g->q->alloc;
    salvo_mem_free(a, g->order);
    salvo_mem_free(a, g->barrier);
    salvo_mem_free(a, g->touch);
    salvo_mem_free(a, g->names);
    g->order = NULL;
    g->barrier = NULL;
    g->touch = NULL;
    g->names = NULL;
    g->touch_count = g->name_count = 0;
}

void graph_fini(engine_graph *g)
{
    const salvo_allocator *a = g->q->alloc;
    for (uint32_t i = 0; i < g->chunk_count; i++)
        recording_free(g->q, g->chunks[i].rec);
    ahead_fini(&g->ahead, g->q);
    salvo_mem_free(a, g->chunks);
    salvo_mem_free(a, g->cmds);
    salvo_mem_free(a, g->payload);
    salvo_mem_free(a, g->payload_binds);
    plan_free(g);
    salvo_mem_free(a, g->uses);
    salvo_mem_free(a, g->nodes);
    salvo_mem_free(a, g->binds);
    salvo_mem_free(a, g->push);
    memset(g, 0, sizeof *g);
}

command graph_node_command(const engine_graph *g, const graph_node *n)
{
    return (command){.kind = n->kind,
                     .object = n->kernel,
                     .groups = {n->groups[0], n->groups[1], n->groups[2]},
                     .binds = &g->binds[n->bind_at],
                     .bind_count = n->bind_count,
                     .push = g->push + n->push_at,
                     .push_size = n->push_size};
}

static salvo_status add_node(engine_graph *g, command_kind kind, const engine_kernel *k,
                             const uint32_t groups[3], const accel_bind *binds,
                             uint32_t bind_count, const void *push, uint32_t push_size)
{
    const salvo_allocator *a = g->q->alloc;
    if (g->node_count == UINT32_MAX - 1 ||
        !salvo_mem_grow(a, (void **)&g->nodes, &g->node_cap, (size_t)g->node_count + 1,
                        sizeof *g->nodes) ||
        /* Room for one at least: with a node, neither array is NULL, so
         * that a node's slice of either (empty or not) is never a null
         * pointer handed to memcpy or offset. */
        !salvo_mem_grow(a, (void **)&g->binds, &g->bind_cap, g->bind_count + bind_count + 1,
                        sizeof *g->binds) ||
        !salvo_mem_grow(a, (void **)&g->push, &g->push_cap, g->push_used + push_size + 1, 1))
        return QUEUE_FAIL(g->q, SALVO_ERROR_OUT_OF_HOST_MEMORY,
                          "capture into %s: out of host memory; the call was not captured",
                          g->label);
    graph_node *n = &g->nodes[g->node_count++];
    *n = (graph_node){.kind = kind,
                      .kernel = k,
                      .groups = {groups[0], groups[1], groups[2]},
                      .bind_count = bind_count,
                      .push_size = push_size,
                      .bind_at = g->bind_count,
                      .push_at = g->push_used};
    if (bind_count)
        memcpy(g->binds + g->bind_count, binds, bind_count * sizeof *binds);
    g->bind_count += bind_count;
    if (push_size)
        memcpy(g->push + g->push_used, push, push_size);
    g->push_used += push_size;
    return SALVO_OK;
}

salvo_status graph_add_command(engine_graph *g, const command *c)
{
    return add_node(g, c->kind, command_is_dispatch(c) ? c->object : NULL, c->groups, c->binds,
                    c->bind_count, c->push, c->push_size);
}

/* How node n touches its i-th bound range. */
static salvo_access node_access(const engine_graph *g, const graph_node *n, uint32_t i)
{
    command c = graph_node_command(g, n);
    return command_access(&c, i);
}

/* ------------------------------------------------------------------ */
/* Levels                                                              */
/* ------------------------------------------------------------------ */

/* What earlier nodes did to one buffer: ranges with the highest level
 * that read or wrote them, sorted by where they begin, so that a lookup
 * looks only at the ranges that can overlap (those beginning less than
 * the longest range before the one looked up). Also the span of all it
 * touched and how, the buffer's touch for the stream's hazards. */
typedef struct track_entry {
    uint64_t begin, end;
    bool write;
    uint32_t level;
} track_entry;

typedef struct track {
    const void *buffer; /* NULL: a free cell of the table */
    track_entry *e;
    size_t count, cap;
    uint64_t longest; /* the longest range ever noted */
    uint64_t lo, hi;  /* the span touched */
    salvo_access how;
} track;

typedef struct tracks {
    const salvo_allocator *a;
    track *cells;
    size_t cap; /* a power of two, at least twice the buffers */
} tracks;

static track *track_of(tracks *t, const void *buffer)
{
    size_t h = ((uintptr_t)buffer >> 4) * 0x9E3779B97F4A7C15ull;
    for (size_t i = h & (t->cap - 1);; i = (i + 1) & (t->cap - 1))
        if (t->cells[i].buffer == buffer || !t->cells[i].buffer) {
            t->cells[i].buffer = buffer;
            return &t->cells[i];
        }
}

static void tracks_free(tracks *t)
{
    for (size_t i = 0; t->cells && i < t->cap; i++)
        salvo_mem_free(t->a, t->cells[i].e);
    salvo_mem_free(t->a, t->cells);
}

/* The first entry of tr that may overlap a range beginning at lo. */
static size_t track_first(const track *tr, uint64_t lo)
{
    uint64_t from = lo > tr->longest ? lo - tr->longest : 0;
    size_t l = 0, r = tr->count;
    while (l < r) {
        size_t m = l + (r - l) / 2;
        if (tr->e[m].begin < from)
            l = m + 1;
        else
            r = m;
    }
    return l;
}

/* The highest level, plus one, of what [lo, hi) conflicts with in tr. */
static uint32_t track_after(const track *tr, uint64_t lo, uint64_t hi, bool write)
{
    uint32_t level = 0;
    for (size_t k = track_first(tr, lo); k < tr->count && tr->e[k].begin < hi; k++)
        if (lo < tr->e[k].end && (write || tr->e[k].write) && tr->e[k].level + 1 > level)
            level = tr->e[k].level + 1;
    return level;
}

/* Note that a node of this level touched [b, e) of tr. */
static bool track_note(tracks *t, track *tr, uint64_t b, uint64_t e, salvo_access how,
                       uint32_t level)
{
    bool write = how & SALVO_ACCESS_WRITE;
    if (!tr->how || b < tr->lo)
        tr->lo = b;
    if (!tr->how || e > tr->hi)
        tr->hi = e;
    tr->how |= how;
    size_t first = track_first(tr, b);
    if (write) {
        /* A write hides what it covers: whatever conflicts with those
         * conflicts with it, and its level is higher. */
        size_t k = first, i = first;
        for (; i < tr->count && tr->e[i].begin < e; i++)
            if (!(tr->e[i].begin >= b && tr->e[i].end <= e))
                tr->e[k++] = tr->e[i];
        if (k < i) {
            memmove(tr->e + k, tr->e + i, (tr->count - i) * sizeof *tr->e);
            tr->count -= i - k;
        }
    } else {
        for (size_t i = first; i < tr->count && tr->e[i].begin <= b; i++)
            if (!tr->e[i].write && tr->e[i].begin == b && tr->e[i].end == e) {
                if (level > tr->e[i].level)
                    tr->e[i].level = level;
                return true;
            }
    }
    if (!salvo_mem_grow(t->a, (void **)&tr->e, &tr->cap, tr->count + 1, sizeof *tr->e))
        return false;
    /* Keep the order: most ranges come in rising order, so this is
     * usually the end. */
    size_t at = tr->count;
    while (at > 0 && tr->e[at - 1].begin > b)
        at--;
    memmove(tr->e + at + 1, tr->e + at, (tr->count - at) * sizeof *tr->e);
    tr->e[at] = (track_entry){b, e, write, level};
    tr->count++;
    if (e - b > tr->longest)
        tr->longest = e - b;
    return true;
}

/* Give every node its level; g->levels their count; t what each buffer
 * saw (the caller frees it). */
static salvo_status compute_levels(engine_graph *g, tracks *t)
{
    *t = (tracks){.a = g->q->alloc, .cap = 16};
    while (t->cap < 2 * (size_t)g->bind_count + 2)
        t->cap *= 2;
    t->cells = salvo_mem_calloc(t->a, t->cap, sizeof *t->cells);
    if (!t->cells)
        return SALVO_ERROR_OUT_OF_HOST_MEMORY;
    g->levels = 0;
    /* A kernel that reaches memory through buffer addresses may touch
     * anything: it comes after every earlier node, and every later node
     * after it. */
    uint32_t floor = 0;
    g->addresses = false;
    for (uint32_t j = 0; j < g->node_count; j++) {
        graph_node *n = &g->nodes[j];
        const accel_bind *b = &g->binds[n->bind_at];
        command cmd = graph_node_command(g, n);
        bool addresses = command_touches_any(&cmd);
        uint32_t level = addresses ? g->levels : floor;
        if (addresses) {
            floor = level + 1;
            g->addresses = true;
        }
        for (uint32_t i = 0; i < n->bind_count; i++) {
            uint32_t after = track_after(track_of(t, accel_bind_target(&b[i])), b[i].offset,
                                         b[i].offset + b[i].size,
                                         node_access(g, n, i) & SALVO_ACCESS_WRITE);
            if (after > level)
                level = after;
        }
        n->level = level;
        for (uint32_t i = 0; i < n->bind_count; i++)
            if (!track_note(t, track_of(t, accel_bind_target(&b[i])), b[i].offset, b[i].offset + b[i].size,
                            node_access(g, n, i), level))
                return SALVO_ERROR_OUT_OF_HOST_MEMORY;
        if (level + 1 > g->levels)
            g->levels = level + 1;
    }
    return SALVO_OK;
}

/* The order (by level, then capture order), the barriers, the touches
 * and the names, into fresh arrays; g's are replaced only on success. */
static salvo_status plan(engine_graph *g)
{
    const salvo_allocator *a = g->q->alloc;
    tracks t;
    salvo_status r = compute_levels(g, &t);
    if (r != SALVO_OK) {
        tracks_free(&t);
        return r;
    }
    uint32_t n = g->node_count;
    uint32_t *order = salvo_mem_alloc(a, (n ? n : 1) * sizeof *order);
    bool *barrier = salvo_mem_calloc(a, n ? n : 1, sizeof *barrier);
    uint32_t *start = salvo_mem_calloc(a, (size_t)g->levels + 1, sizeof *start);
    graph_touch *touch = salvo_mem_alloc(a, (g->bind_count ? g->bind_count : 1) * sizeof *touch);
    const char **names = salvo_mem_alloc(a, (n ? n : 1) * sizeof *names);
    if (!order || !barrier || !start || !touch || !names) {
        tracks_free(&t);
        salvo_mem_free(a, order);
        salvo_mem_free(a, barrier);
        salvo_mem_free(a, start);
        salvo_mem_free(a, touch);
        salvo_mem_free(a, names);
        return SALVO_ERROR_OUT_OF_HOST_MEMORY;
    }
    /* Counting sort by level, stable. */
    for (uint32_t j = 0; j < n; j++)
        start[g->nodes[j].level + 1]++;
    for (uint32_t l = 0; l < g->levels; l++)
        start[l + 1] += start[l];
    for (uint32_t j = 0; j < n; j++) {
        uint32_t pos = start[g->nodes[j].level]++;
        order[pos] = j;
        g->nodes[j].pos = pos;
    }
    salvo_mem_free(a, start);
    for (uint32_t p = 1; p < n; p++)
        barrier[p] = g->nodes[order[p]].level != g->nodes[order[p - 1]].level;
    /* One touch per buffer: the span of its ranges, every way it is used. */
    uint32_t touches = 0, name_count = 0, launches = 0;
    for (size_t i = 0; i < t.cap; i++)
        if (t.cells[i].buffer)
            touch[touches++] = (graph_touch){t.cells[i].buffer, t.cells[i].lo, t.cells[i].hi,
                                             t.cells[i].how};
    tracks_free(&t);
    bool has_copy = false, to_host = false;
    uint64_t groups = 0;
    for (uint32_t j = 0; j < n; j++) {
        const graph_node *nd = &g->nodes[j];
        if (!to_host) {
            command c = graph_node_command(g, nd);
            to_host = command_writes_host(&c);
        }
        if (nd->kind != COMMAND_DISPATCH && nd->kind != COMMAND_DISPATCH_INDIRECT) {
            has_copy = true;
            continue;
        }
        launches++;
        /* An indirect one's counts are the device's to read: not known here. */
        if (nd->kind == COMMAND_DISPATCH)
            groups += (uint64_t)nd->groups[0] * nd->groups[1] * nd->groups[2];
        uint32_t k = 0;
        while (k < name_count && names[k] != nd->kernel->name)
            k++;
        if (k == name_count)
            names[name_count++] = nd->kernel->name;
    }
    plan_free(g);
    g->order = order;
    g->barrier = barrier;
    g->touch = touch;
    g->touch_count = touches;
    g->names = names;
    g->name_count = name_count;
    g->has_copy = has_copy;
    g->to_host = to_host;
    g->launch_count = launches;
    g->groups_total = groups;
    g->plan_number++;
    return SALVO_OK;
}

/* ------------------------------------------------------------------ */
/* Recording                                                           */
/* ------------------------------------------------------------------ */

/* "add, copy" into buf: the graph's kernels, for failures. */
static void kernel_list(const engine_graph *g, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < g->name_count && used < size; i++) {
        int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", g->names[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    if (g->has_copy && used < size)
        snprintf(buf + used, size - used, "%s(copy)", used ? ", " : "");
}

/* A recording for chunk c that no pending batch executes: its own when
 * that is free, else a fresh one (the old one retires with the batches
 * that execute it). Its pool fits the chunk's launches. */
static salvo_status chunk_recording_locked(engine_graph *g, graph_chunk *c, uint32_t sets,
                                           uint32_t per_set, uint32_t images)
    SALVO_REQUIRES(g->q->lock)
{
    queue *q = g->q;
    graph_recording *rec = c->rec;
    if (rec && recording_idle_locked(g, rec)) {
        if (rec->pool_sets >= sets && rec->pool_per_set >= per_set &&
            rec->pool_images >= images) {
            /* Cannot fail (Vulkan's reset returns success): as a slot's. */
            VT(q)->descpool_reset(SELF(q), q->adev, rec->pool);
            rec->born = g->replays + 1;
            return SALVO_OK;
        }
        /* Too small for the chunk now: a fresh one below. */
    }
    graph_recording *fresh = salvo_mem_calloc(q->alloc, 1, sizeof *fresh);
    if (!fresh)
        return QUEUE_FAIL(q, SALVO_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", g->label);
    fresh->q = q;
    fresh->release.fn = recording_release;
    fresh->pool_sets = sets;
    fresh->pool_per_set = per_set;
    fresh->pool_images = images;
    fresh->born = g->replays + 1;
    accel_result ar = VT(q)->cmd_create_reusable(SELF(q), q->adev, 0, &fresh->cmd);
    if (ar == ACCEL_SUCCESS)
        ar = VT(q)->descpool_create(SELF(q), q->adev, sets, per_set, images, &fresh->pool);
    if (ar != ACCEL_SUCCESS) {
        recording_free(q, fresh);
        if (ar == ACCEL_ERROR_DEVICE_LOST)
            queue_mark_lost_locked(g->q);
        char names[256];
        kernel_list(g, names, sizeof names);
        return QUEUE_FAIL(q, salvo_status_from_accel(ar),
                          "%s: command buffer or descriptor pool: %s; kernels: %s", g->label,
                          accel_result_name(ar), names);
    }
    recording_let_go_locked(g, rec);
    c->rec = fresh;
    return SALVO_OK;
}

static salvo_status record_chunk_locked(engine_graph *g, graph_chunk *c) SALVO_REQUIRES(g->q->lock)
{
    queue *q = g->q;
    uint32_t sets = 0, descriptors = 0, images = 0;
    for (uint32_t p = c->first; p < c->first + c->count; p++) {
        const graph_node *n = &g->nodes[g->order[p]];
        command cmd = graph_node_command(g, n);
        if (command_takes_set(&cmd)) {
            sets++;
            descriptors += command_descriptors(&cmd);
            images += command_image_descriptors(&cmd);
        }
    }
    uint32_t per_set = sets ? (descriptors + sets - 1) / sets : 1;
    salvo_status r = chunk_recording_locked(g, c, sets ? sets : 1, per_set ? per_set : 1,
                                            images ? images : 1);
    if (r != SALVO_OK)
        return r;
    graph_recording *rec = c->rec;
    accel_result ar = VT(q)->cmd_begin_reusable(SELF(q), q->adev, rec->cmd);
    accel_barrier kind = g->has_copy ? ACCEL_BARRIER_WORK : ACCEL_BARRIER_COMPUTE_COMPUTE;
    const char *what = "could not be begun";
    for (uint32_t p = c->first; ar == ACCEL_SUCCESS && p < c->first + c->count; p++) {
        const graph_node *n = &g->nodes[g->order[p]];
        if (g->barrier[p]) {
            VT(q)->cmd_barrier(SELF(q), q->adev, rec->cmd, kind);
            COUNTER_ADD(&q->n, barriers_emitted, 1);
        }
        command cmd = graph_node_command(g, n);
        ar = command_record(q->acc, q->adev, rec->cmd, rec->pool, &cmd);
        what = "launch could not be recorded";
    }
    if (ar == ACCEL_SUCCESS) {
        ar = VT(q)->cmd_end(SELF(q), q->adev, rec->cmd);
        what = "could not be ended";
    }
    if (ar != ACCEL_SUCCESS) {
        /* Not executable: recorded from scratch next time. */
        VT(q)->cmd_reset(SELF(q), q->adev, rec->cmd);
        if (ar == ACCEL_ERROR_DEVICE_LOST)
            queue_mark_lost_locked(g->q);
        char names[256];
        kernel_list(g, names, sizeof names);
        return QUEUE_FAIL(q, salvo_status_from_accel(ar), "%s: recording %s (%s); kernels: %s",
                          g->label, what, accel_result_name(ar), names);
    }
    c->stale = false;
    return SALVO_OK;
}

/* Whether the node at position p may be an inline chunk: recording it
 * takes no descriptor set from a pool (a replay's batch has no room set
 * aside for one, and a pool that runs out mid-replay would leave part of
 * the graph recorded). */
static bool inline_fits(const engine_graph *g, uint32_t p)
{
    command c = graph_node_command(g, &g->nodes[g->order[p]]);
    return !command_takes_pool(&c, g->q->push_descriptors);
}

/* The stale chunks recorded again. An inline chunk records nothing here
 * (unless new bindings moved a node that cannot be inline into its place:
 * then it becomes a chunk of its own). */
static salvo_status record_stale_locked(engine_graph *g) SALVO_REQUIRES(g->q->lock)
{
    for (uint32_t i = 0; i < g->chunk_count; i++) {
        graph_chunk *c = &g->chunks[i];
        if (c->inline_node && !inline_fits(g, c->first)) {
            c->inline_node = false;
            c->stale = true;
        }
        if (!c->stale)
            continue;
        g->payload_stale = true;
        if (c->inline_node) {
            c->stale = false;
            g->cmds[i] = NULL;
            continue;
        }
        salvo_status r = record_chunk_locked(g, c);
        if (r != SALVO_OK)
            return r;
        g->cmds[i] = c->rec->cmd;
    }
    return SALVO_OK;
}

/* The replay's payload made again from the chunks (command.h,
 * command_graph): the recordings in order, each inline node's parameters
 * as they are now. */
static salvo_status build_payload_locked(engine_graph *g) SALVO_REQUIRES(g->q->lock)
{
    const salvo_allocator *a = g->q->alloc;
    uint32_t nodes = 0;
    size_t push = 0, binds = 0;
    for (uint32_t i = 0; i < g->chunk_count; i++) {
        if (!g->chunks[i].inline_node)
            continue;
        const graph_node *n = &g->nodes[g->order[g->chunks[i].first]];
        nodes++;
        push += n->push_size;
        binds += n->bind_count;
    }
    size_t size = sizeof(command_graph) + (size_t)g->chunk_count * sizeof(accel_cmd *) +
                  (size_t)nodes * sizeof(command_graph_node) + push;
    if (!salvo_mem_grow(a, (void **)&g->payload, &g->payload_cap, size, 1) ||
        !salvo_mem_grow(a, (void **)&g->payload_binds, &g->payload_bind_cap, binds ? binds : 1,
                        sizeof *g->payload_binds))
        return QUEUE_FAIL(g->q, SALVO_ERROR_OUT_OF_HOST_MEMORY, "replay of %s: out of host memory",
                          g->label);
    command_graph h = {.parts = g->chunk_count, .nodes = nodes, .plan = g->plan_number};
    memcpy(g->payload, &h, sizeof h);
    unsigned char *parts = g->payload + sizeof h;
    if (g->chunk_count)
        memcpy(parts, g->cmds, (size_t)g->chunk_count * sizeof *g->cmds);
    unsigned char *node_at = parts + (size_t)g->chunk_count * sizeof(accel_cmd *);
    unsigned char *push_at = node_at + (size_t)nodes * sizeof(command_graph_node);
    accel_bind *bind_at = g->payload_binds;
    accel_barrier kind = g->has_copy ? ACCEL_BARRIER_WORK : ACCEL_BARRIER_COMPUTE_COMPUTE;
    for (uint32_t i = 0; i < g->chunk_count; i++) {
        uint32_t p = g->chunks[i].first;
        if (!g->chunks[i].inline_node)
            continue;
        command c = graph_node_command(g, &g->nodes[g->order[p]]);
        command_graph_node cn = {.object = c.object,
                                 .kind = c.kind,
                                 .groups = {c.groups[0], c.groups[1], c.groups[2]},
                                 .bind_count = c.bind_count,
                                 .push_size = c.push_size,
                                 .barrier = g->barrier[p],
                                 .barrier_kind = kind};
        memcpy(node_at, &cn, sizeof cn);
        node_at += sizeof cn;
        if (c.push_size)
            memcpy(push_at, c.push, c.push_size);
        push_at += c.push_size;
        if (c.bind_count)
            memcpy(bind_at, c.binds, c.bind_count * sizeof *bind_at);
        bind_at += c.bind_count;
    }
    g->payload_size = size;
    g->payload_bind_count = binds;
    g->payload_stale = false;
    ahead_forget(&g->ahead);
    return SALVO_OK;
}

accel_cmd *graph_direct_locked(engine_graph *g, accel_barrier lead, uint64_t serial)
{
    command c = graph_replay_command(g);
    /* Inline nodes take no set (inline_fits): no pool. */
    return ahead_take_locked(&g->ahead, g->q, serial, lead, &c, g->to_host);
}

salvo_status graph_make_ahead_locked(engine_graph *g, accel_barrier lead)
{
    if (g->node_count == 0 || g->payload_stale)
        return SALVO_OK;
    command c = graph_replay_command(g);
    accel_result ar = ahead_make_locked(&g->ahead, g->q, lead, &c, g->to_host);
    if (ar != ACCEL_ERROR_DEVICE_LOST)
        return SALVO_OK;
    queue_mark_lost_locked(g->q);
    char names[256];
    graph_failure_names(g, names, sizeof names);
    return QUEUE_FAIL(g->q, SALVO_ERROR_DEVICE_LOST,
                      "end of capture of %s: the device was lost while its replay was recorded "
                      "(VK_ERROR_DEVICE_LOST); %s",
                      g->label, names);
}

bool graph_replay_current(const engine_graph *g, const command *c)
{
    command_graph h;
    memcpy(&h, c->push, sizeof h);
    return h.plan == g->plan_number;
}

command graph_replay_command(const engine_graph *g)
{
    return (command){.kind = COMMAND_GRAPH,
                     .object = g,
                     .binds = g->payload_bind_count ? g->payload_binds : NULL,
                     .bind_count = (uint32_t)g->payload_bind_count,
                     .push = g->payload,
                     .push_size = (uint32_t)g->payload_size};
}

void graph_failure_names(const engine_graph *g, char *buf, size_t size)
{
    char kernels[128];
    kernel_list(g, kernels, sizeof kernels);
    int w0 = snprintf(buf, size, "kernels: %s", kernels);
    size_t used = w0 < 0 ? 0 : (size_t)w0;
    bool first = true;
    for (uint32_t i = 0; i < g->chunk_count && used < size; i++) {
        const graph_chunk *c = &g->chunks[i];
        if (!c->inline_node)
            continue;
        uint32_t n = g->order[c->first];
        command cmd = graph_node_command(g, &g->nodes[n]);
        int w = snprintf(buf + used, size - used, "%snode %u, %s",
                         first ? "; recorded at each replay: " : "; ", n, command_name(&cmd));
        first = false;
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

salvo_status graph_prepare_locked(engine_graph *g, uint32_t stream)
{
    salvo_status r = record_stale_locked(g);
    if (r == SALVO_OK && g->payload_stale)
        r = build_payload_locked(g);
    if (r != SALVO_OK)
        return r;
    for (uint32_t i = 0; i < g->use_count; i++)
        if (g->uses[i].stream == stream)
            return SALVO_OK;
    /* A stream new to the graph: drop the uses that are over, then room
     * for one more. */
    uint32_t kept = 0;
    for (uint32_t i = 0; i < g->use_count; i++)
        if (!queue_batch_done_locked(g->q, g->uses[i].serial))
            g->uses[kept++] = g->uses[i];
    g->use_count = kept;
    if (!salvo_mem_grow(g->q->alloc, (void **)&g->uses, &g->use_cap, (size_t)kept + 1,
                        sizeof *g->uses))
        return QUEUE_FAIL(g->q, SALVO_ERROR_OUT_OF_HOST_MEMORY, "replay of %s: out of host memory",
                          g->label);
    return SALVO_OK;
}

void graph_note_replay_locked(engine_graph *g, uint32_t stream, uint64_t serial)
{
    uint32_t u = 0;
    while (u < g->use_count && g->uses[u].stream != stream)
        u++;
    /* Room made by graph_prepare_locked: u < use_cap. */
    if (u == g->use_count)
        g->use_count++;
    g->uses[u] = (graph_use){.stream = stream, .replay = ++g->replays, .serial = serial};
}

salvo_status graph_compile_locked(engine_graph *g)
{
    const salvo_allocator *a = g->q->alloc;
    salvo_status r = plan(g);
    if (r != SALVO_OK)
        return QUEUE_FAIL(g->q, r, "end of capture of %s: out of host memory", g->label);
    bool whole_inline = g->node_count > 0 && g->node_count <= GRAPH_INLINE_NODES;
    for (uint32_t p = 0; p < g->node_count && whole_inline; p++)
        whole_inline = inline_fits(g, p);
    uint32_t per = whole_inline ? 1 : GRAPH_CHUNK_NODES;
    uint32_t count = (g->node_count + per - 1) / per;
    g->chunks = salvo_mem_calloc(a, count ? count : 1, sizeof *g->chunks);
    g->cmds = salvo_mem_calloc(a, count ? count : 1, sizeof *g->cmds);
    if (!g->chunks || !g->cmds) {
        salvo_mem_free(a, g->chunks);
        salvo_mem_free(a, g->cmds);
        g->chunks = NULL;
        g->cmds = NULL;
        return QUEUE_FAIL(g->q, SALVO_ERROR_OUT_OF_HOST_MEMORY,
                          "end of capture of %s: out of host memory", g->label);
    }
    g->chunk_count = count;
    for (uint32_t i = 0; i < count; i++) {
        g->chunks[i].first = i * per;
        g->chunks[i].count = g->node_count - g->chunks[i].first < per
                                 ? g->node_count - g->chunks[i].first
                                 : per;
        g->chunks[i].stale = true;
        g->chunks[i].inline_node = whole_inline;
    }
    g->payload_stale = true;
    r = record_stale_locked(g);
    if (r == SALVO_OK)
        r = build_payload_locked(g);
    if (r != SALVO_OK)
        return r;
    g->compiled = true;
    return SALVO_OK;
}

/* ------------------------------------------------------------------ */
/* Updates                                                             */
/* ------------------------------------------------------------------ */

/* The chunk holding position p (chunks cover the order in turn). */
static uint32_t chunk_at(const engine_graph *g, uint32_t p)
{
    uint32_t lo = 0, hi = g->chunk_count;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->chunks[mid].first <= p)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The node at position p changed (push constants, or bindings that leave
 * the levels as they were): from the first such change on it has a chunk
 * of its own, so that this and every later update of it records one node
 * again, not the GRAPH_CHUNK_NODES around it. Its old chunk becomes up to
 * three (before it, it, after it), all recorded at the next replay; the
 * old recording retires with the batches that execute it. Out of host
 * memory the chunk stays whole, and is recorded again whole. */
static void isolate_locked(engine_graph *g, uint32_t p) SALVO_REQUIRES(g->q->lock)
{
    uint32_t ci = chunk_at(g, p);
    graph_chunk c = g->chunks[ci];
    /* Room for GRAPH_MAX_SPLITS splits past the chunks the capture made:
     * a program that updates every node gets its chunks recorded whole,
     * not a command buffer (and a pool) per node. */
    uint32_t made = (g->node_count + GRAPH_CHUNK_NODES - 1) / GRAPH_CHUNK_NODES;
    bool inline_node = inline_fits(g, p);
    g->payload_stale = true;
    if (c.count == 1 && inline_node && !c.inline_node) {
        /* A chunk of one already: from now on inline. */
        g->chunks[ci].inline_node = true;
        g->chunks[ci].rec = NULL;
        recording_let_go_locked(g, c.rec);
    }
    if (c.count == 1 || g->chunk_count + 2 > made + 2 * GRAPH_MAX_SPLITS) {
        g->chunks[ci].stale = true;
        return;
    }
    uint32_t before = p - c.first, after = c.first + c.count - p - 1;
    uint32_t count = g->chunk_count + (before > 0) + (after > 0);
    const salvo_allocator *a = g->q->alloc;
    graph_chunk *chunks = salvo_mem_calloc(a, count, sizeof *chunks);
    accel_cmd **cmds = salvo_mem_calloc(a, count, sizeof *cmds);
    if (!chunks || !cmds) {
        salvo_mem_free(a, chunks);
        salvo_mem_free(a, cmds);
        g->chunks[ci].stale = true;
        return;
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < g->chunk_count; i++) {
        if (i != ci) {
            cmds[k] = g->cmds[i];
            chunks[k++] = g->chunks[i];
            continue;
        }
        if (before)
            chunks[k++] = (graph_chunk){.first = c.first, .count = before, .stale = true};
        chunks[k++] =
            (graph_chunk){.first = p, .count = 1, .stale = true, .inline_node = inline_node};
        if (after)
            chunks[k++] = (graph_chunk){.first = p + 1, .count = after, .stale = true};
    }
    recording_let_go_locked(g, c.rec);
    salvo_mem_free(a, g->chunks);
    salvo_mem_free(a, g->cmds);
    g->chunks = chunks;
    g->cmds = cmds;
    g->chunk_count = count;
}

salvo_status graph_set_push(engine_graph *g, uint32_t n, const void *push, uint32_t size)
{
    graph_node *nd = &g->nodes[n];
    if (size)
        memcpy(g->push + nd->push_at, push, size);
    isolate_locked(g, nd->pos);
    g->payload_stale = true;
    return SALVO_OK;
}

salvo_status graph_set_bindings_locked(engine_graph *g, uint32_t n, const accel_bind *binds)
{
    const salvo_allocator *a = g->q->alloc;
    graph_node *nd = &g->nodes[n];
    accel_bind *at = &g->binds[nd->bind_at];
    /* The kernel's: an indirect launch's counts, after them, stay. */
    uint32_t changed = nd->kernel->refl.binding_count;
    uint32_t count = g->node_count;
    /* Keep the old plan to tell which chunks the new one changes. */
    uint32_t *old_order = salvo_mem_alloc(a, (count ? count : 1) * sizeof *old_order);
    bool *old_barrier = salvo_mem_alloc(a, (count ? count : 1) * sizeof *old_barrier);
    accel_bind old_binds[SALVO_MAX_BINDINGS];
    if (!old_order || !old_barrier) {
        salvo_mem_free(a, old_order);
        salvo_mem_free(a, old_barrier);
        return QUEUE_FAIL(g->q, SALVO_ERROR_OUT_OF_HOST_MEMORY,
                          "graph_set_bindings on %s: out of host memory; nothing changed",
                          g->label);
    }
    memcpy(old_order, g->order, count * sizeof *old_order);
    memcpy(old_barrier, g->barrier, count * sizeof *old_barrier);
    memcpy(old_binds, at, changed * sizeof *at);
    memcpy(at, binds, changed * sizeof *at);
    salvo_status r = plan(g);
    if (r != SALVO_OK) {
        memcpy(at, old_binds, changed * sizeof *at);
        /* The old levels again (the old arrays are still in place). */
        for (uint32_t p = 0; p < count; p++)
            g->nodes[old_order[p]].pos = p;
        salvo_mem_free(a, old_order);
        salvo_mem_free(a, old_barrier);
        return QUEUE_FAIL(g->q, r, "graph_set_bindings on %s: out of host memory; nothing changed",
                          g->label);
    }
    for (uint32_t i = 0; i < g->chunk_count; i++) {
        graph_chunk *c = &g->chunks[i];
        size_t span = c->count;
        if (memcmp(old_order + c->first, g->order + c->first, span * sizeof *old_order) ||
            memcmp(old_barrier + c->first, g->barrier + c->first, span * sizeof *old_barrier))
            c->stale = true;
    }
    isolate_locked(g, nd->pos);
    salvo_mem_free(a, old_order);
    salvo_mem_free(a, old_barrier);
    return SALVO_OK;
}

enum {
    SHAPE_MAX = 160
};

/* What graph_update compares of a node, in words: a launch's kernel,
 * ranges and push bytes; the kind of anything else. */
static void node_shape(const command *c, char *out, size_t size)
{
    switch (c->kind) {
    case COMMAND_DISPATCH:
    case COMMAND_DISPATCH_INDIRECT:
        snprintf(out, size, "%s of '%s' (%u ranges, %u bytes of push constants)",
                 c->kind == COMMAND_DISPATCH ? "a launch" : "an indirect launch", command_name(c),
                 c->bind_count, c->push_size);
        return;
    case COMMAND_FILL:
        snprintf(out, size, "a fill of whole words");
        return;
    case COMMAND_FILL_BYTES:
        snprintf(out, size, "a fill_pattern starting or ending within a word");
        return;
    default:
        snprintf(out, size, "%s (%u ranges)", command_name(c), c->bind_count);
        return;
    }
}

salvo_status graph_update_locked(engine_graph *g, const engine_graph *from)
{
    queue *q = g->q;
    if (from == g) {
        for (uint32_t i = 0; i < g->chunk_count; i++)
            g->chunks[i].stale = true;
        return SALVO_OK;
    }
    if (from->node_count != g->node_count)
        return QUEUE_FAIL(q, SALVO_ERROR_INVALID_ARGUMENT,
                          "graph_update: %s has %u nodes, %s %u: not the same shape; nothing "
                          "changed",
                          g->label, g->node_count, from->label, from->node_count);
    for (uint32_t i = 0; i < g->node_count; i++) {
        const graph_node *a = &g->nodes[i], *b = &from->nodes[i];
        if (a->kind == b->kind && a->kernel == b->kernel && a->bind_count == b->bind_count &&
            a->push_size == b->push_size)
            continue;
        command ca = graph_node_command(g, a), cb = graph_node_command(from, b);
        char sa[SHAPE_MAX], sb[SHAPE_MAX];
        node_shape(&ca, sa, sizeof sa);
        node_shape(&cb, sb, sizeof sb);
        return QUEUE_FAIL(q, SALVO_ERROR_INVALID_ARGUMENT,
                          "graph_update: node %u is %s in %s, %s in %s: not the same shape; "
                          "nothing changed",
                          i, sa, g->label, sb, from->label);
    }
    if (g->node_count == 0)
        return SALVO_OK; /* nothing to take (and no arrays to copy from) */
    /* The old parameters, and the old order, kept to put back should the
     * new plan find no memory. */
    const salvo_allocator *al = q->alloc;
    uint32_t n = g->node_count;
    accel_bind *old_binds = salvo_mem_alloc(al, (g->bind_count ? g->bind_count : 1) * sizeof *old_binds);
    unsigned char *old_push = salvo_mem_alloc(al, g->push_used ? g->push_used : 1);
    uint32_t *old_groups = salvo_mem_alloc(al, (n ? n : 1) * 3 * sizeof *old_groups);
    uint32_t *old_order = salvo_mem_alloc(al, (n ? n : 1) * sizeof *old_order);
    if (!old_binds || !old_push || !old_groups || !old_order) {
        salvo_mem_free(al, old_binds);
        salvo_mem_free(al, old_push);
        salvo_mem_free(al, old_groups);
        salvo_mem_free(al, old_order);
        return QUEUE_FAIL(q, SALVO_ERROR_OUT_OF_HOST_MEMORY,
                          "graph_update of %s: out of host memory; nothing changed", g->label);
    }
    memcpy(old_binds, g->binds, g->bind_count * sizeof *old_binds);
    memcpy(old_push, g->push, g->push_used);
    memcpy(old_order, g->order, n * sizeof *old_order);
    for (uint32_t i = 0; i < n; i++) {
        graph_node *a = &g->nodes[i];
        const graph_node *b = &from->nodes[i];
        memcpy(&old_groups[3 * i], a->groups, sizeof a->groups);
        memcpy(a->groups, b->groups, sizeof a->groups);
        memcpy(&g->binds[a->bind_at], &from->binds[b->bind_at], a->bind_count * sizeof *g->binds);
        if (a->push_size)
            memcpy(g->push + a->push_at, from->push + b->push_at, a->push_size);
    }
    salvo_status r = plan(g);
    if (r != SALVO_OK) {
        memcpy(g->binds, old_binds, g->bind_count * sizeof *old_binds);
        memcpy(g->push, old_push, g->push_used);
        for (uint32_t i = 0; i < n; i++)
            memcpy(g->nodes[i].groups, &old_groups[3 * i], sizeof g->nodes[i].groups);
        /* The old levels again (the old arrays are still in place). */
        for (uint32_t p = 0; p < n; p++)
            g->nodes[old_order[p]].pos = p;
    } else {
        /* Recorded again at the next replay, into fresh command buffers
         * where pending batches execute the old ones. */
        for (uint32_t i = 0; i < g->chunk_count; i++)
            g->chunks[i].stale = true;
    }
    salvo_mem_free(al, old_binds);
    salvo_mem_free(al, old_push);
    salvo_mem_free(al, old_groups);
    salvo_mem_free(al, old_order);
    return r == SALVO_OK ? SALVO_OK
                         : QUEUE_FAIL(q, r, "graph_update of %s: out of host memory; nothing "
                                            "changed",
                                      g->label);
}
