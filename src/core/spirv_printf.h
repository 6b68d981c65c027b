/*
 * Shader printf's format strings: debugPrintfEXT (GL_EXT_debug_printf)
 * becomes an OpExtInst of the "NonSemantic.DebugPrintf" set whose first
 * operand is the id of an OpString, the format. A kernel built with each
 * of its formats prefixed by a tag of its own has every line it prints
 * say whose it is, whatever the layer that prints it knows of pipelines.
 */
#ifndef SALVO_CORE_SPIRV_PRINTF_H
#define SALVO_CORE_SPIRV_PRINTF_H

#include <stddef.h>
#include <stdint.h>

#include "base/alloc.h"
#include "salvo/salvo.h"

/* A copy of the module at words (size_bytes, a well-formed module: every
 * instruction's length checked, as reflect_spirv checks them) in which
 * each OpString used as a DebugPrintf format starts with prefix (a
 * NUL-terminated string the layer prints as it is: no '%' but as "%%").
 * *out (from alloc, *out_size bytes) is NULL, and SALVO_OK returned, when
 * the module prints nothing. SALVO_ERROR_OUT_OF_HOST_MEMORY, or
 * SALVO_ERROR_INVALID_ARGUMENT for a module that is not well formed
 * there, with *out NULL.
 * Thread safety: any thread. */
salvo_status spirv_printf_tag(const salvo_allocator *alloc, const uint32_t *words,
                              size_t size_bytes, const char *prefix, uint32_t **out,
                              size_t *out_size);

#endif
