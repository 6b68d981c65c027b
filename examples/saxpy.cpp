/*
 * saxpy in C++: y = a * x + y over 1M floats on the default device,
 * checked against the CPU; examples/saxpy.c through salvo.hpp.
 *
 * Every object owns its handle and is destroyed at the end of its scope
 * (the device last: it was made first); a failed call throws
 * salvo::error, whose what() names the call, the status and salvo's
 * message.
 *
 * SPDX-License-Identifier: MIT
 */
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include <salvo/salvo.hpp>

#include "saxpy.spv.h" /* shaders/saxpy.comp, compiled at build time */

static void usage(std::FILE *to)
{
    std::fprintf(to, "usage: saxpy-cpp [--help]\n"
                     "  y = 2 x + y over 1M floats on the device $SALVO_DEVICE names, else the\n"
                     "  preferred one, checked against the CPU, through salvo.hpp. Exit 0 when\n"
                     "  every element is right.\n");
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        }
        std::fprintf(stderr, "saxpy-cpp: unknown argument '%s'\n", argv[i]);
        usage(stderr);
        return 2;
    }
    constexpr std::uint32_t n = 1u << 20;
    constexpr std::uint32_t local_size = 256; /* the kernel's local_size_x, spec constant 0 */
    const float a = 2.0f;

    /* Integer-valued inputs keep a * x + y exact in float, so the check can
     * demand equality whether or not the device fuses the multiply-add. */
    std::vector<float> hx(n), hy(n);
    for (std::uint32_t i = 0; i < n; i++) {
        hx[i] = static_cast<float>(i % 1000u);
        hy[i] = static_cast<float>(i % 7u);
    }

    try {
        salvo::device dev = salvo::device::create(); /* $SALVO_DEVICE, else the preferred one */
        salvo::buffer x = dev.create_buffer(hx);     /* DEVICE memory, written with hx */
        salvo::buffer y = dev.create_buffer(hy);
        salvo::kernel saxpy = dev.create_kernel(saxpy_spv, {{0, local_size}}, "saxpy");
        salvo::stream stream = dev.create_stream();

        /* Matches the shader's push-constant block { float a; uint n; }. */
        struct {
            float a;
            std::uint32_t n;
        } push = {a, n};
        stream.launch(saxpy, {(n + local_size - 1) / local_size},
                      {salvo::bind(0, x), salvo::bind(1, y)}, push);
        stream.synchronize();
        std::vector<float> out = y.read_vector<float>();

        for (std::uint32_t i = 0; i < n; i++) {
            float want = a * hx[i] + hy[i];
            if (out[i] != want) {
                std::fprintf(stderr, "saxpy: y[%u] = %g, expected %g\n", i,
                             static_cast<double>(out[i]), static_cast<double>(want));
                return 1;
            }
        }
        std::printf("saxpy (C++): y = %g * x + y over %u floats: correct\n", static_cast<double>(a),
                    n);
        return 0;
    } catch (const salvo::error &e) {
        std::fprintf(stderr, "saxpy: %s\n", e.what());
        return 1;
    }
}
