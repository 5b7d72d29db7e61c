#!/bin/bash
# Call 2: gpu_pytorch_lifecycle's thread churn summed to nan in call 1 under the working tree. The
# churn alone (churn.py), four runs each: the working tree (bn), fce2d17 (bb), and the working
# tree with the eviction thread's copies out through the batched call, no copy kernel (bk).
set -uo pipefail
d=bench/results/2026-11-28-h200-plan-ahead
s=$(date +%s)
rm -rf /tmp/nok && mkdir /tmp/nok && cp -a . /tmp/nok/ && (cd /tmp/nok && sed -i 's|staging_.allocate(/\*with_kernel=\*/true)|staging_.allocate(/*with_kernel=*/false)|' cuda/src/eviction_thread.cpp && grep -c "with_kernel=\*/false" cuda/src/eviction_thread.cpp) || exit 1
(cd /tmp/nok && DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bk -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bk.log 2>&1 || tail -30 /tmp/bk.log)
echo "build $(( $(date +%s)-s ))s"
py=$(command -v python3)
for i in 1 2 3 4; do
  for lib in bn bb bk; do
    printf '%s run %d: ' $lib $i
    DEEPUM_ALLOC_LIMIT=4GiB DEEPUM_RESIDENT_LIMIT=96MiB DEEPUM_MODE=fast DEEPUM_STATS_FILE=$OUT/churn-$lib-$i.json LD_PRELOAD=/tmp/$lib/lib/libdeepum.so \
      timeout 60 $py $d/churn.py 2>$OUT/churn-$lib-$i.log | tail -1
  done
done
echo "done at $(( $(date +%s)-s ))s"
cd $OUT && tar czf call2-logs.tar.gz churn-* && rm -f churn-*
