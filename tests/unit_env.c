/*
 * The environment variables salvo reads, parsed strictly (src/base/env.c).
 *
 *  - The parsers on their own: what an integer, a number of seconds and a
 *    choice accept, and what they refuse (signs, spaces, trailing junk,
 *    out of range, overflow, inf and nan, other words).
 *  - Every variable a device reads, on the fake accelerator: each value
 *    that cannot be used gives a warning, through the log callback, that
 *    names the variable, the value and the fallback, and the setting read
 *    back through salvo_device_info (or the accelerator's open options)
 *    is that fallback; a good value is taken, without a warning.
 *  - On a Vulkan device (lavapipe; skipped without one): SALVO_QUEUE_FAMILY,
 *    which the Vulkan accelerator reads, and SALVO_VALIDATION=1 with no
 *    callback, whose findings and confirmation reach stderr.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv, dup, fileno */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "api/internal.h"
#include "base/env.h"
#include "salvo/salvo_vulkan.h"
#include "support/fake_accel.h"

static const char *const SALVO_VARS[] = {
    "SALVO_BATCH",       "SALVO_FENCE_TIMEOUT_S", "SALVO_RELEASE_MAX_COUNT",
    "SALVO_RELEASE_MAX_BYTES", "SALVO_DEVICE",    "SALVO_VALIDATION",
    "SALVO_FAULT",       "SALVO_SPIN_US",         "SALVO_DESCRIPTORS",
    "SALVO_TRANSFER_IMPORT", "SALVO_PIPELINE_CACHE", "SALVO_TRACE",
    "SALVO_QUEUES",      "SALVO_TRANSFER_QUEUE",  "SALVO_SPIRV_VALIDATE",
    "SALVO_QUEUE_FAMILY", "SALVO_LOG",
};

static void clear_env(void)
{
    for (size_t i = 0; i < sizeof SALVO_VARS / sizeof SALVO_VARS[0]; i++)
        unsetenv(SALVO_VARS[i]);
}

static int clear_env_setup(void **state)
{
    (void)state;
    clear_env();
    return 0;
}

/* ------------------------------------------------------------------ */
/* The parsers                                                          */
/* ------------------------------------------------------------------ */

static void test_parse_uint(void **state)
{
    (void)state;
    char why[ENV_WHY_MAX];
    uint64_t v = 77;
    assert_int_equal(env_parse_uint(NULL, 1, 9, &v, why), ENV_UNSET);
    assert_int_equal(env_parse_uint("", 1, 9, &v, why), ENV_UNSET);
    assert_int_equal(v, 77);
    assert_int_equal(env_parse_uint("7", 1, 9, &v, why), ENV_OK);
    assert_int_equal(v, 7);
    assert_int_equal(env_parse_uint("007", 1, 9, &v, why), ENV_OK);
    assert_int_equal(v, 7);
    assert_int_equal(env_parse_uint("18446744073709551615", 0, UINT64_MAX, &v, why), ENV_OK);
    assert_true(v == UINT64_MAX);
    static const char *const bad[] = {"abc", "-5", "+5", " 5", "5 ", "5x", "0x10", "1e3",
                                      "10", "0", "18446744073709551616", "18446744073709551617",
                                      "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = 77;
        why[0] = '\0';
        if (env_parse_uint(bad[i], 1, 9, &v, why) != ENV_BAD)
            fail_msg("\"%s\" was taken as an integer from 1 to 9", bad[i]);
        assert_int_equal(v, 77);
        assert_string_equal(why, "an integer from 1 to 9");
    }
}

static void test_parse_seconds(void **state)
{
    (void)state;
    char why[ENV_WHY_MAX];
    double v = -1;
    assert_int_equal(env_parse_seconds("", 1e9, &v, why), ENV_UNSET);
    assert_int_equal(env_parse_seconds("2.5", 1e9, &v, why), ENV_OK);
    assert_true(v == 2.5);
    assert_int_equal(env_parse_seconds(".5", 1e9, &v, why), ENV_OK);
    assert_true(v == 0.5);
    assert_int_equal(env_parse_seconds("1e3", 1e9, &v, why), ENV_OK);
    assert_true(v == 1000);
    assert_int_equal(env_parse_seconds("0", 1e9, &v, why), ENV_OK);
    assert_true(v == 0);
    static const char *const bad[] = {"abc", "-1", "+1", " 1", "1 ", "5s", "inf", "nan",
                                      "0x10", "1e10", "1e", "..", "1e999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = -1;
        if (env_parse_seconds(bad[i], 1e9, &v, why) != ENV_BAD)
            fail_msg("\"%s\" was taken as seconds", bad[i]);
        assert_true(v == -1);
        assert_string_equal(why, "a number of seconds from 0 to 1e+09");
    }
}

static void test_parse_choice(void **state)
{
    (void)state;
    static const char *const words[] = {"off", "on", NULL};
    char why[ENV_WHY_MAX];
    unsigned v = 9;
    assert_int_equal(env_parse_choice(NULL, words, &v, why), ENV_UNSET);
    assert_int_equal(env_parse_choice("on", words, &v, why), ENV_OK);
    assert_int_equal(v, 1);
    static const char *const bad[] = {"ON", "on ", " on", "o", "onn", "1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = 9;
        if (env_parse_choice(bad[i], words, &v, why) != ENV_BAD)
            fail_msg("\"%s\" was taken as a choice", bad[i]);
        assert_int_equal(v, 9);
        assert_string_equal(why, "one of off, on");
    }
}

/* ------------------------------------------------------------------ */
/* Every variable of a device, on the fake accelerator                  */
/* ------------------------------------------------------------------ */

enum {
    SEEN_MAX = 16
};

typedef struct seen {
    char message[SEEN_MAX][SALVO_ERROR_MAX];
    salvo_log_level level[SEEN_MAX];
    int count;
} seen;

static void record(void *user, salvo_log_level level, const char *file, int line,
                   const char *message)
{
    (void)file;
    (void)line;
    seen *s = user;
    if (s->count < SEEN_MAX) {
        s->level[s->count] = level;
        snprintf(s->message[s->count++], SALVO_ERROR_MAX, "%s", message);
    }
}

/* The warnings that name a variable. */
static int warnings_naming(const seen *s, const char *name, int *at)
{
    int n = 0;
    for (int i = 0; i < s->count; i++) {
        if (s->level[i] == SALVO_LOG_WARNING && strstr(s->message[i], name)) {
            *at = i;
            n++;
        }
    }
    return n;
}

/* The options the core opened the accelerator with. */
static accel_vtable wrapped_vt;
static const accel_vtable *fake_vt;
static accel_open_options opened;

static accel_result capture_open(void *self, const accel_open_options *opt, accel_device **out,
                                 accel_caps *caps)
{
    opened = *opt;
    return fake_vt->device_open(self, opt, out, caps);
}

typedef struct effect {
    salvo_device_info info;
    accel_open_options opt;
} effect;

/* Open a device on a fake (three queues, a copy queue, a discrete GPU)
 * with the environment as it is; *s receives its log. */
static void open_with_env(seen *s, effect *e)
{
    memset(s, 0, sizeof *s);
    fake_accel *f = fake_create();
    assert_non_null(f);
    f->queue_count = 3;
    f->transfer_queue = true;
    f->device_types[0] = SALVO_DEVICE_TYPE_DISCRETE;
    accel acc = fake_accel_get(f);
    fake_vt = acc.vt;
    wrapped_vt = *acc.vt;
    wrapped_vt.device_open = capture_open;
    acc.vt = &wrapped_vt;
    salvo_device_desc desc = {.log = record, .log_user = s};
    salvo_device *dev = NULL;
    salvo_status st = device_create_with_accel(&desc, acc, &dev);
    if (st != SALVO_OK)
        fail_msg("device_create: %s: %s", salvo_status_string(st), salvo_last_error());
    assert_int_equal(salvo_device_info_get(dev, &e->info), SALVO_OK);
    e->opt = opened;
    salvo_device_destroy(dev);
    assert_int_equal(fake_live_total(f), 0);
    fake_free(f);
}

/* What a variable's effect reads as, for comparing a bad value's with the
 * fallback's. */
typedef uint64_t (*read_fn)(const effect *e);

static uint64_t r_batch(const effect *e) { return e->info.batch_size; }
static uint64_t r_timeout(const effect *e) { return (uint64_t)(e->info.fence_timeout_s * 1000); }
static uint64_t r_release_count(const effect *e) { return e->info.release_max_count; }
static uint64_t r_release_bytes(const effect *e) { return e->info.release_max_bytes; }
static uint64_t r_validation(const effect *e)
{
    return e->info.validation * 10 + e->opt.validation + e->opt.sync_validation;
}
static uint64_t r_spin(const effect *e) { return e->info.spin_us; }
static uint64_t r_import(const effect *e) { return e->info.transfer_import; }
static uint64_t r_spirv(const effect *e) { return e->info.spirv_validate; }
static uint64_t r_descriptors(const effect *e) { return e->opt.pool_descriptors; }
static uint64_t r_transfer_queue(const effect *e)
{
    return e->info.transfer_queue * 10 + !e->opt.no_transfer_queue;
}
static uint64_t r_queues(const effect *e) { return e->info.queue_count; }
static uint64_t r_log(const effect *e) { return (uint64_t)e->info.log_level; }

typedef struct var_case {
    const char *name;
    read_fn read;
    uint64_t fallback;          /* what read gives for the fallback */
    const char *fallback_text;  /* what the warning says it uses */
    const char *good;           /* a usable value ... */
    uint64_t good_reads;        /* ... and what read gives for it */
    const char *bad[10];        /* NULL-terminated */
} var_case;

static const var_case vars[] = {
    {"SALVO_BATCH", r_batch, DEFAULT_BATCH, "using 128 (the default)", "7", 7,
     {"abc", "-5", "0", "12x", " 5", "1048577", "99999999999999999999999", "1e3", NULL}},
    {"SALVO_FENCE_TIMEOUT_S", r_timeout, 0, "using 0 (no bound)", "2.5", 2500,
     {"abc", "-1", "5s", "inf", "nan", "1e10", " 1", "0x10", NULL}},
    {"SALVO_RELEASE_MAX_COUNT", r_release_count, DEFAULT_RELEASE_MAX_COUNT,
     "using 1024 (the default)", "5", 5, {"abc", "-5", "0", "4294967296", "10 ", NULL}},
    {"SALVO_RELEASE_MAX_BYTES", r_release_bytes, DEFAULT_RELEASE_MAX_BYTES,
     "using 268435456 (the default)", "4096", 4096,
     {"abc", "-5", "0", "1MB", "18446744073709551616", "18446744073709555000", NULL}},
    {"SALVO_VALIDATION", r_validation, 0, "using 0 (off)", "2", 22,
     {"yes", "3", "-1", "1 ", "on", "true", NULL}},
    {"SALVO_SPIN_US", r_spin, DEFAULT_SPIN_US, "using 100 (the default on a GPU)", "0", 0,
     {"abc", "-5", "1000001", "10us", " 1", NULL}},
    {"SALVO_TRANSFER_IMPORT", r_import, 1, "using 1 (the default)", "0", 0,
     {"yes", "2", "true", "-1", "0 ", "no", NULL}},
    {"SALVO_SPIRV_VALIDATE", r_spirv, 0, "using 0 (the default)", "1", 1,
     {"yes", "2", "on", "-0", NULL}},
    {"SALVO_DESCRIPTORS", r_descriptors, 0,
     "using push (the default: push descriptors where the device has them)", "pool", 1,
     {"pools", "POOL", "yes", "1", NULL}},
    {"SALVO_TRANSFER_QUEUE", r_transfer_queue, 11,
     "using 1 (the copy engine's queue where there is one)", "0", 0,
     {"yes", "2", "off", "false", NULL}},
    {"SALVO_QUEUES", r_queues, 3, "using 0 (no cap)", "1", 1, {"abc", "0", "-1", "2x", NULL}},
    {"SALVO_LOG", r_log, SALVO_LOG_WARNING,
     "is not one of off, error, warning, info, debug; using warning", "debug", SALVO_LOG_DEBUG,
     {"loud", "WARNING", "3", "warn", "", NULL}},
};

static void test_every_variable(void **state)
{
    (void)state;
    int failed = 0;
    for (size_t v = 0; v < sizeof vars / sizeof vars[0]; v++) {
        const var_case *c = &vars[v];
        seen s;
        effect e;

        /* Unset: the default, and nothing said. */
        clear_env();
        open_with_env(&s, &e);
        int at = -1;
        if (c->read(&e) != c->fallback || warnings_naming(&s, c->name, &at)) {
            printf("[  FAILED  ] %s unset: reads %llu, want %llu\n", c->name,
                   (unsigned long long)c->read(&e), (unsigned long long)c->fallback);
            failed++;
        }

        /* A good value is taken, silently. */
        setenv(c->name, c->good, 1);
        open_with_env(&s, &e);
        if (c->read(&e) != c->good_reads || warnings_naming(&s, c->name, &at)) {
            printf("[  FAILED  ] %s=\"%s\": reads %llu, want %llu%s\n", c->name, c->good,
                   (unsigned long long)c->read(&e), (unsigned long long)c->good_reads,
                   at >= 0 ? " (and warned)" : "");
            failed++;
        }

        for (int b = 0; c->bad[b]; b++) {
            const char *bad = c->bad[b];
            setenv(c->name, bad, 1);
            open_with_env(&s, &e);
            if (!*bad) {
                /* Empty: the same as unset. */
                if (c->read(&e) != c->fallback || warnings_naming(&s, c->name, &at)) {
                    printf("[  FAILED  ] %s=\"\" is not taken as unset\n", c->name);
                    failed++;
                }
                continue;
            }
            char named[160];
            snprintf(named, sizeof named, "%s=\"%s\"", c->name, bad);
            at = -1;
            int n = warnings_naming(&s, c->name, &at);
            const char *problem = NULL;
            if (n != 1)
                problem = n ? "warned more than once" : "no warning names the variable";
            else if (!strstr(s.message[at], named))
                problem = "the warning does not quote the value";
            else if (!strstr(s.message[at], c->fallback_text))
                problem = "the warning does not name the fallback";
            else if (c->read(&e) != c->fallback)
                problem = "the effective setting is not the fallback";
            if (problem) {
                printf("[  FAILED  ] %s: %s (reads %llu, want %llu; \"%s\")\n", named, problem,
                       (unsigned long long)c->read(&e), (unsigned long long)c->fallback,
                       at >= 0 ? s.message[at] : "");
                failed++;
            } else {
                printf("[       OK ] %s\n", s.message[at]);
            }
        }
        unsetenv(c->name);
    }
    if (failed)
        fail_msg("%d case(s) failed (see [  FAILED  ] above)", failed);
}

/* The variables whose fallback depends on another: the spin time on a
 * CPU device, SPIR-V validation with the layer on. */
static void test_fallbacks_that_depend(void **state)
{
    (void)state;
    seen s;
    effect e;
    setenv("SALVO_SPIRV_VALIDATE", "maybe", 1);
    setenv("SALVO_VALIDATION", "1", 1);
    open_with_env(&s, &e);
    int at = -1;
    assert_int_equal(warnings_naming(&s, "SALVO_SPIRV_VALIDATE", &at), 1);
    assert_non_null(strstr(s.message[at], "using 1 (the default with validation on)"));
    assert_true(e.info.spirv_validate);
    assert_int_equal(e.info.validation, 1);
    clear_env();

    /* The fake as a CPU device: no spin by default. */
    fake_accel *f = fake_create();
    assert_non_null(f);
    f->device_types[0] = SALVO_DEVICE_TYPE_CPU;
    setenv("SALVO_SPIN_US", "fast", 1);
    memset(&s, 0, sizeof s);
    salvo_device_desc desc = {.log = record, .log_user = &s};
    salvo_device *dev = NULL;
    assert_int_equal(device_create_with_accel(&desc, fake_accel_get(f), &dev), SALVO_OK);
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(dev, &info), SALVO_OK);
    assert_int_equal(info.spin_us, 0);
    assert_int_equal(warnings_naming(&s, "SALVO_SPIN_US", &at), 1);
    assert_non_null(strstr(s.message[at], "SALVO_SPIN_US=\"fast\""));
    assert_non_null(strstr(s.message[at], "using 0 (the default on this device)"));
    salvo_device_destroy(dev);
    fake_free(f);
    clear_env();
}

/* A field of salvo_device_desc wins: the variable is not read, so a bad
 * value of it says nothing. */
static void test_desc_wins_silently(void **state)
{
    (void)state;
    setenv("SALVO_BATCH", "lots", 1);
    setenv("SALVO_FENCE_TIMEOUT_S", "forever", 1);
    fake_accel *f = fake_create();
    assert_non_null(f);
    seen s = {0};
    salvo_device_desc desc = {.log = record, .log_user = &s, .batch_size = 9,
                              .fence_timeout_s = 3};
    salvo_device *dev = NULL;
    assert_int_equal(device_create_with_accel(&desc, fake_accel_get(f), &dev), SALVO_OK);
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(dev, &info), SALVO_OK);
    assert_int_equal(info.batch_size, 9);
    assert_true(info.fence_timeout_s == 3);
    int at;
    assert_int_equal(warnings_naming(&s, "SALVO_BATCH", &at), 0);
    assert_int_equal(warnings_naming(&s, "SALVO_FENCE_TIMEOUT_S", &at), 0);
    salvo_device_destroy(dev);
    fake_free(f);
    clear_env();
}

/* The settings given as paths, reported as whether they are in force:
 * SALVO_PIPELINE_CACHE and SALVO_TRACE (a fake with timestamps, which
 * traces need). */
static void test_paths_reported(void **state)
{
    (void)state;
    char dir[] = "/tmp/salvo-unit-env-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cache[64], trace[64];
    snprintf(cache, sizeof cache, "%s/cache.bin", dir);
    snprintf(trace, sizeof trace, "%s/trace.json", dir);
    for (int set = 0; set < 2; set++) {
        if (set) {
            setenv("SALVO_PIPELINE_CACHE", cache, 1);
            setenv("SALVO_TRACE", trace, 1);
        }
        fake_accel *f = fake_create();
        assert_non_null(f);
        f->timestamps = true;
        seen s = {0};
        salvo_device_desc desc = {.log = record, .log_user = &s};
        salvo_device *dev = NULL;
        assert_int_equal(device_create_with_accel(&desc, fake_accel_get(f), &dev), SALVO_OK);
        salvo_device_info info;
        assert_int_equal(salvo_device_info_get(dev, &info), SALVO_OK);
        assert_int_equal(info.pipeline_cache_file, set);
        assert_int_equal(info.trace_file, set);
        assert_false(info.fault_injection); /* SALVO_FAULT is the Vulkan device's */
        salvo_device_destroy(dev);
        fake_free(f);
    }
    clear_env();
    remove(trace);
    remove(cache);
    rmdir(dir);
}

/* ------------------------------------------------------------------ */
/* On a Vulkan device                                                   */
/* ------------------------------------------------------------------ */

static bool have_vulkan_device(void)
{
    uint32_t n = 0;
    return salvo_device_enumerate(NULL, &n) == SALVO_OK && n > 0;
}

/* SALVO_FAULT (or the desc's fault) is in force: reported. A rule that
 * never fires (the millionth submit) changes nothing else. */
static void test_fault_reported_on_vulkan(void **state)
{
    (void)state;
    if (!have_vulkan_device())
        skip();
    for (int set = 0; set < 3; set++) {
        if (set == 1)
            setenv("SALVO_FAULT", "submit:1000000:oom_device", 1);
        else
            unsetenv("SALVO_FAULT");
        salvo_device_desc desc = {.fault = set == 2 ? "submit:1000000:oom_device" : NULL};
        salvo_device *dev = NULL;
        assert_int_equal(salvo_device_create(&desc, &dev), SALVO_OK);
        salvo_device_info info;
        assert_int_equal(salvo_device_info_get(dev, &info), SALVO_OK);
        assert_int_equal(info.fault_injection, set != 0);
        salvo_device_destroy(dev);
    }
    clear_env();
}

static void test_queue_family_on_vulkan(void **state)
{
    (void)state;
    if (!have_vulkan_device())
        skip();
    /* The family taken without the variable: the fallback. */
    seen s = {0};
    salvo_device_desc desc = {.log = record, .log_user = &s};
    salvo_device *dev = NULL;
    assert_int_equal(salvo_device_create(&desc, &dev), SALVO_OK);
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(dev, &info), SALVO_OK);
    const uint32_t family = info.queue_family;
    salvo_vk_handles h;
    assert_int_equal(salvo_device_vk_handles(dev, &h), SALVO_OK);
    assert_int_equal(h.queue_family_index, family);
    salvo_device_destroy(dev);

    /* Good: the same family asked for by number, silently. */
    char good[16];
    snprintf(good, sizeof good, "%u", family);
    setenv("SALVO_QUEUE_FAMILY", good, 1);
    memset(&s, 0, sizeof s);
    assert_int_equal(salvo_device_create(&desc, &dev), SALVO_OK);
    assert_int_equal(salvo_device_info_get(dev, &info), SALVO_OK);
    assert_int_equal(info.queue_family, family);
    int at = -1;
    assert_int_equal(warnings_naming(&s, "SALVO_QUEUE_FAMILY", &at), 0);
    salvo_device_destroy(dev);

    static const char *const bad[] = {"abc", "-1", "1x", "4294967296", "4000000000"};
    char fallback[64];
    snprintf(fallback, sizeof fallback, "using %u (the default family)", family);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("SALVO_QUEUE_FAMILY", bad[i], 1);
        memset(&s, 0, sizeof s);
        assert_int_equal(salvo_device_create(&desc, &dev), SALVO_OK);
        assert_int_equal(salvo_device_info_get(dev, &info), SALVO_OK);
        char named[64];
        snprintf(named, sizeof named, "SALVO_QUEUE_FAMILY=\"%s\"", bad[i]);
        at = -1;
        if (warnings_naming(&s, "SALVO_QUEUE_FAMILY", &at) != 1 || !strstr(s.message[at], named) ||
            !strstr(s.message[at], fallback) || info.queue_family != family)
            fail_msg("%s: family %u, warning \"%s\"", named, info.queue_family,
                     at >= 0 ? s.message[at] : "(none)");
        printf("[       OK ] %s\n", s.message[at]);
        salvo_device_destroy(dev);
    }
    clear_env();
}

/* stderr, captured into a file while a call runs. */
typedef struct capture {
    FILE *file;
    int saved;
} capture;

static void capture_begin(capture *c)
{
    fflush(stderr);
    c->file = tmpfile();
    assert_non_null(c->file);
    c->saved = dup(2);
    assert_true(c->saved >= 0);
    assert_true(dup2(fileno(c->file), 2) >= 0);
}

static void capture_end(capture *c, char *out, size_t size)
{
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    rewind(c->file);
    size_t n = fread(out, 1, size - 1, c->file);
    out[n] = '\0';
    fclose(c->file);
}

typedef PFN_vkVoidFunction(VKAPI_PTR *get_device_proc)(VkDevice, const char *);

/* SALVO_VALIDATION=1 and no callback: the confirmation and the layer's
 * findings go to stderr, a line each. The finding is made here, on the
 * device salvo opened: a concurrent buffer needs two queue families. */
static void test_validation_on_stderr(void **state)
{
    (void)state;
    if (!have_vulkan_device())
        skip();
    setenv("SALVO_VALIDATION", "1", 1);
    capture c;
    capture_begin(&c);
    salvo_device *dev = NULL;
    salvo_status st = salvo_device_create(NULL, &dev);
    salvo_vk_handles h = {0};
    salvo_status hs = st == SALVO_OK ? salvo_device_vk_handles(dev, &h) : st;
    VkBuffer buf = VK_NULL_HANDLE;
    VkResult r = VK_ERROR_UNKNOWN;
    PFN_vkDestroyBuffer destroy = NULL;
    if (hs == SALVO_OK) {
        get_device_proc gdpa =
            (get_device_proc)h.get_instance_proc_addr(h.instance, "vkGetDeviceProcAddr");
        PFN_vkCreateBuffer create = (PFN_vkCreateBuffer)gdpa(h.device, "vkCreateBuffer");
        destroy = (PFN_vkDestroyBuffer)gdpa(h.device, "vkDestroyBuffer");
        VkBufferCreateInfo bi = {
            .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
            .size = 256,
            .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
            .sharingMode = VK_SHARING_MODE_CONCURRENT,
            .queueFamilyIndexCount = 0,
        };
        r = create(h.device, &bi, NULL, &buf);
        if (r == VK_SUCCESS)
            destroy(h.device, buf, NULL);
    }
    salvo_stats stats = {0};
    if (st == SALVO_OK)
        salvo_device_stats(dev, &stats);
    salvo_device_destroy(dev);
    char out[16384];
    capture_end(&c, out, sizeof out);
    clear_env();
    printf("%s", out);
    if (st == SALVO_ERROR_UNSUPPORTED || (st != SALVO_OK && strstr(salvo_last_error(), "validation")))
        skip(); /* no validation layer installed */
    assert_int_equal(st, SALVO_OK);
    assert_int_equal(hs, SALVO_OK);
    assert_non_null(strstr(out, "salvo: info: validation on: VK_LAYER_KHRONOS_validation"));
    assert_true(stats.validation_messages >= 1);
    const char *line = strstr(out, "salvo: error: validation: ");
    if (!line)
        fail_msg("no validation error on stderr:\n%s", out);
    assert_non_null(strstr(line, "VUID-VkBufferCreateInfo-sharingMode-"));
    /* One line: the message's own line breaks are gone. */
    const char *end = strchr(line, '\n');
    assert_non_null(end);
    assert_true(strstr(line, "VUID-VkBufferCreateInfo-sharingMode-") < end);
}

int main(void)
{
    clear_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_uint),
        cmocka_unit_test(test_parse_seconds),
        cmocka_unit_test(test_parse_choice),
        cmocka_unit_test_setup(test_every_variable, clear_env_setup),
        cmocka_unit_test_setup(test_fallbacks_that_depend, clear_env_setup),
        cmocka_unit_test_setup(test_desc_wins_silently, clear_env_setup),
        cmocka_unit_test_setup(test_paths_reported, clear_env_setup),
        cmocka_unit_test_setup(test_fault_reported_on_vulkan, clear_env_setup),
        cmocka_unit_test_setup(test_queue_family_on_vulkan, clear_env_setup),
        cmocka_unit_test_setup(test_validation_on_stderr, clear_env_setup),
    };
    return cmocka_run_group_tests_name("env", tests, NULL, NULL);
}
