#!/bin/bash
# Where the 1B decoder's step goes at 2x on main (0664b54): a trace (trace_file) of eight steps,
# split into backward, optimizer and forward by bench/phase_breakdown.py, row 5's forward, backward
# in buckets, and ../2026-11-30-h200-merged-phases/launch-gaps.py on rows 4 and 5; then ten
# untraced steps each with evictions_ahead 1, 2 and 3. The resident limit is half the native
# footprint the zoo measured (19566428160 B).
# Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || { tail -30 /tmp/bn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
python3 bench/pinned_copy_rate.py > $OUT/link.txt 2>&1; tail -1 $OUT/link.txt
mkdir -p /tmp/t $OUT/runs
hf=(python3 examples/zoo/train_hf.py --model llama-1b --batch 4 --seq-len 512 --vocab 32000)
run() {  # NAME SECONDS STEPS [ENV...]
  local name=$1 limit=$2 steps=$3; shift 3
  env DEEPUM_ALLOC_LIMIT=60% DEEPUM_MODE=fast DEEPUM_RESIDENT_LIMIT=$(( 19566428160 / 2 ))B \
    DEEPUM_STATS_FILE=$OUT/runs/$name.stats.json "$@" LD_PRELOAD=/tmp/bn/lib/libdeepum.so \
    timeout $limit "${hf[@]}" --steps $steps > $OUT/runs/$name.log 2>&1
  echo "$name exit $? at $(( $(date +%s)-s ))s: $(grep -oE 'time_ms [0-9.]+' $OUT/runs/$name.log | awk '{printf "%.0f ", $2}')"
}
run traced 150 8 DEEPUM_TRACE_FILE=/tmp/t/traced
python3 bench/phase_breakdown.py /tmp/t/traced.perfetto.json > $OUT/runs/phases.txt 2>&1; tail -8 $OUT/runs/phases.txt
for phase in forward backward; do
  python3 bench/phase_breakdown.py /tmp/t/traced.perfetto.json --timeline 5 $phase > $OUT/runs/$phase.txt 2>&1
done
for row in 4 5; do python3 bench/results/2026-11-30-h200-merged-phases/launch-gaps.py /tmp/t/traced.perfetto.json $row; done > $OUT/runs/launch-gaps.txt 2>&1
cat $OUT/runs/launch-gaps.txt
for a in 1 2 3; do run ahead$a 90 10 DEEPUM_EVICTIONS_AHEAD=$a; done
xz -T8 -c /tmp/t/traced.dtrace > $OUT/runs/traced.dtrace.xz
tar cf $OUT/runs.tar -C $OUT runs && rm -rf $OUT/runs
echo "done at $(( $(date +%s)-s ))s"
