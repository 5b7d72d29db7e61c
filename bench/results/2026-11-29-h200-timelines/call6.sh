#!/bin/bash
# Call 6: traces at 2x (mode fast, the resident limit half the native footprint the zoo measured)
# of the CuPy loop, ResNet-152 and the 1B Llama-style decoder under 7ed95db, each read by
# bench/step_breakdown.py over its last three steps (the sum of their step times).
set -uo pipefail
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || { tail -30 /tmp/bn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
free=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits -i 0)
export DEEPUM_ALLOC_LIMIT="$(( free * 6 / 10 ))MiB" DEEPUM_MODE=fast
trace() {  # NAME FOOTPRINT_BYTES ARGS...: a traced run at half the footprint, then its breakdown
  local name=$1 footprint=$2; shift 2
  LD_PRELOAD=/tmp/bn/lib/libdeepum.so DEEPUM_RESIDENT_LIMIT=$(( footprint / 2 ))B DEEPUM_TRACE_FILE=/tmp/tr-$name \
    timeout 200 "$@" > $OUT/$name.txt 2>&1
  echo "trace $name exit $? at $(( $(date +%s)-s ))s"
  local last=$(grep "^step" $OUT/$name.txt | tail -3 | awk '{s+=$6} END {print s}')
  python3 bench/step_breakdown.py /tmp/tr-$name.perfetto.json --last-ms $last > $OUT/$name-breakdown.txt 2>&1
}
trace cupy 4576378880 python3 examples/zoo/cupy_loop.py --arrays 16 --mib 256 --steps 6
trace resnet152 6675234816 python3 examples/pytorch/train_resnet.py --model resnet152 --batch 32 --steps 6 --warmup-steps 1
trace llama-1b 19566428160 python3 examples/zoo/train_hf.py --model llama-1b --batch 4 --seq-len 512 --vocab 32000 --steps 5
tar czf $OUT/call6-runs.tar.gz -C $OUT $(cd $OUT && ls *.txt) && (cd $OUT && rm -f *.txt)
tar xzf $OUT/call6-runs.tar.gz -C /tmp && for n in cupy resnet152 llama-1b; do echo "== $n"; grep "^step" /tmp/$n.txt | tail -3; cat /tmp/$n-breakdown.txt; done
