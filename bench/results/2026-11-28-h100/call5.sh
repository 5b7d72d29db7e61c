#!/bin/bash
# Call 5: the two Hugging Face models under deepum's default settings at HEAD (the settings that hung).
set -uo pipefail
nvidia-smi --query-gpu=name,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bt -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
timeout 150 python3 tests/zoo/model_zoo.py --lib /tmp/bt/lib/libdeepum.so --sweep /tmp/bt/tests/sweep --out $OUT/zoo --modes default --only bert-large llama-1b > $OUT/zoo-default.txt 2>&1
echo "zoo exit $?"
tar czf $OUT/zoo-logs-default.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
tail -6 $OUT/zoo-default.txt
