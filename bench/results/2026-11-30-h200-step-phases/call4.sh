#!/bin/bash
# Call 4: evictions kept further ahead when their victims are not needed within half the learned
# loop (far-evictions.patch, the working tree; X_FAR=N allows N such evictions in flight beyond the
# one ahead, unset changes nothing): GPT-2 350M, BERT-large, T5-base and the 1B decoder at 2x (mode
# fast, the resident limit half the footprint the zoo measured), seven steps each, X_FAR unset and
# X_FAR=2 in turn. Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || { tail -30 /tmp/bn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
mkdir -p $OUT/runs
run() {  # NAME FOOTPRINT X_FAR COMMAND...
  local name=$1 footprint=$2 far=$3; shift 3
  env DEEPUM_ALLOC_LIMIT=60% DEEPUM_MODE=fast DEEPUM_RESIDENT_LIMIT=$(( footprint / 2 ))B \
    DEEPUM_STATS_FILE=$OUT/runs/$name-far$far.stats.json ${far:+X_FAR=$far} LD_PRELOAD=/tmp/bn/lib/libdeepum.so \
    timeout 100 "$@" > $OUT/runs/$name-far$far.log 2>&1
  local rc=$?
  local t=$(grep -oE 'time_ms [0-9.]+' $OUT/runs/$name-far$far.log | awk '{printf "%.0f ", $2}')
  local med=$(grep -oE 'time_ms [0-9.]+' $OUT/runs/$name-far$far.log | awk 'NR>=3{print $2}' | sort -n | awk '{a[NR]=$1} END{if(NR) printf "%.1f", (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}')
  echo "$name X_FAR=${far:-unset} exit $rc at $(( $(date +%s)-s ))s: median of steps 2+ $med ms; steps $t"
}
hf=examples/zoo/train_hf.py
for far in "" 2; do
  run t5-base 13136560128 "$far" python3 $hf --model t5-base --batch 16 --seq-len 512 --steps 7
  run gpt2-350m 22691184640 "$far" python3 examples/pytorch/train_gpt2.py --preset gpt2-350m --batch 8 --steps 7 --warmup-steps 1
  run bert-large 20965228544 "$far" python3 $hf --model bert-large --batch 16 --seq-len 512 --steps 7
  run llama-1b 19566428160 "$far" python3 $hf --model llama-1b --batch 4 --seq-len 512 --vocab 32000 --steps 7
done 2>&1 | tee $OUT/call4-runs.txt
tar czf $OUT/call4-runs.tar.gz -C $OUT runs && rm -rf $OUT/runs
echo "done at $(( $(date +%s)-s ))s"
