#version 450
// image-filter, pass 3: Sobel edge magnitude of the blurred picture's
// luma (Rec. 601 weights), edges clamped, times a gain, into an r8 storage
// image (r8 needs the device's shaderStorageImageExtendedFormats).
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0, rgba8) uniform readonly image2D src;
layout(binding = 1, r8) uniform writeonly image2D dst;
layout(push_constant) uniform P { float gain; } pc;

ivec2 size;

float luma(ivec2 q)
{
    return dot(imageLoad(src, clamp(q, ivec2(0), size - 1)).rgb, vec3(0.299, 0.587, 0.114));
}

void main()
{
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    size = imageSize(src);
    if (p.x >= size.x || p.y >= size.y)
        return;
    float nw = luma(p + ivec2(-1, -1)), n = luma(p + ivec2(0, -1)), ne = luma(p + ivec2(1, -1));
    float w = luma(p + ivec2(-1, 0)), e = luma(p + ivec2(1, 0));
    float sw = luma(p + ivec2(-1, 1)), s = luma(p + ivec2(0, 1)), se = luma(p + ivec2(1, 1));
    float gx = (ne + 2.0 * e + se) - (nw + 2.0 * w + sw);
    float gy = (sw + 2.0 * s + se) - (nw + 2.0 * n + ne);
    imageStore(dst, p, vec4(clamp(sqrt(gx * gx + gy * gy) * pc.gain, 0.0, 1.0)));
}
