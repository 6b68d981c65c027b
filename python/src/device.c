/*
 * _salvo.Device, and the list of children that lets Device.close mark
 * every object of the device closed (see salvo_py.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "salvo_py.h"

#include <stddef.h>
#include <string.h>

PyTypeObject *py_device_type;

static const char *kind_name(py_kind kind)
{
    switch (kind) {
    case PY_KIND_BUFFER: return "buffer";
    case PY_KIND_KERNEL: return "kernel";
    case PY_KIND_STREAM: return "stream";
    case PY_KIND_EVENT: return "event";
    case PY_KIND_GATE: return "gate";
    case PY_KIND_GRAPH: return "graph";
    case PY_KIND_IMAGE: return "image";
    case PY_KIND_SAMPLER: return "sampler";
    }
    return "object";
}

/* ---------------------------------------------------------------- children */

void py_child_attach(py_child *c, py_device *dev, py_kind kind)
{
    c->dev = (py_device *)Py_NewRef((PyObject *)dev);
    c->kind = kind;
    c->node.next = dev->children.next;
    c->node.prev = &dev->children;
    dev->children.next->prev = &c->node;
    dev->children.next = &c->node;
}

void py_child_detach(py_child *c)
{
    if (!c->dev)
        return;
    c->node.prev->next = c->node.next;
    c->node.next->prev = c->node.prev;
    c->node.prev = c->node.next = NULL;
    Py_CLEAR(c->dev);
}

void *py_child_handle(PyObject *obj, PyTypeObject *type, const char *what)
{
    if (!(Py_TYPE(obj) == type || PyType_IsSubtype(Py_TYPE(obj), type))) {
        PyErr_Format(PyExc_TypeError, "%s: a %s is needed, not %s", what, type->tp_name,
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    py_child *c = (py_child *)obj;
    if (c->handle)
        return c->handle;
    if (!c->dev || !c->dev->handle)
        py_error(SALVO_ERROR_INVALID_STATE, "%s: the %s's device is closed", what,
                 kind_name(c->kind));
    else if (c->kind == PY_KIND_GRAPH)
        py_error(SALVO_ERROR_INVALID_STATE, "%s: the graph is closed, or its capture has not "
                                            "ended", what);
    else
        py_error(SALVO_ERROR_INVALID_STATE, "%s: the %s is closed", what, kind_name(c->kind));
    return NULL;
}

int py_child_traverse(py_child *c, visitproc visit, void *arg)
{
    Py_VISIT(c->dev);
    return 0;
}

salvo_device *py_device_handle(PyObject *obj)
{
    if (!(Py_TYPE(obj) == py_device_type || PyType_IsSubtype(Py_TYPE(obj), py_device_type))) {
        PyErr_Format(PyExc_TypeError, "a salvo.Device is needed, not %s", Py_TYPE(obj)->tp_name);
        return NULL;
    }
    py_device *d = (py_device *)obj;
    if (!d->handle)
        py_error(SALVO_ERROR_INVALID_STATE, "the device is closed");
    return d->handle;
}

/* ---------------------------------------------------------------- Device */

static PyObject *device_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"name",           "batch_size",          "fence_timeout_s",
                            "flags",          "validation",          "pipeline_cache_path",
                            "fault",          "release_max_count",   "release_max_bytes",
                            NULL};
    const char *name = NULL, *cache = NULL, *fault = NULL;
    uint32_t batch = 0, flags = 0, release_count = 0;
    uint64_t release_bytes = 0;
    double fence = 0;
    PyObject *validation = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|zO&dO&OzzO&O&:Device", names, &name, py_arg_u32,
                                     &batch, &fence, py_arg_u32, &flags, &validation, &cache,
                                     &fault, py_arg_u32, &release_count, py_arg_u64,
                                     &release_bytes))
        return NULL;
    if (validation != Py_None) {
        /* True or 1: the layer; 2: synchronization validation too. */
        long v = PyLong_AsLong(validation);
        if (v == -1 && PyErr_Occurred())
            return NULL;
        if (v >= 2)
            flags |= SALVO_DEVICE_SYNC_VALIDATION | SALVO_DEVICE_VALIDATION;
        else if (v == 1)
            flags |= SALVO_DEVICE_VALIDATION;
    }
    py_device *self = (py_device *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    self->children.next = self->children.prev = &self->children;
    salvo_device_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.name = name;
    desc.batch_size = batch;
    desc.fence_timeout_s = fence;
    desc.flags = flags;
    desc.pipeline_cache_path = cache;
    desc.fault = fault;
    desc.release_max_count = release_count;
    desc.release_max_bytes = release_bytes;
    desc.log = py_log_callback;
    salvo_status st;
    salvo_device *dev = NULL;
    Py_BEGIN_ALLOW_THREADS
    st = salvo_device_create(&desc, &dev);
    Py_END_ALLOW_THREADS
    py_log_after(st);
    if (st < 0) {
        Py_DECREF(self);
        return py_fail(st);
    }
    self->handle = dev;
    return (PyObject *)self;
}

struct py_deferred {
    py_kind kind;
    void *handle;
};

static void destroy_now(py_kind kind, void *h)
{
    switch (kind) {
    case PY_KIND_BUFFER: salvo_buffer_destroy(h); break; /* never blocks */
    case PY_KIND_KERNEL: salvo_kernel_destroy(h); break;
    case PY_KIND_STREAM: salvo_stream_destroy(h); break; /* never blocks */
    case PY_KIND_EVENT: salvo_event_destroy(h); break;
    case PY_KIND_GATE: salvo_gate_destroy(h); break; /* raises it for whatever still waits */
    case PY_KIND_GRAPH: salvo_graph_destroy(h); break; /* never blocks */
    case PY_KIND_IMAGE: salvo_image_destroy(h); break;
    case PY_KIND_SAMPLER: salvo_sampler_destroy(h); break;
    }
}

void py_release(py_device *dev, py_kind kind, void *h)
{
    if (!h || !dev || !dev->handle)
        return;
    if (dev->calls == 0) {
        destroy_now(kind, h);
        return;
    }
    if (dev->deferred_count == dev->deferred_cap) {
        size_t cap = dev->deferred_cap ? 2 * dev->deferred_cap : 8;
        py_deferred *grown = PyMem_Realloc(dev->deferred, cap * sizeof *grown);
        if (!grown)
            return; /* left to the device's destroy, which reclaims it */
        dev->deferred = grown;
        dev->deferred_cap = cap;
    }
    dev->deferred[dev->deferred_count++] = (py_deferred){kind, h};
}

/* Destroy the device with the GIL let go (the destroy waits for its
 * work), then hand on what it logged. */
static void destroy_device(salvo_device *dev)
{
    if (py_in_host_call()) { /* salvo refuses it there */
        py_host_call_defer_destroy(dev);
        return;
    }
    Py_BEGIN_ALLOW_THREADS
    salvo_device_destroy(dev);
    Py_END_ALLOW_THREADS
    py_log_poll();
}

void py_calls_done(py_device *dev)
{
    if (--dev->calls > 0)
        return;
    /* In the order the closes came (a device's close: graphs first). */
    for (size_t i = 0; i < dev->deferred_count; i++)
        destroy_now(dev->deferred[i].kind, dev->deferred[i].handle);
    dev->deferred_count = 0;
    salvo_device *closing = dev->closing;
    dev->closing = NULL;
    if (closing)
        destroy_device(closing);
}

/* Release a child's salvo object as its own close would, ahead of the
 * device's destroy (which would reclaim it with a warning). */
static void child_release(py_child *c)
{
    void *h = c->handle;
    c->handle = NULL;
    if (!h)
        return;
    if (c->kind == PY_KIND_BUFFER) {
        ((py_buffer *)c)->map = NULL;
    } else if (c->kind == PY_KIND_STREAM) {
        py_stream *s = (py_stream *)c;
        if (s->capture && s->capture->origin == s)
            s->capture->active = false; /* abandoned with its stream */
    } else if (c->kind == PY_KIND_GATE) {
        py_gate_release(c, h);
        return;
    }
    py_release(c->dev, c->kind, h);
}

/* The device's handle is gone from here on; the device itself is
 * destroyed now, or by the last call in flight on it (py_calls_done). */
static void destroy_handle(py_device *self)
{
    salvo_device *dev = self->handle;
    self->handle = NULL;
    if (self->calls > 0)
        self->closing = dev;
    else
        destroy_device(dev);
}

/* Close every child, then destroy the device (waits for its work). */
static int device_close_impl(py_device *self)
{
    if (!self->handle)
        return 0;
    for (py_node *n = self->children.next; n != &self->children; n = n->next) {
        py_child *c = (py_child *)((char *)n - offsetof(py_child, node));
        if (py_buffer_exports(c) > 0) {
            PyErr_SetString(PyExc_BufferError,
                            "Device.close: a mapped buffer of the device is still viewed "
                            "(a memoryview or numpy array over it); release those first");
            return -1;
        }
    }
    /* Graphs first: what they hold is then released with its own object. */
    for (int pass = 0; pass < 2; pass++)
        for (py_node *n = self->children.next; n != &self->children; n = n->next) {
            py_child *c = (py_child *)((char *)n - offsetof(py_child, node));
            if ((c->kind == PY_KIND_GRAPH) == (pass == 0))
                child_release(c);
        }
    destroy_handle(self);
    return 0;
}

static void device_dealloc(py_device *self)
{
    PyTypeObject *type = Py_TYPE(self);
    if (self->handle) {
        /* Children hold the device: none is left, and no view can be. */
        destroy_handle(self);
    }
    Py_CLEAR(self->info);
    PyMem_Free(self->deferred);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static PyObject *device_close(py_device *self, PyObject *unused)
{
    (void)unused;
    if (device_close_impl(self) != 0)
        return NULL;
    Py_RETURN_NONE;
}

/* call(dev) with the GIL let go: the calls that may wait on the device. */
static salvo_status unlocked(py_device *owner, salvo_device *dev,
                              salvo_status (*call)(salvo_device *))
{
    salvo_status st;
    PY_UNLOCK(owner)
    st = call(dev);
    PY_RELOCK
    return st;
}

static PyObject *device_synchronize(py_device *self, PyObject *unused)
{
    (void)unused;
    salvo_device *dev = py_device_handle((PyObject *)self);
    return dev ? py_result(unlocked(self, dev, salvo_device_synchronize)) : NULL;
}

static PyObject *device_stats(py_device *self, PyObject *unused)
{
    (void)unused;
    salvo_device *dev = py_device_handle((PyObject *)self);
    if (!dev)
        return NULL;
    salvo_stats s;
    salvo_status st;
    PY_UNLOCK(self)
    st = salvo_device_stats(dev, &s);
    PY_RELOCK
    py_log_after(st);
    if (st < 0)
        return py_fail(st);
    return Py_BuildValue(
        "{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,"
        "s:K,s:K}",
        "live_buffers", s.live_buffers, "live_kernels", s.live_kernels, "live_streams",
        s.live_streams, "live_events", s.live_events, "live_gates", s.live_gates,
        "live_buffer_bytes", s.live_buffer_bytes, "releases_pending", s.releases_pending,
        "release_bytes_pending", s.release_bytes_pending, "releases_run", s.releases_run,
        "launches_pending", s.launches_pending, "launches_total", s.launches_total,
        "batches_submitted", s.batches_submitted, "barriers_emitted", s.barriers_emitted,
        "transfer_bytes", s.transfer_bytes, "direct_bindings", s.direct_bindings,
        "validation_messages", s.validation_messages, "transfer_bytes_imported",
        s.transfer_bytes_imported, "live_graphs", s.live_graphs, "live_images", s.live_images,
        "live_image_bytes", s.live_image_bytes, "live_samplers", s.live_samplers,
        "replays_ahead", s.replays_ahead, "launches_ahead", s.launches_ahead);
}

/* memory_info(): {"measured": bool, "heaps": [{size, device_local, budget,
 * usage, allocated}, ...]} from salvo_device_memory_info. */
static PyObject *device_memory_info(py_device *self, PyObject *unused)
{
    (void)unused;
    salvo_device *dev = py_device_handle((PyObject *)self);
    if (!dev)
        return NULL;
    salvo_memory_info m;
    salvo_status st = salvo_device_memory_info(dev, &m); /* takes no lock: no wait */
    if (st < 0)
        return py_fail(st);
    py_log_poll();
    PyObject *heaps = PyList_New(0);
    for (uint32_t h = 0; heaps && h < m.heap_count && h < 16; h++) {
        const salvo_heap_usage *u = &m.heaps[h];
        PyObject *heap = Py_BuildValue("{s:K,s:O,s:K,s:K,s:K}", "size", u->size, "device_local",
                                       u->device_local ? Py_True : Py_False, "budget", u->budget,
                                       "usage", u->usage, "allocated", u->allocated);
        if (!heap || PyList_Append(heaps, heap) != 0)
            Py_CLEAR(heaps);
        Py_XDECREF(heap);
    }
    if (!heaps)
        return NULL;
    PyObject *d = Py_BuildValue("{s:O,s:O}", "measured", m.measured ? Py_True : Py_False, "heaps",
                                heaps);
    Py_DECREF(heaps);
    return d;
}

static PyObject *features_dict(const salvo_device_features *f)
{
    return Py_BuildValue(
        "{s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O,"
        "s:O,s:O,s:O,s:O,s:I,s:O,s:O,s:O,s:O,s:O,s:O,s:I,s:O,s:O,s:O,s:O}",
        "checked", f->checked ? Py_True : Py_False, "shader_float64",
        f->shader_float64 ? Py_True : Py_False, "shader_int64",
        f->shader_int64 ? Py_True : Py_False, "shader_int16", f->shader_int16 ? Py_True : Py_False,
        "shader_int8", f->shader_int8 ? Py_True : Py_False, "shader_float16",
        f->shader_float16 ? Py_True : Py_False, "storage_buffer_8bit",
        f->storage_buffer_8bit ? Py_True : Py_False, "uniform_buffer_8bit",
        f->uniform_buffer_8bit ? Py_True : Py_False, "push_constant_8bit",
        f->push_constant_8bit ? Py_True : Py_False, "storage_buffer_16bit",
        f->storage_buffer_16bit ? Py_True : Py_False, "uniform_buffer_16bit",
        f->uniform_buffer_16bit ? Py_True : Py_False, "push_constant_16bit",
        f->push_constant_16bit ? Py_True : Py_False, "vulkan_memory_model",
        f->vulkan_memory_model ? Py_True : Py_False, "vulkan_memory_model_device_scope",
        f->vulkan_memory_model_device_scope ? Py_True : Py_False, "buffer_device_address",
        f->buffer_device_address ? Py_True : Py_False, "variable_pointers_storage_buffer",
        f->variable_pointers_storage_buffer ? Py_True : Py_False, "variable_pointers",
        f->variable_pointers ? Py_True : Py_False, "buffer_int64_atomics",
        f->buffer_int64_atomics ? Py_True : Py_False, "shared_int64_atomics",
        f->shared_int64_atomics ? Py_True : Py_False, "buffer_float32_atomic_add",
        f->buffer_float32_atomic_add ? Py_True : Py_False, "buffer_float64_atomic_add",
        f->buffer_float64_atomic_add ? Py_True : Py_False, "integer_dot_product",
        f->integer_dot_product ? Py_True : Py_False, "maintenance4",
        f->maintenance4 ? Py_True : Py_False, "zero_initialize_workgroup_memory",
        f->zero_initialize_workgroup_memory ? Py_True : Py_False, "subgroup_size_control",
        f->subgroup_size_control ? Py_True : Py_False, "subgroup_operations",
        f->subgroup_operations, "compute_full_subgroups",
        f->compute_full_subgroups ? Py_True : Py_False, "uniform_buffer_array_dynamic_indexing",
        f->uniform_buffer_array_dynamic_indexing ? Py_True : Py_False,
        "storage_buffer_array_dynamic_indexing",
        f->storage_buffer_array_dynamic_indexing ? Py_True : Py_False,
        "storage_image_extended_formats", f->storage_image_extended_formats ? Py_True : Py_False,
        "storage_image_read_without_format",
        f->storage_image_read_without_format ? Py_True : Py_False,
        "storage_image_write_without_format",
        f->storage_image_write_without_format ? Py_True : Py_False, "float_controls",
        f->float_controls, "sampled_image_array_dynamic_indexing",
        f->sampled_image_array_dynamic_indexing ? Py_True : Py_False,
        "storage_image_array_dynamic_indexing",
        f->storage_image_array_dynamic_indexing ? Py_True : Py_False, "image_float32_atomics",
        f->image_float32_atomics ? Py_True : Py_False, "image_float32_atomic_add",
        f->image_float32_atomic_add ? Py_True : Py_False);
}

static PyObject *info_dict(const salvo_device_info *i)
{
    PyObject *features = features_dict(&i->features);
    PyObject *heaps = PyList_New(0);
    if (!features || !heaps)
        goto fail;
    for (uint32_t h = 0; h < i->memory_heap_count && h < 16; h++) {
        PyObject *heap = Py_BuildValue("{s:K,s:O}", "size", i->memory_heaps[h].size,
                                       "device_local",
                                       i->memory_heaps[h].device_local ? Py_True : Py_False);
        if (!heap || PyList_Append(heaps, heap) != 0) {
            Py_XDECREF(heap);
            goto fail;
        }
        Py_DECREF(heap);
    }
    PyObject *d = Py_BuildValue(
        "{s:s,s:i,s:I,s:I,s:I,s:I,s:s,s:s,s:(III),s:(III),s:I,s:I,s:I,s:I,s:K,s:I,s:K,s:I,s:O,"
        "s:O,s:K,s:O,s:I,s:O,s:O,s:O,s:O,s:I,s:d,s:I,s:O}",
        "name", i->name, "type", (int)i->type, "vendor_id", i->vendor_id, "device_id",
        i->device_id, "api_version", i->api_version, "driver_version", i->driver_version,
        "driver_name", i->driver_name, "driver_info", i->driver_info, "max_workgroup_count",
        i->max_workgroup_count[0], i->max_workgroup_count[1], i->max_workgroup_count[2],
        "max_workgroup_size", i->max_workgroup_size[0], i->max_workgroup_size[1],
        i->max_workgroup_size[2], "max_workgroup_invocations", i->max_workgroup_invocations,
        "max_push_constants_size", i->max_push_constants_size, "max_storage_buffer_range",
        i->max_storage_buffer_range, "max_bindings", i->max_bindings,
        "min_storage_buffer_offset_alignment", i->min_storage_buffer_offset_alignment,
        "max_uniform_buffer_range", i->max_uniform_buffer_range,
        "min_uniform_buffer_offset_alignment", i->min_uniform_buffer_offset_alignment,
        "subgroup_size", i->subgroup_size, "timeline_semaphores",
        i->timeline_semaphores ? Py_True : Py_False, "host_import",
        i->host_import ? Py_True : Py_False, "host_import_alignment", i->host_import_alignment,
        "push_descriptors", i->push_descriptors ? Py_True : Py_False, "queue_count",
        i->queue_count, "high_priority_queue", i->high_priority_queue ? Py_True : Py_False,
        "transfer_queue", i->transfer_queue ? Py_True : Py_False, "push_descriptors_used",
        i->push_descriptors_used ? Py_True : Py_False, "memory_heaps", heaps, "batch_size",
        i->batch_size, "fence_timeout_s", i->fence_timeout_s, "max_workgroup_memory",
        i->max_workgroup_memory, "features", features);
    Py_DECREF(features);
    Py_DECREF(heaps);
    return d;
fail:
    Py_XDECREF(features);
    Py_XDECREF(heaps);
    return NULL;
}

static PyObject *device_get_info(py_device *self, void *closure)
{
    (void)closure;
    if (self->info)
        return Py_NewRef(self->info);
    salvo_device *dev = py_device_handle((PyObject *)self);
    if (!dev)
        return NULL;
    salvo_device_info info;
    salvo_status st = salvo_device_info_get(dev, &info);
    py_log_after(st);
    if (st < 0)
        return py_fail(st);
    self->info = info_dict(&info);
    return self->info ? Py_NewRef(self->info) : NULL;
}

static PyObject *device_get_lost(py_device *self, void *closure)
{
    (void)closure;
    salvo_device *dev = py_device_handle((PyObject *)self);
    if (!dev)
        return NULL;
    return PyBool_FromLong(salvo_device_is_lost(dev));
}

static PyObject *device_get_closed(py_device *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->handle == NULL);
}

static PyObject *device_trace_start(py_device *self, PyObject *arg)
{
    salvo_device *dev = py_device_handle((PyObject *)self);
    if (!dev)
        return NULL;
    PyObject *bytes = NULL;
    if (!PyUnicode_FSConverter(arg, &bytes))
        return NULL;
    salvo_status st;
    const char *path = PyBytes_AS_STRING(bytes);
    PY_UNLOCK(self)
    st = salvo_trace_start(dev, path);
    PY_RELOCK
    Py_DECREF(bytes);
    return py_none_or_fail(st);
}

static PyObject *device_trace_stop(py_device *self, PyObject *unused)
{
    (void)unused;
    salvo_device *dev = py_device_handle((PyObject *)self);
    return dev ? py_none_or_fail(unlocked(self, dev, salvo_trace_stop)) : NULL;
}

static PyObject *device_format_support(py_device *self, PyObject *arg)
{
    salvo_device *dev = py_device_handle((PyObject *)self);
    if (!dev)
        return NULL;
    int f;
    if (py_enum_arg(arg, &f, "Device.format_support") != 0)
        return NULL;
    uint32_t usage = 0;
    salvo_status st = salvo_image_format_support(dev, (salvo_format)f, &usage);
    py_log_after(st);
    if (st < 0)
        return py_fail(st);
    return PyLong_FromUnsignedLong(usage);
}

static PyMethodDef device_methods[] = {
    {"close", (PyCFunction)device_close, METH_NOARGS,
     "Wait for all work, then destroy the device; its objects are closed with it."},
    {"synchronize", (PyCFunction)device_synchronize, METH_NOARGS,
     "Wait for every stream of the device (salvo_device_synchronize); returns a Status."},
    {"stats", (PyCFunction)device_stats, METH_NOARGS, "The device's counters, as a dict."},
    {"memory_info", (PyCFunction)device_memory_info, METH_NOARGS,
     "The device's memory heaps now (salvo_device_memory_info), as a dict: 'measured' (the "
     "driver's budget and usage, or salvo's own count) and 'heaps', a list of dicts with size, "
     "device_local, budget, usage and allocated (bytes)."},
    {"trace_start", (PyCFunction)device_trace_start, METH_O,
     "Write a trace of batches and launches to a file (Perfetto's JSON)."},
    {"trace_stop", (PyCFunction)device_trace_stop, METH_NOARGS, "Finish the trace file."},
    {"format_support", (PyCFunction)device_format_support, METH_O,
     "ImageUsage bits the device offers for a Format (0: none)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef device_getset[] = {
    {"info", (getter)device_get_info, NULL, "Identity, limits and features, as a dict.", NULL},
    {"is_lost", (getter)device_get_lost, NULL, "True once the device is lost (sticky).", NULL},
    {"closed", (getter)device_get_closed, NULL, "True once closed.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot device_slots[] = {
    {Py_tp_new, device_new},
    {Py_tp_dealloc, device_dealloc},
    {Py_tp_methods, device_methods},
    {Py_tp_getset, device_getset},
    {Py_tp_doc, "Device(name=None, batch_size=0, fence_timeout_s=0.0, flags=0, validation=None, "
                "pipeline_cache_path=None, fault=None, release_max_count=0, "
                "release_max_bytes=0): a salvo device (salvo_device_create)."},
    {0, NULL},
};

static PyType_Spec device_spec = {
    .name = "_salvo.Device",
    .basicsize = sizeof(py_device),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .slots = device_slots,
};

int py_device_init_type(PyObject *module)
{
    py_device_type = (PyTypeObject *)PyType_FromSpec(&device_spec);
    if (!py_device_type)
        return -1;
    return PyModule_AddObjectRef(module, "Device", (PyObject *)py_device_type);
}
