/*
 * glsl_compile alone, no device: GLSL compiled in process gives the module
 * glslangValidator gives at build time (as reflection sees it), compile
 * errors come back with glslang's messages, and every argument edge is a
 * status, not a crash. In a build without runtime GLSL (SALVO_GLSL=OFF),
 * every call must say UNSUPPORTED instead.
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
#include <unistd.h>

#include <cmocka.h>

#include "api/glsl.h"
#include "base/alloc.h"
#include "core/reflect.h"

#include "add.spv.h"
#include "saxpy.spv.h"

#include "support/glsl_text.h"

static const char UNDECLARED[] = "#version 450\n"
                                 "layout(local_size_x = 1) in;\n"
                                 "void main()\n"
                                 "{\n"
                                 "    nowhere = 1;\n"
                                 "}\n";

/* Runtime GLSL is in this build; else every call says UNSUPPORTED. */
static bool glsl_built;

static char reason[1024];

static salvo_status compile(const salvo_allocator *alloc, const char *src, const char *name,
                            uint32_t **words, size_t *size)
{
    memset(reason, 'X', sizeof reason);
    salvo_status st = glsl_compile(alloc, src, name, words, size, reason, sizeof reason);
    assert_non_null(memchr(reason, '\0', sizeof reason));
    if (st == SALVO_OK) {
        assert_string_equal(reason, "");
        assert_non_null(*words);
        assert_true(*size > 0 && *size % 4 == 0);
    } else {
        assert_true(reason[0] != '\0');
        assert_null(*words);
        assert_int_equal(*size, 0);
    }
    return st;
}

static void expect_contains(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("\"%s\" does not contain \"%s\"", text, needle);
}

static void expect_same_reflection(const uint32_t *a, size_t a_size, const uint32_t *b,
                                   size_t b_size)
{
    reflect_module ma, mb;
    char why[256];
    assert_int_equal(reflect_spirv(a, a_size, "main", &ma, why, sizeof why), SALVO_OK);
    assert_int_equal(reflect_spirv(b, b_size, "main", &mb, why, sizeof why), SALVO_OK);
    assert_int_equal(ma.binding_count, mb.binding_count);
    for (uint32_t i = 0; i < ma.binding_count; i++) {
        assert_int_equal(ma.bindings[i].set, mb.bindings[i].set);
        assert_int_equal(ma.bindings[i].binding, mb.bindings[i].binding);
        assert_int_equal(ma.bindings[i].access, mb.bindings[i].access);
        assert_int_equal(ma.bindings[i].uniform, mb.bindings[i].uniform);
    }
    assert_int_equal(ma.push_constant_size, mb.push_constant_size);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(ma.local_size[i], mb.local_size[i]);
        assert_int_equal(ma.local_size_spec_id[i], mb.local_size_spec_id[i]);
    }
}

static void unsupported_without_glsl(void **state)
{
    (void)state;
    uint32_t *w = (uint32_t *)1;
    size_t n = 1;
    assert_int_equal(compile(NULL, ADD_COMP, "add", &w, &n), SALVO_ERROR_UNSUPPORTED);
    expect_contains(reason, "SALVO_GLSL=OFF");
}

static void add_matches_prebuilt(void **state)
{
    (void)state;
    uint32_t *w = NULL;
    size_t n = 0;
    assert_int_equal(compile(NULL, ADD_COMP, "add", &w, &n), SALVO_OK);
    assert_int_equal(w[0], 0x07230203u); /* SPIR-V magic */
    assert_int_equal(w[1], 0x00010300u); /* SPIR-V 1.3: Vulkan 1.1, as salvo_add_shader */
    expect_same_reflection(w, n, add_spv, sizeof add_spv);
    reflect_module m;
    char why[256];
    assert_int_equal(reflect_spirv(w, n, "main", &m, why, sizeof why), SALVO_OK);
    assert_int_equal(m.binding_count, 1);
    assert_int_equal(m.bindings[0].access, SALVO_ACCESS_READ_WRITE);
    assert_int_equal(m.push_constant_size, 8);
    assert_int_equal(m.local_size_spec_id[0], 0);
    free(w);

    assert_int_equal(compile(NULL, SAXPY_COMP, "saxpy", &w, &n), SALVO_OK);
    expect_same_reflection(w, n, saxpy_spv, sizeof saxpy_spv);
    free(w);
}

static void no_version_line_reads_as_450(void **state)
{
    (void)state;
    uint32_t *w = NULL;
    size_t n = 0;
    const char *src = "layout(local_size_x = 8) in;\n"
                      "layout(std430, binding = 0) writeonly buffer Out { uint o[]; };\n"
                      "void main() { o[gl_GlobalInvocationID.x] = 7u; }\n";
    assert_int_equal(compile(NULL, src, "plain", &w, &n), SALVO_OK);
    reflect_module m;
    char why[256];
    assert_int_equal(reflect_spirv(w, n, "main", &m, why, sizeof why), SALVO_OK);
    assert_int_equal(m.binding_count, 1);
    assert_int_equal(m.bindings[0].access, SALVO_ACCESS_WRITE);
    assert_int_equal(m.local_size[0], 8);
    free(w);
}

static void compile_errors_carry_the_log(void **state)
{
    (void)state;
    uint32_t *w = NULL;
    size_t n = 0;
    assert_int_equal(compile(NULL, UNDECLARED, "my_kernel", &w, &n),
                     SALVO_ERROR_INVALID_ARGUMENT);
    expect_contains(reason, "'my_kernel'");
    expect_contains(reason, "ERROR");
    expect_contains(reason, "nowhere");
    expect_contains(reason, "undeclared identifier");
    /* One line: glslang's lines are joined. */
    assert_null(strchr(reason, '\n'));

    /* Without a name, the log alone. */
    assert_int_equal(compile(NULL, UNDECLARED, NULL, &w, &n), SALVO_ERROR_INVALID_ARGUMENT);
    expect_contains(reason, "ERROR");
    assert_int_not_equal(reason[0], '\'');

    /* Text that is not GLSL at all, and a stage other than compute. */
    assert_int_equal(compile(NULL, "\x01\x02 this is { not GLSL", "junk", &w, &n),
                     SALVO_ERROR_INVALID_ARGUMENT);
    expect_contains(reason, "ERROR");
    const char *fragment = "#version 450\n"
                           "layout(location = 0) out vec4 color;\n"
                           "void main() { color = gl_FragCoord; }\n";
    assert_int_equal(compile(NULL, fragment, "frag", &w, &n), SALVO_ERROR_INVALID_ARGUMENT);
    expect_contains(reason, "ERROR");
}

/* What this process writes to its stdout while f runs. */
static long stdout_bytes_during(void (*f)(void))
{
    fflush(stdout);
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    int saved = dup(1);
    assert_true(saved >= 0);
    assert_true(dup2(fileno(tmp), 1) >= 0);
    f();
    fflush(stdout);
    assert_true(dup2(saved, 1) >= 0);
    close(saved);
    long n = (long)lseek(fileno(tmp), 0, SEEK_END);
    fclose(tmp);
    return n;
}

static void compile_old_versions(void)
{
    /* glslang printf()s its built-ins for these rather than compile them. */
    const char *sources[] = {
        "#version 110\nvoid main() {}\n",
        "#version 120\nvoid main() {}\n",
        "/* a comment first */\n  #  version 130 es\nvoid main() {}\n",
        "void main() {}\n#version 140\n",
        /* glslang's scan keeps the digits of a #version line it skips */
        "#version 1 aaaaaaaaaaaaaaaaaaaa\n#version 10\nvoid main() {}\n",
    };
    for (size_t i = 0; i < sizeof sources / sizeof *sources; i++) {
        uint32_t *w = NULL;
        size_t n = 0;
        assert_int_equal(compile(NULL, sources[i], "old", &w, &n), SALVO_ERROR_INVALID_ARGUMENT);
        expect_contains(reason, "#version");
        expect_contains(reason, "'old'");
    }
}

static void compile_new_versions(void)
{
    const char *sources[] = {
        "#version 460\nlayout(local_size_x = 1) in;\nvoid main() {}\n",
        "#version 310 es\nlayout(local_size_x = 1) in;\nvoid main() {}\n",
        "#version 450 core\nlayout(local_size_x = 1) in;\nvoid main() {}\n",
    };
    for (size_t i = 0; i < sizeof sources / sizeof *sources; i++) {
        uint32_t *w = NULL;
        size_t n = 0;
        assert_int_equal(compile(NULL, sources[i], "new", &w, &n), SALVO_OK);
        free(w);
    }
}

static void versions_are_refused_quietly(void **state)
{
    (void)state;
    assert_int_equal(stdout_bytes_during(compile_old_versions), 0);
    assert_int_equal(stdout_bytes_during(compile_new_versions), 0);
}

static void arguments_are_checked(void **state)
{
    (void)state;
    uint32_t *w = (uint32_t *)1;
    size_t n = 1;
    salvo_status want = glsl_built ? SALVO_ERROR_INVALID_ARGUMENT : SALVO_ERROR_UNSUPPORTED;
    assert_int_equal(compile(NULL, NULL, "k", &w, &n), want);
    assert_int_equal(compile(NULL, "", "k", &w, &n), want);
    assert_int_equal(glsl_compile(NULL, ADD_COMP, "k", NULL, &n, reason, sizeof reason),
                     glsl_built ? SALVO_ERROR_INVALID_ARGUMENT : SALVO_ERROR_UNSUPPORTED);
    assert_int_equal(glsl_compile(NULL, ADD_COMP, "k", &w, NULL, reason, sizeof reason),
                     glsl_built ? SALVO_ERROR_INVALID_ARGUMENT : SALVO_ERROR_UNSUPPORTED);
}

static void reason_buffer_is_respected(void **state)
{
    (void)state;
    uint32_t *w = NULL;
    size_t n = 0;
    /* No buffer at all, and one too small for the prefix: no overflow, and
     * still NUL-terminated. */
    assert_int_equal(glsl_compile(NULL, UNDECLARED, "k", &w, &n, NULL, 0),
                     SALVO_ERROR_INVALID_ARGUMENT);
    char small[12];
    memset(small, 'X', sizeof small);
    assert_int_equal(glsl_compile(NULL, UNDECLARED, "a_long_kernel_name", &w, &n, small, 8),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_non_null(memchr(small, '\0', 8));
    assert_int_equal(small[8], 'X');
    /* A success clears what a failure left. */
    assert_int_equal(glsl_compile(NULL, ADD_COMP, "k", &w, &n, small, sizeof small), SALVO_OK);
    assert_string_equal(small, "");
    free(w);
}

typedef struct counting {
    int allocs, frees;
} counting;

static void *count_alloc(void *user, size_t size)
{
    ((counting *)user)->allocs++;
    return malloc(size);
}

static void count_free(void *user, void *p)
{
    ((counting *)user)->frees++;
    free(p);
}

static void *fail_alloc(void *user, size_t size)
{
    (void)user;
    (void)size;
    return NULL;
}

static void output_comes_from_the_allocator(void **state)
{
    (void)state;
    counting c = {0, 0};
    salvo_allocator a = {count_alloc, count_free, &c};
    uint32_t *w = NULL;
    size_t n = 0;
    assert_int_equal(compile(&a, ADD_COMP, "add", &w, &n), SALVO_OK);
    assert_int_equal(c.allocs, 1);
    salvo_mem_free(&a, w);
    assert_int_equal(c.frees, 1);
    /* A failed compile allocates nothing from it. */
    assert_int_equal(compile(&a, UNDECLARED, "bad", &w, &n), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(c.allocs, 1);

    salvo_allocator none = {fail_alloc, count_free, &c};
    assert_int_equal(compile(&none, ADD_COMP, "add", &w, &n), SALVO_ERROR_OUT_OF_HOST_MEMORY);
    expect_contains(reason, "out of host memory");
}

/* The memory-model built-ins with semantics that are not constant: glslang
 * 12 dereferences NULL on them (its memorySemanticsCheck folds each
 * without looking), so glsl_compile must refuse them first, naming the
 * call; semantics that are constant, however written, still compile. */
static const char SEMANTICS_HEAD[] =
    "#version 450\n"
    "#pragma use_vulkan_memory_model\n"
    "#extension GL_KHR_memory_scope_semantics : require\n"
    "layout(local_size_x = 64) in;\n"
    "layout(constant_id = 0) const int SPEC = 0;\n"
    "const int SEM = gl_SemanticsRelaxed;\n"
    "const int ARR[2] = int[](0, 0);\n"
    "#define RELAXED (gl_SemanticsRelaxed)\n"
    "layout(std430, binding = 0) coherent buffer Out { uint count; uint sum; };\n"
    "layout(binding = 1, r32ui) uniform uimage2D img;\n"
    "shared uint sh;\n";

static salvo_status compile_semantics(const char *body, uint32_t **w, size_t *n)
{
    char src[2048];
    snprintf(src, sizeof src,
             "%s"
             "void main()\n"
             "{\n"
             "    int s = int(count);\n"
             "    %s;\n"
             "}\n",
             SEMANTICS_HEAD, body);
    return compile(NULL, src, "sem", w, n);
}

static void memory_semantics_must_be_constant(void **state)
{
    (void)state;
    /* What the fuzzer found (fuzz_glsl, from tests/compat/memory_model.comp). */
    static const char found[] =
        "#version 450\n"
        "#pragma use_vulkan_memory_model\n"
        "#extension GL_KHR_memory_scope_semantics : require\n"
        "layout(local_size_x = 64) in;\n"
        "layout(std430, binding = 0) coherent buffer Out { uint count; uint sum; uint d[]; };\n"
        "void main()\n"
        "{\n"
        "    uint i = gl_GlobalInvocationID.x;\n"
        "    atomicAdd(count, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed "
        "= 0) uniform texture2DArray tex;\n"
        "layout(binding = 1) uniform sampler smp;\n"
        "layout(push_constant) uniform P csBuffer,\n"
        "                gl_SemanticsRelease);\n"
        "}\n";
    uint32_t *w = NULL;
    size_t n = 0;
    assert_int_equal(compile(NULL, found, "found", &w, &n), SALVO_ERROR_INVALID_ARGUMENT);
    expect_contains(reason, "'found': GLSL does not compile: argument 5 of atomicAdd");
    expect_contains(reason, "not a constant expression");

    static const struct {
        const char *body, *says;
    } refused[] = {
        {"atomicAdd(count, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, s)",
         "argument 5 of atomicAdd"},
        {"atomicAdd(count, 1u, gl_ScopeDevice, s, 0)", "argument 4 of atomicAdd"},
        {"atomicAdd(count, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, SPEC)",
         "argument 5 of atomicAdd"},
        {"atomicAdd(count, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, (1, 0))",
         "argument 5 of atomicAdd"},
        {"atomicAdd(count, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, "
         "gl_SemanticsRelaxed <<= 1)",
         "argument 5 of atomicAdd"},
        {"atomicAdd(count, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, "
         "atomicAdd(sum, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, 0))",
         "argument 5 of atomicAdd"},
        {"int SEM = s; atomicAdd(count, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, SEM)",
         "argument 5 of atomicAdd"},
        {"atomicLoad(count, gl_ScopeDevice, gl_StorageSemanticsBuffer, s)",
         "argument 4 of atomicLoad"},
        {"atomicStore(count, 1u, gl_ScopeDevice, s, gl_SemanticsRelease)",
         "argument 4 of atomicStore"},
        {"atomicCompSwap(count, 0u, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, 0, "
         "gl_StorageSemanticsBuffer, s)",
         "argument 8 of atomicCompSwap"},
        {"imageAtomicAdd(img, ivec2(0), 1u, gl_ScopeDevice, gl_StorageSemanticsImage, s)",
         "argument 6 of imageAtomicAdd"},
        {"memoryBarrier(gl_ScopeDevice, gl_StorageSemanticsBuffer, s)",
         "argument 3 of memoryBarrier"},
        {"controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup, gl_StorageSemanticsShared, s)",
         "argument 4 of controlBarrier"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        assert_int_equal(compile_semantics(refused[i].body, &w, &n), SALVO_ERROR_INVALID_ARGUMENT);
        expect_contains(reason, refused[i].says);
    }

    static const char *const compiled[] = {
        "atomicAdd(count, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed)",
        "atomicAdd(count, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, SEM)",
        "atomicAdd(count, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, RELAXED)",
        "atomicAdd(count, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, ARR[1])",
        "atomicAdd(count, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, ARR.length() - 2)",
        "atomicAdd(count, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, max(0, SEM))",
        "atomicAdd(count, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, ivec2(0, 0).x)",
        "atomicAdd(count, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, SEM == 0 ? 0 : 0)",
        "atomicAdd(count, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, int(0u) | SEM)",
        "atomicAdd(count, 1u, s == 0 ? gl_ScopeDevice : gl_ScopeWorkgroup, "
        "gl_StorageSemanticsBuffer, 0)",
        "atomicAdd(count, 1u)",
        "atomicStore(count, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, "
        "gl_SemanticsRelease | gl_SemanticsMakeAvailable)",
        "atomicCompSwap(count, 0u, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, "
        "gl_SemanticsAcquire, gl_StorageSemanticsBuffer, gl_SemanticsAcquire)",
        "imageAtomicAdd(img, ivec2(0), 1u, gl_ScopeDevice, gl_StorageSemanticsImage, 0)",
        "controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup, gl_StorageSemanticsShared, "
        "gl_SemanticsAcquireRelease)",
    };
    for (size_t i = 0; i < sizeof compiled / sizeof *compiled; i++) {
        salvo_status st = compile_semantics(compiled[i], &w, &n);
        if (st != SALVO_OK)
            fail_msg("%s: %s", compiled[i], reason);
        free(w);
    }
}

/* glslang on several threads at once, each through the once-only init. */
enum { THREADS = 4, ROUNDS = 8 };

static void *compile_rounds(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        uint32_t *w = NULL;
        size_t n = 0;
        char why[512];
        const char *src = i % 2 ? ADD_COMP : UNDECLARED;
        salvo_status st = glsl_compile(NULL, src, "t", &w, &n, why, sizeof why);
        if (st != (i % 2 ? SALVO_OK : SALVO_ERROR_INVALID_ARGUMENT))
            return (void *)1;
        if (st == SALVO_OK && (w[0] != 0x07230203u || n == 0))
            return (void *)1;
        free(w);
    }
    return NULL;
}

static void threads_compile_at_once(void **state)
{
    (void)state;
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, compile_rounds, NULL), 0);
    for (int i = 0; i < THREADS; i++) {
        void *r = (void *)1;
        assert_int_equal(pthread_join(t[i], &r), 0);
        assert_null(r);
    }
}

int main(void)
{
    uint32_t *w = NULL;
    size_t n = 0;
    char why[256];
    glsl_built = glsl_compile(NULL, ADD_COMP, NULL, &w, &n, why, sizeof why) !=
                 SALVO_ERROR_UNSUPPORTED;
    free(w);
    if (!glsl_built) {
        const struct CMUnitTest off[] = {
            cmocka_unit_test(unsupported_without_glsl),
            cmocka_unit_test(arguments_are_checked),
        };
        return cmocka_run_group_tests(off, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(add_matches_prebuilt),
        cmocka_unit_test(no_version_line_reads_as_450),
        cmocka_unit_test(compile_errors_carry_the_log),
        cmocka_unit_test(memory_semantics_must_be_constant),
        cmocka_unit_test(versions_are_refused_quietly),
        cmocka_unit_test(arguments_are_checked),
        cmocka_unit_test(reason_buffer_is_respected),
        cmocka_unit_test(output_comes_from_the_allocator),
        cmocka_unit_test(threads_compile_at_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
