#!/bin/bash
# Call 4: timestamps of the swap path with swaps overlapped (overlap-timeline.patch: overlap.patch
# and the timestamps of swap-timeline.patch, the working tree; X_DBG=1): the CUDA sweep at 2x as in
# call 2, one run. Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
env DEEPUM_ALLOC_LIMIT=60% DEEPUM_MODE=fast X_DBG=1 DEEPUM_RESIDENT_LIMIT=2147487744B DEEPUM_STATS_FILE=$OUT/sweep.stats.json \
  LD_PRELOAD=/tmp/bn/lib/libdeepum.so /tmp/bn/tests/sweep --arrays 16 --mib 256 --steps 10 > $OUT/sweep.out 2> $OUT/sweep.err
echo "sweep exit $? at $(( $(date +%s)-s ))s"
grep time_ms $OUT/sweep.out | tail -4
tar czf $OUT/call4.tar.gz -C $OUT sweep.out sweep.err sweep.stats.json && rm -f $OUT/sweep.*
