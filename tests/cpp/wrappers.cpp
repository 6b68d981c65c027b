/*
 * salvo.hpp on a real device (lavapipe in CI), validation layer on, in the
 * exceptions mode: every wrapper used for real, its results read back
 * from the device; moves (the moved-from object is empty, the object is
 * destroyed once); objects leaving their scope while their work is still
 * pending (the work completes, its results are right, and the live
 * counters and the device's host allocations come back to zero); errors
 * thrown with the status of the C call. Exit 77 without a device.
 */
#include <array>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <numeric>
#include <string>
#include <unistd.h>
#include <vector>

#include "harness.hpp"

#include "add.spv.h"
#include "arr_add.spv.h"
#include "copy.spv.h"
#include "img_add.spv.h"
#include "img_sample.spv.h"
#include "saxpy.spv.h"

static_assert(SALVO_HPP_EXCEPTIONS == 1, "this suite is the exceptions mode's");

namespace {

constexpr std::uint32_t N = 1024;

struct push2 {
    std::uint32_t n;
    std::uint32_t value;
};

salvo::device open(std::uint32_t batch_size = 0)
{
    return salvo::device::create(harness::device_desc(batch_size));
}

salvo::kernel add_kernel(salvo::device &dev)
{
    return dev.create_kernel(add_spv, {{0, 64}}, "add"); /* data[i] += value, i < n */
}

salvo::kernel copy_kernel(salvo::device &dev)
{
    return dev.create_kernel(copy_spv); /* dst[i] = src[i] + add, i < n */
}

/* Every object of the device released, nothing pending, no validation
 * message: after a device synchronize, which runs the queued releases. */
void expect_nothing_live(salvo::device &dev)
{
    EXPECT_EQ(dev.synchronize(), SALVO_OK);
    salvo_stats s = dev.stats();
    EXPECT_EQ(s.live_buffers, 0u);
    EXPECT_EQ(s.live_buffer_bytes, 0u);
    EXPECT_EQ(s.live_kernels, 0u);
    EXPECT_EQ(s.live_streams, 0u);
    EXPECT_EQ(s.live_events, 0u);
    EXPECT_EQ(s.live_gates, 0u);
    EXPECT_EQ(s.live_graphs, 0u);
    EXPECT_EQ(s.live_images, 0u);
    EXPECT_EQ(s.live_samplers, 0u);
    EXPECT_EQ(s.releases_pending, 0u);
    EXPECT_EQ(s.launches_pending, 0u);
    EXPECT_EQ(s.validation_messages, 0u);
}

/* Every element of v equals want; reports the first that does not. */
template <typename T>
bool all_equal(const std::vector<T> &v, T want, const char *what)
{
    for (std::size_t i = 0; i < v.size(); i++)
        if (v[i] != want) {
            std::fprintf(stderr, "%s[%zu] = %g, want %g\n", what, i, static_cast<double>(v[i]),
                         static_cast<double>(want));
            return false;
        }
    return true;
}

/* The call throws salvo::error with this status, naming this C function. */
template <typename F>
void expect_throw(salvo_status want, const char *call, F &&f, const char *file, int line)
{
    try {
        f();
        std::fprintf(stderr, "%s:%d: no exception (want %s from %s)\n", file, line,
                     salvo_status_string(want), call);
        harness::failures()++;
    } catch (const salvo::error &e) {
        if (e.status() != want || std::string(e.call()) != call || std::strlen(e.detail()) == 0) {
            std::fprintf(stderr, "%s:%d: got \"%s\" (want %s from %s, with a message)\n", file,
                         line, e.what(), salvo_status_string(want), call);
            harness::failures()++;
        }
    }
}
#define EXPECT_THROW(status, call, expr)                                                           \
    expect_throw(                                                                                  \
        status, call, [&] { (void)(expr); }, __FILE__, __LINE__)

/* ------------------------------------------------------------------ */
/* A host allocator that counts, to see a device free all it took       */
/* ------------------------------------------------------------------ */

struct counts {
    std::atomic<long> allocs{0}, frees{0};
};

void *count_alloc(void *user, std::size_t size)
{
    void *p = std::malloc(size);
    if (p)
        static_cast<counts *>(user)->allocs++;
    return p;
}

void count_free(void *user, void *ptr)
{
    if (ptr)
        static_cast<counts *>(user)->frees++;
    std::free(ptr);
}

/* ------------------------------------------------------------------ */
/* Tests                                                                */
/* ------------------------------------------------------------------ */

void device_queries()
{
    std::vector<salvo_device_entry> entries = salvo::device::enumerate();
    REQUIRE(!entries.empty());
    salvo::device dev = open();
    REQUIRE(dev);
    salvo_device_info info = dev.info();
    bool listed = false;
    for (const salvo_device_entry &e : entries)
        listed = listed || std::strcmp(e.name, info.name) == 0;
    EXPECT(listed);
    EXPECT(!dev.is_lost());
    std::uint32_t usage = dev.format_support(SALVO_FORMAT_R32_UINT);
    EXPECT((usage & SALVO_IMAGE_STORAGE) != 0);
    EXPECT_THROW(SALVO_ERROR_INVALID_ARGUMENT, "salvo_image_format_support",
                 dev.format_support(SALVO_FORMAT_UNDEFINED));

    /* Memory: a 4 MiB buffer counted in some heap's allocated bytes. */
    salvo_memory_info before = dev.memory_info();
    REQUIRE(before.heap_count >= 1);
    {
        salvo::buffer big = dev.create_buffer(4u << 20);
        salvo_memory_info with = dev.memory_info();
        std::uint64_t grew = 0;
        for (std::uint32_t h = 0; h < with.heap_count; h++)
            grew += with.heaps[h].allocated - before.heaps[h].allocated;
        EXPECT(grew >= (4u << 20));
    }

    /* A trace of one launch: a JSON file with its events. */
    std::string path = "/tmp/salvo_cpp_trace_" + std::to_string(getpid()) + ".json";
    salvo_status traced = harness::status_of([&] { return dev.trace_start(path.c_str()); });
    EXPECT(traced == SALVO_OK || traced == SALVO_ERROR_UNSUPPORTED);
    {
        salvo::kernel add = add_kernel(dev);
        salvo::buffer x = dev.create_buffer(N * 4);
        salvo::stream s = dev.create_stream();
        s.fill(x, 0);
        s.launch(add, {N / 64}, salvo::bind(0, x), push2{N, 1});
        EXPECT_EQ(s.synchronize(), SALVO_OK);
    }
    if (traced == SALVO_OK) {
        EXPECT_EQ(dev.trace_stop(), SALVO_OK);
        std::ifstream in(path);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        EXPECT(text.find("traceEvents") != std::string::npos);
        EXPECT(text.find("add") != std::string::npos);
        std::remove(path.c_str());
    }
    expect_nothing_live(dev);
}

void saxpy_matches_cpu()
{
    salvo::device dev = open();
    {
        const std::uint32_t n = 10000;
        std::vector<float> hx(n), hy(n);
        for (std::uint32_t i = 0; i < n; i++) {
            hx[i] = static_cast<float>(i % 1000);
            hy[i] = static_cast<float>(i % 7);
        }
        salvo::buffer x = dev.create_buffer(hx);
        salvo::buffer y = dev.create_buffer(hy);
        EXPECT_EQ(x.size(), n * sizeof(float));
        salvo::kernel k = dev.create_kernel(saxpy_spv, {{0, 64}}, "saxpy");
        salvo_kernel_info ki = k.info();
        EXPECT_EQ(ki.push_constant_size, 8u);
        EXPECT_EQ(ki.binding_count, 2u);
        EXPECT_EQ(ki.local_size[0], 64u);
        EXPECT(std::string(ki.name) == "saxpy");
        salvo::stream s = dev.create_stream();
        struct {
            float a;
            std::uint32_t n;
        } push = {2.0f, n};
        s.launch(k, {(n + 63) / 64}, {salvo::bind(0, x), salvo::bind(1, y)}, push);
        EXPECT_EQ(s.synchronize(), SALVO_OK);
        std::vector<float> out = y.read_vector<float>();
        REQUIRE_EQ(out.size(), n);
        for (std::uint32_t i = 0; i < n; i++)
            if (out[i] != 2.0f * hx[i] + hy[i]) {
                std::fprintf(stderr, "y[%u] = %g, want %g\n", i, static_cast<double>(out[i]),
                             static_cast<double>(2.0f * hx[i] + hy[i]));
                FAIL("saxpy result");
                break;
            }
    }
    expect_nothing_live(dev);
}

void typed_transfers()
{
    salvo::device dev = open();
    {
        std::vector<std::uint32_t> v(64);
        std::iota(v.begin(), v.end(), 0u);
        salvo::buffer b = dev.create_buffer(64 * 4);
        EXPECT_EQ(b.write(v), SALVO_OK);
        std::uint32_t mid[8] = {};
        EXPECT_EQ(b.read(mid, 8, 16 * 4), SALVO_OK); /* values 16..23 */
        for (std::uint32_t i = 0; i < 8; i++)
            EXPECT_EQ(mid[i], 16 + i);
        const std::uint32_t four[4] = {1000, 1001, 1002, 1003};
        EXPECT_EQ(b.write(four, 4, 8 * 4), SALVO_OK);
        for (std::uint32_t i = 0; i < 4; i++)
            v[8 + i] = 1000 + i;
        EXPECT(b.read_vector<std::uint32_t>() == v);
        EXPECT(b.read_vector<std::uint32_t>(3, 9 * 4) ==
               (std::vector<std::uint32_t>{1001, 1002, 1003}));
        /* Nothing to read is an empty vector (it was a refusal naming a
         * NULL host pointer): none asked for, or fewer bytes than one. */
        EXPECT(b.read_vector<std::uint32_t>(0, 8).empty());
        EXPECT(b.read_vector<std::uint32_t>(0, b.size()).empty());
        salvo::buffer two = dev.create_buffer(2);
        EXPECT(two.read_vector<std::uint32_t>().empty());
        std::vector<std::uint32_t> part(4);
        EXPECT_EQ(b.read(part, 60 * 4), SALVO_OK);
        EXPECT(part == (std::vector<std::uint32_t>{60, 61, 62, 63}));
        std::uint16_t halves[2] = {0xBEEF, 0xCAFE};
        EXPECT_EQ(b.write_bytes(0, halves, sizeof halves), SALVO_OK);
        std::uint32_t word = 0;
        EXPECT_EQ(b.read_bytes(0, &word, 4), SALVO_OK);
        EXPECT_EQ(word, 0xCAFEBEEFu);

        /* Mapped: what the host writes, the buffer holds, and back. */
        salvo::buffer shared = dev.create_buffer(v, SALVO_DOMAIN_SHARED);
        std::uint32_t *p = shared.map<std::uint32_t>();
        REQUIRE(p != nullptr);
        EXPECT_EQ(p[63], 63u);
        p[5] = 555;
        EXPECT_EQ(shared.read_vector<std::uint32_t>(1, 5 * 4)[0], 555u);
        EXPECT(shared.map() == static_cast<void *>(p));

        /* Stream-ordered: write, fill, copy, read. */
        salvo::stream s = dev.create_stream();
        salvo::buffer f = dev.create_buffer(64 * 4);
        salvo::buffer c = dev.create_buffer(64 * 4, SALVO_DOMAIN_HOST);
        std::vector<std::uint32_t> sw(16, 77);
        EXPECT_EQ(s.write(b, sw, 32 * 4), SALVO_OK); /* b[32..48) = 77 */
        sw.assign(16, 0);                            /* copied at the call: changing it is fine */
        EXPECT_EQ(s.fill(f, 0xABCDu), SALVO_OK);
        EXPECT_EQ(s.fill(f, 4 * 4, 8 * 4, 7u), SALVO_OK); /* f[4..12) = 7 */
        EXPECT_EQ(s.copy(b, c), SALVO_OK);
        EXPECT_EQ(s.copy(f, 4 * 4, c, 0, 2 * 4), SALVO_OK); /* c[0..2) = 7 */
        const std::uint32_t one = 9;
        EXPECT_EQ(s.write(c, &one, 1, 63 * 4), SALVO_OK);
        std::vector<std::uint32_t> got_c(64), got_f(64);
        std::uint32_t got_b[2] = {};
        EXPECT_EQ(s.read(c, got_c), SALVO_OK);
        EXPECT_EQ(s.read(f, got_f), SALVO_OK);
        EXPECT_EQ(s.read(b, got_b, 2, 47 * 4), SALVO_OK);
        EXPECT_EQ(s.synchronize(), SALVO_OK);
        for (std::uint32_t i = 0; i < 64; i++) {
            std::uint32_t want_b = i >= 32 && i < 48 ? 77 : v[i];
            if (i == 0)
                want_b = 0xCAFEBEEF;
            std::uint32_t want_c = i < 2 ? 7 : i == 63 ? 9 : want_b;
            EXPECT_EQ(got_c[i], want_c);
            EXPECT_EQ(got_f[i], i >= 4 && i < 12 ? 7u : 0xABCDu);
        }
        EXPECT_EQ(got_b[0], 77u);
        EXPECT_EQ(got_b[1], 48u);
    }
    expect_nothing_live(dev);
}

/* a is moved twice and adopted back: one object all along, destroyed once. */
template <typename T, typename Make>
void check_moves(salvo::device &dev, Make make, std::uint64_t salvo_stats::*live, const char *what)
{
    std::fprintf(stderr, "  moves: %s\n", what);
    const std::uint64_t base = dev.stats().*live;
    {
        T a = make();
        REQUIRE(a);
        auto *raw = a.get();
        EXPECT_EQ(dev.stats().*live, base + 1);
        T b(std::move(a));
        EXPECT(!a);
        EXPECT(a.get() == nullptr);
        EXPECT(b.get() == raw);
        T c;
        EXPECT(!c);
        c = std::move(b);
        EXPECT(!b);
        EXPECT(c.get() == raw);
        EXPECT_EQ(dev.stats().*live, base + 1);

        T d = make(); /* replaced by c's: destroyed by the assignment */
        EXPECT(d.get() != raw);
        EXPECT_EQ(dev.stats().*live, base + 2);
        d = std::move(c);
        EXPECT(!c);
        EXPECT(d.get() == raw);
        EXPECT_EQ(dev.synchronize(), SALVO_OK);
        EXPECT_EQ(dev.stats().*live, base + 1);

        auto *released = d.release();
        EXPECT(!d);
        EXPECT(released == raw);
        T e(released); /* adopted again */
        EXPECT(e.get() == raw);
        EXPECT_EQ(dev.synchronize(), SALVO_OK);
        EXPECT_EQ(dev.stats().*live, base + 1);
    }
    EXPECT_EQ(dev.synchronize(), SALVO_OK);
    EXPECT_EQ(dev.stats().*live, base);
}

void moves_leave_empty_and_destroy_once()
{
    salvo::device dev = open();
    {
        salvo::kernel add = add_kernel(dev);
        salvo::buffer x = dev.create_buffer(N * 4);
        salvo::stream s = dev.create_stream();
        salvo_image_desc id{};
        id.type = SALVO_IMAGE_2D;
        id.format = SALVO_FORMAT_R32_UINT;
        id.width = 8;
        id.height = 8;
        check_moves<salvo::buffer>(
            dev, [&] { return dev.create_buffer(256); }, &salvo_stats::live_buffers, "buffer");
        check_moves<salvo::kernel>(
            dev, [&] { return add_kernel(dev); }, &salvo_stats::live_kernels, "kernel");
        check_moves<salvo::stream>(
            dev, [&] { return dev.create_stream(); }, &salvo_stats::live_streams, "stream");
        check_moves<salvo::event>(
            dev, [&] { return dev.create_event(); }, &salvo_stats::live_events, "event");
        check_moves<salvo::gate>(
            dev, [&] { return dev.create_gate(); }, &salvo_stats::live_gates, "gate");
        check_moves<salvo::image>(
            dev, [&] { return dev.create_image(id); }, &salvo_stats::live_images, "image");
        check_moves<salvo::sampler>(
            dev, [&] { return dev.create_sampler(); }, &salvo_stats::live_samplers, "sampler");
        check_moves<salvo::graph>(
            dev,
            [&] {
                s.begin_capture();
                s.launch(add, {N / 64}, salvo::bind(0, x), push2{N, 1});
                return s.end_capture();
            },
            &salvo_stats::live_graphs, "graph");

        /* A moved-from object is empty to the C API too. */
        salvo::stream moved = std::move(s);
        EXPECT_THROW(SALVO_ERROR_INVALID_ARGUMENT, "salvo_launch",
                     s.launch(add, {N / 64}, salvo::bind(0, x), push2{N, 1}));
        EXPECT_EQ(moved.launch(add, {N / 64}, salvo::bind(0, x), push2{N, 1}), SALVO_OK);
        EXPECT_EQ(moved.synchronize(), SALVO_OK);
    }
    expect_nothing_live(dev);

    /* The device itself: moved, the source is empty; destroyed once at
     * scope exit, which gives back every allocation it made. */
    static counts c;
    salvo_allocator alloc{count_alloc, count_free, &c};
    {
        salvo_device_desc desc = harness::device_desc();
        desc.allocator = &alloc;
        salvo::device a = salvo::device::create(desc);
        salvo_device *raw = a.get();
        salvo::device b(std::move(a));
        EXPECT(!a);
        EXPECT(b.get() == raw);
        EXPECT_THROW(SALVO_ERROR_INVALID_ARGUMENT, "salvo_device_stats", a.stats());
        salvo::buffer x = b.create_buffer(64);
        EXPECT_EQ(b.stats().live_buffers, 1u);
        EXPECT(c.allocs.load() > 0);
    }
    EXPECT_EQ(c.allocs.load(), c.frees.load());
}

/* Objects leave their scope with their work recorded, submitted or held
 * behind a gate; the work still runs, its results are right, and all is
 * released once it is over. */
void scope_exit_with_work_pending()
{
    static counts c;
    salvo_allocator alloc{count_alloc, count_free, &c};
    salvo_device_desc desc = harness::device_desc();
    desc.allocator = &alloc;
    {
        salvo::device dev = salvo::device::create(desc);
        salvo::buffer out = dev.create_buffer(N * 4, SALVO_DOMAIN_HOST);
        std::vector<std::uint32_t> seen(N, 0xFFFFFFFFu); /* a stream read's, outlives the stream */
        {
            salvo::kernel add = add_kernel(dev);
            salvo::kernel copy = copy_kernel(dev);
            salvo::buffer x = dev.create_buffer(N * 4);
            salvo::gate g = dev.create_gate();
            /* One batch for it all: a launch that needed a batch slot held
             * behind the gate would wait for the gate itself. */
            salvo_stream_desc sd{};
            sd.batch_size = 256;
            sd.first_batch = 256;
            salvo::stream s = dev.create_stream(sd);
            s.fill(x, 0);
            s.wait(g, 1); /* everything from here waits for the gate */
            for (int i = 0; i < 100; i++)
                s.launch(add, {N / 64}, salvo::bind(0, x), push2{N, 1});
            s.read(x, seen);
            s.launch(copy, {N / 64}, {salvo::bind(0, x), salvo::bind(1, out)}, push2{N, 5});
            salvo_stats st = dev.stats();
            EXPECT(st.launches_pending > 0);
            EXPECT_EQ(g.value(), 0u);
            /* Out of scope: stream, gate (raised by its destroy), x, kernels. */
        }
        salvo_stats st = dev.stats();
        EXPECT(st.launches_pending > 0 || st.releases_pending > 0);
        EXPECT_EQ(dev.synchronize(), SALVO_OK);
        EXPECT(all_equal(seen, 100u, "seen"));
        EXPECT(all_equal(out.read_vector<std::uint32_t>(), 105u, "out"));
        st = dev.stats();
        EXPECT_EQ(st.live_kernels, 0u);
        EXPECT_EQ(st.live_streams, 0u);
        EXPECT_EQ(st.live_gates, 0u);
        EXPECT_EQ(st.live_buffers, 1u);
        EXPECT_EQ(st.live_buffer_bytes, N * 4u);
        EXPECT_EQ(st.releases_pending, 0u);

        /* A graph and its buffer out of scope while replays are pending. */
        salvo::stream s = dev.create_stream();
        {
            salvo::kernel add = add_kernel(dev);
            s.begin_capture();
            s.launch(add, {N / 64}, salvo::bind(0, out), push2{N, 2});
            salvo::graph gr = s.end_capture();
            for (int i = 0; i < 5; i++)
                s.launch(gr);
        }
        EXPECT(dev.stats().live_graphs + dev.stats().releases_pending > 0);
        EXPECT_EQ(s.synchronize(), SALVO_OK);
        EXPECT(all_equal(out.read_vector<std::uint32_t>(), 115u, "out after the graph"));
        s.reset();
        out.reset();
        expect_nothing_live(dev);
    }
    /* The device gave back every host allocation: nothing leaked. */
    EXPECT(c.allocs.load() > 0);
    EXPECT_EQ(c.allocs.load(), c.frees.load());
}

/* Offsets, sizes and array elements reach the launch as given, from
 * each kind of bindings view. */
void bindings_offsets_and_arrays()
{
    salvo::device dev = open();
    {
        salvo_device_info info = dev.info();
        const std::uint32_t align =
            static_cast<std::uint32_t>(info.min_storage_buffer_offset_alignment > 256
                                           ? info.min_storage_buffer_offset_alignment
                                           : 256);
        const std::uint32_t words = 4 * align / 4;
        salvo::kernel add = add_kernel(dev);
        salvo::kernel arr = dev.create_kernel(arr_add_spv);
        salvo::buffer x = dev.create_buffer(words * 4), a = dev.create_buffer(256),
                      b = dev.create_buffer(256);
        salvo::stream s = dev.create_stream();
        s.fill(x, 0);
        s.fill(a, 0);
        s.fill(b, 10);
        /* 64 words at the second aligned offset. */
        s.launch(add, {1}, salvo::bind(0, x, align, 256), push2{64, 3});
        /* The array's two elements, from a std::vector and a std::array. */
        std::vector<salvo_binding> both = {salvo::bind_element(0, 0, a),
                                           salvo::bind_element(0, 1, b)};
        s.launch(arr, {1}, both, push2{64, 2});
        std::array<salvo_binding, 2> swapped = {
            {salvo::bind_element(0, 1, a), salvo::bind_element(0, 0, b)}};
        s.launch(arr, {1}, swapped, push2{64, 1});
        const salvo_binding only_b[2] = {salvo::bind_element(0, 0, b, 0, 128),
                                         salvo::bind_element(0, 1, b, 128, 128)};
        s.launch(arr, {1}, only_b, push2{32, 100});
        EXPECT_EQ(s.synchronize(), SALVO_OK);
        std::vector<std::uint32_t> vx = x.read_vector<std::uint32_t>();
        for (std::uint32_t i = 0; i < words; i++)
            EXPECT_EQ(vx[i], i >= align / 4 && i < align / 4 + 64 ? 3u : 0u);
        EXPECT(all_equal(a.read_vector<std::uint32_t>(), 3u, "a"));
        EXPECT(all_equal(b.read_vector<std::uint32_t>(), 113u, "b"));
    }
    expect_nothing_live(dev);
}

/* Indirect launches, pattern fills and image-to-image copies. */
void indirect_patterns_and_image_copies()
{
    salvo::device dev = open();
    {
        salvo::kernel add = add_kernel(dev);
        salvo::buffer x = dev.create_buffer(N * 4);
        salvo::buffer counts = dev.create_buffer(std::vector<std::uint32_t>{0, 0, 0, N / 64, 1, 1});
        salvo::buffer bytes = dev.create_buffer(64, SALVO_DOMAIN_HOST);
        salvo::stream s = dev.create_stream();
        s.fill(x, 0);
        s.fill(bytes, 0);
        /* Counts at offset 12: all of x; at offset 0: no workgroup. */
        EXPECT_EQ(s.launch_indirect(add, counts, 12, salvo::bind(0, x), push2{N, 5}), SALVO_OK);
        EXPECT_EQ(s.launch_indirect(add, counts, 0, salvo::bind(0, x), push2{N, 100}), SALVO_OK);
        EXPECT_EQ(s.fill_pattern(bytes, 3, 5, std::uint8_t{0xAB}), SALVO_OK);
        EXPECT_EQ(s.fill_pattern(bytes, 10, 6, std::uint16_t{0x1234}), SALVO_OK);

        salvo_image_desc d{};
        d.type = SALVO_IMAGE_2D;
        d.format = SALVO_FORMAT_R32_UINT;
        d.width = 8;
        d.height = 4;
        salvo::image a = dev.create_image(d), b = dev.create_image(d);
        std::vector<std::uint32_t> texels(32);
        std::iota(texels.begin(), texels.end(), 1u);
        EXPECT_EQ(a.write(texels), SALVO_OK);
        EXPECT_EQ(b.write(std::vector<std::uint32_t>(32, 0)), SALVO_OK);
        salvo_image_region from{}, to{};
        from.width = 2;
        from.height = 2;
        to.x = 6;
        to.y = 2;
        EXPECT_EQ(s.copy(a, from, b, to), SALVO_OK); /* a's top-left 2x2 to b's bottom-right */
        EXPECT_EQ(s.synchronize(), SALVO_OK);

        EXPECT(all_equal(x.read_vector<std::uint32_t>(), 5u, "x"));
        std::vector<std::uint8_t> got = bytes.read_vector<std::uint8_t>();
        const std::uint8_t want[16] = {0, 0, 0,    0xAB, 0xAB, 0xAB, 0xAB, 0xAB,
                                       0, 0, 0x34, 0x12, 0x34, 0x12, 0x34, 0x12};
        for (int i = 0; i < 16; i++)
            EXPECT_EQ(got[static_cast<std::size_t>(i)], want[i]);
        std::vector<std::uint32_t> back(32);
        EXPECT_EQ(b.read(back), SALVO_OK);
        for (std::uint32_t y = 0; y < 4; y++)
            for (std::uint32_t i = 0; i < 8; i++) {
                bool copied = i >= 6 && y >= 2;
                EXPECT_EQ(back[y * 8 + i], copied ? texels[(y - 2) * 8 + (i - 6)] : 0u);
            }
    }
    expect_nothing_live(dev);
}

void events_and_gates()
{
    salvo::device dev = open();
    {
        salvo::kernel add = add_kernel(dev);
        salvo::kernel copy = copy_kernel(dev);
        salvo::buffer x = dev.create_buffer(N * 4), y = dev.create_buffer(N * 4);
        salvo::stream s1 = dev.create_stream(), s2 = dev.create_stream();
        salvo::event start = dev.create_event(), done = dev.create_event();

        /* s2 waits for s1's work through an event. */
        s1.fill(x, 0);
        EXPECT_EQ(start.record(s1), SALVO_OK);
        for (int i = 0; i < 10; i++)
            s1.launch(add, {N / 64}, salvo::bind(0, x), push2{N, 1});
        EXPECT_EQ(done.record(s1), SALVO_OK);
        EXPECT_EQ(s2.wait(done), SALVO_OK);
        s2.launch(copy, {N / 64}, {salvo::bind(0, x), salvo::bind(1, y)}, push2{N, 0});
        EXPECT_EQ(s2.synchronize(), SALVO_OK);
        EXPECT(all_equal(y.read_vector<std::uint32_t>(), 10u, "y"));
        EXPECT_EQ(done.query(), SALVO_OK);
        EXPECT_EQ(done.synchronize(), SALVO_OK);
        EXPECT_EQ(done.wait(std::chrono::seconds(5)), SALVO_OK);
        salvo::result<std::uint64_t> t = salvo::event::elapsed(start, done);
        EXPECT_EQ(t.status, SALVO_OK);
        EXPECT(t.value < 10000000000ull);

        /* Held by a gate: not ready, a bounded wait times out (returned,
         * not thrown), the raise lets it through. */
        salvo::gate g = dev.create_gate();
        salvo::event held = dev.create_event();
        EXPECT_EQ(s1.wait(g, 3), SALVO_OK);
        s1.launch(add, {N / 64}, salvo::bind(0, x), push2{N, 1});
        EXPECT_EQ(held.record(s1), SALVO_OK);
        EXPECT_EQ(held.query(), SALVO_NOT_READY);
        EXPECT_EQ(held.wait(0), SALVO_TIMEOUT);
        EXPECT_EQ(held.wait(std::chrono::milliseconds(20)), SALVO_TIMEOUT);
        salvo::result<std::uint64_t> pending = salvo::event::elapsed(start, held);
        EXPECT_EQ(pending.status, SALVO_NOT_READY);
        EXPECT_EQ(pending.value, 0u);
        EXPECT(!pending.ok());
        EXPECT_EQ(s1.query(), SALVO_NOT_READY);
        EXPECT_EQ(g.raise(3), SALVO_OK);
        EXPECT_EQ(g.value(), 3u);
        EXPECT_EQ(held.synchronize(), SALVO_OK);
        EXPECT_EQ(s1.synchronize(), SALVO_OK);
        EXPECT_EQ(s1.query(), SALVO_OK);
        EXPECT(all_equal(x.read_vector<std::uint32_t>(), 11u, "x after the gate"));

        /* Cancelled: the launches before the mark never run. */
        salvo_stream_desc big{};
        big.batch_size = 256;
        salvo::stream s3 = dev.create_stream(big);
        salvo::event cut = dev.create_event();
        for (int i = 0; i < 3; i++)
            s3.launch(add, {N / 64}, salvo::bind(0, x), push2{N, 100});
        EXPECT_EQ(cut.record(s3), SALVO_OK);
        EXPECT_EQ(cut.cancel(), SALVO_OK);
        EXPECT_EQ(cut.query(), SALVO_CANCELLED);
        EXPECT_EQ(s3.synchronize(), SALVO_OK);
        EXPECT(all_equal(x.read_vector<std::uint32_t>(), 11u, "x after the cancel"));

        /* Without timing: orders s2 after s1 as well; elapsed refuses it;
         * an unknown flag throws. */
        salvo::event sync_only = dev.create_event(SALVO_EVENT_DISABLE_TIMING);
        for (int i = 0; i < 4; i++)
            s1.launch(add, {N / 64}, salvo::bind(0, x), push2{N, 1});
        EXPECT_EQ(sync_only.record(s1), SALVO_OK);
        EXPECT_EQ(s2.wait(sync_only), SALVO_OK);
        s2.launch(copy, {N / 64}, {salvo::bind(0, x), salvo::bind(1, y)}, push2{N, 0});
        EXPECT_EQ(s2.synchronize(), SALVO_OK);
        EXPECT(all_equal(y.read_vector<std::uint32_t>(), 15u, "y after the untimed event"));
        EXPECT_THROW(SALVO_ERROR_INVALID_ARGUMENT, "salvo_event_elapsed",
                     salvo::event::elapsed(sync_only, sync_only));
        EXPECT_THROW(SALVO_ERROR_INVALID_ARGUMENT, "salvo_event_create_flags",
                     dev.create_event(1u << 9));
        EXPECT_EQ(s1.synchronize(), SALVO_OK);
    }
    expect_nothing_live(dev);
}

void graphs_capture_replay_update()
{
    salvo::device dev = open();
    {
        salvo::kernel add = add_kernel(dev);
        salvo::buffer x = dev.create_buffer(N * 4), y = dev.create_buffer(N * 4);
        salvo::stream s = dev.create_stream();
        s.fill(x, 0);
        s.fill(y, 0);
        EXPECT_EQ(s.synchronize(), SALVO_OK);
        EXPECT(!s.is_capturing());
        EXPECT_EQ(s.begin_capture(), SALVO_OK);
        EXPECT(s.is_capturing());
        s.launch(add, {N / 64}, salvo::bind(0, x), push2{N, 1});
        s.launch(add, {N / 64}, salvo::bind(0, x), push2{N, 2});
        salvo::graph g = s.end_capture();
        EXPECT(!s.is_capturing());
        REQUIRE(g);
        EXPECT_EQ(g.node_count(), 2u);
        for (int i = 0; i < 3; i++)
            EXPECT_EQ(s.launch(g), SALVO_OK); /* x = 9 */
        EXPECT_EQ(g.set_push(1, push2{N, 10}), SALVO_OK);
        EXPECT_EQ(s.launch(g), SALVO_OK); /* x = 20 */
        EXPECT_EQ(g.set_bindings(0, salvo::bind(0, y)), SALVO_OK);
        EXPECT_EQ(s.launch(g), SALVO_OK); /* x = 30, y = 1 */
        const std::uint32_t raw_push[2] = {N, 4};
        EXPECT_EQ(g.set_push(0, raw_push, sizeof raw_push), SALVO_OK);
        EXPECT_EQ(s.launch(g), SALVO_OK); /* x = 40, y = 5 */
        EXPECT_EQ(s.synchronize(), SALVO_OK);
        EXPECT(all_equal(x.read_vector<std::uint32_t>(), 40u, "x"));
        EXPECT(all_equal(y.read_vector<std::uint32_t>(), 5u, "y"));
    }
    expect_nothing_live(dev);
}

void images_and_samplers()
{
    salvo::device dev = open();
    {
        salvo_image_desc d{};
        d.type = SALVO_IMAGE_2D;
        d.format = SALVO_FORMAT_R32_UINT;
        d.width = 16;
        d.height = 8;
        d.usage = SALVO_IMAGE_STORAGE;
        salvo::image img = dev.create_image(d);
        salvo_image_desc got = img.desc();
        EXPECT_EQ(got.width, 16u);
        EXPECT_EQ(got.height, 8u);
        EXPECT_EQ(got.format, SALVO_FORMAT_R32_UINT);
        EXPECT((got.usage & SALVO_IMAGE_STORAGE) != 0);
        std::vector<std::uint32_t> texels(16 * 8);
        std::iota(texels.begin(), texels.end(), 0u);
        EXPECT_EQ(img.write(texels), SALVO_OK);

        salvo::kernel img_add = dev.create_kernel(img_add_spv);
        salvo::stream s = dev.create_stream();
        s.launch(img_add, {2, 1}, salvo::bind(0, img), std::uint32_t{7});
        EXPECT_EQ(s.synchronize(), SALVO_OK);
        std::vector<std::uint32_t> back(16 * 8);
        EXPECT_EQ(img.read(back), SALVO_OK);
        for (std::uint32_t i = 0; i < 16 * 8; i++)
            EXPECT_EQ(back[i], i + 7);
        salvo_image_region r{};
        r.x = 4;
        r.y = 2;
        r.width = 3;
        r.height = 2;
        std::vector<std::uint32_t> part(6);
        EXPECT_EQ(img.read(part, r), SALVO_OK);
        EXPECT(part == (std::vector<std::uint32_t>{43, 44, 45, 59, 60, 61}));

        /* Stream-ordered copies between the image and buffers. */
        salvo::buffer b = dev.create_buffer(16 * 8 * 4, SALVO_DOMAIN_HOST);
        EXPECT_EQ(s.copy(img, salvo_image_region{}, b), SALVO_OK);
        std::vector<std::uint32_t> ones(16 * 8, 1);
        salvo::buffer src = dev.create_buffer(ones);
        EXPECT_EQ(s.copy(src, 0, img, r), SALVO_OK);
        EXPECT_EQ(s.synchronize(), SALVO_OK);
        EXPECT(b.read_vector<std::uint32_t>() == back);
        EXPECT_EQ(img.read(part, r), SALVO_OK);
        EXPECT(all_equal(part, 1u, "copied region"));

        /* A sampler beside a sampled float image: nearest at texel centres
         * reads each texel exactly. */
        salvo_image_desc fd{};
        fd.type = SALVO_IMAGE_2D;
        fd.format = SALVO_FORMAT_R32_FLOAT;
        fd.width = 4;
        fd.height = 4;
        fd.usage = SALVO_IMAGE_SAMPLED;
        salvo::image fimg = dev.create_image(fd);
        std::vector<float> fv(16);
        for (int i = 0; i < 16; i++)
            fv[static_cast<std::size_t>(i)] = 0.5f * static_cast<float>(i);
        EXPECT_EQ(fimg.write(fv.data(), fv.size()), SALVO_OK);
        salvo_sampler_desc sd{};
        sd.filter = SALVO_FILTER_NEAREST;
        salvo::sampler smp = dev.create_sampler(sd);
        salvo::kernel sample = dev.create_kernel(img_sample_spv);
        salvo::buffer out = dev.create_buffer(16 * 4);
        const std::uint32_t wh[2] = {4, 4};
        s.launch(sample, {1, 1}, {salvo::bind(0, fimg, smp), salvo::bind(1, out)}, wh);
        EXPECT_EQ(s.synchronize(), SALVO_OK);
        EXPECT(out.read_vector<float>() == fv);
    }
    expect_nothing_live(dev);
}

/* Counts its live copies: a host call's callable is copied in, and the
 * copy must be freed once it has run (or at once, when it is refused). */
struct tracker {
    static std::atomic<int> live;
    tracker() { live++; }
    tracker(const tracker &) { live++; }
    tracker &operator=(const tracker &) = default;
    ~tracker() { live--; }
};
std::atomic<int> tracker::live{0};

int plain_calls = 0;
void plain_call(void *user)
{
    (*static_cast<int *>(user))++;
}

void host_calls()
{
    salvo::device dev = open();
    {
        salvo::kernel add = add_kernel(dev);
        salvo::buffer h = dev.create_buffer(N * 4, SALVO_DOMAIN_HOST);
        const std::uint32_t *p = h.map<std::uint32_t>();
        salvo::stream s = dev.create_stream();
        s.fill(h, 0);
        s.launch(add, {N / 64}, salvo::bind(0, h), push2{N, 4});
        std::uint32_t seen = 0;
        std::vector<int> payload(1000, 3); /* copied into the call, freed after it ran */
        long sum = 0;
        std::atomic<int> lambdas{0};
        EXPECT_EQ(s.host_call([p, &seen, &lambdas] {
            seen = p[N - 1];
            lambdas++;
        }),
                  SALVO_OK);
        EXPECT_EQ(s.host_call([payload, &sum, &lambdas] {
            sum = std::accumulate(payload.begin(), payload.end(), 0L);
            lambdas++;
        }),
                  SALVO_OK);
        payload.clear();
        {
            tracker t;
            EXPECT_EQ(s.host_call([t, &lambdas] { lambdas++; }), SALVO_OK);
        }
        EXPECT_EQ(s.host_call(plain_call, &plain_calls), SALVO_OK);
        s.launch(add, {N / 64}, salvo::bind(0, h), push2{N, 1}); /* after the calls */
        EXPECT_EQ(s.synchronize(), SALVO_OK);
        EXPECT_EQ(seen, 4u); /* the launch before the call had run */
        EXPECT_EQ(sum, 3000);
        EXPECT_EQ(lambdas.load(), 3);
        EXPECT_EQ(tracker::live.load(), 0);
        EXPECT_EQ(plain_calls, 1);
        EXPECT_EQ(p[0], 5u);

        /* One left pending when its stream goes: it still runs, once. */
        std::atomic<int> late{0};
        {
            salvo::stream t = dev.create_stream();
            salvo::gate g = dev.create_gate();
            t.wait(g, 1);
            t.host_call([&late] { late++; });
            EXPECT_EQ(late.load(), 0);
        }
        EXPECT_EQ(dev.synchronize(), SALVO_OK);
        EXPECT_EQ(late.load(), 1);
    }
    expect_nothing_live(dev);
}

void errors_throw_with_status()
{
    salvo::device dev = open();
    {
        salvo::kernel add = add_kernel(dev);
        salvo::buffer x = dev.create_buffer(N * 4);
        salvo::stream s = dev.create_stream();
        s.fill(x, 0);

        EXPECT_THROW(SALVO_ERROR_INVALID_ARGUMENT, "salvo_buffer_create", dev.create_buffer(0));
        EXPECT_THROW(SALVO_ERROR_INVALID_ARGUMENT, "salvo_launch", /* push: 4 bytes, not 8 */
                     s.launch(add, {N / 64}, salvo::bind(0, x), std::uint32_t{1}));
        EXPECT_THROW(SALVO_ERROR_INVALID_ARGUMENT, "salvo_launch", /* binding 0 missing */
                     s.launch(add, {N / 64}, {}, push2{N, 1}));
        EXPECT_THROW(SALVO_ERROR_INVALID_ARGUMENT, "salvo_launch", /* binding 3 is not declared */
                     s.launch(add, {N / 64}, {salvo::bind(0, x), salvo::bind(3, x)}, push2{N, 1}));
        EXPECT_THROW(SALVO_ERROR_INVALID_ARGUMENT, "salvo_buffer_read",
                     x.read_vector<std::uint32_t>(N + 1));
        /* A count whose bytes pass 2**64: refused as past the end, not
         * allocated first (bad_alloc) nor cut down to a small count. */
        EXPECT_THROW(SALVO_ERROR_INVALID_ARGUMENT, "salvo_buffer_read",
                     x.read_vector<std::uint32_t>(SIZE_MAX / 2));
        const std::uint32_t one = 7;
        const std::size_t wraps = (std::size_t(1) << 62) + 1; /* * 4 bytes: 4 when cut down */
        EXPECT_THROW(SALVO_ERROR_INVALID_ARGUMENT, "salvo_buffer_write", x.write(&one, wraps));
        std::uint32_t sink = 0;
        EXPECT_THROW(SALVO_ERROR_INVALID_ARGUMENT, "salvo_buffer_read", x.read(&sink, wraps));
        EXPECT_THROW(SALVO_ERROR_INVALID_ARGUMENT, "salvo_stream_write", s.write(x, &one, wraps));
        static_assert(!salvo::detail::is_push_constant_v<std::nullptr_t>,
                      "nullptr is no push-constant value");
        std::vector<std::uint32_t> big(N + 1);
        EXPECT_THROW(SALVO_ERROR_INVALID_ARGUMENT, "salvo_buffer_write", x.write(big));
        EXPECT_THROW(SALVO_ERROR_INVALID_ARGUMENT, "salvo_stream_write", s.write(x, big));
        EXPECT_THROW(SALVO_ERROR_INVALID_ARGUMENT, "salvo_fill", s.fill(x, 2, 8, 1u));
        const std::uint32_t junk[8] = {0x07230203, 1, 2, 3, 4, 5, 6, 7};
        EXPECT_THROW(SALVO_ERROR_INVALID_ARGUMENT, "salvo_kernel_create", dev.create_kernel(junk));
        EXPECT_THROW(SALVO_ERROR_INVALID_ARGUMENT, "salvo_kernel_create",
                     dev.create_kernel_glsl("#version 450\nthis is not GLSL"));
        salvo_image_desc none{};
        none.type = SALVO_IMAGE_2D;
        none.format = SALVO_FORMAT_R32_UINT;
        EXPECT_THROW(SALVO_ERROR_INVALID_ARGUMENT, "salvo_image_create", dev.create_image(none));
        salvo::gate g = dev.create_gate();
        EXPECT_EQ(g.raise(5), SALVO_OK);
        EXPECT_THROW(SALVO_ERROR_INVALID_ARGUMENT, "salvo_gate_raise", g.raise(4));
        EXPECT_EQ(g.value(), 5u);

        /* A capture refuses a synchronize and a second begin; it goes on. */
        EXPECT_EQ(s.begin_capture(), SALVO_OK);
        EXPECT_THROW(SALVO_ERROR_INVALID_STATE, "salvo_stream_synchronize", s.synchronize());
        EXPECT_THROW(SALVO_ERROR_INVALID_STATE, "salvo_stream_begin_capture", s.begin_capture());
        EXPECT_THROW(SALVO_ERROR_INVALID_STATE, "salvo_stream_write", s.write(x, big.data(), 4));
        {
            tracker t;
            EXPECT_THROW(SALVO_ERROR_INVALID_STATE, "salvo_stream_host_call",
                         s.host_call([t] { FAIL("a refused host call ran"); }));
        }
        EXPECT_EQ(tracker::live.load(), 0); /* the refused call's copy is freed */
        s.launch(add, {N / 64}, salvo::bind(0, x), push2{N, 1});
        salvo::graph gr = s.end_capture();
        EXPECT_EQ(gr.node_count(), 1u);
        EXPECT_THROW(SALVO_ERROR_INVALID_STATE, "salvo_stream_end_capture", s.end_capture());
        EXPECT_THROW(SALVO_ERROR_INVALID_ARGUMENT, "salvo_graph_set_push",
                     gr.set_push(0, std::uint32_t{1}));
        EXPECT_THROW(SALVO_ERROR_INVALID_ARGUMENT, "salvo_graph_set_bindings",
                     gr.set_bindings(5, salvo::bind(0, x)));

        /* None of it changed anything: the device still works. */
        EXPECT_EQ(s.launch(gr), SALVO_OK);
        s.launch(add, {N / 64}, salvo::bind(0, x), push2{N, 2});
        EXPECT_EQ(s.synchronize(), SALVO_OK);
        EXPECT(all_equal(x.read_vector<std::uint32_t>(), 3u, "x"));
    }
    expect_nothing_live(dev);
}

/* A buffer made and written at once is not left behind when the write
 * fails: staged writes (forced) whose staging buffer cannot be made. */
void failed_create_leaves_nothing()
{
    salvo_device_desc desc = harness::device_desc();
    desc.flags |= SALVO_DEVICE_FORCE_STAGING;
    desc.fault = "buffer_create:2:oom_device:always";
    salvo::device dev = salvo::device::create(desc);
    std::vector<std::uint32_t> v(256, 7);
    EXPECT_THROW(SALVO_ERROR_OUT_OF_DEVICE_MEMORY, "salvo_buffer_write", dev.create_buffer(v));
    EXPECT_EQ(dev.synchronize(), SALVO_OK);
    EXPECT_EQ(dev.stats().live_buffers, 0u);
}

void adopts_c_handles()
{
    salvo_device_desc desc = harness::device_desc();
    salvo_device *raw_dev = nullptr;
    REQUIRE(salvo_device_create(&desc, &raw_dev) == SALVO_OK);
    salvo::device dev(raw_dev); /* adopted: destroyed at scope exit */
    {
        salvo_buffer *raw = nullptr;
        REQUIRE(salvo_buffer_create(dev.get(), 16, SALVO_DOMAIN_HOST, &raw) == SALVO_OK);
        salvo::buffer b(raw);
        const std::uint32_t in[4] = {1, 2, 3, 4};
        EXPECT_EQ(b.write(in, 4), SALVO_OK);
        std::uint32_t out[4] = {};
        EXPECT_EQ(salvo_buffer_read(b.get(), 0, out, sizeof out), SALVO_OK);
        EXPECT(std::memcmp(in, out, sizeof in) == 0);
        EXPECT_EQ(dev.stats().live_buffers, 1u);
        salvo_buffer *back = b.release(); /* the C API's again */
        EXPECT(!b);
        EXPECT_EQ(dev.stats().live_buffers, 1u);
        salvo_buffer_destroy(back);
    }
    expect_nothing_live(dev);
}

} // namespace

int main()
{
    harness::require_device();
    static const harness::test tests[] = {
        {"device_queries", device_queries},
        {"saxpy_matches_cpu", saxpy_matches_cpu},
        {"typed_transfers", typed_transfers},
        {"moves_leave_empty_and_destroy_once", moves_leave_empty_and_destroy_once},
        {"scope_exit_with_work_pending", scope_exit_with_work_pending},
        {"bindings_offsets_and_arrays", bindings_offsets_and_arrays},
        {"indirect_patterns_and_image_copies", indirect_patterns_and_image_copies},
        {"events_and_gates", events_and_gates},
        {"graphs_capture_replay_update", graphs_capture_replay_update},
        {"images_and_samplers", images_and_samplers},
        {"host_calls", host_calls},
        {"errors_throw_with_status", errors_throw_with_status},
        {"failed_create_leaves_nothing", failed_create_leaves_nothing},
        {"adopts_c_handles", adopts_c_handles},
    };
    return harness::finish(harness::run(tests));
}
