/*
 * glsl_compile from several threads when none has compiled before: the
 * process's first compiles race into glslang's one-time set-up (its process
 * state, its built-in symbol tables, the SPIR-V generator's tables). This
 * suite must be the process's first user of glslang, so it is a program of
 * its own; unit_glsl covers compiling on threads once glslang is set up.
 * Run under ThreadSanitizer (.ci/run tsan) it checks for races as well as
 * results. No device is involved.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/glsl.h"
#include "core/reflect.h"

#include "add.spv.h"
#include "saxpy.spv.h"

#include "support/glsl_text.h"

/* Refused by the parser: the failure path must be as safe as success. */
static const char UNDECLARED[] = "#version 450\n"
                                 "layout(local_size_x = 1) in;\n"
                                 "void main()\n"
                                 "{\n"
                                 "    nope = 1;\n"
                                 "}\n";

enum { THREADS = 4, ROUNDS = 6 };

typedef struct worker {
    pthread_barrier_t *start;
    int index;
    int ok;          /* compiles whose result was checked and right */
    int unsupported; /* a build without runtime GLSL (SALVO_GLSL=OFF) */
    char failure[600];
} worker;

/* The module reflection sees in words, as it sees the build-time SPIR-V:
 * the compile gave the shader it was given, not another thread's. */
static int same_module(const uint32_t *words, size_t size, const uint32_t *want,
                       size_t want_size)
{
    reflect_module a, b;
    char why[256];
    if (reflect_spirv(words, size, "main", &a, why, sizeof why) != SALVO_OK)
        return 0;
    if (reflect_spirv(want, want_size, "main", &b, why, sizeof why) != SALVO_OK)
        return 0;
    if (a.binding_count != b.binding_count || a.push_constant_size != b.push_constant_size)
        return 0;
    for (uint32_t i = 0; i < a.binding_count; i++)
        if (a.bindings[i].set != b.bindings[i].set ||
            a.bindings[i].binding != b.bindings[i].binding ||
            a.bindings[i].access != b.bindings[i].access ||
            a.bindings[i].uniform != b.bindings[i].uniform)
            return 0;
    return 1;
}

static void *compile_rounds(void *arg)
{
    worker *w = arg;
    /* All threads leave together, so the first compiles overlap. */
    pthread_barrier_wait(w->start);
    for (int r = 0; r < ROUNDS; r++) {
        int which = (w->index + r) % 3;
        const char *src = which == 0 ? ADD_COMP : which == 1 ? SAXPY_COMP : UNDECLARED;
        uint32_t *words = NULL;
        size_t size = 0;
        char why[512];
        salvo_status st = glsl_compile(NULL, src, "t", &words, &size, why, sizeof why);
        if (st == SALVO_ERROR_UNSUPPORTED) {
            w->unsupported = 1;
            return NULL;
        }
        if (which == 2) {
            if (st != SALVO_ERROR_INVALID_ARGUMENT || words || size ||
                !strstr(why, "'nope' : undeclared identifier")) {
                snprintf(w->failure, sizeof w->failure,
                         "thread %d round %d: expected a compile error naming 'nope', got %d: %s",
                         w->index, r, (int)st, why);
                return NULL;
            }
        } else {
            const uint32_t *want = which == 0 ? add_spv : saxpy_spv;
            size_t want_size = which == 0 ? sizeof add_spv : sizeof saxpy_spv;
            if (st != SALVO_OK || !words || size == 0 || size % 4 || words[0] != 0x07230203u ||
                !same_module(words, size, want, want_size)) {
                snprintf(w->failure, sizeof w->failure,
                         "thread %d round %d: %s did not compile to its module (%d): %s",
                         w->index, r, which == 0 ? "add" : "saxpy", (int)st, why);
                free(words);
                return NULL;
            }
            free(words);
        }
        w->ok++;
    }
    return NULL;
}

static void first_compiles_race(void **state)
{
    (void)state;
    pthread_barrier_t start;
    assert_int_equal(pthread_barrier_init(&start, NULL, THREADS), 0);
    pthread_t t[THREADS];
    worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){.start = &start, .index = i};
        assert_int_equal(pthread_create(&t[i], NULL, compile_rounds, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    pthread_barrier_destroy(&start);
    if (w[0].unsupported)
        skip(); /* nothing to race in a build without glslang */
    for (int i = 0; i < THREADS; i++) {
        if (w[i].failure[0])
            fail_msg("%s", w[i].failure);
        assert_int_equal(w[i].ok, ROUNDS);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(first_compiles_race),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
