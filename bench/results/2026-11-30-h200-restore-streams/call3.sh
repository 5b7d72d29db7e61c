#!/bin/bash
# Call 3: GPT-2 124M at 2x (mode fast, the resident limit half the footprint the zoo measured), main
# (branch.patch taken back out) then the branch, each twice plain (eight steps) and once with a trace
# (six steps): is call 1's slower branch repeatable, and where does its step go.
# Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
here=bench/results/2026-11-30-h200-restore-streams
rm -rf /tmp/base && cp -a . /tmp/base && (cd /tmp/base && patch -s -R -p1 < $here/branch.patch) || exit 1
DEEPUM_BUILD_TARGETS="deepum" /tmp/base/scripts/build.sh /tmp/bb -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1 &
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
wait $! || { tail -30 /tmp/buildb.log; exit 1; }
echo "builds $(( $(date +%s)-s ))s"
mkdir -p /tmp/t $OUT/runs
run() {  # TAG LIB_DIR STEPS TRACE(0/1)
  local tag=$1 lib=$2 steps=$3 trace=$4 extra=()
  [ "$trace" = 1 ] && extra=(DEEPUM_TRACE_FILE=/tmp/t/$tag)
  env DEEPUM_ALLOC_LIMIT=60% DEEPUM_MODE=fast DEEPUM_RESIDENT_LIMIT=$(( 12073304064 / 2 ))B \
    DEEPUM_STATS_FILE=$OUT/runs/$tag.stats.json "${extra[@]}" LD_PRELOAD=$lib/lib/libdeepum.so timeout 120 \
    python3 examples/pytorch/train_gpt2.py --preset gpt2-124m --batch 8 --steps $steps --warmup-steps 1 > $OUT/runs/$tag.log 2>&1
  local rc=$?
  local t=$(grep -oE 'time_ms [0-9.]+' $OUT/runs/$tag.log | awk '{printf "%.0f ", $2}')
  local med=$(grep -oE 'time_ms [0-9.]+' $OUT/runs/$tag.log | awk 'NR>=3{print $2}' | sort -n | awk '{a[NR]=$1} END{if(NR) printf "%.1f", (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}')
  echo "$tag exit $rc at $(( $(date +%s)-s ))s: median of steps 2+ $med ms; steps $t"
  if [ "$trace" = 1 ]; then
    python3 bench/phase_breakdown.py /tmp/t/$tag.perfetto.json > $OUT/runs/$tag.phases.txt 2>&1
    xz -T8 -c /tmp/t/$tag.dtrace > $OUT/call3-$tag.dtrace.xz
  fi
}
{
  for i in 1 2; do run main-$i /tmp/bb 8 0; run branch-$i /tmp/bn 8 0; done
  run main-trace /tmp/bb 6 1; run branch-trace /tmp/bn 6 1
  tail -5 $OUT/runs/*trace.phases.txt
} 2>&1 | tee $OUT/call3-runs.txt
tar czf $OUT/call3-runs.tar.gz -C $OUT runs && rm -rf $OUT/runs
echo "done at $(( $(date +%s)-s ))s"
