// The solver's scalars: cg_scalars in cg_common.h (std430: six doubles,
// then two uints, 56 bytes). Included by the kernels that bind them, each
// declaring the block with the access it needs (SCALARS_ACCESS), so that
// salvo's barriers only order what really conflicts.
layout(std430, set = 0, binding = SCALARS_BINDING) SCALARS_ACCESS buffer Scalars {
    double rr;        // r . r of the current residual
    double pq;        // p . A p of this iteration
    double alpha;
    double beta;
    double stop_rr;   // stop once rr <= this
    double local_sum; // CG_REDUCE_LOCAL's result (MPI)
    uint iter;        // iterations done (not counted once stopped)
    uint done;        // 0, or the iteration at which rr fell under stop_rr
} s;
