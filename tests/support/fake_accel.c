/* The fake accelerator; see fake_accel.h for what it models. */
#define _POSIX_C_SOURCE 200809L /* pthread mutexes */
#include "support/fake_accel.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------ */
/* Names: operations (the vtable's fields) and illegal uses            */
/* ------------------------------------------------------------------ */

/* name, whether it returns a result (only those can be scripted) */
#define FAKE_OPS(X)                                                                            \
    X(enumerate, 1) X(device_open, 1) X(device_close, 0) X(queue_wait_idle, 1)                 \
    X(buffer_create, 1) X(buffer_destroy, 0) X(pipeline_create, 1) X(pipeline_destroy, 0)      \
    X(descpool_create, 1) X(descpool_reset, 1) X(descpool_destroy, 0) X(cmd_create, 1)         \
    X(cmd_destroy, 0) X(cmd_begin, 1) X(cmd_end, 1) X(cmd_reset, 1) X(cmd_dispatch, 1)         \
    X(cmd_barrier, 0) X(cmd_copy, 0) X(cmd_fill, 0) X(cmd_create_reusable, 1) X(cmd_begin_reusable, 1) X(cmd_begin_resubmit, 1)        \
    X(cmd_execute, 0) X(fence_create, 1) X(fence_destroy, 0) X(fence_reset, 1)                 \
    X(fence_status, 1) X(fence_wait, 1) X(submit, 1) X(timeline_create, 1)                     \
    X(timeline_destroy, 0) X(timeline_signal, 1) X(timeline_value, 1) X(timeline_wait, 1)      \
    X(destroy, 0) X(querypool_create, 1) X(querypool_destroy, 0) X(cmd_querypool_reset, 0)     \
    X(cmd_timestamp, 0) X(querypool_results, 1) X(querypool_host_reset, 1) X(image_format_support, 0) X(memory_info, 0)   \
    X(image_create, 1) X(image_view_create, 1) X(image_destroy, 0) X(sampler_create, 1)        \
    X(sampler_destroy, 0) X(cmd_image_init, 1) X(cmd_copy_image, 0)                         \
    X(cmd_dispatch_indirect, 1) X(cmd_fill_bytes, 1) X(cmd_copy_image_to_image, 0)

#define FAKE_ILLEGALS(X)                                                                       \
    X(begin_while_recording) X(begin_while_pending) X(end_not_recording)                       \
    X(record_not_recording) X(reset_while_pending) X(submit_not_executable)                    \
    X(submit_invalidated) X(submit_fence_busy) X(fence_reset_pending) X(wait_unsubmitted)      \
    X(wait_idle_deadlock) X(destroy_in_use) X(pool_reset_in_use) X(dispatch_mismatch)          \
    X(copy_out_of_range) X(bad_handle) X(bad_argument) X(close_with_children)                  \
    X(use_after_destroy) X(timeline_not_increasing) X(timeline_unsupported)                    \
    X(query_not_reset) X(submit_bad_queue) X(transfer_queue_work) X(reusable_mismatch)         \
    X(execute_not_executable) X(image_no_view) X(image_not_initialized)

typedef enum op_id {
#define X(name, fallible) OP_##name,
    FAKE_OPS(X)
#undef X
    OP_COUNT
} op_id;

static const struct {
    const char *name;
    bool fallible;
} op_table[OP_COUNT] = {
#define X(name, fallible) {#name, fallible},
    FAKE_OPS(X)
#undef X
};

typedef enum illegal_id {
#define X(name) IL_##name,
    FAKE_ILLEGALS(X)
#undef X
    IL_COUNT
} illegal_id;

static const char *const illegal_names[IL_COUNT] = {
#define X(name) #name,
    FAKE_ILLEGALS(X)
#undef X
};

/* A name the test got wrong is a bug in the test: stop loudly rather than
 * answer 0 and let an assertion pass by accident. */
static op_id op_by_name(const char *name)
{
    for (int i = 0; i < OP_COUNT; i++)
        if (name && strcmp(op_table[i].name, name) == 0)
            return (op_id)i;
    fprintf(stderr, "fake_accel: unknown operation '%s'\n", name ? name : "(null)");
    abort();
}

static illegal_id illegal_by_name(const char *name)
{
    for (int i = 0; i < IL_COUNT; i++)
        if (name && strcmp(illegal_names[i], name) == 0)
            return (illegal_id)i;
    fprintf(stderr, "fake_accel: unknown illegal-use name '%s'\n", name ? name : "(null)");
    abort();
}

/* ------------------------------------------------------------------ */
/* Handles                                                             */
/* ------------------------------------------------------------------ */

#define FAKE_MAGIC 0xFA4EC0DEu

typedef struct fake_dev fake_dev;

/* Every handle starts with this, so one check covers all kinds. */
typedef struct fake_obj {
    uint32_t magic;
    fake_kind kind;
    struct fake_obj *prev, *next; /* the fake's list of live handles */
    fake_dev *dev;                /* owning device; NULL for a device */
} fake_obj;

struct fake_dev {
    fake_obj h;
    uint32_t index;
};

typedef struct fake_buf {
    fake_obj h;
    uint64_t size;
    unsigned char *mem;
    bool imported; /* mem is the caller's */
} fake_buf;

typedef struct fake_pipe {
    fake_obj h;
    uint32_t binding_count;
    accel_pipeline_binding bindings[SALVO_MAX_BINDINGS];
    uint32_t push_size;
    /* For dispatch_hook: the module and its specialization. */
    uint64_t module_hash;
    uint32_t spec_count;
    salvo_spec_constant spec[FAKE_MAX_SPEC];
} fake_pipe;

typedef struct fake_pool {
    fake_obj h;
    uint32_t max_sets, bindings_per_set;
    uint32_t image_bindings; /* of each image and sampler kind */
    uint32_t sets_used;
    uint64_t descriptors_used;
    uint64_t images_used; /* bindings naming an image or sampler */
} fake_pool;

/* Timestamp queries: written (available) or not since the last reset. */
typedef struct fake_qpool {
    fake_obj h;
    uint32_t count;
    uint64_t *ticks;
    bool *written;
} fake_qpool;

/* Texels in host memory, x fastest, then y, z and layer. */
typedef struct fake_image {
    fake_obj h;
    accel_image_desc desc;
    uint32_t texel; /* bytes */
    uint64_t bytes;
    unsigned char *mem;
    bool has_view;
    bool initialized; /* a cmd_image_init of it has run */
} fake_image;

typedef struct fake_sampler {
    fake_obj h;
    accel_sampler_desc desc;
} fake_sampler;

typedef enum rec_kind {
    REC_COPY,
    REC_FILL, /* dst, dst_offset, size, fill_value */
    REC_DISPATCH,
    REC_QUERY_RESET,
    REC_TIMESTAMP,
    REC_EXECUTE,    /* run a reusable command buffer's records here */
    REC_IMAGE_INIT, /* img */
    REC_IMAGE_COPY, /* src (the buffer), src_offset, img, region, to_image, size */
    REC_FILL_BYTES, /* dst, dst_offset, size, fill_value: byte a gets byte a % 4 of it */
    REC_IMAGE_TO_IMAGE /* img, region to img2, region2, size */
} rec_kind;

typedef struct fake_cmd fake_cmd;

/* What a dispatch recorded, kept only while dispatch_hook is set: its
 * groups, push constants and binds (each with the index of its buffer or
 * image in the record's res, -1 none). */
typedef struct fake_dispatch_rec {
    uint32_t groups[3];
    uint32_t push_size;
    uint32_t push[32]; /* push constants are at most 128 bytes here */
    uint32_t bind_count;
    struct {
        uint32_t binding, element;
        uint8_t kind;
        uint64_t offset, size;
        int res;
    } binds[SALVO_MAX_BINDINGS];
} fake_dispatch_rec;

/* What a command buffer recorded; handles a record names are nulled when
 * destroyed, so completion never touches freed memory. */
typedef struct fake_rec {
    rec_kind kind;
    /* copy */
    fake_buf *src, *dst;
    uint64_t src_offset, dst_offset, size;
    uint32_t fill_value;
    /* dispatch: the buffers, images and samplers it binds (an image with
     * its sampler takes two) */
    fake_pipe *pipe;
    fake_pool *pool;
    uint32_t res_count;
    fake_obj *res[2 * SALVO_MAX_BINDINGS];
    /* image init and image copy; between images, img2 and region2 the
     * destination */
    fake_image *img, *img2;
    accel_image_region region, region2;
    bool to_image;
    /* an indirect dispatch: where its counts are read from when it runs
     * (counts NULL once that buffer is gone: it runs nothing) */
    bool indirect;
    fake_buf *counts;
    uint64_t counts_offset;
    /* query reset (first, count) or timestamp (first) */
    fake_qpool *qpool;
    uint32_t q_first, q_count;
    /* execute */
    fake_cmd *exec;
    /* dispatch, with dispatch_hook set (owned) */
    fake_dispatch_rec *dx;
} fake_rec;

typedef struct fake_sub fake_sub;

struct fake_cmd {
    fake_obj h;
    fake_cmd_state state;
    bool invalidated; /* recorded a use of something destroyed since */
    fake_rec *recs;
    size_t rec_count, rec_cap;
    fake_sub *sub; /* while PENDING */
    uint32_t queue; /* the queue it was made for */
    bool transfer;  /* made for the transfer queue: copies and barriers only */
    /* Executed from other command buffers, never submitted. Several
     * submissions may execute it at once, so instead of PENDING it counts
     * them: while any is queued it must not be begun, reset or destroyed. */
    bool reusable;
    uint32_t pending_uses;
};

typedef struct fake_fence {
    fake_obj h;
    bool signalled;
    fake_sub *sub; /* the pending submission that will signal it */
} fake_fence;

typedef struct fake_tl {
    fake_obj h;
    uint64_t value;
} fake_tl;

typedef struct fake_semop {
    fake_tl *tl;
    uint64_t value;
} fake_semop;

struct fake_sub {
    fake_sub *next;
    uint32_t queue;
    fake_cmd *cmd;
    fake_fence *fence;
    uint32_t wait_count, signal_count;
    fake_semop *waits, *signals;
};

typedef struct fake_script {
    op_id op;
    bool always;
    uint64_t base;   /* calls of op when it was set */
    uint64_t target; /* the call it fires on (not always) */
    accel_result result;
} fake_script;

enum {
    MAX_SCRIPTS = 64
};

struct fake_state {
    pthread_mutex_t lock;
    /* Broadcast whenever a submission completes, a timeline is signalled
     * or the device is lost: what blocking_waits wait on (with lock). */
    pthread_cond_t progressed;
    fake_accel *owner; /* for its configuration */
    bool destroyed;
    bool lost;
    int opened_index;
    fake_obj *objs; /* every live handle */
    uint64_t live[FAKE_KIND_COUNT];
    uint64_t calls[OP_COUNT];
    uint64_t barriers[ACCEL_BARRIER_INDIRECT + 1]; /* recorded, by kind */
    uint64_t illegal[IL_COUNT];
    char illegal_last[256];
    fake_script scripts[MAX_SCRIPTS];
    uint32_t script_count;
    fake_sub *head, *tail; /* the queue, oldest first */
    uint32_t pending;
    uint64_t memory_used;
    uint64_t dispatches_recorded, dispatches_completed, copy_bytes;
    uint64_t image_inits; /* cmd_image_init records run */
    uint64_t queue_submits[ACCEL_MAX_QUEUES + 1]; /* the transfer queue last */
    uint64_t clock; /* the device's timestamp counter */
};

/* ------------------------------------------------------------------ */
/* Helpers (all called with the lock held)                             */
/* ------------------------------------------------------------------ */

static void note_illegal(fake_state *s, illegal_id id, const char *op, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void note_illegal(fake_state *s, illegal_id id, const char *op, const char *fmt, ...)
{
    s->illegal[id]++;
    int n = snprintf(s->illegal_last, sizeof s->illegal_last, "%s in %s: ", illegal_names[id],
                     op);
    if (n < 0 || (size_t)n >= sizeof s->illegal_last)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->illegal_last + n, sizeof s->illegal_last - (size_t)n, fmt, ap);
    va_end(ap);
}

static void *obj_new(fake_state *s, size_t size, fake_kind kind, fake_dev *dev)
{
    fake_obj *o = calloc(1, size);
    if (!o)
        return NULL;
    o->magic = FAKE_MAGIC;
    o->kind = kind;
    o->dev = dev;
    o->next = s->objs;
    if (s->objs)
        s->objs->prev = o;
    s->objs = o;
    s->live[kind]++;
    return o;
}

static void obj_unlink(fake_state *s, fake_obj *o)
{
    if (o->prev)
        o->prev->next = o->next;
    else
        s->objs = o->next;
    if (o->next)
        o->next->prev = o->prev;
    s->live[o->kind]--;
    o->magic = 0;
}

static void cmd_clear(fake_cmd *c)
{
    for (size_t i = 0; i < c->rec_count; i++) {
        free(c->recs[i].dx);
        c->recs[i].dx = NULL;
    }
    c->rec_count = 0;
    c->invalidated = false;
}

/* Free one handle's memory; it must already be unlinked and unreferenced. */
static void obj_free(fake_state *s, fake_obj *o)
{
    switch (o->kind) {
    case FAKE_BUFFER: {
        fake_buf *b = (fake_buf *)o;
        if (!b->imported) {
            s->memory_used -= b->size;
            free(b->mem);
        }
        break;
    }
    case FAKE_IMAGE: {
        fake_image *img = (fake_image *)o;
        s->memory_used -= img->bytes;
        free(img->mem);
        break;
    }
    case FAKE_CMD:
        cmd_clear((fake_cmd *)o);
        free(((fake_cmd *)o)->recs);
        break;
    case FAKE_QUERYPOOL:
        free(((fake_qpool *)o)->ticks);
        free(((fake_qpool *)o)->written);
        break;
    default:
        break;
    }
    free(o);
}

/* The handle h as a live handle of kind on dev (dev NULL: any device), or
 * NULL after counting the misuse. */
static void *check(fake_state *s, const void *h, fake_kind kind, const fake_dev *dev,
                   const char *op)
{
    const fake_obj *o = h;
    if (!o) {
        note_illegal(s, IL_bad_handle, op, "NULL handle");
        return NULL;
    }
    if (o->magic != FAKE_MAGIC || o->kind != kind) {
        note_illegal(s, IL_bad_handle, op, "not a live handle of kind %d", (int)kind);
        return NULL;
    }
    if (dev && o->dev != dev) {
        note_illegal(s, IL_bad_handle, op, "handle of another device");
        return NULL;
    }
    return (void *)o;
}

static fake_dev *check_dev(fake_state *s, accel_device *d, const char *op)
{
    return check(s, d, FAKE_DEVICE, NULL, op);
}

static void progress(fake_accel *f);

/* Count the call, then answer whether a script takes it over. */
static bool enter(fake_state *s, op_id op, accel_result *scripted)
{
    uint64_t n = ++s->calls[op];
    if (s->destroyed && op != OP_destroy)
        note_illegal(s, IL_use_after_destroy, op_table[op].name, "call after destroy()");
    for (uint32_t i = 0; i < s->script_count; i++) {
        fake_script *sc = &s->scripts[i];
        if (sc->op != op)
            continue;
        if (sc->always ? n > sc->base : n == sc->target) {
            *scripted = sc->result;
            if (!sc->always) {
                /* Keep the order: when two scripts match, the older wins. */
                memmove(&s->scripts[i], &s->scripts[i + 1],
                        (s->script_count - i - 1) * sizeof s->scripts[0]);
                s->script_count--;
            }
            return true;
        }
    }
    /* Not scripted: the call happens, on a device that has been running
     * all along. */
    progress(s->owner);
    return false;
}

static void lose(fake_state *s);

/* A scripted result, with loss made sticky as a real device would. */
static accel_result scripted_result(fake_state *s, accel_result r)
{
    if (r == ACCEL_ERROR_DEVICE_LOST)
        lose(s);
    return r;
}

#define ENTER(s, op)                                                                           \
    do {                                                                                       \
        accel_result scripted_;                                                                \
        if (enter((s), OP_##op, &scripted_)) {                                                 \
            accel_result r_ = scripted_result((s), scripted_);                                 \
            pthread_mutex_unlock(&(s)->lock);                                                  \
            return r_;                                                                         \
        }                                                                                      \
    } while (0)

#define ENTER_VOID(s, op)                                                                      \
    do {                                                                                       \
        accel_result ignored_;                                                                 \
        (void)enter((s), OP_##op, &ignored_);                                                  \
    } while (0)

#define FAKE(self) ((fake_accel *)(self))
#define STATE(self) (FAKE(self)->state)

static bool transfer_offered(const fake_accel *f)
{
    return f->transfer_queue && f->timeline_semaphores;
}

static accel_result unlock_return(fake_state *s, accel_result r)
{
    pthread_mutex_unlock(&s->lock);
    return r;
}

/* ------------------------------------------------------------------ */
/* The queue                                                           */
/* ------------------------------------------------------------------ */

static bool sub_ready(const fake_sub *sub)
{
    for (uint32_t i = 0; i < sub->wait_count; i++)
        if (sub->waits[i].tl && sub->waits[i].tl->value < sub->waits[i].value)
            return false;
    return true;
}

static void sub_free(fake_sub *sub)
{
    free(sub->waits);
    free(sub->signals);
    free(sub);
}

/* Take sub (after prev, NULL: the first) out of the list of pending
 * submissions. */
static fake_sub *unlink_sub(fake_state *s, fake_sub *prev, fake_sub *sub)
{
    if (prev)
        prev->next = sub->next;
    else
        s->head = sub->next;
    if (s->tail == sub)
        s->tail = prev;
    sub->next = NULL;
    s->pending--;
    return sub;
}

static fake_sub *pop_head(fake_state *s)
{
    return unlink_sub(s, NULL, s->head);
}

/* A submission of c is queued (queued true) or over without running: the
 * reusable command buffers c executes count it while it is queued. */
static void count_executes(fake_cmd *c, bool queued)
{
    for (size_t i = 0; i < c->rec_count; i++) {
        fake_cmd *r = c->recs[i].kind == REC_EXECUTE ? c->recs[i].exec : NULL;
        if (r && queued)
            r->pending_uses++;
        else if (r)
            r->pending_uses--;
    }
}

/* A buffer <-> image copy; the ranges were checked when it was recorded. */
static void run_image_copy(fake_state *s, const fake_rec *r)
{
    fake_image *img = r->img;
    if (!img->initialized) {
        note_illegal(s, IL_image_not_initialized, "submit",
                     "an image copy before any cmd_image_init of the image has run");
        return;
    }
    const accel_image_region *g = &r->region;
    const accel_image_desc *d = &img->desc;
    size_t row = (size_t)g->width * img->texel;
    unsigned char *buf = r->src->mem + r->src_offset;
    for (uint32_t l = 0; l < g->layers; l++)
        for (uint32_t z = 0; z < g->depth; z++)
            for (uint32_t y = 0; y < g->height; y++) {
                uint64_t texel =
                    (((uint64_t)(g->layer + l) * d->depth + g->z + z) * d->height + g->y + y) *
                        d->width +
                    g->x;
                unsigned char *at = img->mem + texel * img->texel;
                if (r->to_image)
                    memmove(at, buf, row);
                else
                    memmove(buf, at, row);
                buf += row;
            }
    s->copy_bytes += r->size;
}

/* A copy between two images; the regions were checked when it was
 * recorded. Through a scratch copy of the source box: one image's
 * regions may sit side by side in the same rows. */
static void run_image_to_image(fake_state *s, const fake_rec *r)
{
    const fake_image *src = r->img;
    fake_image *dst = r->img2;
    if (!src->initialized || !dst->initialized) {
        note_illegal(s, IL_image_not_initialized, "submit",
                     "an image copy before any cmd_image_init of the image has run");
        return;
    }
    unsigned char *box = malloc((size_t)r->size);
    if (!box)
        return;
    const fake_image *imgs[2] = {src, dst};
    const accel_image_region *gs[2] = {&r->region, &r->region2};
    for (int pass = 0; pass < 2; pass++) {
        const accel_image_region *g = gs[pass];
        const accel_image_desc *d = &imgs[pass]->desc;
        size_t row = (size_t)g->width * src->texel;
        unsigned char *at = box;
        for (uint32_t l = 0; l < g->layers; l++)
            for (uint32_t z = 0; z < g->depth; z++)
                for (uint32_t y = 0; y < g->height; y++) {
                    uint64_t texel = (((uint64_t)(g->layer + l) * d->depth + g->z + z) * d->height +
                                      g->y + y) * d->width + g->x;
                    unsigned char *mem = imgs[pass]->mem + texel * src->texel;
                    if (pass == 0)
                        memcpy(at, mem, row);
                    else
                        memcpy(mem, at, row);
                    at += row;
                }
    }
    free(box);
    s->copy_bytes += r->size;
}

/* The dispatch r as the hook sees it, then the hook (the kernel), with
 * the groups it runs. */
static void run_dispatch_hook(fake_state *s, const fake_rec *r, const uint32_t groups[3])
{
    const fake_dispatch_rec *x = r->dx;
    fake_dispatch d;
    memset(&d, 0, sizeof d);
    d.module_hash = r->pipe->module_hash;
    d.spec_count = r->pipe->spec_count;
    memcpy(d.spec, r->pipe->spec, sizeof d.spec);
    memcpy(d.groups, groups, sizeof d.groups);
    d.push = x->push;
    d.push_size = x->push_size;
    d.res_count = x->bind_count;
    for (uint32_t i = 0; i < x->bind_count; i++) {
        fake_dispatch_res *o = &d.res[i];
        o->binding = x->binds[i].binding;
        o->element = x->binds[i].element;
        o->kind = x->binds[i].kind;
        const fake_obj *h = x->binds[i].res >= 0 ? r->res[x->binds[i].res] : NULL;
        if (h && h->kind == FAKE_BUFFER) {
            const fake_buf *b = (const fake_buf *)h;
            if (x->binds[i].offset < b->size) {
                o->mem = b->mem + x->binds[i].offset;
                o->size = x->binds[i].size < b->size - x->binds[i].offset
                              ? x->binds[i].size
                              : b->size - x->binds[i].offset;
            }
        } else if (h && h->kind == FAKE_IMAGE) {
            const fake_image *img = (const fake_image *)h;
            o->mem = img->mem;
            o->size = img->bytes;
            o->width = img->desc.width;
            o->height = img->desc.height;
            o->depth = img->desc.depth;
            o->layers = img->desc.layers;
            o->texel = img->texel;
        }
    }
    s->owner->dispatch_hook(s->owner->dispatch_user, &d);
}

/* What the device does with recorded commands, in order. */
static void run_recs(fake_state *s, fake_rec *recs, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        fake_rec *r = &recs[i];
        if (r->kind == REC_EXECUTE) {
            /* As if its records were here; this submission's use of it
             * ends with it. */
            if (r->exec) {
                run_recs(s, r->exec->recs, r->exec->rec_count);
                r->exec->pending_uses--;
            }
        } else if (r->kind == REC_DISPATCH) {
            for (uint32_t j = 0; j < r->res_count; j++) {
                const fake_obj *o = r->res[j];
                if (o && o->kind == FAKE_IMAGE && !((const fake_image *)o)->initialized)
                    note_illegal(s, IL_image_not_initialized, "submit",
                                 "a dispatch binds an image no cmd_image_init has run for");
            }
            uint32_t groups[3] = {0, 0, 0};
            bool runs = !r->indirect || r->counts;
            if (r->indirect && r->counts) {
                /* The counts as the buffer holds them now. */
                memcpy(groups, r->counts->mem + r->counts_offset, sizeof groups);
                for (int k = 0; k < 3; k++) {
                    runs &= groups[k] != 0;
                    if (groups[k] > 65535) {
                        note_illegal(s, IL_dispatch_mismatch, "submit",
                                     "indirect count %u = %u outside 0..65535", k, groups[k]);
                        runs = false;
                    }
                }
            } else if (r->dx) {
                memcpy(groups, r->dx->groups, sizeof groups);
            }
            if (runs && r->dx && r->pipe && s->owner->dispatch_hook)
                run_dispatch_hook(s, r, groups);
            s->dispatches_completed++;
            s->clock += FAKE_DISPATCH_TICKS;
        } else if (r->kind == REC_IMAGE_INIT) {
            /* UNDEFINED to GENERAL: the old contents go. */
            if (r->img) {
                memset(r->img->mem, 0xA5, (size_t)r->img->bytes);
                r->img->initialized = true;
                s->image_inits++;
            }
        } else if (r->kind == REC_IMAGE_COPY) {
            if (r->img && r->src)
                run_image_copy(s, r);
        } else if (r->kind == REC_IMAGE_TO_IMAGE) {
            if (r->img && r->img2)
                run_image_to_image(s, r);
        } else if (r->kind == REC_FILL_BYTES) {
            if (r->dst) {
                for (uint64_t a = r->dst_offset; a < r->dst_offset + r->size; a++)
                    r->dst->mem[a] = ((const unsigned char *)&r->fill_value)[a % 4];
                s->copy_bytes += r->size;
            }
        } else if (r->kind == REC_QUERY_RESET) {
            if (r->qpool)
                memset(r->qpool->written + r->q_first, 0,
                       r->q_count * sizeof *r->qpool->written);
        } else if (r->kind == REC_TIMESTAMP) {
            fake_qpool *q = r->qpool;
            /* Vulkan: the query must be unavailable when this executes. */
            if (q && q->written[r->q_first])
                note_illegal(s, IL_query_not_reset, "submit",
                             "timestamp %u written twice without a reset", r->q_first);
            else if (q) {
                q->ticks[r->q_first] = ++s->clock;
                q->written[r->q_first] = true;
            }
        } else if (r->kind == REC_FILL) {
            if (r->dst) {
                for (uint64_t o = 0; o + 4 <= r->size; o += 4)
                    memcpy(r->dst->mem + r->dst_offset + o, &r->fill_value, 4);
                s->copy_bytes += r->size;
            }
        } else if (r->src && r->dst) {
            memmove(r->dst->mem + r->dst_offset, r->src->mem + r->src_offset, r->size);
            s->copy_bytes += r->size;
        }
    }
}

/* Run a submission: what a device does between submit and the fence
 * signalling. */
static void execute(fake_state *s, fake_sub *prev, fake_sub *sub)
{
    unlink_sub(s, prev, sub);
    fake_cmd *c = sub->cmd;
    if (c) {
        run_recs(s, c->recs, c->rec_count);
        c->state = FAKE_CMD_EXECUTABLE;
        c->sub = NULL;
    }
    for (uint32_t i = 0; i < sub->signal_count; i++) {
        fake_tl *tl = sub->signals[i].tl;
        if (!tl)
            continue;
        if (sub->signals[i].value <= tl->value)
            note_illegal(s, IL_timeline_not_increasing, "submit",
                         "signal %llu on a timeline at %llu",
                         (unsigned long long)sub->signals[i].value,
                         (unsigned long long)tl->value);
        else
            tl->value = sub->signals[i].value;
    }
    if (sub->fence) {
        sub->fence->signalled = true;
        sub->fence->sub = NULL;
    }
    sub_free(sub);
    pthread_cond_broadcast(&s->progressed);
}

/* The oldest submission that is first on its queue (queue: any, or only
 * that one) and whose waits are met runs next. */
static bool complete_on_locked(fake_state *s, uint32_t queue)
{
    if (s->lost)
        return false;
    uint32_t blocked = 0; /* queues with an earlier submission not run */
    for (fake_sub *prev = NULL, *sub = s->head; sub; prev = sub, sub = sub->next) {
        uint32_t bit = 1u << (sub->queue % 32);
        if (!(blocked & bit) && (queue == UINT32_MAX || sub->queue == queue) && sub_ready(sub)) {
            execute(s, prev, sub);
            return true;
        }
        blocked |= bit;
    }
    return false;
}

static bool complete_next_locked(fake_state *s)
{
    return complete_on_locked(s, UINT32_MAX);
}

static uint32_t complete_all_locked(fake_state *s)
{
    uint32_t n = 0;
    while (complete_next_locked(s))
        n++;
    return n;
}

/* AUTO mode: the device is infinitely fast, so whatever may run has run. */
static void progress(fake_accel *f)
{
    if (f->complete == FAKE_COMPLETE_AUTO)
        complete_all_locked(f->state);
}

/* The work is over and will never be observed: drop it unexecuted. */
static void lose(fake_state *s)
{
    if (s->lost)
        return;
    s->lost = true;
    pthread_cond_broadcast(&s->progressed);
    while (s->head) {
        fake_sub *sub = pop_head(s);
        if (sub->cmd) {
            count_executes(sub->cmd, false);
            sub->cmd->state = FAKE_CMD_EXECUTABLE;
            sub->cmd->sub = NULL;
        }
        if (sub->fence)
            sub->fence->sub = NULL;
        sub_free(sub);
    }
}

/* ------------------------------------------------------------------ */
/* Use tracking: what a destroyed handle leaves behind                 */
/* ------------------------------------------------------------------ */

static bool rec_uses(const fake_rec *r, const fake_obj *o)
{
    if (r->kind == REC_EXECUTE)
        return (const fake_obj *)r->exec == o;
    if (r->kind == REC_QUERY_RESET || r->kind == REC_TIMESTAMP)
        return (const fake_obj *)r->qpool == o;
    if (r->kind == REC_COPY || r->kind == REC_FILL)
        return (const fake_obj *)r->src == o || (const fake_obj *)r->dst == o;
    if (r->kind == REC_IMAGE_INIT || r->kind == REC_IMAGE_COPY || r->kind == REC_IMAGE_TO_IMAGE)
        return (const fake_obj *)r->img == o || (const fake_obj *)r->img2 == o ||
               (const fake_obj *)r->src == o;
    if ((const fake_obj *)r->pipe == o || (const fake_obj *)r->pool == o ||
        (const fake_obj *)r->dst == o || (const fake_obj *)r->counts == o)
        return true;
    for (uint32_t i = 0; i < r->res_count; i++)
        if (r->res[i] == o)
            return true;
    return false;
}

static void rec_forget(fake_rec *r, const fake_obj *o)
{
    if ((const fake_obj *)r->src == o)
        r->src = NULL;
    if ((const fake_obj *)r->dst == o)
        r->dst = NULL;
    if ((const fake_obj *)r->pipe == o)
        r->pipe = NULL;
    if ((const fake_obj *)r->pool == o)
        r->pool = NULL;
    if ((const fake_obj *)r->qpool == o)
        r->qpool = NULL;
    if ((const fake_obj *)r->exec == o)
        r->exec = NULL;
    if ((const fake_obj *)r->img == o)
        r->img = NULL;
    if ((const fake_obj *)r->img2 == o)
        r->img2 = NULL;
    if ((const fake_obj *)r->counts == o)
        r->counts = NULL;
    for (uint32_t i = 0; i < r->res_count; i++)
        if (r->res[i] == o)
            r->res[i] = NULL;
}

/* o is going away (or, for a pool reset, its sets are; for a reusable
 * command buffer, also a begin or reset: its records are). A pending
 * command buffer that uses it is an illegal use unless the device is lost;
 * a recording or executable one becomes invalid, which only matters if it
 * is submitted before being begun or reset again (Vulkan's rule). A
 * reusable one that a pending submission executes counts as pending. */
static void forget_uses(fake_state *s, const fake_obj *o, bool unlink_refs, illegal_id pending_id,
                        const char *op)
{
    for (fake_obj *it = s->objs; it; it = it->next) {
        if (it->kind != FAKE_CMD)
            continue;
        fake_cmd *c = (fake_cmd *)it;
        bool used = false;
        for (size_t i = 0; i < c->rec_count; i++) {
            if (rec_uses(&c->recs[i], o)) {
                used = true;
                if (unlink_refs)
                    rec_forget(&c->recs[i], o);
            }
        }
        if (!used)
            continue;
        bool pending = c->state == FAKE_CMD_PENDING || c->pending_uses > 0;
        if (pending && !s->lost)
            note_illegal(s, pending_id, op, "a pending command buffer uses it");
        else if (!pending)
            c->invalidated = true;
    }
}

static void forget_timeline(fake_state *s, const fake_tl *tl)
{
    for (fake_sub *sub = s->head; sub; sub = sub->next) {
        bool used = false;
        for (uint32_t i = 0; i < sub->wait_count; i++)
            if (sub->waits[i].tl == tl) {
                sub->waits[i].tl = NULL;
                used = true;
            }
        for (uint32_t i = 0; i < sub->signal_count; i++)
            if (sub->signals[i].tl == tl) {
                sub->signals[i].tl = NULL;
                used = true;
            }
        if (used)
            note_illegal(s, IL_destroy_in_use, "timeline_destroy",
                         "a pending submission uses it");
    }
}

/* ------------------------------------------------------------------ */
/* Instance and device                                                 */
/* ------------------------------------------------------------------ */

static uint32_t device_count(const fake_accel *f)
{
    return f->device_count > FAKE_MAX_DEVICES ? FAKE_MAX_DEVICES : f->device_count;
}

static accel_result f_enumerate(void *self, salvo_device_entry *entries, uint32_t *count)
{
    fake_accel *f = FAKE(self);
    fake_state *s = f->state;
    pthread_mutex_lock(&s->lock);
    ENTER(s, enumerate);
    if (!count) {
        note_illegal(s, IL_bad_argument, "enumerate", "count is NULL");
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    uint32_t n = device_count(f);
    if (!entries) {
        *count = n;
        return unlock_return(s, ACCEL_SUCCESS);
    }
    uint32_t written = *count < n ? *count : n;
    for (uint32_t i = 0; i < written; i++) {
        memset(&entries[i], 0, sizeof entries[i]);
        snprintf(entries[i].name, sizeof entries[i].name, "fake%u", i);
        entries[i].type = f->device_types[i];
        entries[i].vendor_id = 0xFA4E;
        entries[i].device_id = i;
        entries[i].api_version = (1u << 22) | (3u << 12);
    }
    *count = written;
    return unlock_return(s, written < n ? ACCEL_INCOMPLETE : ACCEL_SUCCESS);
}

static void fill_caps(const fake_accel *f, uint32_t index, accel_caps *caps)
{
    memset(caps, 0, sizeof *caps);
    salvo_device_info *in = &caps->info;
    snprintf(in->name, sizeof in->name, "fake%u", index);
    in->type = f->device_types[index];
    in->vendor_id = 0xFA4E;
    in->device_id = index;
    in->api_version = (1u << 22) | (3u << 12);
    in->driver_version = 1;
    snprintf(in->driver_name, sizeof in->driver_name, "fake");
    snprintf(in->driver_info, sizeof in->driver_info, "salvo unit-test accelerator");
    for (int i = 0; i < 3; i++)
        in->max_workgroup_count[i] = 65535;
    in->max_workgroup_size[0] = 1024;
    in->max_workgroup_size[1] = 1024;
    in->max_workgroup_size[2] = 64;
    in->max_workgroup_invocations = 1024;
    in->max_push_constants_size = 128;
    in->max_storage_buffer_range = 1u << 30;
    in->max_bindings = 32;
    in->min_storage_buffer_offset_alignment = 16;
    in->max_uniform_buffer_range = 1u << 16;
    in->min_uniform_buffer_offset_alignment = 256;
    in->subgroup_size = 32;
    in->features = f->features;
    in->max_workgroup_memory = f->max_workgroup_memory;
    in->timeline_semaphores = f->timeline_semaphores;
    in->host_import = f->host_import;
    in->host_import_alignment = f->host_import ? 4096 : 0;
    in->push_descriptors = f->push_descriptors;
    caps->push_descriptors_used = f->push_descriptors;
    in->memory_heap_count = 1;
    in->memory_heaps[0].size = f->device_memory_limit ? f->device_memory_limit : 8ull << 30;
    in->memory_heaps[0].device_local = true;
    caps->device_memory_host_visible = !f->device_not_mappable;
    caps->timestamps = f->timestamps;
    caps->queue_count = f->queue_count ? f->queue_count : 1;
    caps->high_priority_queue = caps->queue_count > 2;
    caps->transfer_queue = transfer_offered(f);
    in->queue_count = caps->queue_count;
    caps->timestamp_period_ns = 1.0;
    caps->timestamp_valid_bits = f->timestamps ? 64 : 0;
}

static accel_result f_device_open(void *self, const accel_open_options *opt, accel_device **out,
                                  accel_caps *caps)
{
    fake_accel *f = FAKE(self);
    fake_state *s = f->state;
    pthread_mutex_lock(&s->lock);
    ENTER(s, device_open);
    if (!opt || !out || !caps || opt->index >= device_count(f)) {
        note_illegal(s, IL_bad_argument, "device_open", "no device %u",
                     opt ? opt->index : UINT32_MAX);
        return unlock_return(s, ACCEL_ERROR_INITIALIZATION_FAILED);
    }
    fake_dev *d = obj_new(s, sizeof *d, FAKE_DEVICE, NULL);
    if (!d)
        return unlock_return(s, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    d->index = opt->index;
    s->opened_index = (int)opt->index;
    fill_caps(f, opt->index, caps);
    if (opt->no_transfer_queue)
        caps->transfer_queue = false;
    *out = (accel_device *)d;
    return unlock_return(s, ACCEL_SUCCESS);
}

static void f_device_close(void *self, accel_device *dev)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER_VOID(s, device_close);
    if (dev) {
        fake_dev *d = check_dev(s, dev, "device_close");
        if (d) {
            uint64_t children = 0;
            for (fake_obj *o = s->objs; o; o = o->next)
                children += o->dev == d;
            if (children)
                note_illegal(s, IL_close_with_children, "device_close",
                             "%llu handle(s) of the device still live",
                             (unsigned long long)children);
            obj_unlink(s, &d->h);
            obj_free(s, &d->h);
        }
    }
    pthread_mutex_unlock(&s->lock);
}

static accel_result f_queue_wait_idle(void *self, accel_device *dev)
{
    fake_accel *f = FAKE(self);
    fake_state *s = f->state;
    pthread_mutex_lock(&s->lock);
    ENTER(s, queue_wait_idle);
    check_dev(s, dev, "queue_wait_idle");
    if (s->lost)
        return unlock_return(s, ACCEL_ERROR_DEVICE_LOST);
    complete_all_locked(s);
    /* blocking_waits: as a driver's, until work held by a timeline wait
     * can run (another thread signals it) and has. */
    while (f->blocking_waits && s->head && !s->lost) {
        pthread_cond_wait(&s->progressed, &s->lock);
        complete_all_locked(s);
    }
    if (s->lost)
        return unlock_return(s, ACCEL_ERROR_DEVICE_LOST);
    if (s->head) {
        note_illegal(s, IL_wait_idle_deadlock, "queue_wait_idle",
                     "the oldest submission waits for a timeline value never signalled");
        return unlock_return(s, ACCEL_TIMEOUT);
    }
    return unlock_return(s, ACCEL_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* Buffers, pipelines, pools                                           */
/* ------------------------------------------------------------------ */

static accel_result f_buffer_create(void *self, accel_device *dev, const accel_buffer_desc *desc,
                                    accel_buffer **out, accel_buffer_info *info)
{
    fake_accel *f = FAKE(self);
    fake_state *s = f->state;
    pthread_mutex_lock(&s->lock);
    ENTER(s, buffer_create);
    fake_dev *d = check_dev(s, dev, "buffer_create");
    if (!d)
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    if (!desc || !out || !info || desc->size == 0) {
        note_illegal(s, IL_bad_argument, "buffer_create", "no desc, out or info, or size 0");
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    if (desc->import_host) {
        if (!f->host_import) {
            note_illegal(s, IL_bad_argument, "buffer_create", "import without host_import");
            return unlock_return(s, ACCEL_ERROR_EXTENSION_NOT_PRESENT);
        }
        if ((uintptr_t)desc->import_host % 4096 || desc->size % 4096)
            return unlock_return(s, ACCEL_ERROR_INVALID_EXTERNAL_HANDLE);
    } else if (f->device_memory_limit && desc->size > f->device_memory_limit - s->memory_used) {
        return unlock_return(s, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
    }
    fake_buf *b = obj_new(s, sizeof *b, FAKE_BUFFER, d);
    if (!b)
        return unlock_return(s, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    b->size = desc->size;
    b->imported = desc->import_host != NULL;
    if (b->imported) {
        b->mem = desc->import_host;
    } else {
        b->mem = calloc(1, (size_t)desc->size);
        if (!b->mem) {
            obj_unlink(s, &b->h);
            free(b);
            return unlock_return(s, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
        }
        s->memory_used += desc->size;
    }
    bool mappable = !(f->device_not_mappable && desc->domain == SALVO_DOMAIN_DEVICE);
    info->mapped = mappable ? b->mem : NULL;
    info->host_coherent = true;
    /* The fake runs no kernels: any distinct nonzero value will do. */
    info->device_address = f->features.buffer_device_address ? (uint64_t)(uintptr_t)b->mem : 0;
    *out = (accel_buffer *)b;
    return unlock_return(s, ACCEL_SUCCESS);
}

static void f_buffer_destroy(void *self, accel_device *dev, accel_buffer *buf)
{
    fake_accel *f = FAKE(self);
    fake_hook destroy_hook = f->buffer_destroy_hook;
    if (destroy_hook && buf)
        destroy_hook(f->hook_user);
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER_VOID(s, buffer_destroy);
    fake_dev *d = check_dev(s, dev, "buffer_destroy");
    fake_buf *b = buf ? check(s, buf, FAKE_BUFFER, d, "buffer_destroy") : NULL;
    if (b) {
        forget_uses(s, &b->h, true, IL_destroy_in_use, "buffer_destroy");
        obj_unlink(s, &b->h);
        obj_free(s, &b->h);
    }
    pthread_mutex_unlock(&s->lock);
}

static accel_result f_pipeline_create(void *self, accel_device *dev,
                                      const accel_pipeline_desc *desc, accel_pipeline **out)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER(s, pipeline_create);
    fake_dev *d = check_dev(s, dev, "pipeline_create");
    if (!d)
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    if (!desc || !out || !desc->spirv || desc->spirv_size < 20 || desc->spirv_size % 4 ||
        desc->spirv[0] != 0x07230203u || !desc->entry ||
        desc->binding_count > SALVO_MAX_BINDINGS || (desc->binding_count && !desc->bindings) ||
        desc->push_constant_size > 128 ||
        (desc->spec_constant_count && !desc->spec_constants)) {
        note_illegal(s, IL_bad_argument, "pipeline_create", "not a valid pipeline description");
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    for (uint32_t i = 0; i < desc->binding_count; i++)
        if (desc->bindings[i].kind > SALVO_BINDING_IMAGE_SAMPLER ||
            (desc->bindings[i].kind != SALVO_BINDING_BUFFER && desc->bindings[i].uniform)) {
            note_illegal(s, IL_bad_argument, "pipeline_create", "binding %u: kind %u%s",
                         desc->bindings[i].binding, desc->bindings[i].kind,
                         desc->bindings[i].uniform ? ", uniform" : "");
            return unlock_return(s, ACCEL_ERROR_UNKNOWN);
        }
    fake_pipe *p = obj_new(s, sizeof *p, FAKE_PIPELINE, d);
    if (!p)
        return unlock_return(s, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    p->binding_count = desc->binding_count;
    if (desc->binding_count)
        memcpy(p->bindings, desc->bindings, desc->binding_count * sizeof *desc->bindings);
    p->push_size = desc->push_constant_size;
    p->module_hash = fake_module_hash(desc->spirv, desc->spirv_size);
    p->spec_count = desc->spec_constant_count < FAKE_MAX_SPEC ? desc->spec_constant_count
                                                              : FAKE_MAX_SPEC;
    if (p->spec_count)
        memcpy(p->spec, desc->spec_constants, p->spec_count * sizeof *p->spec);
    *out = (accel_pipeline *)p;
    return unlock_return(s, ACCEL_SUCCESS);
}

static void f_pipeline_destroy(void *self, accel_device *dev, accel_pipeline *pipe)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER_VOID(s, pipeline_destroy);
    fake_dev *d = check_dev(s, dev, "pipeline_destroy");
    fake_pipe *p = pipe ? check(s, pipe, FAKE_PIPELINE, d, "pipeline_destroy") : NULL;
    if (p) {
        forget_uses(s, &p->h, true, IL_destroy_in_use, "pipeline_destroy");
        obj_unlink(s, &p->h);
        obj_free(s, &p->h);
    }
    pthread_mutex_unlock(&s->lock);
}

static accel_result f_descpool_create(void *self, accel_device *dev, uint32_t max_sets,
                                      uint32_t bindings_per_set, uint32_t image_bindings,
                                      accel_descpool **out)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER(s, descpool_create);
    fake_dev *d = check_dev(s, dev, "descpool_create");
    if (!d)
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    if (!out || max_sets == 0 || bindings_per_set == 0 || image_bindings == 0) {
        note_illegal(s, IL_bad_argument, "descpool_create",
                     "max_sets %u, bindings_per_set %u, image_bindings %u", max_sets,
                     bindings_per_set, image_bindings);
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    fake_pool *p = obj_new(s, sizeof *p, FAKE_DESCPOOL, d);
    if (!p)
        return unlock_return(s, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    p->max_sets = max_sets;
    p->bindings_per_set = bindings_per_set;
    p->image_bindings = image_bindings;
    *out = (accel_descpool *)p;
    return unlock_return(s, ACCEL_SUCCESS);
}

static accel_result f_descpool_reset(void *self, accel_device *dev, accel_descpool *pool)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER(s, descpool_reset);
    fake_dev *d = check_dev(s, dev, "descpool_reset");
    fake_pool *p = check(s, pool, FAKE_DESCPOOL, d, "descpool_reset");
    if (!p)
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    /* The sets go, the pool stays: records keep naming it. */
    forget_uses(s, &p->h, false, IL_pool_reset_in_use, "descpool_reset");
    p->sets_used = 0;
    p->descriptors_used = 0;
    p->images_used = 0;
    return unlock_return(s, ACCEL_SUCCESS);
}

static void f_descpool_destroy(void *self, accel_device *dev, accel_descpool *pool)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER_VOID(s, descpool_destroy);
    fake_dev *d = check_dev(s, dev, "descpool_destroy");
    fake_pool *p = pool ? check(s, pool, FAKE_DESCPOOL, d, "descpool_destroy") : NULL;
    if (p) {
        forget_uses(s, &p->h, true, IL_destroy_in_use, "descpool_destroy");
        obj_unlink(s, &p->h);
        obj_free(s, &p->h);
    }
    pthread_mutex_unlock(&s->lock);
}

/* ------------------------------------------------------------------ */
/* Command buffers                                                     */
/* ------------------------------------------------------------------ */

/* Queues a submission may name: the compute ones, then the transfer one. */
static uint32_t queues_offered(const fake_accel *f)
{
    return (f->queue_count ? f->queue_count : 1) + (transfer_offered(f) ? 1 : 0);
}

/* cmd_create and cmd_create_reusable after the call is counted. */
static accel_result cmd_create_locked(fake_accel *f, accel_device *dev, uint32_t queue,
                                      accel_cmd **out, bool reusable, const char *op)
{
    fake_state *s = f->state;
    fake_dev *d = check_dev(s, dev, op);
    if (!d || !out || queue >= queues_offered(f)) {
        if (d)
            note_illegal(s, IL_bad_argument, op, "out is NULL or queue %u", queue);
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    fake_cmd *c = obj_new(s, sizeof *c, FAKE_CMD, d);
    if (!c)
        return unlock_return(s, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    c->state = FAKE_CMD_INITIAL;
    c->queue = queue;
    c->transfer = transfer_offered(f) && queue == (f->queue_count ? f->queue_count : 1);
    c->reusable = reusable;
    *out = (accel_cmd *)c;
    return unlock_return(s, ACCEL_SUCCESS);
}

static accel_result f_cmd_create(void *self, accel_device *dev, uint32_t queue, accel_cmd **out)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER(s, cmd_create);
    return cmd_create_locked(FAKE(self), dev, queue, out, false, "cmd_create");
}

static accel_result f_cmd_create_reusable(void *self, accel_device *dev, uint32_t queue,
                                          accel_cmd **out)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER(s, cmd_create_reusable);
    return cmd_create_locked(FAKE(self), dev, queue, out, true, "cmd_create_reusable");
}

static void f_cmd_destroy(void *self, accel_device *dev, accel_cmd *cmd)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER_VOID(s, cmd_destroy);
    fake_dev *d = check_dev(s, dev, "cmd_destroy");
    fake_cmd *c = cmd ? check(s, cmd, FAKE_CMD, d, "cmd_destroy") : NULL;
    if (c) {
        if (c->state == FAKE_CMD_PENDING) {
            note_illegal(s, IL_destroy_in_use, "cmd_destroy", "the command buffer is pending");
            /* Its submission will run nothing, so it no longer executes
             * anything. */
            count_executes(c, false);
            c->sub->cmd = NULL;
        }
        /* Command buffers that execute it lose the pointer (pending ones
         * count as illegal) and become invalid. */
        if (c->reusable)
            forget_uses(s, &c->h, true, IL_destroy_in_use, "cmd_destroy");
        obj_unlink(s, &c->h);
        obj_free(s, &c->h);
    }
    pthread_mutex_unlock(&s->lock);
}

/* cmd_begin and cmd_begin_resubmit (the fake lets any command buffer be
 * submitted again once its submission ran, so the two differ in name). */
static accel_result cmd_begin_named(fake_state *s, accel_device *dev, accel_cmd *cmd,
                                    const char *op)
{
    fake_cmd *c = check(s, cmd, FAKE_CMD, check_dev(s, dev, op), op);
    if (!c)
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    if (c->reusable) {
        note_illegal(s, IL_reusable_mismatch, op, "a reusable command buffer");
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    if (c->state == FAKE_CMD_RECORDING) {
        note_illegal(s, IL_begin_while_recording, op, "already recording");
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    if (c->state == FAKE_CMD_PENDING) {
        note_illegal(s, IL_begin_while_pending, op, "still pending");
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    cmd_clear(c);
    c->state = FAKE_CMD_RECORDING;
    return unlock_return(s, ACCEL_SUCCESS);
}

static accel_result f_cmd_begin(void *self, accel_device *dev, accel_cmd *cmd)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER(s, cmd_begin);
    return cmd_begin_named(s, dev, cmd, "cmd_begin");
}

static accel_result f_cmd_begin_resubmit(void *self, accel_device *dev, accel_cmd *cmd)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER(s, cmd_begin_resubmit);
    return cmd_begin_named(s, dev, cmd, "cmd_begin_resubmit");
}

static accel_result f_cmd_begin_reusable(void *self, accel_device *dev, accel_cmd *cmd)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER(s, cmd_begin_reusable);
    fake_cmd *c = check(s, cmd, FAKE_CMD, check_dev(s, dev, "cmd_begin_reusable"),
                        "cmd_begin_reusable");
    if (!c)
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    if (!c->reusable) {
        note_illegal(s, IL_reusable_mismatch, "cmd_begin_reusable",
                     "an ordinary command buffer");
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    if (c->state == FAKE_CMD_RECORDING) {
        note_illegal(s, IL_begin_while_recording, "cmd_begin_reusable", "already recording");
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    if (c->pending_uses) {
        note_illegal(s, IL_begin_while_pending, "cmd_begin_reusable",
                     "%u pending submission(s) execute it", c->pending_uses);
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    /* Its old records go: command buffers that executed them are invalid. */
    forget_uses(s, &c->h, false, IL_begin_while_pending, "cmd_begin_reusable");
    cmd_clear(c);
    c->state = FAKE_CMD_RECORDING;
    return unlock_return(s, ACCEL_SUCCESS);
}

static accel_result f_cmd_end(void *self, accel_device *dev, accel_cmd *cmd)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER(s, cmd_end);
    fake_cmd *c = check(s, cmd, FAKE_CMD, check_dev(s, dev, "cmd_end"), "cmd_end");
    if (!c)
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    if (c->state != FAKE_CMD_RECORDING) {
        note_illegal(s, IL_end_not_recording, "cmd_end", "state %d", (int)c->state);
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    c->state = FAKE_CMD_EXECUTABLE;
    return unlock_return(s, ACCEL_SUCCESS);
}

static accel_result f_cmd_reset(void *self, accel_device *dev, accel_cmd *cmd)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER(s, cmd_reset);
    fake_cmd *c = check(s, cmd, FAKE_CMD, check_dev(s, dev, "cmd_reset"), "cmd_reset");
    if (!c)
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    if (c->state == FAKE_CMD_PENDING) {
        note_illegal(s, IL_reset_while_pending, "cmd_reset", "still pending");
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    if (c->pending_uses) {
        note_illegal(s, IL_reset_while_pending, "cmd_reset",
                     "%u pending submission(s) execute it", c->pending_uses);
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    /* A reusable one's records go: command buffers that executed them are
     * invalid. */
    if (c->reusable)
        forget_uses(s, &c->h, false, IL_reset_while_pending, "cmd_reset");
    cmd_clear(c);
    c->state = FAKE_CMD_INITIAL;
    return unlock_return(s, ACCEL_SUCCESS);
}

/* The command buffer to record into, or NULL after counting the misuse. */
static fake_cmd *recording(fake_state *s, accel_device *dev, accel_cmd *cmd, const char *op)
{
    fake_cmd *c = check(s, cmd, FAKE_CMD, check_dev(s, dev, op), op);
    if (c && c->state != FAKE_CMD_RECORDING) {
        note_illegal(s, IL_record_not_recording, op, "state %d", (int)c->state);
        return NULL;
    }
    return c;
}

static fake_rec *add_rec(fake_cmd *c)
{
    if (c->rec_count == c->rec_cap) {
        size_t cap = c->rec_cap ? c->rec_cap * 2 : 16;
        fake_rec *recs = realloc(c->recs, cap * sizeof *recs);
        if (!recs)
            return NULL;
        c->recs = recs;
        c->rec_cap = cap;
    }
    fake_rec *r = &c->recs[c->rec_count++];
    memset(r, 0, sizeof *r);
    return r;
}

/* The image or sampler a bind names as a live one of d, else NULL (a
 * misuse counted as bad_handle unless absent). */
static fake_image *bound_image(fake_state *s, const fake_dev *d, const accel_bind *b)
{
    return b->image ? check(s, b->image, FAKE_IMAGE, d, "cmd_dispatch") : NULL;
}

static fake_sampler *bound_sampler(fake_state *s, const fake_dev *d, const accel_bind *b)
{
    return b->sampler ? check(s, b->sampler, FAKE_SAMPLER, d, "cmd_dispatch") : NULL;
}

/* An image or sampler bind a driver would accept, or the first reason it
 * would not (the kind already matches the pipeline's). */
static const char *image_bind_problem(fake_state *s, const fake_dev *d, const accel_bind *b)
{
    if (b->kind > SALVO_BINDING_IMAGE_SAMPLER)
        return "an unknown binding kind";
    bool wants_image = b->kind != SALVO_BINDING_SAMPLER;
    bool wants_sampler =
        b->kind == SALVO_BINDING_SAMPLER || b->kind == SALVO_BINDING_IMAGE_SAMPLER;
    const fake_image *img = wants_image ? bound_image(s, d, b) : NULL;
    const fake_sampler *smp = wants_sampler ? bound_sampler(s, d, b) : NULL;
    if (wants_image && !img)
        return "an image bind without a live image of the device";
    if (wants_sampler && !smp)
        return "a sampler bind without a live sampler of the device";
    if (!img)
        return NULL;
    uint32_t needs =
        b->kind == SALVO_BINDING_STORAGE_IMAGE ? SALVO_IMAGE_STORAGE : SALVO_IMAGE_SAMPLED;
    if (!(img->desc.usage & needs))
        return "an image bound without the usage its binding kind needs";
    if (!smp)
        return NULL;
    /* Vulkan's rules for what the sampler does to this image. */
    const fake_accel *f = s->owner;
    if (smp->desc.linear && !(f->image_format_usage[img->desc.format] & SALVO_IMAGE_LINEAR_FILTER))
        return "a linear sampler on an image whose format cannot filter";
    if (smp->desc.unnormalized && img->desc.type != SALVO_IMAGE_1D &&
        img->desc.type != SALVO_IMAGE_2D)
        return "an unnormalized sampler on an image that is not 1D or 2D";
    return NULL;
}

/* A dispatch a driver would accept, or the first reason it would not. */
static const char *dispatch_problem(fake_state *s, const fake_dev *d, const fake_pipe *p,
                                    const accel_bind *binds, uint32_t bind_count,
                                    const uint32_t groups[3], const void *push, uint32_t push_size)
{
    if (!groups)
        return "groups is NULL";
    for (int i = 0; i < 3; i++)
        if (groups[i] == 0 || groups[i] > 65535)
            return "group count outside 1..65535";
    if (push_size != p->push_size)
        return "push size differs from the pipeline's";
    if (push_size && !push)
        return "push is NULL";
    if (bind_count != p->binding_count)
        return "binding count differs from the pipeline's";
    if (bind_count && !binds)
        return "binds is NULL";
    for (uint32_t i = 0; i < bind_count; i++) {
        uint32_t j = 0;
        while (j < p->binding_count && (p->bindings[j].binding != binds[i].binding ||
                                         p->bindings[j].element != binds[i].element))
            j++;
        if (j == p->binding_count)
            return "a binding the pipeline does not declare";
        if (p->bindings[j].kind != binds[i].kind)
            return "the bind's kind differs from the pipeline's";
        if (binds[i].kind != SALVO_BINDING_BUFFER) {
            const char *problem = image_bind_problem(s, d, &binds[i]);
            if (problem)
                return problem;
            continue;
        }
        if (p->bindings[j].uniform != binds[i].uniform)
            return "uniform/storage differs from the pipeline's";
        const fake_buf *b = check(s, binds[i].buffer, FAKE_BUFFER, d, "cmd_dispatch");
        if (!b)
            return "a bound buffer is not a live buffer of the device";
        if (binds[i].size == 0 || binds[i].offset >= b->size ||
            binds[i].size > b->size - binds[i].offset)
            return "a bound range is outside its buffer";
        if (binds[i].offset % 16)
            return "a bound offset is not a multiple of 16";
        if (!binds[i].uniform && binds[i].size > (1u << 30))
            return "a bound range exceeds max_storage_buffer_range";
    }
    return NULL;
}

/* A dispatch recorded (lock held, the call counted): groups as given, or
 * indirect (groups NULL): read from counts at offset when it runs. */
static accel_result dispatch_record(fake_state *s, const char *op, accel_device *dev,
                                    accel_cmd *cmd, accel_pipeline *pipe, accel_descpool *pool,
                                    const accel_bind *binds, uint32_t bind_count,
                                    const uint32_t groups[3], accel_buffer *counts,
                                    uint64_t counts_offset, const void *push, uint32_t push_size)
{
    fake_dev *d = check_dev(s, dev, op);
    fake_cmd *c = recording(s, dev, cmd, op);
    fake_pipe *p = check(s, pipe, FAKE_PIPELINE, d, op);
    /* No pool where no set is taken (pushed descriptors): the core's
     * recordings made ahead of a batch pass none. A pipeline that binds
     * an array of buffers takes a set all the same (accel.h). */
    bool arrays = false;
    for (uint32_t i = 0; p && i < p->binding_count; i++)
        arrays |= p->bindings[i].count > 1;
    bool takes_set = !s->owner->push_descriptors || arrays;
    fake_pool *pl = pool || takes_set ? check(s, pool, FAKE_DESCPOOL, d, op) : NULL;
    fake_buf *cb = groups ? NULL : check(s, counts, FAKE_BUFFER, d, op);
    if (!c || !p || (takes_set && !pl) || (!groups && !cb))
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    if (c->transfer) {
        note_illegal(s, IL_transfer_queue_work, op, "on a transfer queue's command buffer");
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    if (bind_count > SALVO_MAX_BINDINGS) {
        note_illegal(s, IL_dispatch_mismatch, op, "%u bindings", bind_count);
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    /* Descriptor-set allocation comes first, as in the real recorder:
     * a full pool records nothing. Pushed descriptors take no set. The
     * image kinds are counted on their own, as a driver's pool does. */
    uint32_t images = 0;
    for (uint32_t i = 0; binds && i < bind_count; i++)
        images += binds[i].image != NULL || binds[i].sampler != NULL;
    if (takes_set && (pl->sets_used >= pl->max_sets ||
                      pl->descriptors_used + bind_count >
                          (uint64_t)pl->max_sets * pl->bindings_per_set ||
                      pl->images_used + images > pl->image_bindings))
        return unlock_return(s, ACCEL_ERROR_OUT_OF_POOL_MEMORY);
    static const uint32_t any[3] = {1, 1, 1}; /* an indirect one's are checked when it runs */
    const char *problem =
        dispatch_problem(s, d, p, binds, bind_count, groups ? groups : any, push, push_size);
    if (!problem && cb &&
        (counts_offset % 4 || counts_offset > cb->size || cb->size - counts_offset < 12))
        problem = "indirect counts not 12 bytes at a multiple of 4 inside their buffer";
    if (problem)
        note_illegal(s, IL_dispatch_mismatch, op, "%s", problem);
    fake_rec *r = add_rec(c);
    if (!r)
        return unlock_return(s, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    if (takes_set) {
        pl->sets_used++;
        pl->descriptors_used += bind_count;
        pl->images_used += images;
        r->pool = pl;
    }
    r->kind = REC_DISPATCH;
    r->pipe = p;
    r->indirect = !groups;
    r->counts = problem ? NULL : cb; /* counts it cannot read: it runs nothing */
    r->counts_offset = counts_offset;
    /* For dispatch_hook: what the dispatch needs to run (a record with
     * no room for it runs nothing). */
    fake_dispatch_rec *x = NULL;
    if (s->owner->dispatch_hook && (push || !push_size) && push_size <= sizeof x->push &&
        (bind_count == 0 || binds) && (x = calloc(1, sizeof *x))) {
        if (groups)
            memcpy(x->groups, groups, sizeof x->groups);
        x->push_size = push_size;
        if (push_size)
            memcpy(x->push, push, push_size);
        x->bind_count = bind_count;
        for (uint32_t i = 0; i < bind_count; i++) {
            x->binds[i].binding = binds[i].binding;
            x->binds[i].element = binds[i].element;
            x->binds[i].kind = binds[i].kind;
            x->binds[i].offset = binds[i].offset;
            x->binds[i].size = binds[i].size;
            x->binds[i].res = -1;
        }
        r->dx = x;
    }
    /* What is live is remembered, so that destroying it is tracked as for
     * any handle a command buffer uses. */
    for (uint32_t i = 0; i < bind_count; i++) {
        bool buffer = binds[i].kind == SALVO_BINDING_BUFFER;
        const void *hs[2] = {buffer ? (const void *)binds[i].buffer : (const void *)binds[i].image,
                             buffer ? NULL : (const void *)binds[i].sampler};
        const fake_kind kinds[2] = {buffer ? FAKE_BUFFER : FAKE_IMAGE, FAKE_SAMPLER};
        for (int k = 0; k < 2; k++) {
            fake_obj *o = (fake_obj *)hs[k];
            if (!o || o->magic != FAKE_MAGIC || o->kind != kinds[k])
                continue;
            if (x && k == 0)
                x->binds[i].res = (int)r->res_count;
            r->res[r->res_count++] = o;
            if (o->kind == FAKE_IMAGE && !((fake_image *)o)->has_view)
                note_illegal(s, IL_image_no_view, op, "binding %u: the image has no view",
                             binds[i].binding);
        }
    }
    s->dispatches_recorded++;
    return unlock_return(s, ACCEL_SUCCESS);
}

static accel_result f_cmd_dispatch(void *self, accel_device *dev, accel_cmd *cmd,
                                   accel_pipeline *pipe, accel_descpool *pool,
                                   const accel_bind *binds, uint32_t bind_count,
                                   const uint32_t groups[3], const void *push, uint32_t push_size)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER(s, cmd_dispatch);
    if (!groups) {
        note_illegal(s, IL_dispatch_mismatch, "cmd_dispatch", "groups is NULL");
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    return dispatch_record(s, "cmd_dispatch", dev, cmd, pipe, pool, binds, bind_count, groups,
                           NULL, 0, push, push_size);
}

static accel_result f_cmd_dispatch_indirect(void *self, accel_device *dev, accel_cmd *cmd,
                                            accel_pipeline *pipe, accel_descpool *pool,
                                            const accel_bind *binds, uint32_t bind_count,
                                            accel_buffer *counts, uint64_t offset,
                                            const void *push, uint32_t push_size)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER(s, cmd_dispatch_indirect);
    return dispatch_record(s, "cmd_dispatch_indirect", dev, cmd, pipe, pool, binds, bind_count,
                           NULL, counts, offset, push, push_size);
}

static void f_cmd_barrier(void *self, accel_device *dev, accel_cmd *cmd, accel_barrier kind)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER_VOID(s, cmd_barrier);
    if (recording(s, dev, cmd, "cmd_barrier")) {
        if ((unsigned)kind > ACCEL_BARRIER_INDIRECT)
            note_illegal(s, IL_bad_argument, "cmd_barrier", "barrier kind %d", (int)kind);
        else
            s->barriers[kind]++;
    }
    pthread_mutex_unlock(&s->lock);
}

static void f_cmd_copy(void *self, accel_device *dev, accel_cmd *cmd, accel_buffer *src,
                       uint64_t src_offset, accel_buffer *dst, uint64_t dst_offset, uint64_t size)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER_VOID(s, cmd_copy);
    fake_dev *d = check_dev(s, dev, "cmd_copy");
    fake_cmd *c = recording(s, dev, cmd, "cmd_copy");
    fake_buf *sb = check(s, src, FAKE_BUFFER, d, "cmd_copy");
    fake_buf *db = check(s, dst, FAKE_BUFFER, d, "cmd_copy");
    if (c && sb && db) {
        if (size == 0 || src_offset > sb->size || size > sb->size - src_offset ||
            dst_offset > db->size || size > db->size - dst_offset) {
            note_illegal(s, IL_copy_out_of_range, "cmd_copy",
                         "%llu bytes from %llu of %llu to %llu of %llu", (unsigned long long)size,
                         (unsigned long long)src_offset, (unsigned long long)sb->size,
                         (unsigned long long)dst_offset, (unsigned long long)db->size);
        } else {
            fake_rec *r = add_rec(c);
            if (r) {
                r->kind = REC_COPY;
                r->src = sb;
                r->dst = db;
                r->src_offset = src_offset;
                r->dst_offset = dst_offset;
                r->size = size;
            }
        }
    }
    pthread_mutex_unlock(&s->lock);
}

/* Nothing to record into: the command buffer's own handle stands in, for
 * tests that only check when the program's recorder runs. */
static void *f_cmd_native(void *self, accel_device *dev, accel_cmd *cmd)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    fake_cmd *c = recording(s, dev, cmd, "cmd_native");
    pthread_mutex_unlock(&s->lock);
    return c;
}

static void f_cmd_fill(void *self, accel_device *dev, accel_cmd *cmd, accel_buffer *dst,
                       uint64_t offset, uint64_t size, uint32_t value)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER_VOID(s, cmd_fill);
    fake_dev *d = check_dev(s, dev, "cmd_fill");
    fake_cmd *c = recording(s, dev, cmd, "cmd_fill");
    fake_buf *db = check(s, dst, FAKE_BUFFER, d, "cmd_fill");
    if (c && db) {
        if (size == 0 || size % 4 || offset % 4 || offset > db->size ||
            size > db->size - offset) {
            note_illegal(s, IL_copy_out_of_range, "cmd_fill", "%llu bytes at %llu of %llu",
                         (unsigned long long)size, (unsigned long long)offset,
                         (unsigned long long)db->size);
        } else {
            fake_rec *r = add_rec(c);
            if (r) {
                r->kind = REC_FILL;
                r->dst = db;
                r->dst_offset = offset;
                r->size = size;
                r->fill_value = value;
            }
        }
    }
    pthread_mutex_unlock(&s->lock);
}

/* Whole words as cmd_fill; the partial ones take a set from the pool,
 * as the Vulkan accelerator's kernel for them does (none where
 * descriptors are pushed). */
static accel_result f_cmd_fill_bytes(void *self, accel_device *dev, accel_cmd *cmd,
                                     accel_descpool *pool, accel_buffer *dst, uint64_t offset,
                                     uint64_t size, uint32_t word)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER(s, cmd_fill_bytes);
    fake_dev *d = check_dev(s, dev, "cmd_fill_bytes");
    fake_cmd *c = recording(s, dev, cmd, "cmd_fill_bytes");
    fake_buf *db = check(s, dst, FAKE_BUFFER, d, "cmd_fill_bytes");
    fake_pool *pl = check(s, pool, FAKE_DESCPOOL, d, "cmd_fill_bytes");
    if (!c || !db || !pl)
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    if (c->transfer) {
        note_illegal(s, IL_transfer_queue_work, "cmd_fill_bytes",
                     "its partial words are a compute shader's");
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    if (size == 0 || offset > db->size || size > db->size - offset) {
        note_illegal(s, IL_copy_out_of_range, "cmd_fill_bytes", "%llu bytes at %llu of %llu",
                     (unsigned long long)size, (unsigned long long)offset,
                     (unsigned long long)db->size);
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    /* Partial words take a set, unless descriptors are pushed. */
    bool takes_set = (offset % 4 || (offset + size) % 4) && !s->owner->push_descriptors;
    if (takes_set && (pl->sets_used >= pl->max_sets ||
                    pl->descriptors_used + ACCEL_FILL_BYTES_DESCRIPTORS >
                        (uint64_t)pl->max_sets * pl->bindings_per_set))
        return unlock_return(s, ACCEL_ERROR_OUT_OF_POOL_MEMORY);
    fake_rec *r = add_rec(c);
    if (!r)
        return unlock_return(s, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    if (takes_set) {
        pl->sets_used++;
        pl->descriptors_used += ACCEL_FILL_BYTES_DESCRIPTORS;
        r->pool = pl;
    }
    r->kind = REC_FILL_BYTES;
    r->dst = db;
    r->dst_offset = offset;
    r->size = size;
    r->fill_value = word;
    return unlock_return(s, ACCEL_SUCCESS);
}

static void f_cmd_execute(void *self, accel_device *dev, accel_cmd *cmd,
                          accel_cmd *const *reusable, uint32_t count)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER_VOID(s, cmd_execute);
    fake_dev *d = check_dev(s, dev, "cmd_execute");
    fake_cmd *c = recording(s, dev, cmd, "cmd_execute");
    bool ok = c != NULL;
    if (c && c->reusable) {
        note_illegal(s, IL_reusable_mismatch, "cmd_execute", "into a reusable command buffer");
        ok = false;
    }
    if (c && count && !reusable) {
        note_illegal(s, IL_bad_argument, "cmd_execute", "the list is NULL");
        ok = false;
    }
    /* The first misuse counts, and nothing is recorded then. */
    for (uint32_t i = 0; ok && i < count; i++) {
        fake_cmd *r = check(s, reusable[i], FAKE_CMD, d, "cmd_execute");
        if (!r) {
            ok = false;
        } else if (!r->reusable) {
            note_illegal(s, IL_reusable_mismatch, "cmd_execute",
                         "element %u is an ordinary command buffer", i);
            ok = false;
        } else if (r->state != FAKE_CMD_EXECUTABLE || r->invalidated) {
            note_illegal(s, IL_execute_not_executable, "cmd_execute", "element %u: %s", i,
                         r->invalidated ? "invalidated" : "not ended");
            ok = false;
        } else if (r->transfer != c->transfer) {
            note_illegal(s, IL_submit_bad_queue, "cmd_execute",
                         "element %u was made for queue %u, the command buffer for %u", i,
                         r->queue, c->queue);
            ok = false;
        }
    }
    for (uint32_t i = 0; ok && i < count; i++) {
        fake_rec *rec = add_rec(c);
        if (!rec)
            break;
        rec->kind = REC_EXECUTE;
        rec->exec = (fake_cmd *)reusable[i];
    }
    pthread_mutex_unlock(&s->lock);
}

/* ------------------------------------------------------------------ */
/* Fences and submission                                               */
/* ------------------------------------------------------------------ */

static accel_result f_fence_create(void *self, accel_device *dev, accel_fence **out)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER(s, fence_create);
    fake_dev *d = check_dev(s, dev, "fence_create");
    if (!d || !out) {
        if (d)
            note_illegal(s, IL_bad_argument, "fence_create", "out is NULL");
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    fake_fence *fe = obj_new(s, sizeof *fe, FAKE_FENCE, d);
    if (!fe)
        return unlock_return(s, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    *out = (accel_fence *)fe;
    return unlock_return(s, ACCEL_SUCCESS);
}

static void f_fence_destroy(void *self, accel_device *dev, accel_fence *fence)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER_VOID(s, fence_destroy);
    fake_dev *d = check_dev(s, dev, "fence_destroy");
    fake_fence *fe = fence ? check(s, fence, FAKE_FENCE, d, "fence_destroy") : NULL;
    if (fe) {
        if (fe->sub) {
            note_illegal(s, IL_destroy_in_use, "fence_destroy", "a pending submission owns it");
            fe->sub->fence = NULL;
        }
        obj_unlink(s, &fe->h);
        obj_free(s, &fe->h);
    }
    pthread_mutex_unlock(&s->lock);
}

static accel_result f_fence_reset(void *self, accel_device *dev, accel_fence *fence)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER(s, fence_reset);
    fake_fence *fe = check(s, fence, FAKE_FENCE, check_dev(s, dev, "fence_reset"), "fence_reset");
    if (!fe)
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    if (fe->sub) {
        note_illegal(s, IL_fence_reset_pending, "fence_reset", "a pending submission owns it");
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    fe->signalled = false;
    return unlock_return(s, ACCEL_SUCCESS);
}

/* blocking_waits: the monotonic time timeout_ns from now (UINT64_MAX:
 * none), and one wait for progress until then; false once it passed. */
static void deadline(struct timespec *end, uint64_t timeout_ns)
{
    clock_gettime(CLOCK_MONOTONIC, end);
    if (timeout_ns == UINT64_MAX)
        return;
    uint64_t ns = (uint64_t)end->tv_nsec + timeout_ns % 1000000000ull;
    end->tv_sec += (time_t)(timeout_ns / 1000000000ull + ns / 1000000000ull);
    end->tv_nsec = (long)(ns % 1000000000ull);
}

static bool block(fake_state *s, const struct timespec *end, uint64_t timeout_ns)
{
    if (timeout_ns == UINT64_MAX)
        return pthread_cond_wait(&s->progressed, &s->lock) == 0;
    return pthread_cond_timedwait(&s->progressed, &s->lock, end) != ETIMEDOUT;
}

static accel_result f_fence_status(void *self, accel_device *dev, accel_fence *fence)
{
    fake_accel *f = FAKE(self);
    fake_state *s = f->state;
    fake_hook status_hook = f->fence_status_hook;
    if (status_hook)
        status_hook(f->hook_user);
    pthread_mutex_lock(&s->lock);
    ENTER(s, fence_status);
    fake_fence *fe = check(s, fence, FAKE_FENCE, check_dev(s, dev, "fence_status"),
                           "fence_status");
    if (!fe)
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    if (fe->signalled)
        return unlock_return(s, ACCEL_SUCCESS);
    return unlock_return(s, s->lost ? ACCEL_ERROR_DEVICE_LOST : ACCEL_NOT_READY);
}

static accel_result f_fence_wait(void *self, accel_device *dev, accel_fence *fence,
                                 uint64_t timeout_ns)
{
    fake_accel *f = FAKE(self);
    fake_state *s = f->state;
    pthread_mutex_lock(&s->lock);
    ENTER(s, fence_wait);
    fake_fence *fe = check(s, fence, FAKE_FENCE, check_dev(s, dev, "fence_wait"), "fence_wait");
    if (!fe)
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    if (fe->signalled)
        return unlock_return(s, ACCEL_SUCCESS);
    if (s->lost)
        return unlock_return(s, ACCEL_ERROR_DEVICE_LOST);
    if (!fe->sub && timeout_ns > 0)
        note_illegal(s, IL_wait_unsubmitted, "fence_wait",
                     "no submission will ever signal this fence");
    else if (f->blocking_waits && timeout_ns > 0) {
        /* As a driver's wait: until it is signalled, or the bound. */
        struct timespec end;
        deadline(&end, timeout_ns);
        while (!fe->signalled && !s->lost && block(s, &end, timeout_ns))
            ;
        if (fe->signalled)
            return unlock_return(s, ACCEL_SUCCESS);
        if (s->lost)
            return unlock_return(s, ACCEL_ERROR_DEVICE_LOST);
    }
    return unlock_return(s, ACCEL_TIMEOUT);
}

static bool copy_semops(fake_state *s, const fake_dev *d, const accel_sem_op *ops, uint32_t n,
                        fake_semop **out)
{
    *out = NULL;
    if (n == 0)
        return true;
    if (!ops) {
        note_illegal(s, IL_bad_argument, "submit", "semaphore list is NULL");
        return false;
    }
    fake_semop *v = calloc(n, sizeof *v);
    if (!v)
        return false;
    for (uint32_t i = 0; i < n; i++) {
        v[i].tl = check(s, ops[i].timeline, FAKE_TIMELINE, d, "submit");
        v[i].value = ops[i].value;
        if (!v[i].tl) {
            free(v);
            return false;
        }
    }
    *out = v;
    return true;
}

/* Whether c may be submitted to queue (Vulkan's rules; an illegal use is
 * noted where not). */
static bool cmd_submittable(fake_accel *f, fake_state *s, fake_cmd *c, uint32_t queue)
{
    if (c->reusable) {
        note_illegal(s, IL_reusable_mismatch, "submit",
                     "a reusable command buffer runs only through cmd_execute");
        return false;
    }
    /* A command buffer goes to a queue of the family it was made for: any
     * compute queue, or the transfer queue. */
    bool to_transfer = transfer_offered(f) && queue == queues_offered(f) - 1;
    if (queue >= queues_offered(f) || c->transfer != to_transfer) {
        note_illegal(s, IL_submit_bad_queue, "submit",
                     "queue %u of %u (the command buffer was made for %u)", queue,
                     queues_offered(f), c->queue);
        return false;
    }
    if (c->state != FAKE_CMD_EXECUTABLE) {
        note_illegal(s, IL_submit_not_executable, "submit", "state %d", (int)c->state);
        return false;
    }
    if (c->invalidated) {
        note_illegal(s, IL_submit_invalidated, "submit",
                     "it recorded a use of a handle destroyed (or a pool reset) since");
        return false;
    }
    /* Vulkan: a command buffer is invalid once one it executes is. */
    for (size_t i = 0; i < c->rec_count; i++) {
        const fake_rec *r = &c->recs[i];
        if (r->kind == REC_EXECUTE && r->exec && r->exec->invalidated) {
            note_illegal(s, IL_submit_invalidated, "submit",
                         "a reusable command buffer it executes is invalidated");
            return false;
        }
    }
    return true;
}

static accel_result f_submit(void *self, accel_device *dev, const accel_submit_desc *desc)
{
    fake_accel *f = FAKE(self);
    fake_state *s = f->state;
    pthread_mutex_lock(&s->lock);
    ENTER(s, submit);
    fake_dev *d = check_dev(s, dev, "submit");
    if (!d || !desc)
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    if (s->lost)
        return unlock_return(s, ACCEL_ERROR_DEVICE_LOST);
    /* No command buffer: a submission of its waits and signals alone
     * (Vulkan: commandBufferCount 0), in order on its queue as any. */
    fake_cmd *c = desc->cmd ? check(s, desc->cmd, FAKE_CMD, d, "submit") : NULL;
    fake_fence *fe = desc->fence ? check(s, desc->fence, FAKE_FENCE, d, "submit") : NULL;
    if ((desc->cmd && !c) || (desc->fence && !fe))
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    if (c ? !cmd_submittable(f, s, c, desc->queue) : desc->queue >= queues_offered(f)) {
        if (!c)
            note_illegal(s, IL_submit_bad_queue, "submit", "queue %u of %u", desc->queue,
                         queues_offered(f));
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    if (fe && (fe->signalled || fe->sub)) {
        note_illegal(s, IL_submit_fence_busy, "submit", "the fence is %s",
                     fe->sub ? "pending" : "signalled");
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    if (desc->wait_count + desc->signal_count && !f->timeline_semaphores) {
        note_illegal(s, IL_timeline_unsupported, "submit", "timeline operations");
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    fake_sub *sub = calloc(1, sizeof *sub);
    if (!sub)
        return unlock_return(s, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    if (!copy_semops(s, d, desc->waits, desc->wait_count, &sub->waits) ||
        !copy_semops(s, d, desc->signals, desc->signal_count, &sub->signals)) {
        sub_free(sub);
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    sub->wait_count = desc->wait_count;
    sub->signal_count = desc->signal_count;
    sub->queue = desc->queue;
    s->queue_submits[desc->queue]++;
    sub->cmd = c;
    sub->fence = fe;
    if (c) {
        c->state = FAKE_CMD_PENDING;
        c->sub = sub;
        count_executes(c, true);
    }
    if (fe)
        fe->sub = sub;
    if (s->tail)
        s->tail->next = sub;
    else
        s->head = sub;
    s->tail = sub;
    s->pending++;
    progress(f);
    return unlock_return(s, ACCEL_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* Timelines                                                           */
/* ------------------------------------------------------------------ */

static accel_result f_timeline_create(void *self, accel_device *dev, uint64_t initial,
                                      accel_timeline **out)
{
    fake_accel *f = FAKE(self);
    fake_state *s = f->state;
    pthread_mutex_lock(&s->lock);
    ENTER(s, timeline_create);
    fake_dev *d = check_dev(s, dev, "timeline_create");
    if (!d || !out) {
        if (d)
            note_illegal(s, IL_bad_argument, "timeline_create", "out is NULL");
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    if (!f->timeline_semaphores) {
        note_illegal(s, IL_timeline_unsupported, "timeline_create", "the device has none");
        return unlock_return(s, ACCEL_ERROR_FEATURE_NOT_PRESENT);
    }
    fake_tl *tl = obj_new(s, sizeof *tl, FAKE_TIMELINE, d);
    if (!tl)
        return unlock_return(s, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    tl->value = initial;
    *out = (accel_timeline *)tl;
    return unlock_return(s, ACCEL_SUCCESS);
}

static void f_timeline_destroy(void *self, accel_device *dev, accel_timeline *timeline)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER_VOID(s, timeline_destroy);
    fake_dev *d = check_dev(s, dev, "timeline_destroy");
    fake_tl *tl = timeline ? check(s, timeline, FAKE_TIMELINE, d, "timeline_destroy") : NULL;
    if (tl) {
        if (!s->lost)
            forget_timeline(s, tl);
        obj_unlink(s, &tl->h);
        obj_free(s, &tl->h);
    }
    pthread_mutex_unlock(&s->lock);
}

static accel_result f_timeline_signal(void *self, accel_device *dev, accel_timeline *timeline,
                                      uint64_t value)
{
    fake_accel *f = FAKE(self);
    fake_state *s = f->state;
    pthread_mutex_lock(&s->lock);
    ENTER(s, timeline_signal);
    fake_tl *tl = check(s, timeline, FAKE_TIMELINE, check_dev(s, dev, "timeline_signal"),
                        "timeline_signal");
    if (!tl)
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    if (value <= tl->value) {
        note_illegal(s, IL_timeline_not_increasing, "timeline_signal",
                     "signal %llu on a timeline at %llu", (unsigned long long)value,
                     (unsigned long long)tl->value);
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    tl->value = value;
    progress(f);
    pthread_cond_broadcast(&s->progressed);
    return unlock_return(s, ACCEL_SUCCESS);
}

static accel_result f_timeline_value(void *self, accel_device *dev, accel_timeline *timeline,
                                     uint64_t *value)
{
    fake_accel *f = FAKE(self);
    fake_state *s = f->state;
    fake_hook value_hook = f->timeline_value_hook;
    if (value_hook)
        value_hook(f->hook_user);
    pthread_mutex_lock(&s->lock);
    ENTER(s, timeline_value);
    fake_tl *tl = check(s, timeline, FAKE_TIMELINE, check_dev(s, dev, "timeline_value"),
                        "timeline_value");
    if (!tl || !value) {
        if (tl)
            note_illegal(s, IL_bad_argument, "timeline_value", "value is NULL");
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    *value = tl->value;
    return unlock_return(s, s->lost ? ACCEL_ERROR_DEVICE_LOST : ACCEL_SUCCESS);
}

static accel_result f_timeline_wait(void *self, accel_device *dev, accel_timeline *timeline,
                                    uint64_t value, uint64_t timeout_ns)
{
    /* Unless blocking_waits, never blocks: an unmet wait is a timeout at once. */
    fake_accel *f = FAKE(self);
    fake_state *s = f->state;
    pthread_mutex_lock(&s->lock);
    ENTER(s, timeline_wait);
    fake_tl *tl = check(s, timeline, FAKE_TIMELINE, check_dev(s, dev, "timeline_wait"),
                        "timeline_wait");
    if (!tl)
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    if (tl->value >= value)
        return unlock_return(s, ACCEL_SUCCESS);
    if (f->blocking_waits && timeout_ns > 0 && !s->lost) {
        struct timespec end;
        deadline(&end, timeout_ns);
        while (tl->value < value && !s->lost && block(s, &end, timeout_ns))
            ;
        if (tl->value >= value)
            return unlock_return(s, ACCEL_SUCCESS);
    }
    return unlock_return(s, s->lost ? ACCEL_ERROR_DEVICE_LOST : ACCEL_TIMEOUT);
}

static void f_destroy(void *self)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER_VOID(s, destroy);
    if (s->destroyed)
        note_illegal(s, IL_use_after_destroy, "destroy", "destroy() called twice");
    s->destroyed = true;
    pthread_mutex_unlock(&s->lock);
}

/* ------------------------------------------------------------------ */
/* Timestamp queries                                                   */
/* ------------------------------------------------------------------ */

static accel_result f_querypool_create(void *self, accel_device *dev, uint32_t count,
                                       accel_querypool **out)
{
    fake_accel *f = FAKE(self);
    fake_state *s = f->state;
    pthread_mutex_lock(&s->lock);
    ENTER(s, querypool_create);
    fake_dev *d = check_dev(s, dev, "querypool_create");
    if (!d || !out || count == 0) {
        if (d)
            note_illegal(s, IL_bad_argument, "querypool_create", "out NULL or count 0");
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    *out = NULL;
    if (!f->timestamps) {
        note_illegal(s, IL_bad_argument, "querypool_create", "the device has no timestamps");
        return unlock_return(s, ACCEL_ERROR_FEATURE_NOT_PRESENT);
    }
    fake_qpool *q = obj_new(s, sizeof *q, FAKE_QUERYPOOL, d);
    if (!q)
        return unlock_return(s, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    q->count = count;
    q->ticks = calloc(count, sizeof *q->ticks);
    q->written = calloc(count, sizeof *q->written);
    if (!q->ticks || !q->written) {
        obj_unlink(s, &q->h);
        obj_free(s, &q->h);
        return unlock_return(s, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    }
    *out = (accel_querypool *)q;
    return unlock_return(s, ACCEL_SUCCESS);
}

static void f_querypool_destroy(void *self, accel_device *dev, accel_querypool *pool)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER_VOID(s, querypool_destroy);
    fake_dev *d = check_dev(s, dev, "querypool_destroy");
    fake_qpool *q = pool ? check(s, pool, FAKE_QUERYPOOL, d, "querypool_destroy") : NULL;
    if (q) {
        forget_uses(s, &q->h, true, IL_destroy_in_use, "querypool_destroy");
        obj_unlink(s, &q->h);
        obj_free(s, &q->h);
    }
    pthread_mutex_unlock(&s->lock);
}

static void f_cmd_querypool_reset(void *self, accel_device *dev, accel_cmd *cmd,
                                  accel_querypool *pool, uint32_t first, uint32_t count)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER_VOID(s, cmd_querypool_reset);
    fake_dev *d = check_dev(s, dev, "cmd_querypool_reset");
    fake_cmd *c = recording(s, dev, cmd, "cmd_querypool_reset");
    fake_qpool *q = check(s, pool, FAKE_QUERYPOOL, d, "cmd_querypool_reset");
    if (c && c->transfer)
        note_illegal(s, IL_transfer_queue_work, "cmd_querypool_reset",
                     "on a transfer queue's command buffer");
    if (c && q && !c->transfer) {
        if (count == 0 || first >= q->count || count > q->count - first) {
            note_illegal(s, IL_bad_argument, "cmd_querypool_reset",
                         "queries [%u, +%u) of a pool of %u", first, count, q->count);
        } else {
            fake_rec *r = add_rec(c);
            if (r) {
                r->kind = REC_QUERY_RESET;
                r->qpool = q;
                r->q_first = first;
                r->q_count = count;
            }
        }
    }
    pthread_mutex_unlock(&s->lock);
}

static void f_cmd_timestamp(void *self, accel_device *dev, accel_cmd *cmd, accel_querypool *pool,
                            uint32_t index, bool end_of_work)
{
    (void)end_of_work; /* the fake runs one command at a time: both are the same */
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER_VOID(s, cmd_timestamp);
    fake_dev *d = check_dev(s, dev, "cmd_timestamp");
    fake_cmd *c = recording(s, dev, cmd, "cmd_timestamp");
    fake_qpool *q = check(s, pool, FAKE_QUERYPOOL, d, "cmd_timestamp");
    if (c && q) {
        if (index >= q->count) {
            note_illegal(s, IL_query_not_reset, "cmd_timestamp", "query %u of a pool of %u",
                         index, q->count);
        } else {
            fake_rec *r = add_rec(c);
            if (r) {
                r->kind = REC_TIMESTAMP;
                r->qpool = q;
                r->q_first = index;
            }
        }
    }
    pthread_mutex_unlock(&s->lock);
}

/* As Vulkan's vkResetQueryPool: illegal while a pending command buffer
 * writes or resets one of the queries. */
static accel_result f_querypool_host_reset(void *self, accel_device *dev, accel_querypool *pool,
                                           uint32_t first, uint32_t count)
{
    fake_accel *f = FAKE(self);
    fake_state *s = f->state;
    pthread_mutex_lock(&s->lock);
    ENTER(s, querypool_host_reset);
    if (!f->host_query_reset)
        return unlock_return(s, ACCEL_ERROR_FEATURE_NOT_PRESENT);
    fake_qpool *q = check(s, pool, FAKE_QUERYPOOL, check_dev(s, dev, "querypool_host_reset"),
                          "querypool_host_reset");
    if (!q)
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    if (count == 0 || first >= q->count || count > q->count - first) {
        note_illegal(s, IL_bad_argument, "querypool_host_reset", "queries [%u, +%u) of %u", first,
                     count, q->count);
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    for (fake_obj *it = s->objs; it; it = it->next) {
        if (it->kind != FAKE_CMD)
            continue;
        fake_cmd *c = (fake_cmd *)it;
        if (c->state != FAKE_CMD_PENDING && c->pending_uses == 0)
            continue;
        for (size_t i = 0; i < c->rec_count; i++) {
            const fake_rec *r = &c->recs[i];
            if ((r->kind == REC_TIMESTAMP || r->kind == REC_QUERY_RESET) && r->qpool == q &&
                r->q_first < first + count && first < r->q_first + (r->kind == REC_TIMESTAMP ? 1 : r->q_count))
                note_illegal(s, IL_bad_argument, "querypool_host_reset",
                             "query %u is used by a pending command buffer", r->q_first);
        }
    }
    memset(q->written + first, 0, count * sizeof *q->written);
    return unlock_return(s, ACCEL_SUCCESS);
}

static accel_result f_querypool_results(void *self, accel_device *dev, accel_querypool *pool,
                                        uint32_t first, uint32_t count, uint64_t *ticks)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER(s, querypool_results);
    fake_qpool *q = check(s, pool, FAKE_QUERYPOOL, check_dev(s, dev, "querypool_results"),
                          "querypool_results");
    if (!q)
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    if (!ticks || count == 0 || first >= q->count || count > q->count - first) {
        note_illegal(s, IL_bad_argument, "querypool_results", "queries [%u, +%u) of %u", first,
                     count, q->count);
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    accel_result r = ACCEL_SUCCESS;
    for (uint32_t i = 0; i < count; i++) {
        if (q->written[first + i])
            ticks[i] = q->ticks[first + i];
        else
            r = ACCEL_NOT_READY;
    }
    return unlock_return(s, r);
}

/* ------------------------------------------------------------------ */
/* Images and samplers                                                 */
/* ------------------------------------------------------------------ */

/* Bytes of a texel: the formats come in runs of R, RG and RGBA of 8, 16
 * and 32-bit components, in the enumeration's order. */
static uint32_t texel_size(salvo_format format)
{
    if (format <= SALVO_FORMAT_UNDEFINED || format >= SALVO_FORMAT_COUNT)
        return 0;
    if (format <= SALVO_FORMAT_R8_SINT)
        return 1;
    if (format <= SALVO_FORMAT_RG8_SINT)
        return 2;
    if (format <= SALVO_FORMAT_RGBA8_SINT)
        return 4;
    if (format <= SALVO_FORMAT_R16_FLOAT)
        return 2;
    if (format <= SALVO_FORMAT_RG16_FLOAT)
        return 4;
    if (format <= SALVO_FORMAT_RGBA16_FLOAT)
        return 8;
    if (format <= SALVO_FORMAT_R32_FLOAT)
        return 4;
    if (format <= SALVO_FORMAT_RG32_FLOAT)
        return 8;
    return 16;
}

/* One heap, as device_open reports it; nothing measured: the budget is
 * its size, and usage what buffers (imports aside) and images hold. */
static void f_memory_info(void *self, accel_device *dev, salvo_memory_info *out)
{
    fake_accel *f = FAKE(self);
    fake_state *s = f->state;
    pthread_mutex_lock(&s->lock);
    ENTER_VOID(s, memory_info);
    check_dev(s, dev, "memory_info");
    uint64_t size = f->device_memory_limit ? f->device_memory_limit : 8ull << 30;
    out->measured = false;
    out->heap_count = 1;
    out->heaps[0] = (salvo_heap_usage){.size = size, .device_local = true, .budget = size,
                                       .usage = s->memory_used, .allocated = s->memory_used};
    pthread_mutex_unlock(&s->lock);
}

static uint32_t f_image_format_support(void *self, accel_device *dev, salvo_format format)
{
    fake_accel *f = FAKE(self);
    fake_state *s = f->state;
    pthread_mutex_lock(&s->lock);
    ENTER_VOID(s, image_format_support);
    check_dev(s, dev, "image_format_support");
    uint32_t usage = format > SALVO_FORMAT_UNDEFINED && format < SALVO_FORMAT_COUNT
                         ? f->image_format_usage[format]
                         : 0;
    pthread_mutex_unlock(&s->lock);
    return usage;
}

/* A description Vulkan accepts (one mip level, one sample, the extents
 * its image type allows, a usage the format offers), or why not. */
static const char *image_desc_problem(const fake_accel *f, const accel_image_desc *d)
{
    if (d->format <= SALVO_FORMAT_UNDEFINED || d->format >= SALVO_FORMAT_COUNT)
        return "an unknown format";
    if (d->type < SALVO_IMAGE_1D || d->type > SALVO_IMAGE_2D_ARRAY)
        return "an unknown image type";
    if (!d->width || !d->height || !d->depth || !d->layers)
        return "an extent or layer count of 0";
    if (d->type == SALVO_IMAGE_1D && d->height != 1)
        return "a 1D image with a height";
    if (d->type != SALVO_IMAGE_3D && d->depth != 1)
        return "depth on an image that is not 3D";
    if (d->type != SALVO_IMAGE_2D_ARRAY && d->layers != 1)
        return "layers on an image that is not a 2D array";
    if (d->usage & ~(uint32_t)(SALVO_IMAGE_STORAGE | SALVO_IMAGE_SAMPLED))
        return "a usage other than STORAGE and SAMPLED";
    if ((d->usage & f->image_format_usage[d->format]) != d->usage)
        return "a usage the format does not offer";
    return NULL;
}

static accel_result f_image_create(void *self, accel_device *dev, const accel_image_desc *desc,
                                   accel_image **out)
{
    fake_accel *f = FAKE(self);
    fake_state *s = f->state;
    pthread_mutex_lock(&s->lock);
    ENTER(s, image_create);
    fake_dev *d = check_dev(s, dev, "image_create");
    if (!d)
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    if (!desc || !out) {
        note_illegal(s, IL_bad_argument, "image_create", "no desc or out");
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    *out = NULL;
    const char *problem = image_desc_problem(f, desc);
    if (problem) {
        note_illegal(s, IL_bad_argument, "image_create", "%s", problem);
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    uint64_t bytes = texel_size(desc->format);
    const uint32_t extents[4] = {desc->width, desc->height, desc->depth, desc->layers};
    for (int i = 0; i < 4; i++) {
        if (bytes > UINT64_MAX / extents[i])
            return unlock_return(s, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
        bytes *= extents[i];
    }
    if (bytes > SIZE_MAX ||
        (f->device_memory_limit && bytes > f->device_memory_limit - s->memory_used))
        return unlock_return(s, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
    fake_image *img = obj_new(s, sizeof *img, FAKE_IMAGE, d);
    if (!img)
        return unlock_return(s, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    img->mem = malloc((size_t)bytes);
    if (!img->mem) {
        obj_unlink(s, &img->h);
        free(img);
        return unlock_return(s, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    }
    /* Undefined until written: not zeros a test could come to rely on. */
    memset(img->mem, 0x5A, (size_t)bytes);
    img->desc = *desc;
    img->texel = texel_size(desc->format);
    img->bytes = bytes;
    s->memory_used += bytes;
    *out = (accel_image *)img;
    return unlock_return(s, ACCEL_SUCCESS);
}

static accel_result f_image_view_create(void *self, accel_device *dev, accel_image *image)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER(s, image_view_create);
    fake_image *img = check(s, image, FAKE_IMAGE, check_dev(s, dev, "image_view_create"),
                            "image_view_create");
    if (!img)
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    /* The accelerator keeps one view an image: a second would leak the first. */
    if (img->has_view) {
        note_illegal(s, IL_bad_argument, "image_view_create", "the image has its view already");
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    img->has_view = true;
    return unlock_return(s, ACCEL_SUCCESS);
}

static void f_image_destroy(void *self, accel_device *dev, accel_image *image)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER_VOID(s, image_destroy);
    fake_dev *d = check_dev(s, dev, "image_destroy");
    fake_image *img = image ? check(s, image, FAKE_IMAGE, d, "image_destroy") : NULL;
    if (img) {
        forget_uses(s, &img->h, true, IL_destroy_in_use, "image_destroy");
        obj_unlink(s, &img->h);
        obj_free(s, &img->h);
    }
    pthread_mutex_unlock(&s->lock);
}

static accel_result f_sampler_create(void *self, accel_device *dev, const accel_sampler_desc *desc,
                                     accel_sampler **out)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER(s, sampler_create);
    fake_dev *d = check_dev(s, dev, "sampler_create");
    if (!d)
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    if (!desc || !out) {
        note_illegal(s, IL_bad_argument, "sampler_create", "no desc or out");
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    *out = NULL;
    for (int i = 0; i < 3; i++)
        if (desc->address[i] > SALVO_ADDRESS_CLAMP_TO_BORDER) {
            note_illegal(s, IL_bad_argument, "sampler_create", "address mode %u",
                         desc->address[i]);
            return unlock_return(s, ACCEL_ERROR_UNKNOWN);
        }
    /* Vulkan: unnormalized coordinates clamp in u and v. */
    for (int i = 0; desc->unnormalized && i < 2; i++)
        if (desc->address[i] != SALVO_ADDRESS_CLAMP_TO_EDGE &&
            desc->address[i] != SALVO_ADDRESS_CLAMP_TO_BORDER) {
            note_illegal(s, IL_bad_argument, "sampler_create",
                         "unnormalized coordinates with address mode %u", desc->address[i]);
            return unlock_return(s, ACCEL_ERROR_UNKNOWN);
        }
    fake_sampler *smp = obj_new(s, sizeof *smp, FAKE_SAMPLER, d);
    if (!smp)
        return unlock_return(s, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    smp->desc = *desc;
    *out = (accel_sampler *)smp;
    return unlock_return(s, ACCEL_SUCCESS);
}

static void f_sampler_destroy(void *self, accel_device *dev, accel_sampler *sampler)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER_VOID(s, sampler_destroy);
    fake_dev *d = check_dev(s, dev, "sampler_destroy");
    fake_sampler *smp = sampler ? check(s, sampler, FAKE_SAMPLER, d, "sampler_destroy") : NULL;
    if (smp) {
        forget_uses(s, &smp->h, true, IL_destroy_in_use, "sampler_destroy");
        obj_unlink(s, &smp->h);
        obj_free(s, &smp->h);
    }
    pthread_mutex_unlock(&s->lock);
}

static accel_result f_cmd_image_init(void *self, accel_device *dev, accel_cmd *cmd,
                                     accel_image *image)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER(s, cmd_image_init);
    fake_dev *d = check_dev(s, dev, "cmd_image_init");
    fake_cmd *c = recording(s, dev, cmd, "cmd_image_init");
    fake_image *img = check(s, image, FAKE_IMAGE, d, "cmd_image_init");
    if (!c || !img)
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    if (c->transfer) {
        note_illegal(s, IL_transfer_queue_work, "cmd_image_init",
                     "images belong to the compute queues' family");
        return unlock_return(s, ACCEL_ERROR_UNKNOWN);
    }
    fake_rec *r = add_rec(c);
    if (!r)
        return unlock_return(s, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    r->kind = REC_IMAGE_INIT;
    r->img = img;
    return unlock_return(s, ACCEL_SUCCESS);
}

/* The region lies inside the image (and is not empty). */
static bool region_inside(const fake_image *img, const accel_image_region *g)
{
    const accel_image_desc *d = &img->desc;
    return g->width && g->height && g->depth && g->layers && g->x <= d->width &&
           g->width <= d->width - g->x && g->y <= d->height && g->height <= d->height - g->y &&
           g->z <= d->depth && g->depth <= d->depth - g->z && g->layer <= d->layers &&
           g->layers <= d->layers - g->layer;
}

static void f_cmd_copy_image(void *self, accel_device *dev, accel_cmd *cmd, accel_buffer *buf,
                             uint64_t offset, accel_image *image, const accel_image_region *region,
                             bool to_image)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER_VOID(s, cmd_copy_image);
    fake_dev *d = check_dev(s, dev, "cmd_copy_image");
    fake_cmd *c = recording(s, dev, cmd, "cmd_copy_image");
    fake_buf *b = check(s, buf, FAKE_BUFFER, d, "cmd_copy_image");
    fake_image *img = check(s, image, FAKE_IMAGE, d, "cmd_copy_image");
    if (c && b && img) {
        /* Inside the image, the bytes are at most the image's: no overflow. */
        uint64_t bytes = region && region_inside(img, region)
                             ? (uint64_t)region->width * region->height * region->depth *
                                   region->layers * img->texel
                             : 0;
        if (!region) {
            note_illegal(s, IL_bad_argument, "cmd_copy_image", "region is NULL");
        } else if (c->transfer) {
            note_illegal(s, IL_transfer_queue_work, "cmd_copy_image",
                         "images belong to the compute queues' family");
        } else if (!bytes || offset > b->size || bytes > b->size - offset) {
            note_illegal(s, IL_copy_out_of_range, "cmd_copy_image",
                         "texels (%u,%u,%u)+(%u,%u,%u), layers %u+%u of a %ux%ux%u image of %u "
                         "layer(s); %llu bytes at %llu of a buffer of %llu",
                         region->x, region->y, region->z, region->width, region->height,
                         region->depth, region->layer, region->layers, img->desc.width,
                         img->desc.height, img->desc.depth, img->desc.layers,
                         (unsigned long long)bytes, (unsigned long long)offset,
                         (unsigned long long)b->size);
        } else if (offset % img->texel) {
            note_illegal(s, IL_bad_argument, "cmd_copy_image",
                         "buffer offset %llu is not a multiple of the texel size %u",
                         (unsigned long long)offset, img->texel);
        } else {
            if (!img->has_view)
                note_illegal(s, IL_image_no_view, "cmd_copy_image", "the image has no view");
            fake_rec *r = add_rec(c);
            if (r) {
                r->kind = REC_IMAGE_COPY;
                r->src = b;
                r->src_offset = offset;
                r->img = img;
                r->region = *region;
                r->to_image = to_image;
                r->size = bytes;
            }
        }
    }
    pthread_mutex_unlock(&s->lock);
}

static void f_cmd_copy_image_to_image(void *self, accel_device *dev, accel_cmd *cmd,
                                      accel_image *src, const accel_image_region *sr,
                                      accel_image *dst, const accel_image_region *dr)
{
    fake_state *s = STATE(self);
    pthread_mutex_lock(&s->lock);
    ENTER_VOID(s, cmd_copy_image_to_image);
    const char *op = "cmd_copy_image_to_image";
    fake_dev *d = check_dev(s, dev, op);
    fake_cmd *c = recording(s, dev, cmd, op);
    fake_image *si = check(s, src, FAKE_IMAGE, d, op);
    fake_image *di = check(s, dst, FAKE_IMAGE, d, op);
    if (c && si && di) {
        bool two_d[2] = {si->desc.type == SALVO_IMAGE_2D || si->desc.type == SALVO_IMAGE_2D_ARRAY,
                         di->desc.type == SALVO_IMAGE_2D || di->desc.type == SALVO_IMAGE_2D_ARRAY};
        if (!sr || !dr) {
            note_illegal(s, IL_bad_argument, op, "a region is NULL");
        } else if (c->transfer) {
            note_illegal(s, IL_transfer_queue_work, op,
                         "images belong to the compute queues' family");
        } else if (!region_inside(si, sr) || !region_inside(di, dr)) {
            note_illegal(s, IL_copy_out_of_range, op, "a region outside its image");
        } else if (sr->width != dr->width || sr->height != dr->height || sr->depth != dr->depth ||
                   sr->layers != dr->layers || si->texel != di->texel ||
                   (si->desc.type != di->desc.type && !(two_d[0] && two_d[1]))) {
            note_illegal(s, IL_bad_argument, op,
                         "extents, texel sizes or image types differ");
        } else if (si == di && sr->x < dr->x + dr->width && dr->x < sr->x + sr->width &&
                   sr->y < dr->y + dr->height && dr->y < sr->y + sr->height &&
                   sr->z < dr->z + dr->depth && dr->z < sr->z + sr->depth &&
                   sr->layer < dr->layer + dr->layers && dr->layer < sr->layer + sr->layers) {
            note_illegal(s, IL_bad_argument, op, "regions of one image overlap");
        } else {
            if (!si->has_view || !di->has_view)
                note_illegal(s, IL_image_no_view, op, "an image has no view");
            fake_rec *r = add_rec(c);
            if (r) {
                r->kind = REC_IMAGE_TO_IMAGE;
                r->img = si;
                r->region = *sr;
                r->img2 = di;
                r->region2 = *dr;
                r->size = (uint64_t)sr->width * sr->height * sr->depth * sr->layers * si->texel;
            }
        }
    }
    pthread_mutex_unlock(&s->lock);
}

/* Every operation but the image ones. */
#define FAKE_VTABLE_COMMON                                                                     \
    .name = "fake",                                                                            \
    .enumerate = f_enumerate,                                                                  \
    .device_open = f_device_open,                                                              \
    .device_close = f_device_close,                                                            \
    .queue_wait_idle = f_queue_wait_idle,                                                      \
    .buffer_create = f_buffer_create,                                                          \
    .buffer_destroy = f_buffer_destroy,                                                        \
    .pipeline_create = f_pipeline_create,                                                      \
    .pipeline_destroy = f_pipeline_destroy,                                                    \
    .descpool_create = f_descpool_create,                                                      \
    .descpool_reset = f_descpool_reset,                                                        \
    .descpool_destroy = f_descpool_destroy,                                                    \
    .cmd_create = f_cmd_create,                                                                \
    .cmd_destroy = f_cmd_destroy,                                                              \
    .cmd_begin = f_cmd_begin,                                                                  \
    .cmd_end = f_cmd_end,                                                                      \
    .cmd_reset = f_cmd_reset,                                                                  \
    .cmd_dispatch = f_cmd_dispatch,                                                            \
    .cmd_barrier = f_cmd_barrier,                                                              \
    .cmd_copy = f_cmd_copy,                                                                    \
    .cmd_fill = f_cmd_fill,                                                                    \
    .cmd_native = f_cmd_native,                                                                \
    .cmd_create_reusable = f_cmd_create_reusable,                                              \
    .cmd_begin_reusable = f_cmd_begin_reusable,                                                \
    .cmd_begin_resubmit = f_cmd_begin_resubmit,                                                \
    .cmd_execute = f_cmd_execute,                                                              \
    .fence_create = f_fence_create,                                                            \
    .fence_destroy = f_fence_destroy,                                                          \
    .fence_reset = f_fence_reset,                                                              \
    .fence_status = f_fence_status,                                                            \
    .fence_wait = f_fence_wait,                                                                \
    .submit = f_submit,                                                                        \
    .timeline_create = f_timeline_create,                                                      \
    .timeline_destroy = f_timeline_destroy,                                                    \
    .timeline_signal = f_timeline_signal,                                                      \
    .timeline_value = f_timeline_value,                                                        \
    .timeline_wait = f_timeline_wait,                                                          \
    .destroy = f_destroy,                                                                      \
    .querypool_create = f_querypool_create,                                                    \
    .querypool_destroy = f_querypool_destroy,                                                  \
    .cmd_querypool_reset = f_cmd_querypool_reset,                                              \
    .cmd_timestamp = f_cmd_timestamp,                                                          \
    .querypool_results = f_querypool_results,                                                  \
    .querypool_host_reset = f_querypool_host_reset,                                            \
    .cmd_dispatch_indirect = f_cmd_dispatch_indirect,                                          \
    .cmd_fill_bytes = f_cmd_fill_bytes

static const accel_vtable fake_vtable = {
    FAKE_VTABLE_COMMON,
    .memory_info = f_memory_info,
    .image_format_support = f_image_format_support,
    .image_create = f_image_create,
    .image_view_create = f_image_view_create,
    .image_destroy = f_image_destroy,
    .sampler_create = f_sampler_create,
    .sampler_destroy = f_sampler_destroy,
    .cmd_image_init = f_cmd_image_init,
    .cmd_copy_image = f_cmd_copy_image,
    .cmd_copy_image_to_image = f_cmd_copy_image_to_image,
};

/* For fake_accel.no_images: an accelerator without images. */
static const accel_vtable fake_vtable_no_images = {
    FAKE_VTABLE_COMMON,
    .memory_info = f_memory_info,
};

/* ------------------------------------------------------------------ */
/* The test-facing side                                                */
/* ------------------------------------------------------------------ */

fake_accel *fake_create(void)
{
    fake_accel *f = calloc(1, sizeof *f);
    fake_state *s = calloc(1, sizeof *s);
    pthread_condattr_t ca;
    bool cv = false;
    if (f && s && pthread_condattr_init(&ca) == 0) {
        cv = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
             pthread_cond_init(&s->progressed, &ca) == 0;
        pthread_condattr_destroy(&ca);
    }
    if (!f || !s || !cv || pthread_mutex_init(&s->lock, NULL) != 0) {
        if (cv)
            pthread_cond_destroy(&s->progressed);
        free(f);
        free(s);
        return NULL;
    }
    s->opened_index = -1;
    s->owner = f;
    f->state = s;
    f->device_count = 1;
    for (int i = 0; i < FAKE_MAX_DEVICES; i++)
        f->device_types[i] = SALVO_DEVICE_TYPE_OTHER;
    f->timeline_semaphores = true;
    f->queue_count = 1;
    f->host_import = true;
    f->timestamps = true;
    f->complete = FAKE_COMPLETE_AUTO;
    /* Every feature, so that only a test that turns one off sees a refusal. */
    f->features = (salvo_device_features){
        .checked = true,
        .shader_float64 = true,
        .shader_int64 = true,
        .shader_int16 = true,
        .shader_int8 = true,
        .shader_float16 = true,
        .storage_buffer_8bit = true,
        .uniform_buffer_8bit = true,
        .push_constant_8bit = true,
        .storage_buffer_16bit = true,
        .uniform_buffer_16bit = true,
        .push_constant_16bit = true,
        .vulkan_memory_model = true,
        .vulkan_memory_model_device_scope = true,
        .buffer_device_address = true,
        .variable_pointers_storage_buffer = true,
        .variable_pointers = true,
        .buffer_int64_atomics = true,
        .shared_int64_atomics = true,
        .buffer_float32_atomic_add = true,
        .buffer_float64_atomic_add = true,
        .integer_dot_product = true,
        .non_semantic_info = true,
        .maintenance4 = true,
        .zero_initialize_workgroup_memory = true,
        .subgroup_size_control = true,
        .compute_full_subgroups = true,
        .storage_image_extended_formats = true,
        .storage_image_read_without_format = true,
        .storage_image_write_without_format = true,
        .sampled_image_array_dynamic_indexing = true,
        .storage_image_array_dynamic_indexing = true,
        .image_float32_atomics = true,
        .image_float32_atomic_add = true,
        .subgroup_operations = 0xffu,
    };
    f->max_workgroup_memory = 32768;
    for (int i = SALVO_FORMAT_UNDEFINED + 1; i < SALVO_FORMAT_COUNT; i++)
        f->image_format_usage[i] =
            SALVO_IMAGE_STORAGE | SALVO_IMAGE_SAMPLED | SALVO_IMAGE_LINEAR_FILTER;
    return f;
}

accel fake_accel_get(fake_accel *f)
{
    return (accel){f->no_images ? &fake_vtable_no_images : &fake_vtable, f};
}

void fake_free(fake_accel *f)
{
    if (!f)
        return;
    fake_state *s = f->state;
    while (s->head)
        sub_free(pop_head(s));
    while (s->objs) {
        fake_obj *o = s->objs;
        obj_unlink(s, o);
        obj_free(s, o);
    }
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->progressed);
    free(s);
    free(f);
}

bool fake_destroyed(fake_accel *f)
{
    fake_state *s = f->state;
    pthread_mutex_lock(&s->lock);
    bool v = s->destroyed;
    pthread_mutex_unlock(&s->lock);
    return v;
}

static uint64_t read_u64(fake_accel *f, const uint64_t *p)
{
    pthread_mutex_lock(&f->state->lock);
    uint64_t v = *p;
    pthread_mutex_unlock(&f->state->lock);
    return v;
}

uint64_t fake_live(fake_accel *f, fake_kind kind)
{
    if ((unsigned)kind >= FAKE_KIND_COUNT) {
        fprintf(stderr, "fake_accel: unknown handle kind %d\n", (int)kind);
        abort();
    }
    return read_u64(f, &f->state->live[kind]);
}

uint64_t fake_live_total(fake_accel *f)
{
    uint64_t n = 0;
    for (int k = 0; k < FAKE_KIND_COUNT; k++)
        n += fake_live(f, (fake_kind)k);
    return n;
}

uint64_t fake_calls(fake_accel *f, const char *op)
{
    return read_u64(f, &f->state->calls[op_by_name(op)]);
}

uint64_t fake_barriers(fake_accel *f, accel_barrier kind)
{
    return read_u64(f, &f->state->barriers[kind]);
}

uint64_t fake_calls_total(fake_accel *f)
{
    uint64_t n = 0;
    for (int i = 0; i < OP_COUNT; i++)
        n += read_u64(f, &f->state->calls[i]);
    return n;
}

uint64_t fake_illegal(fake_accel *f, const char *what)
{
    return read_u64(f, &f->state->illegal[illegal_by_name(what)]);
}

uint64_t fake_illegal_total(fake_accel *f)
{
    uint64_t n = 0;
    for (int i = 0; i < IL_COUNT; i++)
        n += read_u64(f, &f->state->illegal[i]);
    return n;
}

const char *fake_illegal_last(fake_accel *f)
{
    return f->state->illegal_last;
}

void fake_set_result(fake_accel *f, const char *op, int nth, accel_result r)
{
    op_id id = op_by_name(op);
    if (!op_table[id].fallible || nth < 0) {
        fprintf(stderr, "fake_accel: cannot script call %d of '%s'\n", nth, op);
        abort();
    }
    fake_state *s = f->state;
    pthread_mutex_lock(&s->lock);
    if (s->script_count == MAX_SCRIPTS) {
        fprintf(stderr, "fake_accel: more than %d scripted results\n", MAX_SCRIPTS);
        abort();
    }
    s->scripts[s->script_count++] = (fake_script){
        .op = id,
        .always = nth == 0,
        .base = s->calls[id],
        .target = s->calls[id] + (uint64_t)nth,
        .result = r,
    };
    pthread_mutex_unlock(&s->lock);
}

void fake_set_result_from(fake_accel *f, const char *op, int nth, accel_result r)
{
    op_id id = op_by_name(op);
    if (!op_table[id].fallible || nth < 1) {
        fprintf(stderr, "fake_accel: cannot script calls %d on of '%s'\n", nth, op);
        abort();
    }
    fake_state *s = f->state;
    pthread_mutex_lock(&s->lock);
    if (s->script_count == MAX_SCRIPTS) {
        fprintf(stderr, "fake_accel: more than %d scripted results\n", MAX_SCRIPTS);
        abort();
    }
    /* An "always" script fires on every call past base. */
    s->scripts[s->script_count++] = (fake_script){
        .op = id,
        .always = true,
        .base = s->calls[id] + (uint64_t)nth - 1,
        .target = 0,
        .result = r,
    };
    pthread_mutex_unlock(&s->lock);
}

uint64_t fake_module_hash(const uint32_t *spirv, size_t size)
{
    const unsigned char *p = (const unsigned char *)spirv;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; p && i < size; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

bool fake_record_fill(fake_accel *f, void *native_cmd, uint64_t device_address, uint64_t offset,
                      uint64_t size, uint32_t value)
{
    fake_state *s = f->state;
    pthread_mutex_lock(&s->lock);
    fake_cmd *c = native_cmd ? check(s, native_cmd, FAKE_CMD, NULL, "record_fill") : NULL;
    fake_buf *b = NULL;
    for (fake_obj *o = s->objs; o && !b && device_address; o = o->next)
        if (o->kind == FAKE_BUFFER && (uint64_t)(uintptr_t)((fake_buf *)o)->mem == device_address)
            b = (fake_buf *)o;
    bool ok = c && b && c->state == FAKE_CMD_RECORDING && !c->transfer && size && size % 4 == 0 &&
              offset % 4 == 0 && offset <= b->size && size <= b->size - offset;
    fake_rec *r = ok ? add_rec(c) : NULL;
    if (r) {
        r->kind = REC_FILL;
        r->dst = b;
        r->dst_offset = offset;
        r->size = size;
        r->fill_value = value;
    }
    pthread_mutex_unlock(&s->lock);
    return r != NULL;
}

void fake_clear_results(fake_accel *f)
{
    pthread_mutex_lock(&f->state->lock);
    f->state->script_count = 0;
    pthread_mutex_unlock(&f->state->lock);
}

bool fake_complete_next(fake_accel *f)
{
    pthread_mutex_lock(&f->state->lock);
    bool v = complete_next_locked(f->state);
    pthread_mutex_unlock(&f->state->lock);
    return v;
}

bool fake_complete_on(fake_accel *f, uint32_t queue)
{
    pthread_mutex_lock(&f->state->lock);
    bool v = complete_on_locked(f->state, queue);
    pthread_mutex_unlock(&f->state->lock);
    return v;
}

uint32_t fake_complete_all(fake_accel *f)
{
    pthread_mutex_lock(&f->state->lock);
    uint32_t v = complete_all_locked(f->state);
    pthread_mutex_unlock(&f->state->lock);
    return v;
}

void fake_set_complete(fake_accel *f, fake_complete_mode mode)
{
    pthread_mutex_lock(&f->state->lock);
    f->complete = mode;
    pthread_mutex_unlock(&f->state->lock);
}

uint32_t fake_pending(fake_accel *f)
{
    pthread_mutex_lock(&f->state->lock);
    uint32_t v = f->state->pending;
    pthread_mutex_unlock(&f->state->lock);
    return v;
}

void fake_lose_device(fake_accel *f)
{
    pthread_mutex_lock(&f->state->lock);
    lose(f->state);
    pthread_mutex_unlock(&f->state->lock);
}

bool fake_is_lost(fake_accel *f)
{
    pthread_mutex_lock(&f->state->lock);
    bool v = f->state->lost;
    pthread_mutex_unlock(&f->state->lock);
    return v;
}

uint64_t fake_dispatches_recorded(fake_accel *f)
{
    return read_u64(f, &f->state->dispatches_recorded);
}

uint64_t fake_dispatches_completed(fake_accel *f)
{
    return read_u64(f, &f->state->dispatches_completed);
}

uint64_t fake_copy_bytes(fake_accel *f)
{
    return read_u64(f, &f->state->copy_bytes);
}

uint64_t fake_image_inits(fake_accel *f)
{
    return read_u64(f, &f->state->image_inits);
}

uint64_t fake_queue_submits(fake_accel *f, uint32_t queue)
{
    return queue <= ACCEL_MAX_QUEUES ? read_u64(f, &f->state->queue_submits[queue]) : 0;
}

int fake_opened_index(fake_accel *f)
{
    pthread_mutex_lock(&f->state->lock);
    int v = f->state->opened_index;
    pthread_mutex_unlock(&f->state->lock);
    return v;
}

/* A handle the test passes must be live: a stale one is the test's bug. */
static const fake_obj *inspect(const void *h, fake_kind kind)
{
    const fake_obj *o = h;
    if (!o || o->magic != FAKE_MAGIC || o->kind != kind) {
        fprintf(stderr, "fake_accel: inspecting something that is not a live handle\n");
        abort();
    }
    return o;
}

fake_cmd_state fake_cmd_state_of(fake_accel *f, const accel_cmd *cmd)
{
    pthread_mutex_lock(&f->state->lock);
    fake_cmd_state v = ((const fake_cmd *)inspect(cmd, FAKE_CMD))->state;
    pthread_mutex_unlock(&f->state->lock);
    return v;
}

uint32_t fake_cmd_pending_uses(fake_accel *f, const accel_cmd *cmd)
{
    pthread_mutex_lock(&f->state->lock);
    const fake_cmd *c = (const fake_cmd *)inspect(cmd, FAKE_CMD);
    uint32_t v = c->reusable ? c->pending_uses : 0;
    pthread_mutex_unlock(&f->state->lock);
    return v;
}

bool fake_fence_signalled(fake_accel *f, const accel_fence *fence)
{
    pthread_mutex_lock(&f->state->lock);
    bool v = ((const fake_fence *)inspect(fence, FAKE_FENCE))->signalled;
    pthread_mutex_unlock(&f->state->lock);
    return v;
}

uint32_t fake_pool_sets_used(fake_accel *f, const accel_descpool *pool)
{
    pthread_mutex_lock(&f->state->lock);
    uint32_t v = ((const fake_pool *)inspect(pool, FAKE_DESCPOOL))->sets_used;
    pthread_mutex_unlock(&f->state->lock);
    return v;
}
