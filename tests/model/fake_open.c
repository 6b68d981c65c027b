/*
 * model_random's door to the fake accelerator (--fake-queues): a device
 * opened on it. device_create_with_accel is the library's internal entry
 * (api/internal.h, as the unit suites use it); it is kept in this file so
 * that the library's internal headers stay out of model.c.
 */
#include "api/internal.h"
#include "support/fake_accel.h"

salvo_status model_fake_device(const salvo_device_desc *desc, fake_accel *f, salvo_device **out);

salvo_status model_fake_device(const salvo_device_desc *desc, fake_accel *f, salvo_device **out)
{
    return device_create_with_accel(desc, fake_accel_get(f), out);
}
