#!/usr/bin/env bash
# reliability_gpu.sh [OUT]: on the GPU machine, checks that deepum never hangs where it used to.
# Builds the library as checked out (and, where OLD_SOURCE names an older source tree, that one
# too, for the same runs), then with deepum's default settings:
#   - tests/programs/tracer_stress, STRESS_RUNS runs (default 4) under each library;
#   - Hugging Face BERT-large (batch 16, seq 512, AdamW), BERT_RUNS runs (default 3) of 6 steps;
#   - ctest -L gpu (CTEST=0 skips it), the stress test excluded (it runs above).
# Prints a table last; logs in OUT (default bench/results/reliability).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/bench/results/reliability}
mkdir -p "$out"
free=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits -i 0)
export DEEPUM_ALLOC_LIMIT=$((free * 6 / 10))MiB  # never more managed memory than the card has free
cupti=$(python3 -c 'import glob,sys; m=glob.glob(sys.prefix+"/lib/python3*/site-packages/nvidia/cu*/lib/libcupti.so*"); print(m[0] if m else "")')
[[ -n $cupti ]] && export DEEPUM_CUPTI_LIBRARY=$cupti  # PyTorch's CUPTI, as a PyTorch run loads it
build() {  # build SOURCE DIR TARGETS...
  local source=$1 dir=$2
  shift 2
  cmake -S "$source" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDEEPUM_WARNINGS_AS_ERRORS=OFF \
    -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_BUILD_BENCH=ON \
    >"$out/build-$(basename "$dir").log" 2>&1 && cmake --build "$dir" --target "$@" >>"$out/build-$(basename "$dir").log" 2>&1
}
new=/tmp/deepum-new
build "$root" "$new" all || { tail -30 "$out/build-deepum-new.log"; exit 1; }
libs=("new:$new/lib/libdeepum.so")
if [[ -n ${OLD_SOURCE:-} ]]; then
  [[ -e $OLD_SOURCE/.deps ]] || ln -s "$root/.deps" "$OLD_SOURCE/.deps"
  build "$OLD_SOURCE" /tmp/deepum-old deepum && libs=("old:/tmp/deepum-old/lib/libdeepum.so" "${libs[@]}")
fi
rows=()
for entry in "${libs[@]}"; do
  name=${entry%%:*} lib=${entry#*:}
  for ((run = 1; run <= ${STRESS_RUNS:-4}; ++run)); do
    LD_PRELOAD=$lib timeout -k 5 60 "$new/tests/tracer_stress" "$new/tests/stress_kernels.fatbin" \
      --runtime-lib "$new/tests/libstress_kernels_rt.so" --threads 18 --seconds 12 --watchdog 15 \
      >"$out/stress-$name-$run.log" 2>&1
    status=$?
    rows+=("tracer_stress $name run $run: exit $status $(grep -o '[0-9]* rounds' "$out/stress-$name-$run.log")")
  done
done
for ((run = 1; run <= ${BERT_RUNS:-3}; ++run)); do
  start=$(date +%s)
  LD_PRELOAD=$new/lib/libdeepum.so timeout -k 5 120 python3 "$root/examples/zoo/train_hf.py" --model bert-large \
    --batch 16 --seq-len 512 --steps 6 >"$out/bert-large-$run.log" 2>&1
  status=$?
  rows+=("bert-large new run $run: exit $status, $(grep -c '^step ' "$out/bert-large-$run.log") steps in $(($(date +%s) - start)) s; $(grep -o 'without a parameter layout: [0-9]*' "$out/bert-large-$run.log")")
done
if [[ ${CTEST:-1} != 0 ]]; then
  (cd "$new" && timeout -k 5 420 ctest -L gpu -E tracer_stress --output-on-failure) >"$out/ctest-gpu.log" 2>&1
  rows+=("ctest -L gpu: exit $? ($(grep -E 'tests passed|tests failed' "$out/ctest-gpu.log"))")
fi
printf '%s\n' "${rows[@]}" | tee "$out/summary.txt"
