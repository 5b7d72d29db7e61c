#!/bin/bash
# Call 2: traces at 2x (mode fast, the zoo's resident limits: half the native footprint) of the
# CUDA sweep and GPT-2 124M under 7ed95db, for the GPU's timeline of a step.
set -uo pipefail
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || { tail -30 /tmp/bn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
free=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits -i 0)
export DEEPUM_ALLOC_LIMIT="$(( free * 6 / 10 ))MiB" DEEPUM_MODE=fast
trace() {  # NAME LIMIT ARGS...
  local name=$1 limit=$2; shift 2
  LD_PRELOAD=/tmp/bn/lib/libdeepum.so DEEPUM_RESIDENT_LIMIT=$limit DEEPUM_TRACE_FILE=/tmp/tr-$name \
    DEEPUM_STATS_FILE=$OUT/$name.stats.json timeout 150 "$@" > $OUT/$name.txt 2>&1
  echo "trace $name exit $? at $(( $(date +%s)-s ))s"
  xz -T8 -c /tmp/tr-$name.dtrace > $OUT/$name.dtrace.xz
  xz -T8 -c /tmp/tr-$name.perfetto.json > $OUT/$name.perfetto.json.xz
}
trace sweep 2147487744B /tmp/bn/tests/sweep --arrays 16 --mib 256 --steps 6
trace gpt2 6036652032B python3 examples/pytorch/train_gpt2.py --preset gpt2-124m --batch 8 --steps 6 --warmup-steps 1
tar czf $OUT/call2-runs.tar.gz -C $OUT sweep.txt gpt2.txt sweep.stats.json gpt2.stats.json && rm -f $OUT/*.txt $OUT/*.stats.json
ls -la $OUT
