#!/bin/bash
# Call 2: timestamps of the swap path (swap-timeline.patch on HEAD, the working tree; X_DBG=1):
# the CUDA sweep at 2x (16 arrays of 256 MiB, limit 2 GiB, mode fast) and GPT-2 124M at 2x, each
# one run. Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
common="DEEPUM_ALLOC_LIMIT=60% DEEPUM_MODE=fast X_DBG=1"
env $common DEEPUM_RESIDENT_LIMIT=2147487744B DEEPUM_STATS_FILE=$OUT/sweep.stats.json LD_PRELOAD=/tmp/bn/lib/libdeepum.so \
  /tmp/bn/tests/sweep --arrays 16 --mib 256 --steps 10 > $OUT/sweep.out 2> $OUT/sweep.err
echo "sweep exit $? at $(( $(date +%s)-s ))s"
grep time_ms $OUT/sweep.out | tail -4
X_DBG=1 python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep --out $OUT/gpt2 \
  --modes "fastest 2x" --steps 6 --only gpt2 > $OUT/gpt2.txt 2>&1
echo "gpt2 exit $? at $(( $(date +%s)-s ))s"
tail -3 $OUT/gpt2.txt
tar czf $OUT/call2.tar.gz -C $OUT sweep.out sweep.err sweep.stats.json gpt2 gpt2.txt && rm -rf $OUT/gpt2 $OUT/sweep.*
