#!/usr/bin/env python3
"""sim_validation.py: replays a traced workload at the resident limit of each measured run and
compares deepum-sim's step time with the run's (bench/sim_validation_gpu.sh makes the inputs).

    sim_validation.py --trace T.dtrace --sim deepum-sim --probe um_move_probe.txt \
        --bandwidth bandwidth.json --native gpt2_native.json --machine-out machine.json RUN...

RUN is a path prefix: RUN.json (the training script's summary, median_step_ms) and RUN_stats.json
(deepum's, resident_limit_bytes). Its name holds the mode, "_swap_", "_place_" or "_default_",
which picks the simulated policy. The machine file is written from the measurements: the prefetch
bandwidths (bandwidth.json) and the swap copies' and placements' costs (the probe); the host times
of hint calls are the H100 file's (sim/machines/h100.json). Prints a Markdown table.
"""
import argparse
import json
import os
import re
import subprocess
import sys

POLICY_OF_MODE = {"swap": "deepum-swap", "place": "deepum-place", "default": "deepum-ordered"}
GIB = 1 << 30


def probe_cases(path):
    """name -> (enqueue ms, done ms) from um_move_probe's lines, and its buffer bytes."""
    cases, buffer_bytes = {}, None
    for line in open(path):
        m = re.match(r"(\S+)\s+enqueue\s+([\d.]+) ms, done\s+([\d.]+) ms", line)
        if m:
            cases[m.group(1)] = (float(m.group(2)), float(m.group(3)))
        m = re.match(r"device .*, (\d+) MiB per buffer", line)
        if m:
            buffer_bytes = int(m.group(1)) << 20
    if buffer_bytes is None:
        sys.exit(f"sim_validation.py: {path}: no 'device ..., N MiB per buffer' line")
    return cases, buffer_bytes


def machine_from(probe_path, bandwidth_path, base_path):
    cases, size = probe_cases(probe_path)
    need = ["swap_copy_out", "swap_copy_out_then_discard_behind_kernel", "swap_place_then_copy_back",
            "discard_and_place_on_gpu"]
    missing = [n for n in need if n not in cases]
    if missing:
        sys.exit(f"sim_validation.py: {probe_path} lacks {', '.join(missing)}")
    machine = json.load(open(base_path))
    bandwidth = json.load(open(bandwidth_path))
    machine["prefetch_h2d_gb_per_s"] = bandwidth["h2d_64MiB_ranges_gbps"]
    machine["prefetch_d2h_gb_per_s"] = bandwidth["d2h_64MiB_ranges_gbps"]
    gb = size / 1e9
    blocks = size / (2 << 20)
    copy_out = cases["swap_copy_out"]
    place = cases["discard_and_place_on_gpu"]
    back = cases["swap_place_then_copy_back"]
    machine["copy_d2h_gb_per_s"] = round(gb / (copy_out[1] / 1e3), 2)
    machine["place_gb_per_s"] = round(gb / (place[1] / 1e3), 2)
    # A call's own cost: a placement per 2 MB block against one call for the whole buffer.
    if "place_in_2MiB_calls" in cases:
        per_block = cases["place_in_2MiB_calls"][1]
        machine["place_call_us"] = round(max(per_block - place[1], 0) * 1e3 / blocks, 2)
    machine["copy_h2d_gb_per_s"] = round(gb / (max(back[1] - place[1], 1e-3) / 1e3), 2)
    # An async copy's host time: the copies' enqueue time behind the 200 ms kernel, per call.
    enqueue_behind = cases.get("swap_copy_out_behind_kernel", copy_out)[0]
    machine["copy_call_us"] = round(enqueue_behind * 1e3 / blocks, 2)
    # Held: the calls behind a 200 ms kernel returned only once the kernel and the copies were done.
    held = cases["swap_copy_out_then_discard_behind_kernel"]
    machine["swap_holds_thread"] = held[0] > 0.5 * held[1]
    return machine


def replay(sim, trace, machine_path, limit, policy, iterations, warmup):
    command = [sim, "replay", trace, "--machine", machine_path, "--policy", policy, "--iterations",
               str(iterations), "--warmup", str(warmup), "--json"]
    if limit:
        command += ["--limit", f"{limit}B"]  # a size needs a unit
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        return None, done.stderr.strip() or f"exit {done.returncode}"
    report = json.loads(done.stdout)
    result = report["policies"][0]
    return result, None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trace", required=True)
    parser.add_argument("--sim", required=True)
    parser.add_argument("--probe", required=True)
    parser.add_argument("--bandwidth", required=True)
    parser.add_argument("--native", required=True)
    parser.add_argument("--machine-out", required=True)
    parser.add_argument("--base", default=os.path.join(os.path.dirname(__file__), "..", "sim", "machines", "h100.json"))
    parser.add_argument("--iterations", type=int, default=5, help="steps in the trace")
    parser.add_argument("--warmup", type=int, default=2, help="steps replayed but not measured")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a machine key measured elsewhere (a probe without the case), after the probe's")
    parser.add_argument("runs", nargs="+")
    args = parser.parse_args()

    machine = machine_from(args.probe, args.bandwidth, args.base)
    for setting in args.set:
        key, sep, value = setting.partition("=")
        if not sep:
            sys.exit(f"sim_validation.py: --set {setting}: expected KEY=VALUE (deepum-sim checks the key)")
        machine[key] = json.loads(value)
    with open(args.machine_out, "w") as f:
        json.dump(machine, f, indent=2)
    print("machine file (" + args.machine_out + "): " + json.dumps(machine))
    print()
    native = json.load(open(args.native))
    points = [("native", 1.0, native["median_step_ms"], 0, "deepum-ordered")]
    footprint = native["peak_reserved_bytes"]
    for run in args.runs:
        name = os.path.basename(run)
        m = re.search(r"_(swap|place|default)_x([\d.]+)$", name)
        if not m:
            sys.exit(f"sim_validation.py: {name}: expected NAME_MODE_xFACTOR with MODE swap, place or default")
        try:
            measured = json.load(open(run + ".json"))["median_step_ms"]
            limit = json.load(open(run + "_stats.json"))["resident_limit_bytes"]
        except (OSError, KeyError, ValueError) as e:
            print(f"| {name} | the run left no result ({e}) |")
            continue
        points.append((m.group(1), footprint / limit, measured, limit, POLICY_OF_MODE[m.group(1)]))

    print("| mode | oversubscription (limit GiB) | simulated policy | measured ms | simulated ms | error | "
          "simulated stall ms | what the model did |")
    print("|---|---|---|---:|---:|---:|---:|---|")
    within = 0
    for mode, factor, measured, limit, policy in points:
        result, problem = replay(args.sim, args.trace, args.machine_out, limit, policy, args.iterations, args.warmup)
        if result is None:
            print(f"| {mode} | {factor:.2f}x | {policy} | {measured:.1f} | failed: {problem} | | | |")
            continue
        simulated = result["step_ns"] / 1e6
        error = (simulated - measured) / measured
        within += abs(error) <= 0.25
        limit_text = f"{limit / GIB:.2f}" if limit else "none"
        print(f"| {mode} | {factor:.2f}x ({limit_text}) | {policy} | {measured:.1f} | {simulated:.1f} | "
              f"{error * 100:+.1f}% | {result['stall_ns'] / (args.iterations - args.warmup) / 1e6:.1f} | {result['detail']} |")
    print()
    print(f"within 25%: {within} of {len(points)} points")


if __name__ == "__main__":
    main()
