#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// Int64 arithmetic past 32 bits.
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { uint64_t d[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    d[i] = (uint64_t(i) << 36) * 3ul + 0xfedcba987ul;
}
