#version 450
#extension GL_GOOGLE_include_directive : require
// x += alpha p, r -= alpha q over [0, n), and this workgroup's share of
// the new r . r into partial[group]: one pass over the vectors.
layout(local_size_x = 256) in;
#define SCALARS_BINDING 0
#define SCALARS_ACCESS readonly
#include "scalars.glsl"
layout(std430, set = 0, binding = 1) readonly buffer P { double p[]; };
layout(std430, set = 0, binding = 2) readonly buffer Q { double q[]; };
layout(std430, set = 0, binding = 3) buffer X { double x[]; };
layout(std430, set = 0, binding = 4) buffer R { double r[]; };
layout(std430, set = 0, binding = 5) writeonly buffer Partial { double partial[]; };
layout(push_constant) uniform Push { uint n; uint p_offset; } pc;

#include "block_sum.glsl"

void main()
{
    uint stride = gl_NumWorkGroups.x * 256u;
    double alpha = s.alpha;
    double acc = 0.0;
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) {
        x[i] += alpha * p[i + pc.p_offset];
        double ri = r[i] - alpha * q[i];
        r[i] = ri;
        acc += ri * ri;
    }
    double total = block_sum(acc);
    if (gl_LocalInvocationID.x == 0u)
        partial[gl_WorkGroupID.x] = total;
}
