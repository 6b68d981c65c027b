#!/usr/bin/python3
"""saxpy: y = a * x + y over 1M floats on the default device, checked
against NumPy. examples/saxpy.c in Python.

The kernel is shaders/saxpy.comp, compiled at run time (Device.kernel's
glsl=); x goes in from a NumPy array, y comes back as one, and the
result is also read in place through a HOST buffer's mapping, with no copy.
Exit 0 when every value is right and the validation layer (run with
SALVO_VALIDATION=1) said nothing; 77 without a Vulkan device.

    PYTHONPATH=build/python python3 python/examples/saxpy.py
"""

import sys

import numpy as np

import salvo

SAXPY_GLSL = """
#version 450
// y = a * x + y. The grid may be two-dimensional (x is limited by the
// device's maxComputeWorkGroupCount[0]): it is flattened to one index.
layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform Push { float a; uint n; } pc;
void main()
{
    uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x +
             gl_LocalInvocationID.x;
    if (i < pc.n)
        y[i] = pc.a * x[i] + y[i];
}
"""

N = 1 << 20
LOCAL_SIZE = 256  # the kernel's local_size_x, set by spec constant 0


def main():
    # Integer-valued inputs keep a * x + y exact in float, so the check can
    # demand equality whether or not the device fuses the multiply-add.
    a = np.float32(2.0)
    hx = (np.arange(N) % 1000).astype(np.float32)
    hy = (np.arange(N) % 7).astype(np.float32)
    want = a * hx + hy

    try:
        dev = salvo.Device()  # $SALVO_DEVICE, else the preferred device
    except salvo.Error as e:
        if e.status == salvo.Status.ERROR_NO_DEVICE:
            print(f"saxpy: no Vulkan device: {e.message}", file=sys.stderr)
            return 77
        raise
    with dev:
        x = dev.buffer_from(hx)
        y = dev.buffer_from(hy)
        kernel = dev.kernel(glsl=SAXPY_GLSL, name="saxpy", spec={0: LOCAL_SIZE})
        stream = dev.stream()

        # push: the block { float a; uint n; }, from NumPy scalars.
        stream.launch(kernel, (N + LOCAL_SIZE - 1) // LOCAL_SIZE, [x, y], (a, np.uint32(N)))
        stream.synchronize()
        out = y.to_numpy(np.float32)
        if not np.array_equal(out, want):
            i = int(np.flatnonzero(out != want)[0])
            print(f"saxpy: y[{i}] = {out[i]}, expected {want[i]}", file=sys.stderr)
            return 1

        # The same result copied into a HOST buffer and read in place.
        host = dev.buffer(N * 4, salvo.Domain.HOST)
        stream.copy(y, host)
        stream.synchronize()
        seen = host.view(np.float32)
        if not np.array_equal(seen, want):
            print("saxpy: the HOST buffer's mapping holds the wrong values", file=sys.stderr)
            return 1
        del seen  # the view holds the mapping: release it before the device closes

        if dev.stats()["validation_messages"]:
            print("saxpy: the validation layer reported messages", file=sys.stderr)
            return 1
    print(f"saxpy: y = {a} * x + y over {N} floats: correct")
    return 0


if __name__ == "__main__":
    sys.exit(main())
