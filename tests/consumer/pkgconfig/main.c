/* Built with nothing but `cc main.c $(pkg-config --cflags --libs salvo)`
 * (or salvo-static, with CONSUMER_LINKAGE "static"): opens the default
 * device and round-trips a buffer. Exit 77 without a device. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <salvo/salvo.h>

#ifndef CONSUMER_LINKAGE
#define CONSUMER_LINKAGE "shared"
#endif

int main(void)
{
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
    if (st != SALVO_OK) {
        fprintf(stderr, "salvo_device_create: %s: %s\n", salvo_status_string(st),
                salvo_last_error());
        return 1;
    }
    uint32_t in[256], out[256];
    for (uint32_t i = 0; i < 256; i++)
        in[i] = i * 2654435761u;
    memset(out, 0, sizeof out);
    salvo_buffer *buf = NULL;
    int rc = 1;
    if ((st = salvo_buffer_create(dev, sizeof in, SALVO_DOMAIN_DEVICE, &buf)) != SALVO_OK ||
        (st = salvo_buffer_write(buf, 0, in, sizeof in)) != SALVO_OK ||
        (st = salvo_buffer_read(buf, 0, out, sizeof out)) != SALVO_OK)
        fprintf(stderr, "%s: %s\n", salvo_status_string(st), salvo_last_error());
    else if (memcmp(in, out, sizeof in) != 0)
        fprintf(stderr, "buffer round trip differs\n");
    else {
        printf("consumer_pkgconfig (salvo %d.%d.%d, %s): round trip checked\n",
               SALVO_VERSION_MAJOR, SALVO_VERSION_MINOR, SALVO_VERSION_PATCH, CONSUMER_LINKAGE);
        rc = 0;
    }
    salvo_buffer_destroy(buf);
    salvo_device_destroy(dev);
    return rc;
}
