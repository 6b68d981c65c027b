#include "core/slot.h"

#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/check.h"

salvo_status salvo_status_from_accel(accel_result r)
{
    switch (r) {
    case ACCEL_SUCCESS: return SALVO_OK;
    case ACCEL_NOT_READY: return SALVO_NOT_READY;
    case ACCEL_TIMEOUT: return SALVO_TIMEOUT;
    case ACCEL_ERROR_OUT_OF_HOST_MEMORY: return SALVO_ERROR_OUT_OF_HOST_MEMORY;
    case ACCEL_ERROR_OUT_OF_DEVICE_MEMORY:
    case ACCEL_ERROR_OUT_OF_POOL_MEMORY: return SALVO_ERROR_OUT_OF_DEVICE_MEMORY;
    case ACCEL_ERROR_DEVICE_LOST: return SALVO_ERROR_DEVICE_LOST;
    case ACCEL_ERROR_FEATURE_NOT_PRESENT:
    case ACCEL_ERROR_EXTENSION_NOT_PRESENT:
    case ACCEL_ERROR_LAYER_NOT_PRESENT:
    case ACCEL_ERROR_INCOMPATIBLE_DRIVER: return SALVO_ERROR_UNSUPPORTED;
    case ACCEL_ERROR_INVALID_EXTERNAL_HANDLE: return SALVO_ERROR_INVALID_ARGUMENT;
    default: return r > 0 ? SALVO_NOT_READY : SALVO_ERROR_UNKNOWN;
    }
}

const char *slot_state_name(slot_state st)
{
    switch (st) {
    case SLOT_IDLE: return "IDLE";
    case SLOT_RECORDING: return "RECORDING";
    case SLOT_HELD: return "HELD";
    case SLOT_IN_FLIGHT: return "IN_FLIGHT";
    case SLOT_ABANDONED: return "ABANDONED";
    }
    return "?";
}

#define VT(env) ((env)->acc->vt)
#define SELF(env) ((env)->acc->self)

/* The table by serial. Hashing a serial: consecutive serials spread over
 * the cells; an empty cell ends a probe (removal shifts back). */
static uint32_t cell_of(const slot_table *t, uint64_t serial)
{
    return (uint32_t)((serial * 0x9E3779B97F4A7C15ull) >> 32) & t->mask;
}

static void table_put(slot_table *t, slot *s)
{
    uint32_t i = cell_of(t, s->serial);
    while (t->cells[i])
        i = (i + 1) & t->mask;
    t->cells[i] = s;
    t->count++;
}

salvo_status slot_table_reserve(slot_table *t, const salvo_allocator *alloc, uint32_t needed)
{
    uint32_t cells = 16;
    while (cells < 2 * needed)
        cells *= 2;
    if (t->cells && cells <= t->mask + 1)
        return SALVO_OK;
    slot **fresh = salvo_mem_calloc(alloc, cells, sizeof *fresh);
    if (!fresh)
        return SALVO_ERROR_OUT_OF_HOST_MEMORY;
    slot_table old = *t;
    t->cells = fresh;
    t->mask = cells - 1;
    t->count = 0;
    for (uint32_t i = 0; old.cells && i <= old.mask; i++)
        if (old.cells[i])
            table_put(t, old.cells[i]);
    salvo_mem_free(alloc, old.cells);
    return SALVO_OK;
}

void slot_table_free(slot_table *t, const salvo_allocator *alloc)
{
    salvo_mem_free(alloc, t->cells);
    memset(t, 0, sizeof *t);
}

slot *slot_table_find(const slot_table *t, uint64_t serial)
{
    if (!t->cells || serial == 0)
        return NULL;
    for (uint32_t i = cell_of(t, serial);; i = (i + 1) & t->mask) {
        slot *s = t->cells[i];
        if (!s || s->serial == serial)
            return s;
    }
}

static void table_remove(slot_table *t, const slot *s)
{
    uint32_t i = cell_of(t, s->serial);
    while (t->cells[i] != s) {
        SALVO_CHECK(t->cells[i], "batch %llu missing from the table",
                    (unsigned long long)s->serial);
        if (!t->cells[i])
            return;
        i = (i + 1) & t->mask;
    }
    t->cells[i] = NULL;
    t->count--;
    /* Close the gap: later cells of the run that would be found through
     * it move back. */
    for (uint32_t j = (i + 1) & t->mask; t->cells[j]; j = (j + 1) & t->mask) {
        uint32_t home = cell_of(t, t->cells[j]->serial);
        /* Movable to i when home lies cyclically outside (i, j]. */
        bool outside = i <= j ? (home <= i || home > j) : (home <= i && home > j);
        if (outside) {
            t->cells[i] = t->cells[j];
            t->cells[j] = NULL;
            i = j;
        }
    }
}

#ifdef SALVO_CHECKS
/* Whether the diagram in slot.h has the edge from -> to. */
static bool edge(slot_state from, slot_state to)
{
    if (to == SLOT_ABANDONED)
        return true;
    switch (from) {
    case SLOT_IDLE: return to == SLOT_RECORDING;
    case SLOT_RECORDING: return to == SLOT_IDLE || to == SLOT_HELD || to == SLOT_IN_FLIGHT;
    case SLOT_HELD: return to == SLOT_IN_FLIGHT || to == SLOT_IDLE;
    case SLOT_IN_FLIGHT: return to == SLOT_IDLE;
    case SLOT_ABANDONED: return false;
    }
    return false;
}
#endif

/* The one place a slot's state changes: checked against the diagram, and
 * the device's table kept to the active batches. */
static void slot_move(slot *s, const slot_env *env, slot_state to)
{
    SALVO_CHECK(edge(s->state, to), "batch %llu: %s -> %s is not a transition",
                (unsigned long long)s->serial, slot_state_name(s->state), slot_state_name(to));
    bool was = slot_active(s);
    s->state = to;
    bool is = slot_active(s);
    if (env && env->table && was != is) {
        if (is)
            table_put(env->table, s);
        else
            table_remove(env->table, s);
    }
    SALVO_CHECK(!env || !env->table || env->table->count <= env->table->mask / 2 + 1,
                "batch table over its reserve (%u of %u cells)", env->table->count,
                env->table->mask + 1);
}

static salvo_status refuse(const slot *s, const slot_env *env, const char *op)
{
    return SALVO_FAIL(env->log, SALVO_ERROR_INVALID_STATE, "slot: %s refused in state %s", op,
                      slot_state_name(s->state));
}

/* Back to IDLE: fields only, so it cannot fail and allocates nothing. The
 * pool reset only returns sets to the pool (Vulkan defines it as always
 * succeeding); the command buffer is reset implicitly by the next begin. */
static void to_idle(slot *s, const slot_env *env)
{
    VT(env)->descpool_reset(SELF(env), env->dev, s->pool);
    slot_move(s, env, SLOT_IDLE);
    s->direct = NULL;
    s->direct_dirty = false;
    s->empty = false;
    s->launches = 0;
    s->name_count = 0;
    s->names_dropped = 0;
    s->wait_count = 0;
    s->host_read = NULL;
    s->host_reads = 0;
}

/* Put the command buffer back in the initial state. A driver may need
 * memory for that and refuse: tried a bounded number of times (a lost
 * device is not retried: its buffers are beyond use), then left marked
 * for the next begin. Returns the last result. */
static accel_result reset_cmd(slot *s, const slot_env *env)
{
    accel_result r = ACCEL_SUCCESS;
    for (int attempt = 0; attempt < SLOT_RESET_ATTEMPTS; attempt++) {
        r = VT(env)->cmd_reset(SELF(env), env->dev, s->cmd);
        if (r == ACCEL_SUCCESS || r == ACCEL_ERROR_DEVICE_LOST)
            break;
    }
    s->cmd_unreset = r != ACCEL_SUCCESS;
    if (s->cmd_unreset)
        SALVO_LOG(env->log, SALVO_LOG_WARNING,
                  "slot: command buffer reset refused (%s); the next begin tries again",
                  accel_result_name(r));
    return r;
}

uint32_t slot_image_bindings(uint32_t max_sets, uint32_t bindings_per_set)
{
    uint64_t quarter = (uint64_t)max_sets * bindings_per_set / 4;
    if (quarter > UINT32_MAX)
        quarter = UINT32_MAX;
    return quarter > SALVO_MAX_BINDINGS ? (uint32_t)quarter : SALVO_MAX_BINDINGS;
}

salvo_status slot_init(slot *s, const slot_env *env, uint32_t max_sets, uint32_t bindings_per_set,
                       bool fenced)
{
    memset(s, 0, sizeof *s);
    accel_result r = VT(env)->cmd_create(SELF(env), env->dev, 0, &s->cmd);
    if (r == ACCEL_SUCCESS && fenced)
        r = VT(env)->fence_create(SELF(env), env->dev, &s->fence);
    if (r == ACCEL_SUCCESS)
        r = VT(env)->descpool_create(SELF(env), env->dev, max_sets, bindings_per_set,
                                     slot_image_bindings(max_sets, bindings_per_set), &s->pool);
    if (r != ACCEL_SUCCESS) {
        slot_destroy(s, env);
        return SALVO_FAIL(env->log, salvo_status_from_accel(r), "slot: cannot create (%s)",
                          accel_result_name(r));
    }
    s->state = SLOT_IDLE;
    return SALVO_OK;
}

void slot_destroy(slot *s, const slot_env *env)
{
    if (slot_active(s))
        slot_move(s, env, SLOT_ABANDONED); /* out of the table */
    VT(env)->cmd_destroy(SELF(env), env->dev, s->alt_cmd);
    VT(env)->descpool_destroy(SELF(env), env->dev, s->pool);
    VT(env)->fence_destroy(SELF(env), env->dev, s->fence);
    VT(env)->cmd_destroy(SELF(env), env->dev, s->cmd);
    memset(s, 0, sizeof *s);
}

salvo_status slot_use_queue(slot *s, const slot_env *env, uint32_t queue)
{
    if (s->state != SLOT_IDLE)
        return refuse(s, env, "use_queue");
    if (queue == s->queue)
        return SALVO_OK;
    if (s->alt_cmd && s->alt_queue != queue)
        return SALVO_FAIL(env->log, SALVO_ERROR_INVALID_STATE,
                          "slot: serves queues %u and %u, not %u", s->queue, s->alt_queue, queue);
    if (!s->alt_cmd) {
        accel_result r = VT(env)->cmd_create(SELF(env), env->dev, queue, &s->alt_cmd);
        if (r != ACCEL_SUCCESS)
            return salvo_status_from_accel(r);
        s->alt_queue = queue;
        s->alt_unreset = false;
    }
    if (s->prepared) {
        /* Begun for this queue: back to the initial state first. */
        s->prepared = false;
        reset_cmd(s, env);
    }
    accel_cmd *c = s->cmd;
    bool unreset = s->cmd_unreset;
    s->cmd = s->alt_cmd;
    s->cmd_unreset = s->alt_unreset;
    s->alt_cmd = c;
    s->alt_unreset = unreset;
    s->alt_queue = s->queue;
    s->queue = queue;
    return SALVO_OK;
}

/* IDLE -> RECORDING as a fresh batch with this serial and signal: nothing
 * recorded, waited for or noted yet (empty: a stand-in, see slot_submit). */
static void open_batch(slot *s, const slot_env *env, uint64_t serial, accel_sem_op signal,
                       bool empty)
{
    s->serial = serial; /* first: the table files the batch under it */
    slot_move(s, env, SLOT_RECORDING);
    s->direct = NULL;
    s->direct_dirty = false;
    s->empty = empty;
    s->buffers_noted = false;
    s->signal = signal;
    s->wait_count = 0;
    s->host_read = NULL;
    s->host_reads = 0;
    s->to_host = false;
    s->launches = 0;
    s->pointed = false;
    s->name_count = 0;
    s->names_dropped = 0;
}

salvo_status slot_begin(slot *s, const slot_env *env, uint64_t serial, accel_sem_op signal)
{
    if (s->state != SLOT_IDLE)
        return refuse(s, env, "begin");
    accel_result r = s->cmd_unreset ? reset_cmd(s, env) : ACCEL_SUCCESS;
    if (r != ACCEL_SUCCESS)
        return SALVO_FAIL(env->log, salvo_status_from_accel(r),
                          "slot: begin failed: the command buffer cannot be reset (%s)",
                          accel_result_name(r));
    if (!s->prepared)
        r = VT(env)->cmd_begin(SELF(env), env->dev, s->cmd);
    s->prepared = false;
    if (r != ACCEL_SUCCESS) {
        /* A begin that failed half-way must not leave the buffer recording. */
        reset_cmd(s, env);
        return SALVO_FAIL(env->log, salvo_status_from_accel(r), "slot: begin failed (%s)",
                          accel_result_name(r));
    }
    open_batch(s, env, serial, signal, false);
    return SALVO_OK;
}

void slot_prepare(slot *s, const slot_env *env, accel_barrier lead)
{
    if (s->state != SLOT_IDLE || s->prepared || s->cmd_unreset)
        return;
    if (VT(env)->cmd_begin(SELF(env), env->dev, s->cmd) != ACCEL_SUCCESS) {
        reset_cmd(s, env);
        return;
    }
    VT(env)->cmd_barrier(SELF(env), env->dev, s->cmd, lead);
    s->prepared = true;
}

accel_result slot_direct_cmd(slot *s, const slot_env *env, accel_barrier lead)
{
    if (!s->direct_dirty)
        return ACCEL_SUCCESS;
    accel_result r = reset_cmd(s, env);
    if (r == ACCEL_SUCCESS)
        r = VT(env)->cmd_begin(SELF(env), env->dev, s->cmd);
    if (r != ACCEL_SUCCESS) {
        s->cmd_unreset = true; /* perhaps begun part-way: reset before a begin */
        return r;
    }
    s->cmd_unreset = false;
    VT(env)->cmd_barrier(SELF(env), env->dev, s->cmd, lead);
    s->direct_dirty = false;
    return ACCEL_SUCCESS;
}

void slot_note_name(slot *s, const char *kernel_name)
{
    for (uint32_t i = 0; i < s->name_count; i++)
        if (s->names[i] == kernel_name)
            return;
    if (s->name_count < SLOT_MAX_NAMES) {
        s->names[s->name_count++] = kernel_name;
        return;
    }
    uint32_t known = s->names_dropped < SLOT_MAX_MORE ? s->names_dropped : SLOT_MAX_MORE;
    for (uint32_t i = 0; i < known; i++)
        if (s->more[i] == kernel_name)
            return;
    /* Past both tables the count saturates: the message then says "or more". */
    if (s->names_dropped < SLOT_MAX_MORE)
        s->more[s->names_dropped++] = kernel_name;
    else
        s->names_dropped = SLOT_MAX_MORE + 1;
}

void slot_kernel_list(const slot *s, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < s->name_count && used < size; i++) {
        int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", s->names[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    if (s->names_dropped > SLOT_MAX_MORE && used < size)
        snprintf(buf + used, size - used, " (+%u or more)", SLOT_MAX_MORE);
    else if (s->names_dropped && used < size)
        snprintf(buf + used, size - used, " (+%u more)", s->names_dropped);
    if (s->name_count == 0)
        snprintf(buf, size, "(none)");
}

static salvo_status batch_error(const slot *s, const slot_env *env, salvo_status st,
                                accel_result r, const char *what)
{
    char names[512];
    slot_kernel_list(s, names, sizeof names);
    return SALVO_FAIL(env->log, st, "batch of %u launch%s %s (%s); kernels: %s", s->launches,
                      s->launches == 1 ? "" : "es", what, accel_result_name(r), names);
}

salvo_status slot_add_wait(slot *s, const slot_env *env, const slot_dep *w)
{
    if (s->state != SLOT_RECORDING)
        return refuse(s, env, "add_wait");
    /* One entry per timeline (the higher value covers the lower); an
     * ordering-only dependency (no timeline) is one entry per batch. */
    for (uint32_t i = 0; i < s->wait_count; i++) {
        bool same = w->op.timeline ? s->waits[i].op.timeline == w->op.timeline
                                   : !s->waits[i].op.timeline && s->waits[i].serial == w->serial;
        if (same) {
            if (w->op.value > s->waits[i].op.value)
                s->waits[i] = *w;
            return SALVO_OK;
        }
    }
    if (s->wait_count == SLOT_MAX_WAITS)
        return SALVO_FAIL(env->log, SALVO_ERROR_INVALID_STATE,
                          "a batch can wait on at most %d timelines", SLOT_MAX_WAITS);
    s->waits[s->wait_count++] = *w;
    return SALVO_OK;
}

/* A batch that signals its stream's timeline is known done by the
 * timeline alone: it is submitted with no fence, which is then neither
 * reset nor looked at (one call less at the submit; a timeline is also
 * seen signalled sooner than a fence on some drivers). */
static bool on_timeline(const slot *s)
{
    return s->signal.timeline != NULL;
}

/* The device submit of an ended batch: its timeline waits (an
 * ordering-only one names no timeline) and its signal. */
static accel_result send(slot *s, const slot_env *env)
{
    accel_sem_op waits[SLOT_MAX_WAITS];
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->wait_count; i++)
        if (s->waits[i].op.timeline)
            waits[n++] = s->waits[i].op;
    accel_submit_desc d = {
        .queue = s->queue,
        .cmd = s->empty ? NULL : s->direct ? s->direct : s->cmd,
        .fence = on_timeline(s) ? NULL : s->fence,
        .waits = waits,
        .wait_count = n,
        .signals = &s->signal,
        .signal_count = s->signal.timeline ? 1 : 0,
    };
    return VT(env)->submit(SELF(env), env->dev, &d);
}

/* The refused batch s stands in empty (slot_submit): held where hold,
 * else submitted with no command buffer. False where its fence cannot be
 * reset (the failure may have come before that) or that submit is
 * refused too. */
static bool stand_in(slot *s, const slot_env *env, bool hold)
{
    if (!on_timeline(s) && VT(env)->fence_reset(SELF(env), env->dev, s->fence) != ACCEL_SUCCESS)
        return false;
    reset_cmd(s, env); /* the device never sees it */
    s->direct = NULL;
    s->direct_dirty = false;
    s->empty = true;
    s->launches = 0;
    s->to_host = false;
    s->host_read = NULL;
    s->host_reads = 0;
    if (hold) {
        slot_move(s, env, SLOT_HELD);
        return true;
    }
    if (send(s, env) == ACCEL_SUCCESS) {
        slot_move(s, env, SLOT_IN_FLIGHT);
        return true;
    }
    s->empty = false;
    return false;
}

/* A submit that failed: lost (abandoned) or refused (a stand-in, or back
 * to IDLE). */
static salvo_status send_failed(slot *s, const slot_env *env, accel_result r, const char *what,
                                bool hold)
{
    if (r == ACCEL_ERROR_DEVICE_LOST) {
        salvo_status st = batch_error(s, env, SALVO_ERROR_DEVICE_LOST, r, "lost with the device");
        slot_abandon(s, env);
        return st;
    }
    /* The queue refused the batch: none of it ran. */
    bool again = s->empty; /* a stand-in: reported already */
    salvo_status st = again ? salvo_status_from_accel(r)
                            : batch_error(s, env, salvo_status_from_accel(r), r, what);
    if (!again && stand_in(s, env, hold))
        return st;
    /* Back to a clean IDLE so the stream can record again. */
    reset_cmd(s, env);
    to_idle(s, env);
    return st;
}

salvo_status slot_send_held(slot *s, const slot_env *env)
{
    if (s->state != SLOT_HELD)
        return refuse(s, env, "send_held");
    accel_result r = send(s, env);
    if (r == ACCEL_SUCCESS) {
        slot_move(s, env, SLOT_IN_FLIGHT);
        return SALVO_OK;
    }
    return send_failed(s, env, r, "could not be submitted", false);
}

salvo_status slot_submit(slot *s, const slot_env *env, bool hold)
{
    if (s->state != SLOT_RECORDING)
        return refuse(s, env, "submit");
    /* A direct batch's buffer is ended already; cmd stays begun. A
     * stand-in's is not used. */
    accel_result r = s->direct || s->empty ? ACCEL_SUCCESS
                                           : VT(env)->cmd_end(SELF(env), env->dev, s->cmd);
    const char *what = "could not be ended";
    if (r == ACCEL_SUCCESS) {
        if (!on_timeline(s))
            r = VT(env)->fence_reset(SELF(env), env->dev, s->fence);
        what = "could not be submitted";
    }
    if (r == ACCEL_SUCCESS && !hold)
        r = send(s, env);
    if (r == ACCEL_SUCCESS) {
        slot_move(s, env, hold ? SLOT_HELD : SLOT_IN_FLIGHT);
        return SALVO_OK;
    }
    return send_failed(s, env, r, what, hold);
}

void slot_reopen_empty(slot *s, const slot_env *env, uint64_t serial, accel_sem_op signal,
                       const slot_dep *waits, uint32_t wait_count)
{
    if (s->state == SLOT_RECORDING)
        slot_discard(s, env);
    if (s->state != SLOT_IDLE)
        return;
    open_batch(s, env, serial, signal, true);
    for (uint32_t i = 0; i < wait_count; i++)
        slot_add_wait(s, env, &waits[i]); /* at most what a batch holds: fits */
}

salvo_status slot_discard(slot *s, const slot_env *env)
{
    if (s->state != SLOT_RECORDING)
        return refuse(s, env, "discard");
    reset_cmd(s, env);
    to_idle(s, env);
    return SALVO_OK;
}

salvo_status slot_complete(slot *s, const slot_env *env, accel_result observed)
{
    if (s->state != SLOT_IN_FLIGHT)
        return refuse(s, env, "complete");
    switch (observed) {
    case ACCEL_SUCCESS: {
        /* A direct batch left cmd begun with its lead barrier: the next
         * batch takes it as a prepared one. */
        bool kept = s->direct != NULL, dirty = s->direct_dirty;
        to_idle(s, env);
        s->prepared = kept && !dirty;
        s->cmd_unreset |= kept && dirty; /* recording: reset before a begin */
        return SALVO_OK;
    }
    case ACCEL_NOT_READY:
        return SALVO_NOT_READY;
    case ACCEL_TIMEOUT:
        return SALVO_FAIL(env->log, SALVO_TIMEOUT,
                          "batch of %u launches still running after the fence timeout", s->launches);
    case ACCEL_ERROR_DEVICE_LOST: {
        salvo_status st = batch_error(s, env, SALVO_ERROR_DEVICE_LOST, observed, "failed");
        slot_abandon(s, env);
        return st;
    }
    default:
        /* Not proof that the work is over: keep it in flight for the next wait. */
        return batch_error(s, env, salvo_status_from_accel(observed), observed,
                           "could not be waited for");
    }
}

salvo_status slot_poll(slot *s, const slot_env *env)
{
    if (s->state == SLOT_HELD)
        return SALVO_NOT_READY; /* not on the device yet */
    if (s->state != SLOT_IN_FLIGHT)
        return refuse(s, env, "poll");
    if (on_timeline(s)) {
        uint64_t value = 0;
        accel_result r = VT(env)->timeline_value(SELF(env), env->dev, s->signal.timeline, &value);
        if (r == ACCEL_SUCCESS && value < s->signal.value)
            r = ACCEL_NOT_READY;
        /* A value the driver would not give: a wait that does not block
         * is the second way to look (a poll must be able to see the end,
         * or a query loop never ends). */
        if (r != ACCEL_SUCCESS && r != ACCEL_NOT_READY && r != ACCEL_ERROR_DEVICE_LOST) {
            r = VT(env)->timeline_wait(SELF(env), env->dev, s->signal.timeline, s->signal.value, 0);
            if (r == ACCEL_TIMEOUT)
                r = ACCEL_NOT_READY;
        }
        return slot_complete(s, env, r);
    }
    return slot_complete(s, env, VT(env)->fence_status(SELF(env), env->dev, s->fence));
}

salvo_status slot_wait(slot *s, const slot_env *env, uint64_t timeout_ns)
{
    if (s->state != SLOT_IN_FLIGHT)
        return refuse(s, env, "wait");
    if (on_timeline(s))
        return slot_complete(s, env,
                             VT(env)->timeline_wait(SELF(env), env->dev, s->signal.timeline,
                                                    s->signal.value, timeout_ns));
    return slot_complete(s, env, VT(env)->fence_wait(SELF(env), env->dev, s->fence, timeout_ns));
}

void slot_abandon(slot *s, const slot_env *env)
{
    slot_move(s, env, SLOT_ABANDONED);
}
