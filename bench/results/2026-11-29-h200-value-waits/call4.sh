#!/bin/bash
# Call 4: value_wait_check as call 3, its second stream now taking its arrays over from the first
# after an event (call 3 raced them natively), natively, under 6338e39 (value-waits.patch
# reversed), bounded by 40 s, and five times under the working tree.
set -uo pipefail
d=bench/results/2026-11-29-h200-value-waits
s=$(date +%s)
rm -rf /tmp/base && mkdir /tmp/base && cp -a . /tmp/base/ && (cd /tmp/base && patch -s -R -p1 < $d/value-waits.patch) || exit 1
(cd /tmp/base && DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bb -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bb.log 2>&1 || tail -30 /tmp/bb.log) &
(DEEPUM_BUILD_TARGETS="deepum value_wait_check" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || tail -30 /tmp/bn.log) &
wait
echo "build $(( $(date +%s)-s ))s"
check=/tmp/bn/tests/value_wait_check
run() {  # NAME SECONDS ENV...
  local out=$OUT/call4-$1 limit=$2 began=$(date +%s); shift 2
  env "$@" timeout -s KILL $limit $check --arrays 4 --mib 64 --rounds 8 > $out.txt 2>&1
  local rc=$?
  local held=$(python3 -c "import json;e=json.load(open('$out.stats.json'))['engine'];print(e['moves']['swapped_out_bytes']>>20, e.get('held_by_value_waits','-'))" 2>/dev/null)
  echo "$(basename $out): exit $rc after $(( $(date +%s)-began ))s, swapped MiB / operations held: ${held:--}; $(grep -E 'FAIL|PASS|enqueued|synchronized' $out.txt | tr '\n' '|')"
}
lim="DEEPUM_ALLOC_LIMIT=1GiB DEEPUM_RESIDENT_LIMIT=160MiB DEEPUM_MODE=fast"
{
  run native 30 A=1
  run base 40 $lim DEEPUM_STATS_FILE=$OUT/call4-base.stats.json LD_PRELOAD=/tmp/bb/lib/libdeepum.so
  for r in 1 2 3 4 5; do run new-$r 60 $lim DEEPUM_STATS_FILE=$OUT/call4-new-$r.stats.json LD_PRELOAD=/tmp/bn/lib/libdeepum.so; done
} | tee $OUT/call4-checks.txt
tar czf $OUT/call4-runs.tar.gz -C $OUT $(cd $OUT && ls call4-native* call4-base* call4-new*) && (cd $OUT && rm -f call4-native* call4-base* call4-new*)
