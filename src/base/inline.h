/*
 * Inlining hints for the launch path, where a call costs more than the
 * work it wraps: SALVO_ALWAYS_INLINE on a static function (with its
 * inline), SALVO_NOINLINE on a rare path kept out of a hot caller. GCC
 * and clang honour them; another compiler gets plain functions.
 */
#ifndef SALVO_BASE_INLINE_H
#define SALVO_BASE_INLINE_H

#if defined(__GNUC__) || defined(__clang__)
#define SALVO_ALWAYS_INLINE __attribute__((always_inline)) inline
#define SALVO_NOINLINE __attribute__((noinline))
#else
#define SALVO_ALWAYS_INLINE inline
#define SALVO_NOINLINE
#endif

#endif
