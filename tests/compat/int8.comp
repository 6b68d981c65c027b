#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// Int8 arithmetic (wrapping at 8 bits), stored as 32-bit uints: no 8-bit
// storage involved.
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { uint d[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    uint8_t v = uint8_t(i) * uint8_t(11) + uint8_t(5);
    d[i] = uint(v);
}
