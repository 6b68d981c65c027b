#include "base/alloc.h"

#include <stdlib.h>
#include <string.h>

void *salvo_mem_alloc(const salvo_allocator *alloc, size_t size)
{
    if (size == 0)
        return NULL;
    if (alloc && alloc->alloc)
        return alloc->alloc(alloc->user, size);
    return malloc(size);
}

void *salvo_mem_calloc(const salvo_allocator *alloc, size_t count, size_t size)
{
    if (count != 0 && size > SIZE_MAX / count)
        return NULL;
    void *p = salvo_mem_alloc(alloc, count * size);
    if (p)
        memset(p, 0, count * size);
    return p;
}

void salvo_mem_free(const salvo_allocator *alloc, void *ptr)
{
    if (!ptr)
        return;
    if (alloc && alloc->free)
        alloc->free(alloc->user, ptr);
    else
        free(ptr);
}

char *salvo_mem_strdup(const salvo_allocator *alloc, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *p = salvo_mem_alloc(alloc, n);
    if (p)
        memcpy(p, s, n);
    return p;
}
