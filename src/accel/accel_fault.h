/*
 * A decorator over any accelerator that fails chosen calls.
 *
 * A rule names a vtable operation (its field name in accel_vtable: submit,
 * fence_wait, buffer_create, ...), the call to fail (n, 1-based, counted
 * per operation from when the decorator was made), and the result. Flags:
 *   FAULT_ALWAYS: fail call n and every later call of that operation;
 *   FAULT_AFTER:  call through first, release what the call created, then
 *                 fail (only creating operations have something to release;
 *                 for the others it is the same as failing before);
 *   FAULT_LOST:   from call n on the device is lost: every operation that
 *                 can fail returns VK_ERROR_DEVICE_LOST.
 * Destroy operations always call through: they cannot fail.
 *
 * Text form (SALVO_FAULT and salvo_device_desc.fault):
 *   op:n:result[:always][:after][,...]     result as accel_result_parse
 *   op:n:lost                               the device is lost at that call
 */
#ifndef SALVO_ACCEL_FAULT_H
#define SALVO_ACCEL_FAULT_H

#include <stddef.h>

#include "accel/accel.h"

enum {
    FAULT_ALWAYS = 1u << 0,
    FAULT_AFTER = 1u << 1,
    FAULT_LOST = 1u << 2
};

typedef struct fault_accel fault_accel;

/* Wrap inner; the decorator owns it from now on (its destroy destroys
 * inner). handle (optional) lets tests add rules and read counters; it
 * stays valid until the wrapped accelerator is destroyed. */
bool accel_fault_wrap(const salvo_allocator *alloc, accel inner, accel *out, fault_accel **handle);
/* Add one rule; false when the operation is unknown or the table is full. */
bool accel_fault_add(fault_accel *f, const char *op, uint64_t n, accel_result result,
                     unsigned flags);
/* Parse a text spec into rules; false with a reason on bad input. */
bool accel_fault_parse(fault_accel *f, const char *spec, char *reason, size_t reason_size);
/* Failures injected so far. */
uint64_t accel_fault_injected(const fault_accel *f);
/* Calls of op seen so far (0 for an unknown name). */
uint64_t accel_fault_calls(const fault_accel *f, const char *op);
/* Forget every rule (the counters stay). */
void accel_fault_clear(fault_accel *f);
/* Names of the operations a rule can name, NULL-terminated. */
extern const char *const accel_fault_ops[];

#endif
