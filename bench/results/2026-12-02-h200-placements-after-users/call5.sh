#!/bin/bash
# Call 5 (a freshly started machine): GPT-2 350M at 2x, A ([1]) against B ([2]), eight steps (the
# change of 2026-11-30 most like this one ran it 13% slower). From the repository root; results
# into $OUT.
set -uo pipefail
d=bench/results/2026-12-02-h200-placements-after-users
$d/ab.sh || exit 1
s=$(date +%s)
timeout 170 python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so \
  --sweep /tmp/bn/tests/sweep --modes "fastest 2x" --steps 8 --out $OUT/zoo \
  --only gpt2-350m > $OUT/call5-zoo.txt 2>&1
echo "zoo exit $? in $(( $(date +%s)-s ))s"
tar czf $OUT/call5-zoo.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -v "^\[" $OUT/call5-zoo.txt | tail -6
