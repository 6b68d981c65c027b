/* The pipeline cache persisted at salvo_device_desc.pipeline_cache_path
 * (or $SALVO_PIPELINE_CACHE), on a real device (lavapipe in CI) with the
 * validation layer on: written at destroy, found by the next device,
 * kernels built from it still compute right, and a file that is not a
 * cache of this device (garbage, short, foreign, unwritable place) only
 * means starting empty. Prints, without asserting, how long 20 kernels
 * take to build cold and warm. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "accel/cache_file.h"
#include "add.spv.h"

#include "salvo/salvo.h"
#include "support/lava.h"

enum { KERNELS = 20, LOG_LINES = 64, LINE = 512 };
#define N 1024u

/* What a device said through its log: the lines the cache writes. */
typedef struct log_capture {
    char lines[LOG_LINES][LINE];
    int count;
    int validation;
} log_capture;

static void capture(void *user, salvo_log_level level, const char *file, int line,
                    const char *message)
{
    (void)line;
    log_capture *c = user;
    if (file && strcmp(file, "validation") == 0) {
        c->validation++;
        fprintf(stderr, "VALIDATION: %s\n", message);
        return;
    }
    if (level >= SALVO_LOG_WARNING)
        fprintf(stderr, "salvo: %s\n", message);
    if (strstr(message, "pipeline cache") && c->count < LOG_LINES)
        snprintf(c->lines[c->count++], LINE, "%s", message);
}

static bool said(const log_capture *c, const char *needle)
{
    for (int i = 0; i < c->count; i++)
        if (strstr(c->lines[i], needle))
            return true;
    return false;
}

static void expect_said(const log_capture *c, const char *needle)
{
    if (said(c, needle))
        return;
    for (int i = 0; i < c->count; i++)
        fprintf(stderr, "  log: %s\n", c->lines[i]);
    fail_msg("no pipeline cache message contains \"%s\"", needle);
}

static salvo_device *open_with(const char *path, log_capture *c)
{
    memset(c, 0, sizeof *c);
    salvo_device_desc desc = {
        .flags = SALVO_DEVICE_VALIDATION,
        .log = capture,
        .log_user = c,
        .pipeline_cache_path = path,
    };
    salvo_device *dev = NULL;
    salvo_status st = salvo_device_create(&desc, &dev);
    if (st != SALVO_OK)
        fail_msg("device_create: %s: %s", salvo_status_string(st), salvo_last_error());
    return dev;
}

static void close_checked(salvo_device *dev, const log_capture *c)
{
    salvo_stats s;
    assert_int_equal(salvo_device_stats(dev, &s), SALVO_OK);
    assert_int_equal(s.live_kernels + s.live_buffers + s.live_streams, 0);
    assert_int_equal(s.validation_messages, 0);
    salvo_device_destroy(dev);
    assert_int_equal(c->validation, 0);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* KERNELS distinct pipelines (add.comp at local sizes 1..KERNELS); the
 * seconds it took. */
static double create_kernels(salvo_device *dev, salvo_kernel *k[KERNELS])
{
    double t0 = now_s();
    for (uint32_t i = 0; i < KERNELS; i++) {
        salvo_spec_constant sc = {0, i + 1};
        salvo_kernel_desc kd = {
            .spirv = add_spv, .spirv_size = sizeof add_spv, .name = "add",
            .spec_constants = &sc, .spec_constant_count = 1,
        };
        k[i] = NULL;
        assert_int_equal(salvo_kernel_create(dev, &kd, &k[i]), SALVO_OK);
    }
    return now_s() - t0;
}

/* Every kernel adds i + 1 once to every element: they all must work. */
static void run_kernels(salvo_device *dev, salvo_kernel *k[KERNELS])
{
    salvo_buffer *buf = NULL;
    assert_int_equal(salvo_buffer_create(dev, N * 4ull, SALVO_DOMAIN_DEVICE, &buf), SALVO_OK);
    uint32_t data[N] = {0};
    assert_int_equal(salvo_buffer_write(buf, 0, data, sizeof data), SALVO_OK);
    salvo_stream *st = NULL;
    assert_int_equal(salvo_stream_create(dev, NULL, &st), SALVO_OK);
    salvo_binding b = {.binding = 0, .buffer = buf};
    for (uint32_t i = 0; i < KERNELS; i++) {
        uint32_t local = i + 1;
        uint32_t groups[3] = {(N + local - 1) / local, 1, 1};
        uint32_t push[2] = {N, i + 1};
        assert_int_equal(salvo_launch(st, k[i], groups, &b, 1, push, sizeof push), SALVO_OK);
    }
    assert_int_equal(salvo_stream_synchronize(st), SALVO_OK);
    assert_int_equal(salvo_buffer_read(buf, 0, data, sizeof data), SALVO_OK);
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(data[i], KERNELS * (KERNELS + 1) / 2);
    salvo_stream_destroy(st);
    salvo_buffer_destroy(buf);
    for (uint32_t i = 0; i < KERNELS; i++)
        salvo_kernel_destroy(k[i]);
}

static char dir[64];

static void path_in_dir(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", dir, name);
}

static long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

static void write_bytes(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
}

/* Nothing but the target is left in the directory: no temporary file. */
static void expect_only(const char *name)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "test \"$(ls -A '%s')\" = '%s'", dir, name);
    assert_int_equal(system(cmd), 0);
}

static void warm_after_cold(void **state)
{
    (void)state;
    char path[128];
    path_in_dir(path, sizeof path, "cache.bin");
    unlink(path);
    salvo_kernel *k[KERNELS];
    log_capture c;

    /* Cold: no file yet; the destroy writes one. */
    salvo_device *dev = open_with(path, &c);
    expect_said(&c, "no file");
    double cold = create_kernels(dev, k);
    run_kernels(dev, k);
    close_checked(dev, &c);
    expect_said(&c, "bytes written to");
    long written = file_size(path);
    assert_true(written > CACHE_FILE_HEADER);
    expect_only("cache.bin");

    /* Warm: the next device finds it, and its kernels still compute. */
    dev = open_with(path, &c);
    expect_said(&c, "bytes loaded from");
    double warm = create_kernels(dev, k);
    run_kernels(dev, k);
    close_checked(dev, &c);
    expect_said(&c, "bytes written to");
    assert_true(file_size(path) > CACHE_FILE_HEADER);
    expect_only("cache.bin");

    /* A third, with nothing created, still leaves a loadable file. */
    dev = open_with(path, &c);
    expect_said(&c, "bytes loaded from");
    close_checked(dev, &c);
    dev = open_with(path, &c);
    expect_said(&c, "bytes loaded from");
    close_checked(dev, &c);

    salvo_device_info info;
    dev = open_with(NULL, &c);
    assert_int_equal(salvo_device_info_get(dev, &info), SALVO_OK);
    close_checked(dev, &c);
    printf("pipeline cache on %s (%s): %d kernels cold %.2f ms, warm %.2f ms (%.1fx); "
           "file %ld bytes\n",
           info.name, info.driver_info, KERNELS, cold * 1e3, warm * 1e3,
           warm > 0 ? cold / warm : 0.0, written);
    unlink(path);
}

/* Each file is refused whole, the device starts empty, kernels work, and
 * destroy leaves a good cache file in its place. */
static void starts_empty_from(const char *label, const void *bytes, size_t size,
                              const char *expected)
{
    char path[128];
    path_in_dir(path, sizeof path, "bad.bin");
    write_bytes(path, bytes, size);
    log_capture c;
    salvo_kernel *k[KERNELS];
    salvo_device *dev = open_with(path, &c);
    expect_said(&c, expected);
    expect_said(&c, "starting empty");
    assert_false(said(&c, "bytes loaded from"));
    create_kernels(dev, k);
    run_kernels(dev, k);
    close_checked(dev, &c);
    expect_said(&c, "bytes written to");
    dev = open_with(path, &c);
    if (!said(&c, "bytes loaded from"))
        fail_msg("%s: the file written after it does not load", label);
    close_checked(dev, &c);
    expect_only("bad.bin");
    unlink(path);
}

static void garbage_files_start_empty(void **state)
{
    (void)state;
    /* Long garbage, short garbage, an empty file. */
    unsigned char junk[4096];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)(i * 131u + 7u);
    starts_empty_from("garbage", junk, sizeof junk, "not a whole salvo pipeline cache file");
    starts_empty_from("short", "abc", 3, "too short");
    starts_empty_from("empty", "", 0, "too short");

    /* A real cache file, then cut short or with one byte flipped. */
    char path[128];
    path_in_dir(path, sizeof path, "good.bin");
    unlink(path);
    log_capture c;
    salvo_kernel *k[KERNELS];
    salvo_device *dev = open_with(path, &c);
    create_kernels(dev, k);
    run_kernels(dev, k);
    close_checked(dev, &c);
    long size = file_size(path);
    assert_true(size > CACHE_FILE_HEADER);
    unsigned char *good = malloc((size_t)size);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fread(good, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    unlink(path);
    starts_empty_from("truncated", good, (size_t)size - 1, "not a whole salvo pipeline cache file");
    good[size - 1] ^= 0x40;
    starts_empty_from("flipped", good, (size_t)size, "not a whole salvo pipeline cache file");
    free(good);
}

/* A whole salvo cache file written for another device: the envelope is
 * right, the Vulkan header is not this device's. */
static void foreign_device_starts_empty(void **state)
{
    (void)state;
    unsigned char blob[64] = {0};
    const uint32_t header[4] = {32, 1 /* VK_PIPELINE_CACHE_HEADER_VERSION_ONE */, 0xdead, 0xbeef};
    memcpy(blob, header, sizeof header);
    memset(blob + 16, 0x5a, 16); /* pipelineCacheUUID */
    char path[128];
    path_in_dir(path, sizeof path, "foreign.bin");
    char reason[256];
    assert_true(cache_file_write(NULL, path, blob, sizeof blob, reason, sizeof reason));
    log_capture c;
    salvo_device *dev = open_with(path, &c);
    expect_said(&c, "another device or driver");
    expect_said(&c, "starting empty");
    salvo_kernel *k[KERNELS];
    create_kernels(dev, k);
    run_kernels(dev, k);
    close_checked(dev, &c);
    dev = open_with(path, &c);
    expect_said(&c, "bytes loaded from");
    close_checked(dev, &c);
    unlink(path);
}

static void environment_names_the_file(void **state)
{
    (void)state;
    char path[128];
    path_in_dir(path, sizeof path, "env.bin");
    unlink(path);
    assert_int_equal(setenv("SALVO_PIPELINE_CACHE", path, 1), 0);
    log_capture c;
    salvo_device *dev = open_with(NULL, &c);
    close_checked(dev, &c);
    assert_true(file_size(path) > CACHE_FILE_HEADER);
    dev = open_with(NULL, &c);
    expect_said(&c, "bytes loaded from");
    close_checked(dev, &c);
    /* An empty value is no file; the desc wins over the environment. */
    assert_int_equal(setenv("SALVO_PIPELINE_CACHE", "", 1), 0);
    dev = open_with(NULL, &c);
    assert_int_equal(c.count, 0);
    close_checked(dev, &c);
    char other[128];
    path_in_dir(other, sizeof other, "desc.bin");
    assert_int_equal(setenv("SALVO_PIPELINE_CACHE", path, 1), 0);
    dev = open_with(other, &c);
    close_checked(dev, &c);
    assert_true(file_size(other) > CACHE_FILE_HEADER);
    assert_int_equal(unsetenv("SALVO_PIPELINE_CACHE"), 0);
    unlink(other);
    unlink(path);
}

static void unwritable_place_is_only_a_warning(void **state)
{
    (void)state;
    char path[128];
    path_in_dir(path, sizeof path, "missing-dir/cache.bin");
    log_capture c;
    salvo_device *dev = open_with(path, &c);
    salvo_kernel *k[KERNELS];
    create_kernels(dev, k);
    run_kernels(dev, k);
    close_checked(dev, &c);
    expect_said(&c, "cannot create a temporary file");
    assert_int_equal(file_size(path), -1);
    /* A directory where the file should be: not a regular file. */
    path_in_dir(path, sizeof path, "a-dir");
    assert_int_equal(mkdir(path, 0700), 0);
    dev = open_with(path, &c);
    expect_said(&c, "not a regular file");
    close_checked(dev, &c);
    expect_said(&c, "cannot write");
    assert_int_equal(rmdir(path), 0);
}

int main(void)
{
    lava_require_device();
    snprintf(dir, sizeof dir, "/tmp/salvo-pipeline-cache-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(warm_after_cold),
        cmocka_unit_test(garbage_files_start_empty),
        cmocka_unit_test(foreign_device_starts_empty),
        cmocka_unit_test(environment_names_the_file),
        cmocka_unit_test(unwritable_place_is_only_a_warning),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    rmdir(dir);
    return failed;
}
