/*
 * Diagnostics: "log where, return the code".
 *
 * SALVO_FAIL(sink, status, fmt, ...) formats "file:line: reason" into this
 * thread's last-error buffer (salvo_last_error), passes the reason to the
 * sink's log callback at ERROR level, and evaluates to status. SALVO_LOG
 * passes the reason at the level given. The callback gets file (base name)
 * and line as arguments, never inside the message: a logger that prints
 * them prints them once. The library never prints by itself.
 */
#ifndef SALVO_BASE_DIAG_H
#define SALVO_BASE_DIAG_H

#include <stdarg.h>

#include "salvo/salvo.h"

/* Where messages go: the device's log callback (may be empty). */
typedef struct salvo_log_sink {
    salvo_log_fn fn;
    void *user;
} salvo_log_sink;

#define SALVO_ERROR_MAX 1024

salvo_status salvo_fail_at(const salvo_log_sink *sink, const char *file, int line,
                           salvo_status status, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void salvo_log_at(const salvo_log_sink *sink, salvo_log_level level, const char *file, int line,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Clear this thread's last error (at the start of a public call that succeeds). */
void salvo_clear_error(void);
/* Set the last error text verbatim (used to re-deliver a deferred failure). */
void salvo_set_error(const char *text);

#define SALVO_FAIL(sink, status, ...) salvo_fail_at((sink), __FILE__, __LINE__, (status), __VA_ARGS__)
#define SALVO_LOG(sink, level, ...) salvo_log_at((sink), (level), __FILE__, __LINE__, __VA_ARGS__)

#endif
