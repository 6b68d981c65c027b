#define _POSIX_C_SOURCE 200809L
/* Soak: a long run of launches on one stream while buffers come and go
 * under it, to show that deferred releases neither pile up nor leak.
 *
 * Validation is OFF here (SALVO_VALIDATION is unset and no validation flag
 * is passed): the layer multiplies the cost of every launch and keeps its own
 * per-object records, so it would both blow the time budget and add memory
 * growth of its own to the RSS that this test wants flat. The lifetime rules
 * themselves are checked with validation on in lava_lifetime.c.
 *
 * Phase 1 (soak): 200,000 launches of the add kernel; every 100 launches a
 * new DEVICE buffer is created, launched on, and the previous one destroyed
 * while its launches are still recording or in flight (no synchronize). The
 * counters and VmRSS are printed every 20,000 launches.
 * Phase 2 (bounds): a buffer per launch, destroyed right after the launch,
 * first with the default bounds (releases pile up to about the ring's worth
 * of batches), then with release_max_count = 8 and release_max_bytes =
 * 4 KiB: the next launch drains them, so releases_pending stays within one
 * destroy of the bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "salvo/salvo.h"
#include "support/lava.h"

#define ELEMS 256u
#define BYTES (ELEMS * 4u)
#define LAUNCHES 200000u
#define PER_BUFFER 100u
#define REPORT_EVERY 20000u
/* Batches a stream keeps recording or in flight before it waits for the
 * oldest (STREAM_SLOTS in src/api/internal.h): completion, and with it the
 * retire clock, is only observed when the ring comes round. */
#define RING_SLOTS 3u
#define RSS_SLACK_KIB (16u * 1024u)
/* Under AddressSanitizer freed memory sits in its quarantine (and lavapipe
 * frees megabytes per batch), so RSS grows by gigabytes with no leak at all:
 * the flatness check is only made without it. */
#if defined(__SANITIZE_ADDRESS__)
#define RSS_CHECKED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RSS_CHECKED 0
#endif
#endif
#ifndef RSS_CHECKED
#define RSS_CHECKED 1
#endif

static uint64_t warnings; /* WARNING and ERROR messages seen */

static void log_cb(void *user, salvo_log_level level, const char *file, int line,
                   const char *message)
{
    (void)user;
    (void)file;
    (void)line;
    if (level >= SALVO_LOG_WARNING) {
        warnings++;
        fprintf(stderr, "salvo: %s\n", message);
    }
}

static uint64_t rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    char line[256];
    unsigned long long kib = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %llu kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static salvo_device *open_device(uint32_t max_count, uint64_t max_bytes)
{
    unsetenv("SALVO_VALIDATION"); /* see the top of the file */
    lava_require_device();
    salvo_device_desc desc = {
        .release_max_count = max_count,
        .release_max_bytes = max_bytes,
        .log = log_cb,
    };
    salvo_device *dev = NULL;
    salvo_status st = salvo_device_create(&desc, &dev);
    if (st != SALVO_OK)
        fail_msg("device_create: %s: %s", salvo_status_string(st), salvo_last_error());
    return dev;
}

static void add(salvo_stream *st, salvo_kernel *k, salvo_buffer *b, uint32_t value)
{
    static const uint32_t groups[3] = {ELEMS / 64, 1, 1};
    salvo_binding bind = {.binding = 0, .buffer = b};
    uint32_t push[2] = {ELEMS, value};
    salvo_status r = salvo_launch(st, k, groups, &bind, 1, push, sizeof push);
    if (r != SALVO_OK)
        fail_msg("launch: %s: %s", salvo_status_string(r), salvo_last_error());
}

static void expect_all(salvo_buffer *b, uint32_t want, const char *what)
{
    uint32_t out[ELEMS];
    assert_int_equal(salvo_buffer_read(b, 0, out, BYTES), SALVO_OK);
    for (uint32_t i = 0; i < ELEMS; i++)
        if (out[i] != want)
            fail_msg("%s[%u] = %u, want %u", what, i, out[i], want);
}

static void soak(void **state)
{
    (void)state;
    double t0 = now_s();
    warnings = 0;
    salvo_device *dev = open_device(0, 0);
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(dev, &info), SALVO_OK);
    /* Releases wait for the batches recording or in flight when they were
     * queued; those are seen complete one ring turn later. So at most the
     * destroys of RING_SLOTS batches (plus the one being counted) are
     * pending, and the live buffers are those plus the kept one and the
     * current one. With the default batch of 128: 5 and 7. */
    const uint64_t max_pending =
        (RING_SLOTS * (uint64_t)info.batch_size + PER_BUFFER - 1) / PER_BUFFER + 1;
    const uint64_t max_live = max_pending + 2;

    salvo_kernel *k = lava_add_kernel(dev);
    salvo_stream *st = NULL;
    assert_int_equal(salvo_stream_create(dev, NULL, &st), SALVO_OK);
    salvo_buffer *kept = lava_zeroed(dev, ELEMS, SALVO_DOMAIN_DEVICE);
    salvo_buffer *cur = NULL;
    uint32_t kept_want = 0;
    uint64_t peak_live = 0, peak_pending = 0, peak_pending_bytes = 0;
    uint64_t rss_first = 0, rss_last = 0;
    printf("soak: batch %u, a new buffer every %u launches; bounds: live_buffers <= %llu, "
           "releases_pending <= %llu\n",
           info.batch_size, PER_BUFFER, (unsigned long long)max_live,
           (unsigned long long)max_pending);

    for (uint32_t i = 0; i < LAUNCHES; i++) {
        uint32_t in_round = i % PER_BUFFER;
        if (in_round == 0) {
            salvo_buffer *prev = cur;
            cur = lava_zeroed(dev, ELEMS, SALVO_DOMAIN_DEVICE);
            add(st, k, cur, 1);
            /* prev's launches may still be recording or in flight */
            salvo_buffer_destroy(prev);
        } else if (in_round == PER_BUFFER - 1) {
            uint32_t round = i / PER_BUFFER + 1;
            add(st, k, kept, round);
            kept_want += round;
        } else {
            add(st, k, cur, 1);
        }
        salvo_stats s;
        assert_int_equal(salvo_device_stats(dev, &s), SALVO_OK);
        if (s.live_buffers > peak_live)
            peak_live = s.live_buffers;
        if (s.releases_pending > peak_pending)
            peak_pending = s.releases_pending;
        if (s.release_bytes_pending > peak_pending_bytes)
            peak_pending_bytes = s.release_bytes_pending;
        if (s.live_buffers > max_live || s.releases_pending > max_pending)
            fail_msg("launch %u: live_buffers %llu, releases_pending %llu: over the bound", i + 1,
                     (unsigned long long)s.live_buffers, (unsigned long long)s.releases_pending);
        assert_int_equal(s.live_buffer_bytes, s.live_buffers * BYTES);
        if ((i + 1) % REPORT_EVERY == 0) {
            rss_last = rss_kib();
            if (!rss_first)
                rss_first = rss_last;
            printf("soak: launches %7u  live_buffers %llu  live_buffer_bytes %5llu  "
                   "releases_pending %llu  release_bytes_pending %5llu  batches_submitted %5llu  "
                   "rss %llu KiB  (%.1f s)\n",
                   i + 1, (unsigned long long)s.live_buffers,
                   (unsigned long long)s.live_buffer_bytes,
                   (unsigned long long)s.releases_pending,
                   (unsigned long long)s.release_bytes_pending,
                   (unsigned long long)s.batches_submitted, (unsigned long long)rss_last,
                   now_s() - t0);
            fflush(stdout);
        }
    }

    assert_int_equal(salvo_stream_synchronize(st), SALVO_OK);
    expect_all(kept, kept_want, "kept");
    expect_all(cur, PER_BUFFER - 1, "last");
    salvo_stats s;
    assert_int_equal(salvo_device_stats(dev, &s), SALVO_OK);
    assert_int_equal(s.launches_total, LAUNCHES);
    assert_int_equal(s.launches_pending, 0);
    assert_int_equal(s.releases_pending, 0); /* synchronize ran what it freed up */
    assert_int_equal(s.live_buffers, 2);
    assert_int_equal(s.releases_run, LAUNCHES / PER_BUFFER - 1);
    printf("soak: peaks: live_buffers %llu, releases_pending %llu, release_bytes_pending %llu; "
           "rss %llu KiB after %u launches, %llu KiB at the end\n",
           (unsigned long long)peak_live, (unsigned long long)peak_pending,
           (unsigned long long)peak_pending_bytes, (unsigned long long)rss_first, REPORT_EVERY,
           (unsigned long long)rss_last);
    /* Flat: no per-launch or per-buffer growth. */
    assert_true(rss_first > 0);
    if (!RSS_CHECKED)
        printf("soak: built with AddressSanitizer: RSS not checked\n");
    else if (rss_last > rss_first + RSS_SLACK_KIB)
        fail_msg("RSS grew from %llu KiB to %llu KiB", (unsigned long long)rss_first,
                 (unsigned long long)rss_last);

    salvo_buffer_destroy(cur);
    salvo_buffer_destroy(kept);
    salvo_kernel_destroy(k);
    salvo_stream_destroy(st);
    lava_expect_nothing_live(dev);
    salvo_device_destroy(dev);
    assert_int_equal(warnings, 0);
    printf("soak: %u launches in %.1f s\n", LAUNCHES, now_s() - t0);
}

/* A buffer per launch, destroyed right after it: every launch leaves one
 * release behind, and only the bounds (or the ring coming round) run them.
 * Returns the highest releases_pending and release_bytes_pending seen right
 * after a launch and right after a destroy. */
typedef struct peaks {
    uint64_t after_launch, after_destroy, bytes_after_launch, bytes_after_destroy;
} peaks;

static peaks churn(uint32_t max_count, uint64_t max_bytes, uint32_t launches)
{
    salvo_device *dev = open_device(max_count, max_bytes);
    salvo_kernel *k = lava_add_kernel(dev);
    salvo_stream *st = NULL;
    assert_int_equal(salvo_stream_create(dev, NULL, &st), SALVO_OK);
    salvo_buffer *kept = lava_zeroed(dev, ELEMS, SALVO_DOMAIN_DEVICE);
    peaks p = {0};
    for (uint32_t i = 0; i < launches; i++) {
        salvo_buffer *b = NULL;
        assert_int_equal(salvo_buffer_create(dev, BYTES, SALVO_DOMAIN_DEVICE, &b), SALVO_OK);
        add(st, k, b, 1);
        add(st, k, kept, 1);
        salvo_stats s;
        assert_int_equal(salvo_device_stats(dev, &s), SALVO_OK);
        if (s.releases_pending > p.after_launch)
            p.after_launch = s.releases_pending;
        if (s.release_bytes_pending > p.bytes_after_launch)
            p.bytes_after_launch = s.release_bytes_pending;
        salvo_buffer_destroy(b); /* its launch is recording or in flight */
        assert_int_equal(salvo_device_stats(dev, &s), SALVO_OK);
        if (s.releases_pending > p.after_destroy)
            p.after_destroy = s.releases_pending;
        if (s.release_bytes_pending > p.bytes_after_destroy)
            p.bytes_after_destroy = s.release_bytes_pending;
    }
    assert_int_equal(salvo_stream_synchronize(st), SALVO_OK);
    expect_all(kept, launches, "kept");
    salvo_stats s;
    assert_int_equal(salvo_device_stats(dev, &s), SALVO_OK);
    assert_int_equal(s.releases_pending, 0);
    assert_int_equal(s.releases_run, launches);
    salvo_buffer_destroy(kept);
    salvo_kernel_destroy(k);
    salvo_stream_destroy(st);
    lava_expect_nothing_live(dev);
    salvo_device_destroy(dev);
    return p;
}

static void release_bounds(void **state)
{
    (void)state;
    double t0 = now_s();
    warnings = 0;
    const uint32_t launches = 20000;

    /* Default bounds (1024 releases, 256 MiB): nothing forces a drain, so
     * releases wait for the ring and pile up to a few batches' worth. This
     * is the control that shows the bounds below are what limits them. */
    peaks free_run = churn(0, 0, launches);
    printf("bounds: default bounds: releases_pending peaks at %llu\n",
           (unsigned long long)free_run.after_destroy);
    assert_true(free_run.after_destroy > 64);

    /* Count bound 8: a launch that finds more than 8 queued runs them first
     * (submitting and waiting for what they wait on). The destroy after it
     * adds one more, so the count never exceeds the bound by more than one
     * release, far less than a batch's worth. */
    const uint32_t max_count = 8;
    peaks counted = churn(max_count, 0, launches);
    printf("bounds: release_max_count %u: releases_pending peaks at %llu after a launch, %llu "
           "after a destroy\n",
           max_count, (unsigned long long)counted.after_launch,
           (unsigned long long)counted.after_destroy);
    assert_true(counted.after_launch <= max_count);
    assert_true(counted.after_destroy <= max_count + 1);

    /* Byte bound 4 KiB (four of these buffers). */
    const uint64_t max_bytes = 4096;
    peaks bytes = churn(0, max_bytes, launches);
    printf("bounds: release_max_bytes %llu: release_bytes_pending peaks at %llu after a launch, "
           "%llu after a destroy\n",
           (unsigned long long)max_bytes, (unsigned long long)bytes.bytes_after_launch,
           (unsigned long long)bytes.bytes_after_destroy);
    assert_true(bytes.bytes_after_launch <= max_bytes);
    assert_true(bytes.bytes_after_destroy <= max_bytes + BYTES);
    assert_int_equal(warnings, 0);
    printf("bounds: 3 x %u launches in %.1f s\n", launches, now_s() - t0);
}

int main(void)
{
    /* The phases set their own configuration; the environment's would skew
     * the bounds they check. */
    unsetenv("SALVO_VALIDATION");
    unsetenv("SALVO_BATCH");
    unsetenv("SALVO_RELEASE_MAX_COUNT");
    unsetenv("SALVO_RELEASE_MAX_BYTES");
    unsetenv("SALVO_FAULT");
    lava_require_device();
    setvbuf(stdout, NULL, _IOLBF, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(soak),
        cmocka_unit_test(release_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
