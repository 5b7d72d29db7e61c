#!/bin/bash
# Call 1: where a step goes at 2x on main with the peak evictions (f55fe3c): traces (trace_file) of
# T5-base, GPT-2 124M and BERT-large at 2x (mode fast, the resident limit half the native footprint
# the zoo measured on 2026-11-30) and of T5-base with no resident limit, eight steps each, split into
# backward, optimizer and forward by bench/phase_breakdown.py, with row 5's forward and backward in
# 5 ms buckets. Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || { tail -30 /tmp/bn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
python3 bench/pinned_copy_rate.py > $OUT/call1-link.txt 2>&1; tail -1 $OUT/call1-link.txt
mkdir -p /tmp/t $OUT/runs
run() {  # NAME FOOTPRINT(0: no limit) SECONDS COMMAND...
  local name=$1 footprint=$2 limit=$3; shift 3
  local env=(DEEPUM_ALLOC_LIMIT=60% DEEPUM_MODE=fast DEEPUM_TRACE_FILE=/tmp/t/$name DEEPUM_STATS_FILE=$OUT/runs/$name.stats.json)
  [ "$footprint" != 0 ] && env+=(DEEPUM_RESIDENT_LIMIT=$(( footprint / 2 ))B)
  env "${env[@]}" LD_PRELOAD=/tmp/bn/lib/libdeepum.so timeout $limit "$@" > $OUT/runs/$name.log 2>&1
  echo "$name exit $? at $(( $(date +%s)-s ))s: $(grep -oE 'time_ms [0-9.]+' $OUT/runs/$name.log | awk '{printf "%.0f ", $2}')"
  python3 bench/phase_breakdown.py /tmp/t/$name.perfetto.json > $OUT/runs/$name.phases.txt 2>&1
  tail -4 $OUT/runs/$name.phases.txt
  if [ "$footprint" != 0 ]; then
    for phase in forward backward; do
      python3 bench/phase_breakdown.py /tmp/t/$name.perfetto.json --timeline 5 $phase > $OUT/runs/$name.$phase.txt 2>&1
    done
  fi
}
hf=examples/zoo/train_hf.py
run t5-base-2x 13136560128 90 python3 $hf --model t5-base --batch 16 --seq-len 512 --steps 8
run t5-base-nolimit 0 60 python3 $hf --model t5-base --batch 16 --seq-len 512 --steps 8
run gpt2-2x 12073304064 90 python3 examples/pytorch/train_gpt2.py --preset gpt2-124m --batch 8 --steps 8 --warmup-steps 1
run bert-large-2x 20965228544 120 python3 $hf --model bert-large --batch 16 --seq-len 512 --steps 8
for n in t5-base-2x t5-base-nolimit gpt2-2x bert-large-2x; do xz -T8 -c /tmp/t/$n.dtrace > $OUT/runs/$n.dtrace.xz; done
tar cf $OUT/call1-runs.tar -C $OUT runs && rm -rf $OUT/runs
echo "done at $(( $(date +%s)-s ))s"
