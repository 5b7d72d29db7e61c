#!/bin/bash
# Call 5: call 3's phase breakdown for two more shapes on 29c0ffe (the library as 3264842):
# ResNet-152 (SGD with momentum) and GPT-2 124M at 2x, mode fast, the resident limit half the
# footprint call 1's zoo measured, eight steps each with trace_file.
# Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || { tail -30 /tmp/bn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
mkdir -p /tmp/t $OUT/runs
run() {  # NAME FOOTPRINT COMMAND...
  local name=$1 footprint=$2; shift 2
  env DEEPUM_ALLOC_LIMIT=60% DEEPUM_MODE=fast DEEPUM_TRACE_FILE=/tmp/t/$name DEEPUM_STATS_FILE=$OUT/runs/$name.stats.json \
    DEEPUM_RESIDENT_LIMIT=$(( footprint / 2 ))B LD_PRELOAD=/tmp/bn/lib/libdeepum.so timeout 90 "$@" > $OUT/runs/$name.log 2>&1
  echo "$name exit $? at $(( $(date +%s)-s ))s: $(grep -oE 'time_ms [0-9.]+' $OUT/runs/$name.log | awk '{printf "%.0f ", $2}')"
  python3 bench/phase_breakdown.py /tmp/t/$name.perfetto.json > $OUT/runs/$name.phases.txt 2>&1
  tail -4 $OUT/runs/$name.phases.txt
}
run resnet152-2x 6675234816 python3 examples/pytorch/train_resnet.py --model resnet152 --batch 32 --steps 8 --warmup-steps 1
run gpt2-124m-2x 12073304064 python3 examples/pytorch/train_gpt2.py --preset gpt2-124m --batch 8 --steps 8 --warmup-steps 1
tar czf $OUT/call5-runs.tar.gz -C $OUT runs && rm -rf $OUT/runs
echo "done at $(( $(date +%s)-s ))s"
