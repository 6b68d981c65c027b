#!/usr/bin/python3
"""Host time per launch from Python, beside C's.

The loop is salvo-bench's "host ns per recorded launch" (examples/
salvo_bench.c, bench_record): N launches of shaders/add.comp (64 elements,
+1, one binding of 256 bytes, 8 bytes of push constants, one workgroup) on
a new stream at the device's batch size, timing the launch calls alone
(their share of the submits included; the synchronize after them is not
counted); dependent (every launch on the same 256 bytes: a barrier
between each) and independent (each on its own slice). Each run is timed
three ways, one after the other, on the same device and kernel:

  C        the same loop in C (salvo._salvo._launch_loop: salvo_launch
           called from C, arguments converted once);
  Python   Stream.launch(kernel, 1, [binding], push) from a Python loop,
           the binding's tuple made anew at each launch where it moves;
  ctypes   (with --ctypes LIBSALVO_SO) salvo_launch called through ctypes
           from Python, on a device of its own: what the package would
           cost without its C extension.

Prints the median of --repeats runs of each, in ns per launch, and the
ratio to C. --record-only also times a stream whose batch holds all N
launches, so nothing is submitted during the loop: the cost of recording
alone, where the binding's share shows most. --salvo-bench PATH also runs
that program and prints its own "host ns per recorded launch" line.

    PYTHONPATH=build/python python3 python/examples/bench_launch.py
"""

import argparse
import ctypes
import statistics
import subprocess
import sys
import time

import numpy as np

import salvo

# shaders/add.comp, salvo-bench's kernel.
ADD_GLSL = """
#version 450
layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) buffer Data { uint data[]; };
layout(push_constant) uniform Push { uint n; uint value; } pc;
void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n)
        data[i] += pc.value;
}
"""


def python_loop(stream, kernel, buf, n, align, dependent):
    launch = stream.launch
    push = np.array([64, 1], dtype=np.uint32).tobytes()
    if dependent:
        binding = [(buf, 0, 256)]
        t0 = time.perf_counter()
        for _ in range(n):
            launch(kernel, 1, binding, push)
        return time.perf_counter() - t0
    t0 = time.perf_counter()
    for i in range(n):
        launch(kernel, 1, [(buf, i * align, 256)], push)
    return time.perf_counter() - t0


def c_loop(stream, kernel, buf, n, align, dependent):
    push = np.array([64, 1], dtype=np.uint32).tobytes()
    return salvo._salvo._launch_loop(stream, kernel, 1, [(buf, 0, 256)], push, n,
                                     0 if dependent else align)


class CtypesSalvo:
    """salvo_launch through ctypes, on libsalvo.so's own device."""

    class Binding(ctypes.Structure):
        _fields_ = [("binding", ctypes.c_uint32), ("buffer", ctypes.c_void_p),
                    ("offset", ctypes.c_uint64), ("size", ctypes.c_uint64),
                    ("element", ctypes.c_uint32), ("image", ctypes.c_void_p),
                    ("sampler", ctypes.c_void_p)]

    class SpecConstant(ctypes.Structure):
        _fields_ = [("id", ctypes.c_uint32), ("value", ctypes.c_uint32)]

    class KernelDesc(ctypes.Structure):
        _fields_ = [("spirv", ctypes.c_void_p), ("spirv_size", ctypes.c_size_t),
                    ("entry", ctypes.c_char_p), ("name", ctypes.c_char_p),
                    ("spec_constants", ctypes.c_void_p),
                    ("spec_constant_count", ctypes.c_uint32), ("glsl", ctypes.c_char_p)]

    def __init__(self, path, n, align):
        lib = self.lib = ctypes.CDLL(path)
        vp, pp = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)
        lib.salvo_device_create.argtypes = [vp, pp]
        lib.salvo_buffer_create.argtypes = [vp, ctypes.c_uint64, ctypes.c_int, pp]
        lib.salvo_kernel_create.argtypes = [vp, ctypes.POINTER(self.KernelDesc), pp]
        lib.salvo_stream_create.argtypes = [vp, vp, pp]
        lib.salvo_stream_synchronize.argtypes = [vp]
        lib.salvo_launch.argtypes = [vp, vp, ctypes.POINTER(ctypes.c_uint32),
                                     ctypes.POINTER(self.Binding), ctypes.c_uint32, vp,
                                     ctypes.c_uint32]
        for name in ("salvo_stream_destroy", "salvo_buffer_destroy", "salvo_kernel_destroy",
                     "salvo_device_destroy"):
            getattr(lib, name).argtypes = [vp]
            getattr(lib, name).restype = None
        self.dev, self.buf, self.kernel = vp(), vp(), vp()
        self.check(lib.salvo_device_create(None, ctypes.byref(self.dev)), "device_create")
        self.check(lib.salvo_buffer_create(self.dev, n * align + 256, 0, ctypes.byref(self.buf)),
                   "buffer_create")
        spec = self.SpecConstant(0, 64)
        desc = self.KernelDesc(glsl=ADD_GLSL.encode(), spec_constants=ctypes.addressof(spec),
                               spec_constant_count=1)
        self.check(lib.salvo_kernel_create(self.dev, ctypes.byref(desc),
                                           ctypes.byref(self.kernel)), "kernel_create")

    def check(self, status, what):
        if status < 0:
            raise RuntimeError(f"ctypes: salvo_{what} returned {status}")

    def loop(self, n, align, dependent):
        lib = self.lib
        stream = ctypes.c_void_p()
        self.check(lib.salvo_stream_create(self.dev, None, ctypes.byref(stream)), "stream_create")
        groups = (ctypes.c_uint32 * 3)(1, 1, 1)
        push = (ctypes.c_uint32 * 2)(64, 1)
        bd = self.Binding(binding=0, buffer=self.buf, size=256)
        launch, ref = lib.salvo_launch, ctypes.byref(bd)
        t0 = time.perf_counter()
        for i in range(n):
            if not dependent:
                bd.offset = i * align
            if launch(stream, self.kernel, groups, ref, 1, push, 8) < 0:
                raise RuntimeError("ctypes: salvo_launch failed")
        t = time.perf_counter() - t0
        self.check(lib.salvo_stream_synchronize(stream), "stream_synchronize")
        lib.salvo_stream_destroy(stream)
        return t

    def close(self):
        self.lib.salvo_kernel_destroy(self.kernel)
        self.lib.salvo_buffer_destroy(self.buf)
        self.lib.salvo_device_destroy(self.dev)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=10000, help="launches per run (10000)")
    ap.add_argument("--repeats", type=int, default=5, help="runs; the median is printed (5)")
    ap.add_argument("--record-only", action="store_true",
                    help="also time a stream whose batch holds every launch (no submit)")
    ap.add_argument("--ctypes", metavar="LIBSALVO_SO",
                    help="also time salvo_launch through ctypes on this libsalvo.so")
    ap.add_argument("--salvo-bench", metavar="PATH", help="also run salvo-bench and print its "
                    "host ns per recorded launch")
    args = ap.parse_args()
    n = args.count

    try:
        dev = salvo.Device()
    except salvo.Error as e:
        if e.status == salvo.Status.ERROR_NO_DEVICE:
            print(f"bench_launch: no Vulkan device: {e.message}", file=sys.stderr)
            return 77
        raise
    with dev:
        info = dev.info
        align = max(info["min_storage_buffer_offset_alignment"], 256)
        buf = dev.buffer(n * align + 256)
        kernel = dev.kernel(glsl=ADD_GLSL, name="add", spec={0: 64})
        ct = CtypesSalvo(args.ctypes, n, align) if args.ctypes else None

        batches = [("default", 0)]
        if args.record_only:
            batches.append(("record only", n + 1))
        print(f"{info['name']}, {info['driver_name']}: host ns per launch, median of "
              f"{args.repeats} runs of {n} launches (default batch {info['batch_size']})")
        header = f"{'':28} {'C':>9} {'Python':>9} {'Py/C':>6}"
        if ct:
            header += f" {'ctypes':>9} {'ct/C':>6}"
        print(header)
        for label, batch in batches:
            for dependent in (True, False):
                runs = {"c": [], "py": [], "ct": []}
                for _ in range(args.repeats):
                    # Alternated, so that a busy moment of the host hits each alike.
                    for key, fn in (("c", c_loop), ("py", python_loop)):
                        with dev.stream(batch_size=batch, first_batch=batch) as s:
                            runs[key].append(fn(s, kernel, buf, n, align, dependent) / n)
                            s.synchronize()
                    if ct and batch == 0:
                        runs["ct"].append(ct.loop(n, align, dependent) / n)
                c = statistics.median(runs["c"]) * 1e9
                py = statistics.median(runs["py"]) * 1e9
                line = (f"{label + (', dependent' if dependent else ', independent'):28} "
                        f"{c:9.0f} {py:9.0f} {py / c:6.2f}")
                if runs["ct"]:
                    cty = statistics.median(runs["ct"]) * 1e9
                    line += f" {cty:9.0f} {cty / c:6.2f}"
                print(line, flush=True)
        if ct:
            ct.close()
        if dev.stats()["validation_messages"]:
            print("bench_launch: the validation layer reported messages", file=sys.stderr)
            return 1

    if args.salvo_bench:
        out = subprocess.run([args.salvo_bench, "--repeats", str(args.repeats)],
                             capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if line.startswith("host ns per recorded launch"):
                print(f"salvo-bench: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
