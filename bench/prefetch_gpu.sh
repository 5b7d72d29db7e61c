#!/usr/bin/env bash
# prefetch_gpu.sh PHASE: the prefetcher's measurements on the GPU machine, each phase one device call.
# Results go to $OUT (or bench/results/local), bundled as results_PHASE.tar.gz, tables last.
#   main      build, ctest (gpu tests included), the prefetch bandwidth, GPT-2 124M natively (its
#             footprint), then at 2x and 3x oversubscription (resident limit at footprint/2, /3):
#             reactive eviction only vs the prefetcher (and at 2x the prefetcher with discard)
#             SWEEP="128 2048" adds runs at 2x with those lookaheads
#   trace     GPT-2 124M at 2x with the prefetcher, 4 steps, traced (PREFIX.dtrace and
#             PREFIX.perfetto.json with deepum's hints, faults and residency), for reading in
#             ui.perfetto.dev or replaying in deepum-sim
#   ablation  at 2x: prediction only (no pre-eviction), + pre-eviction, and the lookahead sweep
#             (fixed 8, 32, 128, 512, and adaptive)
#   remote    build, ctest, remote_access_probe, then at FACTORS (2 3): MODES (reactive deepum mapped
#             on_fault): reactive eviction, the prefetcher, and the prefetcher with remote_access
#             mapped or on_fault (what is not resident is used over the link); laN: the prefetcher
#             with lookahead N; noevict: the prefetcher without pre-eviction
#   limit     build, ctest, then at FACTORS (1.5 2 3): MODES (reactive shared): reactive eviction
#             with CUPTI's per-thread activity buffers (the default) and with one shared buffer;
#             headSIZE: reactive eviction with eviction_headroom SIZE (e.g. head1GiB); records:
#             reactive eviction from CUPTI's records alone (stream_ordered_eviction false); ordered:
#             reactive eviction with each launch's memory prefetched before it (stream_ordered_prefetch);
#             discard: with PyTorch's cached blocks dropped, not written back (stream_ordered_discard);
#             ordered_discard: both; place: fresh blocks placed without a copy
#             (stream_ordered_place_fresh); thread: evictions alongside the program issued from
#             deepum's thread (stream_ordered_eviction_thread); swap: live victims copied to deepum's
#             pinned host store and dropped on the GPU, not migrated (stream_ordered_swap; e.g.
#             ordered_discard+place+swap); aheadN: up to N evictions alongside the program in
#             flight (evictions_ahead); first
#             the residency_gauge_probe (what the driver's free-memory figure shows of managed
#             memory; SKIP_PROBE=1 skips it)
#   Modes joined by "+" combine (ordered_discard+head256MiB). These ablations set one move each with
#   the deprecated stream_ordered_* switches (no value of the mode key makes one move alone) and
#   prefetch.enabled false, so the moves they leave unset are those of mode evict (evictions only),
#   as before the mode key; ordered_discard+place+swap is mode fast.
#   REPEATS=N runs each mode of remote and limit N times, interleaved. REPLAY=1 traces each of their
#   runs and replays its migration records in time order (deepum trace residency: NAME_replay.txt);
#   BREAKDOWN=1 adds where the GPU's time went (bench/step_breakdown.py: NAME_breakdown.md), but for
#   reactive runs; KEEP_TRACE=1 keeps their Perfetto files (NAME.perfetto.json.gz).
#   SKIP_CTEST=1 skips ctest in main, remote and limit.
# Safety (bench/common.sh): the allocation limit is half of the GPU's free memory in every deepum
# run; GPT-2 124M at batch 8 needs ~11 GiB.
set -uo pipefail
phase=${1:?usage: prefetch_gpu.sh main|trace|ablation|remote|limit}
source "$(dirname "$0")/common.sh"
export DEEPUM_PREFETCH_ENABLED=true  # off by default; every run here prefetches unless it says false

g=(python3 "$gpt2" --preset gpt2-124m --batch 8 --steps "${STEPS:-8}" --warmup-steps "${WARMUP:-3}")
native_and_bandwidth() {
  "$root/build-gpu/bin/prefetch_bandwidth" 2048 >"$out/bandwidth.txt" 2>&1
  tail -1 "$out/bandwidth.txt" | grep '^{' >"$out/bandwidth.json"
  cat "$out/bandwidth.txt"
  native gpt2_native "${g[@]}" --json "$out/gpt2_native.json"
  footprint=$(python3 -c "import json; print(json.load(open('$out/gpt2_native.json'))['peak_reserved_bytes'])")
  echo "footprint (peak reserved, native): $footprint bytes"
}
limit_at() { python3 -c "print(int($footprint / $1))"; }
run_ctest() {
  [[ -n ${SKIP_CTEST:-} ]] && return
  echo "== ctest"
  (cd "$root/build-gpu" && ctest --output-on-failure -V) >"$out/ctest.log" 2>&1
  grep -E "tests passed|tests failed|\*\*\*Failed|Skipped" "$out/ctest.log" | tail -8
}
# mode_settings MODE: the environment of one mode of the remote and limit phases; modes joined by
# "+" combine (ordered_discard+head256MiB).
mode_settings() {
  local combined=() part
  local IFS=+
  for part in $1; do
    mode_setting "$part"
    combined+=("${settings[@]}")
  done
  settings=("${combined[@]}")
}
mode_setting() {
  case $1 in
  reactive) settings=(DEEPUM_PREFETCH_ENABLED=false) ;;
  shared) settings=(DEEPUM_PREFETCH_ENABLED=false DEEPUM_TRACE_PER_THREAD_BUFFERS=false) ;;
  deepum) settings=() ;;
  la[0-9]*) settings=(DEEPUM_PREFETCH_LOOKAHEAD="${1#la}") ;;
  noevict) settings=(DEEPUM_PREFETCH_PRE_EVICT=false) ;;
  head*) settings=(DEEPUM_PREFETCH_ENABLED=false DEEPUM_EVICTION_HEADROOM="${1#head}") ;;
  records) settings=(DEEPUM_PREFETCH_ENABLED=false DEEPUM_STREAM_ORDERED_EVICTION=false) ;;
  ordered) settings=(DEEPUM_PREFETCH_ENABLED=false DEEPUM_STREAM_ORDERED_PREFETCH=true) ;;
  discard) settings=(DEEPUM_PREFETCH_ENABLED=false DEEPUM_STREAM_ORDERED_DISCARD=true) ;;
  ordered_discard) settings=(DEEPUM_PREFETCH_ENABLED=false DEEPUM_STREAM_ORDERED_PREFETCH=true
    DEEPUM_STREAM_ORDERED_DISCARD=true) ;;
  place) settings=(DEEPUM_PREFETCH_ENABLED=false DEEPUM_STREAM_ORDERED_PLACE_FRESH=true) ;;
  thread) settings=(DEEPUM_PREFETCH_ENABLED=false DEEPUM_STREAM_ORDERED_EVICTION_THREAD=true) ;;
  swap) settings=(DEEPUM_PREFETCH_ENABLED=false DEEPUM_STREAM_ORDERED_SWAP=true) ;;
  ahead[0-9]*) settings=(DEEPUM_PREFETCH_ENABLED=false DEEPUM_EVICTIONS_AHEAD="${1#ahead}") ;;
  mapped | on_fault) settings=(DEEPUM_REMOTE_ACCESS="$1") ;;
  *) echo "prefetch_gpu.sh: unknown mode $1" >&2; exit 2 ;;
  esac
}
# run_modes FACTORS MODES: GPT-2 at each oversubscription factor in each mode, REPEATS times each
# (interleaved: every mode once, then again; names end in _rN when REPEATS > 1).
run_modes() {
  local repeats=${REPEATS:-1}
  for factor in $1; do
    limit=$(limit_at "$factor")
    for ((r = 1; r <= repeats; r++)); do
      for mode in $2; do
        mode_settings "$mode"
        local name="gpt2_${mode//+/-}_x$factor"  # "+" is no file name character for the device
        ((repeats > 1)) && name+="_r$r"
        (export DEEPUM_RESIDENT_LIMIT="${limit}B" "${settings[@]}"
          [[ ${REPLAY:-0} == 1 ]] && export DEEPUM_TRACE_FILE="$out/$name"
          deepum "$name" "${g[@]}" --json "$out/$name.json")
        runs+=("$out/$name")
        if [[ ${REPLAY:-0} == 1 ]]; then  # residency by the records in time order; the trace is too big to keep
          if "$root/build-gpu/bin/deepum" trace residency "$out/$name.dtrace" "${limit}B" --timeline 100 \
            >"$out/${name}_replay.txt" 2>&1; then
            echo "$name: $(grep -E '^peak resident' "$out/${name}_replay.txt")"
            # BREAKDOWN=1: where the GPU's time went over the last steps (bench/step_breakdown.py);
            # not for reactive runs, whose millions of fault-time migrations take minutes to read
            if [[ ${BREAKDOWN:-0} == 1 && $mode != reactive ]]; then
              python3 "$root/bench/step_breakdown.py" "$out/$name.perfetto.json" --json --top 12 \
                >"$out/${name}_breakdown.md" 2>&1 && cat "$out/${name}_breakdown.md"
            fi
            # KEEP_TRACE=1 keeps the Perfetto file (compressed) of runs that are not reactive
            if [[ ${KEEP_TRACE:-0} == 1 && $mode != reactive ]]; then
              gzip -1 "$out/$name.perfetto.json"
            fi
            rm -f "$out/$name.dtrace" "$out/$name.perfetto.json"
          else
            echo "$name: the replay failed (kept $name.dtrace): $(tail -1 "$out/${name}_replay.txt")"
          fi
        fi
      done
    done
  done
}
runs=()

case "$phase" in
main)
  run_ctest
  native_and_bandwidth
  for factor in ${FACTORS:-2 3}; do
    DEEPUM_RESIDENT_LIMIT=$(limit_at "$factor")B DEEPUM_PREFETCH_ENABLED=false \
      deepum "gpt2_reactive_x$factor" "${g[@]}" --json "$out/gpt2_reactive_x$factor.json"
    DEEPUM_RESIDENT_LIMIT=$(limit_at "$factor")B \
      deepum "gpt2_deepum_x$factor" "${g[@]}" --json "$out/gpt2_deepum_x$factor.json"
    runs+=("$out/gpt2_reactive_x$factor" "$out/gpt2_deepum_x$factor")
    if [[ $factor == 2 ]]; then  # the ablation's last step: the prefetcher with discarding
      DEEPUM_RESIDENT_LIMIT=$(limit_at 2)B DEEPUM_PREFETCH_DISCARD=true \
        deepum gpt2_discard_x2 "${g[@]}" --json "$out/gpt2_discard_x2.json"
      runs+=("$out/gpt2_discard_x2")
    fi
  done
  # SWEEP="128 2048": the prefetcher at 2x with other fixed lookaheads, in the same call.
  for lookahead in ${SWEEP:-}; do
    DEEPUM_RESIDENT_LIMIT=$(limit_at 2)B DEEPUM_PREFETCH_LOOKAHEAD=$lookahead \
      deepum "gpt2_lookahead-${lookahead}_x2" "${g[@]}" --json "$out/gpt2_lookahead-${lookahead}_x2.json"
    runs+=("$out/gpt2_lookahead-${lookahead}_x2")
  done
  ;;
remote)
  run_ctest
  "$root/build-gpu/bin/remote_access_probe" 1024 >"$out/remote_access_probe.txt" 2>&1
  cat "$out/remote_access_probe.txt"
  native_and_bandwidth
  run_modes "${FACTORS:-2 3}" "${MODES:-reactive deepum mapped on_fault}"
  ;;
limit)
  run_ctest
  if [[ -z ${SKIP_PROBE:-} ]]; then
    "$root/build-gpu/bin/residency_gauge_probe" 1024 >"$out/residency_gauge_probe.txt" 2>&1
    cat "$out/residency_gauge_probe.txt"
  fi
  native_and_bandwidth
  run_modes "${FACTORS:-1.5 2 3}" "${MODES:-reactive shared}"
  ;;
trace)
  native_and_bandwidth
  DEEPUM_RESIDENT_LIMIT=$(limit_at 2)B DEEPUM_TRACE_FILE="$out/gpt2_deepum_x2_trace" \
    deepum gpt2_traced_x2 python3 "$gpt2" --preset gpt2-124m --batch 8 --steps 4 --warmup-steps 2 \
    --json "$out/gpt2_traced_x2.json"
  "$root/build-gpu/bin/deepum" trace summary "$out/gpt2_deepum_x2_trace.dtrace" 2>&1 | tee "$out/trace_summary.md"
  runs+=("$out/gpt2_traced_x2")
  ;;
ablation)
  native_and_bandwidth
  limit=$(limit_at 2)
  DEEPUM_RESIDENT_LIMIT=${limit}B DEEPUM_PREFETCH_ENABLED=false \
    deepum gpt2_reactive_x2 "${g[@]}" --json "$out/gpt2_reactive_x2.json"
  DEEPUM_RESIDENT_LIMIT=${limit}B DEEPUM_PREFETCH_PRE_EVICT=false DEEPUM_PREFETCH_ADAPTIVE_LOOKAHEAD=false \
    deepum gpt2_prediction-only_x2 "${g[@]}" --json "$out/gpt2_prediction-only_x2.json"
  runs+=("$out/gpt2_reactive_x2" "$out/gpt2_prediction-only_x2")
  for lookahead in 8 32 128 512; do
    DEEPUM_RESIDENT_LIMIT=${limit}B DEEPUM_PREFETCH_LOOKAHEAD=$lookahead DEEPUM_PREFETCH_ADAPTIVE_LOOKAHEAD=false \
      deepum "gpt2_lookahead-${lookahead}_x2" "${g[@]}" --json "$out/gpt2_lookahead-${lookahead}_x2.json"
    runs+=("$out/gpt2_lookahead-${lookahead}_x2")
  done
  DEEPUM_RESIDENT_LIMIT=${limit}B deepum gpt2_adaptive_x2 "${g[@]}" --json "$out/gpt2_adaptive_x2.json"
  runs+=("$out/gpt2_adaptive_x2")
  ;;
esac
python3 "$root/bench/prefetch_report.py" --native "$out/gpt2_native.json" --bandwidth "$out/bandwidth.json" \
  "${runs[@]}" | tee "$out/prefetch_$phase.md"
finish "$phase"
