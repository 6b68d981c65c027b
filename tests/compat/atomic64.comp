#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// 64-bit atomics on a buffer.
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { uint64_t total; uint64_t top; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    atomicAdd(total, uint64_t(i + 1u) << 33);
    atomicMax(top, (uint64_t(i) << 40) | 0x55ul);
}
