#!/bin/bash
# Call 5: is T5-base's slowdown with the placement change the evictions ahead of a predicted peak?
# A and B (ab.sh), and each with no-peaks.patch (room_for_peaks off: no eviction ahead of a
# predicted peak), A' in /tmp/bbp and B' in /tmp/bnp; the zoo at 2x on T5-base, eight steps, with
# [1] A, [2] B, [3] A', [4] B', twice. From the repository root; results into $OUT.
set -uo pipefail
d=bench/results/2026-12-02-h200-drop-overlap
$d/ab.sh || exit 1
s=$(date +%s)
root=$(pwd)
for side in b n; do
  src=$([[ $side == b ]] && echo /tmp/base || echo .)
  rm -rf /tmp/p$side && cp -a $src /tmp/p$side && (cd /tmp/p$side && patch -s -p1 < "$root/$d/no-peaks.patch") || exit 1
  DEEPUM_BUILD_TARGETS="deepum" /tmp/p$side/scripts/build.sh /tmp/b${side}p -DDEEPUM_WARNINGS_AS_ERRORS=OFF > /tmp/build${side}p.log 2>&1 &
done
wait
for side in b n; do [[ -f /tmp/b${side}p/lib/libdeepum.so ]] || { tail -20 /tmp/build${side}p.log; exit 1; }; done
echo "patched builds $(( $(date +%s)-s ))s"
for round in 1 2; do
  s=$(date +%s)
  timeout 250 python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so \
    /tmp/bbp/lib/libdeepum.so /tmp/bnp/lib/libdeepum.so --sweep /tmp/bn/tests/sweep --modes "fastest 2x" \
    --steps 8 --out $OUT/zoo$round --only t5-base > $OUT/call5-zoo$round.txt 2>&1
  echo "zoo $round exit $? in $(( $(date +%s)-s ))s"
  grep -v "^\[" $OUT/call5-zoo$round.txt | tail -9
done
tar czf $OUT/call5-zoo.tar.gz -C $OUT zoo1 zoo2 && rm -rf $OUT/zoo1 $OUT/zoo2
