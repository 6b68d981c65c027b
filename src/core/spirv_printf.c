/* Tags on shader printf's format strings; see spirv_printf.h. */
#include "core/spirv_printf.h"

#include <stdbool.h>
#include <string.h>

#include "core/spirv_internal.h"

enum {
    OP_STRING = 7,
    OP_EXT_INST_IMPORT = 11,
    OP_EXT_INST = 12,
    DEBUG_PRINTF = 1, /* the set's one instruction */
};

/* Whether the literal string of the instruction at w[at], from word from,
 * is name (within the instruction; an unterminated literal is not). */
static bool literal_is(const uint32_t *w, uint32_t at, uint32_t from, const char *name)
{
    uint32_t wc = wc_of(w[at]);
    size_t k = 0;
    for (uint32_t i = from; i < wc; i++)
        for (unsigned b = 0; b < 4; b++) {
            char ch = (char)((w[at + i] >> (8 * b)) & 0xffu);
            if (ch != name[k])
                return false;
            if (ch == '\0')
                return true;
            k++;
        }
    return false;
}

/* Bytes of the literal string at w[at] from word from, its NUL aside;
 * false when it is not terminated within the instruction. */
static bool literal_length(const uint32_t *w, uint32_t at, uint32_t from, size_t *len)
{
    uint32_t wc = wc_of(w[at]);
    for (uint32_t i = from; i < wc; i++)
        for (unsigned b = 0; b < 4; b++)
            if (((w[at + i] >> (8 * b)) & 0xffu) == 0) {
                *len = (size_t)(i - from) * 4 + b;
                return true;
            }
    return false;
}

static bool id_in(const uint32_t *ids, size_t n, uint32_t id)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return true;
    return false;
}

salvo_status spirv_printf_tag(const salvo_allocator *alloc, const uint32_t *words,
                              size_t size_bytes, const char *prefix, uint32_t **out,
                              size_t *out_size)
{
    *out = NULL;
    *out_size = 0;
    if (!words || size_bytes % 4 || size_bytes / 4 <= HEADER_WORDS || size_bytes / 4 > UINT32_MAX)
        return SALVO_ERROR_INVALID_ARGUMENT;
    const uint32_t *w = words;
    uint32_t n = (uint32_t)(size_bytes / 4);
    /* The instruction set's ids (a module may import it more than once),
     * then how many DebugPrintf instructions there are: the most format
     * strings there can be. */
    uint32_t sets[8];
    size_t set_count = 0, prints = 0;
    for (uint32_t at = HEADER_WORDS; at < n;) {
        uint32_t wc = wc_of(w[at]);
        if (wc == 0 || wc > n - at)
            return SALVO_ERROR_INVALID_ARGUMENT;
        uint32_t op = op_of(w[at]);
        if (op == OP_EXT_INST_IMPORT && wc >= 3 && set_count < 8 &&
            literal_is(w, at, 2, "NonSemantic.DebugPrintf"))
            sets[set_count++] = w[at + 1];
        else if (op == OP_EXT_INST && wc >= 6 && id_in(sets, set_count, w[at + 3]) &&
                 w[at + 4] == DEBUG_PRINTF)
            prints++;
        at += wc;
    }
    if (prints == 0)
        return SALVO_OK;
    uint32_t *formats = salvo_mem_alloc(alloc, prints * sizeof *formats);
    if (!formats)
        return SALVO_ERROR_OUT_OF_HOST_MEMORY;
    size_t format_count = 0;
    for (uint32_t at = HEADER_WORDS; at < n; at += wc_of(w[at]))
        if (op_of(w[at]) == OP_EXT_INST && wc_of(w[at]) >= 6 && id_in(sets, set_count, w[at + 3]) &&
            w[at + 4] == DEBUG_PRINTF && !id_in(formats, format_count, w[at + 5]))
            formats[format_count++] = w[at + 5];
    /* The size with every format string longer by the prefix. */
    size_t extra = strlen(prefix);
    size_t total = n;
    for (uint32_t at = HEADER_WORDS; at < n; at += wc_of(w[at])) {
        size_t len = 0;
        if (op_of(w[at]) != OP_STRING || wc_of(w[at]) < 3 ||
            !id_in(formats, format_count, w[at + 1]))
            continue;
        if (!literal_length(w, at, 2, &len)) {
            salvo_mem_free(alloc, formats);
            return SALVO_ERROR_INVALID_ARGUMENT;
        }
        size_t words_after = 2 + (extra + len + 1 + 3) / 4;
        if (words_after > 0xffffu) {
            salvo_mem_free(alloc, formats);
            return SALVO_ERROR_INVALID_ARGUMENT;
        }
        total += words_after - wc_of(w[at]);
    }
    uint32_t *t = salvo_mem_alloc(alloc, total * 4);
    if (!t) {
        salvo_mem_free(alloc, formats);
        return SALVO_ERROR_OUT_OF_HOST_MEMORY;
    }
    memcpy(t, w, HEADER_WORDS * 4);
    size_t to = HEADER_WORDS;
    for (uint32_t at = HEADER_WORDS; at < n; at += wc_of(w[at])) {
        uint32_t wc = wc_of(w[at]);
        size_t len = 0;
        if (op_of(w[at]) != OP_STRING || wc < 3 || !id_in(formats, format_count, w[at + 1]) ||
            !literal_length(w, at, 2, &len)) {
            memcpy(&t[to], &w[at], wc * 4ull);
            to += wc;
            continue;
        }
        /* OpString %id "prefix" + "old": the literal's bytes in word order,
         * zero-padded to a whole word (SPIR-V's literal string rule). */
        size_t words_after = 2 + (extra + len + 1 + 3) / 4;
        t[to] = (uint32_t)words_after << 16 | OP_STRING;
        t[to + 1] = w[at + 1];
        memset(&t[to + 2], 0, (words_after - 2) * 4);
        /* Byte i of a literal is bits 8 * (i % 4) of its word i / 4,
         * whatever the host's byte order. */
        for (size_t i = 0; i < extra + len; i++) {
            uint32_t ch = i < extra ? (unsigned char)prefix[i]
                                    : (w[at + 2 + (i - extra) / 4] >> (8 * ((i - extra) % 4))) &
                                          0xffu;
            t[to + 2 + i / 4] |= ch << (8 * (i % 4));
        }
        to += words_after;
    }
    salvo_mem_free(alloc, formats);
    *out = t;
    *out_size = total * 4;
    return SALVO_OK;
}
