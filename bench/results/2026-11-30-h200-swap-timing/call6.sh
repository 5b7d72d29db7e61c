#!/bin/bash
# Call 6: as call 5 with experiments.patch: copies back ahead on a stream of their own and discards
# on another (X_RSTREAM=1), each discard after its blocks' return to the allocator (a progress marker
# after it) instead of the program's work so far, the copies back after the latest discard (its room):
# BERT-large and the 1B decoder at 2x, five steps, the change first, then the default; residency over the limit.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || { tail -30 /tmp/bn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
mkdir -p $OUT/runs
run() {  # NAME FOOTPRINT SETTING COMMAND...
  local name=$1 footprint=$2 setting=$3; shift 3
  local tag=$name-${setting//[ =\/]/_}
  env DEEPUM_ALLOC_LIMIT=60% DEEPUM_MODE=fast DEEPUM_RESIDENT_LIMIT=$(( footprint / 2 ))B \
    DEEPUM_STATS_FILE=$OUT/runs/$tag.stats.json $setting \
    LD_PRELOAD=/tmp/bn/lib/libdeepum.so timeout 75 "$@" > $OUT/runs/$tag.log 2>&1
  local rc=$?
  local t=$(grep -oE 'time_ms [0-9.]+' $OUT/runs/$tag.log | awk '{printf "%.0f ", $2}')
  local med=$(grep -oE 'time_ms [0-9.]+' $OUT/runs/$tag.log | awk 'NR>=3{print $2}' | sort -n | awk '{a[NR]=$1} END{if(NR) printf "%.1f", (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}')
  local loss=$(grep -oE 'loss [0-9.]+' $OUT/runs/$tag.log | tail -1)
  local over=$(python3 -c "import json,sys; t=json.load(open(sys.argv[1]))['tracing']; print('over limit', t['over_limit_ms'], 'ms, peak', round(t['peak_resident_bytes']/2**30,2), 'GiB')" $OUT/runs/$tag.stats.json 2>/dev/null)
  echo "$name ${setting:-default} exit $rc at $(( $(date +%s)-s ))s: median of steps 2+ $med ms; steps $t; last $loss; $over"
}
hf=examples/zoo/train_hf.py
{
  for setting in "X_RSTREAM=1" "X_RSTREAM_OFF=1"; do
    run bert-large 20965228544 "$setting" python3 $hf --model bert-large --batch 16 --seq-len 512 --steps 5
    run llama-1b 19566428160 "$setting" python3 $hf --model llama-1b --batch 4 --seq-len 512 --vocab 32000 --steps 5
  done
} 2>&1 | tee $OUT/call6-runs.txt
tar czf $OUT/call6-runs.tar.gz -C $OUT runs && rm -rf $OUT/runs
echo "done at $(( $(date +%s)-s ))s"
