/*
 * libFuzzer harness for the SPIR-V reflection a kernel is built from:
 * any byte string must be refused with a reason or reflected, never read
 * out of bounds, never trip UBSan. No device is involved.
 *
 *   cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DSALVO_FUZZ=ON
 *   cmake --build build-fuzz --target fuzz_kernel
 *   build-fuzz/tests/fuzz/fuzz_kernel -max_total_time=60 new-corpus/ tests/fuzz/corpus/
 *
 * The seeds in corpus/ are the project's own shaders compiled to SPIR-V
 * (make_corpus.sh).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/reflect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The words as a caller hands them over: aligned, and exactly as many
     * as there are (a heap block of that size, so ASan sees any overread). */
    size_t words = size / 4;
    uint32_t *spirv = malloc(words ? words * 4 : 1);
    if (!spirv)
        return 0;
    if (words)
        memcpy(spirv, data, words * 4);

    reflect_module m;
    char reason[256];
    salvo_status st = reflect_spirv(spirv, words * 4, "main", &m, reason, sizeof reason);

    /* Only what the contract in reflect.h promises. */
    if (st != SALVO_OK && st != SALVO_ERROR_INVALID_ARGUMENT && st != SALVO_ERROR_UNSUPPORTED)
        __builtin_trap();
    if (memchr(reason, '\0', sizeof reason) == NULL)
        __builtin_trap();
    if (st == SALVO_OK) {
        if (m.binding_count > SALVO_MAX_BINDINGS)
            __builtin_trap();
        for (uint32_t i = 1; i < m.binding_count; i++) {
            const reflect_binding *a = &m.bindings[i - 1], *b = &m.bindings[i];
            bool next_element = a->set == b->set && a->binding == b->binding &&
                                a->element + 1 == b->element && a->count == b->count;
            if (!next_element &&
                (a->set > b->set || (a->set == b->set && a->binding >= b->binding)))
                __builtin_trap(); /* sorted by (set, binding, element) */
        }
        for (uint32_t i = 0; i < m.binding_count; i++) {
            const reflect_binding *b = &m.bindings[i];
            if (b->count == 0 || b->element >= b->count || b->count > SALVO_MAX_BINDINGS)
                __builtin_trap(); /* an array's elements are all there */
        }
    } else if (reason[0] == '\0') {
        __builtin_trap(); /* a refusal says why */
    }

    /* The same module with values for spec constants 0..3 (taken from its
     * first words): each value gets a width Vulkan takes. */
    salvo_spec_constant spec[4];
    uint8_t sizes[4];
    for (uint32_t i = 0; i < 4; i++)
        spec[i] = (salvo_spec_constant){i, words > i ? spirv[i] : i};
    st = reflect_spirv_specialized(spirv, words * 4, "main", spec, 4, sizes, &m, reason,
                                   sizeof reason);
    if (st != SALVO_OK && st != SALVO_ERROR_INVALID_ARGUMENT && st != SALVO_ERROR_UNSUPPORTED)
        __builtin_trap();
    for (uint32_t i = 0; st == SALVO_OK && i < 4; i++)
        if (sizes[i] != 1 && sizes[i] != 2 && sizes[i] != 4)
            __builtin_trap();
    free(spirv);
    return 0;
}
