#!/bin/bash
# Call 4: peak-step.patch (peak.patch with the look ahead cut to half a step where the loop spans
# several: half the loop of shapes) against HEAD, direct runs at 2x (mode fast, the resident limit
# half the footprint the zoo measured): BERT-large six steps and GPT-2 124M seven, each build once.
# Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
here=bench/results/2026-11-30-h200-peak-ahead
rm -rf /tmp/v && cp -a . /tmp/v && (cd /tmp/v && patch -s -p1 < $here/peak-step.patch) || exit 1
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bb -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1 &
DEEPUM_BUILD_TARGETS="deepum" /tmp/v/scripts/build.sh /tmp/bv -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildv.log 2>&1 || { tail -30 /tmp/buildv.log; exit 1; }
wait $! || { tail -30 /tmp/buildb.log; exit 1; }
echo "builds $(( $(date +%s)-s ))s"
mkdir -p $OUT/runs
run() {  # TAG LIB FOOTPRINT COMMAND...
  local tag=$1 lib=$2 f=$3; shift 3
  env DEEPUM_ALLOC_LIMIT=60% DEEPUM_MODE=fast DEEPUM_RESIDENT_LIMIT=$(( f / 2 ))B \
    DEEPUM_STATS_FILE=$OUT/runs/$tag.stats.json LD_PRELOAD=$lib/lib/libdeepum.so timeout 100 "$@" > $OUT/runs/$tag.log 2>&1
  local rc=$?
  local med=$(grep -oE 'time_ms [0-9.]+' $OUT/runs/$tag.log | awk 'NR>=3{print $2}' | sort -n | awk '{a[NR]=$1} END{if(NR) printf "%.1f", (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}')
  echo "$tag exit $rc at $(( $(date +%s)-s ))s: median of steps 2+ $med ms; steps $(grep -oE 'time_ms [0-9.]+' $OUT/runs/$tag.log | awk '{printf "%.0f ", $2}'); $(grep -oE 'loss [0-9.]+' $OUT/runs/$tag.log | tail -1)"
}
{
  run bert-head /tmp/bb 20965228544 python3 examples/zoo/train_hf.py --model bert-large --batch 16 --seq-len 512 --steps 6
  run bert-step /tmp/bv 20965228544 python3 examples/zoo/train_hf.py --model bert-large --batch 16 --seq-len 512 --steps 6
  run gpt2-head /tmp/bb 12073304064 python3 examples/pytorch/train_gpt2.py --preset gpt2-124m --batch 8 --warmup-steps 1 --steps 7
  run gpt2-step /tmp/bv 12073304064 python3 examples/pytorch/train_gpt2.py --preset gpt2-124m --batch 8 --warmup-steps 1 --steps 7
} 2>&1 | tee $OUT/call4-runs.txt
tar czf $OUT/call4-runs.tar.gz -C $OUT runs && rm -rf $OUT/runs
