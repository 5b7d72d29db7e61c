# common.sh: sourced by the *_gpu.sh benchmark scripts. Sets root, final (where results end up),
# out (a scratch folder, bundled at the end: the device returns at most 8 files), lib, the example
# paths and alloc_limit; records the machine; builds deepum if needed; defines native/deepum
# runners and finish.
#
# Safety: alloc_limit is half of the GPU's free memory and every deepum run gets it, so no run can
# ask for more managed memory than the card has free.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
final=${OUT:-$root/bench/results/local}
out=$(mktemp -d)
mkdir -p "$final"
export PYTHONUNBUFFERED=1
lib="$root/build-gpu/lib/libdeepum.so"
gpt2="$root/examples/pytorch/train_gpt2.py"
resnet="$root/examples/pytorch/train_resnet.py"

free_mib=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits 2>/dev/null | head -1 | tr -d ' ')
# No figure, no runs: the allocation limit below is what keeps them under the card's free memory.
[[ $free_mib =~ ^[0-9]+$ ]] || { echo "${0##*/}: no GPU here (nvidia-smi reports no free memory); these benchmarks need one" >&2; exit 2; }
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,memory.total,memory.free --format=csv,noheader
  python3 -c "import torch, torchvision; print('torch', torch.__version__, 'torchvision', torchvision.__version__)"
} 2>&1 | tee "$out/machine_${phase:-run}.txt"
alloc_limit=$((free_mib * 1024 * 1024 / 2))

if [[ ! -f "$lib" ]]; then
  echo "== build"
  # The tests and probes too (ctest, streaming_check, prefetch_bandwidth); warnings are not errors.
  "$root/scripts/build.sh" "$root/build-gpu" -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_BUILD_BENCH=ON >"$out/build.log" 2>&1 ||
    { grep -E "error" "$out/build.log" | head -20; exit 1; }
fi

# deepum NAME ARGS...: runs under the library with the common settings and a stats file.
deepum() {
  local name=$1
  shift
  LD_PRELOAD="$lib" DEEPUM_ALLOC_LIMIT="${alloc_limit}B" DEEPUM_STATS_FILE="$out/${name}_stats.json" \
    timeout "${RUN_TIMEOUT:-300}" "$@" >"$out/$name.log" 2>&1
  echo "$name: exit $? $(grep -E 'summary median_step_ms' "$out/$name.log")"
}
native() {
  local name=$1
  shift
  timeout "${RUN_TIMEOUT:-300}" "$@" >"$out/$name.log" 2>&1
  echo "$name: exit $? $(grep -E 'summary median_step_ms' "$out/$name.log")"
}

# finish NAME: copies the Markdown tables to $final and bundles everything as results_NAME.tar.gz.
finish() {
  cp "$out"/*.md "$final"/ 2>/dev/null
  (cd "$out" && tar czf "$final/results_$1.tar.gz" ./*)
}
