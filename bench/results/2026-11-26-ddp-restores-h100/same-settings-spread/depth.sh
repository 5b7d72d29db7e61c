#!/bin/bash
# Restore-ahead window = evictions_ahead batches: sweep, CuPy, GPT-2 at 2x with evictions_ahead 1 (HEAD's behaviour), 2, 3.
set -uo pipefail
nvidia-smi --query-gpu=name,memory.free --format=csv,noheader
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bz -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
python3 bench/pinned_copy_rate.py --json $OUT/link.json 2>&1 | tail -1
for a in ${AHEADS:-2 1 3}; do
  s=$(date +%s)
  DEEPUM_EVICTIONS_AHEAD=$a timeout 300 python3 tests/zoo/model_zoo.py --lib /tmp/bz/lib/libdeepum.so --sweep /tmp/bz/tests/sweep --out $OUT/zoo-a$a --modes "fastest 2x" --only ${ONLY:-cuda-sweep cupy gpt2} > $OUT/zoo-a$a.txt 2>&1
  echo "== evictions_ahead $a ($(( $(date +%s)-s ))s)"; grep -E "fastest|native" $OUT/zoo-a$a.txt | tail -6
done
cd $OUT && tar czf zoo-logs.tar.gz zoo-a* && rm -rf zoo-a*/
