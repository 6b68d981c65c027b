/*
 * _salvo.Kernel: a compute pipeline from SPIR-V bytes or GLSL source
 * (salvo_kernel_create), with what salvo reflected from it.
 *
 * SPDX-License-Identifier: MIT
 */
#include "salvo_py.h"

#include <string.h>

PyTypeObject *py_kernel_type;

/* spec: a dict {id: value} or a sequence of (id, value); a value is an
 * int (its low 32 bits), a float (float32 bits) or a bool. */
static int spec_constants(PyObject *spec, salvo_spec_constant **out, uint32_t *count)
{
    *out = NULL;
    *count = 0;
    if (!spec || spec == Py_None)
        return 0;
    PyObject *items = PyDict_Check(spec) ? PyDict_Items(spec) : PySequence_List(spec);
    if (!items)
        return -1;
    Py_ssize_t n = PyList_GET_SIZE(items);
    salvo_spec_constant *sc = PyMem_Calloc(n ? (size_t)n : 1, sizeof *sc);
    if (!sc) {
        Py_DECREF(items);
        PyErr_NoMemory();
        return -1;
    }
    PyObject *pair = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        /* (id, value): a tuple, a list, any pair. */
        Py_XSETREF(pair, PySequence_Fast(PyList_GET_ITEM(items, i),
                                         "Kernel: spec: (id, value) pairs or a dict are needed"));
        if (!pair)
            goto fail;
        if (PySequence_Fast_GET_SIZE(pair) != 2) {
            PyErr_Format(PyExc_TypeError,
                         "Kernel: spec: item %zd has %zd entries, not 2 (id, value)", i,
                         PySequence_Fast_GET_SIZE(pair));
            goto fail;
        }
        PyObject *id = PySequence_Fast_GET_ITEM(pair, 0);
        PyObject *value = PySequence_Fast_GET_ITEM(pair, 1);
        if (py_u32(id, &sc[i].id, "Kernel: spec constant id") != 0)
            goto fail;
        if (PyBool_Check(value)) {
            sc[i].value = value == Py_True;
        } else if (PyFloat_Check(value)) {
            float f = (float)PyFloat_AS_DOUBLE(value);
            memcpy(&sc[i].value, &f, sizeof f);
        } else {
            PyObject *index = PyNumber_Index(value);
            if (!index) {
                PyErr_Format(PyExc_TypeError,
                             "Kernel: spec constant %u: an int, float or bool is needed, not %s",
                             sc[i].id, Py_TYPE(value)->tp_name);
                goto fail;
            }
            /* int32 or uint32 alike: the constant holds the 32 bits. */
            unsigned long long v = PyLong_AsUnsignedLongLongMask(index);
            Py_DECREF(index);
            if (v == (unsigned long long)-1 && PyErr_Occurred())
                goto fail;
            sc[i].value = (uint32_t)v;
        }
    }
    Py_XDECREF(pair);
    Py_DECREF(items);
    *out = sc;
    *count = (uint32_t)n;
    return 0;
fail:
    Py_XDECREF(pair);
    Py_DECREF(items);
    PyMem_Free(sc);
    return -1;
}

static PyObject *info_dict(const salvo_kernel_info *info)
{
    PyObject *bindings = PyList_New(0);
    if (!bindings)
        return NULL;
    for (uint32_t i = 0; i < info->binding_count; i++) {
        const salvo_kernel_binding *b = &info->bindings[i];
        PyObject *d = Py_BuildValue("{s:I,s:i,s:O,s:I,s:i,s:i,s:i}", "binding", b->binding,
                                    "access", (int)b->access, "uniform",
                                    b->uniform ? Py_True : Py_False, "count", b->count, "kind",
                                    (int)b->kind, "image_type", (int)b->image_type,
                                    "image_format", (int)b->image_format);
        if (!d || PyList_Append(bindings, d) != 0) {
            Py_XDECREF(d);
            Py_DECREF(bindings);
            return NULL;
        }
        Py_DECREF(d);
    }
    PyObject *r = Py_BuildValue("{s:s,s:O,s:I,s:(III)}", "name", info->name, "bindings", bindings,
                                "push_constant_size", info->push_constant_size, "local_size",
                                info->local_size[0], info->local_size[1], info->local_size[2]);
    Py_DECREF(bindings);
    return r;
}

static PyObject *kernel_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"device", "spirv", "glsl", "entry", "name", "spec", NULL};
    PyObject *devobj, *spirv = Py_None, *spec = Py_None;
    const char *glsl = NULL, *entry = NULL, *name = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OzzzO:Kernel", names, &devobj, &spirv, &glsl,
                                     &entry, &name, &spec))
        return NULL;
    salvo_device *dev = py_device_handle(devobj);
    if (!dev)
        return NULL;
    salvo_kernel_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.entry = entry;
    desc.name = name;
    desc.glsl = glsl;
    uint32_t *words = NULL;
    if (spirv != Py_None) {
        /* Copied: the words must be 4-byte aligned, a bytes-like object's
         * memory need not be. */
        Py_buffer view;
        if (PyObject_GetBuffer(spirv, &view, PyBUF_SIMPLE) != 0)
            return NULL;
        words = PyMem_Malloc(view.len ? (size_t)view.len : 1);
        if (!words) {
            PyBuffer_Release(&view);
            return PyErr_NoMemory();
        }
        memcpy(words, view.buf, (size_t)view.len);
        desc.spirv = words;
        desc.spirv_size = (size_t)view.len;
        PyBuffer_Release(&view);
    }
    salvo_spec_constant *sc = NULL;
    if (spec_constants(spec, &sc, &desc.spec_constant_count) != 0) {
        PyMem_Free(words);
        return NULL;
    }
    desc.spec_constants = sc;
    py_kernel *self = (py_kernel *)type->tp_alloc(type, 0);
    if (!self) {
        PyMem_Free(words);
        PyMem_Free(sc);
        return NULL;
    }
    py_child_attach(&self->head, (py_device *)devobj, PY_KIND_KERNEL);
    salvo_kernel *k = NULL;
    salvo_status st;
    PY_UNLOCK((py_device *)devobj)
    st = salvo_kernel_create(dev, &desc, &k);
    PY_RELOCK
    PyMem_Free(words);
    PyMem_Free(sc);
    py_log_after(st);
    if (st < 0) {
        Py_DECREF(self);
        return py_fail(st);
    }
    self->head.handle = k;
    salvo_kernel_info info;
    st = salvo_kernel_info_get(k, &info);
    if (st < 0) {
        Py_DECREF(self);
        return py_fail(st);
    }
    self->binding_count = info.binding_count;
    for (uint32_t i = 0; i < info.binding_count; i++) {
        self->binding[i] = info.bindings[i].binding;
        self->count[i] = info.bindings[i].count;
    }
    self->info = info_dict(&info);
    if (!self->info) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static void kernel_destroy(py_kernel *self)
{
    salvo_kernel *k = self->head.handle;
    self->head.handle = NULL;
    py_release(self->head.dev, PY_KIND_KERNEL, k);
}

static void kernel_dealloc(py_kernel *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    kernel_destroy(self);
    py_child_detach(&self->head);
    Py_CLEAR(self->info);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static int kernel_traverse(py_kernel *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    return py_child_traverse(&self->head, visit, arg);
}

static PyObject *kernel_close(py_kernel *self, PyObject *unused)
{
    (void)unused;
    kernel_destroy(self);
    py_log_poll();
    Py_RETURN_NONE;
}

static PyObject *kernel_get_info(py_kernel *self, void *closure)
{
    (void)closure;
    return Py_NewRef(self->info ? self->info : Py_None);
}

static PyObject *kernel_get_closed(py_kernel *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->head.handle == NULL);
}

static PyMethodDef kernel_methods[] = {
    {"close", (PyCFunction)kernel_close, METH_NOARGS,
     "Release the kernel (never blocks: deferred while launches use it)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef kernel_getset[] = {
    {"info", (getter)kernel_get_info, NULL,
     "What salvo reflected: name, bindings, push_constant_size, local_size (a dict).", NULL},
    {"closed", (getter)kernel_get_closed, NULL, "True once closed (or its device).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot kernel_slots[] = {
    {Py_tp_new, kernel_new},
    {Py_tp_dealloc, kernel_dealloc},
    {Py_tp_traverse, kernel_traverse},
    {Py_tp_methods, kernel_methods},
    {Py_tp_getset, kernel_getset},
    {Py_tp_doc, "Kernel(device, spirv=None, glsl=None, entry=None, name=None, spec=None): a "
                "compute kernel from SPIR-V bytes or GLSL source; spec maps constant ids to "
                "values."},
    {0, NULL},
};

static PyType_Spec kernel_spec = {
    .name = "_salvo.Kernel",
    .basicsize = sizeof(py_kernel),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = kernel_slots,
};

int py_kernel_init_type(PyObject *module)
{
    py_kernel_type = (PyTypeObject *)PyType_FromSpec(&kernel_spec);
    if (!py_kernel_type)
        return -1;
    return PyModule_AddObjectRef(module, "Kernel", (PyObject *)py_kernel_type);
}
