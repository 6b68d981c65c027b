/* Image formats: names, texel sizes, what texels read as in a kernel,
 * and what the device offers for each. A leaf of api/: launch checks
 * and images both ask it, and it calls neither. */
#include <string.h>

#include "api/internal.h"

#define VT(dev) ((dev)->acc.vt)
#define SELF(dev) ((dev)->acc.self)

static const struct {
    const char *name;
    uint8_t bytes;
} format_table[SALVO_FORMAT_COUNT] = {
#define F(n, b) [SALVO_FORMAT_##n] = {#n, b}
    F(R8_UNORM, 1), F(R8_SNORM, 1), F(R8_UINT, 1), F(R8_SINT, 1),
    F(RG8_UNORM, 2), F(RG8_SNORM, 2), F(RG8_UINT, 2), F(RG8_SINT, 2),
    F(RGBA8_UNORM, 4), F(RGBA8_SNORM, 4), F(RGBA8_UINT, 4), F(RGBA8_SINT, 4),
    F(R16_UNORM, 2), F(R16_SNORM, 2), F(R16_UINT, 2), F(R16_SINT, 2), F(R16_FLOAT, 2),
    F(RG16_UNORM, 4), F(RG16_SNORM, 4), F(RG16_UINT, 4), F(RG16_SINT, 4), F(RG16_FLOAT, 4),
    F(RGBA16_UNORM, 8), F(RGBA16_SNORM, 8), F(RGBA16_UINT, 8), F(RGBA16_SINT, 8),
    F(RGBA16_FLOAT, 8),
    F(R32_UINT, 4), F(R32_SINT, 4), F(R32_FLOAT, 4),
    F(RG32_UINT, 8), F(RG32_SINT, 8), F(RG32_FLOAT, 8),
    F(RGBA32_UINT, 16), F(RGBA32_SINT, 16), F(RGBA32_FLOAT, 16),
#undef F
};

bool format_known(salvo_format f)
{
    return f > SALVO_FORMAT_UNDEFINED && f < SALVO_FORMAT_COUNT;
}

uint32_t salvo_format_texel_size(salvo_format format)
{
    return format_known(format) ? format_table[format].bytes : 0;
}

const char *salvo_format_name(salvo_format format)
{
    if (format == SALVO_FORMAT_UNDEFINED)
        return "UNDEFINED";
    return format_known(format) ? format_table[format].name : "unknown";
}

/* What texels of the format read as in a kernel (REFLECT_TEXEL_*). */
uint8_t image_texel_class(salvo_format f)
{
    const char *n = format_table[f].name;
    size_t len = strlen(n);
    if (len > 4 && strcmp(n + len - 4, "UINT") == 0)
        return REFLECT_TEXEL_UINT;
    if (len > 4 && strcmp(n + len - 4, "SINT") == 0)
        return REFLECT_TEXEL_SINT;
    return REFLECT_TEXEL_FLOAT;
}

uint32_t image_support(salvo_device *dev, salvo_format format)
{
    return VT(dev)->image_format_support ? VT(dev)->image_format_support(SELF(dev), dev->adev, format)
                                         : 0;
}

salvo_status salvo_image_format_support(salvo_device *dev, salvo_format format, uint32_t *usage)
{
    if (usage)
        *usage = 0;
    if (!dev || !usage)
        return SALVO_FAIL(dev ? &dev->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "image_format_support: %s is NULL", dev ? "usage" : "device");
    if (!format_known(format))
        return DEV_FAIL(dev, SALVO_ERROR_INVALID_ARGUMENT,
                        "image_format_support: unknown format %d", (int)format);
    *usage = image_support(dev, format);
    salvo_clear_error();
    return SALVO_OK;
}
