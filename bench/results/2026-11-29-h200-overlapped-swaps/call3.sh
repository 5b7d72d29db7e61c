#!/bin/bash
# Call 3: the eviction thread enqueues the next swap's copies while the one before's run, and
# drops that one as its copies end
# (overlap.patch, the working tree) against HEAD (the patch taken back out): the zoo at 2x, ten
# steps, both builds in the same call. Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
here=bench/results/2026-11-29-h200-overlapped-swaps
rm -rf /tmp/base && cp -a . /tmp/base && (cd /tmp/base && patch -s -R -p1 < $here/overlap.patch) || exit 1
DEEPUM_BUILD_TARGETS="deepum sweep" /tmp/base/scripts/build.sh /tmp/bb -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1 &
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
wait $! || { tail -30 /tmp/buildb.log; exit 1; }
echo "builds $(( $(date +%s)-s ))s"
zoo() {  # NAME SECONDS WORKLOADS...
  local name=$1 limit=$2
  shift 2
  timeout $limit python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
    --out $OUT/$name --modes "fastest 2x" --steps 10 --only "$@" > $OUT/call3-$name.txt 2>&1
  echo "zoo $name exit $? at $(( $(date +%s)-s ))s"
  mv $OUT/$name/zoo.json $OUT/call3-$name.json 2>/dev/null
}
zoo loops 150 cuda-sweep cupy
zoo models $(( 565 - ($(date +%s) - s) )) gpt2 resnet152 llama-1b
tar czf $OUT/call3-logs.tar.gz -C $OUT loops models && rm -rf $OUT/loops $OUT/models
grep -hE "^(gpt2|resnet|llama|cuda-sweep|cupy)" $OUT/call3-loops.txt $OUT/call3-models.txt | tail -16
