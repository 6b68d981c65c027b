#!/bin/bash
# The README latency table's run (carry .gl and .devrun; .devrun/after holds this tree's
# latency-probe, salvo-bench, vk-fence-floor and vk-bind-floor, .devrun/before an earlier build's
# latency-probe).
# First latency-probe, each latency alone in a process, this build and the earlier one in turn,
# with the raw-Vulkan trips of examples/raw_floor.h (two rounds); then salvo-bench (HEAD), CUDA
# (examples/cuda_graphs.cu built here), the raw-Vulkan floor (on the queue family salvo's
# streams use) and the raw binding floor (vk-bind-floor) in turn, up to three rounds within BUDGET seconds.
# Everything is pinned to one CPU: CPU=n names it; unset, each CPU in turn runs vk-bind-floor (raw
# Vulkan, no salvo) and the one that recorded a dispatch with its buffer pushed fastest is taken
# (on a shared host a CPU whose core is busy elsewhere records at half speed), again before each
# round of salvo-bench after the first (the quietest CPU moves); cpu_pick.txt says.
# QUIET=ns (optional): where the first pick finds no CPU recording that dispatch in ns or less
# (about 335 on a quiet H100, 363 on the quietest H200 seen; 400-760 on noisy hosts), the host
# is taken as noisy and the run stops there (exit 3), before it spends the machine's time.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi -L > $OUT/env.txt 2>&1; nproc >> $OUT/env.txt
# The host: its CPU, its clock source and its load (a slower CPU records slower; a clock read
# that is a system call costs every timed loop; a loaded host is noisy).
{ lscpu | grep -E 'Model name|^CPU\(s\)|MHz|Hypervisor|NUMA node\(s\)'
  echo "clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
  echo "load: $(cat /proc/loadavg)"; } >> $OUT/env.txt 2>&1
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
$NVCC -O2 -o /tmp/cuda-graphs examples/cuda_graphs.cu > $OUT/nvcc.txt 2>&1 || echo "nvcc failed" >> $OUT/env.txt
# pick: the CPU that records a raw dispatch fastest now (each CPU in turn runs vk-bind-floor 2000).
pick() {
  echo "--- pick at t=$((SECONDS-start))" >> $OUT/cpu_pick.txt
  for c in $(seq 0 $(($(nproc) - 1))); do
    ns=$(taskset -c $c timeout 20 .devrun/after/vk-bind-floor 2000 2>/dev/null | awk '$1 == "push" {print $2}')
    echo "cpu $c: ${ns:-failed} ns a dispatch recorded, a buffer pushed" >> $OUT/cpu_pick.txt
  done
  P=$(awk '$1 == "cpu" && $3 != "failed" {print $3, $2}' $OUT/cpu_pick.txt | tail -$(nproc) | sort -n | head -1 | cut -d' ' -f2 | tr -d :)
  CPU=${P:-3}
  echo "pinned to CPU $CPU" | tee -a $OUT/cpu_pick.txt >> $OUT/env.txt
}
start=$SECONDS
FIXED=$CPU
[ -z "$FIXED" ] && pick
if [ -z "$FIXED" ] && [ -n "$QUIET" ]; then
  best=$(awk '$1 == "cpu" && $3 != "failed" {print $3}' $OUT/cpu_pick.txt | sort -n | head -1)
  if [ -z "$best" ] || awk -v b="$best" -v q="$QUIET" 'BEGIN {exit !(b > q)}'; then
    echo "a noisy host: the quickest CPU recorded a dispatch in ${best:-no} ns, over QUIET=$QUIET; stopped" |
      tee -a $OUT/cpu_pick.txt
    exit 3
  fi
fi
[ -n "$FIXED" ] && echo "pinned to CPU $CPU" | tee -a $OUT/cpu_pick.txt >> $OUT/env.txt
for i in 1 2; do
  for s in roundtrip repeat graph1 gate update-idle replay-busy replay-idle independent; do
    for w in after before; do
      [ -x .devrun/$w/latency-probe ] || continue
      .devrun/$w/latency-probe --help | grep -qw $s || continue
      n=; case $s in update*|replay*) n=100 ;; esac
      echo -n "$w " >> $OUT/probe.txt
      taskset -c $CPU timeout 30 .devrun/$w/latency-probe $s $n >> $OUT/probe.txt 2>&1
    done
  done
  for s in empty replay-busy-empty raw raw-bind raw-bind-salvo raw-gate-bind; do
    echo -n "after " >> $OUT/probe.txt
    taskset -c $CPU timeout 30 .devrun/after/latency-probe $s >> $OUT/probe.txt 2>&1
  done
done
echo "probes t=$((SECONDS-start))" >> $OUT/probe.txt
for i in 1 2 3; do
  [ $((SECONDS-start)) -gt ${BUDGET:-300} ] && break
  [ -z "$FIXED" ] && [ $i -gt 1 ] && pick
  echo "=== salvo run $i (CPU $CPU)" >> $OUT/bench.txt
  taskset -c $CPU timeout 90 .devrun/after/salvo-bench --repeats 5 >> $OUT/bench.txt 2>&1
  echo "=== cuda run $i" >> $OUT/cuda.txt
  [ -x /tmp/cuda-graphs ] && taskset -c $CPU timeout 120 /tmp/cuda-graphs >> $OUT/cuda.txt 2>&1
  if [ $i -le 2 ]; then
    echo "=== floor run $i" >> $OUT/floor.txt
    FLOOR_COMPUTE_ONLY=1 taskset -c $CPU timeout 60 .devrun/after/vk-fence-floor >> $OUT/floor.txt 2>&1
  fi
  echo "=== bind floor run $i" >> $OUT/floor.txt
  [ -x .devrun/after/vk-bind-floor ] && taskset -c $CPU timeout 60 .devrun/after/vk-bind-floor >> $OUT/floor.txt 2>&1
  echo "t=$((SECONDS-start))" >> $OUT/bench.txt
done
echo "total $((SECONDS-start)) s" >> $OUT/bench.txt
