/*
 * What the three conjugate-gradient programs (cg.c on salvo, cuda_cg.cu on
 * CUDA, cg_mpi.c on salvo across MPI ranks) share, so that they solve the
 * same system, count the same bytes and print the same lines: the options,
 * the Poisson matrix in CSR, the CPU residual, the median, the report.
 *
 * Header only (static inline), and written in the common subset of C11 and
 * C++ because nvcc compiles cuda_cg.cu as C++: no designated initializers,
 * casts on malloc.
 *
 * The algorithm, per iteration, five kernels in every implementation:
 *
 *     spmv_dot   q = A p, and per workgroup sum(p * q)
 *     reduce     pq = sum of those; alpha = rr / pq
 *     update_xr  x += alpha p, r -= alpha q, and per workgroup sum(r * r)
 *     reduce     rr' = sum of those; beta = rr' / rr; rr = rr'; stop?
 *     update_p   p = r + beta p
 *
 * The two reductions are two-pass (per-workgroup sums, then one workgroup
 * over them) rather than atomics: the sum is then the same at every run,
 * so iteration counts repeat exactly, and the device needs no float64
 * atomics.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef CG_COMMON_H
#define CG_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The kernels' workgroup size, and the most workgroups a vector kernel is
 * given: beyond that each invocation loops (grid stride), so that the
 * second pass of a reduction reads at most CG_MAX_GROUPS partial sums
 * (4 per invocation of its single workgroup) at any size. 1024 groups of
 * 256 fill an H200 (132 SMs x 2048 threads). */
#define CG_LOCAL 256u
#define CG_MAX_GROUPS 1024u

/* Reduce kernel modes (its push constant `mode`). */
#define CG_REDUCE_ALPHA 0u /* pq = sum; alpha = rr / pq */
#define CG_REDUCE_BETA 1u  /* rr' = sum; beta = rr' / rr; stop test */
#define CG_REDUCE_LOCAL 2u /* local_sum = sum (MPI: the host reduces across ranks) */

/* The device's scalars, laid out as the kernels' std430 block `Scalars`:
 * six doubles then two uints, 56 bytes, no padding in C either. */
typedef struct cg_scalars {
    double rr;        /* r . r of the current residual */
    double pq;        /* p . A p of this iteration */
    double alpha;
    double beta;
    double stop_rr;   /* stop once rr <= this: (tol * |b|)^2 */
    double local_sum; /* CG_REDUCE_LOCAL's result */
    uint32_t iter;    /* iterations done (not counted once stopped) */
    uint32_t done;    /* 0, or the iteration at which rr fell under stop_rr */
} cg_scalars;

/* A snapshot of the scalars is copied to the host after every replay, into
 * one of two slots this far apart. */
#define CG_SNAP_STRIDE 64u

typedef struct cg_options {
    int dims;             /* 2: 5-point, 3: 7-point */
    uint64_t rows;        /* wanted rows; the grid is chosen near it */
    uint32_t nx, ny, nz;  /* the grid, when given (nz = 1 in 2D) */
    double tol;           /* relative residual |b - A x| / |b| */
    uint32_t max_iters;
    uint32_t k;           /* iterations per graph (and per convergence check) */
    uint32_t bench_iters; /* iterations per timed run (0: no timing) */
    uint32_t reps;        /* timed runs; the median is reported */
    const char *json;     /* append a JSON line to this file ("-": stdout) */
    const char *device;   /* device name (salvo); NULL: the default */
} cg_options;

static inline void cg_usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [--rows N | --nx X --ny Y [--nz Z]] [--2d] [--tol T] [--max-iters M]\n"
            "          [--k K] [--bench-iters N] [--reps R] [--json FILE|-] [--device NAME]\n"
            "  --rows N         about N rows (default 32768: a 32^3 grid); 10^4 to 10^7\n"
            "  --2d             5-point 2D Poisson (default: 7-point 3D)\n"
            "  --tol T          relative residual to reach (default 1e-8)\n"
            "  --max-iters M    give up after M iterations (default 20000)\n"
            "  --k K            iterations per graph replay and convergence check (default 10)\n"
            "  --bench-iters N  iterations per timed run, rounded up to a multiple of K\n"
            "                   (default 100; 0: no timing)\n"
            "  --reps R         timed runs, the median is reported (default 5)\n"
            "  --json FILE      append one JSON line with the results to FILE (- : stdout)\n",
            argv0);
}

/* 0 on success; prints the usage and returns 2 otherwise. */
static inline int cg_parse(int argc, char **argv, cg_options *o)
{
    memset(o, 0, sizeof *o);
    o->dims = 3;
    o->rows = 32768;
    o->tol = 1e-8;
    o->max_iters = 20000;
    o->k = 10;
    o->bench_iters = 100;
    o->reps = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--2d") == 0) {
            o->dims = 2;
            continue;
        }
        if (!v) {
            cg_usage(argv[0]);
            return 2;
        }
        i++;
        if (strcmp(a, "--rows") == 0)
            o->rows = strtoull(v, NULL, 0);
        else if (strcmp(a, "--nx") == 0)
            o->nx = (uint32_t)strtoul(v, NULL, 0);
        else if (strcmp(a, "--ny") == 0)
            o->ny = (uint32_t)strtoul(v, NULL, 0);
        else if (strcmp(a, "--nz") == 0)
            o->nz = (uint32_t)strtoul(v, NULL, 0);
        else if (strcmp(a, "--tol") == 0)
            o->tol = strtod(v, NULL);
        else if (strcmp(a, "--max-iters") == 0)
            o->max_iters = (uint32_t)strtoul(v, NULL, 0);
        else if (strcmp(a, "--k") == 0)
            o->k = (uint32_t)strtoul(v, NULL, 0);
        else if (strcmp(a, "--bench-iters") == 0)
            o->bench_iters = (uint32_t)strtoul(v, NULL, 0);
        else if (strcmp(a, "--reps") == 0)
            o->reps = (uint32_t)strtoul(v, NULL, 0);
        else if (strcmp(a, "--json") == 0)
            o->json = v;
        else if (strcmp(a, "--device") == 0)
            o->device = v;
        else {
            cg_usage(argv[0]);
            return 2;
        }
    }
    /* The grid: given, or as near the wanted rows as whole sides allow
     * (x and y the rounded root, z making up the rest). */
    if (o->nx || o->ny || o->nz) {
        if (!o->nz)
            o->nz = 1;
        o->dims = o->nz > 1 ? 3 : 2;
    } else if (o->dims == 2) {
        o->nx = o->ny = (uint32_t)llround(sqrt((double)o->rows));
        o->nz = 1;
    } else {
        o->nx = o->ny = (uint32_t)llround(cbrt((double)o->rows));
        if (o->nx)
            o->nz = (uint32_t)llround((double)o->rows / ((double)o->nx * o->nx));
    }
    uint64_t rows = (uint64_t)o->nx * o->ny * o->nz;
    /* Column indices and row pointers are 32-bit on the device: the
     * nonzeros (at most 7 a row) must fit. */
    if (o->nx < 2 || o->ny < 2 || o->nz < 1 || rows > (1ull << 29) || !(o->tol > 0) ||
        o->tol >= 1 || o->k < 1 || o->max_iters < 1 || o->reps < 1) {
        cg_usage(argv[0]);
        return 2;
    }
    o->rows = rows;
    /* Whole replays: the iteration counts are multiples of k. */
    o->max_iters = (o->max_iters + o->k - 1) / o->k * o->k;
    o->bench_iters = (o->bench_iters + o->k - 1) / o->k * o->k;
    return 0;
}

/* Rows of one z (3D) or y (2D) plane: the farthest a row's columns reach
 * from the diagonal, hence the halo a block of rows needs on either side. */
static inline uint32_t cg_plane(const cg_options *o)
{
    return o->dims == 3 ? o->nx * o->ny : o->nx;
}

/* A block of rows [lo, hi) of the Poisson matrix, columns stored as
 * (global column - col_base): what the rows' gathers index (the local
 * vector with its halo, in cg_mpi; the whole vector otherwise). */
typedef struct cg_csr {
    uint32_t rows;
    uint64_t nnz;
    uint32_t *row_ptr; /* rows + 1 */
    uint32_t *col;
    double *val;
} cg_csr;

static inline void cg_csr_free(cg_csr *m)
{
    free(m->row_ptr);
    free(m->col);
    free(m->val);
    memset(m, 0, sizeof *m);
}

/* The negative Laplacian, h = 1 dropped (it scales A and b alike): 2 * dims
 * on the diagonal, -1 for each neighbour inside the grid (zero Dirichlet
 * boundary), columns ascending. Symmetric positive definite, so CG
 * converges. Returns 0, or -1 when out of memory. */
static inline int cg_poisson(const cg_options *o, uint32_t lo, uint32_t hi, uint32_t col_base,
                             cg_csr *m)
{
    memset(m, 0, sizeof *m);
    const uint32_t nx = o->nx, ny = o->ny, nz = o->nz;
    const uint32_t plane = nx * ny;
    const uint32_t per_row = o->dims == 3 ? 7u : 5u;
    m->rows = hi - lo;
    m->row_ptr = (uint32_t *)malloc(((size_t)m->rows + 1) * sizeof *m->row_ptr);
    m->col = (uint32_t *)malloc((size_t)m->rows * per_row * sizeof *m->col);
    m->val = (double *)malloc((size_t)m->rows * per_row * sizeof *m->val);
    if (!m->row_ptr || !m->col || !m->val) {
        cg_csr_free(m);
        return -1;
    }
    const double diag = 2.0 * o->dims;
    uint64_t k = 0;
    for (uint32_t g = lo; g < hi; g++) {
        const uint32_t x = g % nx, y = (g / nx) % ny, z = g / plane;
        m->row_ptr[g - lo] = (uint32_t)k;
        /* Ascending column order: -z, -y, -x, diagonal, +x, +y, +z. */
        int64_t cols[7];
        double vals[7];
        int c = 0;
        if (o->dims == 3 && z > 0) {
            cols[c] = (int64_t)g - plane;
            vals[c++] = -1.0;
        }
        if (y > 0) {
            cols[c] = (int64_t)g - nx;
            vals[c++] = -1.0;
        }
        if (x > 0) {
            cols[c] = (int64_t)g - 1;
            vals[c++] = -1.0;
        }
        cols[c] = g;
        vals[c++] = diag;
        if (x + 1 < nx) {
            cols[c] = (int64_t)g + 1;
            vals[c++] = -1.0;
        }
        if (y + 1 < ny) {
            cols[c] = (int64_t)g + nx;
            vals[c++] = -1.0;
        }
        if (o->dims == 3 && z + 1 < nz) {
            cols[c] = (int64_t)g + plane;
            vals[c++] = -1.0;
        }
        for (int j = 0; j < c; j++, k++) {
            m->col[k] = (uint32_t)(cols[j] - col_base);
            m->val[k] = vals[j];
        }
    }
    m->row_ptr[m->rows] = (uint32_t)k;
    m->nnz = k;
    return 0;
}

/* sum over the block's rows of (b - A x)^2, in double on the CPU, with x
 * indexed as the columns are (see cg_csr). */
static inline double cg_residual2(const cg_csr *m, const double *b, const double *x_cols)
{
    double rr = 0;
    for (uint32_t i = 0; i < m->rows; i++) {
        double ax = 0;
        for (uint32_t k = m->row_ptr[i]; k < m->row_ptr[i + 1]; k++)
            ax += m->val[k] * x_cols[m->col[k]];
        const double r = b[i] - ax;
        rr += r * r;
    }
    return rr;
}

/* The least traffic an iteration needs, in bytes (what "GB/s" divides):
 * spmv_dot reads the row pointers (4 (n + 1)), columns and values
 * (12 nnz) and p (8 n, each element once: the gathers' repeats hit the
 * cache), writes q (8 n); update_xr reads p and q, reads and writes x and
 * r (48 n); update_p reads r, reads and writes p (24 n). The reductions'
 * partial sums (a few KiB) are left out. */
static inline double cg_bytes_per_iter(uint64_t rows, uint64_t nnz)
{
    return 12.0 * (double)nnz + 92.0 * (double)rows + 4.0;
}

static inline double cg_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int cg_cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of v[0..n) (sorts v). */
static inline double cg_median(double *v, uint32_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, cg_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* What every program reports; negative times mean "not measured". */
typedef struct cg_report {
    const char *impl;   /* "salvo", "cuda", "salvo-mpi" */
    const char *device; /* the device's name (rank 0's, for MPI) */
    int ranks;
    uint64_t nnz;
    uint32_t iterations;
    int converged;
    double rel_residual;      /* the solver's own (updated) residual */
    double true_rel_residual; /* |b - A x| / |b| on the CPU */
    int passed;
    double solve_s;
    double us_per_iter;     /* median of the timed runs */
    double us_per_iter_min; /* fastest timed run */
    double compute_us, exchange_us, reduce_us; /* MPI: per iteration, median run */
} cg_report;

static inline void cg_print_report(const cg_options *o, const cg_report *r)
{
    const double bytes = cg_bytes_per_iter(o->rows, r->nnz);
    printf("cg [%s] on %s: %dd grid %ux%ux%u, %llu rows, %llu nonzeros", r->impl, r->device,
           o->dims, o->nx, o->ny, o->nz, (unsigned long long)o->rows,
           (unsigned long long)r->nnz);
    if (r->ranks > 1)
        printf(", %d ranks", r->ranks);
    printf(", k = %u\n", o->k);
    printf("solve: %u iterations%s in %.3f s, residual %.3g, true residual %.3g, tolerance "
           "%.3g: %s\n",
           r->iterations, r->converged ? "" : " (not converged)", r->solve_s, r->rel_residual,
           r->true_rel_residual, o->tol, r->passed ? "ok" : "FAILED");
    if (r->us_per_iter >= 0) {
        printf("time per iteration: %.2f us (median of %u runs of %u iterations; fastest %.2f "
               "us), %.1f GB/s (%.0f bytes per iteration)\n",
               r->us_per_iter, o->reps, o->bench_iters, r->us_per_iter_min,
               bytes / (r->us_per_iter * 1e-6) * 1e-9, bytes);
        if (r->compute_us >= 0)
            printf("split per iteration: compute %.2f us, halo exchange %.2f us, reductions "
                   "%.2f us\n",
                   r->compute_us, r->exchange_us, r->reduce_us);
    }
    fflush(stdout);
}

/* One line of JSON for scripts/plot_cg.py. Returns 0, or -1 when the file
 * cannot be written. The device name is printed with quotes and
 * backslashes escaped; control characters dropped. */
static inline int cg_write_json(const cg_options *o, const cg_report *r)
{
    if (!o->json)
        return 0;
    FILE *f = strcmp(o->json, "-") == 0 ? stdout : fopen(o->json, "a");
    if (!f) {
        perror(o->json);
        return -1;
    }
    char dev[512];
    size_t d = 0;
    for (const char *s = r->device; *s && d + 2 < sizeof dev; s++) {
        if ((unsigned char)*s < 0x20)
            continue;
        if (*s == '"' || *s == '\\')
            dev[d++] = '\\';
        dev[d++] = *s;
    }
    dev[d] = '\0';
    const double bytes = cg_bytes_per_iter(o->rows, r->nnz);
    const double gbps = r->us_per_iter > 0 ? bytes / (r->us_per_iter * 1e-6) * 1e-9 : -1;
    fprintf(f,
            "{\"impl\": \"%s\", \"device\": \"%s\", \"ranks\": %d, \"dims\": %d, \"nx\": %u, "
            "\"ny\": %u, \"nz\": %u, \"rows\": %llu, \"nnz\": %llu, \"k\": %u, \"tol\": %.3g, "
            "\"iterations\": %u, \"converged\": %s, \"rel_residual\": %.6g, "
            "\"true_rel_residual\": %.6g, \"passed\": %s, \"solve_s\": %.6g, "
            "\"bench_iters\": %u, \"reps\": %u, \"us_per_iter\": %.4f, "
            "\"us_per_iter_min\": %.4f, \"bytes_per_iter\": %.0f, \"gbps\": %.3f, "
            "\"compute_us\": %.4f, \"exchange_us\": %.4f, \"reduce_us\": %.4f}\n",
            r->impl, dev, r->ranks, o->dims, o->nx, o->ny, o->nz, (unsigned long long)o->rows,
            (unsigned long long)r->nnz, o->k, o->tol, r->iterations,
            r->converged ? "true" : "false", r->rel_residual, r->true_rel_residual,
            r->passed ? "true" : "false", r->solve_s, o->bench_iters, o->reps, r->us_per_iter,
            r->us_per_iter_min, bytes, gbps, r->compute_us, r->exchange_us, r->reduce_us);
    int bad = ferror(f);
    if (f != stdout)
        bad |= fclose(f);
    else
        fflush(f);
    return bad ? -1 : 0;
}

/* The true residual passes when it is within the tolerance, allowing 1%
 * for the drift of CG's updated residual (what the solver tests) from
 * |b - A x| (rounding: about 1e-16 times A's condition number, 1e4 at
 * 10^7 rows, far below 1% of a tolerance of 1e-8 or more). */
static inline int cg_residual_ok(double true_rel, double tol)
{
    return true_rel == true_rel && true_rel <= tol * 1.01;
}

#endif /* CG_COMMON_H */
