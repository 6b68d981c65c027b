#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// 16-bit storage: uint16_t and float16_t read from one buffer and written
// to another, converted through 32 bits (no 16-bit arithmetic).
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) writeonly buffer Out { uint16_t o[64]; float16_t oh[64]; };
layout(std430, binding = 1) readonly buffer In { uint16_t v[64]; float16_t h[64]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    o[i] = uint16_t(uint(v[63u - i]) * 5u + 2u);
    oh[i] = float16_t(float(h[i]) * 2.0 + 0.5);
}
