/*
 * Staged transfers between host memory and a buffer the host cannot map
 * (or will not, under SALVO_DEVICE_FORCE_STAGING): a staging buffer of
 * STAGING_BYTES, one command buffer and one fence of the queue's, used by
 * one transfer at a time. From IMPORT_MIN_BYTES on, where the device can
 * import host memory, the page-aligned middle of the caller's memory is
 * imported for the call and copied by the device directly.
 *
 * A transfer waits for gated work ahead of it (under the fence timeout,
 * SALVO_ERROR_TIMEOUT with nothing copied when it expires), then for each
 * of its copies to the end (a copy left running would race with what the
 * program does next with the buffer). It never holds the queue's lock
 * across a wait or a copy of the program's bytes (core/wait.h; the
 * transfer objects stay its own through xfer_busy).
 */
#ifndef SALVO_CORE_TRANSFER_H
#define SALVO_CORE_TRANSFER_H

#include "core/queue.h"

/* Every batch up to last_serial (the last that used the buffer, or the
 * image: ab is then its accel_image) complete, before the host touches
 * it: SALVO_OK, DEVICE_LOST, or SALVO_ERROR_TIMEOUT (nothing done) when
 * the wait expired, its message naming the call (image_read, ...). */
salvo_status transfer_settle_locked(queue *q, const accel_buffer *ab, uint64_t last_serial,
                                    bool to_host, bool image) SALVO_REQUIRES(q->lock);
/* host[0, size) -> ab[offset, +size) (to_host false) or back, through the
 * device; *imported: the bytes the device copied from or to the caller's
 * own pages. */
salvo_status transfer_staged_locked(queue *q, accel_buffer *ab, uint64_t offset, char *host,
                                    uint64_t size, bool to_host, uint64_t *imported)
    SALVO_REQUIRES(q->lock);
/* Bring a new image into use (init), or copy region of img (texel bytes
 * a texel) to or from host, packed as the public region says; through the
 * staging buffer on the streams' first queue, waited for. The caller has
 * settled the work that uses the image. */
salvo_status transfer_image_locked(queue *q, accel_image *img, const accel_image_region *region,
                                   uint32_t texel, char *host, bool to_host, bool init)
    SALVO_REQUIRES(q->lock);
/* Free the staging buffer and the transfer command buffers and fences. */
void transfer_free_locked(queue *q) SALVO_REQUIRES(q->lock);

#endif
