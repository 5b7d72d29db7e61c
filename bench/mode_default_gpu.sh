#!/usr/bin/env bash
# mode_default_gpu.sh: the default moves (nothing set but the limits: mode fast) against the six
# stream_ordered_* switches mode fast replaces, on GPT-2 124M at 2x (resident limit half the
# native footprint), twice each, interleaved; then mode safe once. The default and the switches
# make the same moves, so their start lines say the same ("held by evictions (from deepum's
# thread), prefetches, discards, placement of fresh blocks, swaps (mode ...)"), their losses match
# native bit for bit and their step times agree within run-to-run noise. Results go to $OUT (or
# bench/results/local): mode_default.md and results_mode_default.tar.gz.
# Safety (bench/common.sh): the allocation limit is half of the GPU's free memory in every deepum
# run; GPT-2 124M at batch 8 needs ~11 GiB.
set -uo pipefail
phase=mode_default
source "$(dirname "$0")/common.sh"

g=(python3 "$gpt2" --preset gpt2-124m --batch 8 --steps "${STEPS:-8}" --warmup-steps "${WARMUP:-3}")
native gpt2_native "${g[@]}" --json "$out/gpt2_native.json"
footprint=$(python3 -c "import json; print(json.load(open('$out/gpt2_native.json'))['peak_reserved_bytes'])")
echo "footprint (peak reserved, native): $footprint bytes"
export DEEPUM_RESIDENT_LIMIT=$((footprint / 2))B
switches=(DEEPUM_STREAM_ORDERED_EVICTION=true DEEPUM_STREAM_ORDERED_PREFETCH=true
  DEEPUM_STREAM_ORDERED_DISCARD=true DEEPUM_STREAM_ORDERED_PLACE_FRESH=true
  DEEPUM_STREAM_ORDERED_EVICTION_THREAD=true DEEPUM_STREAM_ORDERED_SWAP=true)
runs=()
for round in 1 2; do
  deepum "gpt2_default_r$round" "${g[@]}" --json "$out/gpt2_default_r$round.json"
  (export "${switches[@]}"; deepum "gpt2_switches_r$round" "${g[@]}" --json "$out/gpt2_switches_r$round.json")
  runs+=("$out/gpt2_default_r$round.json" "$out/gpt2_switches_r$round.json")
done
DEEPUM_MODE=safe deepum gpt2_safe "${g[@]}" --json "$out/gpt2_safe.json"
runs+=("$out/gpt2_safe.json")
{
  echo "Each run's moves, as it said at start:"
  echo
  for log in "$out"/gpt2_default_r1.log "$out"/gpt2_switches_r1.log "$out"/gpt2_safe.log; do
    echo "- $(basename "$log" .log): $(grep -m1 -o 'resident limit .*held by.*' "$log")"
  done
  echo
  python3 "$root/bench/compare_runs.py" "$out/gpt2_native.json" "${runs[@]}" --rel-tol 0 --max-overhead inf \
    --markdown
} | tee "$out/mode_default.md"
finish mode_default
