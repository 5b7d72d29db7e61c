#!/bin/bash
# sim.sh SIM ROOM_SIM VICTIMS_SIM: the simulator's side of this folder's README and closing note, on
# the CPU. SIM is deepum-sim built from the tree as committed, ROOM_SIM from it with
# copied-room.patch, VICTIMS_SIM with sim-victims.patch (a probe, not kept). Traces as in
# ../2026-11-28-h200-traces/sim-compare.sh (unpacked into /tmp); the built-in H200 machine model.
set -uo pipefail
sim=$1 room=$2 victims=$3
here=$(dirname "$0")
for t in gpt2-124m-b8:gpt2 resnet152-b32:resnet; do
  [[ -f /tmp/${t#*:}.dtrace ]] || xz -dc "$here/../2026-11-26-engine-h200/${t%:*}.dtrace.xz" > /tmp/${t#*:}.dtrace
done
for t in llama-1b bert-large t5-base densenet201; do
  [[ -f /tmp/$t.dtrace ]] || xz -dc "$here/../2026-11-28-h200-traces/$t.dtrace.xz" > /tmp/$t.dtrace
done
[[ -f /tmp/sweep.dtrace ]] || "$sim" generate --model sweep --iterations 8 --out /tmp/sweep.dtrace >/dev/null
machine=$(mktemp -d)
echo '{}' > "$machine/h200.json"
echo '{"swap_room_waits_for_copies": false}' > "$machine/no-room-wait.json"
for us in 15 30; do echo "{\"copy_call_us\": $us}" > "$machine/copy-$us.json"; done
replay() {  # SIM TRACE MACHINE [ENV...]: the deepum-swap replay at 2x, whole
  local it=5 wu=2
  case $2 in resnet|bert-large) it=4 ;; sweep) it=8 wu=3 ;; esac
  env "${@:4}" "$1" replay /tmp/$2.dtrace --machine "$machine/$3.json" --iterations $it --warmup $wu \
    --oversubscription 2 --policy deepum-swap 2>&1
}
step() { awk '$1 == "deepum-swap" && $2 ~ /^[0-9]/ {print $2; found=1} END {if (!found) print "-"}'; }
echo "== the copied room decides as the committed engine (md5 of each replay)"
for t in gpt2 sweep; do
  echo "$t $(replay "$sim" $t h200 | md5sum | cut -c1-32) $(replay "$room" $t h200 | md5sum | cut -c1-32)"
done
echo "== step ms at 2x: H200 model; no host wait for a swap to be issued; copy back 15 and 30 us a block"
for t in gpt2 resnet llama-1b bert-large t5-base densenet201 sweep; do
  echo "$t $(replay "$sim" $t h200 | step) $(replay "$sim" $t no-room-wait | step) $(replay "$sim" $t copy-15 | step) $(replay "$sim" $t copy-30 | step)"
done
for t in llama-1b sweep; do
  echo "== $t, whole replay, and how swapped blocks came back"
  replay "$victims" $t h200 X_VICTIMS=1
done
rm -rf "$machine"
