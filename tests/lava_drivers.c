/* The Vulkan driver stays loaded after the last device is destroyed, so
 * that a process can create and destroy devices any number of times: the
 * loader unloads a driver with the last instance that uses it, and the
 * NVIDIA driver failed to load again after a few such rounds ("no Vulkan
 * driver" at the tenth device of a process). On lavapipe the reloading
 * itself works, so the test checks what the fix guarantees: the driver's
 * library is still mapped once every device is gone. */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "salvo/salvo.h"
#include "support/lava.h"

enum { MAX_DRIVERS = 8 };

typedef struct drivers {
    int count;
    char names[MAX_DRIVERS][256];
} drivers;

/* Loaded libraries named libvulkan_*.so (Mesa's drivers) or *nvidia*. */
static int note_driver(struct dl_phdr_info *info, size_t size, void *user)
{
    (void)size;
    drivers *d = user;
    const char *base = strrchr(info->dlpi_name, '/');
    base = base ? base + 1 : info->dlpi_name;
    bool driver = strncmp(base, "libvulkan_", 10) == 0 || strstr(base, "nvidia") != NULL;
    if (driver && d->count < MAX_DRIVERS) {
        snprintf(d->names[d->count], sizeof d->names[0], "%s", base);
        d->count++;
    }
    return 0;
}

static drivers loaded(void)
{
    drivers d = {0};
    dl_iterate_phdr(note_driver, &d);
    return d;
}

static bool contains(const drivers *d, const char *name)
{
    for (int i = 0; i < d->count; i++)
        if (strcmp(d->names[i], name) == 0)
            return true;
    return false;
}

static void drivers_stay_loaded(void **state)
{
    (void)state;
    salvo_device *dev = lava_open(0, 0);
    drivers open = loaded();
    lava_close(dev);
    if (open.count == 0)
        skip(); /* a driver this test cannot recognise by name */
    drivers after = loaded();
    for (int i = 0; i < open.count; i++)
        if (!contains(&after, open.names[i]))
            fail_msg("%s was unloaded with the last device", open.names[i]);
    /* Many rounds in one process, each using its device. */
    for (int round = 0; round < 12; round++) {
        dev = lava_open(0, 0);
        salvo_buffer *b = NULL;
        assert_int_equal(salvo_buffer_create(dev, 256, SALVO_DOMAIN_HOST, &b), SALVO_OK);
        uint32_t v = 0;
        assert_int_equal(salvo_buffer_write(b, 0, &round, sizeof round), SALVO_OK);
        assert_int_equal(salvo_buffer_read(b, 0, &v, sizeof v), SALVO_OK);
        assert_int_equal(v, (uint32_t)round);
        salvo_buffer_destroy(b);
        lava_close(dev);
    }
}

int main(void)
{
    lava_require_device();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(drivers_stay_loaded),
    };
    return lava_run_tests(tests);
}
