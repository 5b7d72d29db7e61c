#!/bin/bash
# Call 2: traces (trace_file) of BERT-large and GPT-2 124M at 2x with swap-timing.patch as in call 1,
# six steps, kept for reading the backward's timeline; the phase split of bench/phase_breakdown.py.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || { tail -30 /tmp/bn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
mkdir -p /tmp/t $OUT/runs
run() {  # NAME FOOTPRINT COMMAND...
  local name=$1 footprint=$2; shift 2
  env DEEPUM_ALLOC_LIMIT=60% DEEPUM_MODE=fast DEEPUM_RESIDENT_LIMIT=$(( footprint / 2 ))B \
    DEEPUM_TRACE_FILE=/tmp/t/$name DEEPUM_STATS_FILE=$OUT/runs/$name.stats.json X_SWAPPROF=$OUT/runs/$name.swaps \
    LD_PRELOAD=/tmp/bn/lib/libdeepum.so timeout 120 "$@" > $OUT/runs/$name.log 2>&1
  echo "$name exit $? at $(( $(date +%s)-s ))s: $(grep -oE 'time_ms [0-9.]+' $OUT/runs/$name.log | awk '{printf "%.0f ", $2}')"
  python3 bench/phase_breakdown.py /tmp/t/$name.perfetto.json > $OUT/runs/$name.phases.txt 2>&1
  tail -4 $OUT/runs/$name.phases.txt
  xz -T8 -c /tmp/t/$name.dtrace > $OUT/call2-$name-2x.dtrace.xz
}
hf=examples/zoo/train_hf.py
{
  run bert-large 20965228544 python3 $hf --model bert-large --batch 16 --seq-len 512 --steps 6
  run gpt2-124m 12073304064 python3 examples/pytorch/train_gpt2.py --preset gpt2-124m --batch 8 --steps 6 --warmup-steps 1
} 2>&1 | tee $OUT/call2-runs.txt
tar czf $OUT/call2-runs.tar.gz -C $OUT runs && rm -rf $OUT/runs
ls -la $OUT
echo "done at $(( $(date +%s)-s ))s"
