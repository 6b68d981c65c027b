/*
 * Settings from the environment, parsed strictly.
 *
 * The whole text must be a value of the setting's kind and range: digits
 * only for an integer (no sign, no space, no trailing junk), one of the
 * listed words for a choice ("0" and "1" for a flag). Unset and empty both
 * mean "not given". Any other text is ENV_BAD: the caller then uses its
 * fallback and says so with ENV_WARN, which names the variable, the text
 * and the value used instead, so that a typo is never silently a default.
 */
#ifndef SALVO_BASE_ENV_H
#define SALVO_BASE_ENV_H

#include <stdbool.h>
#include <stdint.h>

#include "base/diag.h"

typedef enum env_status {
    ENV_BAD = -1,  /* set to text that cannot be used; why says what was expected */
    ENV_UNSET = 0, /* unset or empty: the caller's default applies, silently */
    ENV_OK = 1     /* *out holds the value */
} env_status;

enum {
    ENV_WHY_MAX = 128
};

/* Parsers of a variable's text (NULL: unset). On ENV_BAD, why (ENV_WHY_MAX
 * bytes) receives what the text should have been ("an integer from 1 to
 * 8"); *out is left alone unless ENV_OK. */
env_status env_parse_uint(const char *text, uint64_t min, uint64_t max, uint64_t *out, char *why);
/* A decimal number of seconds in [0, max] (no inf, nan or hex). */
env_status env_parse_seconds(const char *text, double max, double *out, char *why);
/* One of choices (a NULL-terminated list of words), compared exactly;
 * *out is its index. */
env_status env_parse_choice(const char *text, const char *const *choices, unsigned *out,
                            char *why);

/* The same, on getenv(name). */
env_status env_uint(const char *name, uint64_t min, uint64_t max, uint64_t *out, char *why);
env_status env_seconds(const char *name, double max, double *out, char *why);
env_status env_choice(const char *name, const char *const *choices, unsigned *out, char *why);
/* A 0/1 flag: *out true for "1". */
env_status env_flag(const char *name, bool *out, char *why);

/* Warns (WARNING level, through sink: NULL is the stderr sink; defined in
 * diag.c, beside the log) that $name's text was not used: `NAME="TEXT" is not WHY; using FALLBACK`,
 * FALLBACK formatted from fmt. */
void env_warn_at(const salvo_log_sink *sink, const char *file, int line, const char *name,
                 const char *why, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

#define ENV_WARN(sink, name, why, ...) env_warn_at((sink), __FILE__, __LINE__, (name), (why), __VA_ARGS__)

#endif
