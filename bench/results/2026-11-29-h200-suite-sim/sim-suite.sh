#!/bin/bash
# sim-suite.sh BASE_SIM NEW_SIM (on the CPU, from the repository root): the suite's points replayed
# by deepum-sim of 770cc1f (BASE_SIM) and of fbd79aa (NEW_SIM, which swaps blocks other streams
# named), with sim/machines/h100.json and, for NEW_SIM, that machine told placements and drops do
# not hold the program's thread. The new traces (this folder) at the resident limits the zoo set
# (its F/R, call1-zoo.json), the committed ones of GPT-2 124M, ResNet-152 and BERT-large as
# ../../sim_traces.sh unpacks them; the step in ms.
set -uo pipefail
here=bench/results/2026-11-29-h200-suite-sim
source bench/sim_traces.sh
dir=$(mktemp -d)
unpack_sim_traces "$dir" "$2"
for t in gpt2-350m bert-base resnet50; do xz -dc "$here/$t.dtrace.xz" > "$dir/$t.dtrace"; done
python3 -c "import json; m = json.load(open('sim/machines/h100.json')); m['place_holds_thread'] = False; json.dump(m, open('$dir/no-hold.json', 'w'))"
step() {  # SIM MACHINE TRACE SIZE...: the step in ms, or "-"
  local sim=$1 machine=$2 trace=$3
  shift 3
  local window="--iterations 5 --warmup 2"
  case $trace in resnet|bert-large|sweep) window=$(sim_window "$trace") ;; esac
  # shellcheck disable=SC2086
  "$sim" replay "$dir/$trace.dtrace" --machine "$machine" $window "$@" --policy deepum-swap 2>/dev/null |
    awk '$1 == "deepum-swap" && NF > 5 {print $2; found=1} END {if (!found) print "-"}'
}
limit() {  # WORKLOAD RATIO: the zoo's resident limit, F/R of call 1's native footprint
  python3 -c "import json; f = [r['footprint_bytes'] for r in json.load(open('$here/call1-zoo.json')) if r['workload'] == '$1'][0]; print(f'{f // $2}B')"
}
echo "| point | base | new | new, no hold |"
echo "|---|---:|---:|---:|"
for t in gpt2-350m bert-base resnet50; do
  for r in 2 3; do
    size=(--limit "$(limit $t $r)")
    echo "| $t ${r}x | $(step "$1" sim/machines/h100.json $t "${size[@]}") | $(step "$2" sim/machines/h100.json $t "${size[@]}") | $(step "$2" "$dir/no-hold.json" $t "${size[@]}") |"
  done
done
for t in gpt2 resnet bert-large; do
  for r in 2 3; do
    size=(--oversubscription $r)
    # GPT-2 at 3x as it was measured: the card whole, the resident limit a third of 11.18 GiB.
    [[ $t == gpt2 && $r == 3 ]] && size=(--capacity 80GiB --limit 3.727GiB)
    echo "| $t ${r}x | $(step "$1" sim/machines/h100.json $t "${size[@]}") | $(step "$2" sim/machines/h100.json $t "${size[@]}") | $(step "$2" "$dir/no-hold.json" $t "${size[@]}") |"
  done
done
rm -rf "$dir"
