#!/usr/bin/env bash
# hang_repro_gpu.sh [OUT]: on the GPU machine, builds the library as checked out and runs what hung
# with deepum's default settings: tests/programs/tracer_stress (3 runs, each under its watchdog) and
# Hugging Face BERT-large (batch 16, seq 512, AdamW) for 4 steps under a 180 s timeout. Prints one
# line per run: passed or hung. Logs go to OUT (default bench/results/hang-repro).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/bench/results/hang-repro}
mkdir -p "$out"
build=${DEEPUM_BUILD_DIR:-/tmp/deepum-hang-build}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDEEPUM_WARNINGS_AS_ERRORS=OFF \
  >"$out/build.log" 2>&1 && cmake --build "$build" --target deepum tracer_stress stress_kernels_rt >>"$out/build.log" 2>&1 ||
  { tail -40 "$out/build.log"; exit 1; }
lib=$build/lib/libdeepum.so
free=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits -i 0)
export DEEPUM_ALLOC_LIMIT=$((free * 6 / 10))MiB  # safety: never more managed memory than the card has free
summary=()
for run in 1 2 3; do
  LD_PRELOAD=$lib timeout -k 5 60 "$build/tests/tracer_stress" "$build/tests/stress_kernels.fatbin" \
    --runtime-lib "$build/tests/libstress_kernels_rt.so" --threads 18 --seconds 12 --watchdog 15 >"$out/stress-$run.log" 2>&1
  status=$?
  summary+=("tracer_stress run $run: exit $status ($([[ $status -eq 0 ]] && echo passed || echo hung or failed))")
done
start=$(date +%s)
LD_PRELOAD=$lib timeout -k 5 180 python3 "$root/examples/zoo/train_hf.py" --model bert-large --batch 16 \
  --seq-len 512 --steps 4 >"$out/bert-large-default.log" 2>&1
status=$?
steps=$(grep -c '^step ' "$out/bert-large-default.log")
summary+=("bert-large default: exit $status, $steps steps in $(($(date +%s) - start)) s")
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
