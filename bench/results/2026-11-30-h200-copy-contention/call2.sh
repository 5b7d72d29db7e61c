#!/bin/bash
# Call 2: with evlog.patch (temporary: X_EVLOG=1 logs each eviction's decision and the progress
# marker its copies wait for, and the eviction thread's start and end of each; X_MARKER_INTERVAL=N
# records a marker every N launches instead of 16), GPT-2 124M and BERT-large at 2x (mode fast,
# the resident limit half the footprint the zoo measured): what an eviction's copies wait for, and
# whether markers at every launch change the step.
# Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
here=bench/results/2026-11-30-h200-copy-contention
rm -rf /tmp/x && cp -a . /tmp/x && (cd /tmp/x && patch -s -p1 < $here/evlog.patch) || exit 1
DEEPUM_BUILD_TARGETS="deepum" /tmp/x/scripts/build.sh /tmp/bx -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildx.log 2>&1 || { tail -30 /tmp/buildx.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
mkdir -p /tmp/t $OUT/runs
run() {  # TAG FOOTPRINT STEPS TRACE(0/1) ENV... -- COMMAND...
  local tag=$1 f=$2 steps=$3 trace=$4; shift 4
  local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  [ "$trace" = 1 ] && envs+=(DEEPUM_TRACE_FILE=/tmp/t/$tag)
  env DEEPUM_ALLOC_LIMIT=60% DEEPUM_MODE=fast DEEPUM_RESIDENT_LIMIT=$(( f / 2 ))B \
    DEEPUM_STATS_FILE=$OUT/runs/$tag.stats.json "${envs[@]}" LD_PRELOAD=/tmp/bx/lib/libdeepum.so timeout 150 \
    "$@" > $OUT/runs/$tag.log 2>&1
  local rc=$?
  local t=$(grep -oE 'time_ms [0-9.]+' $OUT/runs/$tag.log | awk '{printf "%.0f ", $2}')
  local med=$(grep -oE 'time_ms [0-9.]+' $OUT/runs/$tag.log | awk 'NR>=3{print $2}' | sort -n | awk '{a[NR]=$1} END{if(NR) printf "%.1f", (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}')
  echo "$tag exit $rc at $(( $(date +%s)-s ))s: median of steps 2+ $med ms; steps $t; loss $(grep -oE 'loss [0-9.]+' $OUT/runs/$tag.log | tail -1)"
  if [ "$trace" = 1 ]; then
    python3 bench/phase_breakdown.py /tmp/t/$tag.perfetto.json > $OUT/runs/$tag.phases.txt 2>&1
    xz -T8 -c /tmp/t/$tag.dtrace > $OUT/call2-$tag.dtrace.xz
  fi
}
G=(python3 examples/pytorch/train_gpt2.py --preset gpt2-124m --batch 8 --warmup-steps 1 --steps)
B=(python3 examples/zoo/train_hf.py --model bert-large --batch 16 --seq-len 512 --steps)
{
  run gpt2-m16-log 12073304064 7 1 X_EVLOG=1 -- "${G[@]}" 7
  run gpt2-m1-log 12073304064 7 0 X_EVLOG=1 X_MARKER_INTERVAL=1 -- "${G[@]}" 7
  run gpt2-m16 12073304064 7 0 -- "${G[@]}" 7
  run gpt2-m1 12073304064 7 0 X_MARKER_INTERVAL=1 -- "${G[@]}" 7
  run bert-m16 20965228544 7 0 -- "${B[@]}" 7
  run bert-m1 20965228544 7 0 X_MARKER_INTERVAL=1 -- "${B[@]}" 7
} 2>&1 | tee $OUT/call2-runs.txt
tar czf $OUT/call2-runs.tar.gz -C $OUT runs && rm -rf $OUT/runs
echo "done at $(( $(date +%s)-s ))s"
