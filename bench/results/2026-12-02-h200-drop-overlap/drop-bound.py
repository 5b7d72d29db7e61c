#!/usr/bin/env python3
"""drop-bound.py SIM TRACES_DIR: an estimate of the best step any engine that ends each swap in a
drop could reach at 2x on this driver, per committed trace (unpacked by bench/sim_traces.sh into
TRACES_DIR): the least bytes any victim choice moves (deepum-sim's Belady line, over the measured
steps) at the rates of this folder's probe and call 1, the two ways overlapped as far as they can
be, against the step of native compute (the trace's) and the floor of docs/benchmarks.md
(max(native, (F - F/R) / B)).

The way in runs at B_IN (call 1's B to the GPU); the way out at OUT_BESIDE beside it and OUT_ALONE
alone (the probe's serial order). With the way in running all the time, the way out moves
OUT_BESIDE * t_in in it and the rest alone; where the way out needs less than t_in, the way in
alone sets the time."""
import json
import subprocess
import sys

B_IN = 47.0  # GB/s, the way in with both ways at once (call 1)
OUT_BESIDE, OUT_ALONE = 33.8, 42.0  # GB/s, swaps out with their drops (probe-table.txt)
WINDOWS = {"resnet": (4, 2), "bert-large": (4, 2), "sweep": (8, 3)}

sim, traces = sys.argv[1], sys.argv[2]
print(f"{'trace':<12} {'native ms':>9} {'floor ms':>9} {'in GB':>6} {'out GB':>6} {'bound ms':>9} {'x floor':>8}")
for trace in ["gpt2", "resnet", "llama-1b", "bert-large", "t5-base", "densenet201", "sweep"]:
    iterations, warmup = WINDOWS.get(trace, (5, 2))
    out = subprocess.run([sim, "replay", f"{traces}/{trace}.dtrace", "--oversubscription", "2", "--iterations",
                          str(iterations), "--warmup", str(warmup), "--policy", "deepum-swap", "--json"],
                         check=True, capture_output=True, text=True).stdout
    replay = json.loads(out)
    steps = replay["iterations"]
    native_ms = replay["compute_ns"] / steps / 1e6
    to_gpu = replay["belady"]["to_gpu_bytes"] / steps / 1e9
    to_host = replay["belady"]["to_host_bytes"] / steps / 1e9
    footprint = replay["footprint_bytes"] / 1e9
    floor_ms = max(native_ms, (footprint - footprint / 2) / B_IN * 1e3)
    t_in = to_gpu / B_IN
    left = max(0.0, to_host - OUT_BESIDE * t_in)
    bound_ms = max(native_ms, (t_in + left / OUT_ALONE) * 1e3)
    print(f"{trace:<12} {native_ms:>9.1f} {floor_ms:>9.1f} {to_gpu:>6.2f} {to_host:>6.2f} {bound_ms:>9.1f} "
          f"{bound_ms / floor_ms:>8.2f}")
