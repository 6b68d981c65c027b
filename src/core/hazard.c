#include "core/hazard.h"

static bool overlap(const hazard_range *r, const void *buffer, uint64_t begin, uint64_t end)
{
    return r->buffer == buffer && begin < r->end && r->begin < end;
}

bool hazard_conflicts(const hazard_set *h, const void *buffer, uint64_t begin, uint64_t end,
                      bool read, bool write)
{
    if (!read && !write)
        return false;
    for (uint32_t i = 0; i < h->count; i++) {
        const hazard_range *r = &h->r[i];
        /* read after read is the only pair that needs no ordering */
        if ((r->write || write) && overlap(r, buffer, begin, end))
            return true;
    }
    return false;
}

bool hazard_add(hazard_set *h, const void *buffer, uint64_t begin, uint64_t end, bool write)
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
    if (h->count == HAZARD_MAX)
        return false;
    h->r[h->count++] = (hazard_range){buffer, begin, end, write};
    return true;
}
