#!/bin/bash
# Call 3: when the learned loop changes in GPT-2 350M's and BERT-large's runs at 2x (HEAD with
# period-print.patch: X_PERIOD=1 prints each change of the period planning uses), fourteen steps each,
# to see what their slow seventh and eighth steps are. Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
here=bench/results/2026-11-30-h200-staged-swaps
rm -rf /tmp/dbg && cp -a . /tmp/dbg && (cd /tmp/dbg && patch -s -p1 < $here/period-print.patch) || exit 1
DEEPUM_BUILD_TARGETS="deepum" /tmp/dbg/scripts/build.sh /tmp/bd -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildd.log 2>&1 || { tail -30 /tmp/buildd.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
run() {  # NAME FOOTPRINT_BYTES ARGS...
  local name=$1 footprint=$2
  shift 2
  X_PERIOD=1 DEEPUM_ALLOC_LIMIT=60% DEEPUM_MODE=fast DEEPUM_RESIDENT_LIMIT=$(( footprint / 2 ))B \
    DEEPUM_STATS_FILE=$OUT/$name.stats.json LD_PRELOAD=/tmp/bd/lib/libdeepum.so \
    timeout 200 python3 -u "$@" > $OUT/$name.log 2>&1
  echo "$name exit $? at $(( $(date +%s)-s ))s"
  grep -E "^step|X_PERIOD" $OUT/$name.log | sed -E 's/^step ([0-9]+) loss [^ ]+ time_ms/step \1/'
}
run gpt2-350m 22691184640 examples/pytorch/train_gpt2.py --preset gpt2-350m --batch 8 --steps 14
run bert-large 20965228544 examples/zoo/train_hf.py --model bert-large --batch 16 --seq-len 512 --steps 14
