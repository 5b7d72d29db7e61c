#!/bin/bash
# Call 5: victims whose users have run first (done-victims.patch, the working tree; X_DONE=D lets
# predicted victims named before the launch stream's latest completed progress marker, and not
# needed within the learned loop's period / D operations, go before the rest; unset changes
# nothing): the 1B decoder, BERT-large, GPT-2 350M and T5-base at 2x (mode fast, the resident limit
# half the footprint the zoo measured), seven steps, each workload unset then X_DONE=8. Run from
# the repository root; results into $OUT.
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
  echo "$name ${setting:-unset} exit $rc at $(( $(date +%s)-s ))s: median of steps 2+ $med ms; steps $t"
}
hf=examples/zoo/train_hf.py
{
  for setting in "" X_DONE=8; do
    run llama-1b 19566428160 "$setting" python3 $hf --model llama-1b --batch 4 --seq-len 512 --vocab 32000 --steps 7
  done
  for setting in "" X_DONE=8; do
    run bert-large 20965228544 "$setting" python3 $hf --model bert-large --batch 16 --seq-len 512 --steps 7
  done
  for setting in "" X_DONE=8; do
    run gpt2-350m 22691184640 "$setting" python3 examples/pytorch/train_gpt2.py --preset gpt2-350m --batch 8 --steps 7 --warmup-steps 1
  done
  for setting in "" X_DONE=8; do
    run t5-base 13136560128 "$setting" python3 $hf --model t5-base --batch 16 --seq-len 512 --steps 7
  done
} 2>&1 | tee $OUT/call5-runs.txt
tar czf $OUT/call5-runs.tar.gz -C $OUT runs && rm -rf $OUT/runs
echo "done at $(( $(date +%s)-s ))s"
