#!/bin/bash
# Call 2: the model told when evictions end (the working tree) against told nothing (X_NOEND=1), and
# evictions started where the next 128 operations are predicted to place more than the room left
# (X_FRESH=128): GPT-2 350M, BERT-large, GPT-2 124M and ResNet-152 at 2x (mode fast, the resident limit
# half the footprint the zoo measured), eight steps each. Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || { tail -30 /tmp/bn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
mkdir -p $OUT/runs
run() {  # NAME FOOTPRINT SETTING COMMAND...
  local name=$1 footprint=$2 setting=$3; shift 3
  local tag=$name-${setting:-ended}
  env DEEPUM_ALLOC_LIMIT=60% DEEPUM_MODE=fast DEEPUM_RESIDENT_LIMIT=$(( footprint / 2 ))B \
    DEEPUM_STATS_FILE=$OUT/runs/$tag.stats.json $setting LD_PRELOAD=/tmp/bn/lib/libdeepum.so \
    timeout 90 "$@" > $OUT/runs/$tag.log 2>&1
  local rc=$?
  local t=$(grep -oE 'time_ms [0-9.]+' $OUT/runs/$tag.log | awk '{printf "%.0f ", $2}')
  local med=$(grep -oE 'time_ms [0-9.]+' $OUT/runs/$tag.log | awk 'NR>=3{print $2}' | sort -n | awk '{a[NR]=$1} END{if(NR) printf "%.1f", (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}')
  echo "$name ${setting:-ended} exit $rc at $(( $(date +%s)-s ))s: median of steps 2+ $med ms; steps $t"
}
hf=examples/zoo/train_hf.py
for setting in X_NOEND=1 "" X_FRESH=128; do
  run gpt2-350m 22691184640 "$setting" python3 examples/pytorch/train_gpt2.py --preset gpt2-350m --batch 8 --steps 8 --warmup-steps 1
  run bert-large 20965228544 "$setting" python3 $hf --model bert-large --batch 16 --seq-len 512 --steps 8
  run gpt2-124m 12073304064 "$setting" python3 examples/pytorch/train_gpt2.py --preset gpt2-124m --batch 8 --steps 8 --warmup-steps 1
  run resnet152 6675234816 "$setting" python3 examples/pytorch/train_resnet.py --model resnet152 --batch 32 --steps 8 --warmup-steps 1
done 2>&1 | tee $OUT/call2-runs.txt
tar czf $OUT/call2-runs.tar.gz -C $OUT runs && rm -rf $OUT/runs
echo "done at $(( $(date +%s)-s ))s"
