#!/bin/bash
# sim-points.sh BASE_SIM NEW_SIM (on the CPU, from the repository root): the seventeen points
# measured on an H200 (bench/results/2026-11-29-h200-suite-sim, sim-hold.sh) replayed by deepum-sim
# of the commit before the change (BASE_SIM) and of the change (NEW_SIM), sim/machines/h100.json,
# "point base new" in ms a step.
set -uo pipefail
suite=bench/results/2026-11-29-h200-suite-sim
source bench/sim_traces.sh
dir=$(mktemp -d)
unpack_sim_traces "$dir" "$2"
for t in gpt2-350m bert-base resnet50; do xz -dc "$suite/$t.dtrace.xz" > "$dir/$t.dtrace"; done
limit() {  # WORKLOAD RATIO: the zoo's resident limit, F/R of that call's native footprint
  python3 -c "import json; f = [r['footprint_bytes'] for r in json.load(open('$suite/call1-zoo.json')) if r['workload'] == '$1'][0]; print(f'{f // $2}B')"
}
step() {  # SIM TRACE ARGS...: the step in ms, or "-"
  local sim=$1 trace=$2
  shift 2
  "$sim" replay "$dir/$trace.dtrace" --machine sim/machines/h100.json "$@" --policy deepum-swap 2>/dev/null |
    awk '$1 == "deepum-swap" && NF > 5 {print $2; found=1} END {if (!found) print "-"}'
}
points=(
  "gpt2-350m-2x|gpt2-350m|--iterations 5 --warmup 2 --limit $(limit gpt2-350m 2)"
  "gpt2-350m-3x|gpt2-350m|--iterations 5 --warmup 2 --limit $(limit gpt2-350m 3)"
  "bert-base-2x|bert-base|--iterations 5 --warmup 2 --limit $(limit bert-base 2)"
  "bert-base-3x|bert-base|--iterations 5 --warmup 2 --limit $(limit bert-base 3)"
  "resnet50-2x|resnet50|--iterations 5 --warmup 2 --limit $(limit resnet50 2)"
  "resnet50-3x|resnet50|--iterations 5 --warmup 2 --limit $(limit resnet50 3)"
  "gpt2-2x|gpt2|--iterations 5 --warmup 2 --oversubscription 2"
  "gpt2-3x|gpt2|--iterations 5 --warmup 2 --capacity 80GiB --limit 3.727GiB"
  "resnet152-2x|resnet|$(sim_window resnet) --oversubscription 2"
  "resnet152-3x|resnet|$(sim_window resnet) --oversubscription 3"
  "bert-large-2x|bert-large|$(sim_window bert-large) --oversubscription 2"
  "bert-large-3x|bert-large|$(sim_window bert-large) --oversubscription 3"
  "llama-1b-2x|llama-1b|--iterations 5 --warmup 2 --oversubscription 2"
  "llama-1b-3x|llama-1b|--iterations 5 --warmup 2 --oversubscription 3"
  "t5-base-2x|t5-base|--iterations 5 --warmup 2 --oversubscription 2"
  "densenet201-2x|densenet201|--iterations 5 --warmup 2 --oversubscription 2"
  "sweep-2x|sweep|$(sim_window sweep) --oversubscription 2"
)
for point in "${points[@]}"; do
  IFS='|' read -r name trace args <<<"$point"
  # shellcheck disable=SC2086
  echo "$name $(step "$1" "$trace" $args) $(step "$2" "$trace" $args)"
done
rm -rf "$dir"
