# shellcheck shell=bash
# sim_traces.sh: sourced by the scripts that replay the committed traces in deepum-sim.
#
# unpack_sim_traces DIR SIM: the committed traces into DIR as NAME.dtrace (gpt2, resnet, llama-1b,
# bert-large, t5-base, densenet201) and a generated CUDA sweep (sweep.dtrace, from SIM).
# sim_window NAME: the --iterations and --warmup each trace is replayed with (the steps it holds,
# the first ones learning).
sim_traces_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/results" && pwd)

unpack_sim_traces() {
  local dir=$1 sim=$2 t
  xz -dc "$sim_traces_dir/2026-11-26-engine-h200/gpt2-124m-b8.dtrace.xz" > "$dir/gpt2.dtrace"
  xz -dc "$sim_traces_dir/2026-11-26-engine-h200/resnet152-b32.dtrace.xz" > "$dir/resnet.dtrace"
  for t in llama-1b bert-large t5-base densenet201; do
    xz -dc "$sim_traces_dir/2026-11-28-h200-traces/$t.dtrace.xz" > "$dir/$t.dtrace"
  done
  "$sim" generate --model sweep --iterations 8 --out "$dir/sweep.dtrace" > /dev/null
}

sim_window() {
  case $1 in
    resnet | bert-large) echo "--iterations 4 --warmup 2" ;;
    sweep) echo "--iterations 8 --warmup 3" ;;
    *) echo "--iterations 5 --warmup 2" ;;
  esac
}
