#!/bin/bash
# Where a process runs, and whether that moves salvo-bench's host-bound rows
# (carry .gl and .devrun; .devrun/after holds salvo-bench): the machine's
# CPUs, NUMA nodes and the GPU's place among them, then salvo-bench pinned
# to each CPU of CPUS in turn, ROUNDS rounds. Output under $OUT.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
{
  lscpu
  for n in /sys/devices/system/node/node*; do echo "$n: $(cat $n/cpulist)"; done
  nvidia-smi topo -m
  cat /proc/cpuinfo | grep -m3 -E "model name|cpu MHz"
} > $OUT/placement_env.txt 2>&1
for r in $(seq 1 ${ROUNDS:-2}); do
  for c in ${CPUS:-3 0 8 15}; do
    echo "=== cpu $c round $r" >> $OUT/placement.txt
    taskset -c $c timeout 60 .devrun/after/salvo-bench --repeats 3 2>&1 |
      grep -E "^batch 128 \(default\)|^host ns|^launch \+ synchronize|graph launch \+ synchronize|^saxpy" >> $OUT/placement.txt
  done
done
