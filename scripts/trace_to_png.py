#!/usr/bin/env python3
"""Render a salvo trace as a timeline PNG, through gnuplot.

    scripts/trace_to_png.py TRACE.json OUT.png [--from MS] [--to MS] [--title TEXT]
                            [--width PX]

TRACE.json is what salvo_trace_start() or SALVO_TRACE=TRACE.json writes.
One row per stream on the host (each launch call, and each batch's submit)
and one row for the GPU (each launch as the device ran it, inside the
outline of its batch); launches are colored by kernel. --from and --to
choose a window, in milliseconds since the trace's first event. Needs
python3 and gnuplot with the pngcairo terminal (Debian: gnuplot-nox);
nothing else.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HOST_PID, GPU_PID = 1, 2
# Distinct, readable colors; a kernel keeps its color for the whole picture.
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
           "#e377c2", "#bcbd22", "#17becf", "#393b79", "#637939", "#843c39"]
COPY_COLOR = "#7f7f7f"
SUBMIT_COLOR = "#303030"
BATCH_COLOR = "#909090"


def gp_string(text):
    """A gnuplot single-quoted string."""
    return "'" + str(text).replace("'", "''") + "'"


def load(path):
    with open(path, encoding="utf-8") as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    threads, complete = {}, []
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
        elif e.get("ph") == "X":
            complete.append(e)
    return threads, complete


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("out")
    ap.add_argument("--from", dest="start", type=float, default=None, metavar="MS")
    ap.add_argument("--to", dest="end", type=float, default=None, metavar="MS")
    ap.add_argument("--title", default=None)
    ap.add_argument("--width", type=int, default=1200, metavar="PX")
    args = ap.parse_args()
    if not shutil.which("gnuplot"):
        sys.exit("trace_to_png: gnuplot not found (Debian: apt-get install gnuplot-nox)")

    threads, events = load(args.trace)
    if not events:
        sys.exit(f"trace_to_png: {args.trace} holds no events")
    origin = min(e["ts"] for e in events)  # microseconds
    lo = args.start if args.start is not None else 0.0
    hi = args.end if args.end is not None else max(e["ts"] + e.get("dur", 0) - origin
                                                    for e in events) / 1000.0
    if hi <= lo:
        sys.exit("trace_to_png: empty window (--to must be past --from)")

    def in_window(e):
        s = (e["ts"] - origin) / 1000.0
        return s + e.get("dur", 0) / 1000.0 >= lo and s <= hi

    shown = [e for e in events if in_window(e)]
    # Rows, bottom to top: the GPU, then the host's streams in order.
    host_tids = sorted({e["tid"] for e in events if e["pid"] == HOST_PID})
    rows = ["GPU"] + ["host, " + threads.get((HOST_PID, t), f"stream {t}") for t in host_tids]
    row_of = {t: i + 1 for i, t in enumerate(host_tids)}

    kernels = []
    for e in shown:
        if e.get("cat") == "launch" and e["name"] not in kernels:
            kernels.append(e["name"])
    color = {}
    for k in kernels:
        color[k] = COPY_COLOR if k == "(copy)" else PALETTE[len(
            [c for c in color if c != "(copy)"]) % len(PALETTE)]

    # A box at least a pixel and a half wide, so short events still show.
    min_half = (hi - lo) / args.width * 0.75
    layers = {"batch": [], "launch": [], "submit": []}
    for e in shown:
        cat = e.get("cat")
        if cat not in layers:
            continue
        start = (e["ts"] - origin) / 1000.0
        dur = max(e.get("dur", 0), 0) / 1000.0
        half = max(dur / 2.0, min_half)
        if e["pid"] == GPU_PID:
            y, h = 0.0, 0.42 if cat == "batch" else 0.32
        else:
            y, h = float(row_of[e["tid"]]), 0.32 if cat == "launch" else 0.18
        rgb = int(color.get(e["name"], SUBMIT_COLOR)[1:], 16)
        layers[cat].append(f"{start + dur / 2.0:.6f} {y} {half:.6f} {h} {rgb}\n")

    title = args.title or "salvo trace: " + os.path.basename(args.trace)
    height = 170 + 70 * len(rows)
    with tempfile.TemporaryDirectory() as tmp:
        plots = []
        specs = [("batch", "lc rgb " + gp_string(BATCH_COLOR) + " fs empty border lc rgb "
                  + gp_string(BATCH_COLOR), "GPU batch"),
                 ("launch", "fs solid 1.0 noborder lc rgb variable", None),
                 ("submit", "fs solid 1.0 noborder lc rgb " + gp_string(SUBMIT_COLOR), "submit")]
        for name, style, key in specs:
            if not layers[name]:
                continue
            data = os.path.join(tmp, name + ".dat")
            with open(data, "w") as f:
                f.writelines(layers[name])
            using = "1:2:3:4:5" if "variable" in style else "1:2:3:4"
            plots.append(f"{gp_string(data)} using {using} with boxxyerror {style} "
                         + (f"title {gp_string(key)}" if key else "notitle"))
        for k in kernels:
            plots.append(f"NaN with boxes fs solid 1.0 noborder lc rgb {gp_string(color[k])} "
                         f"title {gp_string(k)}")
        ytics = ", ".join(f"{gp_string(r)} {i}" for i, r in enumerate(rows))
        script = f"""
set terminal pngcairo size {args.width},{height} font "sans,10"
set output {gp_string(args.out)}
set termoption noenhanced
set title {gp_string(title)}
set xlabel 'milliseconds since the first event'
set xrange [{lo}:{hi}]
set yrange [-0.6:{len(rows) - 0.4}]
set ytics ({ytics})
set grid xtics
set key outside below horizontal
plot {", ".join(plots)}
"""
        gp = os.path.join(tmp, "plot.gp")
        with open(gp, "w") as f:
            f.write(script)
        subprocess.run(["gnuplot", gp], check=True)
    print(f"wrote {args.out}: {len(shown)} events, {len(kernels)} kernels, rows: "
          + ", ".join(rows))


if __name__ == "__main__":
    main()
