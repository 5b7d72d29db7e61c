#!/bin/bash
# Call 4: half the batch (X_BATCHDIV=2, batch-div.patch) with two evictions alongside the program in
# flight (evictions_ahead 2): the room kept ahead as today's, the next eviction handed over before
# the one in flight ends. Against the default, with swap-timing.patch as in call 1: BERT-large,
# T5-base, GPT-2 124M, ResNet-152 and the 1B decoder at 2x, six steps.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || { tail -30 /tmp/bn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
mkdir -p $OUT/runs
run() {  # NAME FOOTPRINT SETTING COMMAND...
  local name=$1 footprint=$2 setting=$3; shift 3
  local tag=$name-$(echo "${setting:-default}" | tr ' =/' '_--')
  env DEEPUM_ALLOC_LIMIT=60% DEEPUM_MODE=fast DEEPUM_RESIDENT_LIMIT=$(( footprint / 2 ))B \
    DEEPUM_STATS_FILE=$OUT/runs/$tag.stats.json X_SWAPPROF=$OUT/runs/$tag.swaps $setting \
    LD_PRELOAD=/tmp/bn/lib/libdeepum.so timeout 120 "$@" > $OUT/runs/$tag.log 2>&1
  local rc=$?
  local t=$(grep -oE 'time_ms [0-9.]+' $OUT/runs/$tag.log | awk '{printf "%.0f ", $2}')
  local med=$(grep -oE 'time_ms [0-9.]+' $OUT/runs/$tag.log | awk 'NR>=3{print $2}' | sort -n | awk '{a[NR]=$1} END{if(NR) printf "%.1f", (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}')
  local loss=$(grep -oE 'loss [0-9.]+' $OUT/runs/$tag.log | tail -1)
  echo "$name ${setting:-default} exit $rc at $(( $(date +%s)-s ))s: median of steps 2+ $med ms; steps $t; last $loss"
}
hf=examples/zoo/train_hf.py
{
  for setting in "X_BATCHDIV=1" "X_BATCHDIV=2 DEEPUM_EVICTIONS_AHEAD=2"; do
    run bert-large 20965228544 "$setting" python3 $hf --model bert-large --batch 16 --seq-len 512 --steps 6
    run t5-base 13136560128 "$setting" python3 $hf --model t5-base --batch 16 --seq-len 512 --steps 6
    run gpt2-124m 12073304064 "$setting" python3 examples/pytorch/train_gpt2.py --preset gpt2-124m --batch 8 --steps 6 --warmup-steps 1
    run resnet152 6675234816 "$setting" python3 examples/pytorch/train_resnet.py --model resnet152 --batch 32 --steps 6
    run llama-1b 19566428160 "$setting" python3 $hf --model llama-1b --batch 4 --seq-len 512 --vocab 32000 --steps 6
  done
  bench/results/2026-11-30-h200-swap-timing/swap-summary.sh $OUT/runs/*.swaps.*
} 2>&1 | tee $OUT/call4-runs.txt
tar czf $OUT/call4-runs.tar.gz -C $OUT runs && rm -rf $OUT/runs
echo "done at $(( $(date +%s)-s ))s"
