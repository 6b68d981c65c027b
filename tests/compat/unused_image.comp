#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// A storage image declared but not used by main: the module declares it
// (checked with spirv-dis), the kernel does not bind it.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { uint d[]; };
layout(binding = 3, rgba8) uniform image2D img;
void main()
{
    uint i = gl_GlobalInvocationID.x;
    d[i] = i * 7u + 2u;
}
