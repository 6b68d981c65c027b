/*
 * How many CPUs this process can keep busy at once.
 *
 * The online count overstates it twice over: a process pinned to a few
 * CPUs (taskset, a scheduler's cpuset) runs on those alone, and a
 * container given a CPU bandwidth limit (docker --cpus, a Kubernetes CPU
 * limit) gets that many CPUs' worth of time however many it sees. A
 * thread that polls for the device takes one of them for the whole wait,
 * so the count of threads allowed to poll is the smaller of the two.
 */
#ifndef SALVO_BASE_CPUS_H
#define SALVO_BASE_CPUS_H

#include <stdbool.h>
#include <stdint.h>

/* The CPUs of the calling thread's affinity mask (the online count where
 * the mask cannot be read), capped by the cgroup's CPU bandwidth limit
 * rounded up; at least 1. root prefixes /proc and /sys: "" on a running
 * system, a directory laid out as they are in a test. */
uint32_t cpus_usable(const char *root);

/* The cgroup CPU bandwidth limit of the calling process in whole CPUs,
 * rounded up: the smallest over its cgroup and that cgroup's ancestors
 * (cgroup v2's cpu.max, or v1's cpu.cfs_quota_us over cpu.cfs_period_us).
 * false where no limit is set or none can be read. */
bool cpus_quota(const char *root, uint32_t *out);

#endif
