/*
 * The pipeline cache's file (src/accel/cache_file.c), no device: what is
 * written reads back whole, and every file that is not exactly what was
 * written (missing, short, cut, flipped, grown, a directory) is refused
 * with a reason, so no stray bytes ever reach a driver.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "accel/cache_file.h"
#include "base/alloc.h"

static char dir[64];
static char path[128];
static char reason[512];

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 37u + seed);
}

static cache_file_status read_back(void **data, size_t *size)
{
    memset(reason, 'X', sizeof reason);
    cache_file_status st = cache_file_read(NULL, path, data, size, reason, sizeof reason);
    assert_non_null(memchr(reason, '\0', sizeof reason));
    if (st == CACHE_FILE_OK) {
        assert_string_equal(reason, "");
    } else {
        assert_null(*data);
        assert_int_equal(*size, 0);
        assert_true(reason[0] != '\0');
    }
    return st;
}

static void expect_reason(const char *needle)
{
    if (!strstr(reason, needle))
        fail_msg("reason \"%s\" does not contain \"%s\"", reason, needle);
}

/* The file as bytes, to damage it. */
static unsigned char *slurp(long *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    *size = ftell(f);
    rewind(f);
    unsigned char *p = malloc((size_t)*size);
    assert_int_equal(fread(p, 1, (size_t)*size, f), (size_t)*size);
    fclose(f);
    return p;
}

static void spill(const unsigned char *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* Nothing but the target is left beside it: no temporary file. */
static void expect_dir_holds(int files)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq %d", dir, files);
    assert_int_equal(system(cmd), 0);
}

static void round_trip(void **state)
{
    (void)state;
    unsigned char blob[5000];
    fill(blob, sizeof blob, 1);
    assert_true(cache_file_write(NULL, path, blob, sizeof blob, reason, sizeof reason));
    assert_string_equal(reason, "");
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_size, CACHE_FILE_HEADER + sizeof blob);
    expect_dir_holds(1);
    void *data = NULL;
    size_t size = 0;
    assert_int_equal(read_back(&data, &size), CACHE_FILE_OK);
    assert_int_equal(size, sizeof blob);
    assert_memory_equal(data, blob, sizeof blob);
    free(data);

    /* Rewriting replaces it whole, shorter or not. */
    fill(blob, 100, 9);
    assert_true(cache_file_write(NULL, path, blob, 100, reason, sizeof reason));
    assert_int_equal(read_back(&data, &size), CACHE_FILE_OK);
    assert_int_equal(size, 100);
    assert_memory_equal(data, blob, 100);
    free(data);
    expect_dir_holds(1);
    unlink(path);
}

static void missing_file_says_so(void **state)
{
    (void)state;
    unlink(path);
    void *data = (void *)1;
    size_t size = 1;
    assert_int_equal(read_back(&data, &size), CACHE_FILE_MISSING);
    expect_reason("cannot open");
}

static void damaged_files_are_refused(void **state)
{
    (void)state;
    unsigned char blob[300];
    fill(blob, sizeof blob, 3);
    assert_true(cache_file_write(NULL, path, blob, sizeof blob, reason, sizeof reason));
    long n = 0;
    unsigned char *good = slurp(&n);
    void *data = NULL;
    size_t size = 0;

    spill(good, 0); /* empty */
    assert_int_equal(read_back(&data, &size), CACHE_FILE_INVALID);
    expect_reason("too short");
    spill(good, CACHE_FILE_HEADER); /* the envelope alone */
    assert_int_equal(read_back(&data, &size), CACHE_FILE_INVALID);
    expect_reason("too short");
    spill(good, (size_t)n - 1); /* cut */
    assert_int_equal(read_back(&data, &size), CACHE_FILE_INVALID);
    expect_reason("not a whole");
    unsigned char *grown = malloc((size_t)n + 1);
    memcpy(grown, good, (size_t)n);
    grown[n] = 0;
    spill(grown, (size_t)n + 1); /* grown */
    assert_int_equal(read_back(&data, &size), CACHE_FILE_INVALID);
    free(grown);
    /* One bit flipped anywhere: every byte in turn, the envelope's magic,
     * length (8..15) and hash (16..23) included. */
    assert_true(n > 24 && CACHE_FILE_HEADER == 24);
    for (long at = 0; at < n; at++) {
        good[at] ^= 0x10;
        spill(good, (size_t)n);
        assert_int_equal(read_back(&data, &size), CACHE_FILE_INVALID);
        expect_reason("not a whole");
        good[at] ^= 0x10;
    }
    spill(good, (size_t)n); /* and undamaged, it still reads */
    assert_int_equal(read_back(&data, &size), CACHE_FILE_OK);
    free(data);
    free(good);
    unlink(path);
}

static void not_a_file(void **state)
{
    (void)state;
    assert_int_equal(mkdir(path, 0700), 0);
    void *data = NULL;
    size_t size = 0;
    assert_int_equal(read_back(&data, &size), CACHE_FILE_INVALID);
    expect_reason("not a regular file");
    /* Writing over a directory fails, and leaves no temporary file. */
    unsigned char blob[64] = {1};
    assert_false(cache_file_write(NULL, path, blob, sizeof blob, reason, sizeof reason));
    expect_reason("cannot write");
    expect_dir_holds(1);
    assert_int_equal(rmdir(path), 0);
}

static void unwritable_place(void **state)
{
    (void)state;
    char where[160];
    snprintf(where, sizeof where, "%s/no-such-dir/cache.bin", dir);
    unsigned char blob[64] = {1};
    assert_false(cache_file_write(NULL, where, blob, sizeof blob, reason, sizeof reason));
    expect_reason("cannot create a temporary file");
    expect_dir_holds(0);
}

static void *no_alloc(void *user, size_t size)
{
    (void)user;
    (void)size;
    return NULL;
}

static void nofree(void *user, void *p)
{
    (void)user;
    (void)p;
}

static void out_of_memory(void **state)
{
    (void)state;
    unsigned char blob[64] = {1};
    assert_true(cache_file_write(NULL, path, blob, sizeof blob, reason, sizeof reason));
    salvo_allocator none = {no_alloc, nofree, NULL};
    void *data = (void *)1;
    size_t size = 1;
    assert_int_equal(cache_file_read(&none, path, &data, &size, reason, sizeof reason),
                     CACHE_FILE_NO_MEMORY);
    assert_null(data);
    assert_false(cache_file_write(&none, path, blob, sizeof blob, reason, sizeof reason));
    expect_reason("out of host memory");
    unlink(path);
    expect_dir_holds(0);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/salvo-cache-file-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(path, sizeof path, "%s/cache.bin", dir);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),
        cmocka_unit_test(missing_file_says_so),
        cmocka_unit_test(damaged_files_are_refused),
        cmocka_unit_test(not_a_file),
        cmocka_unit_test(unwritable_place),
        cmocka_unit_test(out_of_memory),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    rmdir(dir);
    return failed;
}
