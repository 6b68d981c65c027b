#!/usr/bin/env bash
# The conjugate-gradient figures of README "Real work", in one run on a
# machine with NVIDIA GPUs (written for an H200: -arch=sm_90):
#
#     OUT=out examples/cg/device_run.sh
#
#  1. a Release build of salvo's cg (and cg_mpi where CMake finds MPI) in
#     build-cg-bench; cuda_cg.cu compiled with nvcc -O3 -arch=sm_90;
#  2. cg (salvo) and cuda_cg side by side at about 10^4, 10^5, 10^6 and
#     10^7 rows (3D 7-point Poisson), the same iteration counts, one after
#     the other at each size, pinned to one core (taskset -c 3);
#  3. where cg_mpi was built: 1 and 2 ranks at 10^6 and 10^7 rows (2 ranks
#     on 2 GPUs where there are two; on one they share it, which says
#     nothing about the speed-up);
#  4. every run appends a JSON line to $OUT/cg.json; scripts/plot_cg.py
#     draws $OUT/cg.svg (salvo against CUDA) and $OUT/cg_mpi.svg.
#
# CG_SIZES and CG_MPI_SIZES replace the lists of sizes (a quick check on
# another machine). Everything printed also goes to $OUT/cg.log. About 2 to 4 minutes;
# each run is cut at 150 s. Needs cmake, a C compiler, glslangValidator
# (Debian: glslang-tools), the Vulkan and volk headers (libvulkan-dev,
# libvulkan-volk-dev), nvcc, python3; optionally Open MPI (libopenmpi-dev,
# openmpi-bin). Runtime GLSL and SPIR-V validation are configured off:
# the example needs neither, so glslang-dev and spirv-tools are not needed.
# Exit status: 0 when every run passed its residual check.
set -uo pipefail
cd "$(dirname "$0")/../.."

OUT=${OUT:-./out}
# Sizes, overridable for a quick try elsewhere (CG_SIZES="10000").
SIZES=${CG_SIZES:-10000 100000 1000000 10000000}
MPI_SIZES=${CG_MPI_SIZES:-1000000 10000000}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
BUILD=build-cg-bench
LOG="$OUT/cg.log"
JSON="$OUT/cg.json"
: >"$LOG"
failures=0

say() { echo "$*" | tee -a "$LOG"; }
# run NAME COMMAND...: run with a time limit, log, count a failure.
run() {
    local name=$1
    shift
    say "--- $name: $*"
    timeout 150 "$@" 2>&1 | tee -a "$LOG"
    local rc=${PIPESTATUS[0]}
    if [ "$rc" -ne 0 ]; then
        say "--- $name: FAILED (exit $rc)"
        failures=$((failures + 1))
    fi
}

say "=== cg device run, $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
command -v nvidia-smi >/dev/null && nvidia-smi -L 2>&1 | tee -a "$LOG"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
gpus=${gpus:-0}

# 1. Build.
say "=== build"
unset SALVO_VALIDATION SALVO_DEVICE SALVO_BATCH SALVO_TRACE SALVO_FAULT
if ! cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DSALVO_BUILD_TESTS=OFF \
        -DSALVO_BUILD_EXAMPLES=ON -DSALVO_INSTALL=OFF -DSALVO_GLSL=OFF \
        -DSALVO_SPIRV_VALIDATE=OFF -DSALVO_CG_CUDA=OFF >>"$LOG" 2>&1; then
    say "cmake configure failed; see $LOG"
    tail -n 30 "$LOG"
    exit 1
fi
targets=(cg)
# CMake makes this folder only for targets it defines: cg_mpi exists where MPI was found.
if [ -d "$BUILD/examples/cg/CMakeFiles/cg_mpi.dir" ]; then
    targets+=(cg_mpi)
else
    say "no MPI found by CMake: cg_mpi not built"
fi
if ! cmake --build "$BUILD" --parallel "$(nproc)" --target "${targets[@]}" >>"$LOG" 2>&1; then
    say "build failed; see $LOG"
    tail -n 30 "$LOG"
    exit 1
fi
if ! nvcc -O3 -arch=sm_90 -o "$BUILD/cuda_cg" examples/cg/cuda_cg.cu >>"$LOG" 2>&1; then
    say "nvcc failed; see $LOG"
    tail -n 30 "$LOG"
    exit 1
fi

# 2. salvo and CUDA side by side. Iterations per timed run: enough for
# tens of milliseconds at each size; 7 runs, the median.
say "=== single GPU: salvo (cg) and CUDA (cuda_cg)"
pin=()
command -v taskset >/dev/null && [ "$(nproc)" -gt 3 ] && pin=(taskset -c 3)
declare -A bench=([10000]=2000 [100000]=1000 [1000000]=500 [10000000]=200)
for rows in $SIZES; do
    args=(--rows "$rows" --k 10 --bench-iters "${bench[$rows]:-100}" --reps 7 --json "$JSON")
    run "salvo $rows" "${pin[@]}" "$BUILD/cg" "${args[@]}"
    run "cuda $rows" "${pin[@]}" "$BUILD/cuda_cg" "${args[@]}"
done

# 3. MPI: 1 and 2 ranks, one GPU each.
if [ -x "$BUILD/cg_mpi" ] && command -v mpirun >/dev/null; then
    say "=== MPI (cg_mpi), $gpus GPU(s)"
    mpi=(mpirun -np)
    extra=()
    if mpirun --version 2>&1 | grep -q "Open MPI"; then
        extra=(--allow-run-as-root --bind-to core --map-by core)
    fi
    for rows in $MPI_SIZES; do
        for ranks in 1 2; do
            run "mpi $ranks ranks $rows" "${mpi[@]}" "$ranks" "${extra[@]}" "$BUILD/cg_mpi" \
                --rows "$rows" --bench-iters "${bench[$rows]:-100}" --reps 5 --json "$JSON"
        done
    done
else
    say "=== MPI: skipped (no cg_mpi or no mpirun)"
fi

# 4. Plots.
say "=== plots"
python3 scripts/plot_cg.py "$OUT/cg.svg" "$JSON" --impl salvo,cuda 2>&1 | tee -a "$LOG"
grep -q '"salvo-mpi"' "$JSON" 2>/dev/null &&
    python3 scripts/plot_cg.py "$OUT/cg_mpi.svg" "$JSON" --impl salvo-mpi \
        --title "Conjugate gradient across MPI ranks: time per iteration" 2>&1 | tee -a "$LOG"

say "=== done: $failures failed run(s); $JSON, $OUT/cg.svg, $LOG"
[ "$failures" -eq 0 ]
