#!/bin/bash
# The README latency table's run (carry .gl and .devrun; .devrun/after holds the builds): salvo-bench (HEAD), CUDA (examples/cuda_graphs.cu built here),
# the raw-Vulkan floor (on the queue family salvo's streams use), alternating, pinned to CPU 3;
# latency-probe's round trips (and an earlier build's, in .devrun/before); then C beside C++ per launch.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi -L > $OUT/env.txt 2>&1; nproc >> $OUT/env.txt
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
$NVCC --version >> $OUT/env.txt 2>&1
$NVCC -O2 -o /tmp/cuda-graphs examples/cuda_graphs.cu > $OUT/nvcc.txt 2>&1 || echo "nvcc failed" >> $OUT/env.txt
start=$SECONDS
for i in 1 2 3 4; do
  [ $((SECONDS-start)) -gt ${BUDGET:-200} ] && break
  echo "=== salvo run $i" >> $OUT/bench.txt
  taskset -c 3 .devrun/after/salvo-bench --repeats 5 --json /tmp/s.$i.json >> $OUT/bench.txt 2>&1
  cat /tmp/s.$i.json >> $OUT/bench.jsonl; echo >> $OUT/bench.jsonl
  echo "=== cuda run $i" >> $OUT/cuda.txt
  [ -x /tmp/cuda-graphs ] && taskset -c 3 timeout 120 /tmp/cuda-graphs >> $OUT/cuda.txt 2>&1
  echo "=== floor run $i" >> $OUT/floor.txt
  FLOOR_COMPUTE_ONLY=1 taskset -c 3 timeout 60 .devrun/after/vk-fence-floor >> $OUT/floor.txt 2>&1
done
# Each latency alone in a process (latency-probe), beside raw-Vulkan trips
# of the empty kernel and of the same launch; with .devrun/before holding
# an earlier build, its round trips in turn with this one's.
for i in 1 2 3; do
  for s in roundtrip graph1 empty raw raw-bind raw-bind-salvo; do
    for w in after before; do
      [ -x .devrun/$w/latency-probe ] || continue
      [ $w = before ] && case $s in raw*|empty) continue ;; esac
      echo -n "$w " >> $OUT/probe.txt
      taskset -c 3 timeout 60 .devrun/$w/latency-probe $s >> $OUT/probe.txt 2>&1
    done
  done
done
taskset -c 3 timeout 120 .devrun/after/salvo-bench-cpp --repeats 11 > $OUT/cpp.txt 2>&1
echo "total $((SECONDS-start)) s" >> $OUT/bench.txt
