/*
 * Which launch must wait for which: the ranges a stream's launches touched
 * since its last barrier, so a barrier goes in only before a launch that
 * reads what an earlier one wrote (read-after-write), writes what an
 * earlier one read (write-after-read) or wrote (write-after-write).
 * Everything else may run concurrently.
 *
 * A set is per stream and starts empty at every batch (each batch opens
 * with a full barrier, which also orders it after other streams' batches
 * and staged transfers). Adjacent or overlapping ranges of one buffer with
 * the same access merge, so a run of launches over consecutive slices of a
 * buffer stays one entry.
 */
#ifndef SALVO_CORE_HAZARD_H
#define SALVO_CORE_HAZARD_H

#include <stdbool.h>
#include <stdint.h>

enum { HAZARD_MAX = 64 };

typedef struct hazard_range {
    const void *buffer; /* identity only */
    uint64_t begin, end;
    bool write;
} hazard_range;

typedef struct hazard_set {
    uint32_t count;
    hazard_range r[HAZARD_MAX];
} hazard_set;

static inline void hazard_reset(hazard_set *h)
{
    h->count = 0;
}

/* Whether touching [begin, end) of buffer (reading and/or writing) must wait
 * for what the set holds. Inline, as hazard_add's scan: every launch asks. */
static inline bool hazard_conflicts(const hazard_set *h, const void *buffer, uint64_t begin,
                                    uint64_t end, bool read, bool write)
{
    if (!read && !write)
        return false;
    for (uint32_t i = 0; i < h->count; i++) {
        const hazard_range *r = &h->r[i];
        /* read after read is the only pair that needs no ordering */
        if ((r->write || write) && r->buffer == buffer && begin < r->end && r->begin < end)
            return true;
    }
    return false;
}

/* hazard_add's new entry, where no entry grew to take the access (false:
 * the set is full). */
bool hazard_append(hazard_set *h, const void *buffer, uint64_t begin, uint64_t end, bool write);

/* Note an access (a read-write access is noted as a write, which conflicts
 * with everything a read would). Returns false when the set is full: the
 * caller then puts a barrier, resets and adds again. */
static inline bool hazard_add(hazard_set *h, const void *buffer, uint64_t begin, uint64_t end,
                              bool write)
{
    for (uint32_t i = 0; i < h->count; i++) {
        hazard_range *r = &h->r[i];
        /* touching or overlapping, same access: grow the entry */
        if (r->buffer == buffer && r->write == write && begin <= r->end && r->begin <= end) {
            if (begin < r->begin)
                r->begin = begin;
            if (end > r->end)
                r->end = end;
            return true;
        }
    }
    return hazard_append(h, buffer, begin, end, write);
}

#endif
