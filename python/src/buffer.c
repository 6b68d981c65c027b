/*
 * _salvo.Buffer: a salvo buffer. HOST and SHARED buffers export their
 * persistent mapping through the buffer protocol, so memoryview(buf) and
 * numpy.frombuffer(buf, ...) see the buffer's memory with no copy; each
 * view holds the Buffer object (hence the mapping) alive, and the buffer
 * cannot be closed, nor its device, while a view is out.
 *
 * SPDX-License-Identifier: MIT
 */
#include "salvo_py.h"

#include <string.h>

PyTypeObject *py_buffer_type;

Py_ssize_t py_buffer_exports(py_child *c)
{
    return c->kind == PY_KIND_BUFFER ? ((py_buffer *)c)->exports : 0;
}

static PyObject *buffer_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"device", "size", "domain", NULL};
    PyObject *devobj, *sizeobj;
    int domain = SALVO_DOMAIN_DEVICE;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|i:Buffer", names, &devobj, &sizeobj, &domain))
        return NULL;
    salvo_device *dev = py_device_handle(devobj);
    uint64_t size;
    if (!dev || py_u64(sizeobj, &size, "Buffer: size") != 0)
        return NULL;
    py_buffer *self = (py_buffer *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    py_child_attach(&self->head, (py_device *)devobj, PY_KIND_BUFFER);
    salvo_buffer *buf = NULL;
    salvo_status st;
    PY_UNLOCK((py_device *)devobj)
    st = salvo_buffer_create(dev, size, (salvo_domain)domain, &buf);
    PY_RELOCK
    py_log_after(st);
    if (st < 0) {
        Py_DECREF(self);
        return py_fail(st);
    }
    self->head.handle = buf;
    self->size = size;
    self->domain = (salvo_domain)domain;
    if (domain != SALVO_DOMAIN_DEVICE) {
        st = salvo_buffer_map(buf, &self->map);
        py_log_after(st);
        if (st < 0) {
            Py_DECREF(self);
            return py_fail(st);
        }
    }
    return (PyObject *)self;
}

static void buffer_destroy(py_buffer *self)
{
    salvo_buffer *buf = self->head.handle;
    self->head.handle = NULL;
    self->map = NULL;
    py_release(self->head.dev, PY_KIND_BUFFER, buf);
}

static void buffer_dealloc(py_buffer *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    buffer_destroy(self);
    py_child_detach(&self->head);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static int buffer_traverse(py_buffer *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    return py_child_traverse(&self->head, visit, arg);
}

static salvo_buffer *handle(py_buffer *self, const char *what)
{
    return py_child_get((PyObject *)self, py_buffer_type, what);
}

static PyObject *buffer_close(py_buffer *self, PyObject *unused)
{
    (void)unused;
    if (self->exports > 0) {
        PyErr_SetString(PyExc_BufferError, "Buffer.close: the buffer's memory is still viewed "
                                           "(a memoryview or numpy array over it)");
        return NULL;
    }
    buffer_destroy(self);
    py_log_poll();
    Py_RETURN_NONE;
}

/* Buffer.write (a bytes-like object in) and Buffer.read_into (a writable
 * one out): the same arguments, the other direction. */
static PyObject *buffer_transfer(py_buffer *self, PyObject *args, PyObject *kw, bool read)
{
    static char *write_names[] = {"data", "offset", NULL};
    static char *read_names[] = {"out", "offset", NULL};
    Py_buffer view;
    uint64_t offset = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, read ? "w*|O&:read_into" : "y*|O&:write",
                                     read ? read_names : write_names, &view, py_arg_u64,
                                     &offset))
        return NULL;
    salvo_buffer *buf = handle(self, read ? "Buffer.read_into" : "Buffer.write");
    if (!buf) {
        PyBuffer_Release(&view);
        return NULL;
    }
    salvo_status st;
    PY_UNLOCK(self->head.dev)
    st = read ? salvo_buffer_read(buf, offset, view.buf, (uint64_t)view.len)
              : salvo_buffer_write(buf, offset, view.buf, (uint64_t)view.len);
    PY_RELOCK
    PyBuffer_Release(&view);
    return py_none_or_fail(st);
}

static PyObject *buffer_write(py_buffer *self, PyObject *args, PyObject *kw)
{
    return buffer_transfer(self, args, kw, false);
}

static PyObject *buffer_read_into(py_buffer *self, PyObject *args, PyObject *kw)
{
    return buffer_transfer(self, args, kw, true);
}

static PyObject *buffer_read(py_buffer *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"size", "offset", NULL};
    PyObject *sizeobj = Py_None;
    uint64_t offset = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO&:read", names, &sizeobj, py_arg_u64,
                                     &offset))
        return NULL;
    salvo_buffer *buf = handle(self, "Buffer.read");
    if (!buf)
        return NULL;
    uint64_t size;
    if (sizeobj == Py_None)
        size = offset < self->size ? self->size - offset : 0;
    else if (py_u64(sizeobj, &size, "Buffer.read: size") != 0)
        return NULL;
    if (size > (uint64_t)PY_SSIZE_T_MAX)
        return PyErr_NoMemory();
    PyObject *out = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)size);
    if (!out)
        return NULL;
    salvo_status st;
    char *dst = PyByteArray_AS_STRING(out);
    PY_UNLOCK(self->head.dev)
    st = salvo_buffer_read(buf, offset, dst, size);
    PY_RELOCK
    py_log_after(st);
    if (st < 0) {
        Py_DECREF(out);
        return py_fail(st);
    }
    return out;
}

static PyObject *buffer_get_size(py_buffer *self, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLongLong(self->size);
}

static PyObject *buffer_get_domain(py_buffer *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(self->domain);
}

static PyObject *buffer_get_closed(py_buffer *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->head.handle == NULL);
}

static PyObject *buffer_get_device(py_buffer *self, void *closure)
{
    (void)closure;
    return Py_NewRef(self->head.dev ? (PyObject *)self->head.dev : Py_None);
}

static PyObject *buffer_get_address(py_buffer *self, void *closure)
{
    (void)closure;
    salvo_buffer *buf = handle(self, "Buffer.address");
    if (!buf)
        return NULL;
    uint64_t addr = 0;
    salvo_status st = salvo_buffer_address(buf, &addr);
    py_log_after(st);
    if (st < 0)
        return py_fail(st);
    return PyLong_FromUnsignedLongLong(addr);
}

static int buffer_getbuffer(py_buffer *self, Py_buffer *view, int flags)
{
    if (!self->head.handle) {
        PyErr_SetString(PyExc_BufferError, "the buffer is closed");
        view->obj = NULL;
        return -1;
    }
    if (!self->map) {
        PyErr_SetString(PyExc_BufferError,
                        "a DEVICE buffer has no mapping: use read()/write(), or a HOST or "
                        "SHARED buffer");
        view->obj = NULL;
        return -1;
    }
    if (self->size > (uint64_t)PY_SSIZE_T_MAX) {
        PyErr_SetString(PyExc_BufferError, "the buffer is too large to view");
        view->obj = NULL;
        return -1;
    }
    if (PyBuffer_FillInfo(view, (PyObject *)self, self->map, (Py_ssize_t)self->size, 0, flags) !=
        0)
        return -1;
    self->exports++;
    return 0;
}

static void buffer_releasebuffer(py_buffer *self, Py_buffer *view)
{
    (void)view;
    self->exports--;
}

static PyMethodDef buffer_methods[] = {
    {"close", (PyCFunction)buffer_close, METH_NOARGS,
     "Release the buffer (never blocks: freed once no pending work uses it)."},
    {"write", (PyCFunction)(void (*)(void))buffer_write, METH_VARARGS | METH_KEYWORDS,
     "write(data, offset=0): copy a bytes-like object (a C-contiguous numpy array) into the "
     "buffer, after the work that uses it (salvo_buffer_write)."},
    {"read_into", (PyCFunction)(void (*)(void))buffer_read_into, METH_VARARGS | METH_KEYWORDS,
     "read_into(out, offset=0): fill a writable bytes-like object (a numpy array) from the "
     "buffer, after the work that uses it (salvo_buffer_read)."},
    {"read", (PyCFunction)(void (*)(void))buffer_read, METH_VARARGS | METH_KEYWORDS,
     "read(size=None, offset=0): the bytes from offset (to the end), as a bytearray."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef buffer_getset[] = {
    {"size", (getter)buffer_get_size, NULL, "Size in bytes.", NULL},
    {"domain", (getter)buffer_get_domain, NULL, "The Domain it was made in.", NULL},
    {"closed", (getter)buffer_get_closed, NULL, "True once closed (or its device).", NULL},
    {"device", (getter)buffer_get_device, NULL, "The Device.", NULL},
    {"address", (getter)buffer_get_address, NULL,
     "The buffer's device address (salvo_buffer_address).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot buffer_slots[] = {
    {Py_tp_new, buffer_new},
    {Py_tp_dealloc, buffer_dealloc},
    {Py_tp_traverse, buffer_traverse},
    {Py_tp_methods, buffer_methods},
    {Py_tp_getset, buffer_getset},
    {Py_bf_getbuffer, buffer_getbuffer},
    {Py_bf_releasebuffer, buffer_releasebuffer},
    {Py_tp_doc, "Buffer(device, size, domain=Domain.DEVICE): a salvo buffer. HOST and SHARED "
                "buffers support the buffer protocol over their mapping (no copy)."},
    {0, NULL},
};

static PyType_Spec buffer_spec = {
    .name = "_salvo.Buffer",
    .basicsize = sizeof(py_buffer),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = buffer_slots,
};

int py_buffer_init_type(PyObject *module)
{
    py_buffer_type = (PyTypeObject *)PyType_FromSpec(&buffer_spec);
    if (!py_buffer_type)
        return -1;
    return PyModule_AddObjectRef(module, "Buffer", (PyObject *)py_buffer_type);
}
