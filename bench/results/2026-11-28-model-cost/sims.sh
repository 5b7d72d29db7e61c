#!/usr/bin/env bash
# sims.sh BIN OUTDIR: the replays whose outputs must stay byte-identical
set -euo pipefail
bin=$1; out=$2; mkdir -p "$out"
m=/work/main/sim/machines/h100.json
p=deepum-swap,deepum-swap-lru
[[ -f /tmp/sweep.dtrace ]] || "$bin" generate --model sweep --iterations 8 --out /tmp/sweep.dtrace >/dev/null
for r in 2 3; do
  "$bin" replay /tmp/gpt2.dtrace --machine $m --iterations 5 --warmup 2 --oversubscription $r --policy $p > "$out/sim-gpt2-${r}x.txt"
  "$bin" replay /tmp/resnet.dtrace --machine $m --iterations 4 --warmup 2 --oversubscription $r --policy $p > "$out/sim-resnet-${r}x.txt"
  "$bin" replay /tmp/sweep.dtrace --machine $m --iterations 8 --warmup 3 --oversubscription $r --policy $p > "$out/sim-sweep-${r}x.txt"
done
(cd "$out" && sha256sum sim-*.txt > sims.sha256)
