#!/bin/bash
# Call 4: a learned loop longer than the history is planned with only once the history covers it
# (history-cover.patch, the working tree) against HEAD (the patch taken back out): the zoo at 2x,
# both builds in the same call, GPT-2 350M and BERT-large twelve steps, then the 1B decoder ten.
# Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
here=bench/results/2026-11-30-h200-staged-swaps
rm -rf /tmp/base && cp -a . /tmp/base && (cd /tmp/base && patch -s -R -p1 < $here/history-cover.patch) || exit 1
DEEPUM_BUILD_TARGETS="deepum sweep" /tmp/base/scripts/build.sh /tmp/bb -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1 &
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
wait $! || { tail -30 /tmp/buildb.log; exit 1; }
echo "builds $(( $(date +%s)-s ))s"
zoo() {  # NAME STEPS SECONDS WORKLOADS...
  local name=$1 steps=$2 limit=$3
  shift 3
  timeout $limit python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so \
    --sweep /tmp/bn/tests/sweep --out $OUT/$name --modes "fastest 2x" --steps $steps --only "$@" > $OUT/call4-$name.txt 2>&1
  echo "zoo $name exit $? at $(( $(date +%s)-s ))s"
  mv $OUT/$name/zoo.json $OUT/call4-$name.json 2>/dev/null
}
zoo transformers 12 330 gpt2-350m bert-large
zoo decoder 10 $(( 540 - ($(date +%s) - s) )) llama-1b
tar czf $OUT/call4-logs.tar.gz -C $OUT transformers decoder && rm -rf $OUT/transformers $OUT/decoder
mkdir -p /tmp/l && tar xzf $OUT/call4-logs.tar.gz -C /tmp/l
for d in /tmp/l/*/; do tar xzf $d/zoo-logs.tar.gz -C $d 2>/dev/null; done
for f in /tmp/l/*/logs/*fastest*.log; do echo "$(basename $f .log): $(grep -oE 'time_ms [0-9.]+' $f | awk '{printf "%.0f ", $2}')"; done
grep -hE "^(gpt2|bert|llama)" $OUT/call4-*.txt | tail -10
