#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// Scalar block layout: vec3 at a 12-byte stride, and a vec3 at offset 4
// of a 16-byte struct (std430 would place them at 16 and 16 of 32).
#extension GL_EXT_scalar_block_layout : require
layout(local_size_x = 64) in;
struct S {
    float a;
    vec3 b;
};
layout(scalar, binding = 0) buffer Out { vec3 v[64]; S s[64]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    float f = float(i);
    v[i] = vec3(f, f * 2.0, f * 3.0) + 0.5;
    s[i].a = -f;
    s[i].b = vec3(f + 0.25, f + 0.5, f + 0.75);
}
