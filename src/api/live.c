/* The live ring: every object a device holds, so that the ones a program
 * never destroyed are reclaimed at salvo_device_destroy. */
#include "api/internal.h"

void live_link_locked(salvo_device *dev, resource *r)
{
    resource_link_into(&dev->live, r);
}

void live_unlink_locked(salvo_device *dev, resource *r)
{
    (void)dev;
    resource_unlink(r);
}
