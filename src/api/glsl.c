/* Runtime GLSL through glslang's C interface; see glsl.h. */
#define _POSIX_C_SOURCE 200809L
#include "api/glsl.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"

/* The build defines SALVO_GLSL: 1 with glslang linked in, 0 without. */
#if !defined(SALVO_GLSL)
#error "SALVO_GLSL must be defined to 0 or 1 (see CMakeLists.txt)"
#endif

#if SALVO_GLSL
#include <glslang/Include/glslang_c_interface.h>
#include <glslang/Public/resource_limits_c.h>

static pthread_once_t glslang_once = PTHREAD_ONCE_INIT;
static bool glslang_ready;

static void glslang_init_once(void)
{
    glslang_ready = glslang_initialize_process() != 0;
}

/*
 * The #version glslang will compile for, found the way glslang finds it
 * (TInputScanner::scanVersion, before any preprocessing) so that salvo can
 * refuse what glslang would print about: for a desktop version below 150
 * (110, 120, 130, 140), a compute shader for Vulkan ends up with
 * glslang's built-in declarations for a profile they do not parse in, and
 * glslang then printf()s them, some 260 KB, to the process's stdout. A
 * library must not print, and those versions cannot compile anyway.
 * Returns 0 when the source names no version.
 */
typedef struct scan {
    const char *p;
} scan;

static int peek(const scan *s)
{
    return *s->p ? (unsigned char)*s->p : EOF;
}

static int get(scan *s)
{
    return *s->p ? (unsigned char)*s->p++ : EOF;
}

/* Back over the last character get() returned (never EOF). */
static void unget(scan *s)
{
    s->p--;
}

/* One comment, if one starts here: // (with \-continued lines) or / * * /. */
static bool skip_comment(scan *s)
{
    if (peek(s) != '/')
        return false;
    get(s);
    int c = peek(s);
    if (c == '/') {
        get(s);
        c = get(s);
        for (;;) {
            while (c != EOF && c != '\\' && c != '\r' && c != '\n')
                c = get(s);
            if (c != '\\') {
                while (c == '\r' || c == '\n')
                    c = get(s);
                break;
            }
            c = get(s); /* the escaped character: a \r\n counts as one */
            if (c == '\r' && peek(s) == '\n')
                get(s);
            c = get(s);
        }
        if (c != EOF)
            unget(s);
        return true;
    }
    if (c == '*') {
        get(s);
        c = get(s);
        for (;;) {
            while (c != EOF && c != '*')
                c = get(s);
            if (c == EOF)
                break;
            c = get(s);
            if (c == '/')
                break;
        }
        return true;
    }
    return false; /* a lone '/': glslang puts it back; the next get() reads it */
}

static void skip_blanks_and_comments(scan *s)
{
    for (;;) {
        while (peek(s) == ' ' || peek(s) == '\t' || peek(s) == '\r' || peek(s) == '\n')
            get(s);
        if (peek(s) != '/')
            return;
        if (!skip_comment(s)) {
            unget(s);
            return;
        }
    }
}

static bool is_space(int c)
{
    return c == EOF || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int glslang_version(const char *source)
{
    scan s = {source};
    /* As glslang's: an int that is not reset between attempts, and wraps
     * (which glslang's does in practice) on absurdly long digit strings. */
    uint32_t version = 0;
    bool first = true;
    for (;;) {
        if (!first) {
            /* The rest of this line, then the line ends. */
            if (peek(&s) != '\n' && peek(&s) != '\r') {
                int c;
                do
                    c = get(&s);
                while (c != EOF && c != '\n' && c != '\r');
            }
            while (peek(&s) == '\n' || peek(&s) == '\r')
                get(&s);
            if (peek(&s) == EOF)
                return (int32_t)version;
        }
        first = false;
        skip_blanks_and_comments(&s);
        if (get(&s) != '#')
            continue;
        int c;
        do
            c = get(&s);
        while (c == ' ' || c == '\t');
        const char *word = "version";
        bool match = c == word[0];
        for (int i = 1; match && word[i]; i++)
            match = get(&s) == word[i];
        if (!match)
            continue;
        do
            c = get(&s);
        while (c == ' ' || c == '\t');
        while (c >= '0' && c <= '9') {
            version = 10u * version + (uint32_t)(c - '0');
            c = get(&s);
        }
        if (version == 0)
            continue;
        while (c == ' ' || c == '\t')
            c = get(&s);
        for (int n = 0; n < 13 && !is_space(c); n++) /* the profile word */
            c = get(&s);
        if (!is_space(c))
            continue;
        return (int32_t)version;
    }
}

/* reason = prefix + log, the log's lines joined by "; " and trailing
 * blanks dropped, cut to reason_size. */
static void put_log(char *reason, size_t reason_size, const char *name, const char *log)
{
    if (!reason || reason_size == 0)
        return;
    int n = name ? snprintf(reason, reason_size, "'%s': GLSL does not compile: ", name)
                 : snprintf(reason, reason_size, "GLSL does not compile: ");
    size_t at = n < 0 ? 0 : (size_t)n;
    if (at >= reason_size)
        return;
    const size_t start = at;
    if (!log || !*log)
        log = "(glslang gave no message)";
    bool pending = false; /* a line ended: separate it from the next one */
    for (const char *p = log; *p && at + 1 < reason_size; p++) {
        if (*p == '\n' || *p == '\r') {
            while (at > start && reason[at - 1] == ' ')
                at--;
            pending = at > start;
            continue;
        }
        if (pending) {
            if (at + 3 >= reason_size)
                break;
            reason[at++] = ';';
            reason[at++] = ' ';
            pending = false;
        }
        reason[at++] = *p;
    }
    while (at > 0 && reason[at - 1] == ' ')
        at--;
    reason[at] = '\0';
}

#endif

static void put_reason(char *reason, size_t reason_size, const char *name, const char *text)
{
    if (!reason || !reason_size)
        return;
    if (name)
        snprintf(reason, reason_size, "'%s': %s", name, text);
    else
        snprintf(reason, reason_size, "%s", text);
}

#if !SALVO_GLSL

salvo_status glsl_compile(const salvo_allocator *alloc, const char *source, const char *name,
                          uint32_t **words, size_t *size, char *reason, size_t reason_size)
{
    (void)alloc;
    (void)source;
    if (words)
        *words = NULL;
    if (size)
        *size = 0;
    put_reason(reason, reason_size, name,
               "runtime GLSL is not built into this salvo (SALVO_GLSL=OFF)");
    return SALVO_ERROR_UNSUPPORTED;
}

#else

salvo_status glsl_compile(const salvo_allocator *alloc, const char *source, const char *name,
                          uint32_t **words, size_t *size, char *reason, size_t reason_size)
{
    if (reason && reason_size)
        reason[0] = '\0';
    if (!words || !size) {
        put_reason(reason, reason_size, name, "glsl_compile: words or size is NULL");
        return SALVO_ERROR_INVALID_ARGUMENT;
    }
    *words = NULL;
    *size = 0;
    if (!source || !*source) {
        put_reason(reason, reason_size, name, "GLSL source is NULL or empty");
        return SALVO_ERROR_INVALID_ARGUMENT;
    }
    int version = glslang_version(source);
    if (version >= 110 && version <= 140) {
        char text[128];
        snprintf(text, sizeof text,
                 "GLSL #version %d is not supported for Vulkan compute shaders (450 is)", version);
        put_reason(reason, reason_size, name, text);
        return SALVO_ERROR_INVALID_ARGUMENT;
    }
    pthread_once(&glslang_once, glslang_init_once);
    if (!glslang_ready) {
        put_reason(reason, reason_size, name, "glslang could not be initialised");
        return SALVO_ERROR_UNKNOWN;
    }

    /* glslang keeps a pointer to input.code until the shader is deleted:
     * input lives for the whole compile. */
    const glslang_input_t input = {
        .language = GLSLANG_SOURCE_GLSL,
        .stage = GLSLANG_STAGE_COMPUTE,
        .client = GLSLANG_CLIENT_VULKAN,
        .client_version = GLSLANG_TARGET_VULKAN_1_1,
        .target_language = GLSLANG_TARGET_SPV,
        .target_language_version = GLSLANG_TARGET_SPV_1_3,
        .code = source,
        .default_version = 450,
        .default_profile = GLSLANG_NO_PROFILE,
        .force_default_version_and_profile = 0,
        .forward_compatible = 0,
        /* What glslangValidator -V uses. */
        .messages = GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT,
        .resource = glslang_default_resource(),
    };
    salvo_status st = SALVO_ERROR_INVALID_ARGUMENT;
    glslang_program_t *program = NULL;
    /* From here glslang allocates through C++ new, not through alloc: an
     * exception to "every host allocation goes through the salvo_allocator"
     * (documented at salvo_allocator). glslang's C interface takes no
     * allocator, and replacing operator new is the application's choice,
     * not a library's. Only the SPIR-V copy handed back comes from alloc. */
    glslang_shader_t *shader = glslang_shader_create(&input);
    if (!shader) {
        put_reason(reason, reason_size, name, "glslang could not create a shader");
        return SALVO_ERROR_UNKNOWN;
    }
    /* parse reads what preprocess produced: both steps, in this order. */
    if (!glslang_shader_preprocess(shader, &input) || !glslang_shader_parse(shader, &input)) {
        put_log(reason, reason_size, name, glslang_shader_get_info_log(shader));
        goto done;
    }
    program = glslang_program_create();
    if (!program) {
        put_reason(reason, reason_size, name, "glslang could not create a program");
        st = SALVO_ERROR_UNKNOWN;
        goto done;
    }
    glslang_program_add_shader(program, shader);
    if (!glslang_program_link(program, GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT)) {
        put_log(reason, reason_size, name, glslang_program_get_info_log(program));
        goto done;
    }
    glslang_program_SPIRV_generate(program, GLSLANG_STAGE_COMPUTE);
    size_t count = glslang_program_SPIRV_get_size(program);
    const unsigned int *spirv = glslang_program_SPIRV_get_ptr(program);
    if (count == 0 || !spirv) {
        put_log(reason, reason_size, name, glslang_program_SPIRV_get_messages(program));
        goto done;
    }
    uint32_t *copy = salvo_mem_alloc(alloc, count * sizeof *copy);
    if (!copy) {
        put_reason(reason, reason_size, name, "out of host memory for the SPIR-V");
        st = SALVO_ERROR_OUT_OF_HOST_MEMORY;
        goto done;
    }
    for (size_t i = 0; i < count; i++)
        copy[i] = spirv[i];
    *words = copy;
    *size = count * sizeof *copy;
    st = SALVO_OK;
done:
    if (program)
        glslang_program_delete(program);
    glslang_shader_delete(shader);
    return st;
}

#endif
