/* Streams: the public front of the stream engine (core/stream_engine.c).
 * Launches (direct and indirect), copies and fills are checked here, then
 * recorded by the engine. */
#include <string.h>

#include "api/internal.h"
#include "api/host_call.h"

salvo_status salvo_stream_create(salvo_device *dev, const salvo_stream_desc *desc,
                                 salvo_stream **out)
{
    if (!out)
        return SALVO_FAIL(device_sink(dev), SALVO_ERROR_INVALID_ARGUMENT,
                          "stream_create: out is NULL");
    *out = NULL;
    if (!dev)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "stream_create: device is NULL");
    if (device_is_lost(dev))
        return device_lost_error(dev);
    /* Through the queue's allocator: the engine frees it. */
    salvo_stream *st = salvo_mem_calloc(dev->alloc, 1, sizeof *st);
    if (!st)
        return DEV_FAIL(dev, SALVO_ERROR_OUT_OF_HOST_MEMORY, "stream_create: out of host memory");
    salvo_status r = stream_engine_init(&st->e, &dev->q,
                                        desc && desc->batch_size ? desc->batch_size
                                                                 : dev->batch_size,
                                        desc ? desc->first_batch : 0,
                                        desc && desc->priority > 0);
    if (r != SALVO_OK) {
        salvo_mem_free(dev->alloc, st);
        return r;
    }
    salvo_clear_error();
    *out = st;
    return SALVO_OK;
}

void salvo_stream_destroy(salvo_stream *st)
{
    if (!st)
        return;
    salvo_device *dev = stream_device(st);
    /* The free path only tries the lock (a log callback may hold it). A
     * stream in a capture leaves it here; when the lock is busy it stays
     * in the capture, which holds a reference to it, until the capture
     * ends or a capture call takes the destroy in (or the device goes). */
    if (salvo_mutex_trylock(&dev->q.lock)) {
        salvo_mutex_same(&dev->q.lock, &st->e.q->lock);
        if (st->capture) {
            graph_capture_leave_locked(st);
            queue_advance_locked(&dev->q); /* what the capture let go of */
        }
        salvo_mutex_unlock(&dev->q.lock);
    }
    stream_engine_destroy(&st->e);
}

salvo_status stream_call_command(salvo_stream *st, const command *c, const stream_call *call)
{
    salvo_device *dev = stream_device(st);
    const command_holds *h = call->holds;
    uint64_t serial = 0;
    salvo_mutex_lock(&dev->q.lock);
    salvo_mutex_same(&dev->q.lock, &st->e.q->lock);
    salvo_status r;
    if (device_is_lost(dev)) {
        r = device_lost_error(dev);
    } else {
        if (dev->captures)
            graph_captures_settle_locked(dev);
        r = stream_command_locked(&st->e, c, call, &serial);
    }
    /* Host reads and writes of what it uses wait for its batch. */
    for (uint32_t i = 0; serial && i < c->bind_count; i++)
        if (h->of[i])
            resource_note_use(h->of[i], serial);
    if (serial && h->kernel && h->kernel->ek.refl.buffer_addresses &&
        serial > dev->q.address_serial)
        dev->q.address_serial = serial;
    salvo_mutex_unlock(&dev->q.lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}

salvo_status salvo_launch(salvo_stream *st, salvo_kernel *k, const uint32_t groups[3],
                          const salvo_binding *bindings, uint32_t binding_count, const void *push,
                          uint32_t push_size)
{
    if (!st || !k)
        return SALVO_FAIL(st ? &stream_device(st)->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "launch: %s is NULL", st ? "kernel" : "stream");
    salvo_device *dev = stream_device(st);
    accel_bind binds[SALVO_MAX_BINDINGS];
    resource *held[LAUNCH_HELD_MAX];
    salvo_status r = launch_check(dev, k, groups, bindings, binding_count, push, push_size, binds,
                                  held);
    if (r != SALVO_OK)
        return r;
    command c = {.kind = COMMAND_DISPATCH, .object = &k->ek,
                 .groups = {groups[0], groups[1], groups[2]}, .binds = binds,
                 .bind_count = k->ek.refl.binding_count, .push = push, .push_size = push_size};
    command_holds holds = {.kernel = k, .of = held};
    return stream_call_command(st, &c, &(stream_call){.holds = &holds});
}

salvo_status salvo_launch_indirect(salvo_stream *st, salvo_kernel *k, salvo_buffer *counts,
                                   uint64_t offset, const salvo_binding *bindings,
                                   uint32_t binding_count, const void *push, uint32_t push_size)
{
    if (!st || !k || !counts)
        return SALVO_FAIL(st ? &stream_device(st)->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "launch_indirect: %s is NULL",
                          !st ? "stream" : !k ? "kernel" : "count_buffer");
    salvo_device *dev = stream_device(st);
    /* The kernel's ranges and the counts': one command's at most. */
    accel_bind binds[SALVO_MAX_BINDINGS + 1];
    resource *held[LAUNCH_HELD_MAX];
    salvo_status r = launch_check_bindings(dev, k, bindings, binding_count, push, push_size, binds,
                                           held);
    if (r != SALVO_OK)
        return r;
    const reflect_module *m = &k->ek.refl;
    if (counts->dev != dev)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "launch_indirect of kernel '%s': the count buffer belongs to another "
                        "device",
                        k->ek.name);
    if (offset % 4)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "launch_indirect of kernel '%s': count offset %llu is not a multiple of 4",
                        k->ek.name, (unsigned long long)offset);
    if (offset >= counts->size || counts->size - offset < 12)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "launch_indirect of kernel '%s': counts [%llu, +12) outside the count "
                        "buffer of %llu bytes",
                        k->ek.name, (unsigned long long)offset, (unsigned long long)counts->size);
    if (m->binding_count == SALVO_MAX_BINDINGS)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "launch_indirect of kernel '%s': the kernel binds %d buffers, the most a "
                        "command may use; the counts would be one more",
                        k->ek.name, SALVO_MAX_BINDINGS);
    binds[m->binding_count] = (accel_bind){.buffer = counts->ab, .offset = offset, .size = 12};
    held[m->binding_count] = &counts->res; /* the range after the kernel's: not a sampler's place */
    command c = {.kind = COMMAND_DISPATCH_INDIRECT, .object = &k->ek, .binds = binds,
                 .bind_count = m->binding_count + 1, .push = push, .push_size = push_size};
    command_holds holds = {.kernel = k, .of = held};
    return stream_call_command(st, &c, &(stream_call){.holds = &holds});
}

static salvo_status check_copy_range(salvo_device *dev, const char *which, salvo_buffer *b,
                                     uint64_t offset, uint64_t size)
{
    if (!b)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "copy: %s is NULL", which);
    if (b->dev != dev)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "copy: %s belongs to another device",
                        which);
    if (offset >= b->size || size > b->size - offset)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "copy: %s range [%llu, +%llu) outside the buffer of %llu bytes", which,
                        (unsigned long long)offset, (unsigned long long)size,
                        (unsigned long long)b->size);
    return SALVO_OK;
}

salvo_status salvo_copy(salvo_stream *st, salvo_buffer *src, uint64_t src_offset,
                        salvo_buffer *dst, uint64_t dst_offset, uint64_t size)
{
    if (!st)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "copy: stream is NULL");
    salvo_device *dev = stream_device(st);
    if (size == 0)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "copy: size is 0");
    salvo_status r = check_copy_range(dev, "source", src, src_offset, size);
    if (r == SALVO_OK)
        r = check_copy_range(dev, "destination", dst, dst_offset, size);
    if (r == SALVO_OK && src == dst && src_offset < dst_offset + size &&
        dst_offset < src_offset + size)
        r = DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "copy: the ranges overlap");
    if (r != SALVO_OK)
        return r;
    accel_bind ends[2] = {{.buffer = src->ab, .offset = src_offset, .size = size},
                          {.buffer = dst->ab, .offset = dst_offset, .size = size}};
    command c = {.kind = COMMAND_COPY, .binds = ends, .bind_count = 2};
    resource *of[2] = {&src->res, &dst->res};
    /* A HOST buffer is in system memory: the copy engine's work. */
    stream_call call = {.bytes = size,
                        .host_side = src->domain == SALVO_DOMAIN_HOST ||
                                     dst->domain == SALVO_DOMAIN_HOST,
                        .holds = &(command_holds){.of = of}};
    return stream_call_command(st, &c, &call);
}

salvo_status salvo_fill(salvo_stream *st, salvo_buffer *buf, uint64_t offset, uint64_t size,
                        uint32_t value)
{
    if (!st)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "fill: stream is NULL");
    salvo_device *dev = stream_device(st);
    if (!buf)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "fill: buffer is NULL");
    if (buf->dev != dev)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "fill: the buffer belongs to another device");
    if (size == 0 || offset % 4 || size % 4)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "fill: offset %llu and size %llu must be multiples of 4, size not 0",
                        (unsigned long long)offset, (unsigned long long)size);
    if (offset >= buf->size || size > buf->size - offset)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "fill: range [%llu, +%llu) outside the buffer of %llu bytes",
                        (unsigned long long)offset, (unsigned long long)size,
                        (unsigned long long)buf->size);
    accel_bind end = {.buffer = buf->ab, .offset = offset, .size = size};
    command c = {.kind = COMMAND_FILL, .binds = &end, .bind_count = 1, .push = &value,
                 .push_size = sizeof value};
    resource *of = &buf->res;
    stream_call call = {.host_side = buf->domain == SALVO_DOMAIN_HOST,
                        .holds = &(command_holds){.of = &of}};
    return stream_call_command(st, &c, &call);
}

salvo_status salvo_fill_pattern(salvo_stream *st, salvo_buffer *buf, uint64_t offset,
                                uint64_t size, const void *pattern, uint32_t pattern_size)
{
    if (!st)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "fill_pattern: stream is NULL");
    salvo_device *dev = stream_device(st);
    if (!buf || !pattern)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "fill_pattern: %s is NULL",
                        buf ? "pattern" : "buffer");
    if (buf->dev != dev)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "fill_pattern: the buffer belongs to another device");
    if (pattern_size != 1 && pattern_size != 2 && pattern_size != 4)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "fill_pattern: pattern_size %u (1, 2 or 4 bytes)", pattern_size);
    if (size == 0 || size % pattern_size)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "fill_pattern: size %llu must be a whole number of %u-byte patterns, not 0",
                        (unsigned long long)size, pattern_size);
    if (offset >= buf->size || size > buf->size - offset)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "fill_pattern: range [%llu, +%llu) outside the buffer of %llu bytes",
                        (unsigned long long)offset, (unsigned long long)size,
                        (unsigned long long)buf->size);
    /* The pattern starts at offset, and 4 is a whole number of patterns:
     * every word of the range holds the same bytes, the pattern turned by
     * the offset's place in its word. */
    const unsigned char *p = pattern;
    unsigned char bytes[4];
    for (uint32_t j = 0; j < 4; j++)
        bytes[j] = p[((j + 4 - (uint32_t)(offset & 3)) & 3) % pattern_size];
    uint32_t word;
    memcpy(&word, bytes, sizeof word);
    if (offset % 4 == 0 && size % 4 == 0)
        return salvo_fill(st, buf, offset, size, word); /* whole words: vkCmdFillBuffer's */
    /* What it is ordered against: its words, partial ones whole, and
     * before them what the kernel for those binds (see accel.h,
     * cmd_fill_bytes), from an aligned offset. */
    uint64_t align = dev->info.min_storage_buffer_offset_alignment;
    align = align > 4 ? align : 4;
    uint64_t first = (offset & ~(uint64_t)3) / align * align;
    uint64_t end = (offset + size + 3) & ~(uint64_t)3;
    command_fill_bytes f = {.word = word,
                            .lead = (uint32_t)(offset - first),
                            .trail = (uint32_t)(end - offset - size)};
    accel_bind words = {.buffer = buf->ab, .offset = first, .size = end - first};
    command c = {.kind = COMMAND_FILL_BYTES, .binds = &words, .bind_count = 1, .push = &f,
                 .push_size = sizeof f};
    resource *of = &buf->res;
    return stream_call_command(st, &c, &(stream_call){.holds = &(command_holds){.of = &of}});
}

salvo_status salvo_stream_flush(salvo_stream *st)
{
    if (!st)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "flush: stream is NULL");
    salvo_device *dev = stream_device(st);
    salvo_mutex_lock(&dev->q.lock);
    salvo_mutex_same(&dev->q.lock, &st->e.q->lock);
    salvo_status r = device_is_lost(dev) ? device_lost_error(dev)
                                         : stream_submit_locked(&st->e, true);
    if (r == SALVO_OK)
        sched_reap_locked(&dev->q);
    salvo_mutex_unlock(&dev->q.lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}

salvo_status salvo_stream_synchronize(salvo_stream *st)
{
    if (!st)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "synchronize: stream is NULL");
    salvo_device *dev = stream_device(st);
    if (host_call_running)
        return host_call_refuse(dev, "synchronize");
    char msg[SALVO_ERROR_MAX];
    salvo_mutex_lock(&dev->q.lock);
    salvo_mutex_same(&dev->q.lock, &st->e.q->lock);
    graph_captures_settle_locked(dev);
    /* A loss outranks the capture: every synchronize says it. */
    if (st->capture && !device_is_lost(dev)) {
        salvo_mutex_unlock(&dev->q.lock);
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE,
                        "synchronize: the stream is capturing into %s; its work runs when the "
                        "graph is replayed",
                        st->capture->g.label);
    }
    bool expired = false;
    salvo_status first = stream_synchronize_locked(&st->e, msg, &expired);
    uint64_t calls = host_work_sync_calls_locked(dev, st, expired);
    salvo_mutex_unlock(&dev->q.lock);
    if (calls)
        host_work_wait_run(dev->host_work, calls);
    if (first != SALVO_OK)
        salvo_set_error(msg);
    else
        salvo_clear_error();
    return first;
}

salvo_status salvo_stream_is_capturing(salvo_stream *st, bool *out)
{
    if (out)
        *out = false;
    if (!st || !out)
        return SALVO_FAIL(st ? &stream_device(st)->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "stream_is_capturing: %s is NULL", st ? "out" : "stream");
    salvo_device *dev = stream_device(st);
    salvo_mutex_lock(&dev->q.lock);
    salvo_mutex_same(&dev->q.lock, &st->e.q->lock);
    /* Settled first: a stream left in a capture by a destroy that found
     * the lock busy is out of it by now, as its next capture call says. */
    *out = stream_capture_locked(st) != NULL;
    salvo_mutex_unlock(&dev->q.lock);
    salvo_clear_error();
    return SALVO_OK;
}
