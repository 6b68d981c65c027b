#version 450
// image-filter, pass 2: the vertical half of the Gaussian blur, storage
// image to storage image (both rgba8); rows past the top and bottom repeat
// the edge row, as the sampler of pass 1 does for columns.
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0, rgba8) uniform readonly image2D src;
layout(binding = 1, rgba8) uniform writeonly image2D dst;
layout(push_constant) uniform Taps { int radius; float weight[13]; } taps;
void main()
{
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    ivec2 size = imageSize(src);
    if (p.x >= size.x || p.y >= size.y)
        return;
    vec4 acc = taps.weight[0] * imageLoad(src, p);
    for (int i = 1; i <= taps.radius; i++)
        acc += taps.weight[i] * (imageLoad(src, ivec2(p.x, max(p.y - i, 0))) +
                                 imageLoad(src, ivec2(p.x, min(p.y + i, size.y - 1))));
    imageStore(dst, p, acc);
}
