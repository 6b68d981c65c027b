#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// 64-bit float atomic add on a buffer (AtomicFloat64AddEXT).
#extension GL_EXT_shader_atomic_float : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { double total; };
void main()
{
    atomicAdd(total, double(gl_GlobalInvocationID.x) + 0.25LF);
}
