/* Staged transfers: host memory to and from a buffer the host cannot
 * map, through a staging buffer and the device's copy, or, for large
 * ones, through the caller's own pages imported for the call. */
#include "core/transfer.h"

#include <string.h>

#include "core/scheduler.h"
#include "core/wait.h"

#define VT(q) ((q)->acc->vt)
#define SELF(q) ((q)->acc->self)

/* A wait before a transfer of a buffer or an image (object) ran out of
 * time: nothing was copied. */
static salvo_status not_done(queue *q, const char *object, const char *what, bool to_host)
{
    return QUEUE_FAIL(q, SALVO_ERROR_TIMEOUT,
                      "%s_%s: %s did not complete within the fence timeout; nothing was %s",
                      object, to_host ? "read" : "write", what, to_host ? "read" : "written");
}

/* The queue staged copies go to: the copy engine's where there is one. */
static uint32_t staging_queue(const queue *q)
{
    return q->copy_queue != NO_COPY_QUEUE ? q->copy_queue : 0;
}

static salvo_status staging_locked(queue *q) SALVO_REQUIRES(q->lock)
{
    if (q->staging)
        return SALVO_OK;
    accel_buffer_desc d = {.size = STAGING_BYTES, .domain = SALVO_DOMAIN_HOST, .transfer = true};
    accel_result r = sched_buffer_create_locked(q, &d, &q->staging, &q->staging_info);
    if (r == ACCEL_SUCCESS)
        r = VT(q)->cmd_create(SELF(q), q->adev, staging_queue(q), &q->xfer_cmd);
    if (r == ACCEL_SUCCESS)
        r = VT(q)->fence_create(SELF(q), q->adev, &q->xfer_fence);
    if (r != ACCEL_SUCCESS || !q->staging_info.mapped) {
        VT(q)->buffer_destroy(SELF(q), q->adev, q->staging);
        VT(q)->cmd_destroy(SELF(q), q->adev, q->xfer_cmd);
        VT(q)->fence_destroy(SELF(q), q->adev, q->xfer_fence);
        q->staging = NULL;
        q->xfer_cmd = NULL;
        q->xfer_fence = NULL;
        return QUEUE_FAIL(q, r ? salvo_status_from_accel(r) : SALVO_ERROR_UNKNOWN,
                        "transfer: cannot create the staging buffer (%s)", accel_result_name(r));
    }
    return SALVO_OK;
}

/* What one synchronous transfer records between its barriers. */
typedef accel_result (*record_fn)(queue *q, accel_cmd *cmd, const void *what);

typedef struct copy_args {
    accel_buffer *src, *dst;
    uint64_t so, dof, size;
} copy_args;

static accel_result record_copy(queue *q, accel_cmd *cmd, const void *what)
{
    const copy_args *a = what;
    VT(q)->cmd_copy(SELF(q), q->adev, cmd, a->src, a->so, a->dst, a->dof, a->size);
    return ACCEL_SUCCESS;
}

/* Record (after a barrier over earlier work when after_earlier: not for a
 * new image's first layout, which no earlier work touches and which must
 * not wait for it; before one for the host when to_host) into cmd, submit
 * it to queue qi with fence and wait for it:
 * a transfer is synchronous. On failure cmd is reset, or, where even that
 * keeps failing, the objects of *cmd and *fence are destroyed (and with
 * them the staging buffer when dropping says so), so the next transfer
 * makes new ones. */
static salvo_status run_locked(queue *q, uint32_t qi, accel_cmd **cmd, accel_fence **fence,
                               bool drop_staging, bool after_earlier, record_fn record,
                               const void *what, bool to_host, uint64_t bytes)
    SALVO_REQUIRES(q->lock)
{
    const accel_vtable *vt = VT(q);
    void *self = SELF(q);
    accel_result r = vt->cmd_begin(self, q->adev, *cmd);
    if (r == ACCEL_SUCCESS) {
        if (after_earlier)
            vt->cmd_barrier(self, q->adev, *cmd, ACCEL_BARRIER_COMPUTE_TRANSFER);
        r = record(q, *cmd, what);
        if (to_host)
            vt->cmd_barrier(self, q->adev, *cmd, ACCEL_BARRIER_ALL_HOST);
        accel_result end = vt->cmd_end(self, q->adev, *cmd);
        if (r == ACCEL_SUCCESS)
            r = end;
    }
    if (r == ACCEL_SUCCESS)
        r = vt->fence_reset(self, q->adev, *fence);
    if (r == ACCEL_SUCCESS) {
        accel_submit_desc d = {.queue = qi, .cmd = *cmd, .fence = *fence};
        r = vt->submit(self, q->adev, &d);
        if (r == ACCEL_SUCCESS) {
            /* The lock is never held across a fence wait (the thread that
             * raises a gate may need it); the transfer objects stay this
             * call's (xfer_busy). No gate holds the work ahead of the copy
             * (transfer() saw to that), so the wait has no bound: once
             * accepted, the copy is waited for to the end (a copy left
             * running would race with whatever the program does next with
             * the buffer). */
            wait_spec w = {.fence = *fence, .deadline_ns = UINT64_MAX};
            r = wait_locked(q, &w);
            for (int attempt = 1; attempt < RECOVERY_ATTEMPTS && r != ACCEL_SUCCESS &&
                                  r != ACCEL_ERROR_DEVICE_LOST;
                 attempt++)
                r = wait_locked(q, &w);
            /* The copy was accepted: whatever the wait said, it must be over
             * before the transfer objects are touched again. */
            if (r != ACCEL_SUCCESS && r != ACCEL_ERROR_DEVICE_LOST)
                r = queue_wait_idle_locked(q) == ACCEL_SUCCESS ? ACCEL_SUCCESS
                                                                  : ACCEL_ERROR_DEVICE_LOST;
        }
    }
    if (r == ACCEL_SUCCESS)
        return SALVO_OK;
    /* The next transfer begins on this command buffer: back to the initial
     * state. A reset the driver keeps refusing (out of memory) is given up
     * after a few tries, and the transfer objects with it: the next
     * transfer makes new ones (nothing runs on them now: the copy was
     * refused, waited for, or lost with the device). */
    accel_result reset = ACCEL_ERROR_OUT_OF_HOST_MEMORY;
    for (int attempt = 0; attempt < RECOVERY_ATTEMPTS && reset != ACCEL_SUCCESS &&
                          reset != ACCEL_ERROR_DEVICE_LOST;
         attempt++)
        reset = vt->cmd_reset(self, q->adev, *cmd);
    if (reset != ACCEL_SUCCESS) {
        if (drop_staging) {
            vt->buffer_destroy(self, q->adev, q->staging);
            q->staging = NULL;
        }
        vt->cmd_destroy(self, q->adev, *cmd);
        vt->fence_destroy(self, q->adev, *fence);
        *cmd = NULL;
        *fence = NULL;
    }
    if (r == ACCEL_ERROR_DEVICE_LOST)
        queue_mark_lost_locked(q);
    return QUEUE_FAIL(q, salvo_status_from_accel(r), "transfer of %llu bytes failed (%s)",
                    (unsigned long long)bytes, accel_result_name(r));
}

/* memcpy between the caller's memory and the staging buffer, the device
 * lock let go meanwhile: the transfer objects are this call's (xfer_busy),
 * and no other thread waits behind the lock for a copy of the program's
 * bytes. */
static void host_copy_locked(queue *q, void *dst, const void *src, uint64_t n)
    SALVO_REQUIRES(q->lock)
{
    salvo_mutex_unlock(&q->lock);
    memcpy(dst, src, n);
    salvo_mutex_lock(&q->lock);
}

/* One staged copy through the device's transfer command buffer, waited for
 * before returning (the transfer is synchronous). */
static salvo_status staged_copy_locked(queue *q, accel_buffer *src, uint64_t so,
                                       accel_buffer *dst, uint64_t dof, uint64_t size, bool to_host)
    SALVO_REQUIRES(q->lock)
{
    copy_args a = {src, dst, so, dof, size};
    return run_locked(q, q->xfer_queue, &q->xfer_cmd, &q->xfer_fence, true, true, record_copy, &a,
                      to_host, size);
}

/* host[0, size) <-> buf[offset, +size) through the staging buffer, a
 * chunk at a time. */
static salvo_status staged_locked(queue *q, accel_buffer *ab, uint64_t offset, char *host,
                                  uint64_t size, bool to_host) SALVO_REQUIRES(q->lock)
{
    salvo_status r = SALVO_OK;
    for (uint64_t done = 0; r == SALVO_OK && done < size;) {
        uint64_t n = size - done < STAGING_BYTES ? size - done : STAGING_BYTES;
        char *stage = q->staging_info.mapped;
        if (to_host) {
            r = staged_copy_locked(q, ab, offset + done, q->staging, 0, n, true);
            if (r == SALVO_OK)
                host_copy_locked(q, host + done, stage, n);
        } else {
            host_copy_locked(q, stage, host + done, n);
            r = staged_copy_locked(q, q->staging, 0, ab, offset + done, n, false);
        }
        done += n;
    }
    return r;
}

/* The caller's own pages for the page-aligned middle [*begin, *end) of
 * host[0, size), imported for one transfer; NULL when the transfer is
 * small, the device cannot import, or the import is refused (the caller
 * then stages everything: nothing is reported). */
static accel_buffer *import_middle_locked(queue *q, char *host, uint64_t size,
                                          uint64_t *begin, uint64_t *end) SALVO_REQUIRES(q->lock)
{
    uint64_t align = q->host_import_alignment;
    if (!q->transfer_import || !q->host_import || !align || size < IMPORT_MIN_BYTES)
        return NULL;
    uintptr_t p = (uintptr_t)host;
    uint64_t b = (align - p % align) % align;
    uint64_t e = b + (size - b) / align * align;
    if (e - b < IMPORT_MIN_BYTES / 2)
        return NULL;
    accel_buffer_desc d = {.size = e - b, .domain = SALVO_DOMAIN_HOST, .import_host = host + b,
                           .transfer = true};
    accel_buffer *ab = NULL;
    accel_buffer_info info = {0};
    if (VT(q)->buffer_create(SELF(q), q->adev, &d, &ab, &info) != ACCEL_SUCCESS)
        return NULL;
    /* The device writes what the host then reads without a flush. */
    if (!info.host_coherent) {
        VT(q)->buffer_destroy(SELF(q), q->adev, ab);
        return NULL;
    }
    *begin = b;
    *end = e;
    return ab;
}

salvo_status transfer_staged_locked(queue *q, accel_buffer *ab, uint64_t offset, char *host,
                                    uint64_t size, bool to_host, uint64_t *imported)
{
    *imported = 0;
    /* The transfer objects are this call's until it returns; another
     * transfer waits its turn (the lock is dropped while it waits). */
    while (q->xfer_busy)
        salvo_cond_wait(&q->slot_cv, &q->lock);
    q->xfer_busy = true;
    /* On one queue a copy starts only after every batch submitted before
     * it, so one behind a batch that waits on a gate not raised yet would
     * wait for the host to raise it. Wait for that here, before anything
     * is copied, under the fence timeout; the copies then run to the end.
     * The copy queue runs no gated work. */
    salvo_status r = SALVO_OK;
    q->xfer_queue = staging_queue(q);
    if (q->copy_queue == NO_COPY_QUEUE) {
        /* A compute queue no gate holds, or else wait until none does. */
        q->xfer_queue = queue_unblocked_compute_locked(q);
        if (q->xfer_queue == UINT32_MAX) {
            q->xfer_queue = 0;
            r = queue_wait_ungated_locked(q);
        }
    }
    if (r == SALVO_TIMEOUT)
        r = not_done(q, "buffer", "work ahead of it, held by a gate,", to_host);
    if (r == SALVO_OK)
        r = staging_locked(q);
    uint64_t b = 0, e = 0;
    accel_buffer *middle = r == SALVO_OK ? import_middle_locked(q, host, size, &b, &e) : NULL;
    if (middle) {
        /* The ends through staging, the middle by the device alone: no
         * host copy. Each copy is waited for, so the import can go at once
         * whatever happened. */
        r = staged_locked(q, ab, offset, host, b, to_host);
        if (r == SALVO_OK)
            r = to_host ? staged_copy_locked(q, ab, offset + b, middle, 0, e - b, true)
                        : staged_copy_locked(q, middle, 0, ab, offset + b, e - b, false);
        VT(q)->buffer_destroy(SELF(q), q->adev, middle);
        if (r == SALVO_OK) {
            *imported = e - b;
            r = staged_locked(q, ab, offset + e, host + e, size - e, to_host);
        }
    } else if (r == SALVO_OK) {
        r = staged_locked(q, ab, offset, host, size, to_host);
    }
    q->xfer_busy = false;
    pthread_cond_broadcast(&q->slot_cv);
    return r;
}

salvo_status transfer_settle_locked(queue *q, const accel_buffer *ab, uint64_t last_serial,
                                    bool to_host, bool image)
{
    if (queue_is_lost(q))
        return queue_lost_error(q);
    if (last_serial == 0)
        return SALVO_OK;
    salvo_status r = sched_quiesce_for_locked(q, last_serial, ab);
    if (r != SALVO_TIMEOUT)
        return r;
    return image ? not_done(q, "image", "the work that uses the image", to_host)
                 : not_done(q, "buffer", "the work that uses the buffer", to_host);
}

/* ------------------------------------------------------------------ */
/* Images: on the streams' first queue (images are not shared with a   */
/* copy engine's family), through the staging buffer                   */
/* ------------------------------------------------------------------ */

typedef struct image_args {
    accel_buffer *buf;
    uint64_t offset;
    accel_image *img;
    accel_image_region region;
    bool to_image;
    bool init; /* bring a new image into use instead of copying */
} image_args;

static accel_result record_image(queue *q, accel_cmd *cmd, const void *what)
{
    const image_args *a = what;
    if (a->init)
        return VT(q)->cmd_image_init(SELF(q), q->adev, cmd, a->img);
    VT(q)->cmd_copy_image(SELF(q), q->adev, cmd, a->buf, a->offset, a->img, &a->region,
                          a->to_image);
    return ACCEL_SUCCESS;
}

static salvo_status image_objects_locked(queue *q) SALVO_REQUIRES(q->lock)
{
    if (q->image_cmd)
        return SALVO_OK;
    accel_result r = VT(q)->cmd_create(SELF(q), q->adev, 0, &q->image_cmd);
    if (r == ACCEL_SUCCESS)
        r = VT(q)->fence_create(SELF(q), q->adev, &q->image_fence);
    if (r == ACCEL_SUCCESS)
        return SALVO_OK;
    VT(q)->cmd_destroy(SELF(q), q->adev, q->image_cmd);
    q->image_cmd = NULL;
    if (r == ACCEL_ERROR_DEVICE_LOST)
        queue_mark_lost_locked(q);
    return QUEUE_FAIL(q, salvo_status_from_accel(r),
                      "image transfer: cannot create its command buffer or fence (%s)",
                      accel_result_name(r));
}

salvo_status transfer_image_locked(queue *q, accel_image *img, const accel_image_region *region,
                                   uint32_t texel, char *host, bool to_host, bool init)
{
    if (queue_is_lost(q))
        return queue_lost_error(q);
    while (q->xfer_busy)
        salvo_cond_wait(&q->slot_cv, &q->lock);
    q->xfer_busy = true;
    /* On a compute queue no gate holds (the caller has settled the work
     * that uses the image); where every one has such work, wait until
     * none does (see transfer_staged_locked). */
    salvo_status r = SALVO_OK;
    uint32_t qi = queue_unblocked_compute_locked(q);
    if (qi == UINT32_MAX) {
        qi = 0;
        r = queue_wait_ungated_locked(q);
    }
    if (r == SALVO_TIMEOUT)
        r = QUEUE_FAIL(q, SALVO_ERROR_TIMEOUT,
                       "image transfer: work ahead of it, held by a gate, did not complete "
                       "within the fence timeout; nothing was copied");
    if (r == SALVO_OK && !init)
        r = staging_locked(q);
    if (r == SALVO_OK)
        r = image_objects_locked(q);
    if (r == SALVO_OK && init) {
        image_args a = {.img = img, .init = true};
        r = run_locked(q, qi, &q->image_cmd, &q->image_fence, false, false, record_image, &a, false,
                       0);
    }
    /* Rows of one slice of one layer at a time, as many as the staging
     * buffer holds. */
    uint64_t row = (uint64_t)region->width * texel;
    uint32_t rows_per = row ? (uint32_t)(STAGING_BYTES / row) : 0;
    if (r == SALVO_OK && !init && rows_per == 0)
        r = QUEUE_FAIL(q, SALVO_ERROR_UNSUPPORTED, "image transfer: a row of %llu bytes is larger "
                       "than the staging buffer", (unsigned long long)row);
    char *stage = q->staging_info.mapped;
    for (uint32_t l = 0; r == SALVO_OK && !init && l < region->layers; l++)
        for (uint32_t z = 0; r == SALVO_OK && z < region->depth; z++)
            for (uint32_t y = 0; r == SALVO_OK && y < region->height; y += rows_per) {
                uint32_t n = region->height - y < rows_per ? region->height - y : rows_per;
                image_args a = {
                    .buf = q->staging,
                    .img = img,
                    .region = {region->x, region->y + y, region->z + z, region->width, n, 1,
                               region->layer + l, 1},
                    .to_image = !to_host,
                };
                char *at = host + (((uint64_t)l * region->depth + z) * region->height + y) * row;
                if (!to_host)
                    host_copy_locked(q, stage, at, n * row);
                r = run_locked(q, qi, &q->image_cmd, &q->image_fence, false, true, record_image, &a,
                               to_host, n * row);
                if (r == SALVO_OK && to_host)
                    host_copy_locked(q, at, stage, n * row);
            }
    q->xfer_busy = false;
    pthread_cond_broadcast(&q->slot_cv);
    return r;
}

void transfer_free_locked(queue *q)
{
    const accel_vtable *vt = q->acc->vt;
    vt->fence_destroy(q->acc->self, q->adev, q->image_fence);
    vt->cmd_destroy(q->acc->self, q->adev, q->image_cmd);
    q->image_fence = NULL;
    q->image_cmd = NULL;
    vt->buffer_destroy(q->acc->self, q->adev, q->staging);
    vt->fence_destroy(q->acc->self, q->adev, q->xfer_fence);
    vt->cmd_destroy(q->acc->self, q->adev, q->xfer_cmd);
    q->staging = NULL;
    q->xfer_fence = NULL;
    q->xfer_cmd = NULL;
}
