#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "base/cpus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sched.h>
#endif

enum {
    CPUS_PATH_MAX = 4096
};

/* The first line of root/path into line (size bytes, newline dropped):
 * false where the file cannot be read or is empty. */
static bool read_line(const char *dir, const char *name, char *line, size_t size)
{
    char path[CPUS_PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof path)
        return false;
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(line, (int)size, f) != NULL;
    fclose(f);
    if (ok)
        line[strcspn(line, "\n")] = '\0';
    return ok && line[0];
}

/* A whole decimal number filling text from its start to a space or the
 * end, stored in *out; *end past it. */
static bool parse_count(const char *text, const char **end, uint64_t *out)
{
    uint64_t x = 0;
    const char *p = text;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (x > (UINT64_MAX - 9) / 10)
            return false;
        x = x * 10 + (uint64_t)(*p - '0');
    }
    if (p == text || (*p && *p != ' '))
        return false;
    *end = p;
    *out = x;
    return true;
}

/* quota microseconds of CPU time every period as whole CPUs, rounded up. */
static uint32_t quota_cpus(uint64_t quota, uint64_t period)
{
    uint64_t n = quota / period + (quota % period != 0);
    return n == 0 ? 1 : n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* The limit set in one cgroup directory, v2 (cpu.max: "QUOTA PERIOD" or
 * "max PERIOD") or v1 (cpu.cfs_quota_us, -1 for none, and
 * cpu.cfs_period_us): false where it sets none. */
static bool dir_limit(const char *dir, bool v2, uint32_t *out)
{
    char line[128];
    const char *p;
    uint64_t quota = 0, period = 0;
    if (v2) {
        if (!read_line(dir, "cpu.max", line, sizeof line) || !parse_count(line, &p, &quota) ||
            *p != ' ' || !parse_count(p + 1, &p, &period) || *p)
            return false; /* "max ...", or text of another form */
    } else {
        if (!read_line(dir, "cpu.cfs_quota_us", line, sizeof line) ||
            !parse_count(line, &p, &quota) || *p) /* "-1": no limit */
            return false;
        char pl[64];
        if (!read_line(dir, "cpu.cfs_period_us", pl, sizeof pl) ||
            !parse_count(pl, &p, &period) || *p)
            return false;
    }
    if (quota == 0 || period == 0)
        return false;
    *out = quota_cpus(quota, period);
    return true;
}

/* The smallest limit over mount/path and its ancestors up to mount. */
static bool hierarchy_limit(const char *mount, const char *path, bool v2, uint32_t *out)
{
    char dir[CPUS_PATH_MAX];
    int n = snprintf(dir, sizeof dir, "%s%s", mount, path[0] == '/' ? path : "/");
    if (n < 0 || (size_t)n >= sizeof dir)
        return false;
    size_t base = strlen(mount);
    bool found = false;
    for (;;) {
        size_t len = strlen(dir);
        while (len > base && dir[len - 1] == '/')
            dir[--len] = '\0';
        uint32_t lim = 0;
        if (dir_limit(dir, v2, &lim) && (!found || lim < *out)) {
            *out = lim;
            found = true;
        }
        if (len <= base)
            return found;
        char *slash = strrchr(dir + base, '/');
        if (!slash)
            return found;
        *slash = '\0';
    }
}

/* Whether controllers (a comma-separated list) names cpu. */
static bool names_cpu(const char *controllers)
{
    for (const char *p = controllers; *p;) {
        size_t len = strcspn(p, ",");
        if (len == 3 && strncmp(p, "cpu", 3) == 0)
            return true;
        p += len + (p[len] == ',');
    }
    return false;
}

bool cpus_quota(const char *root, uint32_t *out)
{
    char path[CPUS_PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/proc/self/cgroup", root);
    if (n < 0 || (size_t)n >= sizeof path)
        return false;
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool found = false;
    char line[CPUS_PATH_MAX];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        /* "ID:CONTROLLERS:PATH"; v2's line is "0::PATH". */
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c1 = *c2 = '\0';
        const char *controllers = c1 + 1, *cg = c2 + 1;
        bool v2 = strcmp(line, "0") == 0 && !*controllers;
        if (!v2 && !names_cpu(controllers))
            continue;
        static const char *const v1_mounts[] = {"cpu", "cpu,cpuacct", "cpuacct,cpu"};
        size_t mounts = v2 ? 1 : sizeof v1_mounts / sizeof v1_mounts[0];
        for (size_t i = 0; i < mounts; i++) {
            char mount[CPUS_PATH_MAX];
            n = v2 ? snprintf(mount, sizeof mount, "%s/sys/fs/cgroup", root)
                   : snprintf(mount, sizeof mount, "%s/sys/fs/cgroup/%s", root, v1_mounts[i]);
            uint32_t lim = 0;
            if (n > 0 && (size_t)n < sizeof mount && hierarchy_limit(mount, cg, v2, &lim) &&
                (!found || lim < *out)) {
                *out = lim;
                found = true;
            }
        }
    }
    fclose(f);
    return found;
}

uint32_t cpus_usable(const char *root)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t n = online > 0 && online < UINT32_MAX ? (uint32_t)online : 1;
#ifdef __linux__
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        n = (uint32_t)CPU_COUNT(&set);
#endif
    uint32_t quota;
    if (cpus_quota(root, &quota) && quota < n)
        n = quota;
    return n;
}
