#!/bin/bash
# Call 1 (the first version of value_wait_check, whose flag a later kernel set: it hangs natively,
# call 2): value_wait_check over 512 MiB at a 160 MiB limit under 6338e39 (value-waits.patch reversed), bounded by
# 60 s, and three times under the working tree; then the GPU tests on the working tree.
set -uo pipefail
d=bench/results/2026-11-29-h200-value-waits
s=$(date +%s)
rm -rf /tmp/base && mkdir /tmp/base && cp -a . /tmp/base/ && (cd /tmp/base && patch -s -R -p1 < $d/value-waits.patch) || exit 1
(cd /tmp/base && DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bb -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bb.log 2>&1 || tail -30 /tmp/bb.log) &
(scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || tail -30 /tmp/bn.log) &
wait
echo "build $(( $(date +%s)-s ))s"
check=/tmp/bn/tests/value_wait_check
run() {  # LIB RUN SECONDS
  local out=$OUT/call1-$1-$2 began=$(date +%s)
  DEEPUM_ALLOC_LIMIT=1GiB DEEPUM_RESIDENT_LIMIT=160MiB DEEPUM_MODE=fast DEEPUM_STATS_FILE=$out.stats.json \
    LD_PRELOAD=/tmp/$1/lib/libdeepum.so timeout -s KILL $3 $check --arrays 4 --mib 64 --rounds 8 > $out.txt 2>&1
  local rc=$?
  local held=$(python3 -c "import json;e=json.load(open('$out.stats.json'))['engine'];print(e['moves']['swapped_out_bytes']>>20, e.get('held_by_value_waits','-'))" 2>/dev/null)
  echo "$1 run $2: exit $rc after $(( $(date +%s)-began ))s, swapped MiB / operations held: ${held:-no stats}; $(grep -m1 -E 'FAIL|PASS' $out.txt)"
}
{ run bb 1 60; for r in 1 2 3; do run bn $r 120; done; } | tee $OUT/call1-checks.txt
echo "checks at $(( $(date +%s)-s ))s"
(cd /tmp/bn && NCCL_NVLS_ENABLE=0 timeout $(( 570 - ($(date +%s)-s) )) ctest -L gpu -j2 --output-on-failure > $OUT/call1-ctest-gpu.txt 2>&1; echo "ctest exit $?")
echo "ctest at $(( $(date +%s)-s ))s"
tar czf $OUT/call1-runs.tar.gz -C $OUT $(cd $OUT && ls call1-b*) && (cd $OUT && rm -f call1-bb-* call1-bn-*)
grep -E "tests passed|tests failed|Failed|Timeout|\*\*\*" $OUT/call1-ctest-gpu.txt | tail -12
cat $OUT/call1-checks.txt
