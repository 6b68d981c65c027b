#include "base/diag.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/env.h"

static _Thread_local char last_error[SALVO_ERROR_MAX];

/* Strip the directories: messages name the file, not the build tree. */
static const char *base_name(const char *file)
{
    const char *s = strrchr(file, '/');
    return s ? s + 1 : file;
}

static const char *level_name(salvo_log_level level)
{
    switch (level) {
    case SALVO_LOG_DEBUG: return "debug";
    case SALVO_LOG_INFO: return "info";
    case SALVO_LOG_WARNING: return "warning";
    case SALVO_LOG_ERROR: return "error";
    case SALVO_LOG_OFF: break;
    }
    return "?";
}

void salvo_log_print(salvo_log_level threshold, salvo_log_level level, const char *file, int line,
                     const char *message)
{
    if (level < threshold || level >= SALVO_LOG_OFF)
        return;
    /* Built whole and written with one call, so that lines from several
     * threads do not interleave; a layer's message may span lines, and
     * stays on one. */
    char buf[2048];
    int n = line > 0 ? snprintf(buf, sizeof buf, "salvo: %s: ", level_name(level))
                     : snprintf(buf, sizeof buf, "salvo: %s: %s: ", level_name(level),
                                file ? file : "?");
    size_t at = n > 0 && (size_t)n < sizeof buf ? (size_t)n : 0;
    char place[96] = "";
    if (line > 0)
        snprintf(place, sizeof place, " (%s:%d)", file ? file : "?", line);
    const size_t room = sizeof buf - strlen(place) - 2; /* place, newline, NUL */
    const char *m = message ? message : "";
    for (; *m && at < room; m++)
        buf[at++] = *m == '\n' || *m == '\r' || *m == '\t' ? ' ' : *m;
    if (*m && at >= 3)
        memcpy(buf + at - 3, "...", 3);
    while (at > 0 && buf[at - 1] == ' ')
        at--;
    size_t pl = strlen(place);
    memcpy(buf + at, place, pl);
    at += pl;
    buf[at++] = '\n';
    buf[at] = '\0';
    fputs(buf, stderr);
}

/* SALVO_LOG's texts that were found unusable and said so on stderr: each
 * is named once per process, not at every message [log_env_lock]. */
static pthread_mutex_t log_env_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_env_warned[8][64];
static unsigned log_env_warned_count;

/* True the first time text is seen (texts past 63 bytes compare by their
 * start: they are all wrong anyway). */
static bool log_env_first_warning(const char *text)
{
    bool first = true;
    pthread_mutex_lock(&log_env_lock);
    unsigned n = log_env_warned_count < 8 ? log_env_warned_count : 8;
    for (unsigned i = 0; i < n && first; i++)
        first = strncmp(log_env_warned[i], text, sizeof log_env_warned[i] - 1) != 0;
    if (first) {
        snprintf(log_env_warned[log_env_warned_count % 8], sizeof log_env_warned[0], "%s", text);
        log_env_warned_count++;
    }
    pthread_mutex_unlock(&log_env_lock);
    return first;
}

salvo_log_level salvo_log_env_level(const salvo_log_sink *warn_to, salvo_log_level fallback)
{
    static const char *const names[] = {"off", "error", "warning", "info", "debug", NULL};
    static const salvo_log_level levels[] = {SALVO_LOG_OFF, SALVO_LOG_ERROR, SALVO_LOG_WARNING,
                                             SALVO_LOG_INFO, SALVO_LOG_DEBUG};
    const char *text = getenv("SALVO_LOG");
    unsigned i = 0;
    char why[ENV_WHY_MAX];
    env_status st = env_parse_choice(text, names, &i, why);
    if (st == ENV_OK)
        return levels[i];
    if (st == ENV_BAD) {
        if (warn_to && warn_to->fn) {
            ENV_WARN(warn_to, "SALVO_LOG", why, "%s", level_name(fallback));
        } else if (log_env_first_warning(text)) {
            /* Printed here, not through the sink: the sink asks this
             * function for its level. */
            char msg[ENV_WHY_MAX + 160];
            snprintf(msg, sizeof msg, "SALVO_LOG=\"%.64s%s\" is not %s; using %s", text,
                     strlen(text) > 64 ? "..." : "", why, level_name(fallback));
            salvo_log_print(fallback, SALVO_LOG_WARNING, base_name(__FILE__), __LINE__, msg);
        }
    }
    return fallback;
}


/* buf receives "file:line: reason" (what salvo_last_error shows, where no
 * file or line travels beside it); the callback receives the reason alone,
 * as it is handed file and line as arguments of their own. */
static void vformat_and_log(const salvo_log_sink *sink, salvo_log_level level, const char *file,
                            int line, char *buf, size_t size, const char *fmt, va_list ap)
{
    int n = snprintf(buf, size, "%s:%d: ", base_name(file), line);
    if (n < 0 || (size_t)n >= size)
        n = 0; /* no room for the place: the reason alone */
    vsnprintf(buf + n, size - (size_t)n, fmt, ap);
    if (sink && sink->fn)
        sink->fn(sink->user, level, base_name(file), line, buf + n);
    else
        salvo_log_print(salvo_log_env_level(NULL, SALVO_LOG_WARNING), level, base_name(file), line,
                        buf + n);
}

salvo_status salvo_fail_at(const salvo_log_sink *sink, const char *file, int line,
                           salvo_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    /* A status that is no error (SALVO_TIMEOUT: a bounded wait expired)
     * is said at the info level: a program that polls sees no error line
     * a poll. salvo_last_error() says it all the same. */
    vformat_and_log(sink, status < 0 ? SALVO_LOG_ERROR : SALVO_LOG_INFO, file, line, last_error,
                    sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

void salvo_log_at(const salvo_log_sink *sink, salvo_log_level level, const char *file, int line,
                  const char *fmt, ...)
{
    salvo_log_level threshold = SALVO_LOG_DEBUG;
    if (!sink || !sink->fn) {
        threshold = salvo_log_env_level(NULL, SALVO_LOG_WARNING);
        if (level < threshold)
            return;
    }
    /* Not the last error: only the reason is needed. */
    char buf[SALVO_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (sink && sink->fn)
        sink->fn(sink->user, level, base_name(file), line, buf);
    else
        salvo_log_print(threshold, level, base_name(file), line, buf);
}

void salvo_clear_error(void)
{
    last_error[0] = '\0';
}

void salvo_set_error(const char *text)
{
    snprintf(last_error, sizeof last_error, "%s", text ? text : "");
}

const char *salvo_last_error(void)
{
    return last_error;
}

const char *salvo_status_string(salvo_status status)
{
    switch (status) {
    case SALVO_OK: return "SALVO_OK";
    case SALVO_NOT_READY: return "SALVO_NOT_READY";
    case SALVO_TIMEOUT: return "SALVO_TIMEOUT";
    case SALVO_CANCELLED: return "SALVO_CANCELLED";
    case SALVO_ERROR_INVALID_ARGUMENT: return "SALVO_ERROR_INVALID_ARGUMENT";
    case SALVO_ERROR_OUT_OF_HOST_MEMORY: return "SALVO_ERROR_OUT_OF_HOST_MEMORY";
    case SALVO_ERROR_OUT_OF_DEVICE_MEMORY: return "SALVO_ERROR_OUT_OF_DEVICE_MEMORY";
    case SALVO_ERROR_DEVICE_LOST: return "SALVO_ERROR_DEVICE_LOST";
    case SALVO_ERROR_UNSUPPORTED: return "SALVO_ERROR_UNSUPPORTED";
    case SALVO_ERROR_NO_DEVICE: return "SALVO_ERROR_NO_DEVICE";
    case SALVO_ERROR_BATCH_FAILED: return "SALVO_ERROR_BATCH_FAILED";
    case SALVO_ERROR_INVALID_STATE: return "SALVO_ERROR_INVALID_STATE";
    case SALVO_ERROR_UNKNOWN: return "SALVO_ERROR_UNKNOWN";
    case SALVO_ERROR_TIMEOUT: return "SALVO_ERROR_TIMEOUT";
    }
    return status < 0 ? "SALVO_ERROR (unknown code)" : "SALVO_STATUS (unknown code)";
}

/* Declared in env.h: beside the log it writes to, so that parsing the
 * environment (env.c) needs nothing of the log. */
void env_warn_at(const salvo_log_sink *sink, const char *file, int line, const char *name,
                 const char *why, const char *fmt, ...)
{
    char fallback[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fallback, sizeof fallback, fmt, ap);
    va_end(ap);
    const char *text = getenv(name);
    /* The text as it is, up to a length that keeps the line readable. */
    salvo_log_at(sink, SALVO_LOG_WARNING, file, line, "%s=\"%.64s%s\" is not %s; using %s", name,
                 text ? text : "", text && strlen(text) > 64 ? "..." : "", why, fallback);
}
