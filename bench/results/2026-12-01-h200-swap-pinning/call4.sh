#!/bin/bash
# Call 4: B as committed (registering with or without huge pages), every target built, and the GPU
# tests. From the repository root; results into $OUT.
set -uo pipefail
d=bench/results/2026-12-01-h200-swap-pinning
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
BN_TARGETS="" $d/ab.sh || exit 1
s=$(date +%s)
(cd /tmp/bn && NCCL_NVLS_ENABLE=0 timeout 300 ctest -L gpu -j4 --output-on-failure) > $OUT/call4-ctest-gpu.txt 2>&1
echo "ctest exit $? in $(( $(date +%s)-s ))s"; tail -5 $OUT/call4-ctest-gpu.txt
