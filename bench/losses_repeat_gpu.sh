#!/usr/bin/env bash
# losses_repeat_gpu.sh [RUNS] -- COMMAND...: runs COMMAND natively once, then RUNS times (default
# 5) under deepum, and says for each run whether its losses equal native's bit for bit. A race in
# deepum's moves shows in some runs only, so one identical run proves little.
#
# COMMAND prints `step N loss X ...` lines and its footprint (`footprint_bytes N` or `summary
# peak_reserved_bytes N`), as the examples and tests/programs/sweep do. Each deepum run gets a
# resident limit of the footprint over RATIO (default 2) and mode MODE (default fast); any other
# deepum setting comes from the environment (DEEPUM_STREAM_ORDERED_DISCARD=0 and the like).
# Prints a line per run (identical, or the first step that differs and both losses there, and
# the median step time), then the count. Exit 0: every run identical; 1: one differed or failed;
# 2: no GPU. Logs and statistics: $OUT/results_losses.tar.gz.
#
#   bash bench/losses_repeat_gpu.sh 5 -- python3 examples/pytorch/train_gpt2.py --preset gpt2-124m \
#       --batch 8 --steps 5 --warmup-steps 1
set -uo pipefail
runs=5
if [[ ${1:-} =~ ^[0-9]+$ ]]; then
  runs=$1
  shift
fi
[[ ${1:-} == -- ]] && shift
if (($# == 0)); then
  echo "usage: ${0##*/} [RUNS] -- COMMAND..." >&2
  exit 2
fi
phase=losses
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# compare NATIVE_LOG RUN_LOG: "identical", or "step N: X against X natively"; the median step time.
compare() {
  python3 - "$1" "$2" <<'PY'
import re, statistics, sys
step = re.compile(r"^step (\d+) loss (\S+)(?: time_ms ([0-9.]+))?", re.M)
native = {int(s): loss for s, loss, _ in step.findall(open(sys.argv[1]).read())}
found = step.findall(open(sys.argv[2]).read())
run = {int(s): loss for s, loss, _ in found}
times = [float(t) for _, _, t in found[2:] if t]
median = f", median step {statistics.median(times):.1f} ms" if times else ""
if not run or run.keys() != native.keys():
    print(f"steps {sorted(run)} against {sorted(native)} natively{median}")
    sys.exit(1)
diff = [s for s in sorted(native) if run[s] != native[s]]
if diff:
    print(f"step {diff[0]}: {run[diff[0]]} against {native[diff[0]]} natively{median}")
    sys.exit(1)
print(f"identical{median}")
PY
}

native native "$@" >/dev/null
footprint=$(grep -m1 -oE '^(footprint_bytes|summary peak_reserved_bytes) [0-9]+' "$out/native.log" | awk '{print $NF}')
if [[ -z $footprint ]]; then
  echo "${0##*/}: the native run printed no footprint (exit status and log: $out/native.log)" >&2
  tail -5 "$out/native.log" >&2
  exit 1
fi
limit=$(python3 -c "print(int($footprint / ${RATIO:-2}))")
echo "native: footprint $footprint bytes; deepum at a resident limit of $limit bytes (${RATIO:-2}x), mode ${MODE:-fast}"
differed=0
for ((i = 1; i <= runs; ++i)); do
  DEEPUM_RESIDENT_LIMIT="${limit}B" DEEPUM_MODE="${MODE:-fast}" deepum "run$i" "$@" >/dev/null
  if verdict=$(compare "$out/native.log" "$out/run$i.log"); then
    echo "run $i: $verdict"
  else
    echo "run $i: DIFFERS: $verdict"
    ((++differed))
  fi
done
echo "$differed of $runs runs differed from native"
finish losses
((differed == 0))
