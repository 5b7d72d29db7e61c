#!/bin/bash
# Call 8: the GPU tests on the tree (7ed95db plus comments), four at a time for want of device time.
set -uo pipefail
s=$(date +%s)
scripts/build.sh /tmp/bt -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bt.log 2>&1 || { tail -30 /tmp/bt.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
(cd /tmp/bt && NCCL_NVLS_ENABLE=0 timeout $(( 300 - ($(date +%s)-s) )) ctest -L gpu -j4 --output-on-failure > $OUT/call8-ctest-gpu.txt 2>&1; echo "ctest exit $?")
echo "ctest at $(( $(date +%s)-s ))s"
grep -E "tests passed|tests failed|Failed|Timeout|\*\*\*|Passed" $OUT/call8-ctest-gpu.txt | tail -40
