#!/bin/bash
# Call 6: the swaps' copies out in the program's context, the managed side by deepum's copy
# kernel, issued by the eviction thread; drops in the thread's context, on a stream apart from the
# copies (kernel-copies.patch, the working tree, [3]); the same without the next swap begun while
# one's copies run ([2]: begin_next_swap never begins one); HEAD ([1], the patch taken back out).
# The zoo at 2x, ten steps, the three builds in the same call. Run from the repository root.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
here=bench/results/2026-11-29-h200-overlapped-swaps
rm -rf /tmp/base /tmp/k && cp -a . /tmp/base && cp -a . /tmp/k && (cd /tmp/base && patch -s -R -p1 < $here/kernel-copies.patch) || exit 1
sed -i 's/    if (next_ || copy_stream_ == stream_ ||/    if (true || next_ || copy_stream_ == stream_ ||/' /tmp/k/cuda/src/eviction_thread.cpp
grep -q "if (true || next_" /tmp/k/cuda/src/eviction_thread.cpp || exit 1
b() { DEEPUM_BUILD_TARGETS="deepum sweep" $1/scripts/build.sh $2 -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF > $2.log 2>&1 || { tail -30 $2.log; return 1; }; }
b /tmp/base /tmp/bb & p1=$!
b /tmp/k /tmp/bk & p2=$!
b . /tmp/bn || exit 1
wait $p1 && wait $p2 || exit 1
ls /tmp/bb/lib/libdeepum.so /tmp/bk/lib/libdeepum.so /tmp/bn/lib/libdeepum.so || exit 1
echo "builds $(( $(date +%s)-s ))s"
zoo() {  # NAME SECONDS WORKLOADS...
  local name=$1 limit=$2
  shift 2
  timeout $limit python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bk/lib/libdeepum.so /tmp/bn/lib/libdeepum.so \
    --sweep /tmp/bn/tests/sweep --out $OUT/$name --modes "fastest 2x" --steps 10 --only "$@" > $OUT/call6-$name.txt 2>&1
  echo "zoo $name exit $? at $(( $(date +%s)-s ))s"
  mv $OUT/$name/zoo.json $OUT/call6-$name.json 2>/dev/null
}
zoo loops 120 cuda-sweep cupy
zoo models $(( 520 - ($(date +%s) - s) )) gpt2 llama-1b
tar czf $OUT/call6-logs.tar.gz -C $OUT loops models && rm -rf $OUT/loops $OUT/models
grep -hE "^(gpt2|llama|cuda-sweep|cupy)" $OUT/call6-loops.txt $OUT/call6-models.txt | sort | uniq
