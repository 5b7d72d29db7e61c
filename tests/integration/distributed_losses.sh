#!/usr/bin/env bash
# distributed_losses.sh LIB SCRIPT ARGS...: trains SCRIPT on two GPUs with torchrun (NCCL), natively,
# then with libdeepum.so preloaded in every rank at half the native footprint per GPU, and requires
# the same per-step losses, bit for bit, each rank's limit held by evictions, every NCCL kernel
# launched inside an NCCL call deepum saw (none reached buffers it could not name), and blocks
# swapped out in both ranks (swaps go on under NCCL's calls). Skips (77) with fewer than two GPUs or
# without PyTorch.
set -euo pipefail
lib=$1
shift
source "$(dirname "$0")/two_gpus_available.sh"
export NCCL_NVLS_ENABLE=0  # never NVLink multicast on shared machines
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
torchrun=("$python" -m torch.distributed.run --standalone --nproc_per_node=2)
"${torchrun[@]}" "$@" >"$work/native.log" 2>&1 || { cat "$work/native.log"; exit 1; }
footprint=$(awk '/^footprint_bytes/ {print $2}' "$work/native.log")
[[ -n $footprint ]] || { cat "$work/native.log"; echo "FAIL: no footprint_bytes natively"; exit 1; }
echo "native footprint per GPU halved: resident limit $((footprint / 2)) bytes"
DEEPUM_STATS_FILE="$work/stats-%p.json" DEEPUM_RESIDENT_LIMIT=$((footprint / 2))B LD_PRELOAD="$lib" \
  "${torchrun[@]}" "$@" >"$work/deepum.log" 2>&1 || { cat "$work/deepum.log"; echo "FAIL: under deepum"; exit 1; }
grep '^step' "$work/deepum.log"
diff <(awk '/^step/ {print $2, $4}' "$work/native.log") <(awk '/^step/ {print $2, $4}' "$work/deepum.log") ||
  { cat "$work/deepum.log"; echo "FAIL: losses differ under deepum"; exit 1; }
if grep -q "reach buffers deepum cannot see" "$work/deepum.log"; then
  echo "FAIL: an NCCL kernel ran outside the NCCL calls deepum interposes"
  exit 1
fi
if grep -q "swaps and placement of fresh blocks are off" "$work/deepum.log"; then
  echo "FAIL: swaps stopped under NCCL"
  exit 1
fi
"$python" - "$work" <<'PY'
import glob, json, sys
files = sorted(glob.glob(f"{sys.argv[1]}/stats-*.json"))
moves = [json.load(open(f))["engine"]["moves"] for f in files]
evictions = [m["evictions"] for m in moves]
swapped = [m["swapped_out_bytes"] for m in moves]
if sum(1 for e in evictions if e) < 2 or sum(1 for s in swapped if s) < 2:
    sys.exit(f"FAIL: both ranks should have evicted and swapped: evictions {evictions}, bytes swapped out "
             f"{swapped} in {len(files)} statistics files")
print(f"losses identical; evictions by rank: {evictions}; bytes swapped out: {swapped}")
PY
