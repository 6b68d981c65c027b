/* Stream-ordered host transfers (salvo_stream_write, salvo_stream_read):
 * the host side goes through host-visible staging memory, the device side
 * is a copy recorded like salvo_copy's (same hazards, batch counting and
 * buffer serials). A write copies the caller's bytes at the call; a read's
 * copy-out to the caller's memory is a host call (host_call.c), which the
 * stream's later work waits for; from a buffer the host sees coherently
 * that host call reads the buffer itself (no staging, no copy on the
 * device). See host_call.h. */
#include "api/host_call.h"

#include <string.h>

static salvo_status check_transfer(salvo_stream *st, const char *what, salvo_buffer *buf,
                                   uint64_t offset, const void *host, uint64_t size)
{
    if (!st)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "%s: stream is NULL", what);
    salvo_device *dev = stream_device(st);
    if (!buf || !host)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", what,
                        buf ? "the host pointer" : "buffer");
    if (buf->dev != dev)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "%s: the buffer belongs to another device", what);
    if (size == 0)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "%s: size is 0", what);
    if (offset >= buf->size || size > buf->size - offset)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "%s: range [%llu, +%llu) outside the buffer of %llu bytes", what,
                        (unsigned long long)offset, (unsigned long long)size,
                        (unsigned long long)buf->size);
    return HOST_CALL_CHECK(dev, what);
}

/* The state every stream transfer needs [q.lock]: device alive, stream
 * not capturing. Refused here, before any staging is taken, rather than
 * by the capture's recorder: a graph cannot hold host memory, and a read
 * is a host call besides its copy. */
static salvo_status usable_locked(salvo_stream *st, const char *what) SALVO_REQUIRES(st->e.q->lock)
{
    salvo_device *dev = stream_device(st);
    if (device_is_lost(dev))
        return device_lost_error(dev);
    if (stream_capture_locked(st))
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE,
                        "%s: the stream is capturing (%s); a graph cannot hold host memory", what,
                        st->capture->g.label);
    return SALVO_OK;
}

/* The device side of a transfer, as salvo_copy's (a stream that
 * usable_locked let through is in no capture: into its batch). */
static salvo_status copy_locked(salvo_stream *st, accel_buffer *src, uint64_t so,
                                accel_buffer *dst, uint64_t dof, uint64_t size, uint64_t *serial)
    SALVO_REQUIRES(st->e.q->lock)
{
    accel_bind ends[2] = {{.buffer = src, .offset = so, .size = size},
                          {.buffer = dst, .offset = dof, .size = size}};
    command c = {.kind = COMMAND_COPY, .binds = ends, .bind_count = 2};
    /* One end is staging, in host memory: the copy engine's work. */
    return stream_command_locked(&st->e, &c, &(stream_call){.bytes = size, .host_side = true},
                                 serial);
}

salvo_status salvo_stream_write(salvo_stream *st, salvo_buffer *dst, uint64_t offset,
                                const void *src, uint64_t size)
{
    salvo_status r = check_transfer(st, "stream_write", dst, offset, src, size);
    if (r != SALVO_OK)
        return r;
    salvo_device *dev = stream_device(st);
    salvo_mutex_lock(&dev->q.lock);
    salvo_mutex_same(&dev->q.lock, &st->e.q->lock);
    r = usable_locked(st, "stream_write");
    host_work *hw = NULL;
    if (r == SALVO_OK)
        r = host_work_get_locked(dev, &hw);
    staging_block *b = NULL;
    uint64_t at = 0;
    if (r == SALVO_OK && size <= STREAM_WRITE_SMALL_MAX) {
        /* Small: a slice of the shared block, 16-byte aligned; a full
         * block goes to the retire queue (it is freed once the batches
         * that copy from it are over) and a fresh one takes its place. */
        b = hw->block;
        at = b ? (b->used + 15) & ~(uint64_t)15 : 0;
        if (!b || at > b->size || size > b->size - at) {
            staging_block *fresh = NULL;
            r = staging_block_create_locked(dev, STREAM_WRITE_BLOCK_BYTES, &fresh);
            if (r == SALVO_OK) {
                staging_block_release_locked(&dev->q, hw->block);
                hw->block = b = fresh;
                at = 0;
            }
        }
    } else if (r == SALVO_OK) {
        r = staging_block_create_locked(dev, size, &b); /* its own, released below */
        if (r == SALVO_OK) {
            /* Nothing else sees this block yet: it is filled with the lock
             * let go, so that other threads' calls do not wait for a copy
             * of megabytes. The stream is this thread's meanwhile (thread
             * safety as salvo_launch); the device may be lost meanwhile. */
            salvo_mutex_unlock(&dev->q.lock);
            memcpy(b->info.mapped, src, size);
            salvo_mutex_lock(&dev->q.lock);
            r = usable_locked(st, "stream_write");
            if (r != SALVO_OK) {
                staging_block_release_locked(&dev->q, b); /* no copy from it was recorded */
                b = NULL;
            }
        }
    }
    uint64_t serial = 0;
    if (r == SALVO_OK) {
        /* The slice is this write's from here, even if the copy is not
         * recorded (then it is simply unused). */
        b->used = at + size;
        b->writers++;
        if (b == hw->block)
            memcpy((char *)b->info.mapped + at, src, size);
        r = copy_locked(st, b->ab, at, dst->ab, offset, size, &serial);
        b->writers--;
        if (b != hw->block || b->dropped)
            staging_block_release_locked(&dev->q, b);
    }
    if (serial)
        resource_note_use(&dst->res, serial);
    salvo_mutex_unlock(&dev->q.lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}

salvo_status salvo_stream_read(salvo_stream *st, salvo_buffer *src, uint64_t offset, void *dst,
                               uint64_t size)
{
    salvo_status r = check_transfer(st, "stream_read", src, offset, dst, size);
    if (r != SALVO_OK)
        return r;
    salvo_device *dev = stream_device(st);
    uint64_t index = 0;
    salvo_mutex_lock(&dev->q.lock);
    salvo_mutex_same(&dev->q.lock, &st->e.q->lock);
    r = usable_locked(st, "stream_read");
    staging_block *b = NULL;
    /* A buffer the host sees coherently is read where it is, by the host
     * call itself: no staging, no device copy. */
    if (r == SALVO_OK && src->ai.mapped && src->ai.host_coherent &&
        !(dev->force_staging && src->domain == SALVO_DOMAIN_DEVICE)) {
        r = host_call_enqueue_mapped_read_locked(st, src, offset, dst, size, &index);
    } else if (r == SALVO_OK) {
        r = staging_block_create_locked(dev, size, &b);
        uint64_t serial = 0;
        if (r == SALVO_OK)
            r = copy_locked(st, src->ab, offset, b->ab, 0, size, &serial);
        if (serial)
            resource_note_use(&src->res, serial);
        /* SALVO_TIMEOUT: the copy is recorded and running (a batch of one
         * waited for it); the read goes on, and says so. */
        if (r == SALVO_OK || r == SALVO_TIMEOUT) {
            salvo_status copied = r;
            r = host_call_enqueue_locked(st, NULL, NULL, b, dst, &index);
            if (r != SALVO_OK)
                staging_block_release_locked(&dev->q, b); /* the copy may still run: after it */
            else
                r = copied;
        } else if (b) {
            staging_block_release_locked(&dev->q, b);
        }
    }
    host_work *hw = dev->host_work;
    salvo_mutex_unlock(&dev->q.lock);
    if ((r == SALVO_OK || r == SALVO_TIMEOUT) && !hw->timeline)
        host_work_wait_run(hw, index);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}
