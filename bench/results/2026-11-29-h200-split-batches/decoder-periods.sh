#!/bin/bash
# decoder-periods.sh (on the CPU, from the repository root): each 1B decoder run at 2x in this
# folder's calls and in ../2026-11-29-h200-crash-hunt: its build, its ten steps in ms, and the loop
# of addresses it ended with (operations; a step is 2582).
set -uo pipefail
here=bench/results/2026-11-29-h200-split-batches
dir=$(mktemp -d)
runs() {  # TARBALL LABEL BUILDS...: the runs [1], [2], ... of the tarball, labelled with the builds
  local tarball=$1 label=$2 i=1
  shift 2
  mkdir -p "$dir/$label" && tar xzf "$tarball" -C "$dir/$label"
  for build in "$@"; do
    local log
    log=$(find "$dir/$label" -name "llama-1b-fastest-2x-$i.log" | head -1)
    printf '%-22s [%d] %-8s steps %s| loop %s\n' "$label" "$i" "$build" \
      "$(grep -o 'time_ms [0-9.]*' "$log" | awk '{printf "%.0f ", $2}')" \
      "$(grep -o '"loop_period": [0-9]*' "${log%.log}.stats.json" | grep -o '[0-9]*$')"
    i=$((i + 1))
  done
}
runs bench/results/2026-11-29-h200-crash-hunt/call2-logs.tar.gz crash-hunt-call2 962753a d675999
runs bench/results/2026-11-29-h200-crash-hunt/call3-logs.tar.gz crash-hunt-call3 962753a d675999
runs $here/call1-logs.tar.gz call1 ce22267 split
runs $here/call3-logs.tar.gz call3 ce22267 loop loop ce22267
runs $here/call4-logs.tar.gz call4 ce22267 loop loop ce22267
rm -rf "$dir"
