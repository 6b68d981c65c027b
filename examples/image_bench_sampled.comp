#version 450
// image-bench: 3x3 box blur read through a sampler (nearest, clamp to
// edge, normalized coordinates) from an R32_FLOAT sampled image, written
// to an r32f storage image. The sampler's addressing does the edge clamp:
// the coordinates are texel centres, neighbours outside the image
// included.
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0) uniform sampler2D src;
layout(binding = 1, r32f) uniform writeonly image2D dst;
void main()
{
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    ivec2 size = imageSize(dst);
    if (p.x >= size.x || p.y >= size.y)
        return;
    vec2 inv = 1.0 / vec2(size);
    vec2 centre = vec2(p) + 0.5;
    float acc = 0.0;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
            acc += textureLod(src, (centre + vec2(dx, dy)) * inv, 0.0).x;
    imageStore(dst, p, vec4(acc / 9.0));
}
