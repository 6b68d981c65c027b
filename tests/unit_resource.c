/* The resource header (src/core/resource.h) on the fake accelerator:
 * every object the engine keeps alive begins with one of its own kind;
 * holds, last use and the release are the header's; a cast to the wrong
 * kind aborts checked builds naming both kinds; an image and a sampler a
 * graph holds are released by their own releases once the graph goes. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "add.spv.h"
#include "api/internal.h"
#include "img_array.spv.h"
#include "img_blur.spv.h"
#include "img_sample.spv.h"
#include "support/fake_accel.h"

typedef struct env {
    fake_accel *f;
    salvo_device *dev;
} env;

static void open_env(env *e)
{
    memset(e, 0, sizeof *e);
    e->f = fake_create();
    assert_non_null(e->f);
    assert_int_equal(device_create_with_accel(NULL, fake_accel_get(e->f), &e->dev), SALVO_OK);
}

static void close_env(env *e)
{
    salvo_device_destroy(e->dev);
    assert_int_equal(fake_illegal_total(e->f), 0);
    assert_int_equal(fake_live_total(e->f), 0);
    fake_free(e->f);
}

static salvo_stats stats(salvo_device *dev)
{
    salvo_stats s;
    assert_int_equal(salvo_device_stats(dev, &s), SALVO_OK);
    return s;
}

static salvo_image *make_image(salvo_device *dev)
{
    salvo_image_desc d = {.type = SALVO_IMAGE_2D, .format = SALVO_FORMAT_R32_FLOAT, .width = 8,
                          .height = 8};
    salvo_image *img = NULL;
    assert_int_equal(salvo_image_create(dev, &d, &img), SALVO_OK);
    return img;
}

/* Each object begins with a header of its own kind, one hold (the user's
 * handle), no use yet, and its cast gives the object back. */
static void test_every_object_has_its_kind(void **state)
{
    (void)state;
    env e;
    open_env(&e);
    salvo_buffer *buf = NULL;
    assert_int_equal(salvo_buffer_create(e.dev, 256, SALVO_DOMAIN_DEVICE, &buf), SALVO_OK);
    salvo_image *img = make_image(e.dev);
    salvo_sampler *smp = NULL;
    assert_int_equal(salvo_sampler_create(e.dev, NULL, &smp), SALVO_OK);
    salvo_kernel_desc kd = {.spirv = add_spv, .spirv_size = sizeof add_spv, .name = "add"};
    salvo_kernel *k = NULL;
    assert_int_equal(salvo_kernel_create(e.dev, &kd, &k), SALVO_OK);
    salvo_event *ev = NULL;
    assert_int_equal(salvo_event_create(e.dev, &ev), SALVO_OK);
    salvo_gate *gate = NULL;
    assert_int_equal(salvo_gate_create(e.dev, &gate), SALVO_OK);

    struct {
        resource *r;
        resource_kind kind;
        const char *name;
    } all[] = {
        {&buf->res, RESOURCE_BUFFER, "buffer"},   {&img->res, RESOURCE_IMAGE, "image"},
        {&smp->res, RESOURCE_SAMPLER, "sampler"}, {&k->res, RESOURCE_KERNEL, "kernel"},
        {&ev->res, RESOURCE_EVENT, "event"},      {&gate->res, RESOURCE_GATE, "gate"},
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        assert_int_equal(all[i].r->kind, all[i].kind);
        assert_string_equal(resource_kind_name(all[i].r->kind), all[i].name);
        assert_int_equal(atomic_load(&all[i].r->holds), 1);
        assert_int_equal(resource_last_use(all[i].r), 0);
        assert_ptr_equal(resource_of_release(&all[i].r->release), all[i].r);
        assert_non_null(all[i].r->live.next); /* in the device's live ring */
    }
    assert_ptr_equal(resource_as_buffer(&buf->res), buf);
    assert_ptr_equal(resource_as_image(&img->res), img);
    assert_ptr_equal(resource_as_sampler(&smp->res), smp);
    assert_ptr_equal(resource_as_kernel(&k->res), k);
    assert_ptr_equal(kernel_of_engine(&k->ek), k);
    assert_ptr_equal(resource_as_event(&ev->res), ev);
    assert_ptr_equal(resource_as_gate(&gate->res), gate);
    assert_string_equal(resource_kind_name(RESOURCE_NONE), "not a resource");

    /* Last use only goes up. */
    resource_note_use(&buf->res, 5);
    resource_note_use(&buf->res, 3);
    assert_int_equal(resource_last_use(&buf->res), 5);

    salvo_gate_destroy(gate);
    salvo_event_destroy(ev);
    salvo_kernel_destroy(k);
    salvo_sampler_destroy(smp);
    salvo_image_destroy(img);
    salvo_buffer_destroy(buf);
    salvo_stats s = stats(e.dev);
    assert_int_equal(s.live_buffers + s.live_images + s.live_samplers + s.live_kernels +
                         s.live_events + s.live_gates,
                     0);
    close_env(&e);
}

/* A buffer's release reached through a header that says image: the cast
 * in the release refuses it, naming both kinds, before anything is freed
 * as the wrong thing. In a child: the abort is the outcome. */
static void test_wrong_kind_aborts(void **state)
{
    (void)state;
#ifndef SALVO_CHECKS
    skip();
#else
    int err[2];
    assert_int_equal(pipe(err), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(err[0]);
        dup2(err[1], STDERR_FILENO);
        fake_accel *f = fake_create();
        salvo_device *dev = NULL;
        salvo_buffer *buf = NULL;
        if (!f || device_create_with_accel(NULL, fake_accel_get(f), &dev) != SALVO_OK ||
            salvo_buffer_create(dev, 256, SALVO_DOMAIN_DEVICE, &buf) != SALVO_OK)
            _exit(2);
        buf->res.kind = RESOURCE_IMAGE;
        salvo_buffer_destroy(buf); /* its release casts the header back */
        _exit(0);
    }
    close(err[1]);
    char text[4096] = {0};
    size_t at = 0;
    ssize_t n;
    while (at < sizeof text - 1 && (n = read(err[0], text + at, sizeof text - 1 - at)) > 0)
        at += (size_t)n;
    close(err[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
        fail_msg("the child was not aborted (status 0x%x); it said: %s", status, text);
    assert_non_null(strstr(text, "image resource cast to buffer"));
#endif
}

/* An image and a sampler a graph binds are held by it, as what they are:
 * destroyed by the program, they live on until the graph goes, then each
 * is released by its own release (the image and sampler counts fall, the
 * buffer's stays). */
static void test_graph_holds_images_as_images(void **state)
{
    (void)state;
    env e;
    open_env(&e);
    salvo_kernel_desc kd = {.spirv = img_sample_spv, .spirv_size = sizeof img_sample_spv,
                            .name = "img_sample"};
    salvo_kernel *k = NULL;
    assert_int_equal(salvo_kernel_create(e.dev, &kd, &k), SALVO_OK);
    salvo_buffer *out = NULL, *src = NULL;
    assert_int_equal(salvo_buffer_create(e.dev, 4096, SALVO_DOMAIN_DEVICE, &out), SALVO_OK);
    assert_int_equal(salvo_buffer_create(e.dev, 4096, SALVO_DOMAIN_DEVICE, &src), SALVO_OK);
    salvo_image *img = make_image(e.dev);
    salvo_sampler *smp = NULL;
    assert_int_equal(salvo_sampler_create(e.dev, NULL, &smp), SALVO_OK);
    salvo_stream *st = NULL;
    assert_int_equal(salvo_stream_create(e.dev, NULL, &st), SALVO_OK);

    assert_int_equal(salvo_stream_begin_capture(st), SALVO_OK);
    assert_int_equal(salvo_copy_buffer_to_image(st, src, 0, img, NULL), SALVO_OK);
    const salvo_binding b[2] = {{.binding = 0, .image = img, .sampler = smp},
                                {.binding = 1, .buffer = out}};
    const uint32_t push[2] = {8, 8};
    const uint32_t groups[3] = {1, 1, 1};
    assert_int_equal(salvo_launch(st, k, groups, b, 2, push, sizeof push), SALVO_OK);
    salvo_graph *gr = NULL;
    assert_int_equal(salvo_stream_end_capture(st, &gr), SALVO_OK);

    /* Held once each, by kind: the image written by the copy. */
    bool saw_image = false, saw_sampler = false;
    for (size_t i = 0; i < gr->held_count; i++) {
        resource *r = gr->held[i].res;
        if (r == &img->res) {
            assert_int_equal(r->kind, RESOURCE_IMAGE);
            assert_true(gr->held[i].written);
            saw_image = true;
        } else if (r == &smp->res) {
            assert_int_equal(r->kind, RESOURCE_SAMPLER);
            assert_false(gr->held[i].written);
            saw_sampler = true;
        } else {
            assert_int_equal(r->kind, RESOURCE_BUFFER);
        }
    }
    assert_true(saw_image && saw_sampler);
    assert_int_equal(atomic_load(&img->res.holds), 2);
    assert_int_equal(atomic_load(&smp->res.holds), 2);

    assert_int_equal(salvo_graph_launch(gr, st), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(st), SALVO_OK);
    assert_true(resource_last_use(&img->res) > 0); /* the replay used it */

    salvo_image_destroy(img);
    salvo_sampler_destroy(smp);
    salvo_buffer_destroy(src);
    salvo_stats s = stats(e.dev);
    assert_int_equal(s.live_images, 1);
    assert_int_equal(s.live_image_bytes, 8 * 8 * 4);
    assert_int_equal(s.live_samplers, 1);
    assert_int_equal(s.live_buffers, 2);

    salvo_graph_destroy(gr);
    s = stats(e.dev);
    assert_int_equal(s.live_images, 0);
    assert_int_equal(s.live_image_bytes, 0);
    assert_int_equal(s.live_samplers, 0);
    assert_int_equal(s.live_buffers, 1); /* out, still the program's */
    assert_int_equal(s.releases_pending, 0);

    salvo_stream_destroy(st);
    salvo_buffer_destroy(out);
    salvo_kernel_destroy(k);
    close_env(&e);
}

/* Every descriptor pool has room for one launch of any kind, counted by
 * kind as a driver counts it: a batch of one launch binding twelve images,
 * and a graph whose one node binds two (pools once kept a quarter of
 * their room for images: neither could ever be recorded). */
static void test_pools_fit_image_launches(void **state)
{
    (void)state;
    env e;
    open_env(&e);
    salvo_kernel *arr = NULL, *blur = NULL;
    salvo_kernel_desc kd = {.spirv = img_array_spv, .spirv_size = sizeof img_array_spv,
                            .name = "img_array"};
    assert_int_equal(salvo_kernel_create(e.dev, &kd, &arr), SALVO_OK);
    kd = (salvo_kernel_desc){.spirv = img_blur_spv, .spirv_size = sizeof img_blur_spv,
                             .name = "img_blur"};
    assert_int_equal(salvo_kernel_create(e.dev, &kd, &blur), SALVO_OK);
    salvo_image *img[12];
    salvo_binding b[12];
    for (uint32_t i = 0; i < 12; i++) {
        img[i] = make_image(e.dev);
        b[i] = (salvo_binding){.binding = i < 2 ? i : 0, .image = img[i]};
    }
    const uint32_t groups[3] = {1, 1, 1};
    salvo_stream *st = NULL;
    salvo_stream_desc sd = {.batch_size = 1};
    assert_int_equal(salvo_stream_create(e.dev, &sd, &st), SALVO_OK);
    assert_int_equal(salvo_launch(st, blur, groups, b, 2, NULL, 0), SALVO_OK);
    assert_int_equal(salvo_stream_begin_capture(st), SALVO_OK);
    assert_int_equal(salvo_launch(st, blur, groups, b, 2, NULL, 0), SALVO_OK);
    salvo_graph *gr = NULL;
    assert_int_equal(salvo_stream_end_capture(st, &gr), SALVO_OK);
    assert_int_equal(salvo_graph_launch(gr, st), SALVO_OK);
    for (uint32_t i = 0; i < 12; i++)
        b[i] = (salvo_binding){.binding = 0, .element = i, .image = img[i]};
    for (int i = 0; i < 3; i++)
        assert_int_equal(salvo_launch(st, arr, groups, b, 12, NULL, 0), SALVO_OK);
    assert_int_equal(salvo_stream_synchronize(st), SALVO_OK);
    salvo_stats s;
    assert_int_equal(salvo_device_stats(e.dev, &s), SALVO_OK);
    assert_int_equal(s.launches_total, 5);
    salvo_graph_destroy(gr);
    salvo_stream_destroy(st);
    for (int i = 0; i < 12; i++)
        salvo_image_destroy(img[i]);
    salvo_kernel_destroy(arr);
    salvo_kernel_destroy(blur);
    close_env(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_object_has_its_kind),
        cmocka_unit_test(test_wrong_kind_aborts),
        cmocka_unit_test(test_graph_holds_images_as_images),
        cmocka_unit_test(test_pools_fit_image_launches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
