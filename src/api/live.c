/* The live ring: every object a device holds, so that the ones a program
 * never destroyed are reclaimed at salvo_device_destroy. */
#include "api/internal.h"

void live_link_locked(salvo_device *dev, live_link *l, retire_entry *release)
{
    l->release = release;
    l->next = dev->live.next;
    l->prev = &dev->live;
    dev->live.next->prev = l;
    dev->live.next = l;
}

void live_unlink_locked(salvo_device *dev, live_link *l)
{
    (void)dev;
    if (!l->prev)
        return;
    l->prev->next = l->next;
    l->next->prev = l->prev;
    l->prev = l->next = NULL;
}
