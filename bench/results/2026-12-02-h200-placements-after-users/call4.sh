#!/bin/bash
# Call 4: the zoo at 2x again, A ([1]) against B ([2]), eight steps: T5-base (slower with B in
# calls 1 and 2), BERT-large (the most faster in call 1). From the repository root; results into
# $OUT.
set -uo pipefail
d=bench/results/2026-12-02-h200-placements-after-users
$d/ab.sh || exit 1
s=$(date +%s)
timeout 330 python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so \
  --sweep /tmp/bn/tests/sweep --modes "fastest 2x" --steps 8 --out $OUT/zoo \
  --only t5-base bert-large > $OUT/call4-zoo.txt 2>&1
echo "zoo exit $? in $(( $(date +%s)-s ))s"
tar czf $OUT/call4-zoo.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -v "^\[" $OUT/call4-zoo.txt | tail -8
