#!/bin/bash
# salvo-bench of two builds (.devrun/before, .devrun/after), or of those BUILDS names
# (.devrun/NAME each), in turn, each run pinned to CPU 3, then the raw-Vulkan floor of
# .devrun/after; on the H200 machine, .gl and .devrun carried.
# BUDGET: seconds to stop starting runs after; REPEATS: salvo-bench --repeats.
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi -L > $OUT/env.txt 2>&1; nproc >> $OUT/env.txt
start=$SECONDS
for i in 1 2 3 4 5 6 7 8; do
  for v in ${BUILDS:-before after}; do
    [ $((SECONDS-start)) -gt ${BUDGET:-480} ] && break 2
    echo "=== $v run $i ($((SECONDS-start)) s)" >> $OUT/bench.txt
    taskset -c 3 .devrun/$v/salvo-bench --repeats ${REPEATS:-5} --json /tmp/$v.$i.json >> $OUT/bench.txt 2>&1
    cat /tmp/$v.$i.json >> $OUT/bench.jsonl; echo >> $OUT/bench.jsonl
  done
done
echo "=== floor" >> $OUT/bench.txt
[ -x .devrun/after/vk-fence-floor ] && taskset -c 3 timeout 60 .devrun/after/vk-fence-floor >> $OUT/bench.txt 2>&1
echo "total $((SECONDS-start)) s" >> $OUT/bench.txt
