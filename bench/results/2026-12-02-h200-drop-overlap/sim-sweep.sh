#!/bin/bash
# sim-sweep.sh SIM: the CUDA sweep's trace (generated as bench/sim_traces.sh does) replayed at 2x
# with the victims' costs: the "belady" line is the least any victim choice moves at this
# capacity. From the repository root; output on stdout.
set -euo pipefail
source bench/sim_traces.sh
dir=$(mktemp -d)
"$1" generate --model sweep --iterations 8 --out "$dir/sweep.dtrace" > /dev/null
# shellcheck disable=SC2046
"$1" replay "$dir/sweep.dtrace" --oversubscription 2 $(sim_window sweep) --policy deepum-swap --victims
rm -rf "$dir"
