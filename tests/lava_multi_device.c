#define _POSIX_C_SOURCE 200809L /* setenv, pthread_barrier_t */
/* Two salvo devices over one physical device (lavapipe in CI), validation
 * layer on: both opened by the same enumerated name, driven at the same
 * time from two threads, each a few hundred dependent launches of the add
 * kernel on buffers of its own; both results must be exact. Objects of one
 * device are refused by the other, and both end with nothing live and no
 * validation message. A device's close takes the loader's calls under the
 * lock its open holds (the loader does not guard its device lists), and a
 * program's own loader calls under salvo_vk_loader_lock are kept apart
 * from salvo's opens and closes. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "salvo/salvo.h"
#include "salvo/salvo_vulkan.h"
#include "support/lava.h"

enum {
    N = 4096,         /* elements per buffer */
    LOCAL = 64,       /* the add kernel's local size (spec constant 0) */
    LAUNCHES = 300,   /* dependent launches per device */
    BATCH = 32        /* several batches per run, so both devices submit often */
};

typedef struct side {
    salvo_device *dev;
    salvo_kernel *add;
    salvo_stream *st;
    salvo_buffer *buf;  /* DEVICE: N uints */
    salvo_buffer *host; /* HOST: where the result is copied by the device */
    uint32_t base;      /* buf[i] starts at base + i */
    uint32_t value;     /* what each launch adds */
    pthread_barrier_t *start;
    /* Written by the thread. */
    salvo_status status;
    char where[64];
    char message[1024];
} side;

static void open_side(side *s, const char *name, uint32_t base, uint32_t value)
{
    /* lava_open takes the device $SALVO_DEVICE names. */
    assert_int_equal(setenv("SALVO_DEVICE", name, 1), 0);
    s->dev = lava_open(0, BATCH);
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(s->dev, &info), SALVO_OK);
    assert_string_equal(info.name, name);
    s->add = lava_add_kernel(s->dev);
    assert_int_equal(salvo_stream_create(s->dev, NULL, &s->st), SALVO_OK);
    assert_int_equal(salvo_buffer_create(s->dev, N * 4, SALVO_DOMAIN_DEVICE, &s->buf), SALVO_OK);
    assert_int_equal(salvo_buffer_create(s->dev, N * 4, SALVO_DOMAIN_HOST, &s->host), SALVO_OK);
    uint32_t *init = malloc(N * 4);
    assert_non_null(init);
    for (uint32_t i = 0; i < N; i++)
        init[i] = base + i;
    assert_int_equal(salvo_buffer_write(s->buf, 0, init, N * 4), SALVO_OK);
    free(init);
    s->base = base;
    s->value = value;
}

static void *run_side(void *arg)
{
    side *s = arg;
    const salvo_binding bind = {.binding = 0, .buffer = s->buf};
    const uint32_t push[2] = {N, s->value};
    const uint32_t groups[3] = {N / LOCAL, 1, 1};
    salvo_status r = SALVO_OK;
    snprintf(s->where, sizeof s->where, "start");
    pthread_barrier_wait(s->start);
    for (int i = 0; i < LAUNCHES && r == SALVO_OK; i++) {
        r = salvo_launch(s->st, s->add, groups, &bind, 1, push, sizeof push);
        if (r != SALVO_OK)
            snprintf(s->where, sizeof s->where, "launch %d", i);
        /* Now and then let the host look in the middle of the run. */
        if (r == SALVO_OK && i % 100 == 99) {
            r = salvo_stream_flush(s->st);
            if (r != SALVO_OK)
                snprintf(s->where, sizeof s->where, "flush after launch %d", i);
        }
    }
    if (r == SALVO_OK) {
        /* The result goes out through the device's copy, in stream order. */
        r = salvo_copy(s->st, s->buf, 0, s->host, 0, N * 4);
        if (r != SALVO_OK)
            snprintf(s->where, sizeof s->where, "copy");
    }
    if (r == SALVO_OK) {
        r = salvo_stream_synchronize(s->st);
        if (r != SALVO_OK)
            snprintf(s->where, sizeof s->where, "synchronize");
    }
    s->status = r;
    snprintf(s->message, sizeof s->message, "%s", r == SALVO_OK ? "" : salvo_last_error());
    return NULL;
}

static void check_result(const side *s)
{
    if (s->status != SALVO_OK)
        fail_msg("device (base %u): %s: %s: %s", s->base, s->where,
                 salvo_status_string(s->status), s->message);
    void *mapped = NULL;
    assert_int_equal(salvo_buffer_map(s->host, &mapped), SALVO_OK);
    const uint32_t *got = mapped;
    for (uint32_t i = 0; i < N; i++) {
        uint32_t want = s->base + i + (uint32_t)LAUNCHES * s->value;
        if (got[i] != want)
            fail_msg("device (base %u): element %u is %u, want %u", s->base, i, got[i], want);
    }
    /* And the staged read agrees with the device's copy. */
    uint32_t probe[2];
    assert_int_equal(salvo_buffer_read(s->buf, (N - 2) * 4, probe, sizeof probe), SALVO_OK);
    assert_int_equal(probe[0], s->base + N - 2 + (uint32_t)LAUNCHES * s->value);
    assert_int_equal(probe[1], s->base + N - 1 + (uint32_t)LAUNCHES * s->value);
}

static void close_side(side *s)
{
    salvo_buffer_destroy(s->host);
    salvo_buffer_destroy(s->buf);
    salvo_stream_destroy(s->st);
    salvo_kernel_destroy(s->add);
    assert_int_equal(salvo_device_synchronize(s->dev), SALVO_OK);
    lava_expect_nothing_live(s->dev);
    lava_close(s->dev);
    s->dev = NULL;
}

static void two_devices_one_gpu_two_threads(void **state)
{
    (void)state;
    uint32_t count = 0;
    assert_int_equal(salvo_device_enumerate(NULL, &count), SALVO_OK);
    assert_true(count > 0);
    salvo_device_entry *entries = calloc(count, sizeof *entries);
    assert_non_null(entries);
    assert_int_equal(salvo_device_enumerate(entries, &count), SALVO_OK);
    char name[SALVO_NAME_MAX];
    snprintf(name, sizeof name, "%s", entries[0].name);
    free(entries);
    printf("both devices: %s\n", name);

    pthread_barrier_t start;
    assert_int_equal(pthread_barrier_init(&start, NULL, 2), 0);
    side a = {.start = &start}, b = {.start = &start};
    open_side(&a, name, 0, 1);
    open_side(&b, name, 1000000, 3);
    assert_true(a.dev != b.dev);

    /* Each refuses what belongs to the other. */
    const salvo_binding foreign = {.binding = 0, .buffer = a.buf};
    const uint32_t push[2] = {N, 1};
    const uint32_t groups[3] = {N / LOCAL, 1, 1};
    assert_int_equal(salvo_launch(b.st, b.add, groups, &foreign, 1, push, sizeof push),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_true(strstr(salvo_last_error(), "another device") != NULL);
    assert_int_equal(salvo_copy(b.st, a.buf, 0, b.buf, 0, 64), SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(salvo_copy(b.st, b.buf, 0, a.buf, 0, 64), SALVO_ERROR_INVALID_ARGUMENT);
    const salvo_binding own = {.binding = 0, .buffer = b.buf};
    assert_int_equal(salvo_launch(b.st, a.add, groups, &own, 1, push, sizeof push),
                     SALVO_ERROR_INVALID_ARGUMENT);
    salvo_stats sb;
    assert_int_equal(salvo_device_stats(b.dev, &sb), SALVO_OK);
    assert_int_equal(sb.launches_total, 0);

    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, run_side, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, run_side, &b), 0);
    assert_int_equal(pthread_join(ta, NULL), 0);
    assert_int_equal(pthread_join(tb, NULL), 0);
    pthread_barrier_destroy(&start);

    check_result(&a);
    check_result(&b);
    salvo_stats sa;
    assert_int_equal(salvo_device_stats(a.dev, &sa), SALVO_OK);
    assert_int_equal(salvo_device_stats(b.dev, &sb), SALVO_OK);
    assert_int_equal(sa.launches_total, LAUNCHES);
    assert_int_equal(sb.launches_total, LAUNCHES);
    assert_true(sa.batches_submitted > 1);
    assert_true(sb.batches_submitted > 1);
    close_side(&a);
    close_side(&b);
    assert_int_equal(lava_validation_messages(), 0);
}

/* Runs one add on dev and checks it: the device is whole. */
static void check_runs(salvo_device *dev, uint32_t value)
{
    salvo_kernel *add = lava_add_kernel(dev);
    salvo_buffer *b = lava_zeroed(dev, 256, SALVO_DOMAIN_DEVICE);
    salvo_stream *st = NULL;
    assert_int_equal(salvo_stream_create(dev, NULL, &st), SALVO_OK);
    lava_add(st, add, b, 0, 256, value);
    assert_int_equal(salvo_stream_synchronize(st), SALVO_OK);
    lava_expect_all(b, 256, value);
    salvo_stream_destroy(st);
    salvo_buffer_destroy(b);
    salvo_kernel_destroy(add);
}

static void *destroy_device(void *arg)
{
    _Atomic(salvo_device *) *cell = arg;
    salvo_device_destroy(atomic_load(cell));
    atomic_store(cell, NULL); /* the close has returned */
    return NULL;
}

/* The loader frees a device's node in its device list at vkDestroyDevice
 * with no lock, while another thread's vkCreateDevice or
 * vkGetDeviceProcAddr may walk that list (on any instance): a device of
 * salvo's closing on one thread while another opened on a second crashed
 * the loader. Closing now waits for the lock an open holds (the one
 * salvo_vk_loader_lock takes): with it held here, the close has not
 * returned 300 ms later, and returns once it is let go. (Before, the close
 * returned at once.) */
static void close_waits_for_open(void **state)
{
    (void)state;
    salvo_device *dev = lava_open(0, 4);
    salvo_kernel *add = lava_add_kernel(dev);
    salvo_kernel_destroy(add);
    _Atomic(salvo_device *) cell = dev;
    salvo_vk_loader_lock();
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, destroy_device, (void *)&cell), 0);
    struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
    bool closed_early = atomic_load(&cell) == NULL;
    salvo_vk_loader_unlock();
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_false(closed_early);
    assert_null(atomic_load(&cell));
    /* A device opens and runs after it. */
    dev = lava_open(0, 4);
    check_runs(dev, 5);
    lava_close(dev);
}

static void *open_device(void *arg)
{
    _Atomic(salvo_device *) *cell = arg;
    atomic_store(cell, lava_open(0, 4)); /* non-NULL: the open has returned */
    return NULL;
}

static void *enumerate_devices(void *arg)
{
    atomic_int *count = arg;
    uint32_t n = 0;
    salvo_status st = salvo_device_enumerate(NULL, &n);
    atomic_store(count, st == SALVO_OK ? (int)n : -1);
    return NULL;
}

/* salvo_vk_loader_lock, held by the program, holds off salvo's device
 * opens and enumeration on other threads (each makes an instance and a
 * device through the loader's lists) until it is let go. */
static void loader_lock_holds_off_opens(void **state)
{
    (void)state;
    _Atomic(salvo_device *) cell = NULL;
    atomic_int count = -2;
    salvo_vk_loader_lock();
    pthread_t t_open, t_enum;
    assert_int_equal(pthread_create(&t_open, NULL, open_device, (void *)&cell), 0);
    assert_int_equal(pthread_create(&t_enum, NULL, enumerate_devices, &count), 0);
    struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
    bool opened_early = atomic_load(&cell) != NULL;
    int enumerated_early = atomic_load(&count);
    salvo_vk_loader_unlock();
    assert_int_equal(pthread_join(t_open, NULL), 0);
    assert_int_equal(pthread_join(t_enum, NULL), 0);
    assert_false(opened_early);
    assert_int_equal(enumerated_early, -2);
    assert_true(atomic_load(&count) >= 1);
    salvo_device *dev = atomic_load(&cell);
    assert_non_null(dev);
    check_runs(dev, 7);
    lava_close(dev);
}

/* The program's own VkDevice, made on a salvo device's instance and
 * physical device, and destroyed, each time under salvo_vk_loader_lock. */
typedef struct own_devices {
    salvo_vk_handles h;
    int rounds;
    int made; /* devices made and destroyed */
} own_devices;

static void *make_own_devices(void *arg)
{
    own_devices *o = arg;
    PFN_vkGetInstanceProcAddr gipa = o->h.get_instance_proc_addr;
    PFN_vkCreateDevice create = (PFN_vkCreateDevice)gipa(o->h.instance, "vkCreateDevice");
    PFN_vkGetDeviceProcAddr gdpa =
        (PFN_vkGetDeviceProcAddr)gipa(o->h.instance, "vkGetDeviceProcAddr");
    float priority = 1.0f;
    VkDeviceQueueCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                  .queueFamilyIndex = o->h.queue_family_index,
                                  .queueCount = 1,
                                  .pQueuePriorities = &priority};
    VkDeviceCreateInfo di = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                             .queueCreateInfoCount = 1,
                             .pQueueCreateInfos = &qi};
    for (int i = 0; i < o->rounds && create && gdpa; i++) {
        VkDevice vd = VK_NULL_HANDLE;
        salvo_vk_loader_lock();
        VkResult r = create(o->h.physical_device, &di, NULL, &vd);
        PFN_vkDestroyDevice destroy =
            r == VK_SUCCESS ? (PFN_vkDestroyDevice)gdpa(vd, "vkDestroyDevice") : NULL;
        salvo_vk_loader_unlock();
        if (!destroy)
            break;
        salvo_vk_loader_lock();
        destroy(vd, NULL);
        salvo_vk_loader_unlock();
        o->made++;
    }
    return NULL;
}

/* One thread makes and destroys VkDevices of its own under the lock while
 * this one opens, runs and closes salvo devices: every salvo device runs
 * exactly and every device of the program's was made and destroyed. */
static void own_devices_beside_salvos(void **state)
{
    (void)state;
    salvo_device *home = lava_open(0, 4);
    own_devices o = {.rounds = 20};
    assert_int_equal(salvo_device_vk_handles(home, &o.h), SALVO_OK);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, make_own_devices, &o), 0);
    for (uint32_t i = 0; i < 4; i++) {
        salvo_device *dev = lava_open(0, 4);
        check_runs(dev, 3 + i);
        lava_close(dev);
    }
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(o.made, o.rounds);
    check_runs(home, 11);
    lava_close(home);
}

int main(void)
{
    lava_require_device();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_devices_one_gpu_two_threads),
        cmocka_unit_test(close_waits_for_open),
        cmocka_unit_test(loader_lock_holds_off_opens),
        cmocka_unit_test(own_devices_beside_salvos),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    return failed || lava_validation_messages() ? 1 : 0;
}
