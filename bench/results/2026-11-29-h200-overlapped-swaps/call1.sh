#!/bin/bash
# Call 1: the eviction thread begins the next swap's copies before it drops the one before
# (overlap-after-copies.patch, the working tree) against HEAD (the patch taken back out): the zoo at 2x, ten
# steps, both builds in the same call. Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
here=bench/results/2026-11-29-h200-overlapped-swaps
rm -rf /tmp/base && cp -a . /tmp/base && (cd /tmp/base && patch -s -R -p1 < $here/overlap-after-copies.patch) || exit 1
DEEPUM_BUILD_TARGETS="deepum sweep" /tmp/base/scripts/build.sh /tmp/bb -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1 &
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
wait $! || { tail -30 /tmp/buildb.log; exit 1; }
echo "builds $(( $(date +%s)-s ))s"
zoo() {  # NAME SECONDS WORKLOADS...
  local name=$1 limit=$2
  shift 2
  timeout $limit python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
    --out $OUT/$name --modes "fastest 2x" --steps 10 --only "$@" > $OUT/call1-$name.txt 2>&1
  echo "zoo $name exit $? at $(( $(date +%s)-s ))s"
  mv $OUT/$name/zoo.json $OUT/call1-$name.json 2>/dev/null
}
zoo loops 150 cuda-sweep cupy
zoo models $(( 565 - ($(date +%s) - s) )) gpt2 resnet152 llama-1b
tar czf $OUT/call1-logs.tar.gz -C $OUT loops models && rm -rf $OUT/loops $OUT/models
grep -hE "^(gpt2|resnet|llama|cuda-sweep|cupy)" $OUT/call1-loops.txt $OUT/call1-models.txt | tail -16
