#!/bin/bash
# Belady's MIN for the 1B decoder's steady steps (the 2026-11-28 trace, 5 iterations, 2 of warm-up)
# at the resident limit of 2x (9.08 GiB), and at that limit less half a batch and less a batch (the
# library's batch is an eighth of the limit, kept free ahead): what the room kept free costs even a
# perfect victim choice, beside deepum-swap's GiB at the same capacities.
#   sim-capacity.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
t=$(mktemp -d)
xz -dc "$here/../2026-11-28-h200-traces/llama-1b.dtrace.xz" > "$t/llama-1b.dtrace"
for capacity in 9.08GiB 8.5GiB 7.95GiB; do
  echo "== $capacity"
  "$1/bin/deepum-sim" replay "$t/llama-1b.dtrace" --capacity $capacity --policy deepum-swap \
    --iterations 5 --warmup 2 | grep -E '^(deepum-swap |belady)'
done
rm -rf "$t"
