#!/bin/bash
# Whether deepum's copies use both directions of the link at once, phase by phase, beyond the 1B
# decoder: BERT-large and T5-base traced at 2x on main (seven steps each, the resident limit half
# the native footprint the zoo measured), then both-ways.py on each trace.
# Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || { tail -30 /tmp/bn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
python3 bench/pinned_copy_rate.py > $OUT/link.txt 2>&1; tail -1 $OUT/link.txt
mkdir -p /tmp/t
here=bench/results/2026-11-30-h200-link-directions
run() {  # MODEL BATCH FOOTPRINT
  local model=$1 batch=$2 footprint=$3
  env DEEPUM_ALLOC_LIMIT=60% DEEPUM_MODE=fast DEEPUM_RESIDENT_LIMIT=$(( footprint / 2 ))B \
    DEEPUM_STATS_FILE=$OUT/$model.stats.json DEEPUM_TRACE_FILE=/tmp/t/$model LD_PRELOAD=/tmp/bn/lib/libdeepum.so \
    timeout 120 python3 examples/zoo/train_hf.py --model $model --batch $batch --seq-len 512 --steps 7 > $OUT/$model.log 2>&1
  echo "$model exit $? at $(( $(date +%s)-s ))s: $(grep -oE 'time_ms [0-9.]+' $OUT/$model.log | awk '{printf "%.0f ", $2}')"
  python3 $here/both-ways.py /tmp/t/$model.perfetto.json > $OUT/$model-both-ways.txt 2>&1
  xz -T8 -c /tmp/t/$model.dtrace > $OUT/$model.dtrace.xz
}
run bert-large 16 20965228544
run t5-base 16 13136560128
echo "done at $(( $(date +%s)-s ))s"
tail -n 13 $OUT/bert-large-both-ways.txt $OUT/t5-base-both-ways.txt
