#!/bin/bash
# Call 3: dependent_call_probe with the array resident, dropped or on the host before each call,
# and behind nothing as well, at 256 MiB (one array of the CUDA sweep).
set -uo pipefail
DEEPUM_BUILD_TARGETS="dependent_call_probe" scripts/build.sh /tmp/bp -DDEEPUM_BUILD_BENCH=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bp.log 2>&1 || { tail -30 /tmp/bp.log; exit 1; }
timeout 120 /tmp/bp/bin/dependent_call_probe 256 > $OUT/call3-probe.txt 2>&1; echo "probe exit $?"
cat $OUT/call3-probe.txt
