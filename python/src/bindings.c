/*
 * What a launch takes from Python: its bindings and its push constants,
 * converted onto the stack (no allocation per launch).
 *
 * SPDX-License-Identifier: MIT
 */
#include "salvo_py.h"

#include <string.h>

/* One item: a Buffer, (Buffer, offset[, size]), an Image, a Sampler or
 * (Image, Sampler). */
static int item(PyObject *obj, uint32_t binding, uint32_t element, salvo_binding *b)
{
    memset(b, 0, sizeof *b);
    b->binding = binding;
    b->element = element;
    PyTypeObject *t = Py_TYPE(obj);
    if (t == py_buffer_type || PyType_IsSubtype(t, py_buffer_type)) {
        b->buffer = py_child_get(obj, py_buffer_type, "launch");
        return b->buffer ? 0 : -1;
    }
    if (PyTuple_Check(obj) && PyTuple_GET_SIZE(obj) >= 2 && PyTuple_GET_SIZE(obj) <= 3) {
        PyObject *first = PyTuple_GET_ITEM(obj, 0);
        PyTypeObject *ft = Py_TYPE(first);
        if (ft == py_buffer_type || PyType_IsSubtype(ft, py_buffer_type)) {
            b->buffer = py_child_get(first, py_buffer_type, "launch");
            if (!b->buffer || py_u64(PyTuple_GET_ITEM(obj, 1), &b->offset, "binding offset") != 0)
                return -1;
            if (PyTuple_GET_SIZE(obj) == 3 &&
                py_u64(PyTuple_GET_ITEM(obj, 2), &b->size, "binding size") != 0)
                return -1;
            return 0;
        }
        if (PyTuple_GET_SIZE(obj) == 2 && PyType_IsSubtype(ft, py_image_type)) {
            b->image = py_child_get(first, py_image_type, "launch");
            b->sampler = b->image ? py_child_get(PyTuple_GET_ITEM(obj, 1), py_sampler_type,
                                                 "launch: (image, sampler)")
                                  : NULL;
            return b->sampler ? 0 : -1;
        }
    }
    if (PyType_IsSubtype(t, py_image_type)) {
        b->image = py_child_get(obj, py_image_type, "launch");
        return b->image ? 0 : -1;
    }
    if (PyType_IsSubtype(t, py_sampler_type)) {
        b->sampler = py_child_get(obj, py_sampler_type, "launch");
        return b->sampler ? 0 : -1;
    }
    PyErr_Format(PyExc_TypeError,
                 "binding %u: a Buffer, (Buffer, offset[, size]), Image, Sampler or "
                 "(Image, Sampler) is needed, not %s",
                 binding, t->tp_name);
    return -1;
}

/* An array binding's elements from a list, or one item as element 0. */
static int items(PyObject *obj, uint32_t binding, salvo_binding *out, int n)
{
    if (!PyList_Check(obj)) {
        if (n >= SALVO_MAX_BINDINGS)
            goto too_many;
        return item(obj, binding, 0, &out[n]) == 0 ? n + 1 : -1;
    }
    for (Py_ssize_t e = 0; e < PyList_GET_SIZE(obj); e++) {
        if (n >= SALVO_MAX_BINDINGS)
            goto too_many;
        if (item(PyList_GET_ITEM(obj, e), binding, (uint32_t)e, &out[n]) != 0)
            return -1;
        n++;
    }
    return n;
too_many:
    PyErr_Format(PyExc_ValueError, "more than %d bindings (array elements counted)",
                 SALVO_MAX_BINDINGS);
    return -1;
}

int py_bindings(const py_kernel *k, PyObject *spec, salvo_binding *out)
{
    if (!spec || spec == Py_None)
        return 0;
    int n = 0;
    if (PyTuple_Check(spec) || PyList_Check(spec)) {
        Py_ssize_t len = PySequence_Fast_GET_SIZE(spec);
        PyObject **v = PySequence_Fast_ITEMS(spec);
        if ((size_t)len > k->binding_count) {
            PyErr_Format(PyExc_ValueError,
                         "%zd bindings given; the kernel declares %u (a list binds the "
                         "elements of an array binding)",
                         len, k->binding_count);
            return -1;
        }
        for (Py_ssize_t i = 0; i < len; i++)
            if ((n = items(v[i], k->binding[i], out, n)) < 0)
                return -1;
        return n;
    }
    if (PyDict_Check(spec)) {
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        while (PyDict_Next(spec, &pos, &key, &value)) {
            uint32_t binding, element = 0;
            if (PyTuple_Check(key) && PyTuple_GET_SIZE(key) == 2) {
                if (py_u32(PyTuple_GET_ITEM(key, 0), &binding, "binding") != 0 ||
                    py_u32(PyTuple_GET_ITEM(key, 1), &element, "binding element") != 0)
                    return -1;
                if (n >= SALVO_MAX_BINDINGS) {
                    PyErr_Format(PyExc_ValueError, "more than %d bindings", SALVO_MAX_BINDINGS);
                    return -1;
                }
                if (item(value, binding, element, &out[n]) != 0)
                    return -1;
                n++;
                continue;
            }
            if (py_u32(key, &binding, "binding") != 0 || (n = items(value, binding, out, n)) < 0)
                return -1;
        }
        return n;
    }
    PyErr_Format(PyExc_TypeError,
                 "bindings: a list or tuple (the kernel's bindings in order) or a dict "
                 "{binding: item} is needed, not %s",
                 Py_TYPE(spec)->tp_name);
    return -1;
}

/* ---------------------------------------------------------------- push constants */

/* Append one value at its std430 offset (a scalar at a multiple of its
 * size); *at advances past it. */
static int pack_one(PyObject *obj, Py_ssize_t i, py_push *p, size_t *at)
{
    /* numpy.float64 is a float, but one with a buffer and a size. */
    if (!PyObject_CheckBuffer(obj)) {
        PyErr_Format(PyExc_TypeError,
                     "push constant %zd: %s has no size in bytes; use a numpy scalar "
                     "(numpy.uint32(n), numpy.float32(a)) or bytes",
                     i, Py_TYPE(obj)->tp_name);
        return -1;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_SIMPLE) != 0)
        return -1;
    size_t size = (size_t)view.len, a = *at;
    if (size == 2 || size == 4 || size == 8)
        a = (a + size - 1) / size * size;
    if (a + size > sizeof p->packed) {
        PyBuffer_Release(&view);
        PyErr_Format(PyExc_ValueError, "push constants: more than %d bytes", PY_PUSH_MAX);
        return -1;
    }
    memcpy(p->packed + a, view.buf, size);
    *at = a + size;
    PyBuffer_Release(&view);
    return 0;
}

static int pack(PyObject *seq, py_push *p)
{
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **v = PySequence_Fast_ITEMS(seq);
    size_t at = 0;
    memset(p->packed, 0, sizeof p->packed);
    for (Py_ssize_t i = 0; i < n; i++)
        if (pack_one(v[i], i, p, &at) != 0)
            return -1;
    p->data = p->packed;
    p->size = (uint32_t)at;
    return 0;
}

int py_push_get(PyObject *push, py_push *p)
{
    p->has_view = false;
    p->data = NULL;
    p->size = 0;
    if (!push || push == Py_None)
        return 0;
    if (PyBytes_CheckExact(push)) {
        if ((uint64_t)PyBytes_GET_SIZE(push) > UINT32_MAX) {
            PyErr_SetString(PyExc_ValueError, "push: too large");
            return -1;
        }
        p->data = PyBytes_AS_STRING(push);
        p->size = (uint32_t)PyBytes_GET_SIZE(push);
        return 0;
    }
    if (PyTuple_Check(push) || PyList_Check(push))
        return pack(push, p);
    if (PyObject_GetBuffer(push, &p->view, PyBUF_SIMPLE) != 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "push: bytes, a numpy scalar or structured value, a ctypes Structure, or "
                     "a tuple of numpy scalars is needed, not %s",
                     Py_TYPE(push)->tp_name);
        return -1;
    }
    if ((uint64_t)p->view.len > UINT32_MAX) {
        PyBuffer_Release(&p->view);
        PyErr_SetString(PyExc_ValueError, "push: too large");
        return -1;
    }
    p->has_view = true;
    p->data = p->view.buf;
    p->size = (uint32_t)p->view.len;
    return 0;
}

void py_push_release(py_push *p)
{
    if (p->has_view)
        PyBuffer_Release(&p->view);
    p->has_view = false;
}
