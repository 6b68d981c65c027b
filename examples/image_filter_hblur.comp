#version 450
// image-filter, pass 1: the horizontal half of a separable Gaussian blur.
// The input is read through a sampler (nearest, unnormalized coordinates,
// clamp to edge), so taps past the left and right borders repeat the edge
// texel without any clamping here. The sum goes to an rgba8 storage image.
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0) uniform sampler2D src;
layout(binding = 1, rgba8) uniform writeonly image2D dst;
// weight[0] is the centre tap, weight[i] the taps at -i and +i; they sum to
// 1 over the 2 * radius + 1 taps. The same struct as blur_push in
// image_filter.c (std430: 4 + 13 * 4 = 56 bytes).
layout(push_constant) uniform Taps { int radius; float weight[13]; } taps;
void main()
{
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    ivec2 size = imageSize(dst);
    if (p.x >= size.x || p.y >= size.y)
        return;
    // Texel centres: with nearest filtering, x + 0.5 reads texel x exactly.
    vec2 c = vec2(p) + 0.5;
    vec4 acc = taps.weight[0] * textureLod(src, c, 0.0);
    for (int i = 1; i <= taps.radius; i++)
        acc += taps.weight[i] * (textureLod(src, c - vec2(i, 0.0), 0.0) +
                                 textureLod(src, c + vec2(i, 0.0), 0.0));
    imageStore(dst, p, acc);
}
