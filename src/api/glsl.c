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


/*
 * Memory semantics glslang reads as constants. glslang 12 checks the
 * storage-class and memory semantics arguments of the memory-model
 * built-ins (atomicAdd(mem, data, scope, storage, semantics) and the other
 * atomic*, imageAtomic*, controlBarrier, memoryBarrier) by reading each as
 * a folded constant without looking first: one that is not (a variable, a
 * specialization constant, an assignment, a comma expression) makes it
 * dereference NULL, and the process dies. GL_KHR_memory_scope_semantics
 * asks for constant expressions there, so such a source is wrong anyway:
 * salvo refuses it before glslang parses, reading the preprocessed text.
 * Constant here means built of literals, the gl_Semantics*,
 * gl_StorageSemantics* and gl_Scope* constants, operators, constructors
 * and a few built-ins glslang folds (min, max, abs, clamp), fields and
 * .length(), and names declared const (not constant_id) whose initializers
 * are constant alike and that nothing declares or assigns otherwise.
 */
typedef struct token {
    const char *s;
    size_t n; /* 0 at the end */
} token;

static bool ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The token at *p (blanks and preprocessor lines skipped), *p moved past it. */
static token next_token(const char **p)
{
    const char *s = *p;
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
            s++;
        if (*s != '#')
            break;
        while (*s && *s != '\n')
            s++;
    }
    token t = {s, 0};
    if (!*s) {
        *p = s;
        return t;
    }
    bool word = ident_char(*s) || (*s == '.' && s[1] >= '0' && s[1] <= '9');
    do
        t.n++;
    while (word && (ident_char(s[t.n]) || (s[t.n] == '.' && s[0] >= '0' && s[0] <= '9')));
    *p = s + t.n;
    return t;
}

static bool is(token t, const char *text)
{
    return t.n == strlen(text) && memcmp(t.s, text, t.n) == 0;
}

static bool is_ident(token t)
{
    return t.n && ident_char(t.s[0]) && !(t.s[0] >= '0' && t.s[0] <= '9');
}

static bool same(token a, token b)
{
    return a.n == b.n && memcmp(a.s, b.s, a.n) == 0;
}

static bool starts(token t, const char *prefix)
{
    return t.n >= strlen(prefix) && memcmp(t.s, prefix, strlen(prefix)) == 0;
}

/* An '=' token that assigns (=, +=, <<=, ...), not one of ==, !=, <=, >=. */
static bool assigns(token t, const char *code)
{
    if (!is(t, "=") || t.s[1] == '=')
        return false;
    char before = t.s > code ? t.s[-1] : ' ';
    if (before == '=' || before == '!')
        return false;
    if (before == '<' || before == '>')
        return t.s - 1 > code && t.s[-2] == before; /* <<=, >>= */
    return true;
}

static bool name_constant(const char *code, token name, int depth, int *budget);

/* Whether [from, to) of code is a constant expression as above. Names are
 * looked up (each a pass over code) at most *budget times in all: past
 * that, as past 8 names deep, an expression is taken as not constant. */
static bool expr_constant(const char *code, const char *from, const char *to, int depth,
                          int *budget)
{
    static const char *const known_names[] = {"int",   "uint",  "bool",  "ivec2", "ivec3",
                                              "ivec4", "uvec2", "uvec3", "uvec4", "min",
                                              "max",   "abs",   "clamp", "true",  "false"};
    /* Whether each open parenthesis (up to 32 deep) follows a name: a call,
     * where commas part arguments, not the comma operator. */
    bool call[32] = {false};
    int open = 0;
    token prev = {"", 0};
    const char *p = from;
    for (token t = next_token(&p); t.n && t.s < to; prev = t, t = next_token(&p)) {
        const char *q = p;
        token after = next_token(&q);
        bool field = is(prev, ".");
        if (is_ident(t) && !field) {
            bool known = starts(t, "gl_Semantics") || starts(t, "gl_StorageSemantics") ||
                         starts(t, "gl_Scope");
            for (size_t i = 0; i < sizeof known_names / sizeof *known_names && !known; i++)
                known = is(t, known_names[i]);
            if (!known && !is(after, "("))
                known = name_constant(code, t, depth + 1, budget);
            if (!known)
                return false;
        } else if (is(t, "(")) {
            if (open >= 32)
                return false;
            call[open++] = is_ident(prev) || is(prev, "]"); /* f(...), int[](...) */
        } else if (is(t, ")")) {
            open -= open > 0;
        } else if (is(t, ",") && (open == 0 || !call[open - 1])) {
            return false;
        } else if (assigns(t, code) || ((is(t, "+") || is(t, "-")) && t.s[1] == t.s[0])) {
            return false;
        }
    }
    return true;
}

/* Whether name is a constant: declared const (not constant_id) with a
 * constant initializer, and never declared or assigned otherwise. */
static bool name_constant(const char *code, token name, int depth, int *budget)
{
    if (depth > 8 || --*budget < 0)
        return false;
    bool found = false, in_const = false, spec = false, layout_spec = false;
    int parens = 0, const_parens = 0;
    token prev = {"", 0};
    const char *p = code;
    for (token t = next_token(&p); t.n; prev = t, t = next_token(&p)) {
        if (is(t, "(") || is(t, "["))
            parens++;
        else if (is(t, ")") || is(t, "]"))
            parens--;
        if (is(t, "constant_id"))
            layout_spec = spec = true; /* spec matters only inside a const declaration */
        if (is(t, "const")) {
            in_const = true;
            spec = layout_spec;
            const_parens = parens;
        } else if (in_const && parens <= const_parens &&
                   (is(t, ";") || is(t, "{") || (const_parens > 0 && is(t, ",")) ||
                    parens < const_parens)) {
            in_const = false;
        }
        if (is(t, ";") || is(t, "{") || is(t, "}"))
            layout_spec = false;
        if (!same(t, name))
            continue;
        if (is(prev, "."))
            continue; /* a field or swizzle of that name */
        const char *q = p;
        token after = next_token(&q);
        if (is(after, "[")) { /* an array's size: skip to its ']' */
            int d = 0;
            do {
                d += is(after, "[") - is(after, "]");
                after = next_token(&q);
            } while (after.n && d > 0);
        }
        bool declared = is_ident(prev) && !is(prev, "return") && !is(prev, "else") &&
                        !is(prev, "case") && !is(prev, "do");
        if (!assigns(after, code)) {
            if (declared || (in_const && is(prev, ",")))
                return false; /* declared without an initializer: not a constant */
            continue;     /* a use */
        }
        if (!in_const || spec || const_parens > 0)
            return false; /* assigned, or a variable's initializer */
        const char *from = q, *r = q;
        int d = 0;
        for (token u = next_token(&r); u.n; u = next_token(&r)) {
            if (d == 0 && (is(u, ",") || is(u, ";")))
                break;
            d += (is(u, "(") || is(u, "[") || is(u, "{")) - (is(u, ")") || is(u, "]") || is(u, "}"));
            if (d < 0)
                break;
            q = r;
        }
        if (!expr_constant(code, from, q, depth, budget))
            return false;
        found = true;
    }
    return found;
}

/* The memory-model built-ins: the fewest arguments of their form with
 * explicit semantics, and how many of the last ones are semantics. */
static const struct {
    const char *name;
    uint8_t explicit_args, semantics;
} memory_builtins[] = {
    {"atomicAdd", 5, 2},          {"atomicMin", 5, 2},
    {"atomicMax", 5, 2},          {"atomicAnd", 5, 2},
    {"atomicOr", 5, 2},           {"atomicXor", 5, 2},
    {"atomicExchange", 5, 2},     {"atomicStore", 5, 2},
    {"atomicLoad", 4, 2},         {"atomicCompSwap", 8, 4},
    {"imageAtomicAdd", 6, 2},     {"imageAtomicMin", 6, 2},
    {"imageAtomicMax", 6, 2},     {"imageAtomicAnd", 6, 2},
    {"imageAtomicOr", 6, 2},      {"imageAtomicXor", 6, 2},
    {"imageAtomicExchange", 6, 2}, {"imageAtomicStore", 6, 2},
    {"imageAtomicLoad", 5, 2},    {"imageAtomicCompSwap", 9, 4},
    {"controlBarrier", 4, 2},     {"memoryBarrier", 3, 2},
};

/* NULL when every semantics argument in code is constant; else the
 * reason, in text (of text_size bytes). */
static const char *semantics_refusal(const char *code, char *text, size_t text_size)
{
    const char *p = code;
    for (token t = next_token(&p); t.n; t = next_token(&p)) {
        size_t b = 0, count = sizeof memory_builtins / sizeof *memory_builtins;
        while (b < count && !is(t, memory_builtins[b].name))
            b++;
        const char *q = p;
        if (b == count || !is(next_token(&q), "("))
            continue;
        /* Where each argument starts, and where the call ends. */
        enum { MAX_ARGS = 16 };
        const char *arg[MAX_ARGS + 1];
        unsigned args = 0;
        int d = 0;
        bool closed = false;
        arg[0] = q;
        for (token u = next_token(&q); u.n && !closed; u = next_token(&q)) {
            if (is(u, "(") || is(u, "[") || is(u, "{"))
                d++;
            else if (is(u, ")") || is(u, "]") || is(u, "}"))
                d--;
            closed = d < 0;
            if (closed || (d == 0 && is(u, ",")))
                if (++args <= MAX_ARGS)
                    arg[args] = q;
        }
        if (!closed || args < memory_builtins[b].explicit_args || args > MAX_ARGS)
            continue;
        for (unsigned i = args - memory_builtins[b].semantics; i < args; i++) {
            int budget = 64;
            if (expr_constant(code, arg[i], arg[i + 1] - 1, 0, &budget))
                continue;
            snprintf(text, text_size,
                     "GLSL does not compile: argument %u of %s, a memory semantics, is not a "
                     "constant expression (GL_KHR_memory_scope_semantics needs one)",
                     i + 1, memory_builtins[b].name);
            return text;
        }
    }
    return NULL;
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
    /* parse reads what preprocess produced: both steps, in this order,
     * and between them what parse would crash on refused (above). */
    if (!glslang_shader_preprocess(shader, &input)) {
        put_log(reason, reason_size, name, glslang_shader_get_info_log(shader));
        goto done;
    }
    const char *preprocessed = glslang_shader_get_preprocessed_code(shader);
    char refusal[192];
    if (preprocessed && semantics_refusal(preprocessed, refusal, sizeof refusal)) {
        put_reason(reason, reason_size, name, refusal);
        goto done;
    }
    if (!glslang_shader_parse(shader, &input)) {
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
