#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// 32-bit float atomic add on a buffer (GL_EXT_shader_atomic_float): sums of
// small integers and halves are exact in any order.
#extension GL_EXT_shader_atomic_float : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { float total; float halves; float part[4]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    atomicAdd(total, float(i));
    atomicAdd(halves, 0.5);
    atomicAdd(part[i % 4u], 1.0);
}
