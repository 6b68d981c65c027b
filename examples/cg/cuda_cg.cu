/*
 * cuda-cg: the CUDA yardstick for cg.c. The same algorithm, the same
 * matrix, the same kernels written by hand (no cuSPARSE, no cuBLAS), the
 * same graphs, the same timing and the same output (cg_common.h), so that
 * the two can be run side by side on one machine and their lines compared.
 *
 *     nvcc -O3 -arch=sm_90 -o cuda_cg examples/cg/cuda_cg.cu
 *     cuda_cg [--rows N] [--2d] [--k K] [--bench-iters N] [--reps R] [--json FILE]
 *
 * (CMake builds it as cuda_cg where it finds a CUDA compiler.)
 *
 * As in cg.c: five kernels per iteration, the two reductions two-pass with
 * the second pass computing alpha and beta (and the stop test) on the
 * device; K iterations captured once from a stream into a graph, two such
 * graphs alternating, each copying the scalars to a slot of pinned host
 * memory, the host one replay behind the device. Timed runs: R runs of a
 * fixed number of iterations from x = 0, replays back to back, one
 * synchronize, host wall clock; the median.
 *
 * SPDX-License-Identifier: MIT
 */
#include <cuda_runtime.h>

#include "cg_common.h"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "cuda-cg: %s:%d: %s: %s\n", __FILE__, __LINE__, #x,                    \
                    cudaGetErrorString(e_));                                                       \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* The workgroup's sum of each thread's value, for thread 0 (block_sum.glsl:
 * the same tree, so the same rounding order within a block). */
__device__ double block_sum(double value, double *sums)
{
    const unsigned t = threadIdx.x;
    sums[t] = value;
    __syncthreads();
    for (unsigned w = CG_LOCAL / 2; w > 0; w >>= 1) {
        if (t < w)
            sums[t] += sums[t + w];
        __syncthreads();
    }
    return sums[0];
}

/* q = A p, and this block's share of p . q (spmv_dot.comp). */
__global__ void spmv_dot(const uint32_t *__restrict__ row_ptr, const uint32_t *__restrict__ col,
                         const double *__restrict__ val, const double *__restrict__ p,
                         double *__restrict__ q, double *__restrict__ partial, uint32_t n)
{
    __shared__ double sums[CG_LOCAL];
    const uint32_t stride = gridDim.x * CG_LOCAL;
    double acc = 0.0;
    for (uint32_t i = blockIdx.x * CG_LOCAL + threadIdx.x; i < n; i += stride) {
        double sum = 0.0;
        const uint32_t end = row_ptr[i + 1];
        for (uint32_t k = row_ptr[i]; k < end; k++)
            sum += val[k] * p[col[k]];
        q[i] = sum;
        acc += p[i] * sum;
    }
    const double total = block_sum(acc, sums);
    if (threadIdx.x == 0)
        partial[blockIdx.x] = total;
}

/* x += alpha p, r -= alpha q, and this block's share of r . r (update_xr.comp). */
__global__ void update_xr(const cg_scalars *__restrict__ s, const double *__restrict__ p,
                          const double *__restrict__ q, double *__restrict__ x,
                          double *__restrict__ r, double *__restrict__ partial, uint32_t n)
{
    __shared__ double sums[CG_LOCAL];
    const uint32_t stride = gridDim.x * CG_LOCAL;
    const double alpha = s->alpha;
    double acc = 0.0;
    for (uint32_t i = blockIdx.x * CG_LOCAL + threadIdx.x; i < n; i += stride) {
        x[i] += alpha * p[i];
        const double ri = r[i] - alpha * q[i];
        r[i] = ri;
        acc += ri * ri;
    }
    const double total = block_sum(acc, sums);
    if (threadIdx.x == 0)
        partial[blockIdx.x] = total;
}

/* p = r + beta p (update_p.comp). */
__global__ void update_p(const cg_scalars *__restrict__ s, const double *__restrict__ r,
                         double *__restrict__ p, uint32_t n)
{
    const uint32_t stride = gridDim.x * CG_LOCAL;
    const double beta = s->beta;
    for (uint32_t i = blockIdx.x * CG_LOCAL + threadIdx.x; i < n; i += stride)
        p[i] = r[i] + beta * p[i];
}

/* The second pass, one block; the modes of reduce.comp. */
__global__ void reduce(const double *__restrict__ partial, cg_scalars *s, uint32_t count,
                       uint32_t mode)
{
    __shared__ double sums[CG_LOCAL];
    double acc = 0.0;
    for (uint32_t g = threadIdx.x; g < count; g += CG_LOCAL)
        acc += partial[g];
    const double sum = block_sum(acc, sums);
    if (threadIdx.x != 0)
        return;
    if (mode == CG_REDUCE_ALPHA) {
        s->pq = sum;
        s->alpha = (s->done != 0 || sum == 0.0) ? 0.0 : s->rr / sum;
    } else if (mode == CG_REDUCE_BETA) {
        if (s->done != 0) {
            s->beta = 0.0;
        } else {
            s->iter += 1;
            s->beta = s->rr == 0.0 ? 0.0 : sum / s->rr;
            s->rr = sum;
            if (sum <= s->stop_rr)
                s->done = s->iter;
        }
    } else {
        s->local_sum = sum;
    }
}

int main(int argc, char **argv)
{
    cg_options o;
    if (cg_parse(argc, argv, &o))
        return 2;
    const uint32_t n = (uint32_t)o.rows;

    cg_csr m;
    double *hb = (double *)malloc((size_t)n * sizeof(double));
    double *hx = (double *)malloc((size_t)n * sizeof(double));
    double *times = (double *)malloc(o.reps * sizeof(double));
    if (cg_poisson(&o, 0, n, 0, &m) != 0 || !hb || !hx || !times) {
        fprintf(stderr, "cuda-cg: out of host memory for %u rows\n", n);
        return 1;
    }
    for (uint32_t i = 0; i < n; i++)
        hb[i] = 1.0;

    int dev = 0;
    CHECK(cudaGetDevice(&dev));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, dev));

    const size_t vec_bytes = (size_t)n * sizeof(double);
    uint32_t *row_ptr, *col;
    double *val, *b, *x, *r, *p, *q, *partial;
    cg_scalars *scalars, *scalars0, *snap;
    CHECK(cudaMalloc((void **)&row_ptr, ((size_t)n + 1) * 4));
    CHECK(cudaMalloc((void **)&col, m.nnz * 4));
    CHECK(cudaMalloc((void **)&val, m.nnz * 8));
    CHECK(cudaMalloc((void **)&b, vec_bytes));
    CHECK(cudaMalloc((void **)&x, vec_bytes));
    CHECK(cudaMalloc((void **)&r, vec_bytes));
    CHECK(cudaMalloc((void **)&p, vec_bytes));
    CHECK(cudaMalloc((void **)&q, vec_bytes));
    CHECK(cudaMalloc((void **)&partial, CG_MAX_GROUPS * sizeof(double)));
    CHECK(cudaMalloc((void **)&scalars, sizeof(cg_scalars)));
    CHECK(cudaMalloc((void **)&scalars0, sizeof(cg_scalars)));
    /* Pinned, so the graphs' copies go straight to it (cg.c: a HOST buffer). */
    CHECK(cudaMallocHost((void **)&snap, 2 * CG_SNAP_STRIDE));
    memset(snap, 0, 2 * CG_SNAP_STRIDE);

    CHECK(cudaMemcpy(row_ptr, m.row_ptr, ((size_t)n + 1) * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(col, m.col, m.nnz * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(val, m.val, m.nnz * 8, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(b, hb, vec_bytes, cudaMemcpyHostToDevice));
    double bb = 0;
    for (uint32_t i = 0; i < n; i++)
        bb += hb[i] * hb[i];
    cg_scalars s0;
    memset(&s0, 0, sizeof s0);
    s0.rr = bb;
    s0.stop_rr = o.tol * o.tol * bb;
    CHECK(cudaMemcpy(scalars0, &s0, sizeof s0, cudaMemcpyHostToDevice));

    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaEvent_t replayed[2];
    for (int j = 0; j < 2; j++)
        CHECK(cudaEventCreateWithFlags(&replayed[j], cudaEventDisableTiming));

    uint32_t groups = (n + CG_LOCAL - 1) / CG_LOCAL;
    if (groups > CG_MAX_GROUPS)
        groups = CG_MAX_GROUPS;

    /* Back to x = 0, captured as a graph (cg.c's reset). */
    cudaGraph_t graph;
    cudaGraphExec_t reset, iter[2];
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    CHECK(cudaMemsetAsync(x, 0, vec_bytes, stream));
    CHECK(cudaMemcpyAsync(r, b, vec_bytes, cudaMemcpyDeviceToDevice, stream));
    CHECK(cudaMemcpyAsync(p, b, vec_bytes, cudaMemcpyDeviceToDevice, stream));
    CHECK(cudaMemcpyAsync(scalars, scalars0, sizeof(cg_scalars), cudaMemcpyDeviceToDevice,
                          stream));
    CHECK(cudaStreamEndCapture(stream, &graph));
    CHECK(cudaGraphInstantiateWithFlags(&reset, graph, 0));
    CHECK(cudaGraphDestroy(graph));

    double t0 = cg_now_s();
    for (int j = 0; j < 2; j++) {
        CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        for (uint32_t it = 0; it < o.k; it++) {
            spmv_dot<<<groups, CG_LOCAL, 0, stream>>>(row_ptr, col, val, p, q, partial, n);
            CHECK(cudaGetLastError());
            reduce<<<1, CG_LOCAL, 0, stream>>>(partial, scalars, groups, CG_REDUCE_ALPHA);
            CHECK(cudaGetLastError());
            update_xr<<<groups, CG_LOCAL, 0, stream>>>(scalars, p, q, x, r, partial, n);
            CHECK(cudaGetLastError());
            reduce<<<1, CG_LOCAL, 0, stream>>>(partial, scalars, groups, CG_REDUCE_BETA);
            CHECK(cudaGetLastError());
            update_p<<<groups, CG_LOCAL, 0, stream>>>(scalars, r, p, n);
            CHECK(cudaGetLastError());
        }
        CHECK(cudaMemcpyAsync((char *)snap + j * CG_SNAP_STRIDE, scalars, sizeof(cg_scalars),
                              cudaMemcpyDeviceToHost, stream));
        CHECK(cudaStreamEndCapture(stream, &graph));
        CHECK(cudaGraphInstantiateWithFlags(&iter[j], graph, 0));
        CHECK(cudaGraphDestroy(graph));
    }
    const double capture_s = cg_now_s() - t0;

    /* The solve, one replay ahead of the host (see cg.c). Graphs are
     * uploaded by their first launch; a warm-up pass through both keeps
     * that out of the solve's time, as salvo records at end of capture. */
    for (int j = 0; j < 2; j++)
        CHECK(cudaGraphUpload(iter[j], stream));
    CHECK(cudaGraphUpload(reset, stream));
    CHECK(cudaGraphLaunch(reset, stream));
    CHECK(cudaStreamSynchronize(stream));
    t0 = cg_now_s();
    const uint32_t replays_max = o.max_iters / o.k;
    CHECK(cudaGraphLaunch(iter[0], stream));
    CHECK(cudaEventRecord(replayed[0], stream));
    for (uint32_t j = 0; j < replays_max; j++) {
        if (j + 1 < replays_max) {
            CHECK(cudaGraphLaunch(iter[(j + 1) % 2], stream));
            CHECK(cudaEventRecord(replayed[(j + 1) % 2], stream));
        }
        CHECK(cudaEventSynchronize(replayed[j % 2]));
        cg_scalars seen;
        memcpy(&seen, (const char *)snap + (j % 2) * CG_SNAP_STRIDE, sizeof seen);
        if (seen.done)
            break;
    }
    CHECK(cudaStreamSynchronize(stream));
    const double solve_s = cg_now_s() - t0;

    cg_scalars fin;
    CHECK(cudaMemcpy(&fin, scalars, sizeof fin, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hx, x, vec_bytes, cudaMemcpyDeviceToHost));
    const double true_rel = sqrt(cg_residual2(&m, hb, hx) / bb);

    cg_report rep;
    memset(&rep, 0, sizeof rep);
    rep.impl = "cuda";
    rep.device = prop.name;
    rep.ranks = 1;
    rep.nnz = m.nnz;
    rep.converged = fin.done != 0;
    rep.iterations = fin.done ? fin.done : fin.iter;
    rep.rel_residual = sqrt(fin.rr / bb);
    rep.true_rel_residual = true_rel;
    rep.passed = rep.converged && cg_residual_ok(true_rel, o.tol);
    rep.solve_s = solve_s;
    rep.us_per_iter = rep.us_per_iter_min = -1;
    rep.compute_us = rep.exchange_us = rep.reduce_us = -1;

    if (o.bench_iters) {
        for (uint32_t t = 0; t < o.reps; t++) {
            CHECK(cudaGraphLaunch(reset, stream));
            CHECK(cudaStreamSynchronize(stream));
            t0 = cg_now_s();
            for (uint32_t j = 0; j < o.bench_iters / o.k; j++)
                CHECK(cudaGraphLaunch(iter[j % 2], stream));
            CHECK(cudaStreamSynchronize(stream));
            times[t] = (cg_now_s() - t0) / o.bench_iters * 1e6;
        }
        rep.us_per_iter = cg_median(times, o.reps); /* sorts: times[0] is the fastest */
        rep.us_per_iter_min = times[0];
    }

    printf("graphs of %u iterations (%u kernels) captured in %.2f ms\n", o.k, 5 * o.k,
           capture_s * 1e3);
    cg_print_report(&o, &rep);
    int result = rep.passed ? 0 : 1;
    if (!rep.passed)
        fprintf(stderr, "cuda-cg: true residual %.3g over the tolerance %.3g%s\n", true_rel,
                o.tol, rep.converged ? "" : " (no convergence)");
    if (cg_write_json(&o, &rep) != 0)
        result = 1;

    for (int j = 0; j < 2; j++) {
        CHECK(cudaGraphExecDestroy(iter[j]));
        CHECK(cudaEventDestroy(replayed[j]));
    }
    CHECK(cudaGraphExecDestroy(reset));
    CHECK(cudaStreamDestroy(stream));
    void *all[] = {row_ptr, col, val, b, x, r, p, q, partial, scalars, scalars0};
    for (size_t j = 0; j < sizeof all / sizeof all[0]; j++)
        CHECK(cudaFree(all[j]));
    CHECK(cudaFreeHost(snap));
    free(times);
    free(hx);
    free(hb);
    cg_csr_free(&m);
    return result;
}
