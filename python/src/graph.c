/*
 * _salvo.Graph: work captured once (Stream.end_capture) and replayed.
 * An empty Graph(device) is what a `with stream.capture() as g:` block
 * hands out; the end of the capture fills it.
 *
 * SPDX-License-Identifier: MIT
 */
#include "salvo_py.h"

PyTypeObject *py_graph_type;

static PyObject *graph_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"device", NULL};
    PyObject *devobj;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O:Graph", names, &devobj))
        return NULL;
    if (!py_device_handle(devobj))
        return NULL;
    py_graph *self = (py_graph *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    py_child_attach(&self->head, (py_device *)devobj, PY_KIND_GRAPH);
    return (PyObject *)self;
}

static void graph_destroy(py_graph *self)
{
    salvo_graph *g = self->head.handle;
    self->head.handle = NULL;
    py_release(self->head.dev, PY_KIND_GRAPH, g);
}

static void graph_dealloc(py_graph *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    graph_destroy(self);
    py_child_detach(&self->head);
    Py_CLEAR(self->nodes);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static int graph_traverse(py_graph *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->nodes);
    return py_child_traverse(&self->head, visit, arg);
}

static salvo_graph *handle(py_graph *self, const char *what)
{
    return py_child_get((PyObject *)self, py_graph_type, what);
}

static PyObject *graph_close(py_graph *self, PyObject *unused)
{
    (void)unused;
    graph_destroy(self);
    py_log_poll();
    Py_RETURN_NONE;
}

static PyObject *graph_launch(py_graph *self, PyObject *streamobj)
{
    salvo_graph *g = handle(self, "Graph.launch");
    salvo_stream *s = g ? py_child_get(streamobj, py_stream_type, "Graph.launch: stream") : NULL;
    if (!s)
        return NULL;
    salvo_status st;
    PY_UNLOCK(self->head.dev)
    st = salvo_graph_launch(g, s);
    PY_RELOCK
    return py_none_or_fail(st);
}

/* The kernel of launch node `node`, where the capture noted it. */
static py_kernel *node_kernel(py_graph *self, uint32_t node)
{
    if (!self->nodes || node >= (uint64_t)PyList_GET_SIZE(self->nodes))
        return NULL;
    PyObject *k = PyList_GET_ITEM(self->nodes, node);
    return PyObject_TypeCheck(k, py_kernel_type) ? (py_kernel *)k : NULL;
}

static PyObject *graph_set_push(py_graph *self, PyObject *args)
{
    uint32_t node;
    PyObject *pushobj;
    if (!PyArg_ParseTuple(args, "O&O:set_push", py_arg_u32, &node, &pushobj))
        return NULL;
    salvo_graph *g = handle(self, "Graph.set_push");
    if (!g)
        return NULL;
    py_push push;
    if (py_push_get(pushobj, &push) != 0)
        return NULL;
    salvo_status st;
    PY_UNLOCK(self->head.dev)
    st = salvo_graph_set_push(g, node, push.data, push.size);
    PY_RELOCK
    py_push_release(&push);
    return py_none_or_fail(st);
}

static PyObject *graph_set_bindings(py_graph *self, PyObject *args)
{
    uint32_t node;
    PyObject *spec;
    if (!PyArg_ParseTuple(args, "O&O:set_bindings", py_arg_u32, &node, &spec))
        return NULL;
    salvo_graph *g = handle(self, "Graph.set_bindings");
    if (!g)
        return NULL;
    py_kernel *k = node_kernel(self, node);
    /* A dict names its bindings; a sequence needs the node's kernel. */
    py_kernel none = {.binding_count = 0};
    if (!k && !PyDict_Check(spec)) {
        if (!self->nodes)
            PyErr_SetString(PyExc_ValueError,
                            "Graph.set_bindings: the graph's kernels are unknown (a capture "
                            "across threads); give the bindings as a dict {binding: item}");
        else if (node >= (uint64_t)PyList_GET_SIZE(self->nodes))
            return py_error(SALVO_ERROR_INVALID_ARGUMENT,
                            "Graph.set_bindings: the graph has %zd nodes, not node %u",
                            PyList_GET_SIZE(self->nodes), node);
        else
            return py_error(SALVO_ERROR_INVALID_ARGUMENT,
                            "Graph.set_bindings: node %u is not a launch", node);
        return NULL;
    }
    salvo_binding bindings[SALVO_MAX_BINDINGS];
    int count = py_bindings(k ? k : &none, spec, bindings);
    if (count < 0)
        return NULL;
    salvo_status st;
    PY_UNLOCK(self->head.dev)
    st = salvo_graph_set_bindings(g, node, bindings, (uint32_t)count);
    PY_RELOCK
    return py_none_or_fail(st);
}

static PyObject *graph_update(py_graph *self, PyObject *fromobj)
{
    salvo_graph *g = handle(self, "Graph.update");
    if (!g)
        return NULL;
    if (!PyObject_TypeCheck(fromobj, Py_TYPE(self)))
        return PyErr_Format(PyExc_TypeError, "Graph.update: from must be a Graph, not %s",
                            Py_TYPE(fromobj)->tp_name);
    salvo_graph *from = handle((py_graph *)fromobj, "Graph.update: from");
    if (!from)
        return NULL;
    salvo_status st;
    PY_UNLOCK(self->head.dev)
    st = salvo_graph_update(g, from);
    PY_RELOCK
    return py_none_or_fail(st);
}

static Py_ssize_t graph_len(py_graph *self)
{
    return (Py_ssize_t)salvo_graph_node_count(self->head.handle);
}

static PyObject *graph_get_node_count(py_graph *self, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLong(salvo_graph_node_count(self->head.handle));
}

static PyObject *graph_get_nodes(py_graph *self, void *closure)
{
    (void)closure;
    if (!self->nodes)
        Py_RETURN_NONE;
    return PyList_AsTuple(self->nodes);
}

static PyObject *graph_get_closed(py_graph *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->head.handle == NULL);
}

static PyMethodDef graph_methods[] = {
    {"launch", (PyCFunction)graph_launch, METH_O,
     "launch(stream): replay the graph on stream, in its order (salvo_graph_launch)."},
    {"set_push", (PyCFunction)graph_set_push, METH_VARARGS,
     "set_push(node, push): new push constants for launch node `node`, for later replays."},
    {"set_bindings", (PyCFunction)graph_set_bindings, METH_VARARGS,
     "set_bindings(node, bindings): new bindings for launch node `node` (as Stream.launch "
     "takes them), for later replays."},
    {"update", (PyCFunction)graph_update, METH_O,
     "update(from): every node's parameters from `from`, a graph captured from the same "
     "sequence of calls, for later replays (salvo_graph_update)."},
    {"close", (PyCFunction)graph_close, METH_NOARGS,
     "Release the graph (never blocks: freed once its replays are complete)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef graph_getset[] = {
    {"node_count", (getter)graph_get_node_count, NULL, "Nodes in the graph (0 when empty).",
     NULL},
    {"nodes", (getter)graph_get_nodes, NULL,
     "Per node, its Kernel (a launch) or None (a copy or fill); None when unknown.", NULL},
    {"closed", (getter)graph_get_closed, NULL, "True when there is no graph (closed, or not "
                                               "captured yet).",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot graph_slots[] = {
    {Py_tp_new, graph_new},
    {Py_tp_dealloc, graph_dealloc},
    {Py_tp_traverse, graph_traverse},
    {Py_tp_methods, graph_methods},
    {Py_tp_getset, graph_getset},
    {Py_sq_length, graph_len},
    {Py_tp_doc, "A captured graph (Stream.end_capture, or Stream.capture()); Graph(device) is "
                "an empty one that a capture fills."},
    {0, NULL},
};

static PyType_Spec graph_spec = {
    .name = "_salvo.Graph",
    .basicsize = sizeof(py_graph),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = graph_slots,
};

int py_graph_init_type(PyObject *module)
{
    py_graph_type = (PyTypeObject *)PyType_FromSpec(&graph_spec);
    if (!py_graph_type)
        return -1;
    return PyModule_AddObjectRef(module, "Graph", (PyObject *)py_graph_type);
}
