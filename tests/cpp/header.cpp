/*
 * salvo.hpp without a device: built four times (tests/cpp/CMakeLists.txt),
 * C++17 and C++20, exceptions on and off, each with -Wall -Wextra -Werror
 * and more, so the header compiles cleanly in every mode a user may pick.
 * Every member of every wrapper is called here (instantiating each
 * template), on empty objects: each must pass the C call's status through
 * (SALVO_ERROR_INVALID_ARGUMENT for a NULL handle), thrown or returned as
 * the mode says. Also: ownership (each handle destroyed exactly once
 * across moves, swaps, resets and releases), the error type, the result
 * type and the bindings view.
 */
#include <array>
#include <cmath>
#include <cstring>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#if __cplusplus >= 202002L
#include <span>
#endif

#include "harness.hpp"

#ifndef EXPECT_EXCEPTIONS
#error "EXPECT_EXCEPTIONS (the mode this build is meant to be in) not defined"
#endif
static_assert(SALVO_HPP_EXCEPTIONS == EXPECT_EXCEPTIONS, "the wrong error mode was picked");

using harness::status_of;

/* ------------------------------------------------------------------ */
/* Types                                                                */
/* ------------------------------------------------------------------ */

template <typename T>
constexpr bool owner_traits()
{
    return !std::is_copy_constructible<T>::value && !std::is_copy_assignable<T>::value &&
           std::is_nothrow_move_constructible<T>::value &&
           std::is_nothrow_move_assignable<T>::value &&
           std::is_nothrow_default_constructible<T>::value && sizeof(T) == sizeof(void *) &&
           !std::is_convertible<typename T::native_type *, T>::value; /* adopting is explicit */
}
static_assert(owner_traits<salvo::device>(), "device");
static_assert(owner_traits<salvo::stream>(), "stream");
static_assert(owner_traits<salvo::event>(), "event");
static_assert(owner_traits<salvo::buffer>(), "buffer");
static_assert(owner_traits<salvo::kernel>(), "kernel");
static_assert(owner_traits<salvo::gate>(), "gate");
static_assert(owner_traits<salvo::graph>(), "graph");
static_assert(owner_traits<salvo::image>(), "image");
static_assert(owner_traits<salvo::sampler>(), "sampler");
static_assert(std::is_same<salvo::buffer::native_type, salvo_buffer>::value, "native type");
/* Different objects do not convert into one another. */
static_assert(!std::is_constructible<salvo::buffer, salvo::kernel &&>::value, "buffer from kernel");
static_assert(!std::is_assignable<salvo::stream &, salvo::event &&>::value, "stream = event");

#if SALVO_HPP_EXCEPTIONS
static_assert(
    std::is_same<decltype(std::declval<salvo::device &>().create_buffer(4)), salvo::buffer>::value,
    "exceptions: a create returns the object");
static_assert(std::is_same<decltype(std::declval<const salvo::buffer &>().read_vector<int>()),
                           std::vector<int>>::value,
              "exceptions: a read returns the vector");
static_assert(std::is_nothrow_copy_constructible<salvo::error>::value, "error copies never throw");
static_assert(std::is_base_of<std::runtime_error, salvo::error>::value, "error");
#else
static_assert(std::is_same<decltype(std::declval<salvo::device &>().create_buffer(4)),
                           salvo::result<salvo::buffer>>::value,
              "no exceptions: a create returns a result");
static_assert(std::is_same<decltype(std::declval<const salvo::buffer &>().read_vector<int>()),
                           salvo::result<std::vector<int>>>::value,
              "no exceptions: a read returns a result");
static_assert(noexcept(std::declval<salvo::stream &>().launch(std::declval<const salvo::kernel &>(),
                                                              salvo::groups(1), salvo::bindings(),
                                                              1)),
              "no exceptions: launch is noexcept");
static_assert(noexcept(std::declval<salvo::device &>().create_stream()),
              "no exceptions: create is noexcept");
#endif
/* Either mode: statuses that are not errors are returned. */
static_assert(
    std::is_same<decltype(std::declval<salvo::stream &>().synchronize()), salvo_status>::value,
    "synchronize returns its status");
static_assert(std::is_same<decltype(salvo::event::elapsed(std::declval<const salvo::event &>(),
                                                          std::declval<const salvo::event &>())),
                           salvo::result<std::uint64_t>>::value,
              "elapsed returns a result");

/* ------------------------------------------------------------------ */
/* Ownership, counted                                                   */
/* ------------------------------------------------------------------ */

struct thing {
    int id;
};
static int destroyed[8];
static void destroy_thing(thing *t)
{
    destroyed[t->id]++;
}
using thing_owner = salvo::unique_handle<thing, destroy_thing>;

static void unique_handle_destroys_once()
{
    thing t[6] = {{0}, {1}, {2}, {3}, {4}, {5}};
    {
        thing_owner empty;
        EXPECT(!empty);
        EXPECT(empty.get() == nullptr);

        thing_owner a(&t[0]);
        EXPECT(a.get() == &t[0]);
        thing_owner b(std::move(a)); /* move: the source is empty, nothing destroyed */
        EXPECT(!a);
        EXPECT(a.get() == nullptr);
        EXPECT(b.get() == &t[0]);
        EXPECT_EQ(destroyed[0], 0);

        thing_owner c(&t[1]);
        c = std::move(b); /* the held one goes, once */
        EXPECT_EQ(destroyed[1], 1);
        EXPECT_EQ(destroyed[0], 0);
        EXPECT(!b);
        EXPECT(c.get() == &t[0]);

        thing_owner &alias = c;
        c = std::move(alias); /* self-move: nothing happens */
        EXPECT(c.get() == &t[0]);
        EXPECT_EQ(destroyed[0], 0);

        thing_owner d(&t[2]);
        swap(c, d);
        EXPECT(c.get() == &t[2]);
        EXPECT(d.get() == &t[0]);

        thing *raw = d.release(); /* released: the caller's */
        EXPECT(raw == &t[0]);
        EXPECT(!d);

        thing_owner e(&t[3]);
        e.reset(&t[4]); /* 3 goes now, 4 at scope exit */
        EXPECT_EQ(destroyed[3], 1);
        e.reset(&t[4]); /* the same one again: not destroyed meanwhile */
        EXPECT_EQ(destroyed[4], 0);

        thing_owner f(&t[5]);
        f.reset();
        EXPECT_EQ(destroyed[5], 1);
        f.reset(); /* empty: nothing more */
    }
    EXPECT_EQ(destroyed[0], 0); /* released, never destroyed */
    EXPECT_EQ(destroyed[1], 1);
    EXPECT_EQ(destroyed[2], 1); /* c at scope exit */
    EXPECT_EQ(destroyed[3], 1);
    EXPECT_EQ(destroyed[4], 1); /* e at scope exit */
    EXPECT_EQ(destroyed[5], 1);
}

/* ------------------------------------------------------------------ */
/* Values                                                               */
/* ------------------------------------------------------------------ */

static void error_and_result()
{
    salvo::error e(SALVO_ERROR_INVALID_STATE, "salvo_fill", "fill.c:12: range outside the buffer");
    EXPECT_EQ(e.status(), SALVO_ERROR_INVALID_STATE);
    EXPECT(std::string(e.call()) == "salvo_fill");
    EXPECT(std::string(e.detail()) == "fill.c:12: range outside the buffer");
    EXPECT(std::string(e.what()) ==
           "salvo_fill: SALVO_ERROR_INVALID_STATE: fill.c:12: range outside the buffer");
    salvo::error copy = e; /* the copy reads the same */
    EXPECT(std::string(copy.detail()) == e.detail());
    EXPECT(copy.what() != e.what() || copy.detail() == e.detail());
    const std::runtime_error &base = e;
    EXPECT(std::string(base.what()).find("SALVO_ERROR_INVALID_STATE") != std::string::npos);

    salvo::result<int> r;
    EXPECT(r.ok());
    r.status = SALVO_NOT_READY;
    EXPECT(!r.ok());
    EXPECT(!r);
    r.status = SALVO_OK;
    EXPECT(static_cast<bool>(r));

    EXPECT(std::string(salvo::status_string(SALVO_ERROR_DEVICE_LOST)) == "SALVO_ERROR_DEVICE_LOST");
    EXPECT_EQ(salvo::format_texel_size(SALVO_FORMAT_RGBA16_FLOAT), 8u);
    EXPECT_EQ(salvo::format_texel_size(SALVO_FORMAT_COUNT), 0u);
    EXPECT(std::string(salvo::format_name(SALVO_FORMAT_R32_UINT)) == "R32_UINT");
}

static std::uint32_t count_of(salvo::bindings b)
{
    return b.size();
}
static const salvo_binding *data_of(salvo::bindings b)
{
    return b.data();
}

static void bindings_and_groups()
{
    salvo::buffer none;
    salvo::image no_image;
    salvo::sampler no_sampler;
    salvo_binding b = salvo::bind(3, none, 256, 64);
    EXPECT_EQ(b.binding, 3u);
    EXPECT_EQ(b.offset, 256u);
    EXPECT_EQ(b.size, 64u);
    EXPECT_EQ(b.element, 0u);
    EXPECT(b.image == nullptr && b.sampler == nullptr);
    EXPECT_EQ(salvo::bind_element(2, 5, none).element, 5u);
    EXPECT_EQ(salvo::bind(1, no_image, no_sampler).binding, 1u);
    EXPECT_EQ(salvo::bind(4, no_sampler).binding, 4u);

    /* Views: each points at the caller's values, never a copy. */
    salvo_binding arr[3] = {salvo::bind(0, none), salvo::bind(1, none), salvo::bind(2, none)};
    EXPECT(data_of(arr) == arr);
    EXPECT_EQ(count_of(arr), 3u);
    std::vector<salvo_binding> vec(arr, arr + 2);
    EXPECT(data_of(vec) == vec.data());
    EXPECT_EQ(count_of(vec), 2u);
    std::array<salvo_binding, 2> sa = {{arr[0], arr[1]}};
    EXPECT(data_of(sa) == sa.data());
#if __cplusplus >= 202002L
    std::span<const salvo_binding> sp(arr, 2);
    EXPECT(data_of(sp) == arr);
    EXPECT_EQ(count_of(sp), 2u);
#endif
    EXPECT(data_of(arr[1]) == &arr[1]);
    EXPECT_EQ(count_of(arr[1]), 1u);
    EXPECT_EQ(count_of({salvo::bind(0, none), salvo::bind(1, none)}), 2u);
    EXPECT_EQ(count_of({}), 0u);
    EXPECT_EQ(count_of({arr, 2}), 2u);
    std::uint32_t sum = 0;
    for (const salvo_binding &x : salvo::bindings(arr))
        sum += x.binding;
    EXPECT_EQ(sum, 3u);

    salvo::groups g1(7);
    EXPECT(g1.count[0] == 7 && g1.count[1] == 1 && g1.count[2] == 1);
    salvo::groups g2 = {2, 3};
    EXPECT(g2.count[0] == 2 && g2.count[1] == 3 && g2.count[2] == 1);
    const std::uint32_t xyz[3] = {4, 5, 6};
    salvo::groups g3 = xyz;
    EXPECT(g3.count[0] == 4 && g3.count[1] == 5 && g3.count[2] == 6);
}

/* ------------------------------------------------------------------ */
/* What the C calls rely on                                             */
/* ------------------------------------------------------------------ */

/* read_vector copies bytes into the vector: only for types that are
 * copies of their bytes (a vector of strings once had device bytes
 * written over live strings). */
template <typename T, typename = void>
struct can_read_vector : std::false_type {
};
template <typename T>
struct can_read_vector<
    T, std::void_t<decltype(std::declval<const salvo::buffer &>().read_vector<T>())>>
    : std::true_type {
};
static_assert(can_read_vector<float>::value, "read_vector of floats");
static_assert(!can_read_vector<std::string>::value, "read_vector of a type that is not its bytes");

/* The C call steps through the bindings by sizeof(salvo_binding): an
 * array of a type derived from it would be read at the wrong stride. */
struct tagged_binding : salvo_binding {
    int tag;
};
static_assert(std::is_constructible<salvo::bindings, const std::vector<salvo_binding> &>::value,
              "a vector of bindings");
static_assert(!std::is_constructible<salvo::bindings, const std::vector<tagged_binding> &>::value,
              "a vector of a derived type");

/* A container longer than 32 bits can count. */
struct huge_container {
    const salvo_binding *p;
    const salvo_binding *data() const { return p; }
    std::uint64_t size() const { return (std::uint64_t(1) << 32) + 1; }
};

/* A callable with no room for its copy. */
struct no_room {
    void operator()() const {}
    static void *operator new(std::size_t, const std::nothrow_t &) noexcept { return nullptr; }
    static void operator delete(void *p) noexcept { ::operator delete(p); }
    static void operator delete(void *p, const std::nothrow_t &) noexcept { ::operator delete(p); }
};

static void what_the_c_calls_rely_on()
{
    salvo_binding one{};
    EXPECT_EQ(count_of(huge_container{&one}), UINT32_MAX); /* refused by salvo, not cut to 1 */

    /* A detail with a NUL in it: detail() still points into what(). */
    salvo::error e(SALVO_ERROR_UNKNOWN, "f", std::string("ab\0cd", 5));
    EXPECT(e.detail() == e.what() + std::strlen("f: SALVO_ERROR_UNKNOWN: "));
    EXPECT(std::string(e.detail()) == "ab");

    /* Timeouts as the C calls take them; NaN is no wait (it was undefined). */
    EXPECT_EQ(salvo::detail::timeout_ns(std::nan("")), 0u);
    EXPECT_EQ(salvo::detail::timeout_ns(-1.0), 0u);
    EXPECT_EQ(salvo::detail::timeout_ns(5.0), 5u);
    EXPECT_EQ(salvo::detail::timeout_ns(1e30), UINT64_MAX);

    /* A callable that cannot be copied: out of host memory, salvo not
     * called, and no earlier call's message passed off as the reason. */
    salvo::stream s;
    /* A failure first, which leaves a message of its own. */
    EXPECT_EQ(status_of([&]() { return s.flush(); }), SALVO_ERROR_INVALID_ARGUMENT);
#if SALVO_HPP_EXCEPTIONS
    try {
        (void)s.host_call(no_room{});
        FAIL("host_call with no room for the callable did not throw");
    } catch (const salvo::error &err) {
        EXPECT_EQ(err.status(), SALVO_ERROR_OUT_OF_HOST_MEMORY);
        EXPECT(std::string(err.detail()).find("copied") != std::string::npos);
    }
#else
    EXPECT_EQ(s.host_call(no_room{}), SALVO_ERROR_OUT_OF_HOST_MEMORY);
#endif
#if !SALVO_HPP_EXCEPTIONS && (defined(__cpp_exceptions) || defined(__EXCEPTIONS))
    /* The no-exceptions mode in a build with exceptions: a copy that
     * throws is a status, not the end of the program. */
    struct throws_on_copy {
        throws_on_copy() = default;
        throws_on_copy(const throws_on_copy &) { throw std::bad_alloc(); }
        void operator()() const {}
    };
    throws_on_copy t;
    EXPECT_EQ(s.host_call(t), SALVO_ERROR_OUT_OF_HOST_MEMORY);
#endif
}

/* ------------------------------------------------------------------ */
/* Every call on empty objects                                          */
/* ------------------------------------------------------------------ */

struct push2 {
    std::uint32_t n, value;
};

#define EXPECT_INVALID(call)                                                                       \
    EXPECT_EQ(status_of([&]() { return call; }), SALVO_ERROR_INVALID_ARGUMENT)

static void empty_objects_pass_statuses_through()
{
    salvo::device dev;
    salvo::stream s;
    salvo::event e, e2;
    salvo::buffer b, b2;
    salvo::kernel k;
    salvo::gate g;
    salvo::graph gr;
    salvo::image im;
    std::vector<std::uint32_t> v(4);
    std::uint32_t words[4] = {};
    const salvo_binding one = salvo::bind(0, b);

    /* device */
    EXPECT_INVALID(dev.info());
    EXPECT_INVALID(dev.memory_info());
    EXPECT_INVALID(dev.stats());
    EXPECT_INVALID(dev.synchronize());
    EXPECT_INVALID(dev.trace_start("/nonexistent/trace.json"));
    EXPECT_INVALID(dev.trace_stop());
    EXPECT_INVALID(dev.format_support(SALVO_FORMAT_R32_UINT));
    EXPECT_INVALID(dev.create_buffer(64));
    EXPECT_INVALID(dev.create_buffer(v));
    EXPECT_INVALID(dev.import_host(words, sizeof words));
    EXPECT_INVALID(dev.create_kernel(salvo_kernel_desc{}));
    EXPECT_INVALID(dev.create_kernel(words, {{0, 64}}, "k"));
    EXPECT_INVALID(dev.create_kernel(words, sizeof words));
    EXPECT_INVALID(dev.create_kernel_glsl("void main() {}"));
    EXPECT_INVALID(dev.create_stream());
    EXPECT_INVALID(dev.create_stream(salvo_stream_desc{}));
    EXPECT_INVALID(dev.create_event());
    EXPECT_INVALID(dev.create_gate());
    EXPECT_INVALID(dev.create_image(salvo_image_desc{}));
    EXPECT_INVALID(dev.create_sampler());
    EXPECT_INVALID(dev.create_sampler(salvo_sampler_desc{}));
    EXPECT(!dev.is_lost());

    /* buffer */
    EXPECT_EQ(b.size(), 0u);
    EXPECT_INVALID(b.write_bytes(0, words, 4));
    EXPECT_INVALID(b.write(words, 4));
    EXPECT_INVALID(b.write(v, 4));
    EXPECT_INVALID(b.read_bytes(0, words, 4));
    EXPECT_INVALID(b.read(words, 4));
    EXPECT_INVALID(b.read(v));
    EXPECT_INVALID(b.read_vector<std::uint32_t>(4));
    EXPECT_INVALID(b.read_vector<float>());
    EXPECT_INVALID(b.map());
    EXPECT_INVALID(b.map<float>());
    EXPECT_INVALID(b.address());

    /* image */
    EXPECT_INVALID(im.desc());
    salvo_image_region region{};
    region.width = 2;
    EXPECT_INVALID(im.write_bytes(words, 8, region));
    EXPECT_INVALID(im.write(words, 4));
    EXPECT_INVALID(im.write(v));
    EXPECT_INVALID(im.read_bytes(words, 8));
    EXPECT_INVALID(im.read(words, 4, region));
    EXPECT_INVALID(im.read(v));

    /* kernel, gate, graph */
    EXPECT_INVALID(k.info());
    EXPECT_INVALID(g.raise(1));
    EXPECT_EQ(g.value(), 0u);
    EXPECT_EQ(gr.node_count(), 0u);
    EXPECT_INVALID(gr.set_bindings(0, one));
    EXPECT_INVALID(gr.set_push(0, push2{1, 2}));
    EXPECT_INVALID(gr.set_push(0, words, 8));

    /* event */
    EXPECT_INVALID(e.record(s));
    EXPECT_INVALID(e.query());
    EXPECT_INVALID(e.synchronize());
    EXPECT_INVALID(e.wait(1000));
    EXPECT_INVALID(e.wait(std::chrono::milliseconds(1)));
    EXPECT_INVALID(e.cancel());
    EXPECT_INVALID(salvo::event::elapsed(e, e2));

    /* stream */
    EXPECT_INVALID(s.launch(k, {1}, {salvo::bind(0, b), salvo::bind(1, b2)}, push2{4, 1}));
    EXPECT_INVALID(s.launch(k, 1));
    EXPECT_INVALID(s.launch(k, {1, 1, 1}, one, words, 8));
    EXPECT_INVALID(s.launch(gr));
    EXPECT_INVALID(s.fill(b, 0, 16, 7));
    EXPECT_INVALID(s.fill(b, 7));
    EXPECT_INVALID(s.copy(b, 0, b2, 0, 16));
    EXPECT_INVALID(s.copy(b, b2));
    EXPECT_INVALID(s.copy(b, 0, im));
    EXPECT_INVALID(s.copy(im, region, b));
    salvo::image im2;
    EXPECT_INVALID(s.copy(im, region, im2));
    EXPECT_INVALID(s.copy(im, region, im2, region));
    EXPECT_INVALID(s.launch_indirect(k, b, 0, one, push2{1, 2}));
    EXPECT_INVALID(s.launch_indirect(k, b, 0));
    EXPECT_INVALID(s.launch_indirect(k, b, 0, one, words, 8));
    EXPECT_INVALID(s.fill_pattern(b, 1, 3, std::uint8_t{7}));
    EXPECT_INVALID(s.fill_pattern(b, 2, 4, std::uint16_t{7}));
    EXPECT_INVALID(s.write_bytes(b, 0, words, 4));
    EXPECT_INVALID(s.write(b, words, 4));
    EXPECT_INVALID(s.write(b, v));
    EXPECT_INVALID(s.read_bytes(b, 0, words, 4));
    EXPECT_INVALID(s.read(b, words, 4));
    EXPECT_INVALID(s.read(b, v));
    static int ran = 0;
    EXPECT_INVALID(s.host_call([](void *) { ran++; }, nullptr));
    EXPECT_INVALID(s.host_call([]() { ran++; })); /* refused: the copy is freed, never run */
    EXPECT_EQ(ran, 0);
    EXPECT_INVALID(s.wait(e));
    EXPECT_INVALID(s.wait(g, 1));
    EXPECT_INVALID(s.flush());
    EXPECT_INVALID(s.synchronize());
    EXPECT_INVALID(s.query());
    EXPECT_INVALID(s.begin_capture());
    EXPECT_INVALID(s.end_capture());
    EXPECT_INVALID(s.is_capturing());

    /* process-wide */
    salvo_allocator half{};
    half.alloc = [](void *, std::size_t size) { return std::malloc(size); };
    EXPECT_INVALID(salvo::set_default_allocator(&half)); /* alloc without free */
    EXPECT_EQ(status_of([] { return salvo::set_default_allocator(nullptr); }), SALVO_OK);
}

#if SALVO_HPP_EXCEPTIONS
/* What a thrown error carries: the C function, the status, the message. */
static void errors_name_the_call()
{
    salvo::stream s;
    try {
        s.flush();
        FAIL("flush of an empty stream did not throw");
    } catch (const salvo::error &e) {
        EXPECT_EQ(e.status(), SALVO_ERROR_INVALID_ARGUMENT);
        EXPECT(std::string(e.call()) == "salvo_stream_flush");
        EXPECT(std::strlen(e.detail()) > 0);
        std::string what = e.what();
        EXPECT(what.rfind("salvo_stream_flush: SALVO_ERROR_INVALID_ARGUMENT: ", 0) == 0);
    }
    salvo::buffer b;
    try {
        (void)b.read_vector<int>(4);
        FAIL("read of an empty buffer did not throw");
    } catch (const std::runtime_error &e) { /* caught as its base */
        EXPECT(std::string(e.what()).find("salvo_buffer_read") == 0);
    }
}
#endif

int main()
{
    static const harness::test tests[] = {
        {"unique_handle_destroys_once", unique_handle_destroys_once},
        {"error_and_result", error_and_result},
        {"bindings_and_groups", bindings_and_groups},
        {"what_the_c_calls_rely_on", what_the_c_calls_rely_on},
        {"empty_objects_pass_statuses_through", empty_objects_pass_statuses_through},
#if SALVO_HPP_EXCEPTIONS
        {"errors_name_the_call", errors_name_the_call},
#endif
    };
    return harness::run(tests);
}
