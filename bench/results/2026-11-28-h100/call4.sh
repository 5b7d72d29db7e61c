#!/bin/bash
# Call 4: every GPU test after the legacy movers' deletion, the stress test and its check included.
set -uo pipefail
nvidia-smi --query-gpu=name,memory.free --format=csv,noheader
s=$(date +%s)
scripts/build.sh /tmp/bf -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildf.log 2>&1 || { tail -30 /tmp/buildf.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
s=$(date +%s)
(cd /tmp/bf && NCCL_NVLS_ENABLE=0 timeout 420 ctest -L gpu -j2 --output-on-failure --timeout 400) > $OUT/ctest-gpu.txt 2>&1
echo "ctest $(( $(date +%s)-s ))s"
grep -E "tests passed|Passed|Failed|Skipped|Not Run|\*\*\*" $OUT/ctest-gpu.txt | cut -c1-150 | tail -45
