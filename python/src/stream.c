/*
 * _salvo.Stream: launches, copies, fills, stream-ordered writes, waits,
 * and captures into graphs. launch is the hot path: vectorcall-style
 * arguments, bindings and push constants converted on the stack, one
 * salvo_launch with the GIL released.
 *
 * SPDX-License-Identifier: MIT
 */
#include "salvo_py.h"

#include <string.h>

PyTypeObject *py_stream_type;
PyTypeObject *py_capture_type;

/* ---------------------------------------------------------------- captures */

static void capture_dealloc(py_capture *self)
{
    PyTypeObject *type = Py_TYPE(self);
    Py_CLEAR(self->nodes);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static PyType_Slot capture_slots[] = {
    {Py_tp_dealloc, capture_dealloc},
    {Py_tp_doc, "A capture in progress (internal)."},
    {0, NULL},
};

static PyType_Spec capture_spec = {
    .name = "_salvo._Capture",
    .basicsize = sizeof(py_capture),
    .flags = Py_TPFLAGS_DEFAULT,
    .slots = capture_slots,
};

/* The stream's capture, if it is still in progress. */
static py_capture *live_capture(py_stream *s)
{
    if (s->capture && !s->capture->active)
        Py_CLEAR(s->capture);
    return s->capture;
}

/* Before a command lets the GIL go: its stream's capture (a new reference,
 * or NULL when none), with the command counted in flight. */
static py_capture *command_begin(py_stream *self)
{
    py_capture *c = self->capture ? live_capture(self) : NULL;
    if (!c)
        return NULL;
    if (c->in_flight++ > 0)
        c->overlapped = true;
    return (py_capture *)Py_NewRef(c);
}

/* A command's result: noted as node (its kernel, or None for a copy or
 * fill) of the capture command_begin gave, then None or salvo.Error.
 * Where the list fails, or commands of the capture overlapped, the
 * graph's nodes are unknown (set_bindings then takes a dict only); the
 * capture itself goes on. */
static PyObject *command_done(py_capture *c, salvo_status st, PyObject *node)
{
    if (c) {
        c->in_flight--;
        if (c->overlapped) {
            Py_CLEAR(c->nodes);
        } else if (st >= 0 && c->active && c->nodes && PyList_Append(c->nodes, node) != 0) {
            PyErr_Clear();
            Py_CLEAR(c->nodes);
        }
        Py_DECREF(c);
    }
    return py_none_or_fail(st);
}

/* ---------------------------------------------------------------- Stream */

static PyObject *stream_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"device", "batch_size", "first_batch", "priority", NULL};
    PyObject *devobj;
    salvo_stream_desc desc;
    memset(&desc, 0, sizeof desc);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O&O&i:Stream", names, &devobj, py_arg_u32,
                                     &desc.batch_size, py_arg_u32, &desc.first_batch,
                                     &desc.priority))
        return NULL;
    salvo_device *dev = py_device_handle(devobj);
    if (!dev)
        return NULL;
    py_stream *self = (py_stream *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    py_child_attach(&self->head, (py_device *)devobj, PY_KIND_STREAM);
    salvo_stream *s = NULL;
    salvo_status st;
    PY_UNLOCK((py_device *)devobj)
    st = salvo_stream_create(dev, &desc, &s);
    PY_RELOCK
    py_log_after(st);
    if (st < 0) {
        Py_DECREF(self);
        return py_fail(st);
    }
    self->head.handle = s;
    return (PyObject *)self;
}

static void stream_destroy(py_stream *self)
{
    salvo_stream *s = self->head.handle;
    self->head.handle = NULL;
    /* Destroying the stream that began a capture abandons it. */
    if (self->capture && self->capture->origin == self)
        self->capture->active = false;
    Py_CLEAR(self->capture);
    py_release(self->head.dev, PY_KIND_STREAM, s);
}

static void stream_dealloc(py_stream *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    stream_destroy(self);
    py_child_detach(&self->head);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static int stream_traverse(py_stream *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->capture);
    return py_child_traverse(&self->head, visit, arg);
}

static salvo_stream *handle(py_stream *self, const char *what)
{
    return py_child_get((PyObject *)self, py_stream_type, what);
}

static PyObject *stream_close(py_stream *self, PyObject *unused)
{
    (void)unused;
    stream_destroy(self);
    py_log_poll();
    Py_RETURN_NONE;
}

/* groups: an int, or a sequence of 1 to 3 ints. */
static int groups_of(PyObject *obj, uint32_t g[3])
{
    g[0] = g[1] = g[2] = 1;
    if (PyTuple_Check(obj) || PyList_Check(obj)) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
        PyObject **v = PySequence_Fast_ITEMS(obj);
        if (n < 1 || n > 3) {
            PyErr_SetString(PyExc_ValueError, "launch: groups is an int or 1 to 3 ints");
            return -1;
        }
        for (Py_ssize_t i = 0; i < n; i++)
            if (py_u32(v[i], &g[i], "launch: groups") != 0)
                return -1;
        return 0;
    }
    return py_u32(obj, &g[0], "launch: groups");
}

static PyObject *kw_kernel, *kw_groups, *kw_bindings, *kw_push;

static PyObject *stream_launch(py_stream *self, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames)
{
    PyObject *a[4] = {NULL, NULL, NULL, NULL}; /* kernel, groups, bindings, push */
    if (nargs > 4) {
        PyErr_SetString(PyExc_TypeError,
                        "launch(kernel, groups, bindings=None, push=None): too many arguments");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nargs; i++)
        a[i] = args[i];
    if (kwnames) {
        PyObject *const names[4] = {kw_kernel, kw_groups, kw_bindings, kw_push};
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(kwnames); j++) {
            PyObject *name = PyTuple_GET_ITEM(kwnames, j);
            int at = -1;
            for (int i = 0; i < 4 && at < 0; i++)
                if (name == names[i] || PyUnicode_Compare(name, names[i]) == 0)
                    at = i;
            if (at < 0 || a[at]) {
                PyErr_Format(PyExc_TypeError, "launch: %s keyword argument '%U'",
                             at < 0 ? "unexpected" : "repeated", name);
                return NULL;
            }
            a[at] = args[nargs + j];
        }
    }
    if (!a[0] || !a[1]) {
        PyErr_SetString(PyExc_TypeError,
                        "launch(kernel, groups, bindings=None, push=None): kernel and groups "
                        "are needed");
        return NULL;
    }
    salvo_stream *s = handle(self, "launch");
    salvo_kernel *k = s ? py_child_get(a[0], py_kernel_type, "launch: kernel") : NULL;
    if (!k)
        return NULL;
    const py_kernel *kobj = (const py_kernel *)a[0];
    uint32_t groups[3];
    salvo_binding bindings[SALVO_MAX_BINDINGS];
    int count;
    if (groups_of(a[1], groups) != 0 || (count = py_bindings(kobj, a[2], bindings)) < 0)
        return NULL;
    py_push push;
    if (py_push_get(a[3], &push) != 0)
        return NULL;
    salvo_status st;
    py_capture *cap = command_begin(self);
    PY_UNLOCK(self->head.dev)
    st = salvo_launch(s, k, groups, bindings, (uint32_t)count, push.data, push.size);
    PY_RELOCK
    py_push_release(&push);
    return command_done(cap, st, a[0]);
}

static PyObject *stream_fill(py_stream *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"buffer", "value", "offset", "size", NULL};
    PyObject *bufobj, *sizeobj = Py_None;
    uint32_t value = 0;
    uint64_t offset = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O&O&O:fill", names, &bufobj, py_arg_u32, &value,
                                     py_arg_u64, &offset, &sizeobj))
        return NULL;
    salvo_stream *s = handle(self, "fill");
    salvo_buffer *buf = s ? py_child_get(bufobj, py_buffer_type, "fill: buffer") : NULL;
    if (!buf)
        return NULL;
    uint64_t size, total = ((py_buffer *)bufobj)->size;
    if (sizeobj == Py_None)
        size = offset < total ? total - offset : 0;
    else if (py_u64(sizeobj, &size, "fill: size") != 0)
        return NULL;
    salvo_status st;
    py_capture *cap = command_begin(self);
    PY_UNLOCK(self->head.dev)
    st = salvo_fill(s, buf, offset, size, value);
    PY_RELOCK
    return command_done(cap, st, Py_None);
}

static PyObject *stream_copy(py_stream *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"src", "dst", "size", "src_offset", "dst_offset", NULL};
    PyObject *srcobj, *dstobj, *sizeobj = Py_None;
    uint64_t src_offset = 0, dst_offset = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|OO&O&:copy", names, &srcobj, &dstobj,
                                     &sizeobj, py_arg_u64, &src_offset, py_arg_u64, &dst_offset))
        return NULL;
    salvo_stream *s = handle(self, "copy");
    salvo_buffer *src = s ? py_child_get(srcobj, py_buffer_type, "copy: src") : NULL;
    salvo_buffer *dst = src ? py_child_get(dstobj, py_buffer_type, "copy: dst") : NULL;
    if (!dst)
        return NULL;
    uint64_t size;
    if (sizeobj == Py_None) {
        /* As much as both hold from their offsets. */
        uint64_t a = ((py_buffer *)srcobj)->size, b = ((py_buffer *)dstobj)->size;
        a = src_offset < a ? a - src_offset : 0;
        b = dst_offset < b ? b - dst_offset : 0;
        size = a < b ? a : b;
    } else if (py_u64(sizeobj, &size, "copy: size") != 0) {
        return NULL;
    }
    salvo_status st;
    py_capture *cap = command_begin(self);
    PY_UNLOCK(self->head.dev)
    st = salvo_copy(s, src, src_offset, dst, dst_offset, size);
    PY_RELOCK
    return command_done(cap, st, Py_None);
}

static PyObject *stream_write(py_stream *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"buffer", "data", "offset", NULL};
    PyObject *bufobj;
    Py_buffer view;
    uint64_t offset = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "Oy*|O&:write", names, &bufobj, &view, py_arg_u64,
                                     &offset))
        return NULL;
    salvo_stream *s = handle(self, "Stream.write");
    salvo_buffer *buf = s ? py_child_get(bufobj, py_buffer_type, "Stream.write: buffer") : NULL;
    if (!buf) {
        PyBuffer_Release(&view);
        return NULL;
    }
    salvo_status st;
    PY_UNLOCK(self->head.dev)
    st = salvo_stream_write(s, buf, offset, view.buf, (uint64_t)view.len);
    PY_RELOCK
    PyBuffer_Release(&view); /* salvo copied it */
    return py_none_or_fail(st);
}

static PyObject *stream_launch_indirect(py_stream *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"kernel", "counts", "offset", "bindings", "push", NULL};
    PyObject *kobj, *countsobj, *bindobj = Py_None, *pushobj = Py_None;
    uint64_t offset = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O&OO:launch_indirect", names, &kobj,
                                     &countsobj, py_arg_u64, &offset, &bindobj, &pushobj))
        return NULL;
    salvo_stream *s = handle(self, "launch_indirect");
    salvo_kernel *k = s ? py_child_get(kobj, py_kernel_type, "launch_indirect: kernel") : NULL;
    salvo_buffer *counts =
        k ? py_child_get(countsobj, py_buffer_type, "launch_indirect: counts") : NULL;
    if (!counts)
        return NULL;
    salvo_binding bindings[SALVO_MAX_BINDINGS];
    int count = py_bindings((const py_kernel *)kobj, bindobj, bindings);
    py_push push;
    if (count < 0 || py_push_get(pushobj, &push) != 0)
        return NULL;
    salvo_status st;
    py_capture *cap = command_begin(self);
    PY_UNLOCK(self->head.dev)
    st = salvo_launch_indirect(s, k, counts, offset, bindings, (uint32_t)count, push.data,
                               push.size);
    PY_RELOCK
    py_push_release(&push);
    return command_done(cap, st, kobj);
}

static PyObject *stream_fill_pattern(py_stream *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"buffer", "pattern", "offset", "size", NULL};
    PyObject *bufobj, *sizeobj = Py_None;
    Py_buffer pattern;
    uint64_t offset = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "Oy*|O&O:fill_pattern", names, &bufobj, &pattern,
                                     py_arg_u64, &offset, &sizeobj))
        return NULL;
    salvo_stream *s = handle(self, "fill_pattern");
    salvo_buffer *buf = s ? py_child_get(bufobj, py_buffer_type, "fill_pattern: buffer") : NULL;
    uint64_t size = 0, total = buf ? ((py_buffer *)bufobj)->size : 0;
    if (buf && sizeobj == Py_None) {
        /* The whole patterns that fit from offset (salvo refuses none). */
        uint64_t left = offset < total ? total - offset : 0;
        size = pattern.len > 0 ? left - left % (uint64_t)pattern.len : 0;
    } else if (buf && py_u64(sizeobj, &size, "fill_pattern: size") != 0) {
        buf = NULL;
    }
    if (!buf) {
        PyBuffer_Release(&pattern);
        return NULL;
    }
    salvo_status st;
    py_capture *cap = command_begin(self);
    PY_UNLOCK(self->head.dev)
    st = salvo_fill_pattern(s, buf, offset, size, pattern.buf,
                            pattern.len > 4 ? UINT32_MAX : (uint32_t)pattern.len);
    PY_RELOCK
    PyBuffer_Release(&pattern); /* read at the call */
    return command_done(cap, st, Py_None);
}

static PyObject *stream_copy_image(py_stream *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"src", "dst", "src_region", "dst_region", NULL};
    PyObject *srcobj, *dstobj, *srcreg = Py_None, *dstreg = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|OO:copy_image", names, &srcobj, &dstobj,
                                     &srcreg, &dstreg))
        return NULL;
    salvo_stream *s = handle(self, "copy_image");
    salvo_image *src = s ? py_child_get(srcobj, py_image_type, "copy_image: src") : NULL;
    salvo_image *dst = src ? py_child_get(dstobj, py_image_type, "copy_image: dst") : NULL;
    salvo_image_region sr, dr;
    bool sgiven, dgiven;
    if (!dst || py_region(srcreg, &sr, &sgiven) != 0 || py_region(dstreg, &dr, &dgiven) != 0)
        return NULL;
    salvo_status st;
    py_capture *cap = command_begin(self);
    PY_UNLOCK(self->head.dev)
    st = salvo_copy_image(s, src, sgiven ? &sr : NULL, dst, dgiven ? &dr : NULL);
    PY_RELOCK
    return command_done(cap, st, Py_None);
}

static PyObject *stream_read(py_stream *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"buffer", "out", "offset", NULL};
    PyObject *bufobj, *outobj;
    uint64_t offset = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O&:Stream.read", names, &bufobj, &outobj,
                                     py_arg_u64, &offset))
        return NULL;
    salvo_stream *s = handle(self, "Stream.read");
    salvo_buffer *buf = s ? py_child_get(bufobj, py_buffer_type, "Stream.read: buffer") : NULL;
    py_host_call *h = buf ? py_host_call_new(NULL) : NULL;
    if (!h)
        return NULL;
    if (PyObject_GetBuffer(outobj, &h->view, PyBUF_WRITABLE) != 0) {
        py_host_call_free(h);
        return NULL;
    }
    h->has_view = true;
    salvo_status st, released = SALVO_OK;
    PY_UNLOCK(self->head.dev)
    st = salvo_stream_read(s, buf, offset, h->view.buf, (uint64_t)h->view.len);
    /* A host call after the read (they run in order) lets the view go. */
    if (st >= 0)
        released = salvo_stream_host_call(s, py_host_call_run, h);
    PY_RELOCK
    if (st < 0) {
        py_host_call_free(h);
        return py_fail(st);
    }
    /* Made, but its end cannot be seen: out stays held (the read may still write it). */
    return py_none_or_fail(released);
}

static PyObject *stream_host_call(py_stream *self, PyObject *fn)
{
    salvo_stream *s = handle(self, "host_call");
    if (!s)
        return NULL;
    if (!PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_TypeError, "host_call: fn must be callable");
        return NULL;
    }
    py_host_call *h = py_host_call_new(fn);
    if (!h)
        return NULL;
    salvo_status st;
    PY_UNLOCK(self->head.dev)
    st = salvo_stream_host_call(s, py_host_call_run, h);
    PY_RELOCK
    if (st < 0)
        py_host_call_free(h);
    return py_none_or_fail(st);
}

/* copy_buffer_to_image(buffer, image, region=None, offset=0) and
 * copy_image_to_buffer(image, buffer, region=None, offset=0): one parse,
 * the objects checked in the order they are given. */
static PyObject *stream_buffer_image_copy(py_stream *self, PyObject *args, PyObject *kw,
                                          bool to_image)
{
    static char *to_image_names[] = {"buffer", "image", "region", "offset", NULL};
    static char *to_buffer_names[] = {"image", "buffer", "region", "offset", NULL};
    const char *what = to_image ? "copy_buffer_to_image" : "copy_image_to_buffer";
    PyObject *first, *second, *regobj = Py_None;
    uint64_t offset = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw,
                                     to_image ? "OO|OO&:copy_buffer_to_image"
                                              : "OO|OO&:copy_image_to_buffer",
                                     to_image ? to_image_names : to_buffer_names, &first,
                                     &second, &regobj, py_arg_u64, &offset))
        return NULL;
    PyObject *bufobj = to_image ? first : second, *imgobj = to_image ? second : first;
    salvo_stream *s = handle(self, what);
    salvo_buffer *buf = NULL;
    salvo_image *img = NULL;
    if (s && to_image) {
        buf = py_child_get(bufobj, py_buffer_type, what);
        img = buf ? py_child_get(imgobj, py_image_type, what) : NULL;
    } else if (s) {
        img = py_child_get(imgobj, py_image_type, what);
        buf = img ? py_child_get(bufobj, py_buffer_type, what) : NULL;
    }
    salvo_image_region region;
    bool given;
    if (!buf || !img || py_region(regobj, &region, &given) != 0)
        return NULL;
    const salvo_image_region *r = given ? &region : NULL;
    salvo_status st;
    py_capture *cap = command_begin(self);
    PY_UNLOCK(self->head.dev)
    st = to_image ? salvo_copy_buffer_to_image(s, buf, offset, img, r)
                  : salvo_copy_image_to_buffer(s, img, r, buf, offset);
    PY_RELOCK
    return command_done(cap, st, Py_None);
}

static PyObject *stream_buffer_to_image(py_stream *self, PyObject *args, PyObject *kw)
{
    return stream_buffer_image_copy(self, args, kw, true);
}

static PyObject *stream_image_to_buffer(py_stream *self, PyObject *args, PyObject *kw)
{
    return stream_buffer_image_copy(self, args, kw, false);
}

/* call(s) with the GIL let go: the calls that may wait on the device. */
static salvo_status unlocked(py_device *owner, salvo_stream *s,
                              salvo_status (*call)(salvo_stream *))
{
    salvo_status st;
    PY_UNLOCK(owner)
    st = call(s);
    PY_RELOCK
    return st;
}

static PyObject *stream_flush(py_stream *self, PyObject *unused)
{
    (void)unused;
    salvo_stream *s = handle(self, "flush");
    return s ? py_none_or_fail(unlocked(self->head.dev, s, salvo_stream_flush)) : NULL;
}

static PyObject *stream_synchronize(py_stream *self, PyObject *unused)
{
    (void)unused;
    salvo_stream *s = handle(self, "synchronize");
    return s ? py_result(unlocked(self->head.dev, s, salvo_stream_synchronize)) : NULL;
}

static PyObject *stream_query(py_stream *self, PyObject *unused)
{
    (void)unused;
    salvo_stream *s = handle(self, "query");
    return s ? py_result(unlocked(self->head.dev, s, salvo_stream_query)) : NULL;
}

static PyObject *stream_wait_event(py_stream *self, PyObject *evobj)
{
    salvo_stream *s = handle(self, "wait_event");
    salvo_event *ev = s ? py_child_get(evobj, py_event_type, "wait_event: event") : NULL;
    if (!ev)
        return NULL;
    salvo_status st;
    PY_UNLOCK(self->head.dev)
    st = salvo_stream_wait_event(s, ev);
    PY_RELOCK
    if (st >= 0) {
        /* Waiting for a point of a capture joins it (salvo.h, captures). */
        py_capture *c = ((py_event *)evobj)->capture;
        if (c && c->active && !live_capture(self))
            self->capture = (py_capture *)Py_NewRef((PyObject *)c);
    }
    return py_none_or_fail(st);
}

static PyObject *stream_wait_gate(py_stream *self, PyObject *args)
{
    PyObject *gateobj;
    uint64_t value;
    if (!PyArg_ParseTuple(args, "OO&:wait_gate", &gateobj, py_arg_u64, &value))
        return NULL;
    salvo_stream *s = handle(self, "wait_gate");
    salvo_gate *g = s ? py_child_get(gateobj, py_gate_type, "wait_gate: gate") : NULL;
    if (!g)
        return NULL;
    py_gate *gate = (py_gate *)gateobj;
    if (value > gate->waited)
        gate->waited = value; /* before the wait is made: a close meanwhile raises to it */
    salvo_status st;
    PY_UNLOCK(self->head.dev)
    st = salvo_stream_wait_gate(s, g, value);
    PY_RELOCK
    return py_none_or_fail(st);
}

static PyObject *stream_begin_capture(py_stream *self, PyObject *unused)
{
    (void)unused;
    salvo_stream *s = handle(self, "begin_capture");
    if (!s)
        return NULL;
    py_capture *c = PyObject_New(py_capture, py_capture_type);
    if (!c)
        return NULL;
    c->nodes = PyList_New(0);
    c->active = false;
    c->origin = self;
    c->in_flight = 0;
    c->overlapped = false;
    if (!c->nodes) {
        Py_DECREF(c);
        return NULL;
    }
    salvo_status st;
    PY_UNLOCK(self->head.dev)
    st = salvo_stream_begin_capture(s);
    PY_RELOCK
    if (st < 0) {
        Py_DECREF(c);
        return py_none_or_fail(st);
    }
    c->active = true;
    Py_XSETREF(self->capture, c);
    return py_none_or_fail(st);
}

static PyObject *stream_end_capture(py_stream *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"into", NULL};
    PyObject *into = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:end_capture", names, &into))
        return NULL;
    salvo_stream *s = handle(self, "end_capture");
    if (!s)
        return NULL;
    py_graph *graph;
    if (into == Py_None) {
        graph = (py_graph *)PyObject_CallOneArg(py_graph_class, (PyObject *)self->head.dev);
        if (!graph)
            return NULL;
    } else {
        if (!PyObject_TypeCheck(into, py_graph_type) || ((py_graph *)into)->head.handle ||
            ((py_graph *)into)->head.dev != self->head.dev) {
            PyErr_SetString(PyExc_ValueError, "end_capture: into must be an empty Graph of the "
                                              "stream's device");
            return NULL;
        }
        graph = (py_graph *)Py_NewRef(into);
        Py_CLEAR(graph->nodes); /* a closed graph's */
    }
    salvo_graph *g = NULL;
    salvo_status st;
    PY_UNLOCK(self->head.dev)
    st = salvo_stream_end_capture(s, &g);
    PY_RELOCK
    if (st != SALVO_ERROR_INVALID_STATE) {
        /* Over, made or not (salvo_stream_end_capture). */
        py_capture *c = self->capture;
        self->capture = NULL;
        if (c) {
            c->active = false;
            if (st >= 0 && c->nodes &&
                PyList_GET_SIZE(c->nodes) == (Py_ssize_t)salvo_graph_node_count(g))
                Py_XSETREF(graph->nodes, Py_NewRef(c->nodes));
            Py_DECREF(c);
        }
    }
    if (st < 0) {
        Py_DECREF(graph);
        return py_none_or_fail(st);
    }
    graph->head.handle = g;
    py_log_poll();
    return (PyObject *)graph;
}

static PyObject *stream_get_closed(py_stream *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->head.handle == NULL);
}

static PyObject *stream_get_capturing(py_stream *self, void *closure)
{
    (void)closure;
    salvo_stream *s = handle(self, "capturing");
    if (!s)
        return NULL;
    bool capturing = false;
    salvo_status st;
    PY_UNLOCK(self->head.dev)
    st = salvo_stream_is_capturing(s, &capturing);
    PY_RELOCK
    if (st < 0)
        return py_fail(st);
    py_log_poll();
    return PyBool_FromLong(capturing);
}

static PyObject *stream_get_device(py_stream *self, void *closure)
{
    (void)closure;
    return Py_NewRef(self->head.dev ? (PyObject *)self->head.dev : Py_None);
}

static PyMethodDef stream_methods[] = {
    {"launch", (PyCFunction)(void (*)(void))stream_launch, METH_FASTCALL | METH_KEYWORDS,
     "launch(kernel, groups, bindings=None, push=None): record one dispatch (salvo_launch). "
     "groups: an int or up to 3 ints. bindings: a sequence (the kernel's declared bindings in "
     "ascending order; a list for an array binding's elements) or a dict {binding: item} / "
     "{(binding, element): item}; an item is a Buffer, (Buffer, offset[, size]), Image, "
     "Sampler or (Image, Sampler). push: bytes, a numpy scalar or structured value, a ctypes "
     "Structure, or a tuple of numpy scalars (laid out as std430 scalars)."},
    {"fill", (PyCFunction)(void (*)(void))stream_fill, METH_VARARGS | METH_KEYWORDS,
     "fill(buffer, value=0, offset=0, size=None): a 32-bit value repeated, in stream order."},
    {"launch_indirect", (PyCFunction)(void (*)(void))stream_launch_indirect,
     METH_VARARGS | METH_KEYWORDS,
     "launch_indirect(kernel, counts, offset=0, bindings=None, push=None): one dispatch whose "
     "workgroup counts (three uint32) the device reads from the Buffer counts at offset when "
     "it runs (salvo_launch_indirect); bindings and push as launch."},
    {"fill_pattern", (PyCFunction)(void (*)(void))stream_fill_pattern,
     METH_VARARGS | METH_KEYWORDS,
     "fill_pattern(buffer, pattern, offset=0, size=None): a 1, 2 or 4-byte pattern (bytes or "
     "a numpy scalar) repeated from any offset, in stream order (salvo_fill_pattern); size None: "
     "the whole patterns that fit."},
    {"copy_image", (PyCFunction)(void (*)(void))stream_copy_image, METH_VARARGS | METH_KEYWORDS,
     "copy_image(src, dst, src_region=None, dst_region=None): image to image on the device, "
     "in stream order (salvo_copy_image); regions of the same extents."},
    {"read", (PyCFunction)(void (*)(void))stream_read, METH_VARARGS | METH_KEYWORDS,
     "read(buffer, out, offset=0): len(out) bytes of the buffer into out (a writable, "
     "contiguous object: bytearray, numpy array) in stream order, returning at once "
     "(salvo_stream_read); out holds them once the stream has passed this point (synchronize, "
     "an event, query). out is kept alive until then."},
    {"host_call", (PyCFunction)stream_host_call, METH_O,
     "host_call(fn): call fn() on salvo's host-call thread once the stream's earlier work is "
     "over; its later work waits for it (salvo_stream_host_call). An exception goes to "
     "sys.unraisablehook. fn must not wait for the stream's later work."},
    {"copy", (PyCFunction)(void (*)(void))stream_copy, METH_VARARGS | METH_KEYWORDS,
     "copy(src, dst, size=None, src_offset=0, dst_offset=0): a device copy, in stream order."},
    {"write", (PyCFunction)(void (*)(void))stream_write, METH_VARARGS | METH_KEYWORDS,
     "write(buffer, data, offset=0): host bytes into the buffer in stream order "
     "(salvo_stream_write; data is copied at the call)."},
    {"copy_buffer_to_image", (PyCFunction)(void (*)(void))stream_buffer_to_image,
     METH_VARARGS | METH_KEYWORDS,
     "copy_buffer_to_image(buffer, image, region=None, offset=0), in stream order."},
    {"copy_image_to_buffer", (PyCFunction)(void (*)(void))stream_image_to_buffer,
     METH_VARARGS | METH_KEYWORDS,
     "copy_image_to_buffer(image, buffer, region=None, offset=0), in stream order."},
    {"flush", (PyCFunction)stream_flush, METH_NOARGS, "Submit the open batch without waiting."},
    {"synchronize", (PyCFunction)stream_synchronize, METH_NOARGS,
     "Submit and wait for the stream's work; returns a Status (OK, or TIMEOUT)."},
    {"query", (PyCFunction)stream_query, METH_NOARGS,
     "Status.OK when all the stream's work is complete, Status.NOT_READY otherwise."},
    {"wait_event", (PyCFunction)stream_wait_event, METH_O,
     "Make the stream's later work wait, on the device, for the event."},
    {"wait_gate", (PyCFunction)stream_wait_gate, METH_VARARGS,
     "wait_gate(gate, value): make the stream's later work wait until the gate reaches value."},
    {"begin_capture", (PyCFunction)stream_begin_capture, METH_NOARGS,
     "Start capturing the stream's launches, copies and fills into a graph."},
    {"end_capture", (PyCFunction)(void (*)(void))stream_end_capture, METH_VARARGS | METH_KEYWORDS,
     "end_capture(into=None): end the capture and return the Graph (or fill the empty Graph "
     "into)."},
    {"close", (PyCFunction)stream_close, METH_NOARGS,
     "Release the stream (never blocks; its work still runs)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef stream_getset[] = {
    {"closed", (getter)stream_get_closed, NULL, "True once closed (or its device).", NULL},
    {"capturing", (getter)stream_get_capturing, NULL,
     "True while the stream's calls go to a capture, begun or joined "
     "(salvo_stream_is_capturing).",
     NULL},
    {"device", (getter)stream_get_device, NULL, "The Device.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot stream_slots[] = {
    {Py_tp_new, stream_new},
    {Py_tp_dealloc, stream_dealloc},
    {Py_tp_traverse, stream_traverse},
    {Py_tp_methods, stream_methods},
    {Py_tp_getset, stream_getset},
    {Py_tp_doc, "Stream(device, batch_size=0, first_batch=0, priority=0): an in-order queue of "
                "launches (salvo_stream_create)."},
    {0, NULL},
};

static PyType_Spec stream_spec = {
    .name = "_salvo.Stream",
    .basicsize = sizeof(py_stream),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = stream_slots,
};

int py_stream_init_type(PyObject *module)
{
    kw_kernel = PyUnicode_InternFromString("kernel");
    kw_groups = PyUnicode_InternFromString("groups");
    kw_bindings = PyUnicode_InternFromString("bindings");
    kw_push = PyUnicode_InternFromString("push");
    if (!kw_kernel || !kw_groups || !kw_bindings || !kw_push)
        return -1;
    py_capture_type = (PyTypeObject *)PyType_FromSpec(&capture_spec);
    py_stream_type = (PyTypeObject *)PyType_FromSpec(&stream_spec);
    if (!py_capture_type || !py_stream_type)
        return -1;
    return PyModule_AddObjectRef(module, "Stream", (PyObject *)py_stream_type);
}
