#version 450
// targets: vulkan1.3
// optional: built only where glslang knows GL_EXT_integer_dot_product
// Integer dot product of packed 4x8-bit vectors (DotProduct capabilities).
#extension GL_EXT_integer_dot_product : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { int d[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    // bytes (i, 1, -2, 3) . (2, i, 5, -1) = 3i - 13
    int a = int((i & 0xffu) | (1u << 8) | (0xfeu << 16) | (3u << 24));
    int b = int(2u | ((i & 0xffu) << 8) | (5u << 16) | (0xffu << 24));
    d[i] = dotPacked4x8EXT(a, b);
}
