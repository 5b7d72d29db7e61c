#!/bin/bash
# sim-hold.sh BASE_SIM NEW_SIM (on the CPU, from the repository root): every point measured on an
# H200 replayed by deepum-sim of fbd79aa (BASE_SIM: a placement or drop holds the program's thread
# until deepum's copies to and from the store then running end) and of the commit after it
# (NEW_SIM: behind its own stream's work only), with sim/machines/h100.json; each against the
# latest step measured on an H200 (this folder's calls, or the results folder named), and the mean
# absolute error.
set -uo pipefail
here=bench/results/2026-11-29-h200-suite-sim
source bench/sim_traces.sh
dir=$(mktemp -d)
unpack_sim_traces "$dir" "$2"
for t in gpt2-350m bert-base resnet50; do xz -dc "$here/$t.dtrace.xz" > "$dir/$t.dtrace"; done
limit() {  # WORKLOAD RATIO: the zoo's resident limit, F/R of call 1's native footprint
  python3 -c "import json; f = [r['footprint_bytes'] for r in json.load(open('$here/call1-zoo.json')) if r['workload'] == '$1'][0]; print(f'{f // $2}B')"
}
step() {  # SIM TRACE ARGS...: the step in ms, or "-"
  local sim=$1 trace=$2
  shift 2
  "$sim" replay "$dir/$trace.dtrace" --machine sim/machines/h100.json "$@" --policy deepum-swap 2>/dev/null |
    awk '$1 == "deepum-swap" && NF > 5 {print $2; found=1} END {if (!found) print "-"}'
}
# name | trace | replay arguments | measured ms | where measured
points=(
  "GPT-2 350M 2x|gpt2-350m|--iterations 5 --warmup 2 --limit $(limit gpt2-350m 2)|893.9|call 1"
  "GPT-2 350M 3x|gpt2-350m|--iterations 5 --warmup 2 --limit $(limit gpt2-350m 3)|1053.5|call 1"
  "BERT-base 2x|bert-base|--iterations 5 --warmup 2 --limit $(limit bert-base 2)|667.7|call 1"
  "BERT-base 3x|bert-base|--iterations 5 --warmup 2 --limit $(limit bert-base 3)|844.7|call 1"
  "ResNet-50 2x|resnet50|--iterations 5 --warmup 2 --limit $(limit resnet50 2)|249.3|call 2"
  "ResNet-50 3x|resnet50|--iterations 5 --warmup 2 --limit $(limit resnet50 3)|312.2|call 4"
  "GPT-2 124M 2x|gpt2|--iterations 5 --warmup 2 --oversubscription 2|473.9|call 2"
  "GPT-2 124M 3x|gpt2|--iterations 5 --warmup 2 --capacity 80GiB --limit 3.727GiB|609.0|2026-11-28-h200-traces"
  "ResNet-152 2x|resnet|$(sim_window resnet) --oversubscription 2|308.0|call 2"
  "ResNet-152 3x|resnet|$(sim_window resnet) --oversubscription 3|372.6|call 3"
  "BERT-large 2x|bert-large|$(sim_window bert-large) --oversubscription 2|909.7|2026-11-28-h200-traces"
  "BERT-large 3x|bert-large|$(sim_window bert-large) --oversubscription 3|1179.1|2026-11-28-h200-traces"
  "Llama-style 1B 2x|llama-1b|--iterations 5 --warmup 2 --oversubscription 2|1159.4|2026-11-28-h200-traces"
  "Llama-style 1B 3x|llama-1b|--iterations 5 --warmup 2 --oversubscription 3|1887.7|2026-11-28-h200-traces"
  "T5-base 2x|t5-base|--iterations 5 --warmup 2 --oversubscription 2|514.1|2026-11-28-h200-traces"
  "DenseNet-201 2x|densenet201|--iterations 5 --warmup 2 --oversubscription 2|426.2|call 2"
  "CUDA sweep 2x|sweep|$(sim_window sweep) --oversubscription 2|104.0|2026-11-29-h200-both-ways"
)
echo "| point | measured | base | new | measured in |"
echo "|---|---:|---:|---:|---|"
for point in "${points[@]}"; do
  IFS='|' read -r name trace args measured source <<<"$point"
  # shellcheck disable=SC2086
  base=$(step "$1" "$trace" $args)
  # shellcheck disable=SC2086
  new=$(step "$2" "$trace" $args)
  echo "| $name | $measured ms | $base ms ($(python3 -c "print(f'{100 * ($base / $measured - 1):+.0f}%')")) | $new ms ($(python3 -c "print(f'{100 * ($new / $measured - 1):+.0f}%')")) | $source |"
done | tee "$dir/table.md"
python3 - "$dir/table.md" <<'PY'
import re, sys
errors = {"base": [], "new": []}
for line in open(sys.argv[1]):
    m = re.findall(r"\(([+-]\d+)%\)", line)
    if len(m) == 2:
        errors["base"].append(abs(int(m[0])))
        errors["new"].append(abs(int(m[1])))
for name, values in errors.items():
    over = sum(v > 25 for v in values)
    print(f"{name}: mean absolute error {sum(values) / len(values):.1f}% over {len(values)} points, {over} over 25%")
PY
rm -rf "$dir"
