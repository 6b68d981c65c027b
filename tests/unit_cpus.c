/*
 * How many CPUs the process may keep busy (src/base/cpus.c), which caps
 * the threads that poll a whole wait for the device.
 *
 *  - The cgroup CPU limit, read from trees laid out as /proc and
 *    /sys/fs/cgroup are: cgroup v2's cpu.max in the process's cgroup and
 *    its ancestors (the smallest wins, rounded up to whole CPUs), at a
 *    namespace's root, v1's cfs quota and period, a hybrid of the two,
 *    and text of every other form read as no limit.
 *  - cpus_usable: the limit caps the count; without one it is the
 *    affinity mask's, which a device created on a thread pinned to one
 *    CPU lets one thread poll (unit_queues has the polling itself).
 */
#define _GNU_SOURCE /* mkdtemp, sched_setaffinity, CPU_* */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "api/internal.h"
#include "base/cpus.h"
#include "support/fake_accel.h"

typedef struct tree {
    char root[64];
} tree;

/* root/rel with every directory above it made, holding text. */
static void put(const tree *t, const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", t->root, rel);
    for (char *p = path + strlen(t->root) + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            assert_true(mkdir(path, 0700) == 0 || access(path, F_OK) == 0);
            *p = '/';
        }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void make_tree(tree *t)
{
    snprintf(t->root, sizeof t->root, "/tmp/salvo-cpus-XXXXXX");
    assert_non_null(mkdtemp(t->root));
}

static void remove_tree(const tree *t)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", t->root);
    assert_int_equal(system(cmd), 0);
}

/* The limit read from a tree of one cgroup file and one limit file
 * (limit_rel, limit), or 0 where none is read. */
static uint32_t quota_of(const char *cgroup, const char *limit_rel, const char *limit)
{
    tree t;
    make_tree(&t);
    put(&t, "proc/self/cgroup", cgroup);
    if (limit_rel)
        put(&t, limit_rel, limit);
    uint32_t n = 0;
    bool found = cpus_quota(t.root, &n);
    remove_tree(&t);
    assert_true(found == (n != 0));
    return n;
}

static void test_v2_smallest_over_ancestors(void **state)
{
    (void)state;
    tree t;
    make_tree(&t);
    put(&t, "proc/self/cgroup", "0::/pod/ctr\n");
    put(&t, "sys/fs/cgroup/pod/ctr/cpu.max", "max 100000\n");
    put(&t, "sys/fs/cgroup/pod/cpu.max", "250000 100000\n"); /* 2.5 CPUs: 3 */
    put(&t, "sys/fs/cgroup/cpu.max", "800000 100000\n");
    uint32_t n = 0;
    assert_true(cpus_quota(t.root, &n));
    assert_int_equal(n, 3);
    /* The innermost one tighter: it wins. */
    put(&t, "sys/fs/cgroup/pod/ctr/cpu.max", "150000 100000\n");
    assert_true(cpus_quota(t.root, &n));
    assert_int_equal(n, 2);
    /* cpus_usable takes the limit where it is under the CPUs it has. */
    put(&t, "sys/fs/cgroup/pod/ctr/cpu.max", "50000 100000\n");
    assert_int_equal(cpus_usable(t.root), 1);
    remove_tree(&t);
}

static void test_v2_at_the_namespace_root(void **state)
{
    (void)state;
    /* A container with its own cgroup namespace sees its cgroup as "/". */
    assert_int_equal(quota_of("0::/\n", "sys/fs/cgroup/cpu.max", "400000 100000\n"), 4);
    /* Less than one CPU's worth is still one CPU. */
    assert_int_equal(quota_of("0::/\n", "sys/fs/cgroup/cpu.max", "1000 100000\n"), 1);
    /* A path the namespace does not show: its ancestors up to the mount. */
    assert_int_equal(quota_of("0::/gone/away\n", "sys/fs/cgroup/cpu.max", "200000 50000\n"),
                     4);
}

static void test_v1_cfs_quota(void **state)
{
    (void)state;
    tree t;
    make_tree(&t);
    put(&t, "proc/self/cgroup",
        "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n");
    put(&t, "sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "200000\n");
    put(&t, "sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
    uint32_t n = 0;
    assert_true(cpus_quota(t.root, &n));
    assert_int_equal(n, 2);
    /* -1: no limit. */
    put(&t, "sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "-1\n");
    n = 0;
    assert_false(cpus_quota(t.root, &n));
    /* A controller list that only starts with "cpu" is not cpu's: a
     * valid quota where a cpu line for the same path would be read (every
     * v1 mount the library knows), and none read for it. */
    static const char *const mounts[] = {"cpu", "cpu,cpuacct", "cpuacct,cpu"};
    for (size_t i = 0; i < sizeof mounts / sizeof mounts[0]; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, "sys/fs/cgroup/%s/docker/abc/cpu.cfs_quota_us", mounts[i]);
        put(&t, rel, "100000\n");
        snprintf(rel, sizeof rel, "sys/fs/cgroup/%s/docker/abc/cpu.cfs_period_us", mounts[i]);
        put(&t, rel, "100000\n");
    }
    put(&t, "proc/self/cgroup", "4:cpu,cpuacct:/docker/abc\n");
    assert_true(cpus_quota(t.root, &n)); /* where it looks: a limit there */
    assert_int_equal(n, 1);
    n = 0;
    put(&t, "proc/self/cgroup", "3:cpuset:/docker/abc\n");
    assert_false(cpus_quota(t.root, &n));
    put(&t, "proc/self/cgroup", "5:cpuacct:/docker/abc\n");
    assert_false(cpus_quota(t.root, &n));
    put(&t, "proc/self/cgroup", "6:cpuset,cpuacct:/docker/abc\n");
    assert_false(cpus_quota(t.root, &n));
    assert_int_equal(n, 0);
    remove_tree(&t);

    /* Hybrid: a v1 cpu hierarchy and the v2 one; the smaller limit,
     * whichever line comes first and whichever hierarchy sets it. */
    static const char *const orders[] = {"4:cpu:/job\n0::/job\n", "0::/job\n4:cpu:/job\n"};
    for (int order = 0; order < 2; order++) {
        for (int v1_smaller = 0; v1_smaller < 2; v1_smaller++) {
            make_tree(&t);
            put(&t, "proc/self/cgroup", orders[order]);
            const char *v1 = v1_smaller ? "300000\n" : "600000\n";
            const char *v2 = v1_smaller ? "600000 100000\n" : "300000 100000\n";
            put(&t, "sys/fs/cgroup/cpu/job/cpu.cfs_quota_us", v1);
            put(&t, "sys/fs/cgroup/cpu/job/cpu.cfs_period_us", "100000\n");
            put(&t, "sys/fs/cgroup/job/cpu.max", v2);
            n = 0;
            assert_true(cpus_quota(t.root, &n));
            if (n != 3)
                fail_msg("hybrid, %s line first, the smaller in %s: %u CPUs, not 3",
                         order ? "v2's" : "v1's", v1_smaller ? "v1" : "v2", n);
            remove_tree(&t);
        }
    }
}

static void test_no_limit_or_unreadable(void **state)
{
    (void)state;
    const char *cg = "0::/a\n", *file = "sys/fs/cgroup/a/cpu.max";
    assert_int_equal(quota_of(cg, file, "max 100000\n"), 0);
    assert_int_equal(quota_of(cg, file, "100000\n"), 0);          /* no period */
    assert_int_equal(quota_of(cg, file, "0 100000\n"), 0);        /* no time at all */
    assert_int_equal(quota_of(cg, file, "100000 0\n"), 0);        /* no period */
    assert_int_equal(quota_of(cg, file, "-5 100000\n"), 0);
    assert_int_equal(quota_of(cg, file, "12x 100000\n"), 0);
    assert_int_equal(quota_of(cg, file, "100000 100000 7\n"), 0);
    assert_int_equal(quota_of(cg, file, "99999999999999999999999 1\n"), 0); /* past 2^64 */
    assert_int_equal(quota_of(cg, file, ""), 0);
    assert_int_equal(quota_of(cg, NULL, NULL), 0);                /* no cpu.max */
    assert_int_equal(quota_of("garbage\n", file, "100000 100000\n"), 0);
    /* No /proc/self/cgroup at all. */
    tree t;
    make_tree(&t);
    uint32_t n = 7;
    assert_false(cpus_quota(t.root, &n));
    assert_int_equal(n, 7);
    /* Without a limit, the count is the affinity mask's: at least 1, at
     * most the CPUs online. */
    uint32_t usable = cpus_usable(t.root);
    assert_true(usable >= 1 && usable <= (uint32_t)sysconf(_SC_NPROCESSORS_ONLN));
    remove_tree(&t);
}

/* A device created on a thread pinned to one CPU lets one thread poll. */
static void test_device_pollers_follow_affinity(void **state)
{
    (void)state;
    cpu_set_t all, one;
    assert_int_equal(sched_getaffinity(0, sizeof all, &all), 0);
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &all)) {
            CPU_SET(c, &one);
            break;
        }
    uint32_t before = cpus_usable("");
    assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
    fake_accel *f = fake_create();
    assert_non_null(f);
    f->device_types[0] = SALVO_DEVICE_TYPE_DISCRETE;
    salvo_device *dev = NULL;
    salvo_status st = device_create_with_accel(&(salvo_device_desc){0}, fake_accel_get(f), &dev);
    assert_int_equal(sched_setaffinity(0, sizeof all, &all), 0);
    assert_int_equal(st, SALVO_OK);
    assert_int_equal(dev->q.pollers_max, 1);
    assert_true(dev->info.poll_whole_wait);
    salvo_device_destroy(dev);
    assert_true(fake_destroyed(f));
    fake_free(f);
    assert_int_equal(cpus_usable(""), before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v2_smallest_over_ancestors),
        cmocka_unit_test(test_v2_at_the_namespace_root),
        cmocka_unit_test(test_v1_cfs_quota),
        cmocka_unit_test(test_no_limit_or_unreadable),
        cmocka_unit_test(test_device_pollers_follow_affinity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
