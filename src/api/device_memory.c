/* salvo_device_memory_info: the device's memory heaps as the accelerator
 * finds them now (sizes, budget, usage, what the device allocated). */
#include <string.h>

#include "api/internal.h"

salvo_status salvo_device_memory_info(salvo_device *dev, salvo_memory_info *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!dev || !out)
        return SALVO_FAIL(dev ? &dev->log : NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "device_memory_info: %s is NULL", dev ? "out" : "device");
    if (dev->acc.vt->memory_info)
        dev->acc.vt->memory_info(dev->acc.self, dev->adev, out);
    if (out->heap_count == 0) {
        /* An accelerator that counts nothing: the heaps it reported at
         * open, each free as far as anyone here knows. */
        out->measured = false;
        out->heap_count = dev->info.memory_heap_count;
        for (uint32_t i = 0; i < out->heap_count; i++)
            out->heaps[i] = (salvo_heap_usage){
                .size = dev->info.memory_heaps[i].size,
                .device_local = dev->info.memory_heaps[i].device_local,
                .budget = dev->info.memory_heaps[i].size,
            };
    }
    salvo_clear_error();
    return SALVO_OK;
}
