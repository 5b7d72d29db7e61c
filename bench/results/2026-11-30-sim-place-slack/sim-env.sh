# sim-env.sh R "TRACES" "ENV..." ...: step ms and GiB in/out per trace under each environment setting (the sim build of place-slack.patch reads SIM_SLACK); traces in TRACE_DIR (default /tmp/st: bench/sim_traces.sh unpack_sim_traces), the build in SIM
cd "$(dirname "$0")/../../.." && source bench/sim_traces.sh
R=$1; T="$2"; shift 2
printf "%-12s" trace; for e in "$@"; do printf " %22s" "$e"; done; echo
for n in $T; do
  w=$(sim_window $n); case $n in bert-base|gpt2-350m|resnet50) w="--iterations 5 --warmup 2";; esac
  printf "%-12s" $n
  for e in "$@"; do
    env $e ${SIM:-/tmp/b/bin/deepum-sim} replay ${TRACE_DIR:-/tmp/st}/$n.dtrace $w --oversubscription $R --policy deepum-swap --json 2>/dev/null | python3 -c "
import json,sys; d=json.load(sys.stdin); p=d['policies'][0]; print('%12.1f %4.1f/%4.1f' % (p['step_ns']/1e6, p['h2d_bytes']/2**30, p['d2h_bytes']/2**30), end=' ')"
  done; echo
done
