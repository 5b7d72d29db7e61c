#!/bin/bash
# Call 5: the GPU tests on the tree as committed (the new counter, no probe timers).
set -uo pipefail
s=$(date +%s)
scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || tail -30 /tmp/buildn.log
echo "build $(( $(date +%s)-s ))s"
(cd /tmp/bn && NCCL_NVLS_ENABLE=0 timeout 330 ctest -L gpu -j2 --output-on-failure > $OUT/ctest-gpu.txt 2>&1; echo "ctest exit $?")
echo "ctest at $(( $(date +%s)-s ))s"
tail -6 $OUT/ctest-gpu.txt
