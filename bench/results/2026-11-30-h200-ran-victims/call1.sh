#!/bin/bash
# Call 1: room-ahead.patch and done-victims.patch of ../2026-11-30-h200-room-ahead together
# (experiments.patch, the working tree, its other switches unset). X_NOEND=1: the evictions' ends not told (the library as
# ad2f967); unset: told, so the next eviction ahead starts once one ends; X_DONE=D: also predicted
# victims named before the launch stream's latest completed progress marker, and not needed within
# the learned period / D operations, go first (D 100000: any). The 1B decoder, BERT-large and
# T5-base at 2x (mode fast, the resident limit half the footprint the zoo measured), seven steps.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || { tail -30 /tmp/bn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
mkdir -p $OUT/runs
run() {  # NAME FOOTPRINT SETTING COMMAND...
  local name=$1 footprint=$2 setting=$3; shift 3
  local tag=$name-${setting:-unset}
  env DEEPUM_ALLOC_LIMIT=60% DEEPUM_MODE=fast DEEPUM_RESIDENT_LIMIT=$(( footprint / 2 ))B \
    DEEPUM_STATS_FILE=$OUT/runs/$tag.stats.json $setting LD_PRELOAD=/tmp/bn/lib/libdeepum.so \
    timeout 90 "$@" > $OUT/runs/$tag.log 2>&1
  local rc=$?
  local t=$(grep -oE 'time_ms [0-9.]+' $OUT/runs/$tag.log | awk '{printf "%.0f ", $2}')
  local med=$(grep -oE 'time_ms [0-9.]+' $OUT/runs/$tag.log | awk 'NR>=3{print $2}' | sort -n | awk '{a[NR]=$1} END{if(NR) printf "%.1f", (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}')
  local loss=$(grep -oE 'loss [0-9.]+' $OUT/runs/$tag.log | tail -1)
  echo "$name ${setting:-unset} exit $rc at $(( $(date +%s)-s ))s: median of steps 2+ $med ms; steps $t; last $loss"
}
hf=examples/zoo/train_hf.py
settings=("X_NOEND=1" "" "X_DONE=100000" "X_DONE=64")
{
  for setting in "${settings[@]}"; do
    run llama-1b 19566428160 "$setting" python3 $hf --model llama-1b --batch 4 --seq-len 512 --vocab 32000 --steps 7
  done
  for setting in "X_NOEND=1" "X_DONE=100000" "X_DONE=64"; do
    run bert-large 20965228544 "$setting" python3 $hf --model bert-large --batch 16 --seq-len 512 --steps 7
  done
  for setting in "X_NOEND=1" "X_DONE=100000" "X_DONE=64"; do
    run t5-base 13136560128 "$setting" python3 $hf --model t5-base --batch 16 --seq-len 512 --steps 7
  done
} 2>&1 | tee $OUT/call1-runs.txt
tar czf $OUT/call1-runs.tar.gz -C $OUT runs && rm -rf $OUT/runs
echo "done at $(( $(date +%s)-s ))s"
