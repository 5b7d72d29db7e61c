#!/bin/bash
# Call 6: the build with tests (not the benchmark programs: drop_beside_probe was built by call 4's
# nvcc and by CMake on the build machine) and `ctest -L gpu` on this commit (the library as
# 3264842's). Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || { tail -30 /tmp/bn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
(cd /tmp/bn && NCCL_NVLS_ENABLE=0 timeout 260 ctest -L gpu -j4 --output-on-failure > $OUT/call6-ctest-gpu.txt 2>&1; echo "ctest exit $?")
echo "ctest at $(( $(date +%s)-s ))s"
grep -E "tests passed|tests failed|Failed|Timeout|\*\*\*" $OUT/call6-ctest-gpu.txt | tail -12
