/*
 * spirv-check-cost: what validating a kernel's SPIR-V (spirv_check,
 * SPIRV-Tools' validator) costs beside what kernel creation already does,
 * for every module the build compiles (shaders/, tests/shaders/ and the
 * Vulkan 1.3 one of tests/shaders_vk13/).
 *
 *   build/spirv-check-cost [runs]      (default 51, at least 20)
 *
 * Per module, the median over runs of, in microseconds:
 *  - check:   spirv_check for the device's Vulkan version (1.3 without a
 *             device), and the same per KB of SPIR-V;
 *  - reflect: salvo's own reflection (reflect_spirv), which kernel
 *             creation runs first;
 *  - create:  salvo_kernel_create on the device
 *             ($SALVO_DEVICE, else the preferred one; lavapipe on a machine
 *             without a GPU), "cold" on a device made for the run (the
 *             driver's pipeline cache empty) and "warm" again on the same
 *             device (a pipeline cache hit). A kernel the device refuses
 *             shows the status instead.
 * Reaches spirv_check and reflect_spirv, which are not in the public
 * header, through the static library.
 *
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <salvo/salvo.h>

#include "api/spirv_check.h"
#include "core/reflect.h"

#include "add.spv.h"
#include "copy.spv.h"
#include "empty.spv.h"
#include "jacobi.spv.h"
#include "local_size_id.spv.h"
#include "mark.spv.h"
#include "reflect_array.spv.h"
#include "reflect_image.spv.h"
#include "reflect_mixed.spv.h"
#include "reflect_sets.spv.h"
#include "saxpy.spv.h"
#include "scale.spv.h"
#include "spin.spv.h"
#include "uniform_read.spv.h"
#include "uses_float64.spv.h"
#include "workgroup_memory.spv.h"

typedef struct module {
    const char *name;
    const uint32_t *words;
    size_t size;
} module;

#define MODULE(n) {#n, n##_spv, sizeof n##_spv}
static const module modules[] = {
    MODULE(empty),        MODULE(mark),         MODULE(local_size_id), MODULE(reflect_array),
    MODULE(uses_float64), MODULE(uniform_read), MODULE(reflect_image), MODULE(add),
    MODULE(copy),         MODULE(scale),        MODULE(spin),          MODULE(reflect_sets),
    MODULE(saxpy),        MODULE(workgroup_memory), MODULE(jacobi),    MODULE(reflect_mixed),
};
enum { MODULES = sizeof modules / sizeof modules[0] };

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One salvo_kernel_create, in us; *st its status. The kernel is then
 * destroyed and its release run (untimed): releases left queued pile up
 * and slow later creations down. */
static double create_once(salvo_device *dev, const module *m, salvo_status *st)
{
    salvo_kernel_desc kd = {.spirv = m->words, .spirv_size = m->size, .name = m->name};
    salvo_kernel *k = NULL;
    double t0 = now_us();
    *st = salvo_kernel_create(dev, &kd, &k);
    double t = now_us() - t0;
    salvo_kernel_destroy(k);
    salvo_device_synchronize(dev);
    return t;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 51;
    if (runs < 20) {
        fprintf(stderr, "usage: %s [runs >= 20]\n", argv[0]);
        return 2;
    }
    if (!spirv_check_available())
        printf("built without SPIRV-Tools (SALVO_SPIRV_VALIDATE=OFF): check times an empty call\n");

    salvo_device *dev = NULL;
    salvo_device_info info;
    uint32_t api = (1u << 22) | (3u << 12);
    salvo_status st = salvo_device_create(NULL, &dev);
    if (st == SALVO_OK && salvo_device_info_get(dev, &info) == SALVO_OK) {
        api = info.api_version;
        printf("device: %s, Vulkan %u.%u\n", info.name, (api >> 22) & 0x7fu, (api >> 12) & 0x3ffu);
    } else {
        printf("no device (%s): spirv_check for Vulkan 1.3, no kernel creation\n",
               salvo_status_string(st));
        salvo_device_destroy(dev);
        dev = NULL;
    }
    printf("median of %d runs per module, microseconds\n\n", runs);

    static double check_us[MODULES], reflect_us[MODULES], cold_us[MODULES], warm_us[MODULES];
    static salvo_status check_st[MODULES], create_st[MODULES];
    double *samples = malloc(sizeof *samples * (size_t)runs);
    double *cold = malloc(sizeof *cold * (size_t)runs * MODULES);
    if (!samples || !cold)
        return 1;
    char why[512];

    for (int i = 0; i < MODULES; i++) {
        const module *m = &modules[i];
        check_st[i] = spirv_check(m->words, m->size, api, why, sizeof why);
        if (check_st[i] != SALVO_OK)
            printf("%s: %s\n", m->name, why);
        for (int r = 0; r < runs; r++) {
            double t0 = now_us();
            spirv_check(m->words, m->size, api, why, sizeof why);
            samples[r] = now_us() - t0;
        }
        check_us[i] = median(samples, runs);
        reflect_module rm;
        for (int r = 0; r < runs; r++) {
            double t0 = now_us();
            reflect_spirv(m->words, m->size, "main", &rm, why, sizeof why);
            samples[r] = now_us() - t0;
        }
        reflect_us[i] = median(samples, runs);
    }

    if (dev) {
        /* Warm: the same device again and again. */
        for (int i = 0; i < MODULES; i++) {
            for (int r = 0; r < runs; r++)
                samples[r] = create_once(dev, &modules[i], &create_st[i]);
            warm_us[i] = median(samples, runs);
        }
        salvo_device_destroy(dev);
        /* Cold: each module's first kernel on a device of the run's own. */
        for (int r = 0; r < runs; r++) {
            salvo_device *d = NULL;
            if (salvo_device_create(NULL, &d) != SALVO_OK) {
                fprintf(stderr, "device: %s\n", salvo_last_error());
                return 1;
            }
            for (int i = 0; i < MODULES; i++) {
                salvo_status s;
                cold[(size_t)i * (size_t)runs + (size_t)r] = create_once(d, &modules[i], &s);
            }
            salvo_device_destroy(d);
        }
        for (int i = 0; i < MODULES; i++)
            cold_us[i] = median(&cold[(size_t)i * (size_t)runs], runs);
    }

    printf("%-17s %6s %9s %8s %9s %11s %11s %7s\n", "module", "bytes", "check", "us/KB",
           "reflect", "create cold", "create warm", "check %");
    double total_check = 0, total_kb = 0;
    for (int i = 0; i < MODULES; i++) {
        const module *m = &modules[i];
        double kb = (double)m->size / 1024;
        total_check += check_us[i];
        total_kb += kb;
        printf("%-17s %6zu %9.1f %8.1f %9.2f", m->name, m->size, check_us[i], check_us[i] / kb,
               reflect_us[i]);
        if (!dev)
            printf(" %11s %11s %7s", "-", "-", "-");
        else if (create_st[i] != SALVO_OK)
            printf(" %23s %7s", salvo_status_string(create_st[i]), "-");
        else
            printf(" %11.1f %11.1f %6.1f%%", cold_us[i], warm_us[i],
                   100 * check_us[i] / cold_us[i]);
        printf("%s\n", check_st[i] == SALVO_OK ? "" : "  (refused by spirv_check)");
    }
    printf("\nall %d modules: check %.1f us per module on average, %.1f us per KB\n", MODULES,
           total_check / MODULES, total_check / total_kb);
    free(samples);
    free(cold);
    return 0;
}
