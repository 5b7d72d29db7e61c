#!/bin/bash
set -uo pipefail
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv
s=$(date +%s)
scripts/build.sh /tmp/bt -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
python3 bench/pinned_copy_rate.py --json $OUT/link-gpu0.json 2>&1 | tail -2
CUDA_VISIBLE_DEVICES=1 python3 bench/pinned_copy_rate.py --json $OUT/link-gpu1.json 2>&1 | tail -2
cd /tmp/bt
s=$(date +%s)
ctest -R "gpu_ddp_losses|gpu_fsdp2_losses|gpu_two_devices_losses" --output-on-failure -V > $OUT/ctest-two-gpus.log 2>&1
echo "two-GPU tests $(( $(date +%s)-s ))s"; grep -E "tests passed|Passed|Failed|\*\*\*" $OUT/ctest-two-gpus.log | tail -6
grep -E "^[0-9]+: (step|device|losses|native|deepum)" $OUT/ctest-two-gpus.log | grep -v "info\]   " | tail -40 > $OUT/two-gpu-lines.txt
s=$(date +%s)
rest='tracer_stress|gpu_ddp_losses|gpu_fsdp2_losses|gpu_two_devices_losses'
CUDA_VISIBLE_DEVICES=0 ctest -L gpu -E "$rest" -I 1,,2 --output-on-failure --output-log $OUT/ctest-gpu-a.log > $OUT/ctest-gpu-a.txt 2>&1 &
CUDA_VISIBLE_DEVICES=1 ctest -L gpu -E "$rest" -I 2,,2 --output-on-failure --output-log $OUT/ctest-gpu-b.log > $OUT/ctest-gpu-b.txt 2>&1 &
wait
echo "one-GPU tests $(( $(date +%s)-s ))s"
tail -6 $OUT/ctest-gpu-a.txt; tail -6 $OUT/ctest-gpu-b.txt
cd $OUT && tar czf ctest-logs.tar.gz ctest-gpu-a.log ctest-gpu-b.log ctest-two-gpus.log && rm ctest-gpu-a.log ctest-gpu-b.log
