#!/bin/bash
# Call 8: the probe with pinning beside managed moves in 64 MiB and in 256 MiB pieces (whether the
# wait for a move in flight is paid per call). From the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="pin_rate_probe" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_BENCH=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF \
  > /tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
timeout 150 /tmp/bn/bin/pin_rate_probe 2 > $OUT/call8-pin-probe.txt 2>&1; echo "probe exit $?"; cat $OUT/call8-pin-probe.txt
