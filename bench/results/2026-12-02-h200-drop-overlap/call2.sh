#!/bin/bash
# Call 2: bench/drop_overlap_probe.cu with the order "piece first" added, three times at 256 MiB
# and once at 64 MiB. From the repository root; results into $OUT.
set -uo pipefail
DEEPUM_BUILD_TARGETS="drop_overlap_probe" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_BENCH=ON \
  -DDEEPUM_WARNINGS_AS_ERRORS=OFF > /tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv > $OUT/call2-probe.txt
for run in 1 2 3; do /tmp/bn/bin/drop_overlap_probe 256 8 >> $OUT/call2-probe.txt 2>&1; done
/tmp/bn/bin/drop_overlap_probe 64 32 >> $OUT/call2-probe.txt 2>&1
cat $OUT/call2-probe.txt
