#version 450
#extension GL_GOOGLE_include_directive : require
// p = r + beta p over [0, n) (p's own rows, from p_offset).
layout(local_size_x = 256) in;
#define SCALARS_BINDING 0
#define SCALARS_ACCESS readonly
#include "scalars.glsl"
layout(std430, set = 0, binding = 1) readonly buffer R { double r[]; };
layout(std430, set = 0, binding = 2) buffer P { double p[]; };
layout(push_constant) uniform Push { uint n; uint p_offset; } pc;

void main()
{
    uint stride = gl_NumWorkGroups.x * 256u;
    double beta = s.beta;
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride)
        p[i + pc.p_offset] = r[i] + beta * p[i + pc.p_offset];
}
