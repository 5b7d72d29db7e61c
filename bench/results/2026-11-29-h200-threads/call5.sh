#!/bin/bash
# Call 5: threads_streams_check --copy-2d-side (a 2-D copy in a second stream of each thread), the
# working tree [bn] against it without side.patch [bb] (swaps not ordered after another stream's
# undecoded operations), three runs each; then the threads and unnamed-write GPU tests.
set -uo pipefail
d=bench/results/2026-11-29-h200-threads
s=$(date +%s)
rm -rf /tmp/base && mkdir /tmp/base && cp -a . /tmp/base/ && (cd /tmp/base && patch -s -R -p1 < $d/side.patch) || exit 1
(cd /tmp/base && DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bb -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bb.log 2>&1 || tail -30 /tmp/bb.log) &
(DEEPUM_BUILD_TARGETS="deepum threads_streams_check" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || tail -30 /tmp/bn.log) &
wait
echo "build $(( $(date +%s)-s ))s"
check=/tmp/bn/tests/threads_streams_check
for lib in bb bn; do
  for run in 1 2 3; do
    out=$OUT/call5-$lib-$run
    DEEPUM_ALLOC_LIMIT=1GiB DEEPUM_RESIDENT_LIMIT=96MiB DEEPUM_MODE=fast DEEPUM_STATS_FILE=$out.stats.json \
      LD_PRELOAD=/tmp/$lib/lib/libdeepum.so timeout 60 $check --threads 4 --arrays 2 --mib 16 --steps 20 --copy-2d-side \
      > $out.txt 2>&1
    rc=$?
    swapped=$(python3 -c "import json;m=json.load(open('$out.stats.json'))['engine']['moves'];print(m['swapped_out_bytes']>>20, m['unswaps'])" 2>/dev/null)
    echo "$lib copy-2d-side run $run: exit $rc, swapped MiB / unswaps: $swapped; $(grep -m1 -E 'FAIL|every value' $out.txt)"
  done
done | tee $OUT/call5-checks.txt
echo "checks at $(( $(date +%s)-s ))s"
(cd /tmp/bn && timeout $(( 200 - ($(date +%s)-s) )) ctest -R "gpu_threads_streams|gpu_pytorch_unnamed_writes_swap" -j2 --output-on-failure > $OUT/call5-ctest.txt 2>&1; echo "ctest exit $?")
echo "ctest at $(( $(date +%s)-s ))s"
tar czf $OUT/call5-runs.tar.gz -C $OUT $(cd $OUT && ls call5-b*) && (cd $OUT && rm -f call5-bb-* call5-bn-*)
grep -E "tests passed|tests failed|Failed|Passed|\*\*\*" $OUT/call5-ctest.txt | tail -8
cat $OUT/call5-checks.txt
