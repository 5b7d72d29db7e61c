#!/bin/bash
# `ctest -L gpu` on the working tree as committed (change.patch's committed form: the second
# call's change less the histories kept only past the limit). From the repository root.
set -uo pipefail
s=$(date +%s)
DEEPUM_BUILD_TARGETS= scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF > /tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
(cd /tmp/bn && NCCL_NVLS_ENABLE=0 timeout 170 ctest -L gpu -j4 --output-on-failure > $OUT/ctest-gpu.txt 2>&1; echo "ctest exit $? at $(( $(date +%s)-s ))s")
grep -E "tests passed|tests failed|Failed|Timeout" $OUT/ctest-gpu.txt | tail -4
