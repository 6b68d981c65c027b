#define _POSIX_C_SOURCE 200809L
/* salvo on the program's own Vulkan (salvo_device_create_vk), lavapipe in
 * CI. The program here loads Vulkan through its own volk, creates its own
 * instance (validation layer and a messenger of its own on), device and
 * queue, and hands them to salvo:
 *   - salvo's launches, transfers and gates are exact on them, and the
 *     program's own commands on a salvo buffer, submitted to the shared
 *     queue under the shared lock, are seen by salvo;
 *   - what the program enabled is what salvo uses: without the extensions
 *     and the timeline feature, descriptor pools and no gates;
 *   - two salvo devices on one queue from two threads, serialised by the
 *     program's lock (the layer's thread checks watch the queue);
 *   - bad handles and versions are refused with a reason, and nothing of
 *     the program's is destroyed by salvo: not at salvo_device_destroy, not
 *     after an injected failure. At the program's vkDestroyDevice the layer
 *     reports any object salvo left behind: its messenger must stay silent. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <volk.h>

#include <cmocka.h>

#include "add.spv.h"
#include "salvo/salvo.h"
#include "salvo/salvo_vulkan.h"
#include "support/lava.h"
#include "support/own_vulkan.h"

enum {
    N = 4096,
    LOCAL = 64,
    LAUNCHES = 200
};

/* ------------------------------------------------------------------ */

static _Atomic unsigned salvo_messages; /* validation messages salvo's messenger saw */

static void log_cb(void *user, salvo_log_level level, const char *file, int line,
                   const char *message)
{
    (void)user;
    (void)line;
    if (file && strcmp(file, "validation") == 0) {
        atomic_fetch_add(&salvo_messages, 1);
        fprintf(stderr, "VALIDATION (salvo): %s\n", message);
    } else if (level >= SALVO_LOG_WARNING) {
        fprintf(stderr, "salvo: %s\n", message);
    }
}

/* The program's lock on its queue, counting what salvo takes. */
typedef struct queue_lock {
    pthread_mutex_t mutex;
    _Atomic unsigned locks, unlocks;
    _Atomic int held; /* never taken twice at once */
} queue_lock;

static void lock_take(void *user)
{
    queue_lock *q = user;
    pthread_mutex_lock(&q->mutex);
    atomic_fetch_add(&q->locks, 1);
    if (atomic_fetch_add(&q->held, 1) != 0)
        abort();
}

static void lock_give(void *user)
{
    queue_lock *q = user;
    atomic_fetch_sub(&q->held, 1);
    atomic_fetch_add(&q->unlocks, 1);
    pthread_mutex_unlock(&q->mutex);
}

static void open_own(own_vk *o, const own_vk_options *opt)
{
    int rc = own_vk_open(o, opt, volkLoadInstance);
    if (rc == OWN_VK_SKIP)
        skip();
    assert_int_equal(rc, 0);
}

static salvo_device *create_on(const salvo_vk_device_import *imp, const char *fault)
{
    salvo_device_desc desc = {.log = log_cb, .fault = fault};
    salvo_device *dev = NULL;
    salvo_status st = salvo_device_create_vk(imp, &desc, &dev);
    if (st != SALVO_OK)
        fail_msg("device_create_vk: %s: %s", salvo_status_string(st), salvo_last_error());
    return dev;
}

static salvo_status add(salvo_stream *s, salvo_kernel *k, salvo_buffer *b, uint32_t value)
{
    struct {
        uint32_t n, value;
    } push = {N, value};
    const salvo_binding bind = {.binding = 0, .buffer = b};
    const uint32_t groups[3] = {N / LOCAL, 1, 1};
    return salvo_launch(s, k, groups, &bind, 1, &push, sizeof push);
}

static void expect_all(salvo_buffer *b, uint32_t base, uint32_t step)
{
    static uint32_t got[N];
    assert_int_equal(salvo_buffer_read(b, 0, got, sizeof got), SALVO_OK);
    for (uint32_t i = 0; i < N; i++)
        if (got[i] != base + step * i)
            fail_msg("[%u] = %#x, want %#x", i, got[i], base + step * i);
}

/* The add kernel, a stream and a DEVICE buffer of N words holding
 * step * i, on one device. */
typedef struct job {
    salvo_kernel *k;
    salvo_stream *s;
    salvo_buffer *b;
} job;

static job job_open(salvo_device *dev, uint32_t step)
{
    static uint32_t init[N];
    for (uint32_t i = 0; i < N; i++)
        init[i] = step * i;
    job j = {.k = lava_add_kernel(dev)};
    assert_int_equal(salvo_stream_create(dev, NULL, &j.s), SALVO_OK);
    assert_int_equal(salvo_buffer_create(dev, sizeof init, SALVO_DOMAIN_DEVICE, &j.b), SALVO_OK);
    assert_int_equal(salvo_buffer_write(j.b, 0, init, sizeof init), SALVO_OK);
    return j;
}

static void job_close(job *j)
{
    salvo_buffer_destroy(j->b);
    salvo_stream_destroy(j->s);
    salvo_kernel_destroy(j->k);
}

/* launches dependent launches adding value, then the exact result. */
static void job_chain(job *j, uint32_t step, uint32_t launches, uint32_t value)
{
    for (uint32_t i = 0; i < launches; i++)
        assert_int_equal(add(j->s, j->k, j->b, value), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(j->s), SALVO_OK);
    expect_all(j->b, launches * value, step);
}

/* The program still owns a working device: it waits, makes and frees a
 * buffer of its own. */
static void own_device_works(const own_vk *o)
{
    assert_int_equal(vkDeviceWaitIdle(o->device), VK_SUCCESS);
    VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                             .size = 4096,
                             .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkBuffer b = VK_NULL_HANDLE;
    assert_int_equal(vkCreateBuffer(o->device, &bi, NULL, &b), VK_SUCCESS);
    vkDestroyBuffer(o->device, b, NULL);
}

/* Closes o and checks that neither messenger saw anything, the layer's
 * report of objects left on the device included. */
static void close_own(own_vk *o)
{
    own_vk_close(o);
    assert_int_equal(o->messages, 0);
    assert_int_equal(atomic_load(&salvo_messages), 0);
}

/* The program's own commands on buffer: fill it with word, submitted to the
 * shared queue under the lock, waited for with a fence of its own. */
static void program_fill(const own_vk *o, queue_lock *q, VkBuffer buffer, uint32_t word)
{
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .queueFamilyIndex = o->family};
    VkCommandPool pool;
    assert_int_equal(vkCreateCommandPool(o->device, &pci, NULL, &pool), VK_SUCCESS);
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    VkCommandBuffer cb;
    assert_int_equal(vkAllocateCommandBuffers(o->device, &ai, &cb), VK_SUCCESS);
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    assert_int_equal(vkBeginCommandBuffer(cb, &begin), VK_SUCCESS);
    vkCmdFillBuffer(cb, buffer, 0, VK_WHOLE_SIZE, word);
    assert_int_equal(vkEndCommandBuffer(cb), VK_SUCCESS);
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    assert_int_equal(vkCreateFence(o->device, &fci, NULL, &fence), VK_SUCCESS);
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &cb};
    lock_take(q);
    VkResult r = vkQueueSubmit(o->queue, 1, &si, fence);
    lock_give(q);
    assert_int_equal(r, VK_SUCCESS);
    assert_int_equal(vkWaitForFences(o->device, 1, &fence, VK_TRUE, UINT64_MAX), VK_SUCCESS);
    vkDestroyFence(o->device, fence, NULL);
    vkDestroyCommandPool(o->device, pool, NULL);
}

/* ------------------------------------------------------------------ */

static void test_runs_on_own_device(void **state)
{
    (void)state;
    own_vk o;
    const own_vk_options opt = {.validation = true, .push_descriptor = true, .host_import = true,
                                .timeline = true};
    open_own(&o, &opt);
    queue_lock q = {.mutex = PTHREAD_MUTEX_INITIALIZER};
    salvo_vk_device_import imp = own_vk_import(&o);
    imp.queue_lock = lock_take;
    imp.queue_unlock = lock_give;
    imp.queue_lock_user = &q;
    salvo_device *dev = create_on(&imp, NULL);

    /* What salvo reports is the program's device and what it enabled. */
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(dev, &info), SALVO_OK);
    assert_string_equal(info.name, o.name);
    bool push = false, host = false;
    for (uint32_t i = 0; i < o.extension_count; i++) {
        push |= strcmp(o.extensions[i], VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME) == 0;
        host |= strcmp(o.extensions[i], VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME) == 0;
    }
    assert_int_equal(info.push_descriptors_used, push);
    assert_int_equal(info.host_import, host);
    assert_int_equal(info.timeline_semaphores, o.timeline);
    salvo_vk_handles h;
    assert_int_equal(salvo_device_vk_handles(dev, &h), SALVO_OK);
    assert_true(h.instance == o.instance && h.physical_device == o.phys && h.device == o.device &&
                h.queue == o.queue);
    assert_int_equal(h.queue_family_index, o.family);
    assert_true(h.get_instance_proc_addr == vkGetInstanceProcAddr);

    /* salvo's own work: transfers, a dependent chain, a gate. */
    job j = job_open(dev, 1);
    job_chain(&j, 1, LAUNCHES, 1);
    salvo_kernel *k = j.k;
    salvo_stream *s = j.s;
    salvo_buffer *b = j.b;
    if (o.timeline) {
        salvo_gate *g = NULL;
        assert_int_equal(salvo_gate_create(dev, &g), SALVO_OK);
        assert_int_equal(salvo_stream_wait_gate(s, g, 1), SALVO_OK);
        assert_int_equal(add(s, k, b, 5), SALVO_OK);
        assert_int_equal(salvo_stream_flush(s), SALVO_OK);
        assert_int_equal(salvo_gate_raise(g, 1), SALVO_OK);
        assert_int_equal(salvo_stream_synchronize(s), SALVO_OK);
        expect_all(b, LAUNCHES + 5, 1);
        salvo_gate_destroy(g);
    }
    unsigned salvo_locks = atomic_load(&q.locks);
    assert_true(salvo_locks > 0);
    assert_int_equal(atomic_load(&q.unlocks), salvo_locks);

    /* The program's commands on salvo's buffer, then salvo's on theirs. */
    VkBuffer vb = VK_NULL_HANDLE;
    assert_int_equal(salvo_buffer_vk_handle(b, &vb), SALVO_OK);
    program_fill(&o, &q, vb, 0xAB000000u);
    expect_all(b, 0xAB000000u, 0);
    assert_int_equal(add(s, k, b, 7), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(s), SALVO_OK);
    expect_all(b, 0xAB000007u, 0);

    salvo_stats st;
    assert_int_equal(salvo_device_stats(dev, &st), SALVO_OK);
    assert_int_equal(st.validation_messages, 0);
    job_close(&j);
    salvo_device_destroy(dev);
    assert_int_equal(atomic_load(&q.locks), atomic_load(&q.unlocks));
    own_device_works(&o);
    close_own(&o);
}

/* Nothing enabled beyond Vulkan 1.1: salvo binds through descriptor pools,
 * has no gates and imports no host memory, and still computes. */
static void test_uses_only_what_is_enabled(void **state)
{
    (void)state;
    own_vk o;
    const own_vk_options opt = {.validation = true, .api_version = VK_API_VERSION_1_1};
    open_own(&o, &opt);
    salvo_vk_device_import imp = own_vk_import(&o);
    assert_int_equal(imp.device_extension_count, 0);
    salvo_device *dev = create_on(&imp, NULL);
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(dev, &info), SALVO_OK);
    assert_false(info.push_descriptors_used);
    assert_false(info.timeline_semaphores);
    assert_false(info.host_import);
    assert_int_equal(VK_API_VERSION_MINOR(info.api_version), 1);
    salvo_gate *g = NULL;
    assert_int_equal(salvo_gate_create(dev, &g), SALVO_ERROR_UNSUPPORTED);
    assert_null(g);
    static uint32_t page[4096] __attribute__((aligned(4096)));
    salvo_buffer *imported = NULL;
    assert_int_equal(salvo_buffer_import_host(dev, page, sizeof page, SALVO_DOMAIN_HOST, &imported),
                     SALVO_ERROR_UNSUPPORTED);

    job j = job_open(dev, 3);
    job_chain(&j, 3, LAUNCHES, 2);
    job_close(&j);
    salvo_device_destroy(dev);
    own_device_works(&o);
    close_own(&o);
}

/* Two salvo devices on the program's one queue, driven from two threads:
 * only the lock keeps their submits apart. */
typedef struct worker {
    salvo_device *dev;
    uint32_t value;
    salvo_status status;
    char message[512];
    uint32_t bad; /* elements with a wrong result */
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    salvo_kernel *k = NULL;
    salvo_stream *s = NULL;
    salvo_buffer *b = NULL;
    static _Thread_local uint32_t data[N];
    const salvo_spec_constant sc = {0, LOCAL};
    const salvo_kernel_desc kd = {.spirv = add_spv, .spirv_size = sizeof add_spv, .name = "add",
                                  .spec_constants = &sc, .spec_constant_count = 1};
    memset(data, 0, sizeof data);
    salvo_status st = salvo_kernel_create(w->dev, &kd, &k);
    if (st == SALVO_OK)
        st = salvo_stream_create(w->dev, NULL, &s);
    if (st == SALVO_OK)
        st = salvo_buffer_create(w->dev, sizeof data, SALVO_DOMAIN_DEVICE, &b);
    if (st == SALVO_OK)
        st = salvo_buffer_write(b, 0, data, sizeof data);
    for (uint32_t i = 0; i < LAUNCHES && st == SALVO_OK; i++) {
        st = add(s, k, b, w->value);
        if (st == SALVO_OK && i % 50 == 49)
            st = salvo_stream_synchronize(s);
    }
    if (st == SALVO_OK)
        st = salvo_stream_synchronize(s);
    if (st == SALVO_OK)
        st = salvo_buffer_read(b, 0, data, sizeof data);
    if (st == SALVO_OK)
        for (uint32_t i = 0; i < N; i++)
            w->bad += data[i] != LAUNCHES * w->value;
    if (st != SALVO_OK)
        snprintf(w->message, sizeof w->message, "%s", salvo_last_error());
    w->status = st;
    salvo_buffer_destroy(b);
    salvo_stream_destroy(s);
    salvo_kernel_destroy(k);
    return NULL;
}

static void test_two_devices_share_the_queue(void **state)
{
    (void)state;
    own_vk o;
    const own_vk_options opt = {.validation = true, .push_descriptor = true, .timeline = true};
    open_own(&o, &opt);
    queue_lock q = {.mutex = PTHREAD_MUTEX_INITIALIZER};
    salvo_vk_device_import imp = own_vk_import(&o);
    imp.queue_lock = lock_take;
    imp.queue_unlock = lock_give;
    imp.queue_lock_user = &q;
    worker w[2] = {{.dev = create_on(&imp, NULL), .value = 3},
                   {.dev = create_on(&imp, NULL), .value = 11}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    for (int i = 0; i < 2; i++) {
        if (w[i].status != SALVO_OK)
            fail_msg("worker %d: %s: %s", i, salvo_status_string(w[i].status), w[i].message);
        assert_int_equal(w[i].bad, 0);
        salvo_device_destroy(w[i].dev);
    }
    assert_true(atomic_load(&q.locks) >= 2 * (LAUNCHES / 50));
    assert_int_equal(atomic_load(&q.locks), atomic_load(&q.unlocks));
    own_device_works(&o);
    close_own(&o);
}

/* Each refusal says why, leaves *out NULL and the program's device whole. */
static void test_refuses_bad_handles(void **state)
{
    (void)state;
    own_vk o;
    const own_vk_options opt = {.validation = true};
    open_own(&o, &opt);
    const salvo_vk_device_import good = own_vk_import(&o);
    salvo_device *dev = (salvo_device *)&o; /* must be cleared */
    assert_int_equal(salvo_device_create_vk(NULL, NULL, &dev), SALVO_ERROR_INVALID_ARGUMENT);
    assert_null(dev);
    assert_int_equal(salvo_device_create_vk(&good, NULL, NULL), SALVO_ERROR_INVALID_ARGUMENT);

    struct {
        const char *what; /* in the message */
        salvo_status want;
        salvo_vk_device_import imp;
    } cases[9];
    for (int i = 0; i < 9; i++)
        cases[i].imp = good;
    int n = 0;
    cases[n].what = "vk->instance";
    cases[n].want = SALVO_ERROR_INVALID_ARGUMENT;
    cases[n++].imp.instance = VK_NULL_HANDLE;
    cases[n].what = "vk->physical_device";
    cases[n].want = SALVO_ERROR_INVALID_ARGUMENT;
    cases[n++].imp.physical_device = VK_NULL_HANDLE;
    cases[n].what = "vk->device";
    cases[n].want = SALVO_ERROR_INVALID_ARGUMENT;
    cases[n++].imp.device = VK_NULL_HANDLE;
    cases[n].what = "vk->queue";
    cases[n].want = SALVO_ERROR_INVALID_ARGUMENT;
    cases[n++].imp.queue = VK_NULL_HANDLE;
    cases[n].what = "queue_lock and queue_unlock";
    cases[n].want = SALVO_ERROR_INVALID_ARGUMENT;
    cases[n++].imp.queue_lock = lock_take;
    cases[n].what = "device_extensions is NULL";
    cases[n].want = SALVO_ERROR_INVALID_ARGUMENT;
    cases[n].imp.device_extensions = NULL;
    cases[n++].imp.device_extension_count = 1;
    cases[n].what = "Vulkan 1.0";
    cases[n].want = SALVO_ERROR_UNSUPPORTED;
    cases[n++].imp.instance_api_version = VK_API_VERSION_1_0;
    cases[n].what = "Vulkan 1.0";
    cases[n].want = SALVO_ERROR_UNSUPPORTED;
    cases[n++].imp.instance_api_version = 0;
    cases[n].what = "queue family 77";
    cases[n].want = SALVO_ERROR_INVALID_ARGUMENT;
    cases[n++].imp.queue_family_index = 77;
    assert_int_equal(n, 9);
    for (int i = 0; i < n; i++) {
        dev = (salvo_device *)&o;
        const salvo_device_desc desc = {.log = log_cb};
        salvo_status st = salvo_device_create_vk(&cases[i].imp, &desc, &dev);
        if (st != cases[i].want)
            fail_msg("case %d (%s): %s, want %s", i, cases[i].what, salvo_status_string(st),
                     salvo_status_string(cases[i].want));
        if (!strstr(salvo_last_error(), cases[i].what))
            fail_msg("case %d: '%s' does not say '%s'", i, salvo_last_error(), cases[i].what);
        assert_null(dev);
    }
    /* The refusals left the program's objects alone, and salvo still runs
     * on them. */
    own_device_works(&o);
    dev = create_on(&good, NULL);
    salvo_device_destroy(dev);
    close_own(&o);
}

/* Failures salvo meets on the program's device (injected here) are
 * reported as on its own, and destroy nothing of the program's. */
static void test_failures_leave_the_program_its_device(void **state)
{
    (void)state;
    own_vk o;
    const own_vk_options opt = {.validation = true, .push_descriptor = true, .timeline = true};
    open_own(&o, &opt);
    const salvo_vk_device_import imp = own_vk_import(&o);

    salvo_device *dev = NULL;
    salvo_device_desc desc = {.log = log_cb, .fault = "device_open:1:oom_host"};
    assert_int_equal(salvo_device_create_vk(&imp, &desc, &dev), SALVO_ERROR_OUT_OF_HOST_MEMORY);
    assert_null(dev);
    own_device_works(&o);

    dev = create_on(&imp, "submit:1:device_lost");
    job j = {.k = lava_add_kernel(dev)};
    assert_int_equal(salvo_stream_create(dev, NULL, &j.s), SALVO_OK);
    assert_int_equal(salvo_buffer_create(dev, N * sizeof(uint32_t), SALVO_DOMAIN_DEVICE, &j.b),
                     SALVO_OK);
    assert_int_equal(add(j.s, j.k, j.b, 1), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(j.s), SALVO_ERROR_DEVICE_LOST);
    assert_true(salvo_device_is_lost(dev));
    assert_int_equal(add(j.s, j.k, j.b, 1), SALVO_ERROR_DEVICE_LOST);
    job_close(&j);
    salvo_device_destroy(dev);

    /* The program's device was never lost: it works, and so does a new
     * salvo device on it. */
    own_device_works(&o);
    dev = create_on(&imp, NULL);
    j = job_open(dev, 0);
    job_chain(&j, 0, 1, 9);
    job_close(&j);
    salvo_device_destroy(dev);
    close_own(&o);
}

int main(void)
{
    if (volkInitialize() != VK_SUCCESS) {
        fprintf(stderr, "no Vulkan loader: skipped\n");
        return LAVA_SKIP;
    }
    lava_require_device();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runs_on_own_device),
        cmocka_unit_test(test_uses_only_what_is_enabled),
        cmocka_unit_test(test_two_devices_share_the_queue),
        cmocka_unit_test(test_refuses_bad_handles),
        cmocka_unit_test(test_failures_leave_the_program_its_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
