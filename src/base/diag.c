#include "base/diag.h"

#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[SALVO_ERROR_MAX];

/* Strip the directories: messages name the file, not the build tree. */
static const char *base_name(const char *file)
{
    const char *s = strrchr(file, '/');
    return s ? s + 1 : file;
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
}

salvo_status salvo_fail_at(const salvo_log_sink *sink, const char *file, int line,
                           salvo_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vformat_and_log(sink, SALVO_LOG_ERROR, file, line, last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

void salvo_log_at(const salvo_log_sink *sink, salvo_log_level level, const char *file, int line,
                  const char *fmt, ...)
{
    if (!sink || !sink->fn)
        return;
    /* Not the last error: only the reason is needed. */
    char buf[SALVO_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    sink->fn(sink->user, level, base_name(file), line, buf);
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
