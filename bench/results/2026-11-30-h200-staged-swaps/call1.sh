#!/bin/bash
# Call 1: bench/staged_swap_probe.cu, swaps through 32 MiB buffers (as the eviction thread makes
# them) against swaps through a staging area the size of two arrays, with and without copies to
# the GPU beside. Run from the repository root on the GPU machine.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv
DEEPUM_BUILD_TARGETS="staged_swap_probe" scripts/build.sh /tmp/bp -DDEEPUM_WARNINGS_AS_ERRORS=OFF > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
for mib in 256 1024; do /tmp/bp/bin/staged_swap_probe $mib; done 2>&1 | tee $OUT/probe.txt
