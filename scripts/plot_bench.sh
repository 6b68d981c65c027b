#!/usr/bin/env bash
# Plot us/launch against batch size from salvo-bench JSON files.
#
#   scripts/plot_bench.sh OUT.png LABEL=bench.json [LABEL=bench.json ...] [--ref LABEL=us ...]
#
# Each LABEL=bench.json adds two lines (dependent and independent chains);
# each --ref LABEL=us adds a horizontal line (a yardstick such as raw
# Vulkan measured in the same run). Needs python3 and gnuplot (Debian:
# gnuplot-nox).
set -euo pipefail
out=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
plots=()
refs=0
mode=series
i=0
for arg in "$@"; do
    if [ "$arg" = --ref ]; then mode=ref; continue; fi
    label=${arg%%=*}
    value=${arg#*=}
    if [ $mode = ref ]; then
        plots+=("$value title '$label' with lines dashtype 2 linewidth 2")
        refs=$((refs + 1))
        continue
    fi
    python3 - "$value" > "$tmp/$i.dat" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["metrics"]
for b in (1, 8, 32, 128, 512):
    d = m.get(f"dependent_batch_{b}_us_per_launch", {}).get("value")
    n = m.get(f"independent_batch_{b}_us_per_launch", {}).get("value")
    if d is not None and n is not None:
        print(b, d, n)
PY
    plots+=("'$tmp/$i.dat' using 1:2 title '$label, dependent' with linespoints linewidth 2")
    plots+=("'$tmp/$i.dat' using 1:3 title '$label, independent' with linespoints linewidth 2")
    i=$((i + 1))
done
joined=$(printf '%s, ' "${plots[@]}")
gnuplot <<GP
set terminal pngcairo size 900,560 font "sans,11"
set output '$out'
set logscale xy
set xlabel 'launches per batch (SALVO_BATCH)'
set ylabel 'microseconds per launch (wall)'
set xtics (1, 8, 32, 128, 512)
set grid
set termoption noenhanced
set key top right
set title 'salvo: cost per launch against batch size'
plot ${joined%, }
GP
echo "wrote $out"
