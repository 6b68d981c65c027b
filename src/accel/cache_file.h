/*
 * The file a device's pipeline cache persists in (salvo_device_desc's
 * pipeline_cache_path). Plain C and POSIX, no Vulkan: the blob inside is
 * the driver's, opaque here.
 *
 * Layout: a 24-byte envelope, then the blob.
 *   bytes 0..7    magic "SALVOPC1"
 *   bytes 8..15   blob size in bytes, little-endian
 *   bytes 16..23  FNV-1a 64 hash of the blob, little-endian
 * A file is read back only when all three agree with what follows, so a
 * truncated, corrupted or foreign file never reaches the driver (which need
 * not survive garbage behind a valid-looking header). Whether the blob is
 * for this device and driver is for the caller to check.
 *
 * Writing goes to a temporary file beside the target (same directory, so
 * the rename stays on one file system), then renames it over the target:
 * readers see the old file or the new one, never a mix; of two writers,
 * the last rename wins with a whole file.
 */
#ifndef SALVO_ACCEL_CACHE_FILE_H
#define SALVO_ACCEL_CACHE_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "salvo/salvo.h"

enum {
    CACHE_FILE_HEADER = 24
};
/* Larger files are not read (a cache is a few MB; this bounds the memory
 * a stray file can make the device open take). */
#define CACHE_FILE_MAX ((size_t)1 << 30)

typedef enum cache_file_status {
    CACHE_FILE_OK = 0,
    CACHE_FILE_MISSING,  /* no such file: the first run */
    CACHE_FILE_INVALID,  /* unreadable, too short, too long, or not a whole cache file */
    CACHE_FILE_NO_MEMORY
} cache_file_status;

/* Read the blob stored at path into memory from alloc (the caller frees
 * *data with salvo_mem_free). On anything but CACHE_FILE_OK, *data is NULL,
 * *size 0, and reason (NUL-terminated, at most reason_size bytes) says why. */
cache_file_status cache_file_read(const salvo_allocator *alloc, const char *path, void **data,
                                  size_t *size, char *reason, size_t reason_size);

/* Store size bytes of data at path (temporary file, then rename). Returns
 * false, with reason, when any step fails; the target is then untouched and
 * no temporary file is left. */
bool cache_file_write(const salvo_allocator *alloc, const char *path, const void *data,
                      size_t size, char *reason, size_t reason_size);

#endif
