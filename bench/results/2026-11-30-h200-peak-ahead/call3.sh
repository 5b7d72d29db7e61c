#!/bin/bash
# Call 3: BERT-large at 2x (mode fast, the resident limit half the footprint the zoo measured),
# six steps with a trace, HEAD's library and the change's: where the change's step goes.
# Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
here=bench/results/2026-11-30-h200-peak-ahead
rm -rf /tmp/base && cp -a . /tmp/base && (cd /tmp/base && patch -s -R -p1 < $here/peak.patch) || exit 1
DEEPUM_BUILD_TARGETS="deepum" /tmp/base/scripts/build.sh /tmp/bb -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1 &
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
wait $! || { tail -30 /tmp/buildb.log; exit 1; }
echo "builds $(( $(date +%s)-s ))s"
mkdir -p /tmp/t $OUT/runs
for tag in head:/tmp/bb change:/tmp/bn; do
  name=${tag%%:*} lib=${tag#*:}
  env DEEPUM_ALLOC_LIMIT=60% DEEPUM_MODE=fast DEEPUM_RESIDENT_LIMIT=$(( 20965228544 / 2 ))B \
    DEEPUM_STATS_FILE=$OUT/runs/$name.stats.json DEEPUM_TRACE_FILE=/tmp/t/$name LD_PRELOAD=$lib/lib/libdeepum.so \
    timeout 150 python3 examples/zoo/train_hf.py --model bert-large --batch 16 --seq-len 512 --steps 6 > $OUT/runs/$name.log 2>&1
  echo "$name exit $? at $(( $(date +%s)-s ))s: steps $(grep -oE 'time_ms [0-9.]+' $OUT/runs/$name.log | awk '{printf "%.0f ", $2}')"
  python3 bench/phase_breakdown.py /tmp/t/$name.perfetto.json > $OUT/runs/$name.phases.txt 2>&1
  xz -T8 -c /tmp/t/$name.dtrace > $OUT/call3-bert-large-$name.dtrace.xz
done 2>&1 | tee $OUT/call3-runs.txt
tail -6 $OUT/runs/*.phases.txt
tar czf $OUT/call3-runs.tar.gz -C $OUT runs && rm -rf $OUT/runs
