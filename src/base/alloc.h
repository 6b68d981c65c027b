/*
 * Host allocation through the user's allocator (salvo_allocator), or
 * malloc/free when none was given. Every host allocation of the library
 * goes through these.
 */
#ifndef SALVO_BASE_ALLOC_H
#define SALVO_BASE_ALLOC_H

#include <stddef.h>

#include "salvo/salvo.h"

/* alloc may be NULL (malloc). Returns NULL on failure or size 0. */
void *salvo_mem_alloc(const salvo_allocator *alloc, size_t size);
void *salvo_mem_calloc(const salvo_allocator *alloc, size_t count, size_t size);
void salvo_mem_free(const salvo_allocator *alloc, void *ptr);
/* A copy of s (NULL for NULL or on failure). */
char *salvo_mem_strdup(const salvo_allocator *alloc, const char *s);

#endif
