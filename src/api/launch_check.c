/* A launch's arguments checked against its kernel's reflection, and
 * turned into the ranges the engine records: for salvo_launch and
 * salvo_launch_indirect (stream.c) and graph updates (graph.c). */
#include "api/internal.h"
#include "base/inline.h"

#include <stdio.h>

static const char *const image_types[] = {"?", "1D", "2D", "3D", "2D array"};

/* A sampler against the image it samples (where names the bindings): a
 * linear filter needs a format the device filters linearly, unnormalized
 * coordinates a 1D or 2D image. */
static salvo_status sampler_fits(salvo_device *dev, const salvo_kernel *k, const char *where,
                                 const salvo_image *img, const salvo_sampler *smp)
{
    const salvo_image_desc *d = &img->desc;
    if (smp->desc.filter == SALVO_FILTER_LINEAR &&
        !(image_support(dev, d->format) & SALVO_IMAGE_LINEAR_FILTER))
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "launch of kernel '%s': %s: a linear sampler on format %s, which the "
                        "device cannot filter linearly",
                        k->ek.name, where, salvo_format_name(d->format));
    if (smp->desc.unnormalized && d->type != SALVO_IMAGE_1D && d->type != SALVO_IMAGE_2D)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "launch of kernel '%s': %s: an unnormalized sampler on a %s image (1D "
                        "and 2D only)",
                        k->ek.name, where, image_types[d->type]);
    return SALVO_OK;
}

/* The separate samplers against the textures the kernel samples them
 * with (reflect_module.pairs), element with element where the kernel
 * names them by constant indices, else every element of each: the checks
 * a combined image sampler gets in bind_image. */
static salvo_status pairs_fit(salvo_device *dev, const salvo_kernel *k, resource *const *held)
{
    const reflect_module *m = &k->ek.refl;
    for (uint32_t p = 0; p < m->pair_count; p++)
        for (uint32_t t = 0; t < m->binding_count; t++) {
            const reflect_binding *tb = &m->bindings[t];
            const struct reflect_pair *pr = &m->pairs[p];
            if (tb->binding != pr->texture || tb->kind != SALVO_BINDING_SAMPLED_IMAGE ||
                (pr->texture_element != REFLECT_ANY_ELEMENT && tb->element != pr->texture_element))
                continue;
            for (uint32_t s = 0; s < m->binding_count; s++) {
                const reflect_binding *sb = &m->bindings[s];
                if (sb->binding != pr->sampler || sb->kind != SALVO_BINDING_SAMPLER ||
                    (pr->sampler_element != REFLECT_ANY_ELEMENT &&
                     sb->element != pr->sampler_element))
                    continue;
                char where[96];
                snprintf(where, sizeof where, "binding %u (a sampler) with binding %u (a texture)",
                         sb->binding, tb->binding);
                salvo_status r = sampler_fits(dev, k, where, resource_as_image(held[t]),
                                              resource_as_sampler(held[s]));
                if (r != SALVO_OK)
                    return r;
            }
        }
    return SALVO_OK;
}

/* One image or sampler binding checked against what the kernel declares
 * (rb): *bind filled, *held the image (or the sampler alone), *held_sampler
 * the sampler beside an image (else NULL). */
static salvo_status bind_image(salvo_device *dev, salvo_kernel *k, const salvo_binding *b,
                               const reflect_binding *rb, accel_bind *bind, resource **held,
                               resource **held_sampler)
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
    if ((img && img->dev != dev) || (smp && smp->dev != dev))
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "launch of kernel '%s': binding %u: %s of another device", k->ek.name,
                        b->binding, img && img->dev != dev ? "image" : "sampler");
    if (img) {
        const char *const *types = image_types;
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
        if (smp) {
            char where[32];
            snprintf(where, sizeof where, "binding %u", b->binding);
            salvo_status r = sampler_fits(dev, k, where, img, smp);
            if (r != SALVO_OK)
                return r;
        }
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
    *held = img ? &img->res : &smp->res;
    *held_sampler = img && smp ? &smp->res : NULL;
    return SALVO_OK;
}

/* launch_check_bindings after its first check (k is dev's). Inline in
 * both entry points: every launch's path. */
static SALVO_ALWAYS_INLINE salvo_status
check_bindings(salvo_device *dev, salvo_kernel *k, const salvo_binding *bindings, uint32_t count,
               const void *push, uint32_t push_size, accel_bind *binds, resource **held)
{
    const salvo_device_info *info = &dev->info;
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
     * accepted one fills a distinct entry, so the arrays never overflow.
     * binds[j] is left as it is until then: a success has filled every
     * one (none is missing), and a failure's binds are not read. */
    const reflect_module *m = &k->ek.refl;
    for (uint32_t j = 0; j < m->binding_count; j++) {
        held[j] = NULL;
        held[SALVO_MAX_BINDINGS + j] = NULL;
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
        if (held[j])
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            m->bindings[j].count == 1
                                ? "launch of kernel '%s': binding %u given twice"
                                : "launch of kernel '%s': binding %u element %u given twice",
                            k->ek.name, b->binding, b->element);
        if (m->bindings[j].kind != SALVO_BINDING_BUFFER) {
            salvo_status r = bind_image(dev, k, b, &m->bindings[j], &binds[j], &held[j],
                                        &held[SALVO_MAX_BINDINGS + j]);
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
            .unmapped = !buf->ai.mapped && !buf->imported,
            .buffer = buf->ab,
            .offset = b->offset,
            .size = size,
        };
        held[j] = &buf->res;
    }
    /* Name the first declared one that is missing. Each accepted binding
     * filled an entry of its own: as many as the kernel declares, none is. */
    for (uint32_t j = 0; count != m->binding_count && j < m->binding_count; j++)
        if (!held[j])
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            m->bindings[j].count == 1
                                ? "launch of kernel '%s': binding %u is missing (%u given, the "
                                  "kernel declares %u)"
                                : "launch of kernel '%s': binding %u element %u is missing (each "
                                  "element of an array is bound on its own)",
                            k->ek.name, m->bindings[j].binding,
                            m->bindings[j].count == 1 ? count : m->bindings[j].element,
                            m->binding_count);
    return m->pair_count ? pairs_fit(dev, k, held) : SALVO_OK;
}

salvo_status launch_check(salvo_device *dev, salvo_kernel *k, const uint32_t groups[3],
                          const salvo_binding *bindings, uint32_t count, const void *push,
                          uint32_t push_size, accel_bind *binds, resource **held)
{
    const salvo_device_info *info = &dev->info;
    if (k->dev != dev)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "launch of kernel '%s': the kernel belongs to another device", k->ek.name);
    if (!groups)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "launch of kernel '%s': groups is NULL",
                        k->ek.name);
    for (int i = 0; i < 3; i++) /* 0 wraps to UINT32_MAX: one test for both ends */
        if (groups[i] - 1u >= info->max_workgroup_count[i])
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "launch of kernel '%s': groups[%d] = %u is outside 1..%u", k->ek.name, i,
                            groups[i], info->max_workgroup_count[i]);
    return check_bindings(dev, k, bindings, count, push, push_size, binds, held);
}

salvo_status launch_check_bindings(salvo_device *dev, salvo_kernel *k,
                                   const salvo_binding *bindings, uint32_t count, const void *push,
                                   uint32_t push_size, accel_bind *binds, resource **held)
{
    if (k->dev != dev)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "launch of kernel '%s': the kernel belongs to another device", k->ek.name);
    return check_bindings(dev, k, bindings, count, push, push_size, binds, held);
}
