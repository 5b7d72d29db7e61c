#!/bin/bash
# deepum-sim as committed after this folder's calls (no patch): each trace at 2x under deepum-swap
# (victims by the learned loop's predicted next use), deepum-swap-oracle (by the trace's true next
# use: the next naming, or the death that frees the room without a copy) and Belady's oracle, with
# --victims (what the victims written to the host cost). The 1B decoder with its steady steps
# measured (5 iterations, 2 of warm-up); the others whole.
#   sim-oracle.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sim=$1/bin/deepum-sim
t=$(mktemp -d)
for name in llama-1b bert-large t5-base densenet201; do xz -dc "$here/../2026-11-28-h200-traces/$name.dtrace.xz" > "$t/$name.dtrace"; done
for name in gpt2-350m resnet50 bert-base; do xz -dc "$here/../2026-11-29-h200-suite-sim/$name.dtrace.xz" > "$t/$name.dtrace"; done
policies=deepum-swap,deepum-swap-oracle,oracle
for name in llama-1b bert-large t5-base densenet201 gpt2-350m resnet50 bert-base; do
  window=()
  [[ $name == llama-1b ]] && window=(--iterations 5 --warmup 2)
  echo "== $name"
  "$sim" replay "$t/$name.dtrace" --oversubscription 2 --policy $policies "${window[@]}" --victims |
    grep -v -E '^(deepum-swap|deepum-swap-oracle|oracle): (limit|window)'
done
rm -rf "$t"
