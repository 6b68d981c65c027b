#define _POSIX_C_SOURCE 200809L
#include "base/env.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

env_status env_parse_uint(const char *text, uint64_t min, uint64_t max, uint64_t *out, char *why)
{
    if (!text || !*text)
        return ENV_UNSET;
    uint64_t x = 0;
    bool ok = true;
    for (const char *p = text; *p && ok; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (d > 9 || x > (UINT64_MAX - d) / 10)
            ok = false; /* not a digit, or past 2^64 - 1 */
        else
            x = x * 10 + d;
    }
    if (!ok || x < min || x > max) {
        snprintf(why, ENV_WHY_MAX, "an integer from %llu to %llu", (unsigned long long)min,
                 (unsigned long long)max);
        return ENV_BAD;
    }
    *out = x;
    return ENV_OK;
}

env_status env_parse_seconds(const char *text, double max, double *out, char *why)
{
    if (!text || !*text)
        return ENV_UNSET;
    /* strtod alone would take leading space, a sign, "inf", "nan" and hex:
     * a number of seconds is digits, a point and an exponent. */
    bool ok = strspn(text, "0123456789.eE+-") == strlen(text) &&
              (text[0] == '.' || (text[0] >= '0' && text[0] <= '9'));
    double x = 0;
    if (ok) {
        char *end = NULL;
        x = strtod(text, &end);
        ok = *end == '\0' && isfinite(x) && x >= 0 && x <= max;
    }
    if (!ok) {
        snprintf(why, ENV_WHY_MAX, "a number of seconds from 0 to %g", max);
        return ENV_BAD;
    }
    *out = x;
    return ENV_OK;
}

env_status env_parse_choice(const char *text, const char *const *choices, unsigned *out,
                            char *why)
{
    if (!text || !*text)
        return ENV_UNSET;
    for (unsigned i = 0; choices[i]; i++) {
        if (strcmp(text, choices[i]) == 0) {
            *out = i;
            return ENV_OK;
        }
    }
    size_t n = (size_t)snprintf(why, ENV_WHY_MAX, "one of");
    for (unsigned i = 0; choices[i] && n < ENV_WHY_MAX; i++)
        n += (size_t)snprintf(why + n, ENV_WHY_MAX - n, "%s %s", i ? "," : "", choices[i]);
    return ENV_BAD;
}

env_status env_uint(const char *name, uint64_t min, uint64_t max, uint64_t *out, char *why)
{
    return env_parse_uint(getenv(name), min, max, out, why);
}

env_status env_seconds(const char *name, double max, double *out, char *why)
{
    return env_parse_seconds(getenv(name), max, out, why);
}

env_status env_choice(const char *name, const char *const *choices, unsigned *out, char *why)
{
    return env_parse_choice(getenv(name), choices, out, why);
}

env_status env_flag(const char *name, bool *out, char *why)
{
    static const char *const flag[] = {"0", "1", NULL};
    unsigned i = 0;
    env_status st = env_choice(name, flag, &i, why);
    if (st == ENV_OK)
        *out = i == 1;
    return st;
}

