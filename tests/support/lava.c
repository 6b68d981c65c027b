#define _POSIX_C_SOURCE 200809L /* setenv */
#include "support/lava.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* The shader headers define their arrays, and the suites that link this
 * file include them too: here they go by names of their own. */
#define add_spv lava_add_spv
#define copy_spv lava_copy_spv
#include "add.spv.h"
#include "copy.spv.h"
#undef add_spv
#undef copy_spv

static _Atomic uint64_t validation_count;
/* salvo's own warnings and errors: salvo_device_destroy logs a warning for
 * each kind of object it had to reclaim. */
static _Atomic uint64_t warning_count;

static void log_cb(void *user, salvo_log_level level, const char *file, int line,
                   const char *message)
{
    (void)user;
    (void)line;
    if (file && strcmp(file, "validation") == 0) {
        atomic_fetch_add(&validation_count, 1);
        fprintf(stderr, "VALIDATION: %s\n", message);
    } else if (level >= SALVO_LOG_WARNING) {
        atomic_fetch_add(&warning_count, 1);
        fprintf(stderr, "salvo: %s\n", message);
    }
}

void lava_require_device(void)
{
    uint32_t n = 0;
    if (salvo_device_enumerate(NULL, &n) != SALVO_OK || n == 0) {
        fprintf(stderr, "no Vulkan device: skipped\n");
        exit(LAVA_SKIP);
    }
}

salvo_device *lava_open(uint32_t flags, uint32_t batch_size)
{
    lava_require_device();
    salvo_device_desc desc = {
        .flags = flags | SALVO_DEVICE_VALIDATION,
        .batch_size = batch_size,
        .log = log_cb,
    };
    salvo_device *dev = NULL;
    salvo_status st = salvo_device_create(&desc, &dev);
    if (st != SALVO_OK) {
        fprintf(stderr, "device_create: %s: %s\n", salvo_status_string(st), salvo_last_error());
        exit(st == SALVO_ERROR_NO_DEVICE ? LAVA_SKIP : 1);
    }
    return dev;
}

uint64_t lava_validation_messages(void)
{
    return atomic_load(&validation_count);
}

void lava_close(salvo_device *dev)
{
    /* The counters are read first and checked after the destroy, so that a
     * failure leaves no device behind for the next test. */
    salvo_stats s;
    salvo_status got = salvo_device_stats(dev, &s);
    uint64_t messages = lava_validation_messages();
    uint64_t warnings = atomic_load(&warning_count);
    salvo_device_destroy(dev);
    messages = lava_validation_messages() - messages;
    warnings = atomic_load(&warning_count) - warnings;
    assert_int_equal(got, SALVO_OK);
    /* Work left for the destroy to run keeps what it uses live until it
     * completes: the counters then say nothing about what the test leaked. */
    bool settled = s.launches_pending == 0 && s.releases_pending == 0;
    if (settled && (s.live_buffers || s.live_buffer_bytes || s.live_kernels || s.live_streams ||
                    s.live_events || s.live_gates || s.live_graphs || s.live_images ||
                    s.live_image_bytes || s.live_samplers))
        fail_msg("lava_close: still alive at destroy: %llu buffers (%llu bytes), %llu kernels, "
                 "%llu streams, %llu events, %llu gates, %llu graphs, %llu images (%llu bytes), "
                 "%llu samplers",
                 (unsigned long long)s.live_buffers, (unsigned long long)s.live_buffer_bytes,
                 (unsigned long long)s.live_kernels, (unsigned long long)s.live_streams,
                 (unsigned long long)s.live_events, (unsigned long long)s.live_gates,
                 (unsigned long long)s.live_graphs, (unsigned long long)s.live_images,
                 (unsigned long long)s.live_image_bytes, (unsigned long long)s.live_samplers);
    if (s.validation_messages)
        fail_msg("lava_close: %llu validation message(s) while the device was open",
                 (unsigned long long)s.validation_messages);
    /* What the layer finds at vkDestroyDevice (a Vulkan object salvo
     * leaked, say) reaches the log callback only now. */
    if (messages)
        fail_msg("lava_close: %llu validation message(s) while the device was destroyed",
                 (unsigned long long)messages);
    /* The destroy reclaimed objects never destroyed, or failed (see the
     * "salvo:" lines above). */
    if (warnings)
        fail_msg("lava_close: %llu warning(s) from salvo while the device was destroyed",
                 (unsigned long long)warnings);
}

bool lava_is_lavapipe_22_3(const salvo_device_info *info)
{
    int major = 0, minor = 0;
    if (strcmp(info->driver_name, "llvmpipe") != 0 ||
        sscanf(info->driver_info, "Mesa %d.%d", &major, &minor) != 2)
        return false;
    return major > 22 || (major == 22 && minor >= 3);
}

void lava_expect_lavapipe_features(const salvo_device_info *info)
{
    if (!lava_is_lavapipe_22_3(info)) {
        print_message("not lavapipe 22.3 or newer (%s, %s): its features are not checked here\n",
                      info->driver_name, info->driver_info);
        return;
    }
    const salvo_device_features *f = &info->features;
    const struct {
        const char *name;
        bool on;
    } offered[] = {
        {"shader_float64 (Float64)", f->shader_float64},
        {"shader_int64 (Int64)", f->shader_int64},
        {"shader_int16 (Int16)", f->shader_int16},
        {"shader_int8 (Int8)", f->shader_int8},
        {"shader_float16 (Float16)", f->shader_float16},
        {"storage_buffer_8bit", f->storage_buffer_8bit},
        {"uniform_buffer_8bit", f->uniform_buffer_8bit},
        {"push_constant_8bit", f->push_constant_8bit},
        {"storage_buffer_16bit", f->storage_buffer_16bit},
        {"uniform_buffer_16bit", f->uniform_buffer_16bit},
        {"push_constant_16bit", f->push_constant_16bit},
        {"buffer_int64_atomics (Int64Atomics)", f->buffer_int64_atomics},
        {"shared_int64_atomics (Int64Atomics)", f->shared_int64_atomics},
        {"vulkan_memory_model", f->vulkan_memory_model},
        {"vulkan_memory_model_device_scope", f->vulkan_memory_model_device_scope},
        {"buffer_device_address", f->buffer_device_address},
    };
    int off = 0;
    if (!f->checked) {
        print_error("lavapipe: salvo_device_features.checked is false\n");
        off++;
    }
    for (size_t i = 0; i < sizeof offered / sizeof offered[0]; i++)
        if (!offered[i].on) {
            print_error("lavapipe (%s) offers %s, but salvo reports it off\n", info->driver_info,
                        offered[i].name);
            off++;
        }
    if (off)
        fail_msg("%d feature(s) lavapipe offers reported off by salvo_device_info.features", off);
}

uint64_t lava_elapsed_ok(salvo_event *start, salvo_event *end)
{
    uint64_t ns = 0;
    salvo_status r = salvo_event_elapsed(start, end, &ns);
    if (r != SALVO_OK)
        fail_msg("event_elapsed: %s: %s", salvo_status_string(r), salvo_last_error());
    return ns;
}

void lava_spin(salvo_stream *st, salvo_kernel *k, salvo_buffer *out, uint32_t workgroups)
{
    salvo_binding bd = {.binding = 0, .buffer = out};
    uint32_t groups[3] = {workgroups, 1, 1};
    uint32_t iterations = LAVA_SPIN_ITERATIONS;
    assert_int_equal(salvo_launch(st, k, groups, &bd, 1, &iterations, sizeof iterations),
                     SALVO_OK);
}

uint32_t lava_spin_value(uint32_t i)
{
    /* The step applied LAVA_SPIN_ITERATIONS times, by squaring
     * (x -> m x + c). */
    uint32_t m = 1, c = 0, sm = 1664525u, sc = 1013904223u;
    for (uint32_t n = LAVA_SPIN_ITERATIONS; n; n >>= 1) {
        if (n & 1) {
            c = sm * c + sc;
            m = sm * m;
        }
        sc = sm * sc + sc;
        sm = sm * sm;
    }
    return m * (i % 64u + 1u) + c;
}

uint32_t lava_spin_groups(salvo_device *dev, salvo_stream *st, salvo_kernel *k,
                          salvo_buffer *out, uint32_t first, bool timed, uint64_t min_ns)
{
    uint32_t groups = first;
    if (!timed)
        return groups;
    salvo_event *s = NULL, *e = NULL;
    assert_int_equal(salvo_event_create(dev, &s), SALVO_OK);
    assert_int_equal(salvo_event_create(dev, &e), SALVO_OK);
    lava_spin(st, k, out, groups);
    assert_int_equal(salvo_stream_synchronize(st), SALVO_OK);
    for (;;) {
        assert_int_equal(salvo_event_record(s, st), SALVO_OK);
        lava_spin(st, k, out, groups);
        assert_int_equal(salvo_event_record(e, st), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(st), SALVO_OK);
        if (lava_elapsed_ok(s, e) >= min_ns || groups * 2 > LAVA_SPIN_MAX_GROUPS)
            break;
        groups *= 2;
    }
    salvo_event_destroy(s);
    salvo_event_destroy(e);
    return groups;
}

void lava_expect_spanned(salvo_event *e0, salvo_event *e1, salvo_event *e2, bool timed,
                         const char *what)
{
    if (!timed) {
        uint64_t ns = 0;
        assert_int_equal(salvo_event_elapsed(e0, e1, &ns), SALVO_ERROR_UNSUPPORTED);
        return;
    }
    uint64_t spanned = lava_elapsed_ok(e0, e1), alone = lava_elapsed_ok(e1, e2);
    fprintf(stderr, "spin: e0..e1 %llu ns, e1..e2 %llu ns\n", (unsigned long long)spanned,
            (unsigned long long)alone);
    assert_true(alone > 0);
    if (spanned < alone / 2)
        fail_msg("e0..e1 %llu ns, shorter than half the spin it spans (%llu ns): e1's timestamp "
                 "came before %s",
                 (unsigned long long)spanned, (unsigned long long)alone, what);
}

void lava_filter_layer_timeouts(void)
{
    static const char id[] = "UNASSIGNED-VkSemaphore-state-timeout";
    const char *have = getenv("VK_LAYER_MESSAGE_ID_FILTER");
    if (have && strstr(have, id))
        return;
    char both[1024];
    if (have && *have)
        snprintf(both, sizeof both, "%s,%s", have, id);
    else
        snprintf(both, sizeof both, "%s", id);
    setenv("VK_LAYER_MESSAGE_ID_FILTER", both, 1);
}

salvo_kernel *lava_add_kernel(salvo_device *dev)
{
    salvo_spec_constant sc = {0, 64};
    salvo_kernel_desc kd = {.spirv = lava_add_spv, .spirv_size = sizeof lava_add_spv,
                            .name = "add", .spec_constants = &sc, .spec_constant_count = 1};
    salvo_kernel *k = NULL;
    assert_int_equal(salvo_kernel_create(dev, &kd, &k), SALVO_OK);
    return k;
}

salvo_kernel *lava_copy_kernel(salvo_device *dev)
{
    salvo_kernel_desc kd = {.spirv = lava_copy_spv, .spirv_size = sizeof lava_copy_spv,
                            .name = "copy"};
    salvo_kernel *k = NULL;
    assert_int_equal(salvo_kernel_create(dev, &kd, &k), SALVO_OK);
    return k;
}

void lava_add(salvo_stream *st, salvo_kernel *add, salvo_buffer *b, uint32_t first, uint32_t n,
              uint32_t value)
{
    salvo_binding bd = {.binding = 0, .buffer = b, .offset = first * 4ull, .size = n * 4ull};
    const uint32_t groups[3] = {(n + 63) / 64, 1, 1};
    const uint32_t push[2] = {n, value};
    assert_int_equal(salvo_launch(st, add, groups, &bd, 1, push, sizeof push), SALVO_OK);
}

void lava_expect_all(salvo_buffer *b, uint32_t n, uint32_t want)
{
    uint32_t *v = malloc(n * 4ull);
    assert_non_null(v);
    assert_int_equal(salvo_buffer_read(b, 0, v, n * 4ull), SALVO_OK);
    for (uint32_t i = 0; i < n; i++)
        if (v[i] != want)
            fail_msg("element %u: %u, want %u", i, v[i], want);
    free(v);
}

salvo_buffer *lava_zeroed(salvo_device *dev, uint32_t n, salvo_domain domain)
{
    salvo_buffer *b = NULL;
    assert_int_equal(salvo_buffer_create(dev, n * 4ull, domain, &b), SALVO_OK);
    uint32_t *zero = calloc(n, 4);
    assert_non_null(zero);
    assert_int_equal(salvo_buffer_write(b, 0, zero, n * 4ull), SALVO_OK);
    free(zero);
    return b;
}

void lava_expect_no_validation(salvo_device *dev)
{
    salvo_stats s;
    assert_int_equal(salvo_device_stats(dev, &s), SALVO_OK);
    assert_int_equal(s.validation_messages, 0);
}

void lava_expect_nothing_live(salvo_device *dev)
{
    salvo_stats s;
    assert_int_equal(salvo_device_stats(dev, &s), SALVO_OK);
    assert_int_equal(s.live_buffers, 0);
    assert_int_equal(s.live_buffer_bytes, 0);
    assert_int_equal(s.live_kernels, 0);
    assert_int_equal(s.live_streams, 0);
    assert_int_equal(s.live_events, 0);
    assert_int_equal(s.live_gates, 0);
    assert_int_equal(s.releases_pending, 0);
    assert_int_equal(s.release_bytes_pending, 0);
    assert_int_equal(s.launches_pending, 0);
    assert_int_equal(s.validation_messages, 0);
}

void lava_expect_settled(salvo_device *dev)
{
    salvo_stats s;
    assert_int_equal(salvo_device_synchronize(dev), SALVO_OK);
    assert_int_equal(salvo_device_stats(dev, &s), SALVO_OK);
    assert_int_equal(s.launches_pending, 0);
    assert_int_equal(s.validation_messages, 0);
}

lava_fixture *lava_fixture_open(uint32_t flags, uint32_t batch_size)
{
    lava_fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->dev = lava_open(flags, batch_size);
    f->add = lava_add_kernel(f->dev);
    assert_int_equal(salvo_stream_create(f->dev, NULL, &f->st), SALVO_OK);
    return f;
}

void lava_fixture_close(lava_fixture *f)
{
    lava_expect_no_validation(f->dev);
    salvo_stream_destroy(f->st);
    salvo_kernel_destroy(f->add);
    lava_close(f->dev);
    free(f);
}

int lava_setup(void **state)
{
    *state = lava_fixture_open(SALVO_DEVICE_SYNC_VALIDATION, 0);
    return 0;
}

int lava_teardown(void **state)
{
    lava_fixture_close(*state);
    return 0;
}

int lava_tests_result(int failed)
{
    uint64_t messages = lava_validation_messages();
    if (messages) {
        fprintf(stderr, "%llu validation message(s)\n", (unsigned long long)messages);
        return 1;
    }
    return failed;
}
