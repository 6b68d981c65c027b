#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// Int16 arithmetic (wrapping at 16 bits), stored as 32-bit ints: no
// 16-bit storage involved.
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { int d[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    int16_t v = int16_t(i) * int16_t(1000) + int16_t(7);
    d[i] = int(v);
}
