#!/bin/bash
# Call 2: split.patch against HEAD as in call 1, both with evictions_ahead=1 (the zoo's --set): the
# change without its split batches (the repeats judged over a step, a third enough; an operation
# naming more than a batch copied back ahead alone). Zoo at 2x, ten steps, both builds in the same
# call. Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
here=bench/results/2026-11-29-h200-split-batches
rm -rf /tmp/base && cp -a . /tmp/base && (cd /tmp/base && patch -s -R -p1 < $here/split.patch) || exit 1
DEEPUM_BUILD_TARGETS="deepum sweep" /tmp/base/scripts/build.sh /tmp/bb -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1 &
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
wait $! || { tail -30 /tmp/buildb.log; exit 1; }
echo "builds $(( $(date +%s)-s ))s"
zoo() {  # NAME SECONDS WORKLOADS...
  local name=$1 limit=$2
  shift 2
  timeout $limit python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
    --out $OUT/$name --modes "fastest 2x" --steps 10 --set evictions_ahead=1 --only "$@" > $OUT/call2-$name.txt 2>&1
  echo "zoo $name exit $? at $(( $(date +%s)-s ))s"
  mv $OUT/$name/zoo.json $OUT/call2-$name.json 2>/dev/null
}
zoo loops 100 cuda-sweep
zoo models $(( 400 - ($(date +%s) - s) )) resnet152 bert-base
tar czf $OUT/call2-logs.tar.gz -C $OUT loops models && rm -rf $OUT/loops $OUT/models
grep -hE "^(bert|resnet|cuda-sweep)" $OUT/call2-loops.txt $OUT/call2-models.txt | tail -16
