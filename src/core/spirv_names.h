/*
 * The names SPIR-V gives its numbers, for refusals that a person reads:
 * "needs capability DerivativeControl" rather than "capability 51".
 */
#ifndef SALVO_CORE_SPIRV_NAMES_H
#define SALVO_CORE_SPIRV_NAMES_H

#include <stdint.h>

/* The Capability enumerant's name ("Float64"), or NULL for a number the
 * table does not have (one newer than it, or none at all).
 * Pure: any thread. */
const char *spirv_capability_name(uint32_t capability);

/* The Image Format enumerant's name ("Rgba8", "R11fG11fB10f"; 0 is
 * "Unknown", SPIR-V's name for no format), or NULL beyond the table.
 * Pure: any thread. */
const char *spirv_image_format_name(uint32_t format);

#endif
