/*
 * Internal invariants. SALVO_CHECK(cond, fmt, ...) names the broken
 * invariant on stderr and aborts where SALVO_CHECKS is defined (debug
 * builds, the sanitizer builds, CI); elsewhere it compiles to nothing, so
 * the condition must have no effect of its own.
 */
#ifndef SALVO_BASE_CHECK_H
#define SALVO_BASE_CHECK_H

#ifdef SALVO_CHECKS
#include <stdio.h>
#include <stdlib.h>
#define SALVO_CHECK(cond, ...)                                                        \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "salvo: %s:%d: invariant broken (%s): ", __FILE__,        \
                    __LINE__, #cond);                                                 \
            fprintf(stderr, __VA_ARGS__);                                             \
            fputc('\n', stderr);                                                      \
            abort();                                                                  \
        }                                                                             \
    } while (0)
#else
#define SALVO_CHECK(cond, ...) ((void)0)
#endif

#endif
