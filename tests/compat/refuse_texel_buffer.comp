#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// Refused: a storage texel buffer that main uses.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { uint d[]; };
layout(binding = 1, r32ui) uniform readonly uimageBuffer texels;
void main()
{
    int i = int(gl_GlobalInvocationID.x);
    d[i] = imageLoad(texels, i).x;
}
