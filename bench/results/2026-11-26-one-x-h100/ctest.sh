#!/bin/bash
set -uo pipefail
nvidia-smi --query-gpu=name,memory.free --format=csv,noheader
s=$(date +%s)
scripts/build.sh /tmp/bt -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
cd /tmp/bt && timeout 500 ctest -L gpu -E "tracer_stress" --output-on-failure > $OUT/ctest-gpu.txt 2>&1
echo "rc $?"; grep -E "Test +#|tests passed|Total Test" $OUT/ctest-gpu.txt | cut -c1-120
