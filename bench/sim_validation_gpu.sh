#!/usr/bin/env bash
# sim_validation_gpu.sh: what deepum-sim's launch-ordered policies are validated against, in one
# device call (docs/simulator.md, "Validation"). Results go to $OUT (or bench/results/local):
#   - um_move_probe (the swap copies' and placements' costs, for the machine file) and
#     prefetch_bandwidth;
#   - GPT-2 124M (batch 8) natively: its footprint;
#   - a trace of it under deepum (format 1.4: every launch's operands, the copies, PyTorch's
#     buffers) with a resident limit of twice the footprint, so nothing is evicted: the workload;
#   - measured runs at FACTORS (1.5 2 3) in the suite's deepum mode (ordered prefetch, discard,
#     placement and swap: "swap") and at 2x with the library's default (evictions before launches
#     alone: "default") and without swapping ("place").
# Then each point replayed on the trace (deepum-sim replay --limit), the table last.
# Safety (bench/common.sh): the allocation limit is half of the GPU's free memory in every deepum run.
set -uo pipefail
phase=simval
source "$(dirname "$0")/common.sh"
bin="$root/build-gpu/bin"
steps=${STEPS:-7}
g=(python3 "$gpt2" --preset gpt2-124m --batch 8 --warmup-steps 3)

"$bin/um_move_probe" 1024 >"$out/um_move_probe.txt" 2>&1
grep -E "swap_|discard_and_place_on_gpu|^device" "$out/um_move_probe.txt"
"$bin/prefetch_bandwidth" 2048 >"$out/bandwidth.txt" 2>&1
tail -1 "$out/bandwidth.txt" | grep '^{' >"$out/bandwidth.json"

native gpt2_native "${g[@]}" --steps "$steps" --json "$out/gpt2_native.json"
footprint=$(python3 -c "import json; print(json.load(open('$out/gpt2_native.json'))['peak_reserved_bytes'])")
echo "footprint (peak reserved, native): $footprint bytes"

# default: evictions alone; place: mode safe with placement of fresh blocks (no mode makes these
# moves alone, so the deprecated switch adds it); swap: every move.
ordered=(DEEPUM_MODE=evict)
place=(DEEPUM_MODE=safe DEEPUM_STREAM_ORDERED_PLACE_FRESH=true)
swap=(DEEPUM_MODE=fast)

# The workload: 5 steps, nothing evicted; the Perfetto file is not needed.
(export DEEPUM_RESIDENT_LIMIT=$((footprint * 2))B "${swap[@]}" DEEPUM_TRACE_FILE="$out/gpt2_124m_b8"
  deepum gpt2_traced "${g[@]}" --steps 5 --warmup-steps 2 --json "$out/gpt2_traced.json")
rm -f "$out/gpt2_124m_b8.perfetto.json"
"$bin/deepum" trace summary "$out/gpt2_124m_b8.dtrace" >"$out/trace_summary.md" 2>&1
head -30 "$out/trace_summary.md"

runs=()
measure() {  # measure MODE FACTOR SETTINGS...
  local mode=$1 factor=$2 name="gpt2_$1_x$2"
  shift 2
  (export DEEPUM_RESIDENT_LIMIT="$(python3 -c "print(int($footprint / $factor))")B" "$@"
    deepum "$name" "${g[@]}" --steps "$steps" --json "$out/$name.json")
  runs+=("$out/$name")
}
for factor in ${FACTORS:-1.5 2 3}; do measure swap "$factor" "${swap[@]}"; done
measure place 2 "${place[@]}"
measure default 2 "${ordered[@]}"

python3 "$root/bench/runs_report.py" --native "$out/gpt2_native.json" --bandwidth "$out/bandwidth.json" \
  "${runs[@]}" >"$out/measured.md" 2>&1
python3 "$root/bench/sim_validation.py" --trace "$out/gpt2_124m_b8.dtrace" --sim "$bin/deepum-sim" \
  --probe "$out/um_move_probe.txt" --bandwidth "$out/bandwidth.json" --native "$out/gpt2_native.json" \
  --machine-out "$out/h100_validation.json" "${runs[@]}" | tee "$out/sim_validation.md"
gzip -9 "$out/gpt2_124m_b8.dtrace"
finish simval
# The trace alone too (the bundle may pass the device's 16 MiB a file), when it is small enough.
cp "$out/gpt2_124m_b8.dtrace.gz" "$final/" 2>/dev/null
