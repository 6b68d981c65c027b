/*
 * The module _salvo: its types, salvo.Error, the constants the Python
 * package turns into enums, and the functions that need no object.
 *
 * SPDX-License-Identifier: MIT
 */
#include "salvo_py.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

PyObject *py_error_class;
PyObject *py_status_class;
PyObject *py_graph_class;

/* ---------------------------------------------------------------- errors */

PyObject *py_text(const char *text)
{
    return PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "replace");
}

static PyObject *raise_error(salvo_status st, const char *message)
{
    PyObject *cls = py_error_class ? py_error_class : PyExc_RuntimeError;
    PyObject *exc = py_error_class ? PyObject_CallFunction(cls, "iN", (int)st, py_text(message))
                                   : PyUnicode_FromFormat("%s: %s", salvo_status_string(st),
                                                          message);
    if (!exc)
        return NULL;
    PyErr_SetObject(cls, exc);
    Py_DECREF(exc);
    return NULL;
}

PyObject *py_fail(salvo_status st)
{
    /* Copied first: the log drain below runs Python, which may call salvo. */
    char message[1024];
    snprintf(message, sizeof message, "%s", salvo_last_error());
    py_log_drain(message);
    return raise_error(st, message);
}

PyObject *py_error(salvo_status st, const char *fmt, ...)
{
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    return raise_error(st, message);
}

PyObject *py_status(salvo_status st)
{
    if (py_status_class)
        return PyObject_CallFunction(py_status_class, "i", (int)st);
    return PyLong_FromLong(st);
}

/* ---------------------------------------------------------------- conversions */

int py_u64(PyObject *obj, uint64_t *out, const char *what)
{
    if (!PyLong_Check(obj)) {
        PyObject *index = PyNumber_Index(obj); /* numpy integers */
        if (!index) {
            PyErr_Format(PyExc_TypeError, "%s: an integer is needed, not %s", what,
                         Py_TYPE(obj)->tp_name);
            return -1;
        }
        int r = py_u64(index, out, what);
        Py_DECREF(index);
        return r;
    }
    unsigned long long v = PyLong_AsUnsignedLongLong(obj);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_OverflowError, "%s: %R is not in [0, 2**64)", what, obj);
        return -1;
    }
    *out = v;
    return 0;
}

int py_u32(PyObject *obj, uint32_t *out, const char *what)
{
    if (PyLong_CheckExact(obj)) {
        /* The common case: a small int, without the index machinery. */
        long v = PyLong_AsLong(obj);
        if (v >= 0 && (unsigned long)v <= UINT32_MAX) {
            *out = (uint32_t)v;
            return 0;
        }
        PyErr_Clear();
    }
    uint64_t v;
    if (py_u64(obj, &v, what) != 0)
        return -1;
    if (v > UINT32_MAX) {
        PyErr_Format(PyExc_OverflowError, "%s: %R is not in [0, 2**32)", what, obj);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

int py_arg_u32(PyObject *obj, void *out)
{
    return py_u32(obj, out, "an unsigned 32-bit argument") == 0;
}

int py_arg_u64(PyObject *obj, void *out)
{
    return py_u64(obj, out, "an unsigned 64-bit argument") == 0;
}

int py_region(PyObject *obj, salvo_image_region *out, bool *given)
{
    memset(out, 0, sizeof *out);
    *given = false;
    if (!obj || obj == Py_None)
        return 0;
    PyObject *seq = PySequence_Fast(obj, "region: a sequence (x, y, z, width, height, depth, "
                                         "layer, layers) or salvo.Region is needed");
    if (!seq)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > 8) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "region: at most 8 values (x, y, z, width, height, "
                                          "depth, layer, layers)");
        return -1;
    }
    uint32_t *fields[8] = {&out->x,     &out->y,      &out->z,     &out->width,
                           &out->height, &out->depth, &out->layer, &out->layers};
    for (Py_ssize_t i = 0; i < n; i++)
        if (py_u32(PySequence_Fast_GET_ITEM(seq, i), fields[i], "region") != 0) {
            Py_DECREF(seq);
            return -1;
        }
    Py_DECREF(seq);
    *given = true;
    return 0;
}

/* ---------------------------------------------------------------- functions */

static PyObject *mod_configure(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"error", "status", "log", "graph", NULL};
    PyObject *error, *status, *log, *graph;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOO:_configure", names, &error, &status, &log,
                                     &graph))
        return NULL;
    if (!PyType_Check(graph) || !PyType_IsSubtype((PyTypeObject *)graph, py_graph_type)) {
        PyErr_SetString(PyExc_TypeError, "_configure: graph must be a subclass of _salvo.Graph");
        return NULL;
    }
    Py_XSETREF(py_error_class, Py_NewRef(error));
    Py_XSETREF(py_status_class, Py_NewRef(status));
    Py_XSETREF(py_log_deliver, Py_NewRef(log));
    Py_XSETREF(py_graph_class, Py_NewRef(graph));
    Py_RETURN_NONE;
}

int py_enum_arg(PyObject *arg, int *out, const char *what)
{
    long v = PyLong_AsLong(arg);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v < INT_MIN || v > INT_MAX) { /* refused, not cut down to one that might be valid */
        PyErr_Format(PyExc_OverflowError, "%s: %ld is out of range", what, v);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static PyObject *mod_status_string(PyObject *self, PyObject *arg)
{
    (void)self;
    int v;
    if (py_enum_arg(arg, &v, "status_string") != 0)
        return NULL;
    return PyUnicode_FromString(salvo_status_string((salvo_status)v));
}

static PyObject *mod_last_error(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return py_text(salvo_last_error());
}

static PyObject *mod_enumerate(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    uint32_t count = 0;
    salvo_status st;
    Py_BEGIN_ALLOW_THREADS
    st = salvo_device_enumerate(NULL, &count);
    Py_END_ALLOW_THREADS
    if (st == SALVO_ERROR_NO_DEVICE)
        return PyList_New(0);
    if (st < 0)
        return py_fail(st);
    salvo_device_entry *entries = PyMem_Calloc(count ? count : 1, sizeof *entries);
    if (!entries)
        return PyErr_NoMemory();
    Py_BEGIN_ALLOW_THREADS
    st = count ? salvo_device_enumerate(entries, &count) : SALVO_OK;
    Py_END_ALLOW_THREADS
    if (st < 0) {
        PyMem_Free(entries);
        return py_fail(st);
    }
    PyObject *list = PyList_New(0);
    for (uint32_t i = 0; list && i < count; i++) {
        PyObject *d = Py_BuildValue("{s:s,s:i,s:I,s:I,s:I}", "name", entries[i].name, "type",
                                    (int)entries[i].type, "vendor_id", entries[i].vendor_id,
                                    "device_id", entries[i].device_id, "api_version",
                                    entries[i].api_version);
        if (!d || PyList_Append(list, d) != 0)
            Py_CLEAR(list);
        Py_XDECREF(d);
    }
    PyMem_Free(entries);
    return list;
}

static PyObject *mod_format_info(PyObject *self, PyObject *arg)
{
    (void)self;
    int v;
    if (py_enum_arg(arg, &v, "format") != 0)
        return NULL;
    return Py_BuildValue("(sI)", salvo_format_name((salvo_format)v),
                         salvo_format_texel_size((salvo_format)v));
}

/* Constants by the enum the package makes of them. */
static int add(PyObject *group, const char *name, long value)
{
    PyObject *v = PyLong_FromLong(value);
    int r = v ? PyDict_SetItemString(group, name, v) : -1;
    Py_XDECREF(v);
    return r;
}

#define ADD(group, name, value)                                                                    \
    do {                                                                                           \
        if (add(group, name, (long)(value)) != 0)                                                  \
            goto fail;                                                                             \
    } while (0)

static PyObject *mod_constants(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    PyObject *all = PyDict_New();
    PyObject *g = NULL;
    if (!all)
        return NULL;
#define GROUP(name)                                                                                \
    do {                                                                                           \
        Py_XDECREF(g);                                                                             \
        g = PyDict_New();                                                                          \
        if (!g || PyDict_SetItemString(all, name, g) != 0)                                         \
            goto fail;                                                                             \
    } while (0)
    GROUP("Status");
    ADD(g, "OK", SALVO_OK);
    ADD(g, "NOT_READY", SALVO_NOT_READY);
    ADD(g, "TIMEOUT", SALVO_TIMEOUT);
    ADD(g, "CANCELLED", SALVO_CANCELLED);
    ADD(g, "ERROR_INVALID_ARGUMENT", SALVO_ERROR_INVALID_ARGUMENT);
    ADD(g, "ERROR_OUT_OF_HOST_MEMORY", SALVO_ERROR_OUT_OF_HOST_MEMORY);
    ADD(g, "ERROR_OUT_OF_DEVICE_MEMORY", SALVO_ERROR_OUT_OF_DEVICE_MEMORY);
    ADD(g, "ERROR_DEVICE_LOST", SALVO_ERROR_DEVICE_LOST);
    ADD(g, "ERROR_UNSUPPORTED", SALVO_ERROR_UNSUPPORTED);
    ADD(g, "ERROR_NO_DEVICE", SALVO_ERROR_NO_DEVICE);
    ADD(g, "ERROR_BATCH_FAILED", SALVO_ERROR_BATCH_FAILED);
    ADD(g, "ERROR_INVALID_STATE", SALVO_ERROR_INVALID_STATE);
    ADD(g, "ERROR_UNKNOWN", SALVO_ERROR_UNKNOWN);
    ADD(g, "ERROR_TIMEOUT", SALVO_ERROR_TIMEOUT);
    GROUP("Domain");
    ADD(g, "DEVICE", SALVO_DOMAIN_DEVICE);
    ADD(g, "HOST", SALVO_DOMAIN_HOST);
    ADD(g, "SHARED", SALVO_DOMAIN_SHARED);
    GROUP("DeviceType");
    ADD(g, "OTHER", SALVO_DEVICE_TYPE_OTHER);
    ADD(g, "INTEGRATED", SALVO_DEVICE_TYPE_INTEGRATED);
    ADD(g, "DISCRETE", SALVO_DEVICE_TYPE_DISCRETE);
    ADD(g, "VIRTUAL", SALVO_DEVICE_TYPE_VIRTUAL);
    ADD(g, "CPU", SALVO_DEVICE_TYPE_CPU);
    GROUP("LogLevel");
    ADD(g, "DEBUG", SALVO_LOG_DEBUG);
    ADD(g, "INFO", SALVO_LOG_INFO);
    ADD(g, "WARNING", SALVO_LOG_WARNING);
    ADD(g, "ERROR", SALVO_LOG_ERROR);
    GROUP("DeviceFlag");
    ADD(g, "VALIDATION", SALVO_DEVICE_VALIDATION);
    ADD(g, "SYNC_VALIDATION", SALVO_DEVICE_SYNC_VALIDATION);
    ADD(g, "FORCE_STAGING", SALVO_DEVICE_FORCE_STAGING);
    ADD(g, "POOL_DESCRIPTORS", SALVO_DEVICE_POOL_DESCRIPTORS);
    ADD(g, "BLOCKING_WAIT", SALVO_DEVICE_BLOCKING_WAIT);
    GROUP("ImageType");
    ADD(g, "IMAGE_1D", SALVO_IMAGE_1D);
    ADD(g, "IMAGE_2D", SALVO_IMAGE_2D);
    ADD(g, "IMAGE_3D", SALVO_IMAGE_3D);
    ADD(g, "IMAGE_2D_ARRAY", SALVO_IMAGE_2D_ARRAY);
    GROUP("ImageUsage");
    ADD(g, "STORAGE", SALVO_IMAGE_STORAGE);
    ADD(g, "SAMPLED", SALVO_IMAGE_SAMPLED);
    ADD(g, "LINEAR_FILTER", SALVO_IMAGE_LINEAR_FILTER);
    GROUP("Format");
    for (int f = SALVO_FORMAT_UNDEFINED; f < SALVO_FORMAT_COUNT; f++)
        ADD(g, f == SALVO_FORMAT_UNDEFINED ? "UNDEFINED" : salvo_format_name((salvo_format)f), f);
    GROUP("Filter");
    ADD(g, "NEAREST", SALVO_FILTER_NEAREST);
    ADD(g, "LINEAR", SALVO_FILTER_LINEAR);
    GROUP("AddressMode");
    ADD(g, "CLAMP_TO_EDGE", SALVO_ADDRESS_CLAMP_TO_EDGE);
    ADD(g, "REPEAT", SALVO_ADDRESS_REPEAT);
    ADD(g, "MIRRORED_REPEAT", SALVO_ADDRESS_MIRRORED_REPEAT);
    ADD(g, "CLAMP_TO_BORDER", SALVO_ADDRESS_CLAMP_TO_BORDER);
    GROUP("Access");
    ADD(g, "READ", SALVO_ACCESS_READ);
    ADD(g, "WRITE", SALVO_ACCESS_WRITE);
    ADD(g, "READ_WRITE", SALVO_ACCESS_READ_WRITE);
    GROUP("BindingKind");
    ADD(g, "BUFFER", SALVO_BINDING_BUFFER);
    ADD(g, "STORAGE_IMAGE", SALVO_BINDING_STORAGE_IMAGE);
    ADD(g, "SAMPLED_IMAGE", SALVO_BINDING_SAMPLED_IMAGE);
    ADD(g, "SAMPLER", SALVO_BINDING_SAMPLER);
    ADD(g, "IMAGE_SAMPLER", SALVO_BINDING_IMAGE_SAMPLER);
    GROUP("Limits");
    ADD(g, "MAX_BINDINGS", SALVO_MAX_BINDINGS);
    ADD(g, "NAME_MAX", SALVO_NAME_MAX);
    ADD(g, "VERSION_MAJOR", SALVO_VERSION_MAJOR);
    ADD(g, "VERSION_MINOR", SALVO_VERSION_MINOR);
    ADD(g, "VERSION_PATCH", SALVO_VERSION_PATCH);
#undef GROUP
    Py_XDECREF(g);
    return all;
fail:
    Py_XDECREF(g);
    Py_DECREF(all);
    return NULL;
}

static PyMethodDef module_methods[] = {
    {"_configure", (PyCFunction)(void (*)(void))mod_configure, METH_VARARGS | METH_KEYWORDS,
     "Set the classes and the log function the package defines."},
    {"_constants", mod_constants, METH_NOARGS, "salvo.h's enums, by name."},
    {"status_string", mod_status_string, METH_O, "The name of a status, as salvo_status_string."},
    {"last_error", mod_last_error, METH_NOARGS, "This thread's salvo_last_error()."},
    {"enumerate_devices", mod_enumerate, METH_NOARGS,
     "The Vulkan devices that can run compute, as dicts (name, type, vendor_id, device_id, "
     "api_version); [] where there is none."},
    {"_format_info", mod_format_info, METH_O, "(name, texel size) of a format."},
    {"_launch_loop", py_launch_loop, METH_VARARGS,
     "_launch_loop(stream, kernel, groups, bindings, push, count, stride=0): seconds for count "
     "salvo_launch calls made in C, the first binding's offset advanced by stride each time "
     "(the yardstick of examples/bench_launch.py)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_salvo",
    .m_doc = "salvo's C API for Python; use the package salvo, which wraps it.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__salvo(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    if (py_device_init_type(m) != 0 || py_buffer_init_type(m) != 0 ||
        py_kernel_init_type(m) != 0 || py_stream_init_type(m) != 0 ||
        py_event_init_type(m) != 0 || py_gate_init_type(m) != 0 || py_graph_init_type(m) != 0 ||
        py_image_init_type(m) != 0) {
        Py_DECREF(m);
        return NULL;
    }
    py_graph_class = Py_NewRef((PyObject *)py_graph_type);
    return m;
}
