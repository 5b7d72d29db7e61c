#!/bin/bash
# Call 5: timestamps of the swap path as committed (swap-timeline.patch on HEAD, the working tree;
# X_DBG=1): the 1B decoder at 2x, six steps, one run beside native. Run from the repository root;
# results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
X_DBG=1 python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep --out $OUT/llama \
  --modes "fastest 2x" --steps 6 --only llama-1b > $OUT/llama.txt 2>&1
echo "llama exit $? at $(( $(date +%s)-s ))s"
tail -3 $OUT/llama.txt
tar cJf $OUT/call5.tar.xz -C $OUT llama llama.txt && rm -rf $OUT/llama
