/*
 * volk's loader code, compiled into the library so that salvo needs no
 * libvulkan at link time (volk opens libvulkan.so.1 when a device is first
 * needed).
 *
 * volk's globals (one function pointer per Vulkan entry point, plus its own
 * volkInitialize, ...) are renamed to salvo_volk_* by the generated
 * salvo_volk_names.h (cmake/SalvoVolkNames.cmake), which must come before
 * volk.h here and in vulkan/vk_internal.h. Hidden visibility alone keeps
 * them out of the shared library's exports, but a static archive has no
 * such boundary: under their own names they would clash with an application
 * that links the Vulkan loader (its vkCreateInstance would resolve to our
 * data) or compiles its own volk (duplicate definitions).
 *
 * Debian ships volk as source in /usr/include; volk.c pulls in volk.h
 * itself. VOLK_NO_DEVICE_PROTOTYPES matches vulkan/vk_internal.h so both
 * see the same header configuration (versions of volk that honour it then
 * also drop the device-level globals nobody may call).
 */
#include "salvo_volk_names.h"

#define VOLK_NO_DEVICE_PROTOTYPES
#include <volk.c>
