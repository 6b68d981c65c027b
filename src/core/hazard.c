#include "core/hazard.h"

/* The scans are inline (hazard.h): a run of launches over one buffer grows
 * one entry. A new entry is rarer. */
bool hazard_append(hazard_set *h, const void *buffer, uint64_t begin, uint64_t end, bool write)
{
    if (h->count == HAZARD_MAX)
        return false;
    h->r[h->count++] = (hazard_range){buffer, begin, end, write};
    return true;
}
