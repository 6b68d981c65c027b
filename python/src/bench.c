/*
 * _salvo._launch_loop: the launch loop of salvo-bench's "host ns per
 * recorded launch" (examples/salvo_bench.c, bench_record) in C, run from
 * the same process, on the same stream and kernel, as the Python loop it
 * is compared with (python/examples/bench_launch.py).
 *
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L

#include "salvo_py.h"

#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

PyObject *py_launch_loop(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *streamobj, *kernelobj, *groupsobj, *spec, *pushobj;
    uint32_t count;
    uint64_t stride = 0;
    if (!PyArg_ParseTuple(args, "OOOOOO&|O&:_launch_loop", &streamobj, &kernelobj, &groupsobj,
                          &spec, &pushobj, py_arg_u32, &count, py_arg_u64, &stride))
        return NULL;
    salvo_stream *s = py_child_get(streamobj, py_stream_type, "_launch_loop: stream");
    salvo_kernel *k = s ? py_child_get(kernelobj, py_kernel_type, "_launch_loop: kernel") : NULL;
    if (!k)
        return NULL;
    uint32_t groups[3] = {1, 1, 1};
    if (py_u32(groupsobj, &groups[0], "_launch_loop: groups") != 0)
        return NULL;
    salvo_binding bindings[SALVO_MAX_BINDINGS];
    int n = py_bindings((const py_kernel *)kernelobj, spec, bindings);
    if (n < 0)
        return NULL;
    py_push push;
    if (py_push_get(pushobj, &push) != 0)
        return NULL;
    salvo_status st = SALVO_OK;
    double t;
    PY_UNLOCK(((py_child *)streamobj)->dev)
    const uint64_t first = n ? bindings[0].offset : 0;
    double t0 = now_s();
    for (uint32_t i = 0; i < count && st >= 0; i++) {
        if (n)
            bindings[0].offset = first + i * stride;
        st = salvo_launch(s, k, groups, bindings, (uint32_t)n, push.data, push.size);
    }
    t = now_s() - t0;
    PY_RELOCK
    py_push_release(&push);
    if (st < 0)
        return py_fail(st);
    py_log_poll();
    return PyFloat_FromDouble(t);
}
