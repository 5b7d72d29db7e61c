#!/bin/bash
# Call 7: GPT-2 124M and the CUDA sweep at 2x, traced, under 7ed95db with evictions_ahead 1 and 2,
# and with ahead-budget.patch (copies back ahead up to a batch per eviction allowed in flight, not
# one batch) with evictions_ahead 2 and 3; each read by step_breakdown.py and overlap.py over its
# last three steps.
set -uo pipefail
d=bench/results/2026-11-29-h200-timelines
s=$(date +%s)
rm -rf /tmp/var && mkdir /tmp/var && cp -a . /tmp/var/ && (cd /tmp/var && patch -s -p1 < $d/ahead-budget.patch) || exit 1
(DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || tail -30 /tmp/bn.log) &
(cd /tmp/var && DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bv -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bv.log 2>&1 || tail -30 /tmp/bv.log) &
wait
echo "build $(( $(date +%s)-s ))s"
free=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits -i 0)
export DEEPUM_ALLOC_LIMIT="$(( free * 6 / 10 ))MiB" DEEPUM_MODE=fast
run() {  # NAME LIB AHEAD LIMIT ARGS...
  local name=$1 lib=$2 ahead=$3 limit=$4; shift 4
  LD_PRELOAD=$lib DEEPUM_EVICTIONS_AHEAD=$ahead DEEPUM_RESIDENT_LIMIT=$limit DEEPUM_TRACE_FILE=/tmp/tr-$name \
    timeout 150 "$@" > $OUT/$name.txt 2>&1
  local rc=$? last=$(grep "^step" $OUT/$name.txt | tail -3 | awk '{s+=$6} END {print s}')
  echo "== $name (exit $rc): steps $(grep '^step' $OUT/$name.txt | awk '{printf "%.0f ", $6}')"
  python3 $d/overlap.py /tmp/tr-$name.perfetto.json 3 $last
  python3 bench/step_breakdown.py /tmp/tr-$name.perfetto.json --last-ms $last > $OUT/$name-breakdown.txt 2>&1
}
gpt2="python3 examples/pytorch/train_gpt2.py --preset gpt2-124m --batch 8 --steps 6 --warmup-steps 1"
sweep="/tmp/bn/tests/sweep --arrays 16 --mib 256 --steps 6"
{
  for v in "bn 1" "bn 2" "bv 2" "bv 3"; do set -- $v
    run gpt2-$1-$2 /tmp/$1/lib/libdeepum.so $2 6036652032B $gpt2
    run sweep-$1-$2 /tmp/$1/lib/libdeepum.so $2 2147487744B $sweep
  done
} | tee $OUT/call7-overlap.txt
tar czf $OUT/call7-runs.tar.gz -C $OUT $(cd $OUT && ls *.txt | grep -v call7-overlap) && (cd $OUT && ls *.txt | grep -v call7-overlap | xargs rm -f)
