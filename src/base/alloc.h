/*
 * Host allocation through the user's allocator (salvo_allocator), or
 * malloc/free when none was given. Every host allocation of the library
 * goes through these.
 *
 * Which allocator: a device's (salvo_device_desc.allocator, copied into
 * the device at create), else the process-wide default
 * (salvo_default_allocator_set), resolved once where an object is made
 * (salvo_device_create, salvo_device_enumerate) and kept by it, so that
 * what an allocator gave is always given back to the same one, whatever
 * the default becomes meanwhile.
 *
 * Not through here, by necessity: the Vulkan loader's, layers' and
 * driver's own allocations (accel/vulkan/ passes NULL for
 * VkAllocationCallbacks; see there why), and glslang's (C++ new; see
 * api/glsl.h).
 */
#ifndef SALVO_BASE_ALLOC_H
#define SALVO_BASE_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

#include "salvo/salvo.h"

/* alloc may be NULL (malloc). Returns NULL on failure or size 0. */
void *salvo_mem_alloc(const salvo_allocator *alloc, size_t size);
void *salvo_mem_calloc(const salvo_allocator *alloc, size_t count, size_t size);
void salvo_mem_free(const salvo_allocator *alloc, void *ptr);
/* Make room for need elements of elem bytes in the array *p of *cap
 * elements, doubling (from 16); the contents are kept. false: out of
 * memory (or the size overflows), nothing changed. */
bool salvo_mem_grow(const salvo_allocator *alloc, void **p, size_t *cap, size_t need, size_t elem);
/* A copy of s (NULL for NULL or on failure). */
char *salvo_mem_strdup(const salvo_allocator *alloc, const char *s);
/* Copy the process-wide default into *out: true when one is set (false:
 * malloc/free, *out untouched). The caller keeps the copy for as long as
 * it holds memory from it. */
bool salvo_mem_default(salvo_allocator *out);

#endif
