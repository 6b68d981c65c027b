/*
 * _salvo.Image and _salvo.Sampler.
 *
 * SPDX-License-Identifier: MIT
 */
#include "salvo_py.h"

#include <limits.h>
#include <string.h>

PyTypeObject *py_image_type;
PyTypeObject *py_sampler_type;

/* ---------------------------------------------------------------- Image */

static PyObject *image_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"device", "type",   "format", "width", "height",
                            "depth",  "layers", "usage",  NULL};
    PyObject *devobj;
    int itype, format;
    salvo_image_desc desc;
    memset(&desc, 0, sizeof desc);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OiiO&|O&O&O&O&:Image", names, &devobj, &itype,
                                     &format, py_arg_u32, &desc.width, py_arg_u32, &desc.height,
                                     py_arg_u32, &desc.depth, py_arg_u32, &desc.layers,
                                     py_arg_u32, &desc.usage))
        return NULL;
    desc.type = (salvo_image_type)itype;
    desc.format = (salvo_format)format;
    salvo_device *dev = py_device_handle(devobj);
    if (!dev)
        return NULL;
    py_image *self = (py_image *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    py_child_attach(&self->head, (py_device *)devobj, PY_KIND_IMAGE);
    salvo_image *img = NULL;
    salvo_status st;
    PY_UNLOCK((py_device *)devobj)
    st = salvo_image_create(dev, &desc, &img);
    PY_RELOCK
    py_log_after(st);
    if (st < 0) {
        Py_DECREF(self);
        return py_fail(st);
    }
    self->head.handle = img;
    st = salvo_image_desc_get(img, &self->desc);
    if (st < 0) {
        Py_DECREF(self);
        return py_fail(st);
    }
    return (PyObject *)self;
}

static void image_destroy(py_image *self)
{
    salvo_image *img = self->head.handle;
    self->head.handle = NULL;
    py_release(self->head.dev, PY_KIND_IMAGE, img);
}

static void image_dealloc(py_image *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    image_destroy(self);
    py_child_detach(&self->head);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static int child_traverse(py_child *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    return py_child_traverse(self, visit, arg);
}

static PyObject *image_close(py_image *self, PyObject *unused)
{
    (void)unused;
    image_destroy(self);
    py_log_poll();
    Py_RETURN_NONE;
}

/* Image.write (a bytes-like object in) and Image.read_into (a writable one
 * out): the same arguments, the other direction. */
static PyObject *image_transfer(py_image *self, PyObject *args, PyObject *kw, bool read)
{
    static char *write_names[] = {"data", "region", NULL};
    static char *read_names[] = {"out", "region", NULL};
    Py_buffer view;
    PyObject *regobj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, read ? "w*|O:read_into" : "y*|O:write",
                                     read ? read_names : write_names, &view, &regobj))
        return NULL;
    salvo_image *img = py_child_get((PyObject *)self, py_image_type,
                                    read ? "Image.read_into" : "Image.write");
    salvo_image_region region;
    bool given;
    if (!img || py_region(regobj, &region, &given) != 0) {
        PyBuffer_Release(&view);
        return NULL;
    }
    const salvo_image_region *r = given ? &region : NULL;
    salvo_status st;
    PY_UNLOCK(self->head.dev)
    st = read ? salvo_image_read(img, r, view.buf, (uint64_t)view.len)
              : salvo_image_write(img, r, view.buf, (uint64_t)view.len);
    PY_RELOCK
    PyBuffer_Release(&view);
    return py_none_or_fail(st);
}

static PyObject *image_write(py_image *self, PyObject *args, PyObject *kw)
{
    return image_transfer(self, args, kw, false);
}

static PyObject *image_read_into(py_image *self, PyObject *args, PyObject *kw)
{
    return image_transfer(self, args, kw, true);
}

static PyObject *image_get_desc(py_image *self, void *closure)
{
    (void)closure;
    const salvo_image_desc *d = &self->desc;
    return Py_BuildValue("{s:i,s:i,s:I,s:I,s:I,s:I,s:I}", "type", (int)d->type, "format",
                         (int)d->format, "width", d->width, "height", d->height, "depth",
                         d->depth, "layers", d->layers, "usage", d->usage);
}

static PyObject *image_get_closed(py_image *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->head.handle == NULL);
}

static PyMethodDef image_methods[] = {
    {"write", (PyCFunction)(void (*)(void))image_write, METH_VARARGS | METH_KEYWORDS,
     "write(data, region=None): texels from host memory, tightly packed (salvo_image_write)."},
    {"read_into", (PyCFunction)(void (*)(void))image_read_into, METH_VARARGS | METH_KEYWORDS,
     "read_into(out, region=None): texels into a writable bytes-like object "
     "(salvo_image_read)."},
    {"close", (PyCFunction)image_close, METH_NOARGS, "Release the image (never blocks)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef image_getset[] = {
    {"desc", (getter)image_get_desc, NULL,
     "type, format, width, height, depth, layers and usage (as resolved), a dict.", NULL},
    {"closed", (getter)image_get_closed, NULL, "True once closed (or its device).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot image_slots[] = {
    {Py_tp_new, image_new},
    {Py_tp_dealloc, image_dealloc},
    {Py_tp_traverse, child_traverse},
    {Py_tp_methods, image_methods},
    {Py_tp_getset, image_getset},
    {Py_tp_doc, "Image(device, type, format, width, height=0, depth=0, layers=0, usage=0): an "
                "image in device memory (salvo_image_create)."},
    {0, NULL},
};

static PyType_Spec image_spec = {
    .name = "_salvo.Image",
    .basicsize = sizeof(py_image),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = image_slots,
};

/* ---------------------------------------------------------------- Sampler */

/* One address mode as an int for salvo to judge; a value no int holds is
 * refused here rather than cut down to one that might be valid. */
static int address_mode(PyObject *obj, int *out)
{
    return py_enum_arg(obj, out, "Sampler: address mode");
}

static PyObject *sampler_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"device", "filter", "address", "unnormalized", NULL};
    PyObject *devobj, *address = Py_None;
    int filter = SALVO_FILTER_NEAREST, unnormalized = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|iOp:Sampler", names, &devobj, &filter, &address,
                                     &unnormalized))
        return NULL;
    salvo_device *dev = py_device_handle(devobj);
    if (!dev)
        return NULL;
    salvo_sampler_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.filter = (salvo_filter)filter;
    desc.unnormalized = unnormalized != 0;
    if (address != Py_None) {
        /* One mode for u, v and w, or a sequence of up to three. */
        if (PyLong_Check(address)) {
            int m;
            if (address_mode(address, &m) != 0)
                return NULL;
            desc.address[0] = desc.address[1] = desc.address[2] = (salvo_address_mode)m;
        } else {
            PyObject *seq = PySequence_Fast(address, "Sampler: address is a mode or up to 3");
            if (!seq)
                return NULL;
            Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
            if (n > 3) {
                PyErr_Format(PyExc_ValueError,
                             "Sampler: address is a mode or up to 3 (u, v, w), not %zd", n);
                Py_DECREF(seq);
                return NULL;
            }
            for (Py_ssize_t i = 0; i < n; i++) {
                int m;
                if (address_mode(PySequence_Fast_GET_ITEM(seq, i), &m) != 0) {
                    Py_DECREF(seq);
                    return NULL;
                }
                desc.address[i] = (salvo_address_mode)m;
            }
            Py_DECREF(seq);
        }
    }
    py_child *self = (py_child *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    py_child_attach(self, (py_device *)devobj, PY_KIND_SAMPLER);
    salvo_sampler *sampler = NULL;
    salvo_status st = salvo_sampler_create(dev, &desc, &sampler);
    py_log_after(st);
    if (st < 0) {
        Py_DECREF(self);
        return py_fail(st);
    }
    self->handle = sampler;
    return (PyObject *)self;
}

static void sampler_destroy(py_child *self)
{
    salvo_sampler *s = self->handle;
    self->handle = NULL;
    py_release(self->dev, PY_KIND_SAMPLER, s);
}

static void sampler_dealloc(py_child *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    sampler_destroy(self);
    py_child_detach(self);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static PyObject *sampler_close(py_child *self, PyObject *unused)
{
    (void)unused;
    sampler_destroy(self);
    py_log_poll();
    Py_RETURN_NONE;
}

static PyObject *sampler_get_closed(py_child *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->handle == NULL);
}

static PyMethodDef sampler_methods[] = {
    {"close", (PyCFunction)sampler_close, METH_NOARGS, "Release the sampler (never blocks)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef sampler_getset[] = {
    {"closed", (getter)sampler_get_closed, NULL, "True once closed (or its device).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot sampler_slots[] = {
    {Py_tp_new, sampler_new},
    {Py_tp_dealloc, sampler_dealloc},
    {Py_tp_traverse, child_traverse},
    {Py_tp_methods, sampler_methods},
    {Py_tp_getset, sampler_getset},
    {Py_tp_doc, "Sampler(device, filter=Filter.NEAREST, address=None, unnormalized=False): a "
                "sampler (salvo_sampler_create); address is one AddressMode or up to three."},
    {0, NULL},
};

static PyType_Spec sampler_spec = {
    .name = "_salvo.Sampler",
    .basicsize = sizeof(py_child),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = sampler_slots,
};

int py_image_init_type(PyObject *module)
{
    py_image_type = (PyTypeObject *)PyType_FromSpec(&image_spec);
    py_sampler_type = (PyTypeObject *)PyType_FromSpec(&sampler_spec);
    if (!py_image_type || !py_sampler_type)
        return -1;
    if (PyModule_AddObjectRef(module, "Image", (PyObject *)py_image_type) != 0)
        return -1;
    return PyModule_AddObjectRef(module, "Sampler", (PyObject *)py_sampler_type);
}
