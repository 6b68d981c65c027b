/*
 * Diagnostics: "log where, return the code".
 *
 * SALVO_FAIL(sink, status, fmt, ...) formats "file:line: reason" into this
 * thread's last-error buffer (salvo_last_error), passes the reason to the
 * sink's log callback at ERROR level (INFO for a status that is no error,
 * SALVO_TIMEOUT's), and evaluates to status. SALVO_LOG
 * passes the reason at the level given. The callback gets file (base name)
 * and line as arguments, never inside the message: a logger that prints
 * them prints them once. A sink without a callback (NULL, or fn NULL) is
 * the stderr sink: a line per message from $SALVO_LOG's level on. A
 * device's sink is always its own function, which passes messages to the
 * program's callback or, with none, to the stderr sink at the level the
 * device settled at create.
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

/* The stderr sink: prints "salvo: LEVEL: MESSAGE (FILE:LINE)" (line 0,
 * messages of Vulkan's: "salvo: LEVEL: FILE: MESSAGE") as one line when
 * level >= threshold; SALVO_LOG_OFF prints nothing. */
void salvo_log_print(salvo_log_level threshold, salvo_log_level level, const char *file, int line,
                     const char *message);
/* The stderr sink's level: $SALVO_LOG, else fallback. A value it cannot
 * use gives fallback and a warning: through warn_to where that has a
 * callback, else on stderr, once for each such text in the process. */
salvo_log_level salvo_log_env_level(const salvo_log_sink *warn_to, salvo_log_level fallback);

#define SALVO_FAIL(sink, status, ...) salvo_fail_at((sink), __FILE__, __LINE__, (status), __VA_ARGS__)
#define SALVO_LOG(sink, level, ...) salvo_log_at((sink), (level), __FILE__, __LINE__, __VA_ARGS__)

#endif
