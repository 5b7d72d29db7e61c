#!/usr/bin/env bash
# suite_gpu.sh PHASE: the benchmark suite (issue 5) on the GPU machine, one phase per device call
# (each kept under PHASE_BUDGET seconds of runs, default 510, so a call stays under 10 minutes).
#   gpt2-124m gpt2-350m   GPT-2 (examples/pytorch/train_gpt2.py presets)
#   bert-base bert-large  BERT-style encoder (examples/pytorch/train_bert.py)
#   resnet                ResNet-50, batch 64 (examples/pytorch/train_resnet.py)
#   streaming             tests/programs/streaming_check.cu (build-gpu/tests/streaming_check)
#   baselines             GPT-2 124M by hand at the same GPU memory: set_per_process_memory_fraction
#                         with save_on_cpu, FSDP2 CPU offload (world size 1), and both
#   list                  prints the phases
#   all                   every phase above in turn (hours on one GPU), then the report over all of
#                         them into docs/benchmarks.md (NO_DOCS=1 leaves it)
# Each workload runs natively first (its footprint F = peak reserved), then for each
# oversubscription R in RATIOS (default "1.0 1.5 2 3") in modes um (deepum, resident limit F/R,
# mode evict: evictions alone, the GPU faulting the rest back) and deepum (resident limit F/R, mode
# fast: every move). The
# baselines cap PyTorch at F/R bytes instead. Runs are ordered by R; when the phase budget is spent
# the remaining runs are recorded as skipped.
# Results go to $OUT (or bench/results/local): suite_PHASE.json (every run: command, exit status,
# the program's JSON, deepum's statistics), suite.md and PNG plots (bench/suite_report.py over all
# suite_*.json there), results_PHASE.tar.gz (logs and raw files).
# Optional plots on the GPU machine: a folder .whl/ with matplotlib's wheels (made here with
# `pip download matplotlib --only-binary=:all: -d .whl/`, carried to the device) is installed
# into /tmp/mpl and put on PYTHONPATH; without .whl/ this step is skipped and the tables are
# written without plots.
# Safety (bench/common.sh): every deepum run gets the allocation limit, half of the GPU's free
# memory; each workload's footprint is below it.
set -uo pipefail
phases="gpt2-124m gpt2-350m bert-base bert-large resnet streaming baselines"
phase=${1:?usage: suite_gpu.sh PHASE (one of: $phases; all; or list)}
if [[ $phase == list ]]; then
  echo "$phases all"
  exit 0
fi
if [[ $phase == all ]]; then
  # Every phase in turn (each within its own PHASE_BUDGET), into one folder, then the report over
  # all of them, which also replaces the suite section of docs/benchmarks.md (NO_DOCS=1: not).
  final=${OUT:-$(cd "$(dirname "$0")/.." && pwd)/bench/results/local}
  status=0
  for p in $phases; do
    bash "$0" "$p"
    case $? in
    0) ;;
    2) exit 2 ;;  # no GPU, or a usage error: the other phases would fail the same way
    *) status=1 ;;
    esac
  done
  docs=()
  [[ ${NO_DOCS:-0} == 1 ]] && docs=(--no-docs)
  python3 "$(dirname "$0")/suite_report.py" "${docs[@]}" --out "$final" "$final" >/dev/null || status=1
  echo "suite: every phase's results in $final (suite.md)"
  exit "$status"
fi
[[ " $phases " == *" $phase "* ]] || { echo "suite_gpu.sh: unknown phase $phase (one of: $phases, all)" >&2; exit 2; }
source "$(dirname "$0")/common.sh"

bert="$root/examples/pytorch/train_bert.py"
streaming="$root/build-gpu/tests/streaming_check"
budget=${PHASE_BUDGET:-510}
ratios=${RATIOS:-1.0 1.5 2 3}
modes=${MODES:-um deepum}
start=$SECONDS
manifest="$out/manifest.tsv"
: >"$manifest"
echo "allocation limit for deepum runs: $alloc_limit bytes" | tee -a "$out/machine_$phase.txt"

if [[ -d "$root/.whl" ]]; then
  if python3 -m pip install --no-index --find-links "$root/.whl" --target /tmp/mpl matplotlib >"$out/pip_mpl.log" 2>&1; then
    export PYTHONPATH=/tmp/mpl${PYTHONPATH:+:$PYTHONPATH}
    echo "matplotlib installed from .whl/ into /tmp/mpl"
  else
    echo "matplotlib from .whl/ failed (see pip_mpl.log); tables only"
  fi
else
  echo "no .whl/: plots skipped (tables only)"
fi

if [[ ${BANDWIDTH:-1} == 1 && -x "$root/build-gpu/bin/prefetch_bandwidth" ]]; then
  timeout 120 "$root/build-gpu/bin/prefetch_bandwidth" 2048 >"$out/bandwidth.txt" 2>&1
  tail -1 "$out/bandwidth.txt" | grep '^{' >"$out/bandwidth.json" || rm -f "$out/bandwidth.json"
fi

# run NAME WORKLOAD MODE RATIO LIMIT FRACTION ENV... -- ARGV...: one run, its JSON at $out/NAME.json,
# deepum's statistics at $out/NAME_stats.json for the deepum modes; one manifest line.
run() {
  local name=$1 workload=$2 mode=$3 ratio=$4 limit=$5 fraction=$6
  shift 6
  local env=()
  while [[ $1 != -- ]]; do env+=("$1"); shift; done
  shift
  local argv=("$@" --json "$out/$name.json")
  case $mode in
  um | deepum)
    env+=(LD_PRELOAD="$lib" DEEPUM_ALLOC_LIMIT="${alloc_limit}B" DEEPUM_STATS_FILE="$out/${name}_stats.json")
    ;;
  esac
  local command="${env[*]} ${argv[*]}"
  command=${command//"$root/"/}
  local left=$((budget - (SECONDS - start))) rc t0=$SECONDS
  if ((left < ${MIN_RUN_S:-20})); then
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$workload" "$mode" "$ratio" "$limit" "$fraction" \
      skipped 0 "${command# }" >>"$manifest"
    echo "$name: skipped (phase budget spent)"
    return
  fi
  local t=${RUN_TIMEOUT:-300}
  ((t > left)) && t=$left
  env "${env[@]}" timeout "$t" "${argv[@]}" >"$out/$name.log" 2>&1
  rc=$?
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$workload" "$mode" "$ratio" "$limit" "$fraction" \
    "$rc" "$((SECONDS - t0))" "${command# }" >>"$manifest"
  echo "$name: exit $rc, $((SECONDS - t0)) s $(grep -E 'summary median_step_ms|median step' "$out/$name.log" | tail -1)"
}

footprint_of() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['peak_reserved_bytes'])" "$1" 2>/dev/null; }

# sweep WORKLOAD ARGV...: native, then um and deepum at every ratio.
sweep() {
  local workload=$1
  shift
  run "${workload}_native_x1" "$workload" native 1 0 "" -- "$@"
  local footprint
  footprint=$(footprint_of "$out/${workload}_native_x1.json")
  if [[ -z $footprint || $footprint == 0 ]]; then
    echo "$workload: no footprint from the native run; the oversubscribed runs are left out"
    return
  fi
  echo "$workload: footprint (native peak reserved) $footprint bytes"
  local ratio mode limit
  for ratio in $ratios; do
    limit=$(python3 -c "print(int($footprint / $ratio))")
    for mode in $modes; do
      case $mode in
      um) run "${workload}_um_x$ratio" "$workload" um "$ratio" "$limit" "" \
        DEEPUM_RESIDENT_LIMIT="${limit}B" DEEPUM_MODE=evict -- "$@" ;;
      deepum) run "${workload}_deepum_x$ratio" "$workload" deepum "$ratio" "$limit" "" \
        DEEPUM_RESIDENT_LIMIT="${limit}B" DEEPUM_MODE=fast -- "$@" ;;
      esac
    done
  done
}

# baselines WORKLOAD ARGV...: native, then train_gpt2.py's --offload modes capped at F/R bytes.
baselines() {
  local workload=$1
  shift
  run "${workload}_native_x1" "$workload" native 1 0 "" -- "$@"
  local footprint total
  footprint=$(footprint_of "$out/${workload}_native_x1.json")
  total=$(python3 -c "import torch; print(torch.cuda.get_device_properties(0).total_memory)")
  if [[ -z $footprint || $footprint == 0 || -z $total ]]; then
    echo "$workload: no footprint or device memory; the baselines are left out"
    return
  fi
  echo "$workload: footprint $footprint bytes of $total"
  local ratio offload limit fraction
  for ratio in $ratios; do
    limit=$(python3 -c "print(int($footprint / $ratio))")
    fraction=$(python3 -c "print(f'{$limit / $total:.6f}')")
    for offload in ${OFFLOADS:-save_on_cpu fsdp2_cpu fsdp2_cpu_save_on_cpu}; do
      local mode=${offload//_/-}
      run "${workload}_${mode}_x$ratio" "$workload" "$mode" "$ratio" "$limit" "$fraction" -- \
        "$@" --offload "$offload" --memory-fraction "$fraction"
    done
  done
}

case "$phase" in
gpt2-124m) sweep gpt2-124m python3 "$gpt2" --preset gpt2-124m --batch 8 --steps "${STEPS:-8}" --warmup-steps "${WARMUP:-3}" ;;
gpt2-350m) sweep gpt2-350m python3 "$gpt2" --preset gpt2-350m --batch 8 --steps "${STEPS:-6}" --warmup-steps "${WARMUP:-2}" ;;
bert-base) sweep bert-base python3 "$bert" --preset bert-base --batch 32 --steps "${STEPS:-8}" --warmup-steps "${WARMUP:-3}" ;;
bert-large) sweep bert-large python3 "$bert" --preset bert-large --batch 16 --steps "${STEPS:-6}" --warmup-steps "${WARMUP:-2}" ;;
resnet) sweep resnet50 python3 "$resnet" --batch 64 --steps "${STEPS:-10}" --warmup-steps "${WARMUP:-3}" ;;
streaming)
  if [[ ! -x $streaming ]]; then
    cmake --build "$root/build-gpu" --target streaming_check >"$out/build_streaming.log" 2>&1 ||
      { echo "streaming_check does not build (build_streaming.log)"; }
  fi
  # 16 x 128 MiB = 2 GiB streamed per step; median of steps 1.. (the program leaves step 0 out).
  # 60 steps: a native step takes 1.7 ms on an H100, and 6 steps ended before deepum's eviction
  # (which follows CUPTI records arriving ~0.1 s late) ever acted (2026-11-22, session 3).
  sweep streaming "$streaming" --buffers 16 --mib 128 --steps "${STEPS:-60}"
  ;;
baselines) baselines gpt2-124m python3 "$gpt2" --preset gpt2-124m --batch 8 --steps "${STEPS:-8}" --warmup-steps "${WARMUP:-3}" ;;
esac

bw=()
[[ -f "$out/bandwidth.json" ]] && bw=(--bandwidth "$out/bandwidth.json")
python3 "$root/bench/suite_report.py" --collect "$out" --phase "$phase" --machine "$out/machine_$phase.txt" \
  --alloc-limit "$alloc_limit" "${bw[@]}" --output "$final/suite_$phase.json"
python3 "$root/bench/suite_report.py" --no-docs --out "$final" "$final" | tee "$out/suite_report_$phase.log" | tail -40
finish "$phase"
