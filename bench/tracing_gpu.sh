#!/usr/bin/env bash
# tracing_gpu.sh PHASE: the tracing and resident-limit measurements, in two phases that each fit one
# device call. Results go to $OUT (or bench/results/local), bundled as results.tar.gz, with a short
# table last.
#   overhead  build, ctest (gpu tests included), then tracing cost with nothing oversubscribed:
#             GPT-2 124M and ResNet-50 natively, under deepum with tracing off, with tracing full
#   final     overhead then oversub, in one call
#   check     a short re-check of tracing cost, attribution and 3x oversubscription
#   cost      what tracing costs on ResNet-50, part by part (launch callbacks, activity, flush period)
#   oversub   GPT-2 124M natively (its footprint), then under deepum with the resident limit at
#             1/1.5, 1/2 and 1/3 of that footprint (mode evict: evictions alone, no prefetching)
# Safety (bench/common.sh): the allocation limit is half of the GPU's free memory in every deepum
# run, and every workload's footprint is far below it.
set -uo pipefail
phase=${1:?usage: tracing_gpu.sh check|final|overhead|cost|oversub}
source "$(dirname "$0")/common.sh"

case "$phase" in
check)
  # A short re-check: tests, tracing cost on ResNet-50, attribution on GPT-2, 3x oversubscription.
  (cd "$root/build-gpu" && ctest --output-on-failure -V) >"$out/ctest.log" 2>&1
  grep -E "tests passed|tests failed|\*\*\*Failed" "$out/ctest.log"
  r=(python3 "$resnet" --batch 16 --steps 60 --warmup-steps 10)
  for round in 1 2 3; do
    native "resnet_native_$round" "${r[@]}" --json "$out/resnet_native_$round.json"
    deepum "resnet_trace_$round" "${r[@]}" --json "$out/resnet_trace_$round.json"
  done
  g=(python3 "$gpt2" --preset gpt2-124m --batch 8 --steps 25)
  native gpt2_native_1 "${g[@]}" --json "$out/gpt2_native_1.json"
  deepum gpt2_trace_1 "${g[@]}" --json "$out/gpt2_trace_1.json"
  g=(python3 "$gpt2" --preset gpt2-124m --batch 8 --steps 6 --warmup-steps 2)
  footprint=$(python3 -c "import json; print(json.load(open('$out/gpt2_native_1.json'))['peak_reserved_bytes'])")
  DEEPUM_RESIDENT_LIMIT=$((footprint / 3))B DEEPUM_MODE=evict deepum gpt2_reactive_x3 "${g[@]}" --json "$out/gpt2_reactive_x3.json"
  {
    python3 "$root/bench/median_of_runs.py" native "$out"/resnet_native_?.json full "$out"/resnet_trace_?.json
    python3 "$root/bench/compare_runs.py" "$out"/gpt2_native_1.json "$out"/gpt2_trace_1.json \
      "$out"/gpt2_reactive_x3.json --max-overhead inf --markdown
    python3 "$root/bench/tracing_report.py" "$out"/*_stats.json
  } | tee "$out/check.md"
  ;;
final)
  # Everything for the tracing issue in one device call.
  GPT2_ROUNDS=1 RESNET_ROUNDS="1 2 3" OUT=$final bash "$0" overhead
  OUT=$final bash "$0" oversub
  exit 0
  ;;
overhead)
  echo "== ctest"
  (cd "$root/build-gpu" && ctest --output-on-failure -V) >"$out/ctest.log" 2>&1
  grep -E "tests passed|tests failed|Test +#" "$out/ctest.log" | tail -16
  g=(python3 "$gpt2" --preset gpt2-124m --batch 8 --steps 25)
  r=(python3 "$resnet" --batch 16 --steps 60 --warmup-steps 10)
  for round in ${GPT2_ROUNDS:-1 2}; do
    native "gpt2_native_$round" "${g[@]}" --json "$out/gpt2_native_$round.json"
    deepum "gpt2_trace_$round" "${g[@]}" --json "$out/gpt2_trace_$round.json"
  done
  # ResNet-50 is launch-bound and its step time varies by several percent between processes, so
  # interleaved rounds, compared by the median of their medians.
  for round in ${RESNET_ROUNDS:-1 2 3 4}; do
    native "resnet_native_$round" "${r[@]}" --json "$out/resnet_native_$round.json"
    deepum "resnet_trace_$round" "${r[@]}" --json "$out/resnet_trace_$round.json"
    DEEPUM_TRACING=kernels deepum "resnet_kernels_$round" "${r[@]}" --json "$out/resnet_kernels_$round.json"
  done
  DEEPUM_TRACE_FILE="$out/gpt2_tiny_trace" deepum gpt2_tiny_traced python3 "$gpt2" --preset tiny --steps 5 \
    --json "$out/gpt2_tiny_traced.json"
  "$root/build-gpu/bin/deepum" trace check "$out/gpt2_tiny_trace" 2>&1 | tee "$out/trace_check.txt"
  {
    echo "### GPT-2 124M"
    python3 "$root/bench/compare_runs.py" "$out"/gpt2_native_?.json "$out"/gpt2_trace_?.json --max-overhead 0.05 \
      --markdown
    echo "### ResNet-50, batch 16"
    python3 "$root/bench/compare_runs.py" "$out"/resnet_native_?.json "$out"/resnet_trace_?.json \
      "$out"/resnet_kernels_?.json --max-overhead inf --markdown
    python3 "$root/bench/median_of_runs.py" native "$out"/resnet_native_?.json full "$out"/resnet_trace_?.json \
      kernels "$out"/resnet_kernels_?.json
  } | tee "$out/overhead.md"
  python3 "$root/bench/tracing_report.py" "$out"/*_trace_*_stats.json | tee "$out/tracing_stats.md"
  ;;
cost)
  # Where tracing's cost comes from on a launch-bound workload: each part alone, two flush periods.
  r=(python3 "$resnet" --batch 16 --steps 40)
  for round in 1 2; do
    native "resnet_native_$round" "${r[@]}" --json "$out/resnet_native_$round.json"
    DEEPUM_TRACING=launches deepum "resnet_launches_$round" "${r[@]}" --json "$out/resnet_launches_$round.json"
    deepum "resnet_full_5ms_$round" "${r[@]}" --json "$out/resnet_full_5ms_$round.json"
    DEEPUM_TRACE_FLUSH_MS=50 DEEPUM_WORKER_INTERVAL_US=10000 deepum "resnet_full_50ms_$round" "${r[@]}" \
      --json "$out/resnet_full_50ms_$round.json"
  done
  DEEPUM_LOG_LEVEL=debug deepum resnet_callback_timing "${r[@]}" --json "$out/resnet_callback_timing.json"
  grep -h "tracing:" "$out"/resnet_*.log | sort | uniq -c | head -5
  python3 "$root/bench/compare_runs.py" "$out"/resnet_native_1.json "$out"/resnet_launches_1.json \
    "$out"/resnet_full_5ms_1.json "$out"/resnet_full_50ms_1.json "$out"/resnet_native_2.json \
    "$out"/resnet_launches_2.json "$out"/resnet_full_5ms_2.json "$out"/resnet_full_50ms_2.json \
    "$out"/resnet_callback_timing.json --max-overhead 0.05 --markdown | tee "$out/cost.md"
  ;;
oversub)
  g=(python3 "$gpt2" --preset gpt2-124m --batch 8 --steps 6 --warmup-steps 2)
  native gpt2_native "${g[@]}" --json "$out/gpt2_native.json"
  footprint=$(python3 -c "import json; print(json.load(open('$out/gpt2_native.json'))['peak_reserved_bytes'])")
  echo "footprint (peak reserved, native): $footprint bytes"
  runs=() stats=()
  for factor in 1.5 2 3; do
    limit=$(python3 -c "print(int($footprint / $factor))")
    DEEPUM_RESIDENT_LIMIT=${limit}B DEEPUM_MODE=evict deepum "gpt2_reactive_x$factor" "${g[@]}" --json "$out/gpt2_reactive_x$factor.json"
    runs+=("$out/gpt2_reactive_x$factor.json") stats+=("$out/gpt2_reactive_x${factor}_stats.json")
  done
  python3 "$root/bench/compare_runs.py" "$out/gpt2_native.json" "${runs[@]}" --max-overhead inf --markdown |
    tee "$out/oversub.md"
  python3 "$root/bench/tracing_report.py" "${stats[@]}" | tee "$out/oversub_stats.md"
  # The Perfetto JSON of a GPT-2 124M run (3 steps, nothing oversubscribed) validates.
  DEEPUM_TRACE_FILE="$out/gpt2_124m_trace" deepum gpt2_124m_traced python3 "$gpt2" --preset gpt2-124m --steps 3 \
    --warmup-steps 1 --json "$out/gpt2_124m_traced.json"
  "$root/build-gpu/bin/deepum" trace check "$out/gpt2_124m_trace" 2>&1 | tee "$out/trace_check.md"
  ls -la "$out"/gpt2_124m_trace.* | tee -a "$out/trace_check.md"
  ;;
esac
finish "$phase"
