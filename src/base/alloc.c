#include "base/alloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"

/* The process-wide default, copied in and out under its lock: a reader
 * never sees half of an allocator. */
static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;
static salvo_allocator default_alloc; /* [default_lock] */
static bool default_set;              /* [default_lock] */

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

bool salvo_mem_grow(const salvo_allocator *alloc, void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap : 16;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return false;
        n *= 2;
    }
    void *fresh = salvo_mem_calloc(alloc, n, elem);
    if (!fresh)
        return false;
    if (*p && *cap)
        memcpy(fresh, *p, *cap * elem);
    salvo_mem_free(alloc, *p);
    *p = fresh;
    *cap = n;
    return true;
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

bool salvo_mem_default(salvo_allocator *out)
{
    pthread_mutex_lock(&default_lock);
    bool set = default_set;
    if (set)
        *out = default_alloc;
    pthread_mutex_unlock(&default_lock);
    return set;
}

salvo_status salvo_default_allocator_set(const salvo_allocator *allocator)
{
    if (allocator && !allocator->alloc != !allocator->free)
        return SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT,
                          "default_allocator_set: alloc and free must be given together");
    pthread_mutex_lock(&default_lock);
    default_set = allocator && allocator->alloc;
    default_alloc = default_set ? *allocator : (salvo_allocator){0};
    pthread_mutex_unlock(&default_lock);
    salvo_clear_error();
    return SALVO_OK;
}
