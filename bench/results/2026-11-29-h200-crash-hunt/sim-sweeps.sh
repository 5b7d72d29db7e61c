#!/bin/bash
# sim-sweeps.sh BASE_SIM NEW_SIM (on the CPU, from the repository root): generated CUDA sweeps of
# other shapes (arrays x MiB) at 1.5x, 2x and 3x, replayed by both simulators with
# sim/machines/h100.json; "shape ratio base new" in ms a step.
set -uo pipefail
dir=$(mktemp -d)
step() {  # SIM TRACE RATIO
  "$1" replay "$2" --machine sim/machines/h100.json --iterations 8 --warmup 3 --oversubscription "$3" \
    --policy deepum-swap 2>/dev/null | awk '$1 == "deepum-swap" && NF > 5 {print $2}'
}
for shape in "16 256" "8 512" "32 128" "64 64"; do
  read -r arrays mib <<<"$shape"
  "$2" generate --model sweep --arrays "$arrays" --mib "$mib" --iterations 8 --out "$dir/s.dtrace" > /dev/null
  for r in 1.5 2 3; do echo "${arrays}x${mib}MiB ${r}x $(step "$1" "$dir/s.dtrace" $r) $(step "$2" "$dir/s.dtrace" $r)"; done
done
rm -rf "$dir"
