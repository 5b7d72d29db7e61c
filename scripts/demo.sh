#!/usr/bin/env bash
# demo.sh: the main job. Builds deepum, then trains the GPT-2 example natively and under
# libdeepum.so and compares them. Without a GPU it says so and shows what it can here: the
# configuration deepum would use, and a CUDA program getting CUDA's own error through deepum.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build"
"$root/scripts/build.sh" "$build" >/dev/null
lib="$build/lib/libdeepum.so"
echo "built $lib"

if ! ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
  echo
  echo "No NVIDIA GPU on this machine: the GPT-2 example needs one, so it does not run here."
  echo "What runs here instead:"
  echo
  echo "\$ deepum config"
  "$build/bin/deepum" config | head -9
  echo
  echo "\$ deepum run -- alloc_runtime_dynamic --probe-error   (a CUDA program; no GPU, so CUDA says why)"
  "$build/bin/deepum" run -- "$build/tests/alloc_runtime_dynamic" --probe-error || true
  echo
  echo "\$ deepum-sim replay tests/data/sim_gpt2_124m_b1_s128.dtrace --oversubscription 2"
  echo "  (a GPT-2 124M trace replayed on a model of an H200 with half the memory it needs)"
  "$build/bin/deepum-sim" replay "$root/tests/data/sim_gpt2_124m_b1_s128.dtrace" --oversubscription 2 || true
  exit 0
fi

python=${DEEPUM_PYTHON:-python3}
if ! "$python" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  echo "A GPU is here but $python has no PyTorch with CUDA; set DEEPUM_PYTHON to one that has."
  exit 1
fi
# Let the program allocate at most half of the GPU's free memory: deepum refuses past that.
free_mib=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits | head -1 | tr -d ' ')
limit=$((free_mib / 2))MiB
out=$(mktemp -d)
args=(--preset gpt2-124m --batch 8 --steps 20)
echo "== GPT-2 124M, natively"
"$python" "$root/examples/pytorch/train_gpt2.py" "${args[@]}" --json "$out/native.json" | tail -4
echo "== GPT-2 124M, under deepum (allocation limit $limit)"
DEEPUM_ALLOC_LIMIT=$limit "$build/bin/deepum" run -- \
  "$python" "$root/examples/pytorch/train_gpt2.py" "${args[@]}" --json "$out/deepum.json" 2>&1 | tail -16
echo "== same losses, step time"
"$python" "$root/bench/compare_runs.py" "$out/native.json" "$out/deepum.json" --max-overhead 0.05
