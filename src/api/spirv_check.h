/*
 * SPIR-V validation: a module checked by SPIRV-Tools' validator (what
 * spirv-val runs) for the Vulkan version of the device, before a driver
 * sees it. Vulkan makes a pipeline from an invalid module undefined
 * behaviour: drivers crash, hang or miscompile rather than refuse, and
 * salvo's reflection reads only what it needs (bindings, sizes, features),
 * so it cannot tell a module that is wrong elsewhere.
 *
 * The validator is told what Vulkan allows beyond the base rules and
 * salvo may have enabled (see spirv_check.c): relaxed, scalar and
 * workgroup-scalar block layouts and LocalSizeId. It does not know the
 * device's features; whether the device can run the module (capabilities,
 * maintenance4, sizes) is the reflection's check, made after this one, so
 * that a module that is not valid is refused as such whatever it declares;
 * only the SPIR-V version is checked before it (see kernel.c).
 *
 * Built in when salvo is configured with SPIRV-Tools (SALVO_SPIRV_VALIDATE,
 * which defines SALVO_HAVE_SPIRV_TOOLS=1). SPIRV-Tools is C++ and
 * allocates through new, not the salvo_allocator; it is linked into the
 * same bundle as runtime GLSL, under names of salvo's own (see the
 * top-level CMakeLists.txt).
 */
#ifndef SALVO_API_SPIRV_CHECK_H
#define SALVO_API_SPIRV_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "salvo/salvo.h"

/* Whether salvo was built with the validator: false means spirv_check
 * accepts everything.
 * Thread safety: any thread. */
bool spirv_check_available(void);

/* Validates size_bytes of SPIR-V at words for the Vulkan version
 * vk_api_version (a VK_MAKE_API_VERSION value: 1.0, 1.1, 1.2, or 1.3 and
 * above; a SPIR-V 1.4 module on Vulkan 1.1 is checked as
 * VK_KHR_spirv_1_4 allows). Returns SALVO_OK for a valid module (and
 * reason, when given, is ""); SALVO_ERROR_INVALID_ARGUMENT for an invalid,
 * empty or partial one, with reason (NUL-terminated, cut to reason_size)
 * saying why: "SPIR-V does not validate for Vulkan 1.x: " and the
 * validator's first error, its lines joined by "; ";
 * SALVO_ERROR_OUT_OF_HOST_MEMORY when the validator cannot be set up.
 * Without the validator built in, returns SALVO_OK for any input.
 * Cost: some 50 to 170 us per KB of SPIR-V for a valid module, by the
 * core (build/spirv-check-cost); an invalid one costs twice that, checked
 * again for a message with names in it.
 * Thread safety: any thread; nothing is shared between calls (a context
 * of its own costs a call some 30 ns). */
salvo_status spirv_check(const uint32_t *words, size_t size_bytes, uint32_t vk_api_version,
                         char *reason, size_t reason_size);

#endif
