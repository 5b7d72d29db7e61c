#!/bin/bash
# sim-costs.sh SIM: what each of the H200 model's costs holds of the step, by deepum-sim: the
# committed traces replayed at 2x with the model as it is, then with one cost taken away at a time:
#   drops free        no call time and no time per byte for drops (cuMemDiscardBatchAsync)
#   places free       the same for placements (cuMemDiscardAndPrefetchBatchAsync)
#   places not held   placements do not hold the program's thread until they have run
#   all three         the three above at once
#   link free         copies take no time (only their calls do)
# Each column is the step against the model as it is. From the repository root; stdout.
set -euo pipefail
source bench/sim_traces.sh
dir=$(mktemp -d)
unpack_sim_traces "$dir" "$1"
"$1" machine > "$dir/h200.json"
python3 - "$dir" <<'PY'
import json, sys
base = json.load(open(f"{sys.argv[1]}/h200.json"))
variants = {
    "drops": dict(discard_call_us=0, discard_gb_per_s=1e9),
    "places": dict(place_call_us=0, place_gb_per_s=1e9),
    "unheld": dict(place_holds_thread=False),
    "three": dict(discard_call_us=0, discard_gb_per_s=1e9, place_call_us=0, place_gb_per_s=1e9,
                  place_holds_thread=False),
    "link": dict(copy_h2d_gb_per_s=1e9, copy_d2h_gb_per_s=1e9),
}
for name, change in variants.items():
    json.dump({**base, **change}, open(f"{sys.argv[1]}/{name}.json", "w"))
PY
step() {  # TRACE MACHINE: deepum-swap's step ms at 2x
  # shellcheck disable=SC2046
  "$1" replay "$dir/$2.dtrace" --machine "$dir/$3.json" --oversubscription 2 $(sim_window "$2") \
    --policy deepum-swap --json |
    python3 -c 'import json, sys; print("%.1f" % (json.load(sys.stdin)["policies"][0]["step_ns"] / 1e6))'
}
printf '%-12s %8s %12s %12s %12s %12s %12s\n' trace "step ms" "drops free" "places free" "not held" \
  "all three" "link free"
for t in gpt2 resnet llama-1b bert-large t5-base densenet201 sweep; do
  base=$(step "$1" "$t" h200)
  line=$(printf '%-12s %8s' "$t" "$base")
  for v in drops places unheld three link; do
    line+=$(printf ' %12.3f' "$(echo "$(step "$1" "$t" "$v") / $base" | bc -l)")
  done
  echo "$line"
done
rm -rf "$dir"
