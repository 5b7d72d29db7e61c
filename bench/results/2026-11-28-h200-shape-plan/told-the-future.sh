#!/bin/bash
# told-the-future.sh SIM: the replays of told-the-future.patch (a measurement, not for landing),
# SIM a deepum-sim built with it; the traces of 2026-11-26-engine-h200, unpacked in /tmp.
set -euo pipefail
sim=$1; m=sim/machines/h100.json
for t in "gpt2 5 2" "resnet 4 2"; do
  set -- $t
  REC=/tmp/$1.namings "$sim" replay /tmp/$1.dtrace --machine $m --iterations $2 --warmup $3 --oversubscription 2 --policy deepum-swap >/dev/null
  sort -n -k1 /tmp/$1.namings -o /tmp/$1.namings
  for ahead in none 50 200 1000; do
    echo "\$ $1 at 2x, victims by their real next use, copied back ahead: $ahead operations"
    if [[ $ahead == none ]]; then unset ORACLE_AHEAD; else export ORACLE_AHEAD=$ahead; fi
    ORACLE=/tmp/$1.namings "$sim" replay /tmp/$1.dtrace --machine $m --iterations $2 --warmup $3 --oversubscription 2 --policy deepum-swap
  done
  unset ORACLE_AHEAD
done
