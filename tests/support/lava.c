#include "support/lava.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Atomic uint64_t validation_count;

static void log_cb(void *user, salvo_log_level level, const char *file, int line,
                   const char *message)
{
    (void)user;
    (void)line;
    if (file && strcmp(file, "validation") == 0) {
        atomic_fetch_add(&validation_count, 1);
        fprintf(stderr, "VALIDATION: %s\n", message);
    } else if (level >= SALVO_LOG_WARNING) {
        fprintf(stderr, "salvo: %s\n", message);
    }
}

void lava_require_device(void)
{
    uint32_t n = 0;
    if (salvo_device_enumerate(NULL, &n) != SALVO_OK || n == 0) {
        fprintf(stderr, "no Vulkan device: skipped\n");
        exit(LAVA_SKIP);
    }
}

salvo_device *lava_open(uint32_t flags, uint32_t batch_size)
{
    lava_require_device();
    salvo_device_desc desc = {
        .flags = flags | SALVO_DEVICE_VALIDATION,
        .batch_size = batch_size,
        .log = log_cb,
    };
    salvo_device *dev = NULL;
    salvo_status st = salvo_device_create(&desc, &dev);
    if (st != SALVO_OK) {
        fprintf(stderr, "device_create: %s: %s\n", salvo_status_string(st), salvo_last_error());
        exit(st == SALVO_ERROR_NO_DEVICE ? LAVA_SKIP : 1);
    }
    return dev;
}

uint64_t lava_validation_messages(void)
{
    return atomic_load(&validation_count);
}

void lava_close(salvo_device *dev)
{
    salvo_device_destroy(dev);
}
