/*
 * _salvo.Event and _salvo.Gate: points in a stream, and host gates.
 *
 * SPDX-License-Identifier: MIT
 */
#include "salvo_py.h"

#include <string.h>

PyTypeObject *py_event_type;
PyTypeObject *py_gate_type;

/* ---------------------------------------------------------------- Event */

static PyObject *event_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"device", "timing", NULL};
    PyObject *devobj;
    int timing = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$p:Event", names, &devobj, &timing))
        return NULL;
    salvo_device *dev = py_device_handle(devobj);
    if (!dev)
        return NULL;
    py_event *self = (py_event *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    py_child_attach(&self->head, (py_device *)devobj, PY_KIND_EVENT);
    salvo_event *ev = NULL;
    salvo_status st = timing ? salvo_event_create(dev, &ev)
                             : salvo_event_create_flags(dev, SALVO_EVENT_DISABLE_TIMING, &ev);
    py_log_after(st);
    if (st < 0) {
        Py_DECREF(self);
        return py_fail(st);
    }
    self->head.handle = ev;
    return (PyObject *)self;
}

static void event_destroy(py_event *self)
{
    salvo_event *ev = self->head.handle;
    self->head.handle = NULL;
    Py_CLEAR(self->capture);
    py_release(self->head.dev, PY_KIND_EVENT, ev);
}

static void event_dealloc(py_event *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    event_destroy(self);
    py_child_detach(&self->head);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static int event_traverse(py_event *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->capture);
    return py_child_traverse(&self->head, visit, arg);
}

static salvo_event *event_handle(py_event *self, const char *what)
{
    return py_child_get((PyObject *)self, py_event_type, what);
}

static PyObject *event_close(py_event *self, PyObject *unused)
{
    (void)unused;
    event_destroy(self);
    py_log_poll();
    Py_RETURN_NONE;
}

static PyObject *event_record(py_event *self, PyObject *streamobj)
{
    salvo_event *ev = event_handle(self, "Event.record");
    salvo_stream *s = ev ? py_child_get(streamobj, py_stream_type, "Event.record: stream") : NULL;
    if (!s)
        return NULL;
    salvo_status st;
    PY_UNLOCK(self->head.dev)
    st = salvo_event_record(ev, s);
    PY_RELOCK
    if (st >= 0) {
        /* A record in a capture marks a point of it, which a wait joins. */
        py_capture *c = ((py_stream *)streamobj)->capture;
        Py_XSETREF(self->capture,
                   c && c->active ? (py_capture *)Py_NewRef((PyObject *)c) : NULL);
    }
    return py_none_or_fail(st);
}

/* call(ev) with the GIL let go: the calls that may wait on the device. */
static salvo_status unlocked(py_device *owner, salvo_event *ev,
                              salvo_status (*call)(salvo_event *))
{
    salvo_status st;
    PY_UNLOCK(owner)
    st = call(ev);
    PY_RELOCK
    return st;
}

static PyObject *event_query(py_event *self, PyObject *unused)
{
    (void)unused;
    salvo_event *ev = event_handle(self, "Event.query");
    return ev ? py_result(unlocked(self->head.dev, ev, salvo_event_query)) : NULL;
}

static PyObject *event_synchronize(py_event *self, PyObject *unused)
{
    (void)unused;
    salvo_event *ev = event_handle(self, "Event.synchronize");
    return ev ? py_result(unlocked(self->head.dev, ev, salvo_event_synchronize)) : NULL;
}

static PyObject *event_wait(py_event *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"timeout_ns", NULL};
    PyObject *timeout = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:wait", names, &timeout))
        return NULL;
    salvo_event *ev = event_handle(self, "Event.wait");
    if (!ev)
        return NULL;
    uint64_t ns = UINT64_MAX;
    if (timeout != Py_None && py_u64(timeout, &ns, "Event.wait: timeout_ns") != 0)
        return NULL;
    salvo_status st;
    PY_UNLOCK(self->head.dev)
    st = salvo_event_wait(ev, ns);
    PY_RELOCK
    return py_result(st);
}

static PyObject *event_elapsed_ns(py_event *self, PyObject *endobj)
{
    salvo_event *start = event_handle(self, "Event.elapsed_ns");
    salvo_event *end = start ? py_child_get(endobj, py_event_type, "Event.elapsed_ns: end") : NULL;
    if (!end)
        return NULL;
    uint64_t ns = 0;
    salvo_status st;
    PY_UNLOCK(self->head.dev)
    st = salvo_event_elapsed(start, end, &ns);
    PY_RELOCK
    py_log_after(st);
    if (st < 0)
        return py_fail(st);
    if (st != SALVO_OK)
        return py_status(st); /* NOT_READY, CANCELLED */
    return PyLong_FromUnsignedLongLong(ns);
}

static PyObject *event_cancel(py_event *self, PyObject *unused)
{
    (void)unused;
    salvo_event *ev = event_handle(self, "Event.cancel");
    return ev ? py_none_or_fail(unlocked(self->head.dev, ev, salvo_event_cancel)) : NULL;
}

static PyObject *event_get_closed(py_event *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->head.handle == NULL);
}

static PyMethodDef event_methods[] = {
    {"record", (PyCFunction)event_record, METH_O,
     "Mark the point after the stream's work so far (salvo_event_record)."},
    {"query", (PyCFunction)event_query, METH_NOARGS,
     "Status.OK when the work up to the mark is complete, NOT_READY while it runs, CANCELLED."},
    {"synchronize", (PyCFunction)event_synchronize, METH_NOARGS,
     "Wait for the work up to the mark; returns a Status."},
    {"wait", (PyCFunction)(void (*)(void))event_wait, METH_VARARGS | METH_KEYWORDS,
     "wait(timeout_ns=None): wait at most timeout_ns; Status.OK or Status.TIMEOUT."},
    {"elapsed_ns", (PyCFunction)event_elapsed_ns, METH_O,
     "elapsed_ns(end): GPU nanoseconds from this event's mark to end's (an int), or "
     "Status.NOT_READY / Status.CANCELLED."},
    {"cancel", (PyCFunction)event_cancel, METH_NOARGS,
     "Withdraw the stream's unsubmitted work before the event (salvo_event_cancel)."},
    {"close", (PyCFunction)event_close, METH_NOARGS, "Release the event."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef event_getset[] = {
    {"closed", (getter)event_get_closed, NULL, "True once closed (or its device).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot event_slots[] = {
    {Py_tp_new, event_new},
    {Py_tp_dealloc, event_dealloc},
    {Py_tp_traverse, event_traverse},
    {Py_tp_methods, event_methods},
    {Py_tp_getset, event_getset},
    {Py_tp_doc, "Event(device, *, timing=True): a marker in a stream, as in CUDA; timing=False "
                "writes no timestamps (elapsed_ns refuses it)."},
    {0, NULL},
};

static PyType_Spec event_spec = {
    .name = "_salvo.Event",
    .basicsize = sizeof(py_event),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = event_slots,
};

int py_event_init_type(PyObject *module)
{
    py_event_type = (PyTypeObject *)PyType_FromSpec(&event_spec);
    if (!py_event_type)
        return -1;
    return PyModule_AddObjectRef(module, "Event", (PyObject *)py_event_type);
}

/* ---------------------------------------------------------------- Gate */

static PyObject *gate_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"device", NULL};
    PyObject *devobj;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O:Gate", names, &devobj))
        return NULL;
    salvo_device *dev = py_device_handle(devobj);
    if (!dev)
        return NULL;
    py_child *self = (py_child *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    py_child_attach(self, (py_device *)devobj, PY_KIND_GATE);
    salvo_gate *g = NULL;
    salvo_status st = salvo_gate_create(dev, &g);
    py_log_after(st);
    if (st < 0) {
        Py_DECREF(self);
        return py_fail(st);
    }
    self->handle = g;
    return (PyObject *)self;
}

void py_gate_release(py_child *gate, void *h)
{
    py_device *dev = gate->dev;
    if (h && dev && dev->handle && dev->calls > 0) {
        uint64_t waited = ((py_gate *)gate)->waited;
        if (waited > salvo_gate_value(h))
            (void)salvo_gate_raise(h, waited); /* fails only where the device is lost */
    }
    py_release(dev, PY_KIND_GATE, h); /* raises it for whatever still waits */
}

static void gate_destroy(py_child *self)
{
    salvo_gate *g = self->handle;
    self->handle = NULL;
    py_gate_release(self, g);
}

static void gate_dealloc(py_child *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    gate_destroy(self);
    py_child_detach(self);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static int gate_traverse(py_child *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    return py_child_traverse(self, visit, arg);
}

static PyObject *gate_close(py_child *self, PyObject *unused)
{
    (void)unused;
    gate_destroy(self);
    py_log_poll();
    Py_RETURN_NONE;
}

static PyObject *gate_raise_to(py_child *self, PyObject *arg)
{
    salvo_gate *g = py_child_get((PyObject *)self, py_gate_type, "Gate.raise_to");
    uint64_t value;
    if (!g || py_u64(arg, &value, "Gate.raise_to: value") != 0)
        return NULL;
    salvo_status st;
    PY_UNLOCK(self->dev)
    st = salvo_gate_raise(g, value);
    PY_RELOCK
    return py_none_or_fail(st);
}

static PyObject *gate_get_value(py_child *self, void *closure)
{
    (void)closure;
    salvo_gate *g = py_child_get((PyObject *)self, py_gate_type, "Gate.value");
    if (!g)
        return NULL;
    return PyLong_FromUnsignedLongLong(salvo_gate_value(g));
}

static PyObject *gate_get_closed(py_child *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->handle == NULL);
}

static PyMethodDef gate_methods[] = {
    {"raise_to", (PyCFunction)gate_raise_to, METH_O,
     "Raise the gate to value (monotonic; salvo_gate_raise), releasing the work that waits "
     "for it."},
    {"close", (PyCFunction)gate_close, METH_NOARGS,
     "Release the gate (work still waiting on it is released first)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef gate_getset[] = {
    {"value", (getter)gate_get_value, NULL, "The highest value raised so far.", NULL},
    {"closed", (getter)gate_get_closed, NULL, "True once closed (or its device).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot gate_slots[] = {
    {Py_tp_new, gate_new},
    {Py_tp_dealloc, gate_dealloc},
    {Py_tp_traverse, gate_traverse},
    {Py_tp_methods, gate_methods},
    {Py_tp_getset, gate_getset},
    {Py_tp_doc, "Gate(device): a host gate at 0 (salvo_gate_create); streams wait on it with "
                "Stream.wait_gate, the host raises it with raise_to."},
    {0, NULL},
};

static PyType_Spec gate_spec = {
    .name = "_salvo.Gate",
    .basicsize = sizeof(py_gate),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = gate_slots,
};

int py_gate_init_type(PyObject *module)
{
    py_gate_type = (PyTypeObject *)PyType_FromSpec(&gate_spec);
    if (!py_gate_type)
        return -1;
    return PyModule_AddObjectRef(module, "Gate", (PyObject *)py_gate_type);
}
