#!/bin/bash
# Each committed trace replayed at 2x by the engine's policy, the program's thread held behind the
# discard stream's work in placements and drops (the H200 model as it is) and not held
# (place_holds_thread false).   sim-hold.sh DEEPUM_SIM
set -euo pipefail
sim=$1
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../sim_traces.sh"
t=$(mktemp -d)
unpack_sim_traces "$t" "$sim"
for n in bert-base gpt2-350m resnet50; do
  xz -dc "$here/../2026-11-29-h200-suite-sim/$n.dtrace.xz" > "$t/$n.dtrace"
done
"$sim" machine > "$t/held.json"
python3 -c "import json,sys; m=json.load(open(sys.argv[1])); m['place_holds_thread']=False; json.dump(m, open(sys.argv[2], 'w'))" \
  "$t/held.json" "$t/free.json"
printf "%-12s %10s %10s\n" trace held "not held"
for n in gpt2 gpt2-350m bert-base bert-large t5-base resnet resnet50 densenet201 llama-1b sweep; do
  w=$(sim_window $n)
  row=""
  for m in held free; do
    # shellcheck disable=SC2086
    row="$row $("$sim" replay "$t/$n.dtrace" $w --machine "$t/$m.json" --oversubscription 2 --policy deepum-swap | awk '$1=="deepum-swap"{print $2; exit}')"
  done
  printf "%-12s %10s %10s\n" $n $row
done
rm -rf "$t"
