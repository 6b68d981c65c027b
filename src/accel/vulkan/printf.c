/*
 * Shader printf: the lines kernels print (debugPrintfEXT), as the
 * validation layer's debug printf reports them, made into log lines that
 * name their kernel. The layer (1.3.239, Debian 12's) says nothing of the
 * pipeline unless its printf_verbose setting is on, which only a settings
 * file can turn on: the kernel is named by the tag salvo puts before each
 * of its format strings (accel.h, ACCEL_PRINTF_TAG_OPEN), which the layer
 * prints with the line.
 */
#include "accel/vulkan/vk_internal.h"

#include <stdio.h>
#include <string.h>

void accel_vk_printf_line(const char *message, char *out, size_t size)
{
    if (!out || size == 0)
        return;
    out[0] = '\0';
    if (!message)
        return;
    const char *text = message;
    const char *open = strchr(message, ACCEL_PRINTF_TAG_OPEN);
    const char *close = open ? strchr(open + 1, ACCEL_PRINTF_TAG_CLOSE) : NULL;
    int n = 0;
    if (open && close) {
        text = close + 1;
        n = snprintf(out, size, "kernel '%.*s': ", (int)(close - open - 1), open + 1);
    } else {
        /* Untagged (a pipeline of the application's own): the text after
         * the header, "... | MessageID = 0x92394c89 | text". */
        const char *id = strstr(message, "| MessageID = ");
        const char *bar = id ? strstr(id + 2, " | ") : NULL;
        if (bar)
            text = bar + 3;
    }
    size_t at = n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
    size_t len = strlen(text);
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' '))
        len--;
    if (len > size - 1 - at)
        len = size - 1 - at;
    memcpy(out + at, text, len);
    out[at + len] = '\0';
}
