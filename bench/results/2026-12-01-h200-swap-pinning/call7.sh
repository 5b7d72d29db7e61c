#!/bin/bash
# Call 7: why pinning beside the program is slower than alone: the probe again, now also with two
# threads pinning at once and with pinning beside moves of 1 GiB of managed memory. From the
# repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="pin_rate_probe" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_BENCH=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF \
  > /tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
timeout 150 /tmp/bn/bin/pin_rate_probe 2 > $OUT/call7-pin-probe.txt 2>&1; echo "probe exit $?"; cat $OUT/call7-pin-probe.txt
