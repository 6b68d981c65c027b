#!/usr/bin/python3
"""cg: conjugate gradient on salvo from Python, as examples/cg/cg.c does it.

    cg.py [--rows N | --nx X --ny Y [--nz Z]] [--2d] [--tol T] [--max-iters M]
          [--k K] [--bench-iters N] [--reps R] [--shaders DIR]

The Poisson matrix (3D 7-point or 2D 5-point) in CSR, built with NumPy.
An iteration is five kernels, examples/cg/*.comp compiled at run time
(their #include lines inlined here): the SpMV with the first pass of
p . Ap, a one-workgroup reduction that computes alpha on the device, the
x and r updates with the first pass of r . r, the reduction that computes
beta and tests convergence on the device, the p update. K iterations are
captured once as a graph (`with stream.capture() as graph:`; 5 K nodes
and a copy of the scalars into a HOST buffer) and replayed: no host work
per kernel, and none per iteration. The host reads the scalars once per
replay, through the HOST buffer's mapping, one replay behind the device
(two graphs alternate, each writing a slot of its own), so the device never
waits for the host.

b = 1, x0 = 0. At the end the true residual |b - A x| / |b| is computed
with NumPy; exit 0 only when it is within the tolerance and the validation
layer said nothing (77 without a device). Then, unless --bench-iters 0,
the time per iteration: the median of R runs of a fixed number of
iterations from x = 0 (replays back to back, one synchronize).
"""

import argparse
import math
import pathlib
import re
import sys
import time

import numpy as np

import salvo

LOCAL = 256        # the kernels' workgroup size
MAX_GROUPS = 1024  # the most workgroups a vector kernel is given (grid stride beyond)
REDUCE_ALPHA, REDUCE_BETA = 0, 1
SNAP_STRIDE = 64   # bytes between the two snapshot slots

# The device's scalars: the kernels' std430 block Scalars (examples/cg/scalars.glsl).
SCALARS = np.dtype([("rr", "f8"), ("pq", "f8"), ("alpha", "f8"), ("beta", "f8"),
                    ("stop_rr", "f8"), ("local_sum", "f8"), ("iter", "u4"), ("done", "u4")])


def parse():
    ap = argparse.ArgumentParser(description="Conjugate gradient on salvo, from Python.")
    ap.add_argument("--rows", type=int, default=32768)
    ap.add_argument("--nx", type=int, default=0)
    ap.add_argument("--ny", type=int, default=0)
    ap.add_argument("--nz", type=int, default=0)
    ap.add_argument("--2d", dest="two_d", action="store_true")
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--max-iters", type=int, default=20000)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--bench-iters", type=int, default=100)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--shaders", type=pathlib.Path,
                    default=pathlib.Path(__file__).resolve().parents[2] / "examples" / "cg",
                    help="where spmv_dot.comp and the others are (examples/cg)")
    o = ap.parse_args()
    # The grid, chosen as cg_common.h's cg_parse chooses it.
    def rnd(v):
        return int(math.floor(v + 0.5))
    if o.nx or o.ny or o.nz:
        o.nz = o.nz or 1
        o.dims = 3 if o.nz > 1 else 2
    elif o.two_d:
        o.dims, o.nx, o.nz = 2, rnd(math.sqrt(o.rows)), 1
        o.ny = o.nx
    else:
        o.dims, o.nx = 3, rnd(o.rows ** (1 / 3))
        o.ny = o.nx
        o.nz = rnd(o.rows / (o.nx * o.nx))
    o.rows = o.nx * o.ny * o.nz
    if o.nx < 2 or o.ny < 2 or o.nz < 1 or o.rows > 1 << 29 or not 0 < o.tol < 1 or o.k < 1:
        ap.error("bad grid or options")
    o.max_iters = -(-o.max_iters // o.k) * o.k
    o.bench_iters = -(-o.bench_iters // o.k) * o.k
    return o


def poisson(o):
    """The negative Laplacian in CSR (row_ptr, col, val), columns ascending."""
    n, nx, plane = o.rows, o.nx, o.nx * o.ny
    g = np.arange(n, dtype=np.int64)
    x, y, z = g % nx, (g // nx) % o.ny, g // plane
    steps = [(-nx, y > 0), (-1, x > 0), (0, np.ones(n, bool)), (1, x + 1 < nx),
             (nx, y + 1 < o.ny)]
    if o.dims == 3:
        steps = [(-plane, z > 0)] + steps + [(plane, z + 1 < o.nz)]
    cols = np.stack([g + d for d, _ in steps], axis=1)
    mask = np.stack([m for _, m in steps], axis=1)
    vals = np.where(np.stack([np.full(n, d == 0) for d, _ in steps], axis=1), 2.0 * o.dims, -1.0)
    row_ptr = np.zeros(n + 1, dtype=np.uint32)
    row_ptr[1:] = np.cumsum(mask.sum(axis=1))
    return row_ptr, cols[mask].astype(np.uint32), vals[mask].astype(np.float64)


def glsl(path):
    """The kernel's source with its #include lines replaced by the files."""
    out = []
    for line in path.read_text().splitlines():
        m = re.match(r'\s*#include\s+"([^"]+)"', line)
        if m:
            out.append((path.parent / m.group(1)).read_text())
        elif "GL_GOOGLE_include_directive" not in line:
            out.append(line)
    return "\n".join(out) + "\n"


def main():
    o = parse()
    n = o.rows
    row_ptr, col, val = poisson(o)
    hb = np.ones(n)
    try:
        dev = salvo.Device()
    except salvo.Error as e:
        if e.status == salvo.Status.ERROR_NO_DEVICE:
            print(f"cg: no Vulkan device: {e.message}", file=sys.stderr)
            return 77
        raise
    with dev:
        info = dev.info
        if info["features"]["checked"] and not info["features"]["shader_float64"]:
            print(f"cg: {info['name']} has no float64 in shaders, which the solver needs",
                  file=sys.stderr)
            return 1
        D = salvo.Domain
        d_row_ptr, d_col, d_val = (dev.buffer_from(a) for a in (row_ptr, col, val))
        b = dev.buffer_from(hb)
        x, r, p, q = (dev.buffer(n * 8) for _ in range(4))
        partial = dev.buffer(MAX_GROUPS * 8)
        scalars = dev.buffer(SCALARS.itemsize)
        bb = float(hb @ hb)
        s0 = np.zeros(1, SCALARS)
        s0["rr"], s0["stop_rr"] = bb, o.tol * o.tol * bb
        scalars0 = dev.buffer_from(s0)
        snap = dev.buffer(2 * SNAP_STRIDE, D.HOST)

        k_spmv, k_reduce, k_xr, k_p = (
            dev.kernel(glsl=glsl(o.shaders / f"{name}.comp"), name=name)
            for name in ("spmv_dot", "reduce", "update_xr", "update_p"))
        stream = dev.stream()
        replayed = [dev.event(), dev.event()]

        groups = min((n + LOCAL - 1) // LOCAL, MAX_GROUPS)
        u32 = np.uint32
        sp = (u32(0), u32(n), u32(0), u32(0))
        vp = (u32(n), u32(0))
        rp_alpha, rp_beta = (u32(groups), u32(REDUCE_ALPHA)), (u32(groups), u32(REDUCE_BETA))
        b_spmv = [d_row_ptr, d_col, d_val, p, q, partial]
        b_reduce = [partial, scalars]
        b_xr = [scalars, p, q, x, r, partial]
        b_p = [scalars, r, p]

        # Back to x = 0, as a graph too: a solve or a timed run starts with it.
        with stream.capture() as reset:
            stream.fill(x, 0)  # 0.0 is all zero bits
            stream.copy(b, r)
            stream.copy(b, p)
            stream.copy(scalars0, scalars)

        # K iterations, then the scalars to snapshot slot j.
        t0 = time.perf_counter()
        iters = []
        for j in range(2):
            with stream.capture() as graph:
                for _ in range(o.k):
                    stream.launch(k_spmv, groups, b_spmv, sp)
                    stream.launch(k_reduce, 1, b_reduce, rp_alpha)
                    stream.launch(k_xr, groups, b_xr, vp)
                    stream.launch(k_reduce, 1, b_reduce, rp_beta)
                    stream.launch(k_p, groups, b_p, vp)
                stream.copy(scalars, snap, SCALARS.itemsize, dst_offset=j * SNAP_STRIDE)
            iters.append(graph)
        capture_s = time.perf_counter() - t0
        slots = [np.frombuffer(snap, SCALARS, 1, j * SNAP_STRIDE) for j in range(2)]

        # The solve: replay j + 1 is queued before the host waits for replay j.
        reset.launch(stream)
        stream.synchronize()
        t0 = time.perf_counter()
        replays_max = o.max_iters // o.k
        iters[0].launch(stream)
        replayed[0].record(stream)
        stream.flush()
        for j in range(replays_max):
            if j + 1 < replays_max:
                iters[(j + 1) % 2].launch(stream)
                replayed[(j + 1) % 2].record(stream)
                stream.flush()
            replayed[j % 2].synchronize()
            if slots[j % 2]["done"][0]:
                break
        stream.synchronize()
        solve_s = time.perf_counter() - t0

        fin = scalars.to_numpy(SCALARS)[0]
        hx = x.to_numpy(np.float64)
        ax = np.add.reduceat(val * hx[col], row_ptr[:-1].astype(np.int64))
        true_rel = math.sqrt(float(((hb - ax) ** 2).sum()) / bb)
        converged = fin["done"] != 0
        iterations = int(fin["done"] if converged else fin["iter"])
        passed = converged and true_rel <= o.tol * 1.01

        times = []
        for _ in range(o.reps if o.bench_iters else 0):
            reset.launch(stream)
            stream.synchronize()
            t0 = time.perf_counter()
            for j in range(o.bench_iters // o.k):
                iters[j % 2].launch(stream)
            stream.synchronize()
            times.append((time.perf_counter() - t0) / o.bench_iters * 1e6)

        nnz = len(col)
        print(f"graphs of {o.k} iterations ({iters[0].node_count} nodes) captured in "
              f"{capture_s * 1e3:.2f} ms")
        print(f"cg [salvo-python] on {info['name']}: {o.dims}d grid {o.nx}x{o.ny}x{o.nz}, "
              f"{n} rows, {nnz} nonzeros, k = {o.k}")
        print(f"solve: {iterations} iterations{'' if converged else ' (not converged)'} in "
              f"{solve_s:.3f} s, residual {math.sqrt(fin['rr'] / bb):.3g}, true residual "
              f"{true_rel:.3g}, tolerance {o.tol:.3g}: {'ok' if passed else 'FAILED'}")
        if times:
            us = float(np.median(times))
            nbytes = 12.0 * nnz + 92.0 * n + 4.0
            print(f"time per iteration: {us:.2f} us (median of {o.reps} runs of "
                  f"{o.bench_iters} iterations; fastest {min(times):.2f} us), "
                  f"{nbytes / (us * 1e-6) * 1e-9:.1f} GB/s ({nbytes:.0f} bytes per iteration)")
        del slots  # views of the HOST buffer's mapping
        validation = dev.stats()["validation_messages"]
    if validation:
        print(f"cg: the validation layer reported {validation} messages", file=sys.stderr)
        return 1
    if not passed:
        print(f"cg: true residual {true_rel:.3g} over the tolerance {o.tol:.3g}"
              f"{'' if converged else ' (no convergence)'}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
