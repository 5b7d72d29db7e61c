#!/bin/bash
# Call 1: the working tree (the GPU's waits behind deepum's moves told apart from the program's
# own): the library and the GPU test of swaps at 2x, then ResNet-152 at 1x (the resident limit its
# native peak, as the zoo's 1x) with its exit summary. From the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF \
  > /tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
(cd /tmp/bn && NCCL_NVLS_ENABLE=0 timeout 100 ctest -R gpu_pytorch_swap_losses --output-on-failure) > $OUT/call1-ctest.txt 2>&1
echo "ctest exit $?"; grep -E "verdict|Passed|Failed|tests passed" $OUT/call1-ctest.txt
env DEEPUM_MODE=fast DEEPUM_RESIDENT_LIMIT=6675234816B DEEPUM_ALLOC_LIMIT=60% DEEPUM_STATS_FILE=$OUT/resnet152-1x.stats.json \
  LD_PRELOAD=/tmp/bn/lib/libdeepum.so timeout 90 /opt/torch/.venv/bin/python3 examples/pytorch/train_resnet.py \
  --model resnet152 --batch 32 --steps 6 --warmup-steps 1 > $OUT/resnet152-1x.log 2>&1
echo "resnet152 1x exit $?"
grep -E "^step|GPU \(summed|verdict" $OUT/resnet152-1x.log
