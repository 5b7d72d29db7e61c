#!/bin/bash
# GPT-2 350M at 2x stopped after its first step in call 2 (a build with the launch probe). Clean
# builds of the change (/tmp/bn) and of 3800262 (/tmp/bb), `ctest -L gpu` on the change, then GPT-2
# 350M at 2x under each directly (the zoo's settings: resident limit half the native footprint of
# call 2, allocation limit 60%), with every thread's stack taken by gdb when no step comes for 25 s.
# From the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
which gdb py-spy 2>&1 | head -2
s=$(date +%s)
AB_REBUILD=1 bench/ab_builds.sh bench/results/2026-12-01-h200-repeat-check/change.patch all || exit 1
echo "builds $(( $(date +%s)-s ))s"
(cd /tmp/bn && NCCL_NVLS_ENABLE=0 timeout 170 ctest -L gpu -j4 --output-on-failure) > $OUT/call3-ctest-gpu.txt 2>&1
echo "ctest exit $? at $(( $(date +%s)-s ))s"; tail -3 $OUT/call3-ctest-gpu.txt
for b in bn bb; do
  log=$OUT/call3-gpt2-350m-2x-$b.log
  env DEEPUM_MODE=fast DEEPUM_RESIDENT_LIMIT=11345592320B DEEPUM_ALLOC_LIMIT=60% DEEPUM_STATS_FILE=$OUT/call3-gpt2-350m-2x-$b.stats.json \
    LD_PRELOAD=/tmp/$b/lib/libdeepum.so timeout 140 python3 examples/pytorch/train_gpt2.py --preset gpt2-350m --batch 8 --steps 5 \
    --warmup-steps 1 > $log 2>&1 &
  pid=$!
  last=$(date +%s); steps=0; dumped=0
  while kill -0 $pid 2>/dev/null; do
    sleep 1
    n=$(grep -c "^step" $log)
    if (( n != steps )); then steps=$n; last=$(date +%s); fi
    if (( steps >= 1 && $(date +%s) - last > 25 && dumped < 2 )); then
      py=$(pgrep -f "train_gpt2.py --preset gpt2-350m" | head -1)
      echo "== no step for 25 s after $steps steps: stacks of $py (dump $dumped)" >> $OUT/call3-stacks-$b.txt
      timeout 60 gdb -p $py -batch -ex "thread apply all bt 30" >> $OUT/call3-stacks-$b.txt 2>&1
      dumped=$((dumped + 1)); last=$(date +%s)
    fi
  done
  wait $pid; echo "$b exit $? at $(( $(date +%s)-s ))s: $(grep '^step' $log | awk '{printf "%s ", $6}')"
done
