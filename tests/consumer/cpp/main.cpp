// salvo from C++17: the installed salvo.hpp (owning wrappers, exceptions),
// the interop header on the handles the wrappers lend, a kernel of its own
// (square.comp). Exit 77 without a device.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <salvo/salvo.hpp>
#include <salvo/salvo_vulkan.h>

#include "square.spv.h"

#if !SALVO_HPP_EXCEPTIONS
#error "built with exceptions: salvo.hpp should be in its exceptions mode"
#endif

namespace {

struct push_constants {
    std::uint32_t n;
    float k;
};

int run(salvo::device &dev)
{
    constexpr std::uint32_t n = 1000;
    std::vector<float> host(n);
    for (std::uint32_t i = 0; i < n; i++)
        host[i] = static_cast<float>(i % 17);

    salvo::buffer buf = dev.create_buffer(host, SALVO_DOMAIN_SHARED);
    salvo::kernel kernel = dev.create_kernel(square_spv);
    salvo_kernel_info ki = kernel.info();
    if (ki.push_constant_size != sizeof(push_constants) || ki.local_size[0] != 64)
        throw std::runtime_error("reflection: unexpected push size or local size");

    salvo::stream stream = dev.create_stream();
    stream.launch(kernel, {(n + 63) / 64}, salvo::bind(0, buf), push_constants{n, 0.5f});
    stream.synchronize();
    std::vector<float> out = buf.read_vector<float>();
    for (std::uint32_t i = 0; i < n; i++) {
        float want = host[i] * host[i] + 0.5f;
        if (out[i] != want) {
            std::fprintf(stderr, "v[%u] = %g, want %g\n", i, static_cast<double>(out[i]),
                         static_cast<double>(want));
            return 1;
        }
    }

    // Bad input is thrown as salvo::error with the C call's status.
    try {
        stream.launch(kernel, {1}, salvo::bind(0, buf), std::uint32_t{0}); // 4 bytes, not 8
        throw std::runtime_error("a launch with the wrong push size did not throw");
    } catch (const salvo::error &e) {
        if (e.status() != SALVO_ERROR_INVALID_ARGUMENT)
            throw std::runtime_error(std::string("unexpected error: ") + e.what());
    }

    // Interop: salvo's own Vulkan objects, queried through the loader entry
    // it hands out (this program does not link Vulkan itself).
    salvo_vk_handles h{};
    if (salvo_device_vk_handles(dev.get(), &h) != SALVO_OK)
        throw std::runtime_error("device_vk_handles failed");
    VkBuffer vb = VK_NULL_HANDLE;
    if (salvo_buffer_vk_handle(buf.get(), &vb) != SALVO_OK)
        throw std::runtime_error("buffer_vk_handle failed");
    if (!h.instance || !h.physical_device || !h.device || !h.queue || !h.get_instance_proc_addr ||
        vb == VK_NULL_HANDLE)
        throw std::runtime_error("device_vk_handles: a null handle");
    auto get_props = reinterpret_cast<PFN_vkGetPhysicalDeviceProperties>(
        h.get_instance_proc_addr(h.instance, "vkGetPhysicalDeviceProperties"));
    if (!get_props)
        throw std::runtime_error("vkGetPhysicalDeviceProperties not found");
    VkPhysicalDeviceProperties props{};
    get_props(h.physical_device, &props);
    salvo_device_info info = dev.info();
    if (std::strcmp(props.deviceName, info.name) != 0)
        throw std::runtime_error("Vulkan says " + std::string(props.deviceName) + ", salvo says " +
                                 info.name);

    salvo_stats stats = dev.stats();
    if (stats.validation_messages != 0) {
        std::fprintf(stderr, "%llu validation message(s)\n",
                     static_cast<unsigned long long>(stats.validation_messages));
        return 1;
    }
    std::printf("consumer_cpp (salvo::salvo, C++17, salvo.hpp) on %s: %u values checked, "
                "handles match\n",
                info.name, n);
    return 0;
}

} // namespace

int main()
{
    std::uint32_t count = 0;
    salvo_status st = salvo_device_enumerate(nullptr, &count);
    if (st != SALVO_OK || count == 0) {
        std::fprintf(stderr, "no Vulkan device: skipped (%s)\n", salvo_status_string(st));
        return 77;
    }
    try {
        salvo::device dev = salvo::device::create();
        return run(dev);
    } catch (const salvo::error &e) {
        if (e.status() == SALVO_ERROR_NO_DEVICE) {
            std::fprintf(stderr, "no Vulkan device: skipped\n");
            return 77;
        }
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
}
