/*
 * An application that links glslang itself (the distribution's static
 * archives) and compiles GLSL with it, with salvo (static or shared) in the
 * same program, whose runtime GLSL carries a glslang of its own. The two
 * must not meet: before salvo renamed the copy in its static archive, the
 * linker kept one of each pair of C++ inline functions the two copies share
 * (COMDAT groups) and the application's glslang called through null
 * pointers. Here each compiles, before and after the other, and the
 * kernels built from both run and agree.
 *
 * Exit 0 on success, 77 without a Vulkan device, 1 on failure.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glslang/Include/glslang_c_interface.h>
#include <glslang/Public/resource_limits_c.h>

#include "salvo/salvo.h"

#include "add.spv.h"

#define SKIP 77
#define N 1000u

/* shaders/add.comp, as text. */
static const char ADD_COMP[] =
    "#version 450\n"
    "layout(local_size_x_id = 0) in;\n"
    "layout(std430, set = 0, binding = 0) buffer Data { uint data[]; };\n"
    "layout(push_constant) uniform Push { uint n; uint value; } pc;\n"
    "void main()\n"
    "{\n"
    "    uint i = gl_GlobalInvocationID.x;\n"
    "    if (i < pc.n)\n"
    "        data[i] += pc.value;\n"
    "}\n";

/* The application's own compile: SPIR-V words (malloc'd) or NULL. */
static uint32_t *app_compile(const char *src, size_t *bytes)
{
    const glslang_input_t input = {
        .language = GLSLANG_SOURCE_GLSL,
        .stage = GLSLANG_STAGE_COMPUTE,
        .client = GLSLANG_CLIENT_VULKAN,
        .client_version = GLSLANG_TARGET_VULKAN_1_1,
        .target_language = GLSLANG_TARGET_SPV,
        .target_language_version = GLSLANG_TARGET_SPV_1_3,
        .code = src,
        .default_version = 450,
        .default_profile = GLSLANG_NO_PROFILE,
        .messages = GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT,
        .resource = glslang_default_resource(),
    };
    uint32_t *words = NULL;
    glslang_shader_t *shader = glslang_shader_create(&input);
    glslang_program_t *program = glslang_program_create();
    if (glslang_shader_preprocess(shader, &input) && glslang_shader_parse(shader, &input)) {
        glslang_program_add_shader(program, shader);
        if (glslang_program_link(program,
                                 GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT)) {
            glslang_program_SPIRV_generate(program, GLSLANG_STAGE_COMPUTE);
            size_t n = glslang_program_SPIRV_get_size(program);
            words = n ? malloc(n * sizeof *words) : NULL;
            if (words) {
                glslang_program_SPIRV_get(program, words);
                *bytes = n * sizeof *words;
            }
        }
    }
    if (!words)
        fprintf(stderr, "the application's glslang: %s\n", glslang_shader_get_info_log(shader));
    glslang_program_delete(program);
    glslang_shader_delete(shader);
    return words;
}

static unsigned validation_messages;

static void log_cb(void *user, salvo_log_level level, const char *file, int line,
                   const char *message)
{
    (void)user;
    (void)line;
    if (file && strcmp(file, "validation") == 0) {
        validation_messages++;
        fprintf(stderr, "VALIDATION: %s\n", message);
    } else if (level >= SALVO_LOG_WARNING) {
        fprintf(stderr, "salvo: %s\n", message);
    }
}

#define CHECK(cond)                                                                               \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            fprintf(stderr, "%s:%d: check failed: %s (last salvo error: %s)\n", __FILE__,         \
                    __LINE__, #cond, salvo_last_error());                                         \
            goto out;                                                                             \
        }                                                                                         \
    } while (0)

int main(void)
{
    int rc = 1;
    salvo_device *dev = NULL;
    salvo_kernel *k[3] = {NULL, NULL, NULL};
    salvo_buffer *buf = NULL;
    salvo_stream *stream = NULL;
    uint32_t *first = NULL, *again = NULL;
    size_t first_bytes = 0, again_bytes = 0;

    /* The application's glslang first, before salvo's is initialised. */
    if (!glslang_initialize_process()) {
        fprintf(stderr, "glslang_initialize_process failed\n");
        return 1;
    }
    first = app_compile(ADD_COMP, &first_bytes);
    CHECK(first && first[0] == 0x07230203u);

    uint32_t count = 0;
    if (salvo_device_enumerate(NULL, &count) != SALVO_OK || count == 0) {
        fprintf(stderr, "no Vulkan device: skipped\n");
        rc = SKIP;
        goto out;
    }
    salvo_device_desc desc = {.log = log_cb};
    salvo_status st = salvo_device_create(&desc, &dev);
    if (st == SALVO_ERROR_NO_DEVICE) {
        fprintf(stderr, "no Vulkan device: skipped\n");
        rc = SKIP;
        goto out;
    }
    CHECK(st == SALVO_OK);

    /* Three kernels of one source: the application's SPIR-V, salvo's
     * runtime GLSL, and the build-time SPIR-V. */
    const salvo_spec_constant local = {0, 64};
    salvo_kernel_desc kd[3] = {
        {.spirv = first, .spirv_size = first_bytes, .name = "add_app_glslang"},
        {.glsl = ADD_COMP, .name = "add_salvo_glsl"},
        {.spirv = add_spv, .spirv_size = sizeof add_spv, .name = "add_prebuilt"},
    };
    for (int i = 0; i < 3; i++) {
        kd[i].spec_constants = &local;
        kd[i].spec_constant_count = 1;
        CHECK(salvo_kernel_create(dev, &kd[i], &k[i]) == SALVO_OK);
    }
    /* salvo's compiler reports errors as its own. */
    salvo_kernel *bad = NULL;
    const salvo_kernel_desc broken = {.glsl = "#version 450\nvoid main() { nope(); }\n",
                                      .name = "broken"};
    CHECK(salvo_kernel_create(dev, &broken, &bad) == SALVO_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(salvo_last_error(), "ERROR") && strstr(salvo_last_error(), "broken"));

    /* The application's glslang again, after salvo's ran: the same words. */
    again = app_compile(ADD_COMP, &again_bytes);
    CHECK(again && again_bytes == first_bytes && memcmp(first, again, first_bytes) == 0);

    static uint32_t data[N];
    memset(data, 0, sizeof data);
    CHECK(salvo_buffer_create(dev, sizeof data, SALVO_DOMAIN_DEVICE, &buf) == SALVO_OK);
    CHECK(salvo_buffer_write(buf, 0, data, sizeof data) == SALVO_OK);
    CHECK(salvo_stream_create(dev, NULL, &stream) == SALVO_OK);
    const salvo_binding b = {.binding = 0, .buffer = buf};
    const uint32_t groups[3] = {(N + 63) / 64, 1, 1};
    for (uint32_t i = 0; i < 3; i++) {
        const uint32_t push[2] = {N, 1u << (4 * i)}; /* 1, 16, 256 */
        CHECK(salvo_launch(stream, k[i], groups, &b, 1, push, sizeof push) == SALVO_OK);
    }
    CHECK(salvo_stream_synchronize(stream) == SALVO_OK);
    CHECK(salvo_buffer_read(buf, 0, data, sizeof data) == SALVO_OK);
    for (uint32_t i = 0; i < N; i++)
        CHECK(data[i] == 1u + 16u + 256u);
    CHECK(validation_messages == 0);
    printf("app_glslang: the application's glslang and salvo's compiled side by side; "
           "%u results checked\n", N);
    rc = 0;
out:
    salvo_stream_destroy(stream);
    salvo_buffer_destroy(buf);
    for (int i = 0; i < 3; i++)
        salvo_kernel_destroy(k[i]);
    salvo_device_destroy(dev);
    free(first);
    free(again);
    return rc;
}
