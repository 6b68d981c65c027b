#version 450
// Add a value to every texel of an r32ui storage image, in place.
layout(local_size_x = 8, local_size_y = 8) in;
layout(binding = 0, r32ui) uniform uimage2D img;
layout(push_constant) uniform P { uint value; } pc;
void main()
{
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    ivec2 size = imageSize(img);
    if (p.x >= size.x || p.y >= size.y)
        return;
    imageStore(img, p, imageLoad(img, p) + uvec4(pc.value));
}
