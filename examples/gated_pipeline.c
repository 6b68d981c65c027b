/*
 * gated_pipeline: queue the work first, write its input afterwards.
 *
 * A stream waits on a host gate, launches a kernel that reads host memory
 * (out[i] = in[i] * round; shaders/scale.comp) and flushes: the batch is on
 * the device, held by the gate. Only then does the host write the input and
 * raise the gate; the raise makes those writes visible to the work it
 * releases. The input is host memory imported as a buffer
 * (salvo_buffer_import_host, no copy), or a mapped HOST buffer where the
 * device cannot import. A few rounds, with the gate raised one step each.
 *
 * On a device without timeline semaphores there are no gates: the host then
 * writes the input before launching.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>

#include <salvo/salvo.h>

#include "scale.spv.h"

#define N 4096u
#define ROUNDS 4u
#define LOCAL_SIZE 64u

#define CHECK(call)                                                                                \
    do {                                                                                           \
        status = (call);                                                                           \
        if (status < 0) {                                                                          \
            failed = #call;                                                                        \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

int main(void)
{
    salvo_device *device = NULL;
    salvo_kernel *scale = NULL;
    salvo_stream *stream = NULL;
    salvo_gate *gate = NULL;
    salvo_buffer *in = NULL, *out = NULL;
    void *imported = NULL; /* ours: freed after the device is destroyed */
    uint32_t *input = NULL; /* where the host writes the input */
    salvo_status status = SALVO_OK;
    const char *failed = NULL;
    int result = 1;
    uint32_t *host = malloc(N * sizeof *host);
    if (!host) {
        fprintf(stderr, "gated_pipeline: out of host memory\n");
        return 1;
    }

    CHECK(salvo_device_create(NULL, &device));
    salvo_device_info info;
    CHECK(salvo_device_info_get(device, &info));
    printf("gated_pipeline: device %s\n", info.name);

    /* The input: imported host memory (pointer and size multiples of the
     * import alignment), else a mapped HOST buffer. */
    if (info.host_import) {
        uint64_t align = info.host_import_alignment;
        uint64_t bytes = (N * sizeof(uint32_t) + align - 1) / align * align;
        imported = aligned_alloc((size_t)align, (size_t)bytes);
        if (!imported) {
            fprintf(stderr, "gated_pipeline: out of host memory\n");
            goto done;
        }
        CHECK(salvo_buffer_import_host(device, imported, bytes, SALVO_DOMAIN_HOST, &in));
        input = imported;
        printf("gated_pipeline: input: %llu bytes of host memory imported (alignment %llu)\n",
               (unsigned long long)bytes, (unsigned long long)align);
    } else {
        CHECK(salvo_buffer_create(device, N * sizeof(uint32_t), SALVO_DOMAIN_HOST, &in));
        CHECK(salvo_buffer_map(in, (void **)&input));
        printf("gated_pipeline: input: a mapped HOST buffer (no host import on this device)\n");
    }
    CHECK(salvo_buffer_create(device, N * sizeof(uint32_t), SALVO_DOMAIN_DEVICE, &out));

    status = salvo_gate_create(device, &gate);
    if (status == SALVO_ERROR_UNSUPPORTED)
        printf("gated_pipeline: no timeline semaphores: the host writes before each launch\n");
    else
        CHECK(status);

    const salvo_spec_constant local_size = {.id = 0, .value = LOCAL_SIZE};
    const salvo_kernel_desc desc = {.spirv = scale_spv, .spirv_size = sizeof scale_spv,
                                    .name = "scale", .spec_constants = &local_size,
                                    .spec_constant_count = 1};
    CHECK(salvo_kernel_create(device, &desc, &scale));
    CHECK(salvo_stream_create(device, NULL, &stream));

    const uint32_t groups[3] = {(N + LOCAL_SIZE - 1) / LOCAL_SIZE, 1, 1};
    const salvo_binding bindings[2] = {{.binding = 0, .buffer = in},
                                       {.binding = 1, .buffer = out}};
    for (uint32_t round = 1; round <= ROUNDS; round++) {
        if (!gate)
            for (uint32_t i = 0; i < N; i++)
                input[i] = i + 1000 * round;
        /* The launch goes to the device now; with a gate, it waits there. */
        if (gate)
            CHECK(salvo_stream_wait_gate(stream, gate, round));
        const uint32_t push[2] = {N, round};
        CHECK(salvo_launch(stream, scale, groups, bindings, 2, push, sizeof push));
        CHECK(salvo_stream_flush(stream));
        if (gate) {
            printf("gated_pipeline: round %u: launch flushed, held at gate value %u\n", round,
                   round);
            /* The previous round was read back, so nothing reads the input
             * now: the host may write it, then let the launch go. */
            for (uint32_t i = 0; i < N; i++)
                input[i] = i + 1000 * round;
            CHECK(salvo_gate_raise(gate, round));
        }
        /* The read waits for the launches that use out. */
        CHECK(salvo_buffer_read(out, 0, host, N * sizeof(uint32_t)));
        for (uint32_t i = 0; i < N; i++) {
            uint32_t want = (i + 1000 * round) * round;
            if (host[i] != want) {
                fprintf(stderr, "gated_pipeline: round %u: out[%u] = %u, expected %u\n", round, i,
                        host[i], want);
                goto done;
            }
        }
        printf("gated_pipeline: round %u: %s, %u results checked: correct\n", round,
               gate ? "gate raised" : "launched", N);
    }
    CHECK(salvo_stream_synchronize(stream));
    result = 0;

done:
    if (failed) {
        const char *name = salvo_status_string(status);
        fprintf(stderr, "gated_pipeline: %s failed: %s: %s\n", failed, name, salvo_last_error());
    }
    salvo_stream_destroy(stream);
    salvo_kernel_destroy(scale);
    salvo_gate_destroy(gate);
    salvo_buffer_destroy(out);
    salvo_buffer_destroy(in);
    /* Imported memory must outlive the buffer's release, which may still be
     * queued: the device destroy runs every release. */
    salvo_device_destroy(device);
    free(imported);
    free(host);
    return result;
}
