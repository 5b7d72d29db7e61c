#!/bin/bash
# Call 2: the branch restore-streams (d5ca9c4, the working tree) against main (branch.patch taken
# back out, 88cee95's library): the zoo at 2x with both builds in the same call on BERT-large,
# the 1B decoder, GPT-2 350M and T5-base, seven steps.
# Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
here=bench/results/2026-11-30-h200-restore-streams
rm -rf /tmp/base && cp -a . /tmp/base && (cd /tmp/base && patch -s -R -p1 < $here/branch.patch) || exit 1
DEEPUM_BUILD_TARGETS="deepum sweep" /tmp/base/scripts/build.sh /tmp/bb -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1 &
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
wait $! || { tail -30 /tmp/buildb.log; exit 1; }
echo "builds $(( $(date +%s)-s ))s"
timeout $(( 585 - ($(date +%s)-s) )) python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so \
  --sweep /tmp/bn/tests/sweep --out $OUT/zoo --modes "fastest 2x" --steps 7 --only bert-large llama-1b gpt2-350m t5-base > $OUT/call2-zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
mv $OUT/zoo/zoo.json $OUT/call2-zoo.json 2>/dev/null; tar czf $OUT/call2-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -E "^(pinned|bert|llama|gpt2|t5)" $OUT/call2-zoo.txt | tail -13
