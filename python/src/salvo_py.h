/*
 * salvo's Python extension module (_salvo): what its files share.
 *
 * Every Python object of a device (buffer, kernel, stream, event, gate,
 * graph, image, sampler) starts with py_child: a strong reference to its
 * device object and a place on the device's list of children. Closing the
 * device (Device.close) walks that list and marks every child closed
 * (handle NULL) before salvo reclaims what it still holds, so a later call
 * on a child raises salvo.Error instead of reaching freed memory. A child
 * destroys its salvo object when it is closed or collected, never after
 * its device: it holds the device alive until then.
 *
 * The GIL: every call that may wait (for a batch slot, the device, a
 * gate another thread raises) runs with the GIL released, launch included,
 * so a Python thread raising a gate is never locked out by one waiting for
 * it. Such a call is counted on its device (PY_UNLOCK): a close made by
 * another thread meanwhile leaves the salvo destroy to the last of them
 * (py_release), since the call may be using the object. The library's log callback never takes the GIL: it queues messages
 * (log.c), and the thread that next returns from a salvo call hands them
 * to Python's logging.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SALVO_PY_H
#define SALVO_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <salvo/salvo.h>

/* ---------------------------------------------------------------- objects */

typedef struct py_node {
    struct py_node *prev, *next;
} py_node;

typedef struct py_deferred py_deferred;

typedef struct py_device {
    PyObject_HEAD
    salvo_device *handle; /* NULL once closed */
    py_node children;     /* sentinel of the list of py_child.node */
    PyObject *info;       /* dict, made at the first Device.info */
    /* Calls on the device's objects now running with the GIL let go
     * (PY_UNLOCK), and what a close made meanwhile left for the last of
     * them to destroy: salvo objects (py_release) and, once closed, the
     * device itself (closing). */
    Py_ssize_t calls;
    py_deferred *deferred;
    size_t deferred_count, deferred_cap;
    salvo_device *closing;
} py_device;

/* The kinds of child, for the checked cast below and for messages. */
typedef enum py_kind {
    PY_KIND_BUFFER,
    PY_KIND_KERNEL,
    PY_KIND_STREAM,
    PY_KIND_EVENT,
    PY_KIND_GATE,
    PY_KIND_GRAPH,
    PY_KIND_IMAGE,
    PY_KIND_SAMPLER,
} py_kind;

typedef struct py_child {
    PyObject_HEAD
    py_device *dev; /* strong reference; NULL only before the constructor ran */
    py_node node;   /* on dev->children while linked */
    py_kind kind;
    void *handle; /* the salvo object; NULL once closed (or, a graph, not made yet) */
} py_child;

typedef struct py_buffer {
    py_child head;
    uint64_t size;
    salvo_domain domain;
    void *map;             /* HOST and SHARED buffers: the persistent mapping */
    Py_ssize_t exports;    /* live buffer-protocol views of map */
} py_buffer;

typedef struct py_kernel {
    py_child head;
    PyObject *info; /* dict */
    /* The declared bindings, ascending, as launch maps a sequence onto them. */
    uint32_t binding_count;
    uint32_t binding[SALVO_MAX_BINDINGS];
    uint32_t count[SALVO_MAX_BINDINGS]; /* array elements */
} py_kernel;

/* A capture in progress: the streams in it point here. Node i of the graph
 * is the i-th command that returned SALVO_OK on any of them; nodes holds,
 * for each, its kernel (a launch) or None (a copy or fill), so that a
 * graph's set_bindings can take a sequence as launch does. */
typedef struct py_capture {
    PyObject_HEAD
    PyObject *nodes; /* list */
    bool active;     /* false once the capture ended or was abandoned */
    /* Commands of the capture between their salvo call and their note: two
     * at once (threads) may return in one order and take the GIL back in
     * the other, so after an overlap the nodes' order is unknown. */
    uint32_t in_flight;
    bool overlapped;
    void *origin;    /* the py_stream that began it (not a reference) */
} py_capture;

typedef struct py_stream {
    py_child head;
    py_capture *capture; /* strong; NULL when not capturing. Cleared lazily once !active */
} py_stream;

typedef struct py_event {
    py_child head;
    py_capture *capture; /* strong: the capture the event was last recorded in, or NULL */
} py_event;

typedef struct py_gate {
    py_child head;
    uint64_t waited; /* the highest value a Stream.wait_gate asked of it */
} py_gate;

typedef struct py_graph {
    py_child head;
    PyObject *nodes; /* list (kernel or None per node), or NULL where unknown */
} py_graph;

typedef struct py_image {
    py_child head;
    salvo_image_desc desc;
} py_image;

/* ---------------------------------------------------------------- types */

extern PyTypeObject *py_device_type;
extern PyTypeObject *py_buffer_type;
extern PyTypeObject *py_kernel_type;
extern PyTypeObject *py_stream_type;
extern PyTypeObject *py_event_type;
extern PyTypeObject *py_gate_type;
extern PyTypeObject *py_graph_type;
extern PyTypeObject *py_image_type;
extern PyTypeObject *py_sampler_type;
extern PyTypeObject *py_capture_type;

/* The class Stream.end_capture makes (salvo.Graph, set by _configure). */
extern PyObject *py_graph_class;

int py_device_init_type(PyObject *module);
int py_buffer_init_type(PyObject *module);
int py_kernel_init_type(PyObject *module);
int py_stream_init_type(PyObject *module);
int py_event_init_type(PyObject *module);
int py_gate_init_type(PyObject *module);
int py_graph_init_type(PyObject *module);
int py_image_init_type(PyObject *module);

/* ---------------------------------------------------------------- children */

/* Link a new child to dev (taking a reference to it); kind names it. */
void py_child_attach(py_child *c, py_device *dev, py_kind kind);
/* Unlink and drop the device reference; the handle is the caller's. */
void py_child_detach(py_child *c);
/* The child's handle, or NULL with salvo.Error(INVALID_STATE) set when it
 * or its device is closed. */
void *py_child_handle(PyObject *obj, PyTypeObject *type, const char *what);
/* The handle of obj, which must be an object of type (TypeError otherwise). */
static inline void *py_child_get(PyObject *obj, PyTypeObject *type, const char *what)
{
    if (Py_TYPE(obj) == type || PyType_IsSubtype(Py_TYPE(obj), type)) {
        void *h = ((py_child *)obj)->handle;
        if (h)
            return h;
    }
    return py_child_handle(obj, type, what);
}
int py_child_traverse(py_child *c, visitproc visit, void *arg);
/* A device object's handle, or NULL with salvo.Error set when closed. */
salvo_device *py_device_handle(PyObject *dev);

/* Destroy h, the salvo object of a child of dev of the given kind, now, or,
 * while a call on the device runs with the GIL let go (it may be using h:
 * another thread closed the object under it), once the last such call
 * returns. Nothing where h is NULL or the device is already closed (its
 * destroy reclaimed h). */
void py_release(py_device *dev, py_kind kind, void *h);
/* py_release for a gate's h: where the destroy waits for calls in flight,
 * the gate is raised at once to the highest value a stream waits for, as
 * the destroy would, since one of those calls may wait behind it. */
void py_gate_release(py_child *gate, void *h);

/* PY_UNLOCK(dev) ... PY_RELOCK: Py_BEGIN_ALLOW_THREADS and
 * Py_END_ALLOW_THREADS around a call on an object of dev, counted, so that
 * a close meanwhile (py_release, Device.close) leaves the destroy to the
 * last call that returns instead of freeing what the call is using. */
void py_calls_done(py_device *dev);
#define PY_UNLOCK(dev)                                                                        \
    {                                                                                         \
        py_device *py_unlocked_dev_ = (dev);                                                  \
        py_unlocked_dev_->calls++;                                                            \
        Py_BEGIN_ALLOW_THREADS
#define PY_RELOCK                                                                             \
        Py_END_ALLOW_THREADS                                                                  \
        py_calls_done(py_unlocked_dev_);                                                      \
    }

/* Device.close's view of buffers: exports that forbid it. */
Py_ssize_t py_buffer_exports(py_child *c);

/* ---------------------------------------------------------------- errors and log */

/* Raise salvo.Error for a failed call (st < 0) with salvo_last_error(), after
 * handing queued log messages to Python; returns NULL. */
PyObject *py_fail(salvo_status st);
/* salvo's text (a message, a path it was given) as a str: bytes that are
 * not UTF-8 (a path's, a character cut at a message's limit) become
 * U+FFFD. NULL with an exception set when out of memory. */
PyObject *py_text(const char *text);
/* An int of salvo's enums (a status, a format) into *out: 0, or -1 with
 * TypeError or OverflowError set. */
int py_enum_arg(PyObject *arg, int *out, const char *what);
/* Raise salvo.Error(st, formatted message); returns NULL. */
PyObject *py_error(salvo_status st, const char *fmt, ...);
/* The Status member for st (a plain int before _configure). */
PyObject *py_status(salvo_status st);

/* The device log callback (log_user unused): queues the message. */
void py_log_callback(void *user, salvo_log_level level, const char *file, int line,
                     const char *message);
/* Set when messages are queued, or host calls ran (host.c): py_log_drain takes both. */
extern atomic_int py_log_pending;
/* Hand queued messages to Python's logging. An ERROR entry of this thread
 * whose text is `failure` (the error being raised) goes at DEBUG instead:
 * the exception carries it. The pending exception, if any, is kept. */
void py_log_drain(const char *failure);
static inline void py_log_poll(void)
{
    if (atomic_load_explicit(&py_log_pending, memory_order_relaxed))
        py_log_drain(NULL);
}
/* After a call: a failure's messages are py_fail's to hand over. */
static inline void py_log_after(salvo_status st)
{
    if (st >= 0)
        py_log_poll();
}
extern PyObject *py_log_deliver; /* set by _configure */
extern PyObject *py_error_class;  /* salvo.Error, set by _configure */
extern PyObject *py_status_class; /* salvo.Status, set by _configure */

/* Return the status of a call that may return a positive one, raising
 * for a negative one. */
static inline PyObject *py_result(salvo_status st)
{
    if (st < 0)
        return py_fail(st);
    py_log_poll();
    return py_status(st);
}
static inline PyObject *py_none_or_fail(salvo_status st)
{
    if (st < 0)
        return py_fail(st);
    py_log_poll();
    Py_RETURN_NONE;
}

/* ---------------------------------------------------------------- conversions */

/* Bindings for kernel k from spec: a sequence (item i binds the kernel's
 * i-th declared binding, ascending; an array binding takes a list of
 * items), a dict {binding: item} or {(binding, element): item}, or None.
 * An item: a Buffer, (Buffer, offset) or (Buffer, offset, size), an Image,
 * a Sampler, or (Image, Sampler). Returns the count written to out
 * (SALVO_MAX_BINDINGS at most), or -1 with an exception set. */
int py_bindings(const py_kernel *k, PyObject *spec, salvo_binding *out);

/* Push constants: None, any object with the buffer protocol (bytes,
 * a numpy scalar or structured array, a ctypes Structure), or a tuple or
 * list of such scalars laid out as std430 lays out scalars (each at the
 * next multiple of its size). salvo checks the size against the kernel's. */
enum {
    PY_PUSH_MAX = 512
};
typedef struct py_push {
    const void *data;
    uint32_t size;
    bool has_view;
    Py_buffer view;
    unsigned char packed[PY_PUSH_MAX];
} py_push;
int py_push_get(PyObject *push, py_push *out);
void py_push_release(py_push *p);

/* A region from None or a sequence of up to 8 ints (x, y, z, width,
 * height, depth, layer, layers); 0 on success. */
int py_region(PyObject *obj, salvo_image_region *out, bool *given);

/* ---------------------------------------------------------------- host calls (host.c) */

/* One salvo_stream_host_call of the module: fn (a callable, or NULL) run
 * with the GIL on salvo's host-call thread, then the whole of it (fn's
 * reference, view where has_view) released by a thread of Python's. */
typedef struct py_host_call {
    struct py_host_call *next;
    PyObject *fn;
    bool has_view;
    Py_buffer view;
} py_host_call;
/* A new call holding a reference to fn (NULL: none), or NULL with
 * MemoryError set. */
py_host_call *py_host_call_new(PyObject *fn);
/* Release what h holds and h (the GIL held). */
void py_host_call_free(py_host_call *h);
/* The salvo_stream_host_call function; user is a py_host_call. */
void py_host_call_run(void *user);
/* Release the calls that ran and destroy the devices left to it (the GIL
 * held, no exception pending); py_log_drain calls it, as py_host_call_run
 * sets py_log_pending. On the host-call thread it does nothing: what it
 * would release might hold the last reference to a device. */
void py_host_call_drain(void);
/* True on salvo's host-call thread while a callable runs there. */
bool py_in_host_call(void);
/* A device to destroy where salvo allows it (not on the host-call thread):
 * the next py_host_call_drain of another thread destroys it. */
void py_host_call_defer_destroy(salvo_device *dev);

/* _salvo._launch_loop (bench.c). */
PyObject *py_launch_loop(PyObject *self, PyObject *args);

/* Unsigned conversions with a range check (OverflowError / TypeError). */
int py_u32(PyObject *obj, uint32_t *out, const char *what);
int py_u64(PyObject *obj, uint64_t *out, const char *what);
/* The same as PyArg "O&" converters (1 on success, 0 with the error set):
 * the format codes I and K would wrap a value out of range, these refuse
 * it. out is a uint32_t * and a uint64_t *. */
int py_arg_u32(PyObject *obj, void *out);
int py_arg_u64(PyObject *obj, void *out);

#endif /* SALVO_PY_H */
