/*
 * An application whose own global functions have the names of salvo's
 * internal ones (queue_init, retire_run, graph_init, ...), with salvo
 * (static or shared) in the same program. Before libsalvo.a kept only the
 * SALVO_API names global, this program did not link against it (multiple
 * definitions of queue_init, ...), or, where the linker took one copy,
 * salvo called the program's functions or the program salvo's.
 *
 * Here both sides run: the program calls its functions, salvo opens a
 * device, compiles a kernel (from GLSL too, where salvo has runtime GLSL:
 * glsl_compile) and runs it (queues, slots, hazards, retirement), and each
 * of the program's functions must have been called exactly as often as the
 * program called it.
 *
 * Exit 0 on success, 77 without a Vulkan device, 1 on failure.
 */
#define _POSIX_C_SOURCE 200809L /* dlopen */
#include <dlfcn.h>
#include <stdio.h>

/* Its salvo-on-the-program's-own-device half is for programs that link a
 * Vulkan of their own by name; this one does not call it. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "embed/embed_salvo.h"
#pragma GCC diagnostic pop

/* Names salvo's files define for each other (see `nm libsalvo_internal.a`). */
#define CLASH_NAMES(X)                                                                            \
    X(queue_init)                                                                                 \
    X(retire_run)                                                                                 \
    X(graph_init)                                                                                 \
    X(hazard_append)                                                                              \
    X(slot_submit)                                                                                \
    X(launch_check)                                                                               \
    X(glsl_compile)                                                                               \
    X(spirv_check)                                                                                \
    X(reflect_spirv)

#define CLASH_COUNTER(name) static unsigned calls_##name;
CLASH_NAMES(CLASH_COUNTER)

/* The program's own, global, with signatures of its own. */
#define CLASH_DEFINE(name)                                                                        \
    int name(int x);                                                                              \
    int name(int x)                                                                               \
    {                                                                                             \
        calls_##name++;                                                                           \
        return x + 1;                                                                             \
    }
CLASH_NAMES(CLASH_DEFINE)

static int clash_check(unsigned want)
{
    int bad = 0;
#define CLASH_EXPECT(name)                                                                        \
    if (calls_##name != want) {                                                                   \
        fprintf(stderr, "the program's " #name " ran %u times, want %u\n", calls_##name, want);   \
        bad = 1;                                                                                  \
    }
    CLASH_NAMES(CLASH_EXPECT)
    return bad;
}

/* Runtime GLSL through salvo's own glslang (the program's glsl_compile
 * must not be the one called). 0 ok, 1 failure. */
static int clash_glsl(void)
{
#if defined(CLASH_GLSL) && CLASH_GLSL
    static const char src[] = "#version 450\n"
                              "layout(local_size_x = 64) in;\n"
                              "layout(std430, binding = 0) buffer Data { uint data[]; };\n"
                              "void main() { data[gl_GlobalInvocationID.x] += 1u; }\n";
    salvo_device *dev = NULL;
    salvo_kernel *kernel = NULL;
    int rc = 1;
    if (salvo_device_create(NULL, &dev) != SALVO_OK) {
        fprintf(stderr, "salvo_device_create: %s\n", salvo_last_error());
        return 1;
    }
    salvo_kernel_desc kd = {.glsl = src};
    if (salvo_kernel_create(dev, &kd, &kernel) != SALVO_OK) {
        fprintf(stderr, "salvo_kernel_create (GLSL): %s\n", salvo_last_error());
    } else {
        rc = 0;
    }
    salvo_kernel_destroy(kernel);
    salvo_device_destroy(dev);
    return rc;
#else
    return 0;
#endif
}

int main(void)
{
    /* The program's calls: each of its functions once. */
    int sum = 0;
#define CLASH_CALL(name) sum += name(0);
    CLASH_NAMES(CLASH_CALL)
    if (clash_check(1))
        return 1;

    /* salvo's: a device, kernels and launches, on its own functions. The
     * program's Vulkan, for the interop checks: the loader, opened by hand. */
    void *loader = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!loader) {
        fprintf(stderr, "no Vulkan loader (%s): skipped\n", dlerror());
        return EMBED_SKIP;
    }
    PFN_vkGetInstanceProcAddr gipa = NULL;
    *(void **)&gipa = dlsym(loader, "vkGetInstanceProcAddr");
    if (!gipa) {
        fprintf(stderr, "libvulkan.so.1 has no vkGetInstanceProcAddr\n");
        return 1;
    }
    int rc = embed_run_salvo(gipa, NULL);
    if (rc == 0)
        rc = clash_glsl();
    if (clash_check(1))
        return 1;
    if (rc == EMBED_SKIP)
        return EMBED_SKIP;
    if (rc != 0)
        return 1;
    printf("program's functions: %d calls of its own; salvo ran on its own\n", sum);
    return 0;
}
