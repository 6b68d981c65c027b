/*
 * libFuzzer harness for runtime GLSL (salvo_kernel_desc.glsl): any text
 * goes through glsl_compile, and what compiles goes on into the SPIR-V
 * reflection a kernel is built from, as salvo_kernel_create does. Either
 * step may refuse, with a reason; neither may crash, hang, read out of
 * bounds or trip UBSan. No device is involved.
 *
 *   cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DSALVO_FUZZ=ON
 *   cmake --build build-fuzz --target fuzz_glsl
 *   build-fuzz/tests/fuzz/fuzz_glsl -max_total_time=60 new-corpus/ shaders/ tests/shaders/
 *
 * Seeds: the project's own compute shaders (shaders/, tests/shaders/).
 * glslang itself comes from the distribution's archives, without the
 * fuzzer's coverage instrumentation or ASan: coverage guides the search
 * through salvo's side (glsl.c and the reflection of whatever compiles),
 * and a memory error inside glslang shows only when it crashes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/glsl.h"
#include "core/reflect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The source as a caller hands it over: NUL-terminated, in a heap block
     * of exactly that size. Text after an embedded NUL is simply not seen. */
    char *src = malloc(size + 1);
    if (!src)
        return 0;
    memcpy(src, data, size);
    src[size] = '\0';

    uint32_t *words = (uint32_t *)src; /* must be overwritten */
    size_t bytes = 1;
    char reason[512];
    salvo_status st = glsl_compile(NULL, src, "fuzz", &words, &bytes, reason, sizeof reason);

    /* Only what the contract in glsl.h promises. */
    if (memchr(reason, '\0', sizeof reason) == NULL)
        __builtin_trap();
    if (st == SALVO_OK) {
        if (!words || bytes == 0 || bytes % 4 || reason[0] != '\0')
            __builtin_trap();
        if (words[0] != 0x07230203u) /* SPIR-V magic */
            __builtin_trap();
        reflect_module m;
        char why[256];
        salvo_status r = reflect_spirv(words, bytes, "main", &m, why, sizeof why);
        if (r != SALVO_OK && ((r != SALVO_ERROR_INVALID_ARGUMENT && r != SALVO_ERROR_UNSUPPORTED) || why[0] == '\0'))
            __builtin_trap();
        if (r == SALVO_OK && m.binding_count > SALVO_MAX_BINDINGS)
            __builtin_trap();
        free(words);
    } else {
        /* An empty source is a bad argument; anything else glslang refuses. */
        if (st != SALVO_ERROR_INVALID_ARGUMENT || words != NULL || bytes != 0 ||
            reason[0] == '\0')
            __builtin_trap();
        if (src[0] != '\0' && strstr(reason, "'fuzz'") != reason)
            __builtin_trap(); /* a refusal names the kernel first */
    }
    free(src);
    return 0;
}
