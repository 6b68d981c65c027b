/*
 * salvo.hpp: salvo from C++17. Header-only, over salvo.h and nothing else:
 * it adds no symbol to the library and links nothing more.
 *
 *   salvo::device dev = salvo::device::create();
 *   salvo::buffer x = dev.create_buffer(hx);              // a std::vector<float>, copied in
 *   salvo::buffer y = dev.create_buffer(hy);
 *   salvo::kernel saxpy = dev.create_kernel(saxpy_spv, {{0, 256}});
 *   salvo::stream stream = dev.create_stream();
 *   struct { float a; uint32_t n; } push = {2.0f, n};
 *   stream.launch(saxpy, {(n + 255) / 256}, {salvo::bind(0, x), salvo::bind(1, y)}, push);
 *   stream.synchronize();
 *   std::vector<float> out = y.read_vector<float>();
 *
 * Objects. device, stream, event, buffer, kernel, gate, graph, image and
 * sampler each own one C handle: move-only, empty once moved from (or
 * default-constructed), destroyed when they go out of scope or are
 * reset(). get() lends the handle, release() gives it up (the caller then
 * destroys it), and the constructor from a handle adopts one made by the
 * C API. Every destroy but the device's returns at once and never fails,
 * even while work that uses the object is recorded or running: that work
 * goes on, and the object is freed once it is over (salvo.h, each
 * salvo_*_destroy). So a buffer may leave its scope right after the
 * launch that writes it. The device's destroy is the one that waits: for
 * all its work, and it then reclaims what was left. Destroy every object
 * before its device (declare the device first); a handle of a reclaimed
 * object must not be destroyed again.
 *
 * Errors. By default a call that fails throws salvo::error (a
 * std::runtime_error) carrying the status, the C function's name and the
 * message salvo_last_error() gave at the failure. Statuses that are not
 * errors (SALVO_NOT_READY, SALVO_TIMEOUT, SALVO_CANCELLED) are returned,
 * never thrown: calls that may give one return salvo_status.
 * No-exceptions mode: define SALVO_HPP_NO_EXCEPTIONS before the include,
 * or compile with exceptions off (-fno-exceptions); SALVO_HPP_EXCEPTIONS
 * then reads 0. Nothing throws; calls return salvo_status as the C API
 * does (marked [[nodiscard]]), and what returns a value (returns<T>)
 * returns a salvo::result<T>: the status beside the value, which is empty
 * (a null handle, an empty vector, a zeroed struct) when the status is an
 * error. The last error's message is then salvo::last_error(). The two
 * modes live in different inline namespaces, so translation units built
 * in either mode link together without clashing.
 *
 * Launches. Bindings are a salvo::bindings, a view of salvo_binding
 * values (a braced list of salvo::bind(...), a C array, or any contiguous
 * container): nothing is copied or allocated, the pointer and count go to
 * salvo_launch as they are. Push constants are any trivially copyable
 * value, passed by address with its sizeof. The launch path therefore
 * costs what the C call costs, and one test of the status.
 *
 * Thread safety and lifetimes are salvo.h's, call for call: each member
 * function says which C function it makes.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SALVO_SALVO_HPP
#define SALVO_SALVO_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "salvo/salvo.h"

#if __cplusplus < 201703L && !(defined(_MSVC_LANG) && _MSVC_LANG >= 201703L)
#error "salvo.hpp needs C++17"
#endif

#if defined(SALVO_HPP_NO_EXCEPTIONS) ||                                                            \
    !(defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND))
#define SALVO_HPP_EXCEPTIONS 0
#define SALVO_HPP_CHECKED [[nodiscard]]
#define SALVO_HPP_NOEXCEPT noexcept
#else
#define SALVO_HPP_EXCEPTIONS 1
#define SALVO_HPP_CHECKED
#define SALVO_HPP_NOEXCEPT
#endif

#if defined(__GNUC__)
#define SALVO_HPP_COLD __attribute__((noinline, cold))
#else
#define SALVO_HPP_COLD
#endif

namespace salvo {
#if SALVO_HPP_EXCEPTIONS
inline namespace v0_exceptions {
#else
inline namespace v0_status {
#endif

/* ------------------------------------------------------------------ */
/* Statuses and errors                                                 */
/* ------------------------------------------------------------------ */

/* salvo_status_string: never allocates, never NULL. */
inline const char *status_string(salvo_status status) noexcept
{
    return salvo_status_string(status);
}

/* salvo_last_error: this thread's detail of its last failure, valid until
 * its next salvo call. */
inline const char *last_error() noexcept
{
    return salvo_last_error();
}

/* A failed call: what() reads "salvo_launch: SALVO_ERROR_INVALID_ARGUMENT:
 * <salvo_last_error() at the failure>". Copies never throw. */
class error : public std::runtime_error {
public:
    /* call: the name of the C function, a string that outlives the error
     * (a literal). The detail is taken from salvo_last_error() now. */
    error(salvo_status status, const char *call)
        : error(status, call, std::string(salvo_last_error()))
    {
    }
    error(salvo_status status, const char *call, const std::string &detail)
        : std::runtime_error(compose(status, call, detail)), status_(status),
          call_(call ? call : ""), detail_at_(prefix_length(status, call))
    {
    }

    salvo_status status() const noexcept { return status_; }
    const char *call() const noexcept { return call_; }
    /* salvo_last_error() as it was when the call failed (may be empty). */
    const char *detail() const noexcept { return what() + detail_at_; }

private:
    static std::string compose(salvo_status status, const char *call, const std::string &detail)
    {
        std::string s = call ? call : "salvo";
        s += ": ";
        s += salvo_status_string(status);
        s += ": ";
        s += detail;
        return s;
    }
    /* "call: STATUS: ", counted as compose writes it (the detail may hold
     * a NUL, which would end what() early). */
    static std::size_t prefix_length(salvo_status status, const char *call) noexcept
    {
        return std::strlen(call ? call : "salvo") + 2 + std::strlen(salvo_status_string(status)) +
               2;
    }

    salvo_status status_;
    const char *call_;
    std::size_t detail_at_; /* where the detail starts in what() */
};

/* A status and a value: what returns<T> is in the no-exceptions mode, and
 * in both modes what event::elapsed returns (whose non-error statuses
 * carry meaning). When status is an error, value is T's empty state (a
 * null handle, an empty vector, a zeroed struct). */
template <typename T>
struct result {
    salvo_status status = SALVO_OK;
    T value{};

    bool ok() const noexcept { return status == SALVO_OK; }
    explicit operator bool() const noexcept { return ok(); }
};

#if SALVO_HPP_EXCEPTIONS
template <typename T>
using returns = T;
#else
template <typename T>
using returns = result<T>;
#endif

namespace detail {

#if SALVO_HPP_EXCEPTIONS
[[noreturn]] SALVO_HPP_COLD inline void fail(salvo_status status, const char *call)
{
    throw error(status, call);
}
#endif

/* The status, or in the exceptions mode an error thrown for a negative one. */
inline salvo_status check(salvo_status status, const char *call) SALVO_HPP_NOEXCEPT
{
#if SALVO_HPP_EXCEPTIONS
    if (status < 0)
        fail(status, call);
#else
    (void)call;
#endif
    return status;
}

template <typename T>
inline returns<T> deliver(salvo_status status, T value, const char *call)
{
#if SALVO_HPP_EXCEPTIONS
    if (status < 0)
        fail(status, call);
    return value;
#else
    (void)call;
    result<T> r;
    r.status = status;
    if (status >= 0)
        r.value = std::move(value);
    return r; /* on an error, value (a handle perhaps) is destroyed here */
#endif
}

/* nullptr is a pointer too: as push constants it would send its own
 * zero bytes. */
template <typename T>
inline constexpr bool is_push_constant_v =
    std::is_trivially_copyable<T>::value && !std::is_pointer<T>::value &&
    !std::is_member_pointer<T>::value && !std::is_null_pointer<T>::value;

/* count values of T in bytes, or UINT64_MAX where that overflows: a size
 * salvo refuses for any buffer or image, where the product cut down to 64
 * bits would name a small, valid one. */
template <typename T>
constexpr std::uint64_t byte_count(std::size_t count) noexcept
{
    return std::uint64_t(count) > UINT64_MAX / sizeof(T) ? UINT64_MAX
                                                          : std::uint64_t(count) * sizeof(T);
}

/* host_call with a C++ callable: the copy is run and freed on salvo's
 * host-call thread. A throw out of it ends the program (noexcept): no
 * caller is there to catch it. */
/* A timeout in nanoseconds, as a double, for the C calls: 0 for none or
 * less (and NaN: only a look), UINT64_MAX for what the type cannot hold. */
inline std::uint64_t timeout_ns(double ns) noexcept
{
    if (!(ns > 0.0))
        return 0;
    return ns >= 18446744073709549568.0 ? UINT64_MAX : static_cast<std::uint64_t>(ns);
}

/* The callable of a host call, copied into its own allocation: NULL where
 * that fails (no memory, or, in the no-exceptions mode of a build that has
 * exceptions, a copy that throws: a noexcept call must not end the
 * program for it). */
template <typename Fn, typename F>
Fn *host_call_copy(F &&fn) noexcept
{
#if !SALVO_HPP_EXCEPTIONS && (defined(__cpp_exceptions) || defined(__EXCEPTIONS))
    try {
        return new (std::nothrow) Fn(std::forward<F>(fn));
    } catch (...) {
        return nullptr;
    }
#else
    return new (std::nothrow) Fn(std::forward<F>(fn));
#endif
}

template <typename F>
void host_call_thunk(void *user) noexcept
{
    F *fn = static_cast<F *>(user);
    (*fn)();
    delete fn;
}

} // namespace detail

/* ------------------------------------------------------------------ */
/* Ownership                                                           */
/* ------------------------------------------------------------------ */

/* Owns one handle of type T, destroyed with Destroy (which accepts NULL,
 * never blocks and never fails, as every salvo_*_destroy): the base of
 * every object below, usable for handles of one's own. */
template <typename T, void (*Destroy)(T *)>
class unique_handle {
public:
    using native_type = T;

    constexpr unique_handle() noexcept = default;
    /* Adopt handle: it is destroyed with this object. */
    explicit unique_handle(T *handle) noexcept : handle_(handle) {}
    unique_handle(unique_handle &&other) noexcept : handle_(other.release()) {}
    unique_handle &operator=(unique_handle &&other) noexcept
    {
        if (this != &other)
            reset(other.release());
        return *this;
    }
    unique_handle(const unique_handle &) = delete;
    unique_handle &operator=(const unique_handle &) = delete;
    ~unique_handle() { reset(); }

    T *get() const noexcept { return handle_; }
    /* Give the handle up: this object is empty, the caller destroys it. */
    T *release() noexcept
    {
        T *handle = handle_;
        handle_ = nullptr;
        return handle;
    }
    /* Destroy the handle held (if any) and hold handle instead; the one
     * held already is kept, not destroyed. */
    void reset(T *handle = nullptr) noexcept
    {
        T *old = handle_;
        handle_ = handle;
        if (old && old != handle)
            Destroy(old);
    }
    explicit operator bool() const noexcept { return handle_ != nullptr; }
    friend void swap(unique_handle &a, unique_handle &b) noexcept
    {
        std::swap(a.handle_, b.handle_);
    }

protected:
    T *handle_ = nullptr;
};

class device;
class stream;
class event;
class buffer;
class kernel;
class gate;
class graph;
class image;
class sampler;

/* ------------------------------------------------------------------ */
/* Buffers                                                             */
/* ------------------------------------------------------------------ */

/* Typed transfers take counts of T (bytes = count * sizeof(T)) and byte
 * offsets, as salvo.h's offsets are. */
class buffer : public unique_handle<salvo_buffer, salvo_buffer_destroy> {
public:
    using unique_handle::unique_handle;

    /* salvo_buffer_size (0 for an empty buffer). */
    std::uint64_t size() const noexcept { return salvo_buffer_size(handle_); }

    /* salvo_buffer_write: returns once the bytes are in place. */
    SALVO_HPP_CHECKED salvo_status write_bytes(std::uint64_t offset, const void *src,
                                               std::uint64_t bytes) SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_buffer_write(handle_, offset, src, bytes), "salvo_buffer_write");
    }
    template <typename T>
    SALVO_HPP_CHECKED salvo_status write(const T *src, std::size_t count,
                                         std::uint64_t offset = 0) SALVO_HPP_NOEXCEPT
    {
        static_assert(std::is_trivially_copyable<T>::value, "buffer::write: trivially copyable T");
        return write_bytes(offset, src, detail::byte_count<T>(count));
    }
    template <typename T>
    SALVO_HPP_CHECKED salvo_status write(const std::vector<T> &src,
                                         std::uint64_t offset = 0) SALVO_HPP_NOEXCEPT
    {
        return write(src.data(), src.size(), offset);
    }

    /* salvo_buffer_read: after every launch made so far that uses the buffer. */
    SALVO_HPP_CHECKED salvo_status read_bytes(std::uint64_t offset, void *dst,
                                              std::uint64_t bytes) const SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_buffer_read(handle_, offset, dst, bytes), "salvo_buffer_read");
    }
    template <typename T>
    SALVO_HPP_CHECKED salvo_status read(T *dst, std::size_t count,
                                        std::uint64_t offset = 0) const SALVO_HPP_NOEXCEPT
    {
        static_assert(std::is_trivially_copyable<T>::value, "buffer::read: trivially copyable T");
        return read_bytes(offset, dst, detail::byte_count<T>(count));
    }
    /* Fills dst as it is sized. */
    template <typename T>
    SALVO_HPP_CHECKED salvo_status read(std::vector<T> &dst,
                                        std::uint64_t offset = 0) const SALVO_HPP_NOEXCEPT
    {
        return read(dst.data(), dst.size(), offset);
    }
    /* count values of T from offset; with no count, as many as the whole
     * buffer holds. T must be trivially copyable (the bytes are copied). */
    template <typename T, typename = std::enable_if_t<std::is_trivially_copyable<T>::value>>
    SALVO_HPP_CHECKED returns<std::vector<T>> read_vector(std::size_t count,
                                                          std::uint64_t offset = 0) const
    {
        std::uint64_t bytes = detail::byte_count<T>(count), have = size();
        if (bytes == 0 && handle_ && offset <= have) /* nothing to read: salvo refuses size 0 */
            return detail::deliver(SALVO_OK, std::vector<T>(), "salvo_buffer_read");
        if (bytes > have || offset > have - bytes) {
            /* Past the end: salvo refuses the range (and says so) before
             * it writes a byte, so nothing is allocated for it. */
            unsigned char none = 0;
            return detail::deliver(salvo_buffer_read(handle_, offset, &none, bytes),
                                   std::vector<T>(), "salvo_buffer_read");
        }
        std::vector<T> v(count);
        salvo_status st = salvo_buffer_read(handle_, offset, v.data(), bytes);
        return detail::deliver(st, std::move(v), "salvo_buffer_read");
    }
    template <typename T, typename = std::enable_if_t<std::is_trivially_copyable<T>::value>>
    SALVO_HPP_CHECKED returns<std::vector<T>> read_vector() const
    {
        return read_vector<T>(static_cast<std::size_t>(size() / sizeof(T)));
    }

    /* salvo_buffer_map: HOST and SHARED buffers; valid while the buffer lives. */
    template <typename T = void>
    SALVO_HPP_CHECKED returns<T *> map() const SALVO_HPP_NOEXCEPT
    {
        void *p = nullptr;
        salvo_status st = salvo_buffer_map(handle_, &p);
        return detail::deliver(st, static_cast<T *>(p), "salvo_buffer_map");
    }

    /* salvo_buffer_address: needs features.buffer_device_address. */
    SALVO_HPP_CHECKED returns<std::uint64_t> address() const SALVO_HPP_NOEXCEPT
    {
        std::uint64_t a = 0;
        salvo_status st = salvo_buffer_address(handle_, &a);
        return detail::deliver(st, std::move(a), "salvo_buffer_address");
    }
};

/* ------------------------------------------------------------------ */
/* Images and samplers                                                 */
/* ------------------------------------------------------------------ */

/* A region of {} is the whole image (salvo_image_region's zero extents). */
class image : public unique_handle<salvo_image, salvo_image_destroy> {
public:
    using unique_handle::unique_handle;

    /* salvo_image_desc_get (usage as resolved at create). */
    SALVO_HPP_CHECKED returns<salvo_image_desc> desc() const SALVO_HPP_NOEXCEPT
    {
        salvo_image_desc d{};
        salvo_status st = salvo_image_desc_get(handle_, &d);
        return detail::deliver(st, std::move(d), "salvo_image_desc_get");
    }

    /* salvo_image_write / salvo_image_read: staged and waited for; the
     * bytes must be the region's exactly (texels x texel size). */
    SALVO_HPP_CHECKED salvo_status write_bytes(const void *src, std::uint64_t bytes,
                                               const salvo_image_region &region = {})
        SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_image_write(handle_, &region, src, bytes), "salvo_image_write");
    }
    template <typename T>
    SALVO_HPP_CHECKED salvo_status write(const T *src, std::size_t count,
                                         const salvo_image_region &region = {}) SALVO_HPP_NOEXCEPT
    {
        static_assert(std::is_trivially_copyable<T>::value, "image::write: trivially copyable T");
        return write_bytes(src, detail::byte_count<T>(count), region);
    }
    template <typename T>
    SALVO_HPP_CHECKED salvo_status write(const std::vector<T> &src,
                                         const salvo_image_region &region = {}) SALVO_HPP_NOEXCEPT
    {
        return write(src.data(), src.size(), region);
    }
    SALVO_HPP_CHECKED salvo_status
    read_bytes(void *dst, std::uint64_t bytes,
               const salvo_image_region &region = {}) const SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_image_read(handle_, &region, dst, bytes), "salvo_image_read");
    }
    template <typename T>
    SALVO_HPP_CHECKED salvo_status
    read(T *dst, std::size_t count, const salvo_image_region &region = {}) const SALVO_HPP_NOEXCEPT
    {
        static_assert(std::is_trivially_copyable<T>::value, "image::read: trivially copyable T");
        return read_bytes(dst, detail::byte_count<T>(count), region);
    }
    /* Fills dst as it is sized. */
    template <typename T>
    SALVO_HPP_CHECKED salvo_status
    read(std::vector<T> &dst, const salvo_image_region &region = {}) const SALVO_HPP_NOEXCEPT
    {
        return read(dst.data(), dst.size(), region);
    }
};

class sampler : public unique_handle<salvo_sampler, salvo_sampler_destroy> {
public:
    using unique_handle::unique_handle;
};

/* ------------------------------------------------------------------ */
/* Bindings                                                            */
/* ------------------------------------------------------------------ */

/* salvo_binding values, filled in by name. */
inline salvo_binding bind(std::uint32_t binding, const buffer &b, std::uint64_t offset = 0,
                          std::uint64_t size = 0) noexcept
{
    salvo_binding r{};
    r.binding = binding;
    r.buffer = b.get();
    r.offset = offset;
    r.size = size;
    return r;
}
/* One element of an array of buffers (`buffer B {...} b[4]`). */
inline salvo_binding bind_element(std::uint32_t binding, std::uint32_t element, const buffer &b,
                                  std::uint64_t offset = 0, std::uint64_t size = 0) noexcept
{
    salvo_binding r = bind(binding, b, offset, size);
    r.element = element;
    return r;
}
/* A storage or sampled image. */
inline salvo_binding bind(std::uint32_t binding, const image &i) noexcept
{
    salvo_binding r{};
    r.binding = binding;
    r.image = i.get();
    return r;
}
/* A combined image sampler (sampler2D and the like). */
inline salvo_binding bind(std::uint32_t binding, const image &i, const sampler &s) noexcept
{
    salvo_binding r = bind(binding, i);
    r.sampler = s.get();
    return r;
}
/* A sampler alone. */
inline salvo_binding bind(std::uint32_t binding, const sampler &s) noexcept
{
    salvo_binding r{};
    r.binding = binding;
    r.sampler = s.get();
    return r;
}

/* A view of salvo_binding values, as std::span: it refers to them and
 * copies nothing. A braced list lives until the end of the full
 * expression it is written in (a call's arguments: the whole call), so a
 * list kept for later belongs in an array or container. */
class bindings {
public:
    constexpr bindings() noexcept = default;
    /* The list's array outlives the call this view is an argument of
     * (hence the pointer taken through a function, which GCC's
     * -Winit-list-lifetime would otherwise flag). */
    constexpr bindings(std::initializer_list<salvo_binding> list) noexcept
        : data_(first(list)), size_(static_cast<std::uint32_t>(list.size()))
    {
    }
    constexpr bindings(const salvo_binding *data, std::uint32_t size) noexcept
        : data_(data), size_(size)
    {
    }
    constexpr bindings(const salvo_binding &one) noexcept : data_(&one), size_(1) {}
    template <std::size_t N>
    constexpr bindings(const salvo_binding (&array)[N]) noexcept
        : data_(array), size_(static_cast<std::uint32_t>(N))
    {
    }
    /* Any contiguous container of salvo_binding: std::array, std::vector,
     * std::span. Of salvo_binding itself: the C call steps through the
     * array by its size, so a type derived from it is refused. A count
     * past 32 bits is UINT32_MAX, which salvo refuses. */
    template <typename C,
              typename = std::enable_if_t<std::is_same<
                  std::remove_cv_t<std::remove_pointer_t<decltype(std::declval<const C &>().data())>>,
                  salvo_binding>::value>,
              typename = decltype(std::declval<const C &>().size())>
    constexpr bindings(const C &container) noexcept
        : data_(container.data()),
          size_(static_cast<std::uint64_t>(container.size()) > UINT32_MAX
                    ? UINT32_MAX
                    : static_cast<std::uint32_t>(container.size()))
    {
    }

    constexpr const salvo_binding *data() const noexcept { return data_; }
    constexpr std::uint32_t size() const noexcept { return size_; }
    constexpr const salvo_binding *begin() const noexcept { return data_; }
    constexpr const salvo_binding *end() const noexcept { return data_ + size_; }

private:
    static constexpr const salvo_binding *first(std::initializer_list<salvo_binding> list) noexcept
    {
        return list.begin();
    }

    const salvo_binding *data_ = nullptr;
    std::uint32_t size_ = 0;
};

/* Workgroup counts: {x}, {x, y} or {x, y, z}; unnamed ones are 1. */
struct groups {
    std::uint32_t count[3];

    constexpr groups(std::uint32_t x, std::uint32_t y = 1, std::uint32_t z = 1) noexcept
        : count{x, y, z}
    {
    }
    constexpr groups(const std::uint32_t (&xyz)[3]) noexcept : count{xyz[0], xyz[1], xyz[2]} {}
};

/* ------------------------------------------------------------------ */
/* Kernels                                                             */
/* ------------------------------------------------------------------ */

class kernel : public unique_handle<salvo_kernel, salvo_kernel_destroy> {
public:
    using unique_handle::unique_handle;

    /* salvo_kernel_info_get: bindings, push-constant size, local size. */
    SALVO_HPP_CHECKED returns<salvo_kernel_info> info() const SALVO_HPP_NOEXCEPT
    {
        salvo_kernel_info i{};
        salvo_status st = salvo_kernel_info_get(handle_, &i);
        return detail::deliver(st, std::move(i), "salvo_kernel_info_get");
    }
};

/* ------------------------------------------------------------------ */
/* Host gates                                                          */
/* ------------------------------------------------------------------ */

class gate : public unique_handle<salvo_gate, salvo_gate_destroy> {
public:
    using unique_handle::unique_handle;

    /* salvo_gate_raise: monotonic; lower is SALVO_ERROR_INVALID_ARGUMENT. */
    SALVO_HPP_CHECKED salvo_status raise(std::uint64_t value) SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_gate_raise(handle_, value), "salvo_gate_raise");
    }
    /* salvo_gate_value: the highest value raised so far. */
    std::uint64_t value() const noexcept { return salvo_gate_value(handle_); }
};

/* ------------------------------------------------------------------ */
/* Graphs                                                              */
/* ------------------------------------------------------------------ */

/* Made by stream::end_capture, replayed by stream::launch(graph). */
class graph : public unique_handle<salvo_graph, salvo_graph_destroy> {
public:
    using unique_handle::unique_handle;

    /* salvo_graph_node_count. */
    std::uint32_t node_count() const noexcept { return salvo_graph_node_count(handle_); }

    /* salvo_graph_set_bindings: launch node `node`'s new bindings, for the
     * replays made from now on. */
    SALVO_HPP_CHECKED salvo_status set_bindings(std::uint32_t node, bindings b) SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_graph_set_bindings(handle_, node, b.data(), b.size()),
                             "salvo_graph_set_bindings");
    }
    /* salvo_graph_set_push: sizeof(Push) must be the kernel's push size. */
    template <typename Push>
    SALVO_HPP_CHECKED salvo_status set_push(std::uint32_t node, const Push &push) SALVO_HPP_NOEXCEPT
    {
        static_assert(detail::is_push_constant_v<Push>,
                      "push constants: a trivially copyable value (not a pointer to one)");
        return set_push(node, &push, static_cast<std::uint32_t>(sizeof(Push)));
    }
    SALVO_HPP_CHECKED salvo_status set_push(std::uint32_t node, const void *push,
                                            std::uint32_t push_size) SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_graph_set_push(handle_, node, push, push_size),
                             "salvo_graph_set_push");
    }
    /* salvo_graph_update: every node's parameters from `from`, a graph of
     * the same shape, for the replays made from now on. */
    SALVO_HPP_CHECKED salvo_status update(const graph &from) SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_graph_update(handle_, from.get()), "salvo_graph_update");
    }
};

/* ------------------------------------------------------------------ */
/* Events                                                              */
/* ------------------------------------------------------------------ */

class event : public unique_handle<salvo_event, salvo_event_destroy> {
public:
    using unique_handle::unique_handle;

    /* salvo_event_record: mark the point after the stream's work so far. */
    SALVO_HPP_CHECKED salvo_status record(stream &s) SALVO_HPP_NOEXCEPT;

    /* salvo_event_query: SALVO_OK, SALVO_NOT_READY, SALVO_CANCELLED. */
    [[nodiscard]] salvo_status query() const SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_event_query(handle_), "salvo_event_query");
    }
    /* salvo_event_synchronize. */
    SALVO_HPP_CHECKED salvo_status synchronize() const SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_event_synchronize(handle_), "salvo_event_synchronize");
    }
    /* salvo_event_wait: SALVO_OK, or SALVO_TIMEOUT when the bound expired
     * first (the work goes on). */
    SALVO_HPP_CHECKED salvo_status wait(std::uint64_t timeout_ns) const SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_event_wait(handle_, timeout_ns), "salvo_event_wait");
    }
    template <typename Rep, typename Period>
    SALVO_HPP_CHECKED salvo_status
    wait(std::chrono::duration<Rep, Period> timeout) const SALVO_HPP_NOEXCEPT
    {
        /* In double first: a duration of hours' max would overflow ns. */
        double ns = std::chrono::duration<double, std::nano>(timeout).count();
        return wait(detail::timeout_ns(ns));
    }
    /* salvo_event_cancel: withdraw the launches before the mark not yet
     * submitted. */
    SALVO_HPP_CHECKED salvo_status cancel() SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_event_cancel(handle_), "salvo_event_cancel");
    }

    /* salvo_event_elapsed: GPU nanoseconds from start's mark to end's. A
     * result in both modes, since SALVO_NOT_READY and SALVO_CANCELLED say
     * something (value 0 then); errors throw in the exceptions mode. */
    [[nodiscard]] static result<std::uint64_t> elapsed(const event &start,
                                                       const event &end) SALVO_HPP_NOEXCEPT
    {
        result<std::uint64_t> r;
        r.status = detail::check(salvo_event_elapsed(start.get(), end.get(), &r.value),
                                 "salvo_event_elapsed");
        return r;
    }
};

/* ------------------------------------------------------------------ */
/* Streams                                                             */
/* ------------------------------------------------------------------ */

/* An in-order queue of work, used by one thread at a time. Calls that may
 * give SALVO_TIMEOUT (a batch size of 1, a fence timeout) return it. */
class stream : public unique_handle<salvo_stream, salvo_stream_destroy> {
public:
    using unique_handle::unique_handle;

    /* salvo_launch with push constants: any trivially copyable value
     * whose size is the kernel's push-constant size. */
    template <typename Push>
    SALVO_HPP_CHECKED salvo_status launch(const kernel &k, const groups &g, bindings b,
                                          const Push &push) SALVO_HPP_NOEXCEPT
    {
        static_assert(detail::is_push_constant_v<Push>,
                      "push constants: a trivially copyable value (not a pointer to one)");
        return detail::check(salvo_launch(handle_, k.get(), g.count, b.data(), b.size(), &push,
                                          static_cast<std::uint32_t>(sizeof(Push))),
                             "salvo_launch");
    }
    /* salvo_launch of a kernel without push constants. */
    SALVO_HPP_CHECKED salvo_status launch(const kernel &k, const groups &g,
                                          bindings b = {}) SALVO_HPP_NOEXCEPT
    {
        return detail::check(
            salvo_launch(handle_, k.get(), g.count, b.data(), b.size(), nullptr, 0),
            "salvo_launch");
    }
    /* salvo_launch with push constants as bytes. */
    SALVO_HPP_CHECKED salvo_status launch(const kernel &k, const groups &g, bindings b,
                                          const void *push,
                                          std::uint32_t push_size) SALVO_HPP_NOEXCEPT
    {
        return detail::check(
            salvo_launch(handle_, k.get(), g.count, b.data(), b.size(), push, push_size),
            "salvo_launch");
    }
    /* salvo_launch_indirect: the workgroup counts are three uint32 the
     * device reads from counts at offset when the dispatch runs. */
    template <typename Push>
    SALVO_HPP_CHECKED salvo_status launch_indirect(const kernel &k, const buffer &counts,
                                                   std::uint64_t offset, bindings b,
                                                   const Push &push) SALVO_HPP_NOEXCEPT
    {
        static_assert(detail::is_push_constant_v<Push>,
                      "push constants: a trivially copyable value (not a pointer to one)");
        return launch_indirect(k, counts, offset, b, &push,
                               static_cast<std::uint32_t>(sizeof(Push)));
    }
    SALVO_HPP_CHECKED salvo_status launch_indirect(const kernel &k, const buffer &counts,
                                                   std::uint64_t offset,
                                                   bindings b = {}) SALVO_HPP_NOEXCEPT
    {
        return launch_indirect(k, counts, offset, b, nullptr, 0);
    }
    SALVO_HPP_CHECKED salvo_status launch_indirect(const kernel &k, const buffer &counts,
                                                   std::uint64_t offset, bindings b,
                                                   const void *push,
                                                   std::uint32_t push_size) SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_launch_indirect(handle_, k.get(), counts.get(), offset, b.data(),
                                                   b.size(), push, push_size),
                             "salvo_launch_indirect");
    }
    /* salvo_graph_launch: replay the graph in this stream's order. */
    SALVO_HPP_CHECKED salvo_status launch(const graph &g) SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_graph_launch(g.get(), handle_), "salvo_graph_launch");
    }

    /* salvo_fill: the 32-bit value over size bytes from offset (multiples of 4). */
    SALVO_HPP_CHECKED salvo_status fill(buffer &b, std::uint64_t offset, std::uint64_t size,
                                        std::uint32_t value) SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_fill(handle_, b.get(), offset, size, value), "salvo_fill");
    }
    /* The whole buffer, whose size must then be a multiple of 4 (else
     * SALVO_ERROR_INVALID_ARGUMENT, as salvo_fill; fill_pattern fills any
     * size). */
    SALVO_HPP_CHECKED salvo_status fill(buffer &b, std::uint32_t value) SALVO_HPP_NOEXCEPT
    {
        return fill(b, 0, b.size(), value);
    }
    /* salvo_fill_pattern: size bytes from any offset, pattern's bytes
     * repeated (a 1, 2 or 4-byte value: std::uint8_t, std::uint16_t, ...). */
    template <typename Pattern>
    SALVO_HPP_CHECKED salvo_status fill_pattern(buffer &b, std::uint64_t offset, std::uint64_t size,
                                                const Pattern &pattern) SALVO_HPP_NOEXCEPT
    {
        static_assert(std::is_trivially_copyable<Pattern>::value &&
                          (sizeof(Pattern) == 1 || sizeof(Pattern) == 2 || sizeof(Pattern) == 4),
                      "fill_pattern: a value of 1, 2 or 4 bytes");
        return detail::check(salvo_fill_pattern(handle_, b.get(), offset, size, &pattern,
                                                static_cast<std::uint32_t>(sizeof(Pattern))),
                             "salvo_fill_pattern");
    }

    /* salvo_copy: on the device, in stream order. */
    SALVO_HPP_CHECKED salvo_status copy(const buffer &src, std::uint64_t src_offset, buffer &dst,
                                        std::uint64_t dst_offset,
                                        std::uint64_t size) SALVO_HPP_NOEXCEPT
    {
        return detail::check(
            salvo_copy(handle_, src.get(), src_offset, dst.get(), dst_offset, size), "salvo_copy");
    }
    /* All of src to the start of dst. */
    SALVO_HPP_CHECKED salvo_status copy(const buffer &src, buffer &dst) SALVO_HPP_NOEXCEPT
    {
        return copy(src, 0, dst, 0, src.size());
    }
    /* salvo_copy_buffer_to_image: texels packed from src_offset. */
    SALVO_HPP_CHECKED salvo_status copy(const buffer &src, std::uint64_t src_offset, image &dst,
                                        const salvo_image_region &region = {}) SALVO_HPP_NOEXCEPT
    {
        return detail::check(
            salvo_copy_buffer_to_image(handle_, src.get(), src_offset, dst.get(), &region),
            "salvo_copy_buffer_to_image");
    }
    /* salvo_copy_image_to_buffer: texels packed from dst_offset. */
    SALVO_HPP_CHECKED salvo_status copy(const image &src, const salvo_image_region &region,
                                        buffer &dst,
                                        std::uint64_t dst_offset = 0) SALVO_HPP_NOEXCEPT
    {
        return detail::check(
            salvo_copy_image_to_buffer(handle_, src.get(), &region, dst.get(), dst_offset),
            "salvo_copy_image_to_buffer");
    }

    /* salvo_copy_image: src_region of src into dst_region of dst (the
     * same extents once resolved; {}: the whole image). */
    SALVO_HPP_CHECKED salvo_status copy(const image &src, const salvo_image_region &src_region,
                                        image &dst, const salvo_image_region &dst_region = {})
        SALVO_HPP_NOEXCEPT
    {
        return detail::check(
            salvo_copy_image(handle_, src.get(), &src_region, dst.get(), &dst_region),
            "salvo_copy_image");
    }

    /* salvo_stream_write: src is copied at the call (it may go at once);
     * the device's copy is in stream order. */
    SALVO_HPP_CHECKED salvo_status write_bytes(buffer &dst, std::uint64_t offset, const void *src,
                                               std::uint64_t bytes) SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_stream_write(handle_, dst.get(), offset, src, bytes),
                             "salvo_stream_write");
    }
    template <typename T>
    SALVO_HPP_CHECKED salvo_status write(buffer &dst, const T *src, std::size_t count,
                                         std::uint64_t offset = 0) SALVO_HPP_NOEXCEPT
    {
        static_assert(std::is_trivially_copyable<T>::value, "stream::write: trivially copyable T");
        return write_bytes(dst, offset, src, detail::byte_count<T>(count));
    }
    template <typename T>
    SALVO_HPP_CHECKED salvo_status write(buffer &dst, const std::vector<T> &src,
                                         std::uint64_t offset = 0) SALVO_HPP_NOEXCEPT
    {
        return write(dst, src.data(), src.size(), offset);
    }

    /* salvo_stream_read: dst is filled once the stream passes this point
     * (a synchronize, an event recorded after it); leave it alone (and
     * sized) until then. */
    SALVO_HPP_CHECKED salvo_status read_bytes(const buffer &src, std::uint64_t offset, void *dst,
                                              std::uint64_t bytes) SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_stream_read(handle_, src.get(), offset, dst, bytes),
                             "salvo_stream_read");
    }
    template <typename T>
    SALVO_HPP_CHECKED salvo_status read(const buffer &src, T *dst, std::size_t count,
                                        std::uint64_t offset = 0) SALVO_HPP_NOEXCEPT
    {
        static_assert(std::is_trivially_copyable<T>::value, "stream::read: trivially copyable T");
        return read_bytes(src, offset, dst, detail::byte_count<T>(count));
    }
    template <typename T>
    SALVO_HPP_CHECKED salvo_status read(const buffer &src, std::vector<T> &dst,
                                        std::uint64_t offset = 0) SALVO_HPP_NOEXCEPT
    {
        return read(src, dst.data(), dst.size(), offset);
    }

    /* salvo_stream_host_call: fn(user) on salvo's host-call thread, in
     * stream order. */
    SALVO_HPP_CHECKED salvo_status host_call(void (*fn)(void *), void *user) SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_stream_host_call(handle_, fn, user), "salvo_stream_host_call");
    }
    /* The same with a callable, copied (one allocation) and freed after
     * it ran. It must not throw: the program ends if it does. Where it
     * cannot be copied (no memory; in the no-exceptions mode, also a copy
     * that throws), SALVO_ERROR_OUT_OF_HOST_MEMORY without calling salvo
     * (salvo_last_error() is not about it). */
    template <typename F, typename = std::enable_if_t<std::is_invocable<std::decay_t<F> &>::value>>
    SALVO_HPP_CHECKED salvo_status host_call(F &&fn) SALVO_HPP_NOEXCEPT
    {
        using Fn = std::decay_t<F>;
        Fn *copy = detail::host_call_copy<Fn>(std::forward<F>(fn));
        if (!copy) {
            /* salvo was not called: its last error is not this one's. */
#if SALVO_HPP_EXCEPTIONS
            throw error(SALVO_ERROR_OUT_OF_HOST_MEMORY, "salvo_stream_host_call",
                        "the callable could not be copied (out of host memory)");
#else
            return SALVO_ERROR_OUT_OF_HOST_MEMORY;
#endif
        }
        salvo_status st = salvo_stream_host_call(handle_, &detail::host_call_thunk<Fn>, copy);
        /* fn runs exactly once for a call that returned SALVO_OK, never
         * for a refused one. */
        if (st < 0)
            delete copy;
        return detail::check(st, "salvo_stream_host_call");
    }

    /* salvo_stream_wait_event: the stream's later work waits for the event's. */
    SALVO_HPP_CHECKED salvo_status wait(const event &e) SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_stream_wait_event(handle_, e.get()), "salvo_stream_wait_event");
    }
    /* salvo_stream_wait_gate: the stream's later work waits for gate >= value. */
    SALVO_HPP_CHECKED salvo_status wait(const gate &g, std::uint64_t value) SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_stream_wait_gate(handle_, g.get(), value),
                             "salvo_stream_wait_gate");
    }

    /* salvo_stream_flush: submit without waiting. */
    SALVO_HPP_CHECKED salvo_status flush() SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_stream_flush(handle_), "salvo_stream_flush");
    }
    /* salvo_stream_synchronize: SALVO_OK, or SALVO_TIMEOUT (the work goes on). */
    SALVO_HPP_CHECKED salvo_status synchronize() SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_stream_synchronize(handle_), "salvo_stream_synchronize");
    }
    /* salvo_stream_query: SALVO_OK or SALVO_NOT_READY. */
    [[nodiscard]] salvo_status query() SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_stream_query(handle_), "salvo_stream_query");
    }

    /* salvo_stream_begin_capture / salvo_stream_end_capture. */
    SALVO_HPP_CHECKED salvo_status begin_capture() SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_stream_begin_capture(handle_), "salvo_stream_begin_capture");
    }
    [[nodiscard]] returns<graph> end_capture() SALVO_HPP_NOEXCEPT;
    /* salvo_stream_is_capturing: whether the stream's calls go to a capture
     * (begun on it, or joined through an event). */
    SALVO_HPP_CHECKED returns<bool> is_capturing() const SALVO_HPP_NOEXCEPT
    {
        bool capturing = false;
        salvo_status st = salvo_stream_is_capturing(handle_, &capturing);
        return detail::deliver(st, std::move(capturing), "salvo_stream_is_capturing");
    }
};

inline salvo_status event::record(stream &s) SALVO_HPP_NOEXCEPT
{
    return detail::check(salvo_event_record(handle_, s.get()), "salvo_event_record");
}

inline returns<graph> stream::end_capture() SALVO_HPP_NOEXCEPT
{
    salvo_graph *g = nullptr;
    salvo_status st = salvo_stream_end_capture(handle_, &g);
    return detail::deliver(st, graph(g), "salvo_stream_end_capture");
}

/* ------------------------------------------------------------------ */
/* Devices                                                             */
/* ------------------------------------------------------------------ */

/* The factory of every other object. Destroying a device (its scope's end,
 * reset()) waits for all its work and reclaims what is left: destroy its
 * objects first. */
class device : public unique_handle<salvo_device, salvo_device_destroy> {
public:
    using unique_handle::unique_handle;

    /* salvo_device_create; no desc (or a zeroed one): the defaults. */
    [[nodiscard]] static returns<device>
    create(const salvo_device_desc *desc = nullptr) SALVO_HPP_NOEXCEPT
    {
        salvo_device *d = nullptr;
        salvo_status st = salvo_device_create(desc, &d);
        return detail::deliver(st, device(d), "salvo_device_create");
    }
    [[nodiscard]] static returns<device> create(const salvo_device_desc &desc) SALVO_HPP_NOEXCEPT
    {
        return create(&desc);
    }

    /* salvo_device_enumerate: the devices that can run compute. */
    [[nodiscard]] static returns<std::vector<salvo_device_entry>> enumerate()
    {
        std::uint32_t n = 0;
        std::vector<salvo_device_entry> v;
        salvo_status st = salvo_device_enumerate(nullptr, &n);
        if (st == SALVO_OK && n > 0) {
            v.resize(n);
            st = salvo_device_enumerate(v.data(), &n);
            v.resize(st == SALVO_OK ? n : 0);
        }
        return detail::deliver(st, std::move(v), "salvo_device_enumerate");
    }

    SALVO_HPP_CHECKED returns<salvo_device_info> info() const SALVO_HPP_NOEXCEPT
    {
        salvo_device_info i{};
        salvo_status st = salvo_device_info_get(handle_, &i);
        return detail::deliver(st, std::move(i), "salvo_device_info_get");
    }
    SALVO_HPP_CHECKED returns<salvo_stats> stats() const SALVO_HPP_NOEXCEPT
    {
        salvo_stats s{};
        salvo_status st = salvo_device_stats(handle_, &s);
        return detail::deliver(st, std::move(s), "salvo_device_stats");
    }
    /* salvo_device_memory_info: per heap, its size, the process's budget
     * and usage, and what this device's buffers and images hold. */
    SALVO_HPP_CHECKED returns<salvo_memory_info> memory_info() const SALVO_HPP_NOEXCEPT
    {
        salvo_memory_info m{};
        salvo_status st = salvo_device_memory_info(handle_, &m);
        return detail::deliver(st, std::move(m), "salvo_device_memory_info");
    }
    bool is_lost() const noexcept { return salvo_device_is_lost(handle_); }
    /* salvo_device_synchronize: every stream; SALVO_OK or SALVO_TIMEOUT. */
    SALVO_HPP_CHECKED salvo_status synchronize() SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_device_synchronize(handle_), "salvo_device_synchronize");
    }
    SALVO_HPP_CHECKED salvo_status trace_start(const char *path) SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_trace_start(handle_, path), "salvo_trace_start");
    }
    SALVO_HPP_CHECKED salvo_status trace_stop() SALVO_HPP_NOEXCEPT
    {
        return detail::check(salvo_trace_stop(handle_), "salvo_trace_stop");
    }
    /* salvo_image_format_support: SALVO_IMAGE_* bits (0: not offered). */
    SALVO_HPP_CHECKED returns<std::uint32_t>
    format_support(salvo_format format) const SALVO_HPP_NOEXCEPT
    {
        std::uint32_t usage = 0;
        salvo_status st = salvo_image_format_support(handle_, format, &usage);
        return detail::deliver(st, std::move(usage), "salvo_image_format_support");
    }

    /* salvo_buffer_create: size bytes, contents undefined. */
    [[nodiscard]] returns<buffer>
    create_buffer(std::uint64_t size, salvo_domain domain = SALVO_DOMAIN_DEVICE) SALVO_HPP_NOEXCEPT
    {
        salvo_buffer *b = nullptr;
        salvo_status st = salvo_buffer_create(handle_, size, domain, &b);
        return detail::deliver(st, buffer(b), "salvo_buffer_create");
    }
    /* A buffer of contents' bytes, written with them. */
    template <typename T>
    [[nodiscard]] returns<buffer>
    create_buffer(const std::vector<T> &contents,
                  salvo_domain domain = SALVO_DOMAIN_DEVICE) SALVO_HPP_NOEXCEPT
    {
        static_assert(std::is_trivially_copyable<T>::value, "create_buffer: trivially copyable T");
        const std::uint64_t bytes = std::uint64_t(contents.size()) * sizeof(T);
        salvo_buffer *b = nullptr;
        salvo_status st = salvo_buffer_create(handle_, bytes, domain, &b);
        if (st != SALVO_OK)
            return detail::deliver(st, buffer(), "salvo_buffer_create");
        /* On a failed write the buffer goes with the throw, or with
         * deliver's value in the no-exceptions mode. */
        buffer made(b);
        st = salvo_buffer_write(b, 0, contents.data(), bytes);
        return detail::deliver(st, std::move(made), "salvo_buffer_write");
    }
    /* salvo_buffer_import_host: ptr must outlive the buffer and its work. */
    [[nodiscard]] returns<buffer>
    import_host(void *ptr, std::uint64_t size,
                salvo_domain domain = SALVO_DOMAIN_HOST) SALVO_HPP_NOEXCEPT
    {
        salvo_buffer *b = nullptr;
        salvo_status st = salvo_buffer_import_host(handle_, ptr, size, domain, &b);
        return detail::deliver(st, buffer(b), "salvo_buffer_import_host");
    }

    /* salvo_kernel_create from a desc. */
    [[nodiscard]] returns<kernel> create_kernel(const salvo_kernel_desc &desc) SALVO_HPP_NOEXCEPT
    {
        salvo_kernel *k = nullptr;
        salvo_status st = salvo_kernel_create(handle_, &desc, &k);
        return detail::deliver(st, kernel(k), "salvo_kernel_create");
    }
    /* From SPIR-V words (spirv_bytes long), with specialization constants
     * ({{id, value}, ...}) and a name for messages. */
    [[nodiscard]] returns<kernel>
    create_kernel(const std::uint32_t *spirv, std::size_t spirv_bytes,
                  std::initializer_list<salvo_spec_constant> spec = {},
                  const char *name = nullptr) SALVO_HPP_NOEXCEPT
    {
        salvo_kernel_desc d{};
        d.spirv = spirv;
        d.spirv_size = spirv_bytes;
        d.name = name;
        d.spec_constants = spec.size() ? spec.begin() : nullptr;
        d.spec_constant_count = static_cast<std::uint32_t>(spec.size());
        return create_kernel(d);
    }
    /* From the array salvo_add_shader() generates (foo_spv). */
    template <std::size_t N>
    [[nodiscard]] returns<kernel>
    create_kernel(const std::uint32_t (&spirv)[N],
                  std::initializer_list<salvo_spec_constant> spec = {},
                  const char *name = nullptr) SALVO_HPP_NOEXCEPT
    {
        return create_kernel(spirv, sizeof spirv, spec, name);
    }
    /* From GLSL compiled at run time (salvo_kernel_desc.glsl). */
    [[nodiscard]] returns<kernel>
    create_kernel_glsl(const char *glsl, std::initializer_list<salvo_spec_constant> spec = {},
                       const char *name = nullptr) SALVO_HPP_NOEXCEPT
    {
        salvo_kernel_desc d{};
        d.glsl = glsl;
        d.name = name;
        d.spec_constants = spec.size() ? spec.begin() : nullptr;
        d.spec_constant_count = static_cast<std::uint32_t>(spec.size());
        return create_kernel(d);
    }

    /* salvo_stream_create; no desc: the device's batching. */
    [[nodiscard]] returns<stream>
    create_stream(const salvo_stream_desc *desc = nullptr) SALVO_HPP_NOEXCEPT
    {
        salvo_stream *s = nullptr;
        salvo_status st = salvo_stream_create(handle_, desc, &s);
        return detail::deliver(st, stream(s), "salvo_stream_create");
    }
    [[nodiscard]] returns<stream> create_stream(const salvo_stream_desc &desc) SALVO_HPP_NOEXCEPT
    {
        return create_stream(&desc);
    }

    [[nodiscard]] returns<event> create_event() SALVO_HPP_NOEXCEPT
    {
        salvo_event *e = nullptr;
        salvo_status st = salvo_event_create(handle_, &e);
        return detail::deliver(st, event(e), "salvo_event_create");
    }
    /* flags: salvo_event_flag bits (SALVO_EVENT_DISABLE_TIMING: a point to
     * wait for only, with no timestamp). */
    [[nodiscard]] returns<event> create_event(uint32_t flags) SALVO_HPP_NOEXCEPT
    {
        salvo_event *e = nullptr;
        salvo_status st = salvo_event_create_flags(handle_, flags, &e);
        return detail::deliver(st, event(e), "salvo_event_create_flags");
    }
    /* salvo_gate_create: SALVO_ERROR_UNSUPPORTED without timeline semaphores. */
    [[nodiscard]] returns<gate> create_gate() SALVO_HPP_NOEXCEPT
    {
        salvo_gate *g = nullptr;
        salvo_status st = salvo_gate_create(handle_, &g);
        return detail::deliver(st, gate(g), "salvo_gate_create");
    }
    [[nodiscard]] returns<image> create_image(const salvo_image_desc &desc) SALVO_HPP_NOEXCEPT
    {
        salvo_image *i = nullptr;
        salvo_status st = salvo_image_create(handle_, &desc, &i);
        return detail::deliver(st, image(i), "salvo_image_create");
    }
    /* No desc: nearest, clamp to edge, normalized coordinates. */
    [[nodiscard]] returns<sampler>
    create_sampler(const salvo_sampler_desc *desc = nullptr) SALVO_HPP_NOEXCEPT
    {
        salvo_sampler *s = nullptr;
        salvo_status st = salvo_sampler_create(handle_, desc, &s);
        return detail::deliver(st, sampler(s), "salvo_sampler_create");
    }
    [[nodiscard]] returns<sampler> create_sampler(const salvo_sampler_desc &desc) SALVO_HPP_NOEXCEPT
    {
        return create_sampler(&desc);
    }
};

/* ------------------------------------------------------------------ */
/* Process-wide calls                                                  */
/* ------------------------------------------------------------------ */

/* salvo_default_allocator_set; nullptr restores malloc/free. */
SALVO_HPP_CHECKED inline salvo_status
set_default_allocator(const salvo_allocator *allocator) SALVO_HPP_NOEXCEPT
{
    return detail::check(salvo_default_allocator_set(allocator), "salvo_default_allocator_set");
}
/* salvo_format_texel_size (0 for an unknown format) and salvo_format_name. */
inline std::uint32_t format_texel_size(salvo_format format) noexcept
{
    return salvo_format_texel_size(format);
}
inline const char *format_name(salvo_format format) noexcept
{
    return salvo_format_name(format);
}

} // inline namespace
} // namespace salvo

#endif /* SALVO_SALVO_HPP */
