#!/bin/bash
# zoo2x.sh [--ctest] WORKLOAD...: main's head (the working tree) built into /tmp/bn with its tests,
# `ctest -L gpu` with --ctest, then the zoo natively and at 2x on the workloads named, five steps.
# From the repository root; results into $OUT (callN-*.txt, callN-zoo.tar.gz; N from $CALL).
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
ctest=0
[[ ${1:-} == --ctest ]] && { ctest=1; shift; }
# Built again every call (incrementally): call 2 found call 1's build of the change with the launch
# probe in /tmp/bn, and ran its ctest and zoo on that.
targets="deepum sweep"
(( ctest )) && targets=""
DEEPUM_BUILD_TARGETS=$targets scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF > /tmp/buildn.log 2>&1 ||
  { tail -30 /tmp/buildn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
if (( ctest )); then
  (cd /tmp/bn && NCCL_NVLS_ENABLE=0 timeout 170 ctest -L gpu -j4 --output-on-failure) > $OUT/call$CALL-ctest-gpu.txt 2>&1
  echo "ctest exit $? at $(( $(date +%s)-s ))s"; tail -4 $OUT/call$CALL-ctest-gpu.txt
fi
timeout ${ZOO_TIMEOUT:-330} python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --modes "fastest 2x" --steps 5 --out $OUT/zoo --only "$@" > $OUT/call$CALL-zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
tar czf $OUT/call$CALL-zoo.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -v "^\[" $OUT/call$CALL-zoo.txt | tail -14
