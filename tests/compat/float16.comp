#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// Float16 arithmetic, stored as 32-bit float bits: every value is exact
// in half precision.
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { uint d[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    float16_t h = float16_t(i) * float16_t(0.5) + float16_t(0.25);
    d[i] = floatBitsToUint(float(h));
}
