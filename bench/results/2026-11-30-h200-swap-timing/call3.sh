#!/bin/bash
# Call 3: two evictions alongside the program in flight (evictions_ahead 2) against one (the
# default), with swap-timing.patch as in call 1: BERT-large, T5-base and GPT-2 124M at 2x, six
# steps; then BERT-large with two, traced (kept), for its forward's timeline.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || { tail -30 /tmp/bn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
mkdir -p /tmp/t $OUT/runs
run() {  # NAME FOOTPRINT SETTING COMMAND...
  local name=$1 footprint=$2 setting=$3; shift 3
  local tag=$name-$(echo "${setting:-default}" | tr ' =' '_-')
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
  for ea in 1 2; do
    run bert-large 20965228544 "DEEPUM_EVICTIONS_AHEAD=$ea" python3 $hf --model bert-large --batch 16 --seq-len 512 --steps 6
    run t5-base 13136560128 "DEEPUM_EVICTIONS_AHEAD=$ea" python3 $hf --model t5-base --batch 16 --seq-len 512 --steps 6
    run gpt2-124m 12073304064 "DEEPUM_EVICTIONS_AHEAD=$ea" python3 examples/pytorch/train_gpt2.py --preset gpt2-124m --batch 8 --steps 6 --warmup-steps 1
  done
  run bert-large 20965228544 "DEEPUM_EVICTIONS_AHEAD=2 DEEPUM_TRACE_FILE=/tmp/t/bl2" python3 $hf --model bert-large --batch 16 --seq-len 512 --steps 6
  python3 bench/phase_breakdown.py /tmp/t/bl2.perfetto.json | tail -4
  xz -T8 -c /tmp/t/bl2.dtrace > $OUT/call3-bert-large-2x-ahead2.dtrace.xz
  bench/results/2026-11-30-h200-swap-timing/swap-summary.sh $OUT/runs/*.swaps.*
} 2>&1 | tee $OUT/call3-runs.txt
tar czf $OUT/call3-runs.tar.gz -C $OUT runs && rm -rf $OUT/runs
echo "done at $(( $(date +%s)-s ))s"
