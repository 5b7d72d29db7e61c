#!/bin/bash
# Call 1: every target of B; the drop probe (bench/drop_overlap_probe.cu) twice; `ctest -L gpu` on
# B, four tests at a time; then the zoo at 2x, A ([1]) against B ([2]), eight steps: the CuPy loop
# and the CUDA sweep. From the repository root; results into $OUT.
set -uo pipefail
d=bench/results/2026-12-02-h200-drop-overlap
BN_TARGETS="" $d/ab.sh || exit 1
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv > $OUT/call1-probe.txt
for run in 1 2; do /tmp/bn/bin/drop_overlap_probe 256 8 >> $OUT/call1-probe.txt 2>&1; done
/tmp/bn/bin/drop_overlap_probe 64 32 >> $OUT/call1-probe.txt 2>&1
s=$(date +%s)
(cd /tmp/bn && NCCL_NVLS_ENABLE=0 timeout 200 ctest -L gpu -j4 --output-on-failure) > $OUT/call1-ctest-gpu.txt 2>&1
echo "ctest exit $? in $(( $(date +%s)-s ))s"; grep -E "tests passed|Failed|\*\*\*" $OUT/call1-ctest-gpu.txt | tail -8
s=$(date +%s)
timeout 200 python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so \
  --sweep /tmp/bn/tests/sweep --modes "fastest 2x" --steps 8 --out $OUT/zoo \
  --only cupy cuda-sweep > $OUT/call1-zoo.txt 2>&1
echo "zoo exit $? in $(( $(date +%s)-s ))s"
tar czf $OUT/call1-zoo.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -v "^\[" $OUT/call1-zoo.txt | tail -12
cat $OUT/call1-probe.txt
