#!/usr/bin/env bash
# foundation_gpu.sh: one call on the GPU machine for the foundation issue. Builds deepum there,
# runs every test (the gpu-labelled ones included), then trains the GPT-2 example natively and
# under libdeepum.so, alternating, and compares per-step losses and median step times.
# Results go to $OUT (or bench/results/local); the last lines are a short table.
#
# Safety: the library's allocation limit is set to half of the GPU's free memory, so no run can
# ask for more managed memory than the card has free.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/bench/results/local}
mkdir -p "$out"
steps=${STEPS:-30}
preset=${PRESET:-gpt2-124m}
batch=${BATCH:-8}
export PYTHONUNBUFFERED=1

{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,memory.total,memory.free --format=csv,noheader
  nvcc --version | tail -1
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
  cmake --version | head -1; c++ --version | head -1
} 2>&1 | tee "$out/machine.txt"

free_mib=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits | head -1 | tr -d ' ')
limit_bytes=$((free_mib * 1024 * 1024 / 2))
echo "allocation limit for deepum runs: $limit_bytes bytes (half of ${free_mib} MiB free)" | tee -a "$out/machine.txt"

echo "== build" | tee "$out/build.log"
# With the tests and probes; warnings are not errors (the default: GCC 13 warns inside fmt).
"$root/scripts/build.sh" "$root/build-gpu" -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_BUILD_BENCH=ON >>"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }

echo "== ctest"
(cd "$root/build-gpu" && ctest --output-on-failure -V) >"$out/ctest.log" 2>&1
ctest_status=$?
grep -E "tests passed|tests failed|Skipped|\*\*\*Failed|Test +#" "$out/ctest.log" | tail -20

lib="$root/build-gpu/lib/libdeepum.so"
train="$root/examples/pytorch/train_gpt2.py"
args=(--preset "$preset" --batch "$batch" --steps "$steps")
for round in 1 2; do
  echo "== GPT-2 round $round: native"
  python3 "$train" "${args[@]}" --json "$out/gpt2_native_$round.json" >"$out/gpt2_native_$round.log" 2>&1
  tail -3 "$out/gpt2_native_$round.log"
  echo "== GPT-2 round $round: deepum"
  LD_PRELOAD="$lib" DEEPUM_ALLOC_LIMIT="${limit_bytes}B" DEEPUM_STATS_FILE="$out/gpt2_deepum_${round}_stats.json" \
    python3 "$train" "${args[@]}" --json "$out/gpt2_deepum_$round.json" >"$out/gpt2_deepum_$round.log" 2>&1
  tail -3 "$out/gpt2_deepum_$round.log"
done

echo "== comparison (each file against the first: native round 1)"
python3 "$root/bench/compare_runs.py" "$out/gpt2_native_1.json" "$out/gpt2_deepum_1.json" \
  "$out/gpt2_native_2.json" "$out/gpt2_deepum_2.json" --rel-tol 1e-4 --max-overhead 0.03 --markdown \
  | tee "$out/comparison.md"
echo "ctest exit status: $ctest_status"
