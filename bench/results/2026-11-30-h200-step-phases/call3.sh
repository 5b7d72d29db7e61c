#!/bin/bash
# Call 3: where a step goes at 2x, phase by phase, on 3264842: traces (trace_file) of the 1B
# decoder, GPT-2 350M, BERT-large and T5-base at 2x (mode fast, the resident limit half the native
# footprint the zoo measured on 2026-11-30), and of the decoder with no resident limit, eight steps
# each, split into backward, optimizer and forward by bench/phase_breakdown.py.
# Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || { tail -30 /tmp/bn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
python3 bench/pinned_copy_rate.py > $OUT/call3-link.txt 2>&1; tail -1 $OUT/call3-link.txt
mkdir -p /tmp/t $OUT/runs
run() {  # NAME FOOTPRINT(0: no limit) SECONDS COMMAND...
  local name=$1 footprint=$2 limit=$3; shift 3
  local env=(DEEPUM_ALLOC_LIMIT=60% DEEPUM_MODE=fast DEEPUM_TRACE_FILE=/tmp/t/$name DEEPUM_STATS_FILE=$OUT/runs/$name.stats.json)
  [ "$footprint" != 0 ] && env+=(DEEPUM_RESIDENT_LIMIT=$(( footprint / 2 ))B)
  env "${env[@]}" LD_PRELOAD=/tmp/bn/lib/libdeepum.so timeout $limit "$@" > $OUT/runs/$name.log 2>&1
  echo "$name exit $? at $(( $(date +%s)-s ))s: $(grep -oE 'time_ms [0-9.]+' $OUT/runs/$name.log | awk '{printf "%.0f ", $2}')"
  python3 bench/phase_breakdown.py /tmp/t/$name.perfetto.json > $OUT/runs/$name.phases.txt 2>&1
  cat $OUT/runs/$name.phases.txt | tail -4
}
hf=examples/zoo/train_hf.py
run llama-1b-2x 19566428160 150 python3 $hf --model llama-1b --batch 4 --seq-len 512 --vocab 32000 --steps 8
run llama-1b-nolimit 0 90 python3 $hf --model llama-1b --batch 4 --seq-len 512 --vocab 32000 --steps 8
run gpt2-350m-2x 22691184640 120 python3 examples/pytorch/train_gpt2.py --preset gpt2-350m --batch 8 --steps 8 --warmup-steps 1
run bert-large-2x 20965228544 120 python3 $hf --model bert-large --batch 16 --seq-len 512 --steps 8
run t5-base-2x 13136560128 90 python3 $hf --model t5-base --batch 16 --seq-len 512 --steps 8
xz -T4 -c /tmp/t/llama-1b-2x.dtrace > $OUT/call3-llama-1b-2x.dtrace.xz
tar czf $OUT/call3-runs.tar.gz -C $OUT runs && rm -rf $OUT/runs
echo "done at $(( $(date +%s)-s ))s"
