#!/bin/bash
# Call 7: GPT-2 124M at 2x under 9d6c65f, traced, read by phases.py and step_breakdown.py over its
# last step.
set -uo pipefail
d=bench/results/2026-11-29-h200-both-ways
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || { tail -30 /tmp/bn.log; exit 1; }
free=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits -i 0)
LD_PRELOAD=/tmp/bn/lib/libdeepum.so DEEPUM_MODE=fast DEEPUM_ALLOC_LIMIT="$(( free * 6 / 10 ))MiB" \
  DEEPUM_RESIDENT_LIMIT=6036652032B DEEPUM_TRACE_FILE=/tmp/tr-gpt2 timeout 120 \
  python3 examples/pytorch/train_gpt2.py --preset gpt2-124m --batch 8 --steps 6 --warmup-steps 1 > $OUT/call7-gpt2.txt 2>&1
last=$(grep "^step" $OUT/call7-gpt2.txt | tail -1 | awk '{print $6}')
echo "steps: $(grep '^step' $OUT/call7-gpt2.txt | awk '{printf "%.0f ", $6}')"
python3 $d/phases.py /tmp/tr-gpt2.perfetto.json $last > $OUT/call7-phases-gpt2.txt 2>&1; head -7 $OUT/call7-phases-gpt2.txt
python3 bench/step_breakdown.py /tmp/tr-gpt2.perfetto.json --last-ms $last > $OUT/call7-breakdown.txt 2>&1; tail -12 $OUT/call7-breakdown.txt
