#!/bin/bash
# Call 3: the GPU tests at this tree (the library as at 305efc9, the simulator's extents filled from
# the allocator's buffers).
set -uo pipefail
nvidia-smi --query-gpu=name,memory.free --format=csv,noheader
s=$(date +%s)
scripts/build.sh /tmp/bf -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildf.log 2>&1 || { tail -30 /tmp/buildf.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
(cd /tmp/bf && NCCL_NVLS_ENABLE=0 timeout 480 ctest -L gpu -j2 --output-on-failure) > $OUT/ctest-gpu.txt 2>&1
echo "ctest exit $? at $(( $(date +%s)-s ))s"
grep -E "tests passed|Failed|Skipped|\*\*\*" $OUT/ctest-gpu.txt | tail -12
