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
 * call). py_host_call_drain does nothing on the host-call thread (a method
 * the callable calls polls the log too), and a device closed or collected
 * there is destroyed by the next drain of another thread. Once the interpreter is finalizing, a host call still pending
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

/* done_lock guards done, the calls that ran and wait for their release,
 * and doomed, the devices closed or collected on the host-call thread. */
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static py_host_call *done;
typedef struct doomed_device {
    struct doomed_device *next;
    salvo_device *dev;
} doomed_device;
static doomed_device *doomed;

/* Set on the host-call thread while a callable runs: a release made there
 * (by a method the callable calls, or the cycle collector) must not reach
 * salvo_device_destroy, which salvo refuses in a host call. */
static _Thread_local bool in_host_call;

bool py_in_host_call(void)
{
    return in_host_call;
}

void py_host_call_defer_destroy(salvo_device *dev)
{
    doomed_device *d = PyMem_RawMalloc(sizeof *d);
    if (!d)
        return; /* left to the process's end, as one collected at exit */
    d->dev = dev;
    pthread_mutex_lock(&done_lock);
    d->next = doomed;
    doomed = d;
    pthread_mutex_unlock(&done_lock);
    atomic_store_explicit(&py_log_pending, 1, memory_order_relaxed);
}

static int drain_pending(void *unused)
{
    (void)unused;
    py_log_drain(NULL);
    return 0;
}

void py_host_call_drain(void)
{
    if (in_host_call) {
        /* Left for a thread of Python's: the host call's own ends there. */
        atomic_store_explicit(&py_log_pending, 1, memory_order_relaxed);
        return;
    }
    pthread_mutex_lock(&done_lock);
    py_host_call *h = done;
    done = NULL;
    doomed_device *d = doomed;
    doomed = NULL;
    pthread_mutex_unlock(&done_lock);
    while (h) {
        py_host_call *next = h->next;
        py_host_call_free(h);
        h = next;
    }
    /* In the order they were closed. */
    doomed_device *rev = NULL;
    while (d) {
        doomed_device *next = d->next;
        d->next = rev;
        rev = d;
        d = next;
    }
    while (rev) {
        doomed_device *next = rev->next;
        Py_BEGIN_ALLOW_THREADS
        salvo_device_destroy(rev->dev);
        Py_END_ALLOW_THREADS
        PyMem_RawFree(rev);
        rev = next;
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
        in_host_call = true;
        PyObject *r = PyObject_CallNoArgs(h->fn);
        if (!r)
            PyErr_WriteUnraisable(h->fn);
        Py_XDECREF(r);
        in_host_call = false;
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
