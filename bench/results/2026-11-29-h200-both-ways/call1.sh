#!/bin/bash
# Call 1: both_ways_probe (the copy out and the copy back at once, by the ways deepum can issue the
# copy out), then the CUDA sweep at 2x traced with evictions_ahead 1 and 2 (HEAD), each read by
# step_breakdown.py over its last three steps; traces kept compressed.
set -uo pipefail
d=bench/results/2026-11-29-h200-both-ways
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum sweep both_ways_probe" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON \
  -DDEEPUM_BUILD_BENCH=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || { tail -30 /tmp/bn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
nvidia-smi --query-gpu=name,memory.free,memory.total --format=csv
/tmp/bn/bin/both_ways_probe 256 | tee $OUT/call1-probe.txt
free=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits -i 0)
export DEEPUM_ALLOC_LIMIT="$(( free * 6 / 10 ))MiB" DEEPUM_MODE=fast
for ahead in 1 2; do
  name=sweep-ahead$ahead
  LD_PRELOAD=/tmp/bn/lib/libdeepum.so DEEPUM_EVICTIONS_AHEAD=$ahead DEEPUM_RESIDENT_LIMIT=2147487744B \
    DEEPUM_TRACE_FILE=/tmp/tr-$name timeout 150 /tmp/bn/tests/sweep --arrays 16 --mib 256 --steps 6 > $OUT/$name.txt 2>&1
  last=$(grep "^step" $OUT/$name.txt | tail -3 | awk '{s+=$6} END {print s}')
  echo "== $name (exit $?): steps $(grep '^step' $OUT/$name.txt | awk '{printf "%.0f ", $6}')"
  python3 bench/step_breakdown.py /tmp/tr-$name.perfetto.json --last-ms $last | tee -a $OUT/$name.txt | tail -12
  xz -T4 -c /tmp/tr-$name.perfetto.json > $OUT/$name.perfetto.json.xz
done
ls -la $OUT
