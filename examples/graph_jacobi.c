/*
 * graph-jacobi: -u'' = f on (0, 1), u(0) = u(1) = 0, by Jacobi iterations
 * replayed from a graph.
 *
 * With n interior points and h = 1 / (n + 1), one sweep is
 *
 *     y[i] = (f[i] * h^2 + x[i - 1] + x[i + 1]) / 2
 *
 * (shaders/jacobi.comp). K sweeps are captured once as a graph, two
 * launches per pair (x into y, then y back into x), and the graph is
 * replayed until the relative residual |f - A x| / |f|, computed on the
 * host from x read back every few replays, is below the tolerance, or
 * the iteration cap is reached. f = 1, whose solution x (1 - x) / 2 the
 * discrete one equals, so the error is printed too. A line of progress
 * (iterations, residual) every second while it runs: on a CPU device the
 * default problem takes some 15 s.
 *
 *     graph-jacobi [--n N] [--k K] [--tol T] [--max-iters M]
 *
 * Floats: rounding keeps the residual of this system above about 4e-4 at
 * n = 256, growing as n^2, so the default tolerance (1e-3 up to n = 256)
 * grows with n^2 too. Exit 0 only when the residual is below the
 * tolerance and the validation layer (SALVO_VALIDATION=1) said nothing.
 *
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <salvo/salvo.h>

#include "jacobi.spv.h"

/* Remember which call failed; its status and message are printed at `done`. */
#define CHECK(call)                                                                                \
    do {                                                                                           \
        status = (call);                                                                           \
        if (status < 0) {                                                                          \
            failed = #call;                                                                        \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The validation layer's messages reach us only here. */
static void log_to_stderr(void *user, salvo_log_level level, const char *file, int line,
                          const char *message)
{
    (void)user;
    (void)line;
    if (level == SALVO_LOG_WARNING)
        fprintf(stderr, "salvo warning: %s\n", message);
    else if (level == SALVO_LOG_ERROR && file && strcmp(file, "validation") == 0)
        fprintf(stderr, "salvo validation error: %s\n", message);
}

/* |f - A x| / |f|, with A x = (2 x[i] - x[i - 1] - x[i + 1]) / h^2, in
 * double so that the figure is the floats' own. Also the largest error
 * against the exact solution of f = 1. */
static double residual(const float *f, const float *x, uint32_t n, double h, double *error)
{
    double rr = 0, ff = 0, err = 0;
    for (uint32_t i = 0; i < n; i++) {
        double left = i > 0 ? x[i - 1] : 0, right = i + 1 < n ? x[i + 1] : 0;
        double r = f[i] - (2.0 * x[i] - left - right) / (h * h);
        rr += r * r;
        ff += (double)f[i] * f[i];
        double t = (i + 1) * h, e = fabs(x[i] - t * (1 - t) / 2);
        err = e > err ? e : err;
    }
    *error = err;
    return sqrt(rr / ff);
}

static void usage(FILE *to)
{
    fprintf(to,
            "usage: graph-jacobi [--n N] [--k K] [--tol T] [--max-iters M]\n"
            "  -u'' = 1 on (0, 1) by Jacobi sweeps, K of them (even, default 1000) captured\n"
            "  as a graph and replayed until the residual is below T (default 1e-3,\n"
            "  growing as n^2 past n = 256) or M sweeps were made; N interior points\n"
            "  (default 256). The device: $SALVO_DEVICE, else the preferred one.\n");
}

int main(int argc, char **argv)
{
    uint32_t n = 256, k = 1000;
    double tol = 0;
    uint64_t max_iters = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc)
            n = (uint32_t)strtoul(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--k") == 0 && i + 1 < argc)
            k = (uint32_t)strtoul(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--tol") == 0 && i + 1 < argc)
            tol = strtod(argv[++i], NULL);
        else if (strcmp(argv[i], "--max-iters") == 0 && i + 1 < argc)
            max_iters = strtoull(argv[++i], NULL, 0);
        else {
            fprintf(stderr, "graph-jacobi: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (n < 2 || n > (1u << 24) || k < 2 || k % 2 || tol < 0) {
        usage(stderr);
        return 2;
    }
    const double h = 1.0 / (n + 1.0);
    const double scale = (n + 1.0) / 257.0;
    if (tol == 0)
        tol = 1e-3 * (scale > 1 ? scale * scale : 1);
    /* Jacobi needs about 0.2 (n + 1)^2 ln(1 / tol) sweeps here. */
    if (max_iters == 0)
        max_iters = 10ull * (n + 1) * (n + 1);
    /* Read back about every (n + 1)^2 / 16 sweeps, in whole replays. */
    uint64_t per_check = ((uint64_t)(n + 1) * (n + 1) / 16 + k - 1) / k;

    salvo_device *device = NULL;
    salvo_buffer *fb = NULL, *xb[2] = {NULL, NULL};
    salvo_kernel *kernel = NULL;
    salvo_stream *stream = NULL;
    salvo_graph *graph = NULL;
    salvo_status status = SALVO_OK;
    const char *failed = NULL;
    int result = 1;
    float *f = calloc(n, sizeof *f), *x = calloc(n, sizeof *x);
    if (!f || !x) {
        fprintf(stderr, "graph-jacobi: out of host memory\n");
        goto done;
    }
    for (uint32_t i = 0; i < n; i++)
        f[i] = 1.0f;

    const salvo_device_desc desc = {.log = log_to_stderr};
    CHECK(salvo_device_create(&desc, &device));
    salvo_device_info info;
    CHECK(salvo_device_info_get(device, &info));

    const uint64_t bytes = (uint64_t)n * sizeof(float);
    CHECK(salvo_buffer_create(device, bytes, SALVO_DOMAIN_DEVICE, &fb));
    CHECK(salvo_buffer_write(fb, 0, f, bytes));
    for (int j = 0; j < 2; j++) {
        CHECK(salvo_buffer_create(device, bytes, SALVO_DOMAIN_DEVICE, &xb[j]));
        CHECK(salvo_buffer_write(xb[j], 0, x, bytes)); /* start from 0 */
    }

    uint32_t local = 64;
    if (info.max_workgroup_size[0] && local > info.max_workgroup_size[0])
        local = info.max_workgroup_size[0];
    const salvo_spec_constant local_size = {.id = 0, .value = local};
    const salvo_kernel_desc kernel_desc = {
        .spirv = jacobi_spv,
        .spirv_size = sizeof jacobi_spv,
        .name = "jacobi",
        .spec_constants = &local_size,
        .spec_constant_count = 1,
    };
    CHECK(salvo_kernel_create(device, &kernel_desc, &kernel));
    CHECK(salvo_stream_create(device, NULL, &stream));

    /* Matches the shader's push-constant block { uint n; float h2; }. */
    const struct {
        uint32_t n;
        float h2;
    } push = {n, (float)(h * h)};
    const uint32_t groups[3] = {(n + local - 1) / local, 1, 1};
    double t0 = now_s();
    CHECK(salvo_stream_begin_capture(stream));
    for (uint32_t s = 0; s < k; s++) {
        /* Even sweeps read x[0] into x[1], odd ones back: the graph ends
         * in x[0], where the next replay starts. */
        const salvo_binding bindings[] = {
            {.binding = 0, .buffer = fb},
            {.binding = 1, .buffer = xb[s % 2]},
            {.binding = 2, .buffer = xb[1 - s % 2]},
        };
        CHECK(salvo_launch(stream, kernel, groups, bindings, 3, &push, sizeof push));
    }
    CHECK(salvo_stream_end_capture(stream, &graph));
    double capture_s = now_s() - t0;
    printf("graph-jacobi on %s: n = %u, a graph of %u sweeps (captured in %.2f ms)\n", info.name,
           n, k, capture_s * 1e3);
    fflush(stdout);

    uint64_t iters = 0;
    double res = 1, err = 0;
    t0 = now_s();
    double shown = t0;
    while (iters < max_iters) {
        for (uint64_t r = 0; r < per_check && iters < max_iters; r++, iters += k)
            CHECK(salvo_graph_launch(graph, stream));
        /* Waits for the replays made so far. */
        CHECK(salvo_buffer_read(xb[0], 0, x, bytes));
        res = residual(f, x, n, h, &err);
        if (res < tol)
            break;
        if (now_s() - shown >= 1.0) {
            shown = now_s();
            printf("  %.0f s: %llu iterations, residual %.3g (tolerance %.3g)\n", shown - t0,
                   (unsigned long long)iters, res, tol);
            fflush(stdout);
        }
    }
    double solve_s = now_s() - t0;

    printf("iterations %llu, %.3f s (%.2f us per sweep), residual %.3g (tolerance %.3g), max "
           "error %.3g\n",
           (unsigned long long)iters, solve_s, solve_s / (double)iters * 1e6, res, tol, err);

    salvo_stats stats;
    CHECK(salvo_device_stats(device, &stats));
    if (stats.validation_messages)
        fprintf(stderr, "graph-jacobi: the validation layer reported %llu messages\n",
                (unsigned long long)stats.validation_messages);
    else if (res >= tol)
        fprintf(stderr, "graph-jacobi: no convergence in %llu iterations\n",
                (unsigned long long)iters);
    else
        result = 0;

done:
    if (failed) {
        /* The status name first: salvo_last_error() is valid until the next salvo call. */
        const char *name = salvo_status_string(status);
        fprintf(stderr, "graph-jacobi: %s failed: %s: %s\n", failed, name, salvo_last_error());
    }
    /* Destroy never blocks and accepts NULL; the device waits for the rest. */
    salvo_graph_destroy(graph);
    salvo_stream_destroy(stream);
    salvo_kernel_destroy(kernel);
    for (int j = 0; j < 2; j++)
        salvo_buffer_destroy(xb[j]);
    salvo_buffer_destroy(fb);
    salvo_device_destroy(device);
    free(x);
    free(f);
    return result;
}
