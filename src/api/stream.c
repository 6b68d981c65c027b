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
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "stream_create: out is NULL");
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
     * in the capture, kept, until the capture ends (or the device goes). */
    if (pthread_mutex_trylock(&dev->q.lock) == 0) {
        if (st->capture) {
            graph_capture_leave_locked(st);
            queue_advance_locked(&dev->q); /* what the capture let go of */
        }
        pthread_mutex_unlock(&dev->q.lock);
    }
    stream_engine_destroy(&st->e);
}

/* One image or sampler binding checked against what the kernel declares
 * (rb): *bind filled, *held the image (or the sampler alone), *held_sampler
 * the sampler beside an image (else NULL). */
static salvo_status bind_image(salvo_device *dev, salvo_kernel *k, const salvo_binding *b,
                               const reflect_binding *rb, accel_bind *bind, salvo_buffer **held,
                               salvo_buffer **held_sampler)
{
    static const char *const kinds[] = {"buffer", "storage image", "sampled image", "sampler",
                                        "combined image sampler"};
    const char *kind = kinds[rb->kind];
    bool wants_image = rb->kind != SALVO_BINDING_SAMPLER;
    bool wants_sampler = rb->kind == SALVO_BINDING_SAMPLER || rb->kind == SALVO_BINDING_IMAGE_SAMPLER;
    if (b->buffer)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "launch of kernel '%s': binding %u is a %s, not a buffer", k->ek.name,
                        b->binding, kind);
    if ((wants_image && !b->image) || (wants_sampler && !b->sampler))
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "launch of kernel '%s': binding %u (a %s) has no %s", k->ek.name,
                        b->binding, kind, wants_image && !b->image ? "image" : "sampler");
    if ((!wants_image && b->image) || (!wants_sampler && b->sampler))
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "launch of kernel '%s': binding %u (a %s) takes no %s", k->ek.name,
                        b->binding, kind, b->image ? "image" : "sampler");
    salvo_image *img = wants_image ? b->image : NULL;
    salvo_sampler *smp = wants_sampler ? b->sampler : NULL;
    if ((img && img->base.dev != dev) || (smp && smp->base.dev != dev))
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "launch of kernel '%s': binding %u: %s of another device", k->ek.name,
                        b->binding, img && img->base.dev != dev ? "image" : "sampler");
    if (img) {
        static const char *const types[] = {"?", "1D", "2D", "3D", "2D array"};
        const salvo_image_desc *d = &img->desc;
        uint32_t need = rb->kind == SALVO_BINDING_STORAGE_IMAGE ? SALVO_IMAGE_STORAGE
                                                                 : SALVO_IMAGE_SAMPLED;
        if (d->type != rb->image_type)
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "launch of kernel '%s': binding %u: the kernel declares a %s image, "
                            "the image is %s",
                            k->ek.name, b->binding, types[rb->image_type], types[d->type]);
        if (!(d->usage & need))
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "launch of kernel '%s': binding %u: a %s, the image was not created "
                            "for %s use",
                            k->ek.name, b->binding, kind,
                            need == SALVO_IMAGE_STORAGE ? "storage" : "sampled");
        if (rb->image_format != SALVO_FORMAT_UNDEFINED && rb->image_format != d->format)
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "launch of kernel '%s': binding %u: the kernel declares format %s, "
                            "the image is %s",
                            k->ek.name, b->binding, salvo_format_name(rb->image_format),
                            salvo_format_name(d->format));
        if (image_texel_class(d->format) != rb->sampled_class) {
            static const char *const classes[] = {"floats", "signed integers",
                                                  "unsigned integers"};
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "launch of kernel '%s': binding %u: the kernel reads %s, format %s "
                            "holds %s",
                            k->ek.name, b->binding, classes[rb->sampled_class],
                            salvo_format_name(d->format),
                            classes[image_texel_class(d->format)]);
        }
        if (smp && smp->desc.filter == SALVO_FILTER_LINEAR &&
            !(image_support(dev, d->format) & SALVO_IMAGE_LINEAR_FILTER))
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "launch of kernel '%s': binding %u: a linear sampler on format %s, "
                            "which the device cannot filter linearly",
                            k->ek.name, b->binding, salvo_format_name(d->format));
        if (smp && smp->desc.unnormalized && d->type != SALVO_IMAGE_1D &&
            d->type != SALVO_IMAGE_2D)
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "launch of kernel '%s': binding %u: an unnormalized sampler on a %s "
                            "image (1D and 2D only)",
                            k->ek.name, b->binding, types[d->type]);
    }
    *bind = (accel_bind){
        .binding = b->binding,
        .element = b->element,
        .kind = rb->kind,
        .image = img ? img->ai : NULL,
        .sampler = smp ? smp->as : NULL,
        .offset = 0,
        .size = 1,
    };
    *held = img ? &img->base : &smp->base;
    *held_sampler = img && smp ? &smp->base : NULL;
    return SALVO_OK;
}

salvo_status launch_check(salvo_device *dev, salvo_kernel *k, const uint32_t groups[3],
                          const salvo_binding *bindings, uint32_t count, const void *push,
                          uint32_t push_size, accel_bind *binds, salvo_buffer **bufs)
{
    const salvo_device_info *info = &dev->info;
    if (k->dev != dev)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "launch of kernel '%s': the kernel belongs to another device", k->ek.name);
    if (!groups)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "launch of kernel '%s': groups is NULL",
                        k->ek.name);
    for (int i = 0; i < 3; i++)
        if (groups[i] == 0 || groups[i] > info->max_workgroup_count[i])
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "launch of kernel '%s': groups[%d] = %u is outside 1..%u", k->ek.name, i,
                            groups[i], info->max_workgroup_count[i]);
    return launch_check_bindings(dev, k, bindings, count, push, push_size, binds, bufs);
}

salvo_status launch_check_bindings(salvo_device *dev, salvo_kernel *k,
                                   const salvo_binding *bindings, uint32_t count, const void *push,
                                   uint32_t push_size, accel_bind *binds, salvo_buffer **bufs)
{
    const salvo_device_info *info = &dev->info;
    if (k->dev != dev)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "launch of kernel '%s': the kernel belongs to another device", k->ek.name);
    if (push_size != k->ek.refl.push_constant_size)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "launch of kernel '%s': push_size %u, the kernel declares %u", k->ek.name,
                        push_size, k->ek.refl.push_constant_size);
    if (push_size && !push)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "launch of kernel '%s': push is NULL",
                        k->ek.name);
    if (count && !bindings)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "launch of kernel '%s': bindings is NULL", k->ek.name);
    /* The kernel's entries are sorted by (binding, element), one per
     * buffer; each given binding fills the entry it names, once. Every
     * accepted one fills a distinct entry, so the arrays never overflow. */
    const reflect_module *m = &k->ek.refl;
    for (uint32_t j = 0; j < m->binding_count; j++) {
        binds[j] = (accel_bind){0};
        bufs[j] = NULL;
        bufs[SALVO_MAX_BINDINGS + j] = NULL;
    }
    for (uint32_t i = 0; i < count; i++) {
        const salvo_binding *b = &bindings[i];
        uint32_t j = 0;
        while (j < m->binding_count && m->bindings[j].binding != b->binding)
            j++;
        if (j == m->binding_count)
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "launch of kernel '%s': binding %u is not declared by the kernel",
                            k->ek.name, b->binding);
        if (b->element >= m->bindings[j].count)
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            m->bindings[j].count == 1
                                ? "launch of kernel '%s': binding %u is not an array (element "
                                  "%u given)"
                                : "launch of kernel '%s': binding %u: element %u is outside the "
                                  "array of %u",
                            k->ek.name, b->binding, b->element, m->bindings[j].count);
        j += b->element;
        if (bufs[j])
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            m->bindings[j].count == 1
                                ? "launch of kernel '%s': binding %u given twice"
                                : "launch of kernel '%s': binding %u element %u given twice",
                            k->ek.name, b->binding, b->element);
        if (m->bindings[j].kind != SALVO_BINDING_BUFFER) {
            salvo_status r = bind_image(dev, k, b, &m->bindings[j], &binds[j], &bufs[j],
                                        &bufs[SALVO_MAX_BINDINGS + j]);
            if (r != SALVO_OK)
                return r;
            continue;
        }
        salvo_buffer *buf = b->buffer;
        if (!buf)
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "launch of kernel '%s': binding %u has no buffer%s", k->ek.name,
                            b->binding, b->image || b->sampler ? " (it is a buffer binding)" : "");
        if (buf->dev != dev)
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "launch of kernel '%s': binding %u: buffer of another device", k->ek.name,
                            b->binding);
        uint64_t size = b->size ? b->size : (b->offset < buf->size ? buf->size - b->offset : 0);
        if (b->offset >= buf->size || size == 0 || size > buf->size - b->offset)
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "launch of kernel '%s': binding %u: range [%llu, +%llu) outside the "
                            "buffer of %llu bytes",
                            k->ek.name, b->binding, (unsigned long long)b->offset,
                            (unsigned long long)b->size, (unsigned long long)buf->size);
        bool uniform = m->bindings[j].uniform;
        uint64_t align = uniform ? info->min_uniform_buffer_offset_alignment
                                 : info->min_storage_buffer_offset_alignment;
        if (align > 1 && b->offset % align)
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "launch of kernel '%s': binding %u: offset %llu is not a multiple of "
                            "%llu (the device's %s buffer offset alignment)",
                            k->ek.name, b->binding, (unsigned long long)b->offset,
                            (unsigned long long)align, uniform ? "uniform" : "storage");
        uint32_t range = uniform ? info->max_uniform_buffer_range : info->max_storage_buffer_range;
        if (size > range)
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "launch of kernel '%s': binding %u: %llu bytes exceed the device's "
                            "%s buffer range %u",
                            k->ek.name, b->binding, (unsigned long long)size,
                            uniform ? "uniform" : "storage", range);
        binds[j] = (accel_bind){
            .binding = b->binding,
            .element = b->element,
            .uniform = uniform,
            .buffer = buf->ab,
            .offset = b->offset,
            .size = size,
        };
        bufs[j] = buf;
    }
    /* Name the first declared one that is missing. */
    for (uint32_t j = 0; j < m->binding_count; j++)
        if (!bufs[j])
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            m->bindings[j].count == 1
                                ? "launch of kernel '%s': binding %u is missing (%u given, the "
                                  "kernel declares %u)"
                                : "launch of kernel '%s': binding %u element %u is missing (each "
                                  "element of an array is bound on its own)",
                            k->ek.name, m->bindings[j].binding,
                            m->bindings[j].count == 1 ? count : m->bindings[j].element,
                            m->binding_count);
    return SALVO_OK;
}

void buffer_note_use(salvo_buffer *buf, uint64_t serial)
{
    uint64_t old = atomic_load_explicit(&buf->last_serial, memory_order_relaxed);
    while (old < serial && !atomic_compare_exchange_weak_explicit(
                               &buf->last_serial, &old, serial, memory_order_relaxed,
                               memory_order_relaxed)) {
    }
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
    salvo_buffer *bufs[LAUNCH_HELD_MAX];
    salvo_status r = launch_check(dev, k, groups, bindings, binding_count, push, push_size, binds,
                                  bufs);
    if (r != SALVO_OK)
        return r;
    pthread_mutex_lock(&dev->q.lock);
    if (device_is_lost(dev)) {
        pthread_mutex_unlock(&dev->q.lock);
        return device_lost_error(dev);
    }
    uint64_t serial = 0;
    if (stream_capture_locked(st))
        r = graph_capture_launch_locked(st->capture, k, groups, binds, bufs, push, push_size);
    else
        r = stream_dispatch_locked(&st->e, &k->ek, groups, binds, push, push_size, &serial);
    if (serial)
        for (uint32_t i = 0; i < binding_count; i++)
            buffer_note_use(bufs[i], serial); /* samplers: never written, nothing to note */
    if (serial && k->ek.refl.buffer_addresses && serial > dev->q.address_serial)
        dev->q.address_serial = serial;
    pthread_mutex_unlock(&dev->q.lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
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
    salvo_buffer *bufs[LAUNCH_HELD_MAX];
    salvo_status r = launch_check_bindings(dev, k, bindings, binding_count, push, push_size, binds,
                                           bufs);
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
    command c = {.kind = COMMAND_DISPATCH_INDIRECT, .object = &k->ek, .binds = binds,
                 .bind_count = m->binding_count + 1, .push = push, .push_size = push_size};
    pthread_mutex_lock(&dev->q.lock);
    if (device_is_lost(dev)) {
        pthread_mutex_unlock(&dev->q.lock);
        return device_lost_error(dev);
    }
    uint64_t serial = 0;
    if (stream_capture_locked(st))
        r = graph_capture_launch_indirect_locked(st->capture, k, &c, bufs, counts);
    else
        r = stream_command_locked(&st->e, &c, 0, &serial);
    if (serial) {
        for (uint32_t i = 0; i < m->binding_count; i++)
            buffer_note_use(bufs[i], serial);
        buffer_note_use(counts, serial);
    }
    if (serial && m->buffer_addresses && serial > dev->q.address_serial)
        dev->q.address_serial = serial;
    pthread_mutex_unlock(&dev->q.lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
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
    pthread_mutex_lock(&dev->q.lock);
    if (device_is_lost(dev)) {
        pthread_mutex_unlock(&dev->q.lock);
        return device_lost_error(dev);
    }
    uint64_t serial = 0;
    /* A HOST buffer is in system memory: the copy engine's work. */
    bool host_side = src->domain == SALVO_DOMAIN_HOST || dst->domain == SALVO_DOMAIN_HOST;
    if (stream_capture_locked(st))
        r = graph_capture_copy_locked(st->capture, src, src_offset, dst, dst_offset, size);
    else
        r = stream_copy_locked(&st->e, src->ab, src_offset, dst->ab, dst_offset, size, host_side,
                               &serial);
    if (serial) {
        buffer_note_use(src, serial);
        buffer_note_use(dst, serial);
    }
    pthread_mutex_unlock(&dev->q.lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
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
    pthread_mutex_lock(&dev->q.lock);
    if (device_is_lost(dev)) {
        pthread_mutex_unlock(&dev->q.lock);
        return device_lost_error(dev);
    }
    uint64_t serial = 0;
    salvo_status r;
    if (stream_capture_locked(st))
        r = graph_capture_fill_locked(st->capture, buf, offset, size, value);
    else
        r = stream_fill_locked(&st->e, buf->ab, offset, size, value,
                               buf->domain == SALVO_DOMAIN_HOST, &serial);
    if (serial)
        buffer_note_use(buf, serial);
    pthread_mutex_unlock(&dev->q.lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
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
    pthread_mutex_lock(&dev->q.lock);
    if (device_is_lost(dev)) {
        pthread_mutex_unlock(&dev->q.lock);
        return device_lost_error(dev);
    }
    uint64_t serial = 0;
    salvo_status r;
    if (stream_capture_locked(st))
        r = graph_capture_command_locked(st->capture, &c, NULL, buf);
    else
        r = stream_command_locked(&st->e, &c, 0, &serial);
    if (serial)
        buffer_note_use(buf, serial);
    pthread_mutex_unlock(&dev->q.lock);
    if (r == SALVO_OK)
        salvo_clear_error();
    return r;
}

salvo_status salvo_stream_flush(salvo_stream *st)
{
    if (!st)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "flush: stream is NULL");
    salvo_device *dev = stream_device(st);
    pthread_mutex_lock(&dev->q.lock);
    salvo_status r = device_is_lost(dev) ? device_lost_error(dev)
                                         : stream_submit_locked(&st->e, true);
    if (r == SALVO_OK)
        queue_reap_locked(&dev->q);
    pthread_mutex_unlock(&dev->q.lock);
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
    pthread_mutex_lock(&dev->q.lock);
    graph_captures_settle_locked(dev);
    /* A loss outranks the capture: every synchronize says it. */
    if (st->capture && !device_is_lost(dev)) {
        pthread_mutex_unlock(&dev->q.lock);
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE,
                        "synchronize: the stream is capturing into %s; its work runs when the "
                        "graph is replayed",
                        st->capture->g.label);
    }
    salvo_status first = stream_synchronize_locked(&st->e, msg);
    uint64_t calls = host_work_sync_calls_locked(dev, st, first);
    pthread_mutex_unlock(&dev->q.lock);
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
    pthread_mutex_lock(&dev->q.lock);
    /* Settled first: a stream left in a capture by a destroy that found
     * the lock busy is out of it by now, as its next capture call says. */
    *out = stream_capture_locked(st) != NULL;
    pthread_mutex_unlock(&dev->q.lock);
    salvo_clear_error();
    return SALVO_OK;
}
