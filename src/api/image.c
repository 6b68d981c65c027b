/* Images and samplers: creation checked against what the device offers,
 * host transfers staged through the device, stream-ordered copies to and
 * from buffers, and releases that wait for the work that uses them (the
 * buffer bookkeeping each begins with). */
#include <string.h>

#include "api/internal.h"
#include "api/host_call.h"

#define VT(dev) ((dev)->acc.vt)
#define SELF(dev) ((dev)->acc.self)

/* ------------------------------------------------------------------ */
/* Images                                                              */
/* ------------------------------------------------------------------ */

static void image_release(retire_entry *e, bool abandoned)
{
    (void)abandoned;
    salvo_image *img = resource_as_image(resource_of_release(e));
    salvo_device *dev = img->dev;
    salvo_mutex_held(&dev->q.lock); /* releases run under the lock */
    live_unlink_locked(dev, &img->res);
    VT(dev)->image_destroy(SELF(dev), dev->adev, img->ai);
    COUNT_SUB(dev, live_images, 1);
    COUNT_SUB(dev, live_image_bytes, img->size);
    salvo_mem_free(dev->alloc, img);
}

/* The description checked, with defaults filled in (d), or a refusal. */
static salvo_status image_desc_check(salvo_device *dev, const salvo_image_desc *in,
                                     salvo_image_desc *d)
{
    *d = *in;
    const accel_caps *c = &dev->caps;
    if (d->type < SALVO_IMAGE_1D || d->type > SALVO_IMAGE_2D_ARRAY)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "image_create: unknown type %d",
                        (int)d->type);
    if (!format_known(d->format))
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "image_create: unknown format %d",
                        (int)d->format);
    if (d->usage & ~(uint32_t)(SALVO_IMAGE_STORAGE | SALVO_IMAGE_SAMPLED))
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "image_create: usage 0x%x has bits other than STORAGE and SAMPLED",
                        d->usage);
    uint32_t offered = image_support(dev, d->format) & (SALVO_IMAGE_STORAGE | SALVO_IMAGE_SAMPLED);
    if (!offered)
        return DEV_FAIL(dev, SALVO_ERROR_UNSUPPORTED,
                        "image_create: the device offers no images of format %s",
                        salvo_format_name(d->format));
    if (d->usage & ~offered)
        return DEV_FAIL(dev, SALVO_ERROR_UNSUPPORTED,
                        "image_create: the device offers format %s for %s use only",
                        salvo_format_name(d->format),
                        offered & SALVO_IMAGE_STORAGE ? "storage" : "sampled");
    if (!d->usage)
        d->usage = offered;
    bool one_d = d->type == SALVO_IMAGE_1D, three_d = d->type == SALVO_IMAGE_3D;
    bool array = d->type == SALVO_IMAGE_2D_ARRAY;
    if (d->width == 0 || (!one_d && d->height == 0) || (three_d && d->depth == 0) ||
        (array && d->layers == 0))
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "image_create: an extent is 0 (%ux%ux%u, %u layers)", d->width, d->height,
                        d->depth, d->layers);
    if ((one_d && d->height > 1) || (!three_d && d->depth > 1) || (!array && d->layers > 1))
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "image_create: %ux%ux%u with %u layers does not fit the image type %d",
                        d->width, d->height, d->depth, d->layers, (int)d->type);
    d->height = d->height ? d->height : 1;
    d->depth = d->depth ? d->depth : 1;
    d->layers = d->layers ? d->layers : 1;
    uint32_t limit = one_d ? c->max_image_1d : three_d ? c->max_image_3d : c->max_image_2d;
    uint32_t largest = d->width > d->height ? d->width : d->height;
    largest = largest > d->depth ? largest : d->depth;
    if ((limit && largest > limit) || (c->max_image_layers && d->layers > c->max_image_layers))
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "image_create: %ux%ux%u with %u layers exceeds the device's limits (%u "
                        "texels a side, %u layers)",
                        d->width, d->height, d->depth, d->layers, limit, c->max_image_layers);
    return SALVO_OK;
}

salvo_status salvo_image_create(salvo_device *dev, const salvo_image_desc *desc, salvo_image **out)
{
    if (out)
        *out = NULL;
    if (!dev || !desc || !out)
        return SALVO_FAIL(dev ? &dev->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "image_create: %s is NULL", !dev ? "device" : !desc ? "desc" : "out");
    if (host_call_running)
        return host_call_refuse(dev, "image_create");
    salvo_image_desc d;
    salvo_status r = image_desc_check(dev, desc, &d);
    if (r != SALVO_OK)
        return r;
    if (device_is_lost(dev))
        return device_lost_error(dev);
    salvo_image *img = salvo_mem_calloc(dev->alloc, 1, sizeof *img);
    if (!img)
        return DEV_FAIL(dev, SALVO_ERROR_OUT_OF_HOST_MEMORY, "image_create: out of host memory");
    img->desc = d;
    img->texel = salvo_format_texel_size(d.format);
    uint64_t bytes = (uint64_t)d.width * d.height * d.depth * d.layers * img->texel;
    img->dev = dev;
    img->size = bytes;
    resource_init(&img->res, RESOURCE_IMAGE, image_release, bytes);
    accel_image_desc ad = {d.type, d.format, d.width, d.height, d.depth, d.layers, d.usage};
    const char *step = "image";
    salvo_mutex_lock(&dev->q.lock);
    accel_result ar = VT(dev)->image_create(SELF(dev), dev->adev, &ad, &img->ai);
    if (ar == ACCEL_SUCCESS) {
        step = "view";
        ar = VT(dev)->image_view_create(SELF(dev), dev->adev, img->ai);
    }
    if (ar == ACCEL_SUCCESS) {
        /* Ready for use when the call returns: the layout it lives in. */
        accel_image_region none = {0};
        r = transfer_image_locked(&dev->q, img->ai, &none, img->texel, NULL, false, true);
        if (r == SALVO_OK)
            live_link_locked(dev, &img->res);
    } else if (ar == ACCEL_ERROR_DEVICE_LOST) {
        queue_mark_lost_locked(&dev->q);
    }
    if (ar != ACCEL_SUCCESS || r != SALVO_OK) {
        /* Nothing used it: nothing to wait for. */
        VT(dev)->image_destroy(SELF(dev), dev->adev, img->ai);
    }
    salvo_mutex_unlock(&dev->q.lock);
    if (ar != ACCEL_SUCCESS) {
        salvo_mem_free(dev->alloc, img);
        return DEV_FAIL(dev, salvo_status_from_accel(ar),
                        "image_create: %s of %ux%ux%u %s (%u layers): %s", step, d.width,
                        d.height, d.depth, salvo_format_name(d.format), d.layers,
                        accel_result_name(ar));
    }
    if (r != SALVO_OK) {
        salvo_mem_free(dev->alloc, img);
        return r;
    }
    COUNT_ADD(dev, live_images, 1);
    COUNT_ADD(dev, live_image_bytes, bytes);
    salvo_clear_error();
    *out = img;
    return SALVO_OK;
}

salvo_status salvo_image_desc_get(const salvo_image *img, salvo_image_desc *out)
{
    if (!img || !out)
        return SALVO_FAIL(img ? &img->dev->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "image_desc_get: %s is NULL", img ? "out" : "image");
    *out = img->desc;
    salvo_clear_error();
    return SALVO_OK;
}

void salvo_image_destroy(salvo_image *img)
{
    if (img)
        device_let_go(img->dev, &img->res);
}

salvo_status image_region_resolve(salvo_image *img, const salvo_image_region *in,
                                  const char *call, accel_image_region *out, uint64_t *bytes)
{
    salvo_device *dev = img->dev;
    const salvo_image_desc *d = &img->desc;
    salvo_image_region r = in ? *in : (salvo_image_region){0};
    uint32_t ext[4] = {d->width, d->height, d->depth, d->layers};
    uint32_t org[4] = {r.x, r.y, r.z, r.layer};
    uint32_t len[4] = {r.width, r.height, r.depth, r.layers};
    static const char *const axis[4] = {"x", "y", "z", "layer"};
    for (int i = 0; i < 4; i++) {
        if (org[i] >= ext[i] || len[i] > ext[i] - org[i])
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "%s: region %s [%u, +%u) outside the image's %u", call, axis[i],
                            org[i], len[i], ext[i]);
        if (len[i] == 0)
            len[i] = ext[i] - org[i];
    }
    *out = (accel_image_region){org[0], org[1], org[2], len[0], len[1], len[2], org[3], len[3]};
    *bytes = (uint64_t)len[0] * len[1] * len[2] * len[3] * img->texel;
    return SALVO_OK;
}

static salvo_status image_transfer(salvo_image *img, const salvo_image_region *region,
                                   void *host, uint64_t size, bool to_host)
{
    const char *what = to_host ? "image_read" : "image_write";
    if (!img)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "%s: image is NULL", what);
    salvo_device *dev = img->dev;
    if (!host)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "%s: host pointer is NULL", what);
    if (host_call_running)
        return host_call_refuse(dev, what);
    accel_image_region box;
    uint64_t bytes;
    salvo_status r = image_region_resolve(img, region, what, &box, &bytes);
    if (r != SALVO_OK)
        return r;
    if (size != bytes)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "%s: size %llu, the region holds %llu bytes (%ux%ux%u, %u layers of %u "
                        "bytes a texel)",
                        what, (unsigned long long)size, (unsigned long long)bytes, box.width,
                        box.height, box.depth, box.layers, img->texel);
    salvo_mutex_lock(&dev->q.lock);
    if (to_host && graph_capture_writes_locked(dev, &img->res)) {
        salvo_mutex_unlock(&dev->q.lock);
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE,
                        "image_read: a capture in progress writes this image; its nodes run only "
                        "when the graph is replayed");
    }
    r = transfer_settle_locked(&dev->q, (const accel_buffer *)(const void *)img->ai,
                               resource_last_use(&img->res), to_host, true);
    if (r == SALVO_OK)
        r = transfer_image_locked(&dev->q, img->ai, &box, img->texel, host, to_host, false);
    salvo_mutex_unlock(&dev->q.lock);
    if (r == SALVO_OK) {
        COUNT_ADD(dev, transfer_bytes, size);
        salvo_clear_error();
    }
    return r;
}

salvo_status salvo_image_write(salvo_image *img, const salvo_image_region *region,
                               const void *src, uint64_t size)
{
    return image_transfer(img, region, (void *)src, size, false);
}

salvo_status salvo_image_read(salvo_image *img, const salvo_image_region *region, void *dst,
                              uint64_t size)
{
    return image_transfer(img, region, dst, size, true);
}

static salvo_status copy_image(salvo_stream *st, salvo_buffer *buf, uint64_t offset,
                               salvo_image *img, const salvo_image_region *region, bool to_image)
{
    const char *what = to_image ? "copy_buffer_to_image" : "copy_image_to_buffer";
    if (!st || !buf || !img)
        return SALVO_FAIL(st ? &stream_device(st)->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "%s: %s is NULL", what, !st ? "stream" : !buf ? "buffer" : "image");
    salvo_device *dev = stream_device(st);
    if (buf->dev != dev || img->dev != dev)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "%s: the %s belongs to another device",
                        what, buf->dev != dev ? "buffer" : "image");
    if (host_call_running)
        return host_call_refuse(dev, what);
    accel_image_region box;
    uint64_t bytes;
    salvo_status r = image_region_resolve(img, region, what, &box, &bytes);
    if (r != SALVO_OK)
        return r;
    if (offset % img->texel || offset >= buf->size || bytes > buf->size - offset)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "%s: %llu bytes at offset %llu of a buffer of %llu (the offset a "
                        "multiple of the texel size, %u)",
                        what, (unsigned long long)bytes, (unsigned long long)offset,
                        (unsigned long long)buf->size, img->texel);
    /* Hazards know an image as a whole: range [0, 1). */
    accel_bind buffer_end = {.buffer = buf->ab, .offset = offset, .size = bytes};
    accel_bind image_end = {.image = img->ai, .offset = 0, .size = 1};
    accel_bind ends[2] = {to_image ? buffer_end : image_end, to_image ? image_end : buffer_end};
    resource *of[2] = {to_image ? &buf->res : &img->res, to_image ? &img->res : &buf->res};
    command c = {.kind = COMMAND_IMAGE_COPY, .binds = ends, .bind_count = 2, .push = &box,
                 .push_size = sizeof box};
    stream_call call = {.bytes = bytes, .holds = &(command_holds){.of = of}};
    return stream_call_command(st, &c, &call);
}

salvo_status salvo_copy_buffer_to_image(salvo_stream *st, salvo_buffer *src, uint64_t src_offset,
                                        salvo_image *dst, const salvo_image_region *region)
{
    return copy_image(st, src, src_offset, dst, region, true);
}

salvo_status salvo_copy_image_to_buffer(salvo_stream *st, salvo_image *src,
                                        const salvo_image_region *region, salvo_buffer *dst,
                                        uint64_t dst_offset)
{
    return copy_image(st, dst, dst_offset, src, region, false);
}

static const char *const type_names[] = {"?", "1D", "2D", "3D", "2D array"};

/* 2D images and 2D arrays are both Vulkan's 2D images: copies between
 * them take a box of layers; 1D and 3D copy with their own kind only. */
static int image_copy_class(salvo_image_type type)
{
    return type == SALVO_IMAGE_2D_ARRAY ? SALVO_IMAGE_2D : (int)type;
}

static bool spans_overlap(uint32_t a, uint32_t alen, uint32_t b, uint32_t blen)
{
    return a < b + blen && b < a + alen;
}

salvo_status salvo_copy_image(salvo_stream *st, salvo_image *src,
                              const salvo_image_region *src_region, salvo_image *dst,
                              const salvo_image_region *dst_region)
{
    if (!st || !src || !dst)
        return SALVO_FAIL(st ? &stream_device(st)->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "copy_image: %s is NULL", !st ? "stream" : !src ? "src" : "dst");
    salvo_device *dev = stream_device(st);
    if (src->dev != dev || dst->dev != dev)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "copy_image: the %s image belongs to another device",
                        src->dev != dev ? "source" : "destination");
    if (host_call_running)
        return host_call_refuse(dev, "copy_image");
    command_image_pair pair;
    uint64_t bytes, dst_bytes;
    salvo_status r =
        image_region_resolve(src, src_region, "copy_image (source)", &pair.src, &bytes);
    if (r == SALVO_OK)
        r = image_region_resolve(dst, dst_region, "copy_image (destination)", &pair.dst,
                                 &dst_bytes);
    if (r != SALVO_OK)
        return r;
    const salvo_image_desc *sd = &src->desc, *dd = &dst->desc;
    if (src->texel != dst->texel)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "copy_image: formats %s and %s have texels of %u and %u bytes (a copy "
                        "takes texels of one size)",
                        salvo_format_name(sd->format), salvo_format_name(dd->format), src->texel,
                        dst->texel);
    if (image_copy_class(sd->type) != image_copy_class(dd->type))
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "copy_image: from a %s image to a %s one (1D, 2D or 2D array, and 3D "
                        "copy with their own kind)",
                        type_names[sd->type], type_names[dd->type]);
    const accel_image_region *a = &pair.src, *b = &pair.dst;
    if (a->width != b->width || a->height != b->height || a->depth != b->depth ||
        a->layers != b->layers)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "copy_image: the source region is %ux%ux%u (%u layers), the destination "
                        "%ux%ux%u (%u layers); they must be the same",
                        a->width, a->height, a->depth, a->layers, b->width, b->height, b->depth,
                        b->layers);
    /* A layer is in one layout for a copy, that of its source or its
     * destination (accel.h): one image's regions take different layers. */
    if (src == dst && spans_overlap(a->layer, a->layers, b->layer, b->layers))
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "copy_image: within one image the regions must be in different layers "
                        "(source layers [%u, +%u), destination [%u, +%u))",
                        a->layer, a->layers, b->layer, b->layers);
    /* Hazards know an image as a whole: range [0, 1). */
    accel_bind ends[2] = {{.image = src->ai, .offset = 0, .size = 1},
                          {.image = dst->ai, .offset = 0, .size = 1}};
    command c = {.kind = COMMAND_IMAGE_TO_IMAGE, .binds = ends, .bind_count = 2, .push = &pair,
                 .push_size = sizeof pair};
    resource *of[2] = {&src->res, &dst->res};
    stream_call call = {.bytes = bytes, .holds = &(command_holds){.of = of}};
    return stream_call_command(st, &c, &call);
}

/* ------------------------------------------------------------------ */
/* Samplers                                                            */
/* ------------------------------------------------------------------ */

static void sampler_release(retire_entry *e, bool abandoned)
{
    (void)abandoned;
    salvo_sampler *s = resource_as_sampler(resource_of_release(e));
    salvo_device *dev = s->dev;
    salvo_mutex_held(&dev->q.lock); /* releases run under the lock */
    live_unlink_locked(dev, &s->res);
    VT(dev)->sampler_destroy(SELF(dev), dev->adev, s->as);
    COUNT_SUB(dev, live_samplers, 1);
    salvo_mem_free(dev->alloc, s);
}

salvo_status salvo_sampler_create(salvo_device *dev, const salvo_sampler_desc *desc,
                                  salvo_sampler **out)
{
    if (out)
        *out = NULL;
    if (!dev || !out)
        return SALVO_FAIL(dev ? &dev->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "sampler_create: %s is NULL", dev ? "out" : "device");
    salvo_sampler_desc d = desc ? *desc : (salvo_sampler_desc){0};
    if (d.filter != SALVO_FILTER_NEAREST && d.filter != SALVO_FILTER_LINEAR)
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT, "sampler_create: unknown filter %d",
                        (int)d.filter);
    for (int i = 0; i < 3; i++) {
        if (d.address[i] < SALVO_ADDRESS_CLAMP_TO_EDGE || d.address[i] > SALVO_ADDRESS_CLAMP_TO_BORDER)
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "sampler_create: unknown address mode %d for %c", (int)d.address[i],
                            "uvw"[i]);
        if (d.unnormalized && d.address[i] != SALVO_ADDRESS_CLAMP_TO_EDGE &&
            d.address[i] != SALVO_ADDRESS_CLAMP_TO_BORDER)
            return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                            "sampler_create: unnormalized coordinates take CLAMP_TO_EDGE or "
                            "CLAMP_TO_BORDER only (%c)",
                            "uvw"[i]);
    }
    if (!VT(dev)->sampler_create)
        return DEV_FAIL(dev, SALVO_ERROR_UNSUPPORTED, "sampler_create: the device has no images");
    if (device_is_lost(dev))
        return device_lost_error(dev);
    salvo_sampler *s = salvo_mem_calloc(dev->alloc, 1, sizeof *s);
    if (!s)
        return DEV_FAIL(dev, SALVO_ERROR_OUT_OF_HOST_MEMORY, "sampler_create: out of host memory");
    s->desc = d;
    s->dev = dev;
    resource_init(&s->res, RESOURCE_SAMPLER, sampler_release, 0);
    accel_sampler_desc ad = {d.filter == SALVO_FILTER_LINEAR,
                             {(uint8_t)d.address[0], (uint8_t)d.address[1], (uint8_t)d.address[2]},
                             d.unnormalized};
    salvo_mutex_lock(&dev->q.lock);
    accel_result ar = VT(dev)->sampler_create(SELF(dev), dev->adev, &ad, &s->as);
    if (ar == ACCEL_SUCCESS)
        live_link_locked(dev, &s->res);
    else if (ar == ACCEL_ERROR_DEVICE_LOST)
        queue_mark_lost_locked(&dev->q);
    salvo_mutex_unlock(&dev->q.lock);
    if (ar != ACCEL_SUCCESS) {
        salvo_mem_free(dev->alloc, s);
        return DEV_FAIL(dev, salvo_status_from_accel(ar), "sampler_create: %s",
                        accel_result_name(ar));
    }
    COUNT_ADD(dev, live_samplers, 1);
    salvo_clear_error();
    *out = s;
    return SALVO_OK;
}

void salvo_sampler_destroy(salvo_sampler *s)
{
    if (s)
        device_let_go(s->dev, &s->res);
}
