#!/bin/bash
# Call 2: as call 1 (both builds, built again where the machine is fresh), the zoo at 2x on
# BERT-large, the 1B decoder, GPT-2 350M and T5-base, seven steps.
# Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
here=bench/results/2026-11-30-h200-peak-ahead-zoo
if [ ! -f /tmp/bn/lib/libdeepum.so ] || [ ! -f /tmp/bb/lib/libdeepum.so ]; then
  rm -rf /tmp/base && cp -a . /tmp/base && (cd /tmp/base && patch -s -R -p1 < $here/peak-ahead.patch) || exit 1
  DEEPUM_BUILD_TARGETS="deepum sweep" /tmp/base/scripts/build.sh /tmp/bb -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1 &
  DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
  wait $! || { tail -30 /tmp/buildb.log; exit 1; }
fi
echo "builds $(( $(date +%s)-s ))s"
timeout $(( 590 - ($(date +%s)-s) )) python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so \
  --sweep /tmp/bn/tests/sweep --out $OUT/zoo --modes "fastest 2x" --steps 7 --only bert-large llama-1b gpt2-350m t5-base > $OUT/call2-zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
mv $OUT/zoo/zoo.json $OUT/call2-zoo.json 2>/dev/null; tar czf $OUT/call2-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
tail -20 $OUT/call2-zoo.txt
