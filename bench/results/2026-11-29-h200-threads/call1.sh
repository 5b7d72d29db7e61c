#!/bin/bash
# Call 1: threads_streams_check (eight threads launching at once, with swaps) under fce2d17's
# successor d3ecd50 (threads.patch reversed) and under the working tree, both streams, three runs
# each; then the GPU tests on the working tree.
set -uo pipefail
d=bench/results/2026-11-29-h200-threads
s=$(date +%s)
rm -rf /tmp/base && mkdir /tmp/base && cp -a . /tmp/base/ && (cd /tmp/base && patch -s -R -p1 < $d/threads.patch) || exit 1
(cd /tmp/base && DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bb -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bb.log 2>&1 || tail -30 /tmp/bb.log) &
(scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || tail -30 /tmp/bn.log) &
wait
echo "build $(( $(date +%s)-s ))s"
check=/tmp/bn/tests/threads_streams_check
for lib in bb bn; do
  for kind in per-thread legacy; do
    for run in 1 2 3; do
      out=$OUT/call1-$lib-$kind-$run
      DEEPUM_ALLOC_LIMIT=1GiB DEEPUM_RESIDENT_LIMIT=160MiB DEEPUM_MODE=fast DEEPUM_STATS_FILE=$out.stats.json \
        LD_PRELOAD=/tmp/$lib/lib/libdeepum.so timeout 120 $check --threads 8 --arrays 4 --mib 16 --steps 150 --stream $kind \
        > $out.txt 2>&1
      rc=$?
      swapped=$(python3 -c "import json;m=json.load(open('$out.stats.json'))['engine']['moves'];print(m['swapped_out_bytes']>>20, m.get('victims_unenqueued_blocks','-'), m.get('swaps_held_by_unenqueued','-'))" 2>/dev/null)
      echo "$lib $kind run $run: exit $rc, swapped MiB / unenqueued victims passed / swaps held: $swapped; $(grep -m1 -E 'FAIL|every value' $out.txt)"
    done
  done
done | tee $OUT/call1-checks.txt
echo "checks at $(( $(date +%s)-s ))s"
(cd /tmp/bn && NCCL_NVLS_ENABLE=0 timeout $(( 570 - ($(date +%s)-s) )) ctest -L gpu -j2 --output-on-failure > $OUT/call1-ctest-gpu.txt 2>&1; echo "ctest exit $?")
echo "ctest at $(( $(date +%s)-s ))s"
tar czf $OUT/call1-runs.tar.gz -C $OUT $(cd $OUT && ls call1-b*) && (cd $OUT && rm -f call1-bb-* call1-bn-*)
grep -E "tests passed|tests failed|Failed|Timeout|\*\*\*" $OUT/call1-ctest-gpu.txt | tail -12
cat $OUT/call1-checks.txt
