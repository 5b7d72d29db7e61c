#!/bin/bash
# Call 3 (and 4, with placements and a kernel writing to the host added to the probe): bench/drop_beside_probe.cu,
# how long a drop (and a placement) holds its caller beside each kind of work, and the rates of each
# kind alone and beside a copy the other way. Run from the repository root; results into $OUT.
set -euo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
nvcc -O2 -std=c++17 -arch=sm_90 -Ibench bench/drop_beside_probe.cu -lcuda -o /tmp/drop_beside_probe
for mib in 256 512; do /tmp/drop_beside_probe $mib; done 2>&1 | tee $OUT/call${CALL:-3}-drop-beside.txt
