/*
 * Helpers for the integration suites that run on a real Vulkan device
 * (lavapipe in CI) with the validation layer on.
 */
#ifndef SALVO_TESTS_LAVA_H
#define SALVO_TESTS_LAVA_H

#include <stdint.h>

#include "salvo/salvo.h"

/* Exit status ctest reads as "skipped". */
#define LAVA_SKIP 77

/* Open the default device with validation (and sync validation when
 * SALVO_VALIDATION=2). Validation and error messages are counted and
 * echoed to stderr. Exits with LAVA_SKIP when no Vulkan device exists. */
salvo_device *lava_open(uint32_t flags, uint32_t batch_size);
/* Call from main() before running the suite: skips when no device. */
void lava_require_device(void);
/* Validation messages seen by the devices opened through lava_open. */
uint64_t lava_validation_messages(void);
/* Destroy the device after checking that live counters are zero; returns
 * the number of validation messages seen while it was open. */
void lava_close(salvo_device *dev);

#endif
