/*
 * Runtime GLSL: a compute shader's source compiled to SPIR-V in process,
 * through glslang's C interface, for kernels created from text.
 *
 * The target is what salvo_add_shader() gives at build time: Vulkan 1.1,
 * SPIR-V 1.3, entry point "main", glslang's default resource limits. A
 * source without a #version line is read as "#version 450".
 *
 * glslang is initialised once per process (glslang_initialize_process,
 * under pthread_once) at the first compile and never finalised: its
 * symbol tables stay allocated, reachable, until the process exits. A
 * library cannot know when the last compile of its process is over, and a
 * finalize racing a compile on another thread would free tables in use.
 *
 * glslang allocates through C++ new, not the salvo_allocator: only the
 * SPIR-V handed back comes from alloc. Compiles may run on several threads
 * at once (glslang keeps per-thread pools and locks its shared tables).
 */
#ifndef SALVO_API_GLSL_H
#define SALVO_API_GLSL_H

#include <stddef.h>
#include <stdint.h>

#include "salvo/salvo.h"

/* Compile source (NUL-terminated GLSL, a compute shader) to SPIR-V.
 * On success *words (from alloc; the caller frees it with salvo_mem_free)
 * holds *size bytes of SPIR-V. On failure *words is NULL, *size 0, and
 * reason (NUL-terminated, at most reason_size bytes) says why, after
 * "'<name>': " when name is not NULL: for a source glslang refuses, "GLSL
 * does not compile: " and glslang's info log ("ERROR: 0:3: ...", its lines
 * joined by "; ", cut to fit), or salvo's own reason for a source glslang
 * would crash on (memory semantics that are not constant). Returns
 * SALVO_ERROR_INVALID_ARGUMENT for a bad argument or a source that does
 * not compile, SALVO_ERROR_OUT_OF_HOST_MEMORY when the copy cannot be
 * allocated, SALVO_ERROR_UNKNOWN when glslang cannot be initialised. */
salvo_status glsl_compile(const salvo_allocator *alloc, const char *source, const char *name,
                          uint32_t **words, size_t *size, char *reason, size_t reason_size);

#endif
