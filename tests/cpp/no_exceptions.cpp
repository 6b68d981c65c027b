/*
 * salvo.hpp's no-exceptions mode on a real device (lavapipe in CI),
 * validation layer on. Built twice (tests/cpp/CMakeLists.txt): with
 * -fno-exceptions, where the mode is picked by itself, and with
 * SALVO_HPP_NO_EXCEPTIONS defined in a build that has exceptions. Calls
 * return salvo_status, or a salvo::result<T> where they make something;
 * bad input gives its status and an empty value, and nothing throws.
 * Exit 77 without a device.
 */
#include <numeric>
#include <vector>

#include "harness.hpp"

#include "add.spv.h"
#include "copy.spv.h"
#include "saxpy.spv.h"

static_assert(SALVO_HPP_EXCEPTIONS == 0, "this suite is the no-exceptions mode's");
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#ifndef SALVO_HPP_NO_EXCEPTIONS
#error "exceptions are on: the mode must come from SALVO_HPP_NO_EXCEPTIONS"
#endif
#endif

namespace {

constexpr std::uint32_t N = 1024;

struct push2 {
    std::uint32_t n;
    std::uint32_t value;
};

/* Take the value of a result that must have succeeded. */
template <typename T>
T take(salvo::result<T> &&r, const char *what)
{
    if (!r.ok()) {
        std::fprintf(stderr, "%s: %s: %s\n", what, salvo::status_string(r.status),
                     salvo::last_error());
        harness::failures()++;
    }
    return std::move(r.value);
}

void expect_nothing_live(salvo::device &dev)
{
    EXPECT_EQ(dev.synchronize(), SALVO_OK);
    salvo::result<salvo_stats> r = dev.stats();
    REQUIRE(r.ok());
    const salvo_stats &s = r.value;
    EXPECT_EQ(s.live_buffers + s.live_kernels + s.live_streams + s.live_events + s.live_gates +
                  s.live_graphs + s.live_images + s.live_samplers,
              0u);
    EXPECT_EQ(s.releases_pending, 0u);
    EXPECT_EQ(s.launches_pending, 0u);
    EXPECT_EQ(s.validation_messages, 0u);
}

bool all_equal(const std::vector<std::uint32_t> &v, std::uint32_t want)
{
    for (std::size_t i = 0; i < v.size(); i++)
        if (v[i] != want) {
            std::fprintf(stderr, "[%zu] = %u, want %u\n", i, v[i], want);
            return false;
        }
    return true;
}

void saxpy_through_results()
{
    salvo::result<salvo::device> made = salvo::device::create(harness::device_desc());
    REQUIRE(made.ok());
    REQUIRE(made.value);
    salvo::device dev = std::move(made.value);
    EXPECT(!made.value);
    {
        const std::uint32_t n = 5000;
        std::vector<float> hx(n), hy(n);
        for (std::uint32_t i = 0; i < n; i++) {
            hx[i] = static_cast<float>(i % 100);
            hy[i] = static_cast<float>(i % 3);
        }
        salvo::buffer x = take(dev.create_buffer(hx), "x");
        salvo::buffer y = take(dev.create_buffer(hy, SALVO_DOMAIN_HOST), "y");
        salvo::kernel k = take(dev.create_kernel(saxpy_spv, {{0, 128}}), "kernel");
        salvo::stream s = take(dev.create_stream(), "stream");
        REQUIRE(x && y && k && s);
        struct {
            float a;
            std::uint32_t n;
        } push = {3.0f, n};
        EXPECT_EQ(s.launch(k, {(n + 127) / 128}, {salvo::bind(0, x), salvo::bind(1, y)}, push),
                  SALVO_OK);
        EXPECT_EQ(s.synchronize(), SALVO_OK);
        salvo::result<std::vector<float>> out = y.read_vector<float>();
        REQUIRE(out.ok());
        REQUIRE_EQ(out.value.size(), n);
        int wrong = 0;
        for (std::uint32_t i = 0; i < n; i++)
            wrong += out.value[i] != 3.0f * hx[i] + hy[i];
        EXPECT_EQ(wrong, 0);
        salvo::result<float *> mapped = y.map<float>();
        REQUIRE(mapped.ok());
        EXPECT(mapped.value[7] == out.value[7]);
    }
    expect_nothing_live(dev);
}

void bad_input_returns_status()
{
    salvo::device dev = take(salvo::device::create(harness::device_desc()), "device");
    REQUIRE(dev);
    {
        salvo::kernel add = take(dev.create_kernel(add_spv, {{0, 64}}), "add");
        salvo::buffer x = take(dev.create_buffer(N * 4), "x");
        salvo::stream s = take(dev.create_stream(), "stream");
        EXPECT_EQ(s.fill(x, 0u), SALVO_OK);

        salvo::result<salvo::buffer> none = dev.create_buffer(0);
        EXPECT_EQ(none.status, SALVO_ERROR_INVALID_ARGUMENT);
        EXPECT(!none.value);
        EXPECT(std::strlen(salvo::last_error()) > 0);

        EXPECT_EQ(s.launch(add, {N / 64}, salvo::bind(0, x), std::uint32_t{1}),
                  SALVO_ERROR_INVALID_ARGUMENT); /* push: 4 bytes, not 8 */
        EXPECT_EQ(s.launch(add, {N / 64}), SALVO_ERROR_INVALID_ARGUMENT);

        salvo::result<std::vector<std::uint32_t>> past = x.read_vector<std::uint32_t>(N + 1);
        EXPECT_EQ(past.status, SALVO_ERROR_INVALID_ARGUMENT);
        EXPECT(past.value.empty());
        /* Nothing throws here, bad_alloc included: the range is refused
         * before anything is allocated for it. */
        past = x.read_vector<std::uint32_t>(SIZE_MAX / 8);
        EXPECT_EQ(past.status, SALVO_ERROR_INVALID_ARGUMENT);
        EXPECT(past.value.empty());
        const std::uint32_t one = 7;
        EXPECT_EQ(x.write(&one, (std::size_t(1) << 62) + 1), SALVO_ERROR_INVALID_ARGUMENT);

        const std::uint32_t junk[4] = {1, 2, 3, 4};
        salvo::result<salvo::kernel> bad = dev.create_kernel(junk);
        EXPECT_EQ(bad.status, SALVO_ERROR_INVALID_ARGUMENT);
        EXPECT(!bad.value);

        salvo::gate g = take(dev.create_gate(), "gate");
        EXPECT_EQ(g.raise(2), SALVO_OK);
        EXPECT_EQ(g.raise(1), SALVO_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(g.value(), 2u);

        EXPECT_EQ(s.begin_capture(), SALVO_OK);
        EXPECT_EQ(s.synchronize(), SALVO_ERROR_INVALID_STATE);
        EXPECT_EQ(s.launch(add, {N / 64}, salvo::bind(0, x), push2{N, 1}), SALVO_OK);
        salvo::result<salvo::graph> gr = s.end_capture();
        REQUIRE(gr.ok());
        EXPECT_EQ(gr.value.node_count(), 1u);
        salvo::result<salvo::graph> again = s.end_capture();
        EXPECT_EQ(again.status, SALVO_ERROR_INVALID_STATE);
        EXPECT(!again.value);

        /* Statuses that are not errors come back the same way. */
        salvo::event e = take(dev.create_event(), "event");
        EXPECT_EQ(s.wait(g, 3), SALVO_OK);
        EXPECT_EQ(s.launch(gr.value), SALVO_OK);
        EXPECT_EQ(e.record(s), SALVO_OK);
        EXPECT_EQ(e.query(), SALVO_NOT_READY);
        EXPECT_EQ(e.wait(0), SALVO_TIMEOUT);
        EXPECT_EQ(g.raise(3), SALVO_OK);
        EXPECT_EQ(e.synchronize(), SALVO_OK);
        EXPECT_EQ(s.synchronize(), SALVO_OK);
        salvo::result<std::vector<std::uint32_t>> v = x.read_vector<std::uint32_t>();
        REQUIRE(v.ok());
        EXPECT(all_equal(v.value, 1u));
    }
    expect_nothing_live(dev);
}

void moves_and_scope_exit()
{
    salvo::device dev = take(salvo::device::create(harness::device_desc()), "device");
    REQUIRE(dev);
    salvo::buffer out = take(dev.create_buffer(N * 4, SALVO_DOMAIN_HOST), "out");
    {
        salvo::kernel add = take(dev.create_kernel(add_spv, {{0, 64}}), "add");
        salvo::kernel copy = take(dev.create_kernel(copy_spv), "copy");
        salvo::buffer x = take(dev.create_buffer(N * 4), "x");
        salvo::buffer moved = std::move(x);
        EXPECT(!x);
        EXPECT_EQ(x.size(), 0u);
        EXPECT_EQ(moved.size(), N * 4u);
        salvo::stream s = take(dev.create_stream(), "stream");
        EXPECT_EQ(s.fill(moved, 0u), SALVO_OK);
        for (int i = 0; i < 50; i++)
            EXPECT_EQ(s.launch(add, {N / 64}, salvo::bind(0, moved), push2{N, 2}), SALVO_OK);
        EXPECT_EQ(
            s.launch(copy, {N / 64}, {salvo::bind(0, moved), salvo::bind(1, out)}, push2{N, 1}),
            SALVO_OK);
        EXPECT_EQ(s.launch(add, {N / 64}, salvo::bind(0, x), push2{N, 2}),
                  SALVO_ERROR_INVALID_ARGUMENT); /* x was moved from: no buffer */
        /* Out of scope with the launches not yet submitted. */
    }
    salvo::result<salvo_stats> st = dev.stats();
    EXPECT(st.value.launches_pending > 0);
    EXPECT_EQ(dev.synchronize(), SALVO_OK);
    salvo::result<std::vector<std::uint32_t>> v = out.read_vector<std::uint32_t>();
    REQUIRE(v.ok());
    EXPECT(all_equal(v.value, 101u));
    out.reset();
    expect_nothing_live(dev);
}

/* A result whose status is not SALVO_OK holds no object: a buffer made
 * and written at once, whose write fails (its forced staging buffer
 * cannot be made), is destroyed rather than handed back. */
void failed_create_holds_nothing()
{
    salvo_device_desc desc = harness::device_desc();
    desc.flags |= SALVO_DEVICE_FORCE_STAGING;
    desc.fault = "buffer_create:2:oom_device:always";
    salvo::device dev = take(salvo::device::create(desc), "device");
    REQUIRE(dev);
    std::vector<std::uint32_t> v(256, 7);
    salvo::result<salvo::buffer> r = dev.create_buffer(v);
    EXPECT_EQ(r.status, SALVO_ERROR_OUT_OF_DEVICE_MEMORY);
    EXPECT(!r.value);
    EXPECT_EQ(dev.synchronize(), SALVO_OK);
    salvo::result<salvo_stats> st = dev.stats();
    EXPECT_EQ(st.value.live_buffers, 0u);
}

} // namespace

int main()
{
    harness::require_device();
    static const harness::test tests[] = {
        {"saxpy_through_results", saxpy_through_results},
        {"bad_input_returns_status", bad_input_returns_status},
        {"moves_and_scope_exit", moves_and_scope_exit},
        {"failed_create_holds_nothing", failed_create_holds_nothing},
    };
    return harness::finish(harness::run(tests));
}
