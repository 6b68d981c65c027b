#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// A 32-byte push-constant block of mixed types.
layout(local_size_x = 64) in;
layout(push_constant) uniform Push { float a; uint b; vec2 c; uvec4 e; } pc;
layout(std430, binding = 0) buffer Out { uint d[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    d[i] = uint(pc.a * float(i)) + pc.b + uint(pc.c.x * pc.c.y) + pc.e[i % 4u];
}
