#!/bin/bash
set -uo pipefail
export NCCL_NVLS_ENABLE=0
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
lib=/tmp/bn/lib/libdeepum.so
export DEEPUM_ALLOC_LIMIT=16GiB DEEPUM_MODE=fast
for i in 1 2; do
s=$(date +%s); timeout 300 bash tests/integration/two_devices_losses.sh $lib examples/pytorch/train_two_gpus.py --steps 6 > $OUT/two-devices-$i.txt 2>&1; echo "RESULT two_devices rc=$? $(( $(date +%s)-s ))s"
grep -v "info\]   " $OUT/two-devices-$i.txt | tail -25
done
