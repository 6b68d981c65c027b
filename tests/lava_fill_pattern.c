/* salvo_fill_pattern on a real device with synchronization validation on:
 * 1-, 2- and 4-byte patterns at every offset and size within a few words,
 * in every domain, one after another in one batch (each partial word
 * ordered after the fill before it), the bytes outside each range left as
 * they were; fills beside a kernel's and a copy's writes to the other bytes
 * of the same words and below them; a buffer whose size is not a
 * multiple of 4; fills in graphs; bad input. Every buffer is compared
 * byte for byte with a model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "salvo/salvo.h"
#include "support/lava.h"

enum { BYTES = 256 };

typedef lava_fixture fixture;

/* The model of one fill: byte offset + i gets pattern[i % size]. */
static void model_fill(unsigned char *m, uint64_t offset, uint64_t size, const void *pattern,
                       uint32_t pattern_size)
{
    for (uint64_t i = 0; i < size; i++)
        m[offset + i] = ((const unsigned char *)pattern)[i % pattern_size];
}

static void check_bytes(salvo_buffer *b, const unsigned char *want, size_t n, const char *what)
{
    unsigned char got[BYTES * 4];
    assert_true(n <= sizeof got);
    assert_int_equal(salvo_buffer_read(b, 0, got, n), SALVO_OK);
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i])
            fail_msg("%s: byte %zu is 0x%02x, expected 0x%02x", what, i, got[i], want[i]);
}

/* Every pattern width, every offset in the first 9 bytes, sizes from one
 * pattern to a few words: each fill over the ones before, all recorded
 * before one synchronize, in each domain. */
static void every_width_offset_and_size(void **state)
{
    fixture *f = *state;
    const salvo_domain domains[] = {SALVO_DOMAIN_DEVICE, SALVO_DOMAIN_HOST, SALVO_DOMAIN_SHARED};
    static const unsigned char pattern[4] = {0x11, 0x22, 0x33, 0x44};
    for (size_t d = 0; d < 3; d++) {
        salvo_buffer *b = NULL;
        assert_int_equal(salvo_buffer_create(f->dev, BYTES, domains[d], &b), SALVO_OK);
        unsigned char model[BYTES];
        for (int i = 0; i < BYTES; i++)
            model[i] = (unsigned char)(0xC0 ^ i);
        assert_int_equal(salvo_buffer_write(b, 0, model, BYTES), SALVO_OK);
        uint32_t fills = 0;
        for (uint32_t width = 1; width <= 4; width *= 2)
            for (uint64_t offset = 0; offset < 9; offset++)
                for (uint64_t n = 1; n * width <= 13; n++) {
                    /* Spread the fills so that each round touches fresh
                     * words and words an earlier fill left partial. */
                    uint64_t at = offset + 16 * (fills % 14);
                    unsigned char p[4];
                    for (uint32_t k = 0; k < 4; k++)
                        p[k] = (unsigned char)(pattern[k] + fills);
                    assert_int_equal(salvo_fill_pattern(f->st, b, at, n * width, p, width),
                                     SALVO_OK);
                    model_fill(model, at, n * width, p, width);
                    fills++;
                }
        assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
        char what[64];
        snprintf(what, sizeof what, "domain %zu after %u fills", d, fills);
        check_bytes(b, model, BYTES, what);
        salvo_buffer_destroy(b);
    }
}

/* A fill's partial words and a kernel's or a copy's writes to their other
 * bytes, one after the other in a batch: each sees the one before. */
static void beside_kernels_and_copies(void **state)
{
    fixture *f = *state;
    salvo_buffer *b = NULL, *src = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, BYTES, SALVO_DOMAIN_DEVICE, &b), SALVO_OK);
    assert_int_equal(salvo_buffer_create(f->dev, BYTES, SALVO_DOMAIN_DEVICE, &src), SALVO_OK);
    assert_int_equal(salvo_fill(f->st, src, 0, BYTES, 0xA5A5A5A5u), SALVO_OK);
    uint32_t model[BYTES / 4];
    unsigned char *m = (unsigned char *)model;
    for (int round = 0; round < 10; round++) {
        assert_int_equal(salvo_fill(f->st, b, 0, BYTES, 0), SALVO_OK);
        memset(model, 0, sizeof model);
        /* Words 0..7 += 1 by the kernel, then bytes [5, 27) filled: the
         * partial words 1 and 6 keep the kernel's bytes outside. */
        salvo_binding bd = {.binding = 0, .buffer = b};
        const uint32_t groups[3] = {1, 1, 1};
        const uint32_t push[2] = {8, 0x01010101u};
        assert_int_equal(salvo_launch(f->st, f->add, groups, &bd, 1, push, sizeof push), SALVO_OK);
        for (int w = 0; w < 8; w++)
            model[w] += 0x01010101u;
        const unsigned char one = (unsigned char)(0x70 + round);
        assert_int_equal(salvo_fill_pattern(f->st, b, 5, 22, &one, 1), SALVO_OK);
        model_fill(m, 5, 22, &one, 1);
        /* The kernel again over the same words: after the fill. */
        assert_int_equal(salvo_launch(f->st, f->add, groups, &bd, 1, push, sizeof push), SALVO_OK);
        for (int w = 0; w < 8; w++)
            model[w] += 0x01010101u;
        /* A copy into bytes [30, 33) then a 2-byte fill of [33, 41), whose
         * first word the copy also wrote; then a copy out of the fill. */
        assert_int_equal(salvo_copy(f->st, src, 0, b, 30, 3), SALVO_OK);
        memset(m + 30, 0xA5, 3);
        const uint16_t two = (uint16_t)(0xBEEF + round);
        assert_int_equal(salvo_fill_pattern(f->st, b, 33, 8, &two, 2), SALVO_OK);
        model_fill(m, 33, 8, &two, 2);
        assert_int_equal(salvo_copy(f->st, b, 30, b, 101, 11), SALVO_OK);
        memmove(m + 101, m + 30, 11);
    }
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    check_bytes(b, m, BYTES, "beside kernels and copies");
    salvo_buffer_destroy(src);
    salvo_buffer_destroy(b);
}

/* The kernel for partial words binds from the device's storage offset
 * alignment below them: a fill of a word there just before is ordered
 * against it (the layer checks each binding's whole range). */
static void partial_words_after_writes_below(void **state)
{
    fixture *f = *state;
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(f->dev, &info), SALVO_OK);
    uint32_t a = (uint32_t)info.min_storage_buffer_offset_alignment;
    if (a <= 4)
        skip(); /* the binding starts at the word itself */
    salvo_buffer *b = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, BYTES, SALVO_DOMAIN_DEVICE, &b), SALVO_OK);
    unsigned char model[BYTES];
    memset(model, 0, sizeof model);
    assert_int_equal(salvo_fill(f->st, b, 0, BYTES, 0), SALVO_OK);
    for (uint32_t round = 0; round < 4; round++) {
        /* Word 0 by the copy engine, then bytes [a - 3, a - 1) by the
         * kernel, whose binding covers [0, a). */
        const uint32_t w = 0x01010101u * (round + 1);
        assert_int_equal(salvo_fill(f->st, b, 0, 4, w), SALVO_OK);
        memcpy(model, &w, 4);
        const unsigned char v = (unsigned char)(0x60 + round);
        assert_int_equal(salvo_fill_pattern(f->st, b, a - 3, 2, &v, 1), SALVO_OK);
        model_fill(model, a - 3, 2, &v, 1);
    }
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    check_bytes(b, model, BYTES, "after writes below");
    salvo_buffer_destroy(b);
}

/* A buffer of 7 bytes: its last, partial word is written up to its end. */
static void buffer_not_whole_words(void **state)
{
    fixture *f = *state;
    for (uint64_t size = 1; size <= 11; size++) {
        salvo_buffer *b = NULL;
        assert_int_equal(salvo_buffer_create(f->dev, size, SALVO_DOMAIN_DEVICE, &b), SALVO_OK);
        unsigned char model[16];
        memset(model, 0x5A, sizeof model);
        assert_int_equal(salvo_buffer_write(b, 0, model, size), SALVO_OK);
        for (uint64_t at = 0; at < size; at++) {
            const unsigned char v = (unsigned char)(at * 7 + size);
            assert_int_equal(salvo_fill_pattern(f->st, b, at, size - at, &v, 1), SALVO_OK);
            model_fill(model, at, size - at, &v, 1);
            if (size - at >= 2 && (size - at) % 2 == 0) {
                const uint16_t w = (uint16_t)(0x0102 * (at + 1));
                assert_int_equal(salvo_fill_pattern(f->st, b, at, size - at, &w, 2), SALVO_OK);
                model_fill(model, at, size - at, &w, 2);
            }
        }
        assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
        char what[32];
        snprintf(what, sizeof what, "a buffer of %llu bytes", (unsigned long long)size);
        check_bytes(b, model, size, what);
        salvo_buffer_destroy(b);
    }
}

/* Fills captured are nodes: partial-word fills between adds, replayed. */
static void fill_pattern_in_graph(void **state)
{
    fixture *f = *state;
    salvo_buffer *b = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, BYTES, SALVO_DOMAIN_DEVICE, &b), SALVO_OK);
    assert_int_equal(salvo_fill(f->st, b, 0, BYTES, 0), SALVO_OK);
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    salvo_binding bd = {.binding = 0, .buffer = b};
    const uint32_t groups[3] = {1, 1, 1};
    const uint32_t push[2] = {BYTES / 4, 1};
    assert_int_equal(salvo_launch(f->st, f->add, groups, &bd, 1, push, sizeof push), SALVO_OK);
    const unsigned char one = 0x80;
    const uint32_t four = 0x04030201u;
    assert_int_equal(salvo_fill_pattern(f->st, b, 3, 9, &one, 1), SALVO_OK);
    assert_int_equal(salvo_fill_pattern(f->st, b, 50, 12, &four, 4), SALVO_OK);
    assert_int_equal(salvo_fill_pattern(f->st, b, 64, 16, &four, 4), SALVO_OK); /* whole words */
    assert_int_equal(salvo_launch(f->st, f->add, groups, &bd, 1, push, sizeof push), SALVO_OK);
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_OK);
    assert_int_equal(salvo_graph_node_count(g), 5);
    assert_int_equal(salvo_graph_set_push(g, 1, push, sizeof push), SALVO_ERROR_INVALID_ARGUMENT);
    if (!strstr(salvo_last_error(), "fill"))
        fail_msg("'%s' does not say the node is a fill", salvo_last_error());
    uint32_t model[BYTES / 4] = {0};
    unsigned char *m = (unsigned char *)model;
    for (int r = 0; r < 3; r++) {
        assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
        for (int w = 0; w < BYTES / 4; w++)
            model[w] += 1;
        model_fill(m, 3, 9, &one, 1);
        model_fill(m, 50, 12, &four, 4);
        model_fill(m, 64, 16, &four, 4);
        for (int w = 0; w < BYTES / 4; w++)
            model[w] += 1;
    }
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    check_bytes(b, m, BYTES, "graph");
    salvo_graph_destroy(g);
    salvo_buffer_destroy(b);
}

static void bad_input(void **state)
{
    fixture *f = *state;
    salvo_buffer *b = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, 64, SALVO_DOMAIN_DEVICE, &b), SALVO_OK);
    const uint32_t p = 0x01020304u;
    unsigned char model[64];
    memset(model, 0x33, sizeof model);
    assert_int_equal(salvo_buffer_write(b, 0, model, sizeof model), SALVO_OK);
    static const struct {
        uint64_t offset, size;
        uint32_t width;
        const char *says;
    } bad[] = {
        {0, 4, 3, "pattern_size 3"}, {0, 4, 0, "pattern_size 0"}, {0, 8, 8, "pattern_size 8"},
        {0, 3, 2, "whole number"},   {1, 6, 4, "whole number"},   {0, 0, 1, "whole number"},
        {63, 2, 1, "outside"},       {64, 1, 1, "outside"},       {62, 4, 2, "outside"},
        {UINT64_MAX, 2, 2, "outside"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(salvo_fill_pattern(f->st, b, bad[i].offset, bad[i].size, &p, bad[i].width),
                         SALVO_ERROR_INVALID_ARGUMENT);
        if (!strstr(salvo_last_error(), bad[i].says))
            fail_msg("case %zu: '%s' does not say '%s'", i, salvo_last_error(), bad[i].says);
    }
    assert_int_equal(salvo_fill_pattern(NULL, b, 0, 4, &p, 4), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_fill_pattern(f->st, NULL, 0, 4, &p, 4), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_fill_pattern(f->st, b, 0, 4, NULL, 4), SALVO_ERROR_INVALID_ARGUMENT);
    /* Nothing was recorded: one good fill, and the rest is as written. */
    assert_int_equal(salvo_fill_pattern(f->st, b, 61, 3, &p, 1), SALVO_OK);
    model_fill(model, 61, 3, &p, 1);
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    check_bytes(b, model, sizeof model, "after refusals");
    salvo_buffer_destroy(b);
}

int main(void)
{
    lava_require_device();
    const struct CMUnitTest tests[] = {
        lava_test(every_width_offset_and_size),
        lava_test(beside_kernels_and_copies),
        lava_test(partial_words_after_writes_below),
        lava_test(buffer_not_whole_words),
        lava_test(fill_pattern_in_graph),
        lava_test(bad_input),
    };
    return lava_run_tests(tests);
}
