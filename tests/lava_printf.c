/* Shader printf on a real device with the validation layer on: what a
 * kernel prints (debugPrintfEXT) reaches the log callback, from file
 * "printf" at INFO, with the kernel's name, and is no validation message;
 * asked for by the device flag or by $SALVO_PRINTF=1; gated work does not
 * hold a submission up. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "print_value.spv.h"
#include "salvo/salvo.h"
#include "support/lava.h"

enum { MAX_LINES = 64, LINE_MAX_CHARS = 256 };

/* What the log callback saw: printed lines, and findings. */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static char lines[MAX_LINES][LINE_MAX_CHARS];
static int line_count;
static int wrong_level; /* printf lines not at INFO */
static int findings;    /* file "validation" */

static void capture(void *user, salvo_log_level level, const char *file, int line,
                    const char *message)
{
    (void)user;
    (void)line;
    pthread_mutex_lock(&seen_lock);
    if (file && strcmp(file, "printf") == 0) {
        if (level != SALVO_LOG_INFO)
            wrong_level++;
        if (line_count < MAX_LINES)
            snprintf(lines[line_count++], LINE_MAX_CHARS, "%s", message);
    } else if (file && strcmp(file, "validation") == 0) {
        findings++;
        fprintf(stderr, "VALIDATION: %s\n", message);
    } else if (level >= SALVO_LOG_WARNING) {
        fprintf(stderr, "salvo: %s\n", message);
    }
    pthread_mutex_unlock(&seen_lock);
}

static void forget_lines(void)
{
    pthread_mutex_lock(&seen_lock);
    line_count = 0;
    wrong_level = 0;
    findings = 0;
    pthread_mutex_unlock(&seen_lock);
}

/* How many captured lines are exactly want. */
static int printed(const char *want)
{
    int n = 0;
    pthread_mutex_lock(&seen_lock);
    for (int i = 0; i < line_count; i++)
        n += strcmp(lines[i], want) == 0;
    pthread_mutex_unlock(&seen_lock);
    return n;
}

static void show_lines(void)
{
    pthread_mutex_lock(&seen_lock);
    for (int i = 0; i < line_count; i++)
        print_message("printed: %s\n", lines[i]);
    pthread_mutex_unlock(&seen_lock);
}

static salvo_device *open_device(uint32_t flags)
{
    lava_require_device();
    salvo_device_desc desc = {.flags = flags, .log = capture};
    salvo_device *dev = NULL;
    salvo_status st = salvo_device_create(&desc, &dev);
    if (st != SALVO_OK)
        fail_msg("device_create: %s: %s", salvo_status_string(st), salvo_last_error());
    return dev;
}

static salvo_kernel *printer(salvo_device *dev, const char *name)
{
    salvo_kernel_desc kd = {.spirv = print_value_spv, .spirv_size = sizeof print_value_spv,
                            .name = name};
    salvo_kernel *k = NULL;
    salvo_status st = salvo_kernel_create(dev, &kd, &k);
    if (st != SALVO_OK)
        fail_msg("kernel_create: %s: %s", salvo_status_string(st), salvo_last_error());
    return k;
}

/* Runs k over two values (first, first + 1) on st, after a wait on gate
 * (NULL: none, else raised to 1 after the launch); checks they doubled. */
static void run(salvo_device *dev, salvo_stream *st, salvo_kernel *k, uint32_t first,
                salvo_gate *gate)
{
    salvo_buffer *buf = NULL;
    assert_int_equal(salvo_buffer_create(dev, 8, SALVO_DOMAIN_DEVICE, &buf), SALVO_OK);
    uint32_t v[2] = {first, first + 1};
    assert_int_equal(salvo_buffer_write(buf, 0, v, sizeof v), SALVO_OK);
    if (gate)
        assert_int_equal(salvo_stream_wait_gate(st, gate, 1), SALVO_OK);
    salvo_binding b = {.binding = 0, .buffer = buf};
    const uint32_t groups[3] = {1, 1, 1};
    assert_int_equal(salvo_launch(st, k, groups, &b, 1, NULL, 0), SALVO_OK);
    assert_int_equal(salvo_stream_flush(st), SALVO_OK);
    if (gate)
        assert_int_equal(salvo_gate_raise(gate, 1), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(st), SALVO_OK);
    assert_int_equal(salvo_buffer_read(buf, 0, v, sizeof v), SALVO_OK);
    assert_int_equal(v[0], 2 * first);
    assert_int_equal(v[1], 2 * (first + 1));
    salvo_buffer_destroy(buf);
}

static void check_quiet(salvo_device *dev)
{
    salvo_stats s;
    assert_int_equal(salvo_device_stats(dev, &s), SALVO_OK);
    assert_int_equal(s.validation_messages, 0);
    pthread_mutex_lock(&seen_lock);
    int f = findings, w = wrong_level;
    pthread_mutex_unlock(&seen_lock);
    assert_int_equal(f, 0);
    assert_int_equal(w, 0);
}

/* Each invocation's line, with its kernel's name (a '%' in a name
 * included), in no validation message. */
static void test_lines_name_their_kernel(void **state)
{
    (void)state;
    forget_lines();
    salvo_device *dev = open_device(SALVO_DEVICE_PRINTF);
    salvo_kernel *a = printer(dev, "printer");
    salvo_kernel *b = printer(dev, "half%off");
    salvo_stream *st = NULL;
    assert_int_equal(salvo_stream_create(dev, NULL, &st), SALVO_OK);
    run(dev, st, a, 21, NULL);
    run(dev, st, b, 40, NULL);
    show_lines();
    assert_int_equal(printed("kernel 'printer': value 21 at 0"), 1);
    assert_int_equal(printed("kernel 'printer': value 22 at 1"), 1);
    assert_int_equal(printed("kernel 'half%off': value 40 at 0"), 1);
    assert_int_equal(printed("kernel 'half%off': value 41 at 1"), 1);
    check_quiet(dev);
    salvo_stream_destroy(st);
    salvo_kernel_destroy(a);
    salvo_kernel_destroy(b);
    salvo_device_destroy(dev);
}

/* $SALVO_PRINTF=1 asks for it as the flag does; without either, nothing
 * is printed (and the kernel still runs). */
static void test_environment_and_off(void **state)
{
    (void)state;
    forget_lines();
    assert_int_equal(setenv("SALVO_PRINTF", "1", 1), 0);
    salvo_device *dev = open_device(0);
    assert_int_equal(unsetenv("SALVO_PRINTF"), 0);
    salvo_kernel *k = printer(dev, "from_env");
    salvo_stream *st = NULL;
    assert_int_equal(salvo_stream_create(dev, NULL, &st), SALVO_OK);
    run(dev, st, k, 7, NULL);
    assert_int_equal(printed("kernel 'from_env': value 7 at 0"), 1);
    assert_int_equal(printed("kernel 'from_env': value 8 at 1"), 1);
    check_quiet(dev);
    salvo_stream_destroy(st);
    salvo_kernel_destroy(k);
    salvo_device_destroy(dev);

    forget_lines();
    dev = open_device(SALVO_DEVICE_VALIDATION);
    k = printer(dev, "silent");
    assert_int_equal(salvo_stream_create(dev, NULL, &st), SALVO_OK);
    run(dev, st, k, 3, NULL);
    pthread_mutex_lock(&seen_lock);
    int n = line_count;
    pthread_mutex_unlock(&seen_lock);
    assert_int_equal(n, 0);
    check_quiet(dev);
    salvo_stream_destroy(st);
    salvo_kernel_destroy(k);
    salvo_device_destroy(dev);
}

/* Work behind a gate raised only after the launch and the flush, on the
 * same thread: the layer waits inside each submission, so the gated batch
 * must not reach it before the raise. */
static void test_gated_work(void **state)
{
    (void)state;
    forget_lines();
    salvo_device *dev = open_device(SALVO_DEVICE_PRINTF);
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(dev, &info), SALVO_OK);
    assert_int_equal(info.queue_count, 1);
    salvo_kernel *k = printer(dev, "gated");
    salvo_stream *st = NULL, *other = NULL;
    assert_int_equal(salvo_stream_create(dev, NULL, &st), SALVO_OK);
    assert_int_equal(salvo_stream_create(dev, NULL, &other), SALVO_OK);
    salvo_gate *gate = NULL;
    if (salvo_gate_create(dev, &gate) == SALVO_ERROR_UNSUPPORTED)
        skip();
    run(dev, st, k, 5, gate);
    run(dev, other, k, 9, NULL);
    assert_int_equal(printed("kernel 'gated': value 5 at 0"), 1);
    assert_int_equal(printed("kernel 'gated': value 9 at 0"), 1);
    check_quiet(dev);
    salvo_gate_destroy(gate);
    salvo_stream_destroy(st);
    salvo_stream_destroy(other);
    salvo_kernel_destroy(k);
    salvo_device_destroy(dev);
}

int main(void)
{
    lava_require_device();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines_name_their_kernel),
        cmocka_unit_test(test_environment_and_off),
        cmocka_unit_test(test_gated_work),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
