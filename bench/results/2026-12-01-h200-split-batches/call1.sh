#!/bin/bash
# Batches split between the evictions in flight (split-batches.patch: the batch is eviction_headroom
# over evictions_ahead, so the room held free stays one batch): the 1B decoder at 2x, ten steps
# with evictions_ahead 1 (main's behaviour: the patch divides by one) and 2 (two evictions of half a
# batch in flight). The resident limit is half the native footprint the zoo measured (19566428160 B).
# Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || { tail -30 /tmp/bn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
hf=(python3 examples/zoo/train_hf.py --model llama-1b --batch 4 --seq-len 512 --vocab 32000 --steps 10)
for a in 1 2; do
  env DEEPUM_ALLOC_LIMIT=60% DEEPUM_MODE=fast DEEPUM_RESIDENT_LIMIT=$(( 19566428160 / 2 ))B DEEPUM_EVICTIONS_AHEAD=$a \
    DEEPUM_STATS_FILE=$OUT/ahead$a.stats.json LD_PRELOAD=/tmp/bn/lib/libdeepum.so timeout 80 "${hf[@]}" > $OUT/ahead$a.log 2>&1
  echo "ahead $a exit $? at $(( $(date +%s)-s ))s: $(grep -oE 'time_ms [0-9.]+' $OUT/ahead$a.log | awk '{printf "%.0f ", $2}')"
done
