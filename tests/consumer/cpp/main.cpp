// salvo from C++17: the C API behind unique_ptr owners, the interop header,
// a kernel of its own (square.comp). Exit 77 without a device.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <salvo/salvo.h>
#include <salvo/salvo_vulkan.h>

#include "square.spv.h"

namespace {

template <typename T, void (*Destroy)(T *)>
struct deleter {
    void operator()(T *p) const { Destroy(p); }
};
using device_ptr = std::unique_ptr<salvo_device, deleter<salvo_device, salvo_device_destroy>>;
using buffer_ptr = std::unique_ptr<salvo_buffer, deleter<salvo_buffer, salvo_buffer_destroy>>;
using kernel_ptr = std::unique_ptr<salvo_kernel, deleter<salvo_kernel, salvo_kernel_destroy>>;
using stream_ptr = std::unique_ptr<salvo_stream, deleter<salvo_stream, salvo_stream_destroy>>;

void check(salvo_status st, const char *what)
{
    if (st != SALVO_OK)
        throw std::runtime_error(std::string(what) + ": " + salvo_status_string(st) + ": " +
                                 salvo_last_error());
}

struct push_constants {
    std::uint32_t n;
    float k;
};

int run(salvo_device *raw)
{
    device_ptr dev(raw);
    constexpr std::uint32_t n = 1000;
    std::vector<float> host(n);
    for (std::uint32_t i = 0; i < n; i++)
        host[i] = static_cast<float>(i % 17);

    salvo_buffer *b = nullptr;
    check(salvo_buffer_create(dev.get(), n * sizeof(float), SALVO_DOMAIN_SHARED, &b),
          "buffer_create");
    buffer_ptr buf(b);
    check(salvo_buffer_write(buf.get(), 0, host.data(), n * sizeof(float)), "buffer_write");

    salvo_kernel_desc kd{};
    kd.spirv = square_spv;
    kd.spirv_size = sizeof square_spv;
    salvo_kernel *k = nullptr;
    check(salvo_kernel_create(dev.get(), &kd, &k), "kernel_create");
    kernel_ptr kernel(k);
    salvo_kernel_info ki{};
    check(salvo_kernel_info_get(kernel.get(), &ki), "kernel_info_get");
    if (ki.push_constant_size != sizeof(push_constants) || ki.local_size[0] != 64)
        throw std::runtime_error("reflection: unexpected push size or local size");

    salvo_stream *s = nullptr;
    check(salvo_stream_create(dev.get(), nullptr, &s), "stream_create");
    stream_ptr stream(s);
    push_constants push{n, 0.5f};
    salvo_binding binding{};
    binding.binding = 0;
    binding.buffer = buf.get();
    const std::uint32_t groups[3] = {(n + 63) / 64, 1, 1};
    check(salvo_launch(stream.get(), kernel.get(), groups, &binding, 1, &push, sizeof push),
          "launch");
    check(salvo_stream_synchronize(stream.get()), "stream_synchronize");
    std::vector<float> out(n);
    check(salvo_buffer_read(buf.get(), 0, out.data(), n * sizeof(float)), "buffer_read");
    for (std::uint32_t i = 0; i < n; i++) {
        float want = host[i] * host[i] + 0.5f;
        if (out[i] != want) {
            std::fprintf(stderr, "v[%u] = %g, want %g\n", i, out[i], want);
            return 1;
        }
    }

    // Interop: salvo's own Vulkan objects, queried through the loader entry
    // it hands out (this program does not link Vulkan itself).
    salvo_vk_handles h{};
    check(salvo_device_vk_handles(dev.get(), &h), "device_vk_handles");
    VkBuffer vb = VK_NULL_HANDLE;
    check(salvo_buffer_vk_handle(buf.get(), &vb), "buffer_vk_handle");
    if (!h.instance || !h.physical_device || !h.device || !h.queue || !h.get_instance_proc_addr ||
        vb == VK_NULL_HANDLE)
        throw std::runtime_error("device_vk_handles: a null handle");
    auto get_props = reinterpret_cast<PFN_vkGetPhysicalDeviceProperties>(
        h.get_instance_proc_addr(h.instance, "vkGetPhysicalDeviceProperties"));
    if (!get_props)
        throw std::runtime_error("vkGetPhysicalDeviceProperties not found");
    VkPhysicalDeviceProperties props{};
    get_props(h.physical_device, &props);
    salvo_device_info info{};
    check(salvo_device_info_get(dev.get(), &info), "device_info_get");
    if (std::strcmp(props.deviceName, info.name) != 0)
        throw std::runtime_error("Vulkan says " + std::string(props.deviceName) + ", salvo says " +
                                 info.name);

    salvo_stats stats{};
    check(salvo_device_stats(dev.get(), &stats), "device_stats");
    if (stats.validation_messages != 0) {
        std::fprintf(stderr, "%llu validation message(s)\n",
                     static_cast<unsigned long long>(stats.validation_messages));
        return 1;
    }
    std::printf("consumer_cpp (salvo::salvo, C++17) on %s: %u values checked, handles match\n",
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
    salvo_device *dev = nullptr;
    st = salvo_device_create(nullptr, &dev);
    if (st == SALVO_ERROR_NO_DEVICE) {
        std::fprintf(stderr, "no Vulkan device: skipped\n");
        return 77;
    }
    try {
        check(st, "device_create");
        return run(dev);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
}
