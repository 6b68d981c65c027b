/*
 * volk's loader code, compiled into the library so that salvo needs no
 * libvulkan at link time and never collides with an application's own volk
 * or loader symbols (the build hides everything not marked SALVO_API).
 *
 * Debian ships volk as source in /usr/include; volk.c pulls in volk.h
 * itself. VOLK_NO_DEVICE_PROTOTYPES matches accel_vulkan.c so both see the
 * same header configuration (versions of volk that honour it then also
 * drop the device-level globals nobody may call).
 */
#define VOLK_NO_DEVICE_PROTOTYPES
#include <volk.c>
