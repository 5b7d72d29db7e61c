#!/bin/bash
# Call 3: a confirmed loop kept against a multiple of it that repeats little more (loop.patch, the
# working tree) against HEAD (the patch taken back out): the zoo at 2x, ten steps, each build twice
# for the 1B decoder (whose loop of addresses ended at two steps in some runs, four in others) and
# once for GPT-2, in the same call. Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
here=bench/results/2026-11-29-h200-split-batches
rm -rf /tmp/base && cp -a . /tmp/base && (cd /tmp/base && patch -s -R -p1 < $here/loop.patch) || exit 1
DEEPUM_BUILD_TARGETS="deepum sweep" /tmp/base/scripts/build.sh /tmp/bb -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1 &
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
wait $! || { tail -30 /tmp/buildb.log; exit 1; }
echo "builds $(( $(date +%s)-s ))s"
b=/tmp/bb/lib/libdeepum.so n=/tmp/bn/lib/libdeepum.so
zoo() {  # NAME SECONDS LIBS -- WORKLOADS...
  local name=$1 limit=$2 libs=()
  shift 2
  while [[ $1 != -- ]]; do libs+=("$1"); shift; done
  shift
  timeout $limit python3 tests/zoo/model_zoo.py --lib "${libs[@]}" --sweep /tmp/bn/tests/sweep \
    --out $OUT/$name --modes "fastest 2x" --steps 10 --only "$@" > $OUT/call3-$name.txt 2>&1
  echo "zoo $name exit $? at $(( $(date +%s)-s ))s"
  mv $OUT/$name/zoo.json $OUT/call3-$name.json 2>/dev/null
}
zoo decoder 330 $b $n $n $b -- llama-1b
zoo gpt2 $(( 560 - ($(date +%s) - s) )) $b $n -- gpt2
tar czf $OUT/call3-logs.tar.gz -C $OUT decoder gpt2 && rm -rf $OUT/decoder $OUT/gpt2
grep -hE "^(gpt2|llama)" $OUT/call3-decoder.txt $OUT/call3-gpt2.txt | tail -8
