#version 450
#extension GL_GOOGLE_include_directive : require
// q = A p over rows [row_begin, row_end) (CSR, one invocation per row,
// grid stride), and this workgroup's share of p . q into
// partial[partial_base + group]: the dot product rides on the product so
// that q is not read again. cg runs it over all rows; cg_mpi over the
// interior rows first (while the halo is exchanged), then over the rows
// next to each neighbour, with partial sums of their own.
// p is indexed as the columns are: row i's own element is p[i + p_offset]
// (cg_mpi keeps the halo from the rank below in front of its rows).
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer RowPtr { uint row_ptr[]; };
layout(std430, set = 0, binding = 1) readonly buffer Col { uint col[]; };
layout(std430, set = 0, binding = 2) readonly buffer Val { double val[]; };
layout(std430, set = 0, binding = 3) readonly buffer P { double p[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Q { double q[]; };
layout(std430, set = 0, binding = 5) writeonly buffer Partial { double partial[]; };
layout(push_constant) uniform Push {
    uint row_begin;
    uint row_end;
    uint p_offset;
    uint partial_base;
} pc;

#include "block_sum.glsl"

void main()
{
    uint stride = gl_NumWorkGroups.x * 256u;
    double acc = 0.0;
    for (uint i = pc.row_begin + gl_GlobalInvocationID.x; i < pc.row_end; i += stride) {
        double sum = 0.0;
        uint end = row_ptr[i + 1u];
        for (uint k = row_ptr[i]; k < end; k++)
            sum += val[k] * p[col[k]];
        q[i] = sum;
        acc += p[i + pc.p_offset] * sum;
    }
    double total = block_sum(acc);
    if (gl_LocalInvocationID.x == 0u)
        partial[pc.partial_base + gl_WorkGroupID.x] = total;
}
