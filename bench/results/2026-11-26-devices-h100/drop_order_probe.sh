#!/bin/bash
set -uo pipefail
nvidia-smi --query-gpu=name,memory.free --format=csv
DEEPUM_BUILD_TARGETS=drop_order_probe scripts/build.sh /tmp/bp -DDEEPUM_BUILD_BENCH=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
for args in "64 30" "512 10" "32 60"; do
  echo "== drop_order_probe $args"
  timeout 200 /tmp/bp/bin/drop_order_probe $args 2>&1 | tee -a $OUT/probe.txt
done
