/*
 * What runs on salvo's host-call thread for Python: Stream.host_call's
 * callable, and the end of a Stream.read (its destination's buffer view
 * is let go there).
 *
 * The callable runs with the GIL taken on that thread. Nothing else of
 * Python's is released there: the callable's reference and a read's view
 * go on a list that the next thread to poll the log (py_log_poll, after
 * nearly every call of the module) or the main thread's pending call
 * empties with the GIL held, so a release that collects a device, image
 * or graph never runs where salvo refuses their destroys (from a host
 * call). Once the interpreter is finalizing, a host call still pending
 * (a device collected at exit) skips the callable and keeps its
 * references: taking the GIL then would end salvo's thread.
 *
 * SPDX-License-Identifier: MIT
 */
#include "salvo_py.h"

#include <pthread.h>

static bool finalizing(void)
{
#if PY_VERSION_HEX >= 0x030D0000
    return !Py_IsInitialized() || Py_IsFinalizing();
#else
    return !Py_IsInitialized() || _Py_IsFinalizing();
#endif
}

/* done_lock guards done, the calls that ran and wait for their release. */
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static py_host_call *done;

static int drain_pending(void *unused)
{
    (void)unused;
    py_log_drain(NULL);
    return 0;
}

void py_host_call_drain(void)
{
    pthread_mutex_lock(&done_lock);
    py_host_call *h = done;
    done = NULL;
    pthread_mutex_unlock(&done_lock);
    while (h) {
        py_host_call *next = h->next;
        py_host_call_free(h);
        h = next;
    }
}

py_host_call *py_host_call_new(PyObject *fn)
{
    py_host_call *h = PyMem_RawCalloc(1, sizeof *h);
    if (!h) {
        PyErr_NoMemory();
        return NULL;
    }
    h->fn = Py_XNewRef(fn);
    return h;
}

void py_host_call_free(py_host_call *h)
{
    Py_XDECREF(h->fn);
    if (h->has_view)
        PyBuffer_Release(&h->view);
    PyMem_RawFree(h);
}

void py_host_call_run(void *user)
{
    py_host_call *h = user;
    if (h->fn) {
        if (finalizing())
            return; /* kept: see above */
        PyGILState_STATE g = PyGILState_Ensure();
        PyObject *r = PyObject_CallNoArgs(h->fn);
        if (!r)
            PyErr_WriteUnraisable(h->fn);
        Py_XDECREF(r);
        PyGILState_Release(g);
    }
    pthread_mutex_lock(&done_lock);
    h->next = done;
    done = h;
    pthread_mutex_unlock(&done_lock);
    atomic_store_explicit(&py_log_pending, 1, memory_order_relaxed);
    if (!finalizing())
        (void)Py_AddPendingCall(drain_pending, NULL); /* a full queue: the next poll */
}
