/*
 * saxpy: y = a * x + y over 1M floats on the default device, checked
 * against the CPU. The smallest complete salvo program.
 *
 * The kernel is shaders/saxpy.comp, compiled at build time by
 * salvo_add_shader() into "saxpy.spv.h" (const uint32_t saxpy_spv[]).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <salvo/salvo.h>

#include "saxpy.spv.h"

#define N (1u << 20)
#define LOCAL_SIZE 256u /* the kernel's local_size_x, set by spec constant 0 */

/* Remember which call failed; its status and message are printed at `done`. */
#define CHECK(call)                                                                                \
    do {                                                                                           \
        status = (call);                                                                           \
        if (status < 0) {                                                                          \
            failed = #call;                                                                        \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

static void usage(FILE *to)
{
    fprintf(to, "usage: saxpy [--help]\n"
                "  y = 2 x + y over 1M floats on the device $SALVO_DEVICE names, else the\n"
                "  preferred one, checked against the CPU. Exit 0 when every element is right.\n");
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        }
        fprintf(stderr, "saxpy: unknown argument '%s'\n", argv[i]);
        usage(stderr);
        return 2;
    }
    salvo_device *device = NULL;
    salvo_buffer *x = NULL, *y = NULL;
    salvo_kernel *kernel = NULL;
    salvo_stream *stream = NULL;
    salvo_status status = SALVO_OK;
    const char *failed = NULL;
    int result = 1;

    /* Integer-valued inputs keep a * x + y exact in float, so the check can
     * demand equality whether or not the device fuses the multiply-add. */
    const float a = 2.0f;
    float *hx = malloc(N * sizeof *hx);
    float *hy = malloc(N * sizeof *hy);
    float *out = malloc(N * sizeof *out);
    if (!hx || !hy || !out) {
        fprintf(stderr, "saxpy: out of host memory\n");
        goto done;
    }
    for (uint32_t i = 0; i < N; i++) {
        hx[i] = (float)(i % 1000u);
        hy[i] = (float)(i % 7u);
    }

    /* NULL desc: $SALVO_DEVICE, else the preferred device. */
    CHECK(salvo_device_create(NULL, &device));

    CHECK(salvo_buffer_create(device, N * sizeof(float), SALVO_DOMAIN_DEVICE, &x));
    CHECK(salvo_buffer_create(device, N * sizeof(float), SALVO_DOMAIN_DEVICE, &y));
    CHECK(salvo_buffer_write(x, 0, hx, N * sizeof(float)));
    CHECK(salvo_buffer_write(y, 0, hy, N * sizeof(float)));

    const salvo_spec_constant local_size = {.id = 0, .value = LOCAL_SIZE};
    const salvo_kernel_desc kernel_desc = {
        .spirv = saxpy_spv,
        .spirv_size = sizeof saxpy_spv,
        .name = "saxpy",
        .spec_constants = &local_size,
        .spec_constant_count = 1,
    };
    CHECK(salvo_kernel_create(device, &kernel_desc, &kernel));
    CHECK(salvo_stream_create(device, NULL, &stream));

    /* Matches the shader's push-constant block { float a; uint n; }. */
    const struct {
        float a;
        uint32_t n;
    } push = {a, N};
    const salvo_binding bindings[] = {
        {.binding = 0, .buffer = x},
        {.binding = 1, .buffer = y},
    };
    const uint32_t groups[3] = {(N + LOCAL_SIZE - 1) / LOCAL_SIZE, 1, 1};
    CHECK(salvo_launch(stream, kernel, groups, bindings, 2, &push, sizeof push));
    CHECK(salvo_stream_synchronize(stream));
    CHECK(salvo_buffer_read(y, 0, out, N * sizeof(float)));

    for (uint32_t i = 0; i < N; i++) {
        float want = a * hx[i] + hy[i];
        if (out[i] != want) {
            fprintf(stderr, "saxpy: y[%u] = %g, expected %g\n", (unsigned)i, out[i], want);
            goto done;
        }
    }
    printf("saxpy: y = %g * x + y over %u floats: correct\n", a, (unsigned)N);
    result = 0;

done:
    if (failed) {
        /* The status name first: salvo_last_error() is valid until the next salvo call. */
        const char *name = salvo_status_string(status);
        fprintf(stderr, "saxpy: %s failed: %s: %s\n", failed, name, salvo_last_error());
    }
    /* Destroy never blocks and accepts NULL; the device waits for the rest. */
    salvo_stream_destroy(stream);
    salvo_kernel_destroy(kernel);
    salvo_buffer_destroy(y);
    salvo_buffer_destroy(x);
    salvo_device_destroy(device);
    free(out);
    free(hy);
    free(hx);
    return result;
}
