/* Opens the default device, runs its own kernel (affine.comp, embedded by
 * salvo_add_shader) and checks the result. Exit 77 without a device. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <salvo/salvo.h>

#include "affine.spv.h"

#define N 4096u

static int fail(const char *what, salvo_status st)
{
    fprintf(stderr, "%s: %s: %s\n", what, salvo_status_string(st), salvo_last_error());
    return 1;
}

int main(void)
{
    /* No loader, no driver or no device: skip. (With a loader but no
     * driver, device_create reports the failed enumeration instead.) */
    uint32_t count = 0;
    salvo_status st = salvo_device_enumerate(NULL, &count);
    if (st != SALVO_OK || count == 0) {
        fprintf(stderr, "no Vulkan device: skipped (%s)\n", salvo_status_string(st));
        return 77;
    }
    salvo_device *dev = NULL;
    st = salvo_device_create(NULL, &dev);
    if (st == SALVO_ERROR_NO_DEVICE) {
        fprintf(stderr, "no Vulkan device: skipped\n");
        return 77;
    }
    if (st != SALVO_OK)
        return fail("salvo_device_create", st);

    static uint32_t host[N];
    for (uint32_t i = 0; i < N; i++)
        host[i] = i;
    salvo_buffer *buf = NULL;
    salvo_kernel *kernel = NULL;
    salvo_stream *stream = NULL;
    int rc = 1;
    salvo_kernel_desc kd = {.spirv = affine_spv, .spirv_size = sizeof affine_spv};
    if ((st = salvo_buffer_create(dev, sizeof host, SALVO_DOMAIN_DEVICE, &buf)) != SALVO_OK ||
        (st = salvo_buffer_write(buf, 0, host, sizeof host)) != SALVO_OK ||
        (st = salvo_kernel_create(dev, &kd, &kernel)) != SALVO_OK ||
        (st = salvo_stream_create(dev, NULL, &stream)) != SALVO_OK) {
        rc = fail("setup", st);
        goto out;
    }
    uint32_t n = N;
    uint32_t groups[3] = {N / 64, 1, 1};
    salvo_binding b = {.binding = 0, .buffer = buf};
    if ((st = salvo_launch(stream, kernel, groups, &b, 1, &n, sizeof n)) != SALVO_OK ||
        (st = salvo_launch(stream, kernel, groups, &b, 1, &n, sizeof n)) != SALVO_OK ||
        (st = salvo_stream_synchronize(stream)) != SALVO_OK ||
        (st = salvo_buffer_read(buf, 0, host, sizeof host)) != SALVO_OK) {
        rc = fail("run", st);
        goto out;
    }
    for (uint32_t i = 0; i < N; i++) {
        uint32_t want = (i * 3 + 1) * 3 + 1;
        if (host[i] != want) {
            fprintf(stderr, "v[%u] = %u, want %u\n", i, host[i], want);
            goto out;
        }
    }
    salvo_stats stats;
    if ((st = salvo_device_stats(dev, &stats)) != SALVO_OK) {
        rc = fail("salvo_device_stats", st);
        goto out;
    }
    if (stats.validation_messages) {
        fprintf(stderr, "%llu validation message(s)\n",
                (unsigned long long)stats.validation_messages);
        goto out;
    }
    printf("consumer_c (salvo::static, salvo_add_shader): %u values checked\n", N);
    rc = 0;
out:
    salvo_stream_destroy(stream);
    salvo_kernel_destroy(kernel);
    salvo_buffer_destroy(buf);
    salvo_device_destroy(dev);
    return rc;
}
