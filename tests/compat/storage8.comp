#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// 8-bit storage: uint8_t read from one buffer and written to another,
// converted through 32 bits (no 8-bit arithmetic).
#extension GL_EXT_shader_8bit_storage : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) writeonly buffer Out { uint8_t o[]; };
layout(std430, binding = 1) readonly buffer In { uint8_t v[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    o[i] = uint8_t(uint(v[63u - i]) * 3u + 1u);
}
