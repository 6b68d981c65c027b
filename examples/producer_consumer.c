/*
 * producer_consumer: two streams handing work to each other through events,
 * with no host thread waiting in between.
 *
 * Each round, the producer stream advances x with a chain of launches
 * (x[i] += 1, CHAIN times; shaders/add.comp) and records the event
 * `produced`. The consumer stream waits for that event on the device and
 * writes round r's slice of y (y[r][i] = x[i] * FACTOR; shaders/scale.comp,
 * bound at an offset into y), then records `consumed`. Before the producer
 * overwrites x in the next round it waits for `consumed`, so the consumer
 * always reads the round it was handed. The host waits once, at the end.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>

#include <salvo/salvo.h>

#include "add.spv.h"
#include "scale.spv.h"

#define N 4096u       /* elements of x, and of each slice of y */
#define ROUNDS 8u     /* rounds handed over */
#define CHAIN 32u     /* producer launches per round */
#define FACTOR 3u     /* what the consumer multiplies by */
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
    salvo_kernel *add = NULL, *scale = NULL;
    salvo_stream *producer = NULL, *consumer = NULL;
    salvo_event *produced = NULL, *consumed = NULL;
    salvo_buffer *x = NULL, *y = NULL;
    salvo_status status = SALVO_OK;
    const char *failed = NULL;
    int result = 1;
    uint32_t *host = malloc((size_t)ROUNDS * N * sizeof *host);
    if (!host) {
        fprintf(stderr, "producer_consumer: out of host memory\n");
        return 1;
    }

    CHECK(salvo_device_create(NULL, &device));
    salvo_device_info info;
    CHECK(salvo_device_info_get(device, &info));
    printf("producer_consumer: device %s\n", info.name);

    const salvo_spec_constant local_size = {.id = 0, .value = LOCAL_SIZE};
    const salvo_kernel_desc add_desc = {.spirv = add_spv, .spirv_size = sizeof add_spv,
                                        .name = "add", .spec_constants = &local_size,
                                        .spec_constant_count = 1};
    const salvo_kernel_desc scale_desc = {.spirv = scale_spv, .spirv_size = sizeof scale_spv,
                                          .name = "scale", .spec_constants = &local_size,
                                          .spec_constant_count = 1};
    CHECK(salvo_kernel_create(device, &add_desc, &add));
    CHECK(salvo_kernel_create(device, &scale_desc, &scale));
    CHECK(salvo_stream_create(device, NULL, &producer));
    CHECK(salvo_stream_create(device, NULL, &consumer));
    CHECK(salvo_event_create(device, &produced));
    CHECK(salvo_event_create(device, &consumed));

    /* x starts as 0, 1, 2, ...; y holds one slice per round. A slice's
     * offset (N * 4 bytes) must be a multiple of the device's
     * min_storage_buffer_offset_alignment, which N = 4096 is everywhere. */
    CHECK(salvo_buffer_create(device, N * sizeof(uint32_t), SALVO_DOMAIN_DEVICE, &x));
    CHECK(salvo_buffer_create(device, (uint64_t)ROUNDS * N * sizeof(uint32_t),
                              SALVO_DOMAIN_DEVICE, &y));
    for (uint32_t i = 0; i < N; i++)
        host[i] = i;
    CHECK(salvo_buffer_write(x, 0, host, N * sizeof(uint32_t)));
    printf("producer_consumer: buffers ready: x of %u, y of %u x %u\n", N, ROUNDS, N);

    const uint32_t groups[3] = {(N + LOCAL_SIZE - 1) / LOCAL_SIZE, 1, 1};
    for (uint32_t r = 0; r < ROUNDS; r++) {
        /* Producer: not before the consumer has read the previous round (an
         * event never recorded, as in round 0, is no wait at all). */
        CHECK(salvo_stream_wait_event(producer, consumed));
        const uint32_t add_push[2] = {N, 1};
        const salvo_binding add_bind = {.binding = 0, .buffer = x};
        for (uint32_t c = 0; c < CHAIN; c++)
            CHECK(salvo_launch(producer, add, groups, &add_bind, 1, add_push, sizeof add_push));
        CHECK(salvo_event_record(produced, producer));

        /* Consumer: not before the producer's round is complete. */
        CHECK(salvo_stream_wait_event(consumer, produced));
        const uint32_t scale_push[2] = {N, FACTOR};
        const salvo_binding scale_bind[2] = {
            {.binding = 0, .buffer = x},
            {.binding = 1, .buffer = y, .offset = (uint64_t)r * N * sizeof(uint32_t),
             .size = N * sizeof(uint32_t)},
        };
        CHECK(salvo_launch(consumer, scale, groups, scale_bind, 2, scale_push, sizeof scale_push));
        CHECK(salvo_event_record(consumed, consumer));
        printf("producer_consumer: round %u queued: %u producer launches, then the consumer "
               "into slice %u\n",
               r + 1, CHAIN, r);
    }

    CHECK(salvo_device_synchronize(device));
    salvo_stats stats;
    CHECK(salvo_device_stats(device, &stats));
    printf("producer_consumer: synchronized: %llu launches in %llu batches\n",
           (unsigned long long)stats.launches_total, (unsigned long long)stats.batches_submitted);

    CHECK(salvo_buffer_read(y, 0, host, (uint64_t)ROUNDS * N * sizeof(uint32_t)));
    for (uint32_t r = 0; r < ROUNDS; r++) {
        for (uint32_t i = 0; i < N; i++) {
            uint32_t want = (i + (r + 1) * CHAIN) * FACTOR;
            if (host[r * N + i] != want) {
                fprintf(stderr, "producer_consumer: slice %u, y[%u] = %u, expected %u\n", r, i,
                        host[r * N + i], want);
                goto done;
            }
        }
    }
    printf("producer_consumer: %u slices of %u checked: correct\n", ROUNDS, N);
    result = 0;

done:
    if (failed) {
        const char *name = salvo_status_string(status);
        fprintf(stderr, "producer_consumer: %s failed: %s: %s\n", failed, name,
                salvo_last_error());
    }
    salvo_event_destroy(consumed);
    salvo_event_destroy(produced);
    salvo_stream_destroy(consumer);
    salvo_stream_destroy(producer);
    salvo_kernel_destroy(scale);
    salvo_kernel_destroy(add);
    salvo_buffer_destroy(y);
    salvo_buffer_destroy(x);
    salvo_device_destroy(device);
    free(host);
    return result;
}
