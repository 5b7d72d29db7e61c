#!/usr/bin/env bash
# jax_losses_under_limit.sh LIB SCRIPT ARGS...: trains a JAX loop natively, then under libdeepum.so
# at 2x (resident limit half the native footprint, allocation limit half the GPU's free memory) with
# XLA's allocator settings left to deepum, and requires the same per-step losses, bit for bit, and
# JAX's memory managed: XLA's pool taken through cuMemAllocManaged (steered at load) and deepum's
# managed peak at least the native footprint. Extra DEEPUM_* settings come from the environment.
# Skips (77) without a GPU or without JAX that can use it.
set -euo pipefail
lib=$1
shift
source "$(dirname "$0")/gpu_available.sh"
python=${DEEPUM_PYTHON:-python3}
if ! XLA_PYTHON_CLIENT_PREALLOCATE=false "$python" -c "import jax, sys; sys.exit(0 if jax.devices('gpu') else 1)" \
  >/dev/null 2>&1; then
  echo "SKIP: $python has no JAX with CUDA (pip install 'jax[cuda13]')"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The settings XLA reads for its allocator: deepum's to choose under it, so none are inherited.
unset TF_FORCE_UNIFIED_MEMORY XLA_PYTHON_CLIENT_ALLOCATOR TF_GPU_ALLOCATOR XLA_PYTHON_CLIENT_PREALLOCATE
# The same kernels in both runs: autotuning times candidates, and under deepum the times differ.
export XLA_FLAGS="${XLA_FLAGS:+$XLA_FLAGS }--xla_gpu_autotune_level=0 --xla_gpu_deterministic_ops=true"

XLA_PYTHON_CLIENT_PREALLOCATE=false "$python" "$@" >"$work/native.log" 2>&1 || { cat "$work/native.log"; exit 1; }
footprint=$(sed -n 's/^footprint_bytes \([0-9]*\)$/\1/p' "$work/native.log")
free_mib=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits -i 0 | head -n 1)
alloc_limit=$((free_mib * 1048576 / 2))
echo "native footprint $footprint bytes: resident limit $((footprint / 2)) bytes, allocation limit $alloc_limit bytes"
if ((footprint == 0 || alloc_limit < 2 * footprint)); then
  echo "FAIL: no footprint measured, or half the GPU's free memory ($alloc_limit bytes) is under twice it"
  exit 1
fi

DEEPUM_ALLOC_LIMIT=${alloc_limit}B DEEPUM_RESIDENT_LIMIT=$((footprint / 2))B DEEPUM_STATS_FILE="$work/stats.json" \
  DEEPUM_LOG_LEVEL=info LD_PRELOAD="$lib" "$python" "$@" 2>&1 | tee "$work/deepum.log"

"$python" - "$work/native.log" "$work/deepum.log" "$work/stats.json" "$footprint" <<'PY'
import json, re, sys
native_log, deepum_log, stats_path, footprint = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
step = re.compile(r"^step (\d+) loss (\S+) ")
losses = [[m.group(2) for m in map(step.match, open(path)) if m] for path in (native_log, deepum_log)]
if not losses[0] or losses[0] != losses[1]:
    sys.exit(f"FAIL: losses differ\n native {losses[0]}\n deepum {losses[1]}")
print(f"losses identical over {len(losses[0])} steps")

def find(node, key):
    """The first value under `key` anywhere in the document."""
    if isinstance(node, dict):
        if key in node:
            return node[key]
        node = list(node.values())
    if isinstance(node, list):
        for child in node:
            if (found := find(child, key)) is not None:
                return found
    return None

stats = json.load(open(stats_path))
managed = find(find(stats, "cuMemAllocManaged") or {}, "bytes") or 0
peak = find(stats, "peak_managed_bytes") or 0
print(f"cuMemAllocManaged {managed} bytes, peak managed {peak} bytes, native footprint {footprint} bytes")
if managed == 0 or peak < footprint:
    sys.exit("FAIL: JAX's memory was not managed (XLA's pool did not come through cuMemAllocManaged)")
PY
grep -q "cuMemAllocManaged: the program's unified memory is deepum's, under its limits (XLA's BFC allocator" \
  "$work/deepum.log" ||
  { echo "FAIL: deepum did not say XLA's memory is managed"; exit 1; }
if grep -q "cuMemCreate of .* likely JAX's" "$work/deepum.log"; then
  echo "FAIL: XLA still took large physical memory with cuMemCreate"
  exit 1
fi
grep -E "evictions before launches|peak resident" "$work/deepum.log" || true
