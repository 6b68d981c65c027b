/*
 * Locks the compiler checks. Built by clang with -Wthread-safety (the
 * SALVO_THREAD_SAFETY option), the annotations below make a call that
 * needs a lock without holding it, a lock taken twice, or one not let go
 * on some path, a compile error. Other compilers see nothing: every macro
 * is empty where the attributes are unknown.
 *
 * salvo_mutex is a pthread mutex the analysis knows as a capability;
 * its helpers say what each call takes and gives back. A function that
 * needs the lock held names it through its own parameters
 * (SALVO_REQUIRES(q->lock), SALVO_REQUIRES(st->q->lock)).
 *
 * The analysis tells locks apart by the expression that names them:
 * dev->q.lock and st->q->lock are one lock at run time, two to the
 * compiler. Where code holds the lock under one name and calls what needs
 * it under another (a stream of the queue whose lock it took), it says so
 * with salvo_mutex_same, which checked builds (SALVO_CHECKS) verify; a
 * function that holds it under no name of its own (a release run by the
 * retire queue) says so with salvo_mutex_held.
 *
 * No guarded_by on struct fields: clang (14 at least) does not look a
 * field's name up inside a C struct, so an attribute on one field cannot
 * name the lock beside it.
 */
#ifndef SALVO_BASE_LOCK_H
#define SALVO_BASE_LOCK_H

#include <pthread.h>
#include <stdbool.h>

#include "base/check.h"

#if defined(__has_attribute)
#if __has_attribute(capability)
#define SALVO_TSA_(x) __attribute__((x))
#endif
#endif
#ifndef SALVO_TSA_
#define SALVO_TSA_(x)
#endif

/* A type whose objects are locks (on a struct). */
#define SALVO_CAPABILITY(name) SALVO_TSA_(capability(name))
/* A variable read or written only with the lock held. */
#define SALVO_GUARDED_BY(lock) SALVO_TSA_(guarded_by(lock))
/* Held on entry, still held on return (it may be let go and taken back
 * meanwhile). */
#define SALVO_REQUIRES(...) SALVO_TSA_(requires_capability(__VA_ARGS__))
/* Not held on entry, held on return; and the reverse. */
#define SALVO_ACQUIRE(...) SALVO_TSA_(acquire_capability(__VA_ARGS__))
#define SALVO_RELEASE(...) SALVO_TSA_(release_capability(__VA_ARGS__))
/* Held on return when the function returns ok (true, say). */
#define SALVO_TRY_ACQUIRE(ok, ...) SALVO_TSA_(try_acquire_capability(ok, __VA_ARGS__))
/* Must not be held by the caller: the function takes it. */
#define SALVO_EXCLUDES(...) SALVO_TSA_(locks_excluded(__VA_ARGS__))
/* Held from here on, as far as the analysis knows (salvo_mutex_same). */
#define SALVO_ASSERT_CAPABILITY(lock) SALVO_TSA_(assert_capability(lock))
/* The function is not analysed: each use says why. */
#define SALVO_NO_THREAD_SAFETY_ANALYSIS SALVO_TSA_(no_thread_safety_analysis)

typedef struct SALVO_CAPABILITY("mutex") salvo_mutex {
    pthread_mutex_t m;
} salvo_mutex;

#define SALVO_MUTEX_INITIALIZER {PTHREAD_MUTEX_INITIALIZER}

/* 0 or pthread_mutex_init's error. */
static inline int salvo_mutex_init(salvo_mutex *mu)
{
    return pthread_mutex_init(&mu->m, NULL);
}

static inline void salvo_mutex_destroy(salvo_mutex *mu)
{
    pthread_mutex_destroy(&mu->m);
}

/* The helpers themselves are not analysed: they are where the analysis
 * takes the pthread calls on trust. */
static inline void salvo_mutex_lock(salvo_mutex *mu) SALVO_ACQUIRE(*mu)
    SALVO_NO_THREAD_SAFETY_ANALYSIS
{
    pthread_mutex_lock(&mu->m);
}

static inline void salvo_mutex_unlock(salvo_mutex *mu) SALVO_RELEASE(*mu)
    SALVO_NO_THREAD_SAFETY_ANALYSIS
{
    pthread_mutex_unlock(&mu->m);
}

/* True when it took the lock; never waits. */
static inline bool salvo_mutex_trylock(salvo_mutex *mu) SALVO_TRY_ACQUIRE(true, *mu)
    SALVO_NO_THREAD_SAFETY_ANALYSIS
{
    return pthread_mutex_trylock(&mu->m) == 0;
}

/* pthread_cond_wait on mu: let go while waiting, held again on return. */
static inline void salvo_cond_wait(pthread_cond_t *cv, salvo_mutex *mu) SALVO_REQUIRES(*mu)
    SALVO_NO_THREAD_SAFETY_ANALYSIS
{
    pthread_cond_wait(cv, &mu->m);
}

/* also is the lock the caller holds as held, named another way (a stream's
 * st->q, the queue whose lock it took): the analysis checks that held is
 * held and from here on takes also as held too; checked builds check that
 * the two are one. */
static inline void salvo_mutex_same(const salvo_mutex *held, salvo_mutex *also)
    SALVO_REQUIRES(*held) SALVO_ASSERT_CAPABILITY(*also) SALVO_NO_THREAD_SAFETY_ANALYSIS
{
    SALVO_CHECK(held == also, "%p and %p named as one lock", (const void *)held,
                (const void *)also);
    (void)held;
    (void)also;
}

/* The caller holds mu and has no other name for it (a release the retire
 * queue runs, under its owner's lock, knows only its own object). Checked
 * builds abort when nobody holds it: the look takes the lock only when it
 * was free, and then aborts. */
static inline void salvo_mutex_held(salvo_mutex *mu) SALVO_ASSERT_CAPABILITY(*mu)
    SALVO_NO_THREAD_SAFETY_ANALYSIS
{
    SALVO_CHECK(pthread_mutex_trylock(&mu->m) != 0, "a lock the caller should hold is free");
    (void)mu;
}

#endif
