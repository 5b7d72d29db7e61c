#!/bin/bash
# Call 1: where a swap's time goes. The library at HEAD with swap-timing.patch (X_SWAPPROF=FILE:
# each swap of the eviction thread timed on the host and, by events on its stream, on the GPU).
# BERT-large, T5-base, GPT-2 124M and the 1B decoder at 2x (mode fast, the resident limit half the
# footprint the zoo measured), six steps.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || { tail -30 /tmp/bn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
mkdir -p $OUT/runs
run() {  # NAME FOOTPRINT SETTING COMMAND...
  local name=$1 footprint=$2 setting=$3; shift 3
  local tag=$name
  env DEEPUM_ALLOC_LIMIT=60% DEEPUM_MODE=fast DEEPUM_RESIDENT_LIMIT=$(( footprint / 2 ))B \
    DEEPUM_STATS_FILE=$OUT/runs/$tag.stats.json X_SWAPPROF=$OUT/runs/$tag.swaps $setting \
    LD_PRELOAD=/tmp/bn/lib/libdeepum.so timeout 100 "$@" > $OUT/runs/$tag.log 2>&1
  local rc=$?
  local t=$(grep -oE 'time_ms [0-9.]+' $OUT/runs/$tag.log | awk '{printf "%.0f ", $2}')
  local med=$(grep -oE 'time_ms [0-9.]+' $OUT/runs/$tag.log | awk 'NR>=3{print $2}' | sort -n | awk '{a[NR]=$1} END{if(NR) printf "%.1f", (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}')
  local loss=$(grep -oE 'loss [0-9.]+' $OUT/runs/$tag.log | tail -1)
  echo "$name exit $rc at $(( $(date +%s)-s ))s: median of steps 2+ $med ms; steps $t; last $loss"
}
hf=examples/zoo/train_hf.py
{
  run bert-large 20965228544 "" python3 $hf --model bert-large --batch 16 --seq-len 512 --steps 6
  run t5-base 13136560128 "" python3 $hf --model t5-base --batch 16 --seq-len 512 --steps 6
  run gpt2-124m 12073304064 "" python3 examples/pytorch/train_gpt2.py --preset gpt2-124m --batch 8 --steps 6 --warmup-steps 1
  run llama-1b 19566428160 "" python3 $hf --model llama-1b --batch 4 --seq-len 512 --vocab 32000 --steps 6
  bench/results/2026-11-30-h200-swap-timing/swap-summary.sh $OUT/runs/*.swaps.*
} 2>&1 | tee $OUT/call1-runs.txt
tar czf $OUT/call1-runs.tar.gz -C $OUT runs && rm -rf $OUT/runs
echo "done at $(( $(date +%s)-s ))s"
