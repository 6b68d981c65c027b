/* SPIR-V validation through SPIRV-Tools' C interface; see spirv_check.h. */
#include "api/spirv_check.h"

#include <stdio.h>
#include <string.h>

/* The build defines SALVO_HAVE_SPIRV_TOOLS=1 with SPIRV-Tools linked in;
 * without it (0 or undefined) every module passes. */
#if SALVO_HAVE_SPIRV_TOOLS
#include <spirv-tools/libspirv.h>

/* The SPIR-V version word of a module header: 0x00MMmm00. */
#define SPIRV_1_4 0x00010400u

typedef struct target {
    spv_target_env env;
    const char *name; /* as the reason says it */
} target;

/* Vulkan 1.1 takes SPIR-V up to 1.3, or 1.4 with VK_KHR_spirv_1_4: a 1.4
 * module is checked by the rules of the latter (whether the device has the
 * extension is the reflection's question; an application's own device may
 * have enabled it). Newer versions than the device takes are refused by
 * the reflection first; the validator names them too. */
static target target_for(uint32_t vk_api_version, uint32_t spirv_version)
{
    uint32_t major = (vk_api_version >> 22) & 0x7fu;
    uint32_t minor = (vk_api_version >> 12) & 0x3ffu;
    if (major > 1 || minor >= 3)
        return (target){SPV_ENV_VULKAN_1_3, "Vulkan 1.3"};
    if (minor == 2)
        return (target){SPV_ENV_VULKAN_1_2, "Vulkan 1.2"};
    if (minor == 1)
        return spirv_version == SPIRV_1_4
                   ? (target){SPV_ENV_VULKAN_1_1_SPIRV_1_4, "Vulkan 1.1 (SPIR-V 1.4)"}
                   : (target){SPV_ENV_VULKAN_1_1, "Vulkan 1.1"};
    return (target){SPV_ENV_VULKAN_1_0, "Vulkan 1.0"};
}

/* reason = prefix + text, text's lines joined by "; " with the blanks
 * around them dropped, cut to reason_size. The validator's messages end
 * with the offending instruction, disassembled, on lines of their own. */
static void put_message(char *reason, size_t reason_size, const char *prefix, const char *text)
{
    if (!reason || reason_size == 0)
        return;
    int n = snprintf(reason, reason_size, "%s", prefix);
    size_t at = n < 0 ? 0 : (size_t)n;
    if (at >= reason_size)
        return; /* snprintf cut and terminated it */
    size_t start = at;
    bool line_start = true;
    for (const char *p = text; *p && at + 1 < reason_size; p++) {
        if (*p == '\n' || *p == '\r') {
            while (at > start && reason[at - 1] == ' ')
                at--;
            line_start = true;
            continue;
        }
        if (line_start) {
            if (*p == ' ' || *p == '\t')
                continue;
            if (at > start) {
                if (at + 3 >= reason_size)
                    break;
                reason[at++] = ';';
                reason[at++] = ' ';
            }
            line_start = false;
        }
        reason[at++] = *p;
    }
    while (at > start && reason[at - 1] == ' ')
        at--;
    reason[at] = '\0';
}

bool spirv_check_available(void)
{
    return true;
}

salvo_status spirv_check(const uint32_t *words, size_t size_bytes, uint32_t vk_api_version,
                         char *reason, size_t reason_size)
{
    if (reason && reason_size)
        reason[0] = '\0';
    if (!words || size_bytes == 0) {
        put_message(reason, reason_size, "", "SPIR-V is empty");
        return SALVO_ERROR_INVALID_ARGUMENT;
    }
    if (size_bytes % 4) {
        char text[96];
        snprintf(text, sizeof text, "SPIR-V of %zu bytes is not a whole number of words",
                 size_bytes);
        put_message(reason, reason_size, "", text);
        return SALVO_ERROR_INVALID_ARGUMENT;
    }
    target t = target_for(vk_api_version, size_bytes >= 8 ? words[1] : 0);

    /* A context and options of its own per call: creating both costs some
     * 30 ns, nothing beside validating even the smallest module (tens of
     * microseconds), and nothing is then shared between threads or kept
     * for the life of the process. */
    spv_context context = spvContextCreate(t.env);
    spv_validator_options options = spvValidatorOptionsCreate();
    if (!context || !options) {
        spvValidatorOptionsDestroy(options);
        spvContextDestroy(context);
        put_message(reason, reason_size, "", "out of host memory for the SPIR-V validator");
        return SALVO_ERROR_OUT_OF_HOST_MEMORY;
    }
    /* What real drivers accept beyond the base rules, as Vulkan allows:
     * - relaxed block layout (VK_KHR_relaxed_block_layout) is core since
     *   Vulkan 1.1; the Vulkan 1.1+ environments assume it already, and
     *   saying so keeps Vulkan 1.0 from refusing what 1.0 drivers with the
     *   extension (all of them, in practice) run.
     * - scalar block layout (scalarBlockLayout: core feature of 1.2,
     *   VK_EXT_scalar_block_layout before) is enabled by salvo whenever the
     *   device offers it, and an application's own device may have it on.
     *   Offsets laid out by its rules (GLSL's layout(scalar)) are otherwise
     *   refused as std430 violations. The validator cannot know the
     *   device's features; a module valid on some device it could run on is
     *   better taken than a kernel that works refused. Scalar is the
     *   loosest layout, so it also covers uniformBufferStandardLayout
     *   (std430 uniform blocks, also enabled when offered).
     * - the same for workgroup blocks (VK_KHR_workgroup_memory_explicit_
     *   layout's scalar feature), for an application's own device.
     * - LocalSizeId: the Vulkan 1.3 environment takes it (maintenance4);
     *   below 1.3 it needs VK_KHR_maintenance4, which an application's own
     *   device may have. The reflection refuses it on a device of salvo's
     *   without the feature. */
    spvValidatorOptionsSetRelaxBlockLayout(options, true);
    spvValidatorOptionsSetScalarBlockLayout(options, true);
    spvValidatorOptionsSetWorkgroupScalarBlockLayout(options, true);
    spvValidatorOptionsSetAllowLocalSizeId(options, true);
    /* Friendly names (ids shown by their OpName, "%gl_GlobalInvocationID"
     * rather than "%11") cost a walk of the whole module that makes names
     * for every id: half of a valid module's validation time. Valid
     * modules, the common case, are checked without them; an invalid one
     * is checked again with them for the message (the validator stops at
     * the same first error). */
    spvValidatorOptionsSetFriendlyNames(options, false);

    spv_const_binary_t binary = {.code = words, .wordCount = size_bytes / 4};
    spv_diagnostic diagnostic = NULL;
    spv_result_t r = spvValidateWithOptions(context, options, &binary, &diagnostic);
    if (r != SPV_SUCCESS && r != SPV_ERROR_OUT_OF_MEMORY) {
        spvValidatorOptionsSetFriendlyNames(options, true);
        spv_diagnostic named = NULL;
        if (spvValidateWithOptions(context, options, &binary, &named) != SPV_SUCCESS && named &&
            named->error && *named->error) {
            if (diagnostic)
                spvDiagnosticDestroy(diagnostic);
            diagnostic = named;
        } else if (named) {
            spvDiagnosticDestroy(named);
        }
    }
    salvo_status st = SALVO_OK;
    if (r == SPV_ERROR_OUT_OF_MEMORY) {
        put_message(reason, reason_size, "", "out of host memory in the SPIR-V validator");
        st = SALVO_ERROR_OUT_OF_HOST_MEMORY;
    } else if (r != SPV_SUCCESS) {
        char prefix[64];
        snprintf(prefix, sizeof prefix, "SPIR-V does not validate for %s: ", t.name);
        char fallback[48];
        snprintf(fallback, sizeof fallback, "spirv-val error %d, no message", (int)r);
        put_message(reason, reason_size, prefix,
                    diagnostic && diagnostic->error && *diagnostic->error ? diagnostic->error
                                                                           : fallback);
        st = SALVO_ERROR_INVALID_ARGUMENT;
    }
    if (diagnostic) /* may hold a warning on success */
        spvDiagnosticDestroy(diagnostic);
    spvValidatorOptionsDestroy(options);
    spvContextDestroy(context);
    return st;
}

#else /* !SALVO_HAVE_SPIRV_TOOLS */

bool spirv_check_available(void)
{
    return false;
}

salvo_status spirv_check(const uint32_t *words, size_t size_bytes, uint32_t vk_api_version,
                         char *reason, size_t reason_size)
{
    (void)words;
    (void)size_bytes;
    (void)vk_api_version;
    if (reason && reason_size)
        reason[0] = '\0';
    return SALVO_OK;
}

#endif
