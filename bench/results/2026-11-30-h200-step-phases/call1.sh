#!/bin/bash
# Call 1: the GPU tests on 3264842 (first run of `ctest -L gpu` since d1dd019), then the zoo at 2x
# for the workloads not run on d1dd019: the CUDA sweep, the CuPy loop, GPT-2 124M and ResNet-152.
# Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || { tail -30 /tmp/bn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
(cd /tmp/bn && NCCL_NVLS_ENABLE=0 timeout 260 ctest -L gpu -j4 --output-on-failure > $OUT/call1-ctest-gpu.txt 2>&1; echo "ctest exit $?")
echo "ctest at $(( $(date +%s)-s ))s"
timeout $(( 585 - ($(date +%s)-s) )) python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --out $OUT/zoo --modes "fastest 2x" --steps 10 --only cuda-sweep cupy gpt2 resnet152 > $OUT/call1-zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
mv $OUT/zoo/zoo.json $OUT/call1-zoo.json 2>/dev/null; tar czf $OUT/call1-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -E "tests passed|tests failed|Failed|Timeout|\*\*\*" $OUT/call1-ctest-gpu.txt | tail -12
grep -E "^(cuda-sweep|cupy|gpt2|resnet)" $OUT/call1-zoo.txt | tail -12
