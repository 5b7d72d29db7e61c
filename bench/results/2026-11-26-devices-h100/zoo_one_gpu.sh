#!/bin/bash
set -uo pipefail
nvidia-smi --query-gpu=name,memory.free --format=csv,noheader
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bz -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
timeout 420 python3 tests/zoo/model_zoo.py --lib /tmp/bz/lib/libdeepum.so --sweep /tmp/bz/tests/sweep --out $OUT/zoo --modes "fastest 2x" --only cuda-sweep cupy gpt2 2>&1 | tail -25
