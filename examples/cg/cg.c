/*
 * cg: conjugate gradient on salvo, for the Poisson matrix (3D 7-point or
 * 2D 5-point) in CSR, generated at run time, from 10^4 to 10^7 rows.
 *
 *     cg [--rows N | --nx X --ny Y [--nz Z]] [--2d] [--tol T] [--k K]
 *        [--bench-iters N] [--reps R] [--json FILE] [--device NAME]
 *
 * An iteration is five kernels (see cg_common.h): the SpMV with the first
 * pass of p . Ap, a one-workgroup reduction that computes alpha on the
 * device, the x and r updates with the first pass of r . r, the reduction
 * that computes beta and tests convergence on the device, the p update.
 * K iterations are captured once as a graph (5 K nodes, plus a copy of the
 * scalars to the host) and replayed: no host work per kernel, and no host
 * round trip per iteration. The host looks at the residual once per replay,
 * one replay behind the device (two graphs alternate, each copying the
 * scalars to a slot of its own in a mapped buffer), so the device never
 * waits for the host: once the device's test has stopped the iterations,
 * the replays still queued change nothing.
 *
 * b = 1, x0 = 0. At the end the true residual |b - A x| / |b| is computed
 * on the CPU; exit 0 only when it is within the tolerance and the
 * validation layer (SALVO_VALIDATION=1) said nothing. Then, unless
 * --bench-iters 0, the time per iteration: the median of R runs of a fixed
 * number of iterations from x = 0 (replays back to back, one synchronize,
 * host wall clock), and the bandwidth that makes (cg_bytes_per_iter).
 * cuda_cg.cu does the same in CUDA and prints the same lines.
 *
 * Needs a device with float64 in shaders (lavapipe and the big GPUs have
 * it); exit 77 (a skip, for ctest) on a machine without a Vulkan device.
 *
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <salvo/salvo.h>

#include "cg_common.h"
#include "reduce.spv.h"
#include "spmv_dot.spv.h"
#include "update_p.spv.h"
#include "update_xr.spv.h"

/* Remember which call failed; its status and message are printed at `done`. */
#define CHECK(call)                                                                                \
    do {                                                                                           \
        status = (call);                                                                           \
        if (status < 0) {                                                                          \
            failed = #call;                                                                        \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

/* The validation layer's messages reach us only here. */
static void log_to_stderr(void *user, salvo_log_level level, const char *file, int line,
                          const char *message)
{
    (void)user;
    (void)line;
    if (level == SALVO_LOG_WARNING)
        fprintf(stderr, "salvo warning: %s\n", message);
    else if (level == SALVO_LOG_ERROR)
        fprintf(stderr, "salvo error (%s): %s\n", file ? file : "?", message);
}

/* The push constants of the vector kernels and of the reduction. */
typedef struct spmv_push {
    uint32_t row_begin, row_end, p_offset, partial_base;
} spmv_push;
typedef struct vec_push {
    uint32_t n, p_offset;
} vec_push;
typedef struct reduce_push {
    uint32_t count, mode;
} reduce_push;

int main(int argc, char **argv)
{
    cg_options o;
    if (cg_parse(argc, argv, &o))
        return 2;
    const uint32_t n = (uint32_t)o.rows;

    salvo_device *device = NULL;
    salvo_stream *stream = NULL;
    salvo_kernel *k_spmv = NULL, *k_reduce = NULL, *k_xr = NULL, *k_p = NULL;
    salvo_buffer *row_ptr = NULL, *col = NULL, *val = NULL;
    salvo_buffer *b = NULL, *x = NULL, *r = NULL, *p = NULL, *q = NULL, *partial = NULL;
    salvo_buffer *scalars = NULL, *scalars0 = NULL, *snap = NULL;
    salvo_graph *reset = NULL, *iter[2] = {NULL, NULL};
    salvo_event *replayed[2] = {NULL, NULL};
    salvo_status status = SALVO_OK;
    const char *failed = NULL;
    int result = 1;
    double *hb = NULL, *hx = NULL, *times = NULL;
    cg_csr m;
    memset(&m, 0, sizeof m);

    /* The matrix and b on the host first: a machine without the memory
     * fails before any device work. */
    if (cg_poisson(&o, 0, n, 0, &m) != 0 || !(hb = malloc(n * sizeof *hb)) ||
        !(hx = malloc(n * sizeof *hx)) || !(times = malloc(o.reps * sizeof *times))) {
        fprintf(stderr, "cg: out of host memory for %u rows\n", n);
        goto done;
    }
    for (uint32_t i = 0; i < n; i++)
        hb[i] = 1.0;

    salvo_device_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.name = o.device;
    desc.log = log_to_stderr;
    status = salvo_device_create(&desc, &device);
    if (status == SALVO_ERROR_NO_DEVICE) {
        fprintf(stderr, "cg: no Vulkan device: %s\n", salvo_last_error());
        result = 77;
        goto done;
    }
    CHECK(status);
    salvo_device_info info;
    CHECK(salvo_device_info_get(device, &info));
    if (info.features.checked && !info.features.shader_float64) {
        fprintf(stderr, "cg: %s has no float64 in shaders, which the solver needs\n", info.name);
        goto done;
    }

    /* Device memory for what the kernels stream through; the scalars'
     * snapshots in HOST memory, read by the host through a mapping. */
    const uint64_t vec_bytes = (uint64_t)n * sizeof(double);
    CHECK(salvo_buffer_create(device, ((uint64_t)n + 1) * 4, SALVO_DOMAIN_DEVICE, &row_ptr));
    CHECK(salvo_buffer_create(device, m.nnz * 4, SALVO_DOMAIN_DEVICE, &col));
    CHECK(salvo_buffer_create(device, m.nnz * 8, SALVO_DOMAIN_DEVICE, &val));
    CHECK(salvo_buffer_create(device, vec_bytes, SALVO_DOMAIN_DEVICE, &b));
    CHECK(salvo_buffer_create(device, vec_bytes, SALVO_DOMAIN_DEVICE, &x));
    CHECK(salvo_buffer_create(device, vec_bytes, SALVO_DOMAIN_DEVICE, &r));
    CHECK(salvo_buffer_create(device, vec_bytes, SALVO_DOMAIN_DEVICE, &p));
    CHECK(salvo_buffer_create(device, vec_bytes, SALVO_DOMAIN_DEVICE, &q));
    CHECK(salvo_buffer_create(device, CG_MAX_GROUPS * sizeof(double), SALVO_DOMAIN_DEVICE,
                              &partial));
    CHECK(salvo_buffer_create(device, sizeof(cg_scalars), SALVO_DOMAIN_DEVICE, &scalars));
    CHECK(salvo_buffer_create(device, sizeof(cg_scalars), SALVO_DOMAIN_DEVICE, &scalars0));
    CHECK(salvo_buffer_create(device, 2 * CG_SNAP_STRIDE, SALVO_DOMAIN_HOST, &snap));
    void *snap_map = NULL;
    CHECK(salvo_buffer_map(snap, &snap_map));

    CHECK(salvo_buffer_write(row_ptr, 0, m.row_ptr, ((uint64_t)n + 1) * 4));
    CHECK(salvo_buffer_write(col, 0, m.col, m.nnz * 4));
    CHECK(salvo_buffer_write(val, 0, m.val, m.nnz * 8));
    CHECK(salvo_buffer_write(b, 0, hb, vec_bytes));
    /* The scalars at x = 0: r = p = b, rr = b . b. */
    double bb = 0;
    for (uint32_t i = 0; i < n; i++)
        bb += hb[i] * hb[i];
    cg_scalars s0;
    memset(&s0, 0, sizeof s0);
    s0.rr = bb;
    s0.stop_rr = o.tol * o.tol * bb;
    CHECK(salvo_buffer_write(scalars0, 0, &s0, sizeof s0));

    salvo_kernel_desc kd;
    memset(&kd, 0, sizeof kd);
    kd.spirv = spmv_dot_spv;
    kd.spirv_size = sizeof spmv_dot_spv;
    kd.name = "spmv_dot";
    CHECK(salvo_kernel_create(device, &kd, &k_spmv));
    kd.spirv = reduce_spv;
    kd.spirv_size = sizeof reduce_spv;
    kd.name = "reduce";
    CHECK(salvo_kernel_create(device, &kd, &k_reduce));
    kd.spirv = update_xr_spv;
    kd.spirv_size = sizeof update_xr_spv;
    kd.name = "update_xr";
    CHECK(salvo_kernel_create(device, &kd, &k_xr));
    kd.spirv = update_p_spv;
    kd.spirv_size = sizeof update_p_spv;
    kd.name = "update_p";
    CHECK(salvo_kernel_create(device, &kd, &k_p));
    CHECK(salvo_stream_create(device, NULL, &stream));
    for (int j = 0; j < 2; j++)
        CHECK(salvo_event_create(device, &replayed[j]));

    uint32_t groups_n = (n + CG_LOCAL - 1) / CG_LOCAL;
    if (groups_n > CG_MAX_GROUPS)
        groups_n = CG_MAX_GROUPS;
    const uint32_t groups[3] = {groups_n, 1, 1}, one[3] = {1, 1, 1};
    const spmv_push sp = {0, n, 0, 0};
    const vec_push vp = {n, 0};
    const reduce_push rp_alpha = {groups_n, CG_REDUCE_ALPHA}, rp_beta = {groups_n, CG_REDUCE_BETA};
    const salvo_binding b_spmv[] = {
        {.binding = 0, .buffer = row_ptr}, {.binding = 1, .buffer = col},
        {.binding = 2, .buffer = val},     {.binding = 3, .buffer = p},
        {.binding = 4, .buffer = q},       {.binding = 5, .buffer = partial},
    };
    const salvo_binding b_reduce[] = {
        {.binding = 0, .buffer = partial},
        {.binding = 1, .buffer = scalars},
    };
    const salvo_binding b_xr[] = {
        {.binding = 0, .buffer = scalars}, {.binding = 1, .buffer = p},
        {.binding = 2, .buffer = q},       {.binding = 3, .buffer = x},
        {.binding = 4, .buffer = r},       {.binding = 5, .buffer = partial},
    };
    const salvo_binding b_p[] = {
        {.binding = 0, .buffer = scalars},
        {.binding = 1, .buffer = r},
        {.binding = 2, .buffer = p},
    };

    /* Back to x = 0, as a graph too: a solve or a timed run starts with
     * one replay of it. */
    CHECK(salvo_stream_begin_capture(stream));
    CHECK(salvo_fill(stream, x, 0, vec_bytes, 0)); /* 0.0 is all zero bits */
    CHECK(salvo_copy(stream, b, 0, r, 0, vec_bytes));
    CHECK(salvo_copy(stream, b, 0, p, 0, vec_bytes));
    CHECK(salvo_copy(stream, scalars0, 0, scalars, 0, sizeof(cg_scalars)));
    CHECK(salvo_stream_end_capture(stream, &reset));

    /* K iterations, then the scalars to snapshot slot j. */
    double t0 = cg_now_s();
    for (int j = 0; j < 2; j++) {
        CHECK(salvo_stream_begin_capture(stream));
        for (uint32_t it = 0; it < o.k; it++) {
            CHECK(salvo_launch(stream, k_spmv, groups, b_spmv, 6, &sp, sizeof sp));
            CHECK(salvo_launch(stream, k_reduce, one, b_reduce, 2, &rp_alpha, sizeof rp_alpha));
            CHECK(salvo_launch(stream, k_xr, groups, b_xr, 6, &vp, sizeof vp));
            CHECK(salvo_launch(stream, k_reduce, one, b_reduce, 2, &rp_beta, sizeof rp_beta));
            CHECK(salvo_launch(stream, k_p, groups, b_p, 3, &vp, sizeof vp));
        }
        CHECK(salvo_copy(stream, scalars, 0, snap, (uint64_t)j * CG_SNAP_STRIDE,
                         sizeof(cg_scalars)));
        CHECK(salvo_stream_end_capture(stream, &iter[j]));
    }
    const double capture_s = cg_now_s() - t0;

    /* The solve. Replay j + 1 is queued before the host waits for replay
     * j, so the device always has work; slot j % 2 is written again only
     * by replay j + 2, made after the host has read it. */
    CHECK(salvo_graph_launch(reset, stream));
    CHECK(salvo_stream_synchronize(stream));
    t0 = cg_now_s();
    const uint32_t replays_max = o.max_iters / o.k;
    CHECK(salvo_graph_launch(iter[0], stream));
    CHECK(salvo_event_record(replayed[0], stream));
    CHECK(salvo_stream_flush(stream));
    for (uint32_t j = 0; j < replays_max; j++) {
        if (j + 1 < replays_max) {
            CHECK(salvo_graph_launch(iter[(j + 1) % 2], stream));
            CHECK(salvo_event_record(replayed[(j + 1) % 2], stream));
            CHECK(salvo_stream_flush(stream));
        }
        CHECK(salvo_event_synchronize(replayed[j % 2]));
        cg_scalars seen;
        memcpy(&seen, (const char *)snap_map + (j % 2) * CG_SNAP_STRIDE, sizeof seen);
        if (seen.done)
            break;
    }
    CHECK(salvo_stream_synchronize(stream));
    const double solve_s = cg_now_s() - t0;

    cg_scalars fin;
    CHECK(salvo_buffer_read(scalars, 0, &fin, sizeof fin));
    CHECK(salvo_buffer_read(x, 0, hx, vec_bytes));
    const double true_rel = sqrt(cg_residual2(&m, hb, hx) / bb);

    cg_report rep;
    memset(&rep, 0, sizeof rep);
    rep.impl = "salvo";
    rep.device = info.name;
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

    /* Timed runs: from x = 0, bench_iters iterations back to back (the
     * stop test may freeze the last ones; they cost the same), one
     * synchronize, wall clock. */
    if (o.bench_iters) {
        for (uint32_t t = 0; t < o.reps; t++) {
            CHECK(salvo_graph_launch(reset, stream));
            CHECK(salvo_stream_synchronize(stream));
            t0 = cg_now_s();
            for (uint32_t j = 0; j < o.bench_iters / o.k; j++)
                CHECK(salvo_graph_launch(iter[j % 2], stream));
            CHECK(salvo_stream_synchronize(stream));
            times[t] = (cg_now_s() - t0) / o.bench_iters * 1e6;
        }
        rep.us_per_iter = cg_median(times, o.reps); /* sorts: times[0] is the fastest */
        rep.us_per_iter_min = times[0];
    }

    printf("graphs of %u iterations (%u nodes) captured in %.2f ms\n", o.k,
           salvo_graph_node_count(iter[0]), capture_s * 1e3);
    cg_print_report(&o, &rep);
    if (cg_write_json(&o, &rep) != 0)
        goto done;

    salvo_stats stats;
    CHECK(salvo_device_stats(device, &stats));
    if (stats.validation_messages)
        fprintf(stderr, "cg: the validation layer reported %llu messages\n",
                (unsigned long long)stats.validation_messages);
    else if (!rep.passed)
        fprintf(stderr, "cg: true residual %.3g over the tolerance %.3g%s\n", true_rel, o.tol,
                rep.converged ? "" : " (no convergence)");
    else
        result = 0;

done:
    if (failed) {
        /* The status name first: salvo_last_error() is valid until the next salvo call. */
        const char *name = salvo_status_string(status);
        fprintf(stderr, "cg: %s failed: %s: %s\n", failed, name, salvo_last_error());
    }
    /* Destroy never blocks and accepts NULL; the device waits for the rest. */
    for (int j = 0; j < 2; j++) {
        salvo_graph_destroy(iter[j]);
        salvo_event_destroy(replayed[j]);
    }
    salvo_graph_destroy(reset);
    salvo_stream_destroy(stream);
    salvo_kernel_destroy(k_spmv);
    salvo_kernel_destroy(k_reduce);
    salvo_kernel_destroy(k_xr);
    salvo_kernel_destroy(k_p);
    salvo_buffer *all[] = {row_ptr, col, val, b, x, r, p, q, partial, scalars, scalars0, snap};
    for (size_t j = 0; j < sizeof all / sizeof all[0]; j++)
        salvo_buffer_destroy(all[j]);
    salvo_device_destroy(device);
    free(times);
    free(hx);
    free(hb);
    cg_csr_free(&m);
    return result;
}
