/* The pipeline cache's file; see cache_file.h. */
#define _POSIX_C_SOURCE 200809L
#include "accel/cache_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"

static const char MAGIC[8] = {'S', 'A', 'L', 'V', 'O', 'P', 'C', '1'};

static uint64_t fnv1a64(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static void put_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

__attribute__((format(printf, 3, 4))) static void say(char *reason, size_t reason_size,
                                                       const char *fmt, ...)
{
    if (!reason || !reason_size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, reason_size, fmt, ap);
    va_end(ap);
}

/* Whole reads and writes, across EINTR and short transfers. */
static bool read_all(int fd, unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        p += r;
        n -= (size_t)r;
    }
    return true;
}

static bool write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t r = write(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        p += r;
        n -= (size_t)r;
    }
    return true;
}

cache_file_status cache_file_read(const salvo_allocator *alloc, const char *path, void **data,
                                  size_t *size, char *reason, size_t reason_size)
{
    *data = NULL;
    *size = 0;
    if (reason && reason_size)
        reason[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        say(reason, reason_size, "cannot open '%s': %s", path, strerror(e));
        return e == ENOENT ? CACHE_FILE_MISSING : CACHE_FILE_INVALID;
    }
    cache_file_status st = CACHE_FILE_INVALID;
    unsigned char *buf = NULL;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        say(reason, reason_size, "'%s' is not a regular file", path);
        goto done;
    }
    if (sb.st_size <= CACHE_FILE_HEADER || (uint64_t)sb.st_size > CACHE_FILE_MAX) {
        say(reason, reason_size, "'%s' is %s for a pipeline cache file", path,
            sb.st_size <= CACHE_FILE_HEADER ? "too short" : "too long");
        goto done;
    }
    size_t n = (size_t)sb.st_size;
    buf = salvo_mem_alloc(alloc, n);
    if (!buf) {
        say(reason, reason_size, "out of host memory reading '%s'", path);
        st = CACHE_FILE_NO_MEMORY;
        goto done;
    }
    /* A file that changed size since fstat reads short or leaves bytes
     * over: either way not the file measured, and refused. */
    unsigned char extra;
    if (!read_all(fd, buf, n) || read(fd, &extra, 1) != 0) {
        say(reason, reason_size, "cannot read '%s' whole", path);
        goto done;
    }
    size_t blob = n - CACHE_FILE_HEADER;
    if (memcmp(buf, MAGIC, sizeof MAGIC) != 0 || get_le64(buf + 8) != blob ||
        get_le64(buf + 16) != fnv1a64(buf + CACHE_FILE_HEADER, blob)) {
        say(reason, reason_size, "'%s' is not a whole salvo pipeline cache file", path);
        goto done;
    }
    memmove(buf, buf + CACHE_FILE_HEADER, blob);
    *data = buf;
    *size = blob;
    buf = NULL;
    st = CACHE_FILE_OK;
done:
    salvo_mem_free(alloc, buf);
    close(fd);
    return st;
}

bool cache_file_write(const salvo_allocator *alloc, const char *path, const void *data,
                      size_t size, char *reason, size_t reason_size)
{
    if (reason && reason_size)
        reason[0] = '\0';
    static const char suffix[] = ".XXXXXX";
    size_t len = strlen(path);
    char *tmp = salvo_mem_alloc(alloc, len + sizeof suffix);
    if (!tmp) {
        say(reason, reason_size, "out of host memory writing '%s'", path);
        return false;
    }
    memcpy(tmp, path, len);
    memcpy(tmp + len, suffix, sizeof suffix);
    /* mkstemp: a fresh name (two writers never share one), mode 0600. */
    int fd = mkstemp(tmp);
    if (fd < 0) {
        say(reason, reason_size, "cannot create a temporary file beside '%s': %s", path,
            strerror(errno));
        salvo_mem_free(alloc, tmp);
        return false;
    }
    unsigned char header[CACHE_FILE_HEADER];
    memcpy(header, MAGIC, sizeof MAGIC);
    put_le64(header + 8, size);
    put_le64(header + 16, fnv1a64(data, size));
    /* No fsync: after a crash the file is the old one, the new one, or one
     * the envelope refuses; a cache lost is only time lost. */
    bool ok = write_all(fd, header, sizeof header) && write_all(fd, data, size);
    int e = errno;
    if (close(fd) != 0 && ok) {
        ok = false;
        e = errno;
    }
    if (ok && rename(tmp, path) != 0) {
        ok = false;
        e = errno;
    }
    if (!ok) {
        say(reason, reason_size, "cannot write '%s': %s", path, strerror(e));
        unlink(tmp);
    }
    salvo_mem_free(alloc, tmp);
    return ok;
}
