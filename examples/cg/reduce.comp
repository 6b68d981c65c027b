#version 450
#extension GL_GOOGLE_include_directive : require
// The second pass of a dot product: one workgroup sums the first pass's
// `count` partial sums, then, by `mode` (CG_REDUCE_* in cg_common.h):
//  0: pq = sum, alpha = rr / pq;
//  1: rr' = sum, beta = rr' / rr, rr = rr', and the stop test: once
//     rr' <= stop_rr, `done` keeps the iteration and alpha and beta are 0
//     from then on, so further iterations (the rest of a replay of k)
//     leave x and r as they are: the host need not look every iteration;
//  2: local_sum = sum (cg_mpi: the host reduces across ranks and writes
//     alpha and beta itself).
// This is what keeps an iteration free of host round trips: alpha and
// beta never leave the device.
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer Partial { double partial[]; };
#define SCALARS_BINDING 1
#define SCALARS_ACCESS
#include "scalars.glsl"
layout(push_constant) uniform Push { uint count; uint mode; } pc;

#include "block_sum.glsl"

void main()
{
    double acc = 0.0;
    for (uint g = gl_LocalInvocationID.x; g < pc.count; g += 256u)
        acc += partial[g];
    double sum = block_sum(acc);
    if (gl_LocalInvocationID.x != 0u)
        return;
    if (pc.mode == 0u) {
        s.pq = sum;
        // pq is 0 only once r (hence p) is exactly 0: nothing left to do.
        s.alpha = (s.done != 0u || sum == 0.0) ? 0.0 : s.rr / sum;
    } else if (pc.mode == 1u) {
        if (s.done != 0u) {
            s.beta = 0.0;
        } else {
            s.iter += 1u;
            s.beta = s.rr == 0.0 ? 0.0 : sum / s.rr;
            s.rr = sum;
            if (sum <= s.stop_rr)
                s.done = s.iter;
        }
    } else {
        s.local_sum = sum;
    }
}
