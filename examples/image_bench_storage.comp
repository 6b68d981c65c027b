#version 450
// image-bench: 3x3 box blur, edges clamped, between two r32f storage
// images (imageLoad/imageStore).
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0, r32f) uniform readonly image2D src;
layout(binding = 1, r32f) uniform writeonly image2D dst;
void main()
{
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    ivec2 size = imageSize(src);
    if (p.x >= size.x || p.y >= size.y)
        return;
    float acc = 0.0;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
            acc += imageLoad(src, clamp(p + ivec2(dx, dy), ivec2(0), size - 1)).x;
    imageStore(dst, p, vec4(acc / 9.0));
}
