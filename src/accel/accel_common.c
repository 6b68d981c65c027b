/*
 * Result names shared by every accelerator: the Vulkan one, the fake and
 * the fault decorator (whose specs name results as text).
 */
#include "accel/accel.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>

/* Results are Vulkan's numbers; these are the ones a device call can return
 * in practice, plus what a fault spec may want to inject. Plain numbers
 * cover the rest. */
static const struct {
    accel_result value;
    const char *name;
    const char *short_name; /* NULL when there is none */
} results[] = {
    {ACCEL_SUCCESS, "VK_SUCCESS", NULL},
    {ACCEL_NOT_READY, "VK_NOT_READY", "not_ready"},
    {ACCEL_TIMEOUT, "VK_TIMEOUT", "timeout"},
    {3, "VK_EVENT_SET", NULL},
    {4, "VK_EVENT_RESET", NULL},
    {ACCEL_INCOMPLETE, "VK_INCOMPLETE", NULL},
    {ACCEL_ERROR_OUT_OF_HOST_MEMORY, "VK_ERROR_OUT_OF_HOST_MEMORY", "oom_host"},
    {ACCEL_ERROR_OUT_OF_DEVICE_MEMORY, "VK_ERROR_OUT_OF_DEVICE_MEMORY", "oom_device"},
    {ACCEL_ERROR_INITIALIZATION_FAILED, "VK_ERROR_INITIALIZATION_FAILED", NULL},
    {ACCEL_ERROR_DEVICE_LOST, "VK_ERROR_DEVICE_LOST", "device_lost"},
    {-5, "VK_ERROR_MEMORY_MAP_FAILED", NULL},
    {ACCEL_ERROR_LAYER_NOT_PRESENT, "VK_ERROR_LAYER_NOT_PRESENT", NULL},
    {ACCEL_ERROR_EXTENSION_NOT_PRESENT, "VK_ERROR_EXTENSION_NOT_PRESENT", NULL},
    {ACCEL_ERROR_FEATURE_NOT_PRESENT, "VK_ERROR_FEATURE_NOT_PRESENT", NULL},
    {ACCEL_ERROR_INCOMPATIBLE_DRIVER, "VK_ERROR_INCOMPATIBLE_DRIVER", NULL},
    {-10, "VK_ERROR_TOO_MANY_OBJECTS", NULL},
    {-11, "VK_ERROR_FORMAT_NOT_SUPPORTED", NULL},
    {-12, "VK_ERROR_FRAGMENTED_POOL", NULL},
    {ACCEL_ERROR_UNKNOWN, "VK_ERROR_UNKNOWN", "unknown"},
    {ACCEL_ERROR_OUT_OF_POOL_MEMORY, "VK_ERROR_OUT_OF_POOL_MEMORY", "pool"},
    {ACCEL_ERROR_INVALID_EXTERNAL_HANDLE, "VK_ERROR_INVALID_EXTERNAL_HANDLE", NULL},
    {-1000161000, "VK_ERROR_FRAGMENTATION", NULL},
};

const char *accel_result_name(accel_result r)
{
    for (size_t i = 0; i < sizeof results / sizeof results[0]; i++)
        if (results[i].value == r)
            return results[i].name;
    /* Callers put this into messages next to the number; it must never be
     * NULL and never allocate. */
    return "VK_RESULT_UNRECOGNIZED";
}

/* Specs come from people (environment variables), so case is forgiven. */
static bool same_text(const char *a, const char *b)
{
    for (;; a++, b++) {
        char ca = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        char cb = *b >= 'A' && *b <= 'Z' ? (char)(*b - 'A' + 'a') : *b;
        if (ca != cb)
            return false;
        if (!ca)
            return true;
    }
}

bool accel_result_parse(const char *text, accel_result *out)
{
    if (!text || !*text)
        return false;
    for (size_t i = 0; i < sizeof results / sizeof results[0]; i++) {
        if (same_text(text, results[i].name) ||
            (results[i].short_name && same_text(text, results[i].short_name))) {
            *out = results[i].value;
            return true;
        }
    }
    /* Any VkResult by number, so a newer driver's code can be injected
     * without a table entry. */
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || *end || end == text || v < INT32_MIN || v > INT32_MAX)
        return false;
    *out = (accel_result)v;
    return true;
}
