/*
 * Helpers for the integration suites that run on a real Vulkan device
 * (lavapipe in CI) with the validation layer on.
 */
#ifndef SALVO_TESTS_LAVA_H
#define SALVO_TESTS_LAVA_H

#include <stdbool.h>
#include <stdint.h>

#include "salvo/salvo.h"

/* Exit status ctest reads as "skipped". */
#define LAVA_SKIP 77

/* Open the default device with validation (and sync validation when
 * SALVO_VALIDATION=2). Validation and error messages are counted and
 * echoed to stderr. Exits with LAVA_SKIP when no Vulkan device exists. */
salvo_device *lava_open(uint32_t flags, uint32_t batch_size);
/* Call from main() before running the suite: skips when no device. */
void lava_require_device(void);
/* Validation messages seen by the devices opened through lava_open. */
uint64_t lava_validation_messages(void);
/* Destroy the device, then fail (cmocka) when:
 *  - no launch or release was pending and a live object counter (buffers,
 *    kernels, streams, events, gates, graphs, images, samplers) was not
 *    zero (with work left for the destroy to run, what it uses stays live
 *    until it completes, so the counters are not checked then);
 *  - the device had counted a validation message;
 *  - a validation message came during the destroy (what the layer reports
 *    at vkDestroyDevice: a Vulkan object salvo leaked);
 *  - salvo logged a warning or error during the destroy (it warns for
 *    each kind of object it had to reclaim).
 * The device is destroyed whatever fails. Messages also count for
 * lava_tests_result. */
void lava_close(salvo_device *dev);

/* add.spv with a workgroup of 64: data[i] += value for i < n, push
 * constants {n, value}, the buffer at binding 0. */
salvo_kernel *lava_add_kernel(salvo_device *dev);
/* copy.spv: dst[i] = src[i] + add, bindings 0 (src) and 1 (dst). */
salvo_kernel *lava_copy_kernel(salvo_device *dev);
/* Launch add on st over the n elements of b from element first. */
void lava_add(salvo_stream *st, salvo_kernel *add, salvo_buffer *b, uint32_t first, uint32_t n,
              uint32_t value);
/* Read the first n 32-bit elements of b back and fail, naming the first
 * one that differs, unless each holds want. */
void lava_expect_all(salvo_buffer *b, uint32_t n, uint32_t want);
/* A buffer of n 32-bit elements in domain, written with zeros. */
salvo_buffer *lava_zeroed(salvo_device *dev, uint32_t n, salvo_domain domain);
/* Fail when the device's stats count a validation message. */
void lava_expect_no_validation(salvo_device *dev);
/* Fail unless the device holds no object, no release or launch is
 * pending and no validation message was seen. */
void lava_expect_nothing_live(salvo_device *dev);
/* Synchronize the device, then fail unless no launch is pending and no
 * validation message was seen. */
void lava_expect_settled(salvo_device *dev);

/* Whether the device runs on lavapipe (driver llvmpipe) of Mesa 22.3 or
 * newer. */
bool lava_is_lavapipe_22_3(const salvo_device_info *info);
/* On lavapipe 22.3 or newer, fail unless info reports on the features
 * lavapipe offers there (Float64, Int64, Int16, Int8, Float16, 8- and
 * 16-bit storage, 64-bit atomics, the Vulkan memory model, buffer device
 * address), naming each one reported off: the suites that run a feature's
 * kernel or expect its refusal by info.features cannot tell a feature
 * salvo stopped enabling from one the device lacks. Elsewhere it says it
 * checked nothing (lava_core compares every field with the driver's). */
void lava_expect_lavapipe_features(const salvo_device_info *info);

/* The elapsed time between two recorded events; fails the test unless
 * salvo_event_elapsed answers SALVO_OK. */
uint64_t lava_elapsed_ok(salvo_event *start, salvo_event *end);

/* spin.spv (tests/shaders/spin.comp): each invocation runs
 * LAVA_SPIN_ITERATIONS steps x = x * 1664525 + 1013904223 from its local
 * index + 1 and stores where it ended (element i: lava_spin_value(i)). Its
 * time is set by the workgroup count, not the iterations: llvmpipe ends
 * any loop after 65535 of them. Its output buffer holds 64 elements a
 * workgroup. */
#define LAVA_SPIN_ITERATIONS 16384u
#define LAVA_SPIN_MAX_GROUPS 16384u
/* Launch the spin kernel k on st over workgroups groups, into out. */
void lava_spin(salvo_stream *st, salvo_kernel *k, salvo_buffer *out, uint32_t workgroups);
/* What element i of the spin's output holds. */
uint32_t lava_spin_value(uint32_t i);
/* Workgroups, from first and doubling, for a spin of at least min_ns as
 * two events around it in one batch time it (after a spin that pays the
 * first dispatch's costs); first where the device has no timestamps
 * (timed false). */
uint32_t lava_spin_groups(salvo_device *dev, salvo_stream *st, salvo_kernel *k,
                          salvo_buffer *out, uint32_t first, bool timed, uint64_t min_ns);

/* e0..e1 spans a spin whose time e1..e2 measures alone (timed: the device
 * has timestamps): fail unless it is at least half that, naming what (the
 * work whose end e1 marks) when e1's timestamp came before it. Without
 * timestamps, elapsed must say SALVO_ERROR_UNSUPPORTED. */
void lava_expect_spanned(salvo_event *e0, salvo_event *e1, salvo_event *e2, bool timed,
                         const char *what);

/* The validation layer of Debian 12 (1.3.239) sometimes waits 10 s for
 * its own record of another thread's raise of a timeline semaphore (the
 * host-call worker's, a gate's) while a thread reads or waits for that
 * value, then reports UNASSIGNED-VkSemaphore-state-timeout, "most likely a
 * validation bug" (as tests/model/README.md notes for gates), and only
 * after the driver said the value was reached: a message about the layer,
 * never about the program. Call from main() of a suite whose work waits
 * on such a raise: that id is filtered (VK_LAYER_MESSAGE_ID_FILTER), every
 * other message still fails the suite. */
void lava_filter_layer_timeouts(void);

/* The fixture most suites share: a device, the add kernel and a stream
 * with the default desc. */
typedef struct lava_fixture {
    salvo_device *dev;
    salvo_kernel *add;
    salvo_stream *st;
} lava_fixture;

/* lava_open(flags, batch_size), the add kernel and the stream. */
lava_fixture *lava_fixture_open(uint32_t flags, uint32_t batch_size);
/* Fail on any validation message the device saw, then destroy the
 * stream, the kernel and the device, and free f. */
void lava_fixture_close(lava_fixture *f);
/* cmocka setup and teardown of a lava_fixture on a device with
 * synchronization validation and the default batch size. */
int lava_setup(void **state);
int lava_teardown(void **state);
/* A cmocka test run between lava_setup and lava_teardown. */
#define lava_test(f) cmocka_unit_test_setup_teardown(f, lava_setup, lava_teardown)

/* Run a cmocka group; the result fails too when any device opened through
 * lava_open saw a validation message. */
#define lava_run_tests(tests)                                                                      \
    lava_tests_result(cmocka_run_group_tests(tests, NULL, NULL))
int lava_tests_result(int failed);

#endif
