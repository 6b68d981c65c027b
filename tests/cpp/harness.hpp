/*
 * A small test harness for the C++ suites (tests/cpp): cmocka's failures
 * jump with longjmp, which would skip the destructors these suites are
 * about. EXPECT records a failure and goes on; REQUIRE also leaves the
 * test function. In the exceptions mode an exception that leaves a test
 * fails it with its message. Works with and without exceptions.
 *
 * The device helpers open a device with the validation layer on and count
 * its validation messages: any fails the program (as tests/lava_*.c).
 */
#ifndef SALVO_TESTS_CPP_HARNESS_HPP
#define SALVO_TESTS_CPP_HARNESS_HPP

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <salvo/salvo.hpp>

namespace harness {

inline int &failures()
{
    static int n = 0;
    return n;
}

inline void fail(const char *file, int line, const char *what)
{
    std::fprintf(stderr, "%s:%d: failed: %s\n", file, line, what);
    failures()++;
}

template <typename A, typename B>
inline bool expect_eq(const A &a, const B &b, const char *file, int line, const char *sa,
                      const char *sb)
{
    if (a == b)
        return true;
    std::fprintf(stderr, "%s:%d: failed: %s == %s (%lld vs %lld)\n", file, line, sa, sb,
                 static_cast<long long>(a), static_cast<long long>(b));
    failures()++;
    return false;
}

#define EXPECT(cond) ((cond) ? (void)0 : harness::fail(__FILE__, __LINE__, #cond))
#define FAIL(what) harness::fail(__FILE__, __LINE__, what)
#define EXPECT_EQ(a, b) ((void)harness::expect_eq((a), (b), __FILE__, __LINE__, #a, #b))
#define REQUIRE(cond)                                                                              \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            harness::fail(__FILE__, __LINE__, #cond);                                              \
            return;                                                                                \
        }                                                                                          \
    } while (0)
#define REQUIRE_EQ(a, b)                                                                           \
    do {                                                                                           \
        if (!harness::expect_eq((a), (b), __FILE__, __LINE__, #a, #b))                             \
            return;                                                                                \
    } while (0)

struct test {
    const char *name;
    void (*fn)();
};

/* Runs every test; returns the program's exit status. */
template <std::size_t N>
inline int run(const test (&tests)[N])
{
    int failed_tests = 0;
    for (const test &t : tests) {
        std::fprintf(stderr, "[ RUN      ] %s\n", t.name);
        int before = failures();
#if SALVO_HPP_EXCEPTIONS
        try {
            t.fn();
        } catch (const std::exception &e) {
            std::fprintf(stderr, "%s: unexpected exception: %s\n", t.name, e.what());
            failures()++;
        }
#else
        t.fn();
#endif
        bool ok = failures() == before;
        failed_tests += ok ? 0 : 1;
        std::fprintf(stderr, "[ %8s ] %s\n", ok ? "OK" : "FAILED", t.name);
    }
    std::fprintf(stderr, "%d of %zu tests failed\n", failed_tests, N);
    return failed_tests ? 1 : 0;
}

/* The status a call ended with, in either mode: what it returned (a
 * status, or a result's), or in the exceptions mode the status of the
 * salvo::error it threw (SALVO_OK for a call that returned a value). */
inline salvo_status status_from(salvo_status s)
{
    return s;
}
template <typename T>
inline salvo_status status_from(const salvo::result<T> &r)
{
    return r.status;
}
template <typename T>
inline salvo_status status_from(const T &)
{
    return SALVO_OK;
}
template <typename F>
inline salvo_status status_of(F &&call)
{
#if SALVO_HPP_EXCEPTIONS
    try {
        return status_from(call());
    } catch (const salvo::error &e) {
        return e.status();
    }
#else
    return status_from(call());
#endif
}

/* ------------------------------------------------------------------ */
/* Devices                                                              */
/* ------------------------------------------------------------------ */

inline std::atomic<std::uint64_t> &validation_messages()
{
    static std::atomic<std::uint64_t> n{0};
    return n;
}

inline void log_cb(void *, salvo_log_level level, const char *file, int, const char *message)
{
    if (file && std::strcmp(file, "validation") == 0) {
        validation_messages()++;
        std::fprintf(stderr, "VALIDATION: %s\n", message);
    } else if (level >= SALVO_LOG_WARNING) {
        std::fprintf(stderr, "salvo: %s\n", message);
    }
}

/* Exit 77 (ctest: skipped) where there is no Vulkan device. */
inline void require_device()
{
    std::uint32_t n = 0;
    if (salvo_device_enumerate(nullptr, &n) != SALVO_OK || n == 0) {
        std::fprintf(stderr, "no Vulkan device: skipped\n");
        std::exit(77);
    }
}

/* The desc every device of the suites is made with. */
inline salvo_device_desc device_desc(std::uint32_t batch_size = 0)
{
    salvo_device_desc d{};
    d.flags = SALVO_DEVICE_VALIDATION;
    d.log = log_cb;
    d.batch_size = batch_size;
    return d;
}

/* The end of a suite: a validation message anywhere fails it. */
inline int finish(int status)
{
    std::uint64_t v = validation_messages();
    if (v) {
        std::fprintf(stderr, "%" PRIu64 " validation message(s)\n", v);
        return 1;
    }
    return status;
}

} // namespace harness

#endif
