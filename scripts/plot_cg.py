#!/usr/bin/env python3
"""Plot conjugate-gradient time per iteration against matrix rows, log-log.

    scripts/plot_cg.py OUT.svg cg.json [more.json ...] [--title TEXT] [--impl LIST]

Reads the JSON lines that cg, cuda_cg and cg_mpi append with --json (one
object per line; other lines are ignored) and draws one line per
implementation (and rank count, for cg_mpi): "salvo", "cuda",
"salvo-mpi x2", ... Where a size was run more than once, the median of its
runs is plotted. --impl salvo,cuda keeps only those implementations
(the "impl" field: salvo, cuda, salvo-mpi). The SVG is written by hand with the standard library, so
the script runs anywhere python3 does (no matplotlib).
"""
import json
import math
import statistics
import sys
from xml.sax.saxutils import escape

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"]
W, H = 760, 500
LEFT, RIGHT, TOP, BOTTOM = 80, 190, 50, 60


def load(paths, impls=None):
    series = {}  # label -> {rows: [us, ...]}
    devices = set()
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                us = r.get("us_per_iter", -1)
                if us is None or us <= 0:
                    continue
                label = r.get("impl", "?")
                if impls and label not in impls:
                    continue
                if r.get("ranks", 1) > 1 or label == "salvo-mpi":
                    label += " x%d" % r.get("ranks", 1)
                series.setdefault(label, {}).setdefault(int(r["rows"]), []).append(float(us))
                if r.get("device"):
                    devices.add(r["device"])
    return {k: sorted((rows, statistics.median(v)) for rows, v in s.items())
            for k, s in series.items()}, sorted(devices)


def decades(lo, hi):
    """Powers of ten covering [lo, hi] (at least one decade)."""
    a = math.floor(math.log10(lo))
    b = math.ceil(math.log10(hi))
    if b == a:
        b += 1
    return a, b


def plot(series, devices, title):
    xs = [x for pts in series.values() for x, _ in pts]
    ys = [y for pts in series.values() for _, y in pts]
    xa, xb = decades(min(xs), max(xs))
    ya, yb = decades(min(ys), max(ys))
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def px(x):
        return LEFT + (math.log10(x) - xa) / (xb - xa) * pw

    def py(y):
        return TOP + ph - (math.log10(y) - ya) / (yb - ya) * ph

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">' % (W, H, W, H),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="24" font-size="15" font-weight="bold">%s</text>'
           % (LEFT, escape(title))]
    if devices:
        out.append('<text x="%d" y="40" fill="#555">%s</text>'
                   % (LEFT, escape(", ".join(devices))))
    # Grid: decades labelled, 2..9 faint.
    for e in range(xa, xb + 1):
        for m in range(1, 10):
            x = m * 10.0 ** e
            if e == xb and m > 1:
                break
            X = px(x)
            out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>'
                       % (X, TOP, X, TOP + ph, "#bbb" if m == 1 else "#eee"))
            if m == 1:
                out.append('<text x="%.1f" y="%d" text-anchor="middle">10<tspan dy="-6" '
                           'font-size="9">%d</tspan></text>' % (X, TOP + ph + 18, e))
    for e in range(ya, yb + 1):
        for m in range(1, 10):
            y = m * 10.0 ** e
            if e == yb and m > 1:
                break
            Y = py(y)
            out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s"/>'
                       % (LEFT, Y, LEFT + pw, Y, "#bbb" if m == 1 else "#eee"))
            if m == 1:
                label = ("%g" % y) if -3 <= e <= 6 else "1e%d" % e
                out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>'
                           % (LEFT - 6, Y + 4, label))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>'
               % (LEFT, TOP, pw, ph))
    out.append('<text x="%d" y="%d" text-anchor="middle">matrix rows</text>'
               % (LEFT + pw / 2, H - 16))
    out.append('<text x="18" y="%d" text-anchor="middle" transform="rotate(-90 18 %d)">'
               'time per CG iteration (us)</text>' % (TOP + ph / 2, TOP + ph / 2))
    # Lines, points and the legend.
    for i, label in enumerate(sorted(series)):
        colour = COLOURS[i % len(COLOURS)]
        pts = series[label]
        path = " ".join("%s%.1f,%.1f" % ("M" if j == 0 else "L", px(x), py(y))
                        for j, (x, y) in enumerate(pts))
        out.append('<path d="%s" fill="none" stroke="%s" stroke-width="2"/>' % (path, colour))
        for x, y in pts:
            out.append('<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s">'
                       '<title>%s: %d rows, %.2f us</title></circle>'
                       % (px(x), py(y), colour, escape(label), x, y))
        ly = TOP + 14 + 20 * i
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>'
                   % (LEFT + pw + 14, ly, LEFT + pw + 40, ly, colour))
        out.append('<text x="%d" y="%d">%s</text>' % (LEFT + pw + 46, ly + 4, escape(label)))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv):
    title = "Conjugate gradient, Poisson matrix: time per iteration"
    impls = None
    args = []
    i = 1
    while i < len(argv):
        if argv[i] == "--title" and i + 1 < len(argv):
            title = argv[i + 1]
            i += 2
            continue
        if argv[i] == "--impl" and i + 1 < len(argv):
            impls = set(argv[i + 1].split(","))
            i += 2
            continue
        args.append(argv[i])
        i += 1
    if len(args) < 2:
        sys.stderr.write(__doc__)
        return 2
    series, devices = load(args[1:], impls)
    if not series:
        sys.stderr.write("plot_cg.py: no timed runs in %s\n" % ", ".join(args[1:]))
        return 1
    with open(args[0], "w", encoding="utf-8") as f:
        f.write(plot(series, devices, title))
    for label in sorted(series):
        print("%-14s %s" % (label, "  ".join("%d: %.2f us" % p for p in series[label])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
