#!/usr/bin/env bash
# demo.sh: the main job, from a fresh copy. Builds deepum (the library and its two tools), then
# trains GPT-2 124M natively and under deepum with a resident limit of half its footprint (a model
# twice the size of the GPU deepum emulates), and prints both step times, the floor the link allows
# and whether the losses are identical. Without a GPU it says so and shows what deepum-sim predicts
# for the same run.
#
# Safety: the deepum run may allocate at most 55% of the GPU's free memory (DEEPUM_ALLOC_LIMIT), so
# it never asks for more managed memory than the card has free; the demo stops before the run if
# the model needs more than that.
#
# Environment: DEEPUM_PYTHON (default python3) is the Python with PyTorch; BUILD_DIR (default
# build/) where deepum is built; STEPS (default 12) training steps, the first 4 not timed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
python=${DEEPUM_PYTHON:-python3}
steps=${STEPS:-12}
out=$(mktemp -d /tmp/deepum-demo.XXXXXX)
start=$SECONDS

say() { echo "== $* ($((SECONDS - start)) s)"; }

# The compiler's own message: from the first error line on (ninja and make print the failing
# command's output there), else the end of the log.
show_build_errors() {
  local first
  first=$(grep -n -m1 -E 'error:|Error |FAILED:|CMake Error' "$1" | cut -d: -f1 || true)
  if [[ -n $first ]]; then tail -n "+$first" "$1" | head -60; else tail -40 "$1"; fi
}

say "build: the library, deepum and deepum-sim (log: $out/build.log)"
if ! "$root/scripts/build.sh" "$build" >"$out/build.log" 2>&1; then
  echo "demo: the build failed. The compiler said:" >&2
  show_build_errors "$out/build.log" >&2
  exit 1
fi
deepum="$build/bin/deepum"
sim="$build/bin/deepum-sim"

free_mib=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits 2>/dev/null | head -1 | tr -d ' ' || true)
if ! [[ $free_mib =~ ^[0-9]+$ ]]; then
  echo "No NVIDIA GPU here, so GPT-2 cannot train; deepum-sim's prediction for the same run instead."
  trace="$out/gpt2_124m_b8.dtrace"
  "$sim" generate --model gpt2-124m --batch 8 --seq 1024 --iterations 3 --out "$trace" >/dev/null
  echo "\$ deepum-sim generate --model gpt2-124m --batch 8 --seq 1024 --iterations 3 --out gpt2_124m_b8.dtrace"
  echo "\$ deepum-sim replay gpt2_124m_b8.dtrace --machine sim/machines/h100.json --oversubscription 2 \\"
  echo "      --policy reactive,deepum-swap,oracle --warmup 1"
  "$sim" replay "$trace" --machine "$root/sim/machines/h100.json" --oversubscription 2 \
    --policy reactive,deepum-swap,oracle --warmup 1
  echo "A synthetic trace on a model of an H100 with half the memory the run needs. reactive: plain"
  echo "Unified Memory; deepum-swap: the settings the demo runs on a GPU; oracle: Unified Memory's"
  echo "prefetches knowing the future; floor: the oracle's bytes at the link's best rate (docs/simulator.md)."
  exit 0
fi

if ! "$python" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  echo "demo: a GPU is here but $python has no PyTorch with CUDA; set DEEPUM_PYTHON to one that has." >&2
  exit 1
fi
alloc_limit=$((free_mib * 1048576 * 55 / 100))
# GPT-2 124M's footprint is about 11.3 GiB at batch 8: a smaller batch where that does not fit.
batch=8
if ((alloc_limit < 13 * 1073741824)); then batch=4; fi
if ((alloc_limit < 7 * 1073741824)); then batch=2; fi
gpt2=("$python" "$root/examples/pytorch/train_gpt2.py" --preset gpt2-124m --batch "$batch" --steps "$steps"
  --warmup-steps 4)

say "the link: pinned copies both ways at once (bench/pinned_copy_rate.py)"
"$python" "$root/bench/pinned_copy_rate.py" --mib 1024 --json "$out/link.json" ||
  echo "(not measured: the floor below is the native step alone)"

say "GPT-2 124M, batch $batch, natively"
"${gpt2[@]}" --json "$out/native.json" >"$out/native.log" 2>&1 ||
  { tail -20 "$out/native.log"; echo "demo: the native run failed ($out/native.log)" >&2; exit 1; }
footprint=$("$python" -c "import json,sys; print(json.load(open(sys.argv[1]))['peak_reserved_bytes'])" "$out/native.json")
# The deepum run allocates what the native run did, plus CUDA libraries' own workspaces.
if ((footprint + footprint / 10 + 268435456 > alloc_limit)); then
  echo "demo: the model needs $((footprint >> 20)) MiB; the GPU has $free_mib MiB free, and the demo asks for" \
    "at most 55% of it. Free some GPU memory and run again." >&2
  exit 1
fi
resident_limit="$((footprint / 2 / 1048576))MiB"
# The README's settings file (mode fast), with limits for this card instead of its 300% and the
# automatic resident limit (the GPU's free memory less a margin).
settings=(DEEPUM_RESIDENT_LIMIT="$resident_limit" DEEPUM_ALLOC_LIMIT="$((alloc_limit / 1048576))MiB")
config="$root/examples/bigger-than-gpu.json"

say "the same under deepum, at a resident limit of $resident_limit (half the footprint)"
echo "\$ ${settings[*]} deepum run --config examples/bigger-than-gpu.json -- \\"
echo "    python examples/pytorch/train_gpt2.py ${gpt2[*]:2}"
env "${settings[@]}" DEEPUM_STATS_FILE="$out/deepum_stats.json" \
  "$deepum" run --config "$config" -- "${gpt2[@]}" --json "$out/deepum.json" >"$out/deepum.log" 2>&1 ||
  { tail -20 "$out/deepum.log"; echo "demo: the deepum run failed ($out/deepum.log)" >&2; exit 1; }

say "result (logs and JSON in $out)"
"$python" "$root/scripts/demo_report.py" "$out/native.json" "$out/deepum.json" --ratio 2 \
  --link "$out/link.json" --stats "$out/deepum_stats.json"
