#!/bin/bash
# Call 4: the 1B decoder and GPT-2 124M at 2x over 12 steps with the copy kernel (the working
# tree): whether the decoder's steps settle once its loop of addresses is learned.
set -uo pipefail
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || tail -30 /tmp/bn.log
echo "build $(( $(date +%s)-s ))s"
timeout 220 python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --out $OUT/zoo --modes "fastest 2x" --steps 12 --only llama-1b gpt2 > $OUT/zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
tar czf $OUT/zoo-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -hE "^step|loss" $OUT/zoo.txt | head -0
tail -5 $OUT/zoo.txt
