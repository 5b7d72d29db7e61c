#!/usr/bin/env python3
"""sim-vs-gpu.py SIM TRACES_DIR ZOO_DIR...: deepum-sim's step time for each zoo run of main that
has a committed trace, replayed at the run's own resident limit (its statistics'
resident_limit_bytes), against the run's median step. ZOO_DIR: an unpacked zoo output (zoo.json,
and logs/ from zoo-logs.tar.gz), with :N where main is build [N] of two (default 1). Traces as unpacked by
bench/sim_traces.sh (unpack_sim_traces), each replayed with its sim_window; MACHINE=FILE.json
replays with that machine model (deepum-sim's --machine)."""
import json
import os
import re
import subprocess
import sys

TRACE = {"gpt2": "gpt2", "resnet152": "resnet", "llama-1b": "llama-1b", "bert-large": "bert-large",
         "t5-base": "t5-base", "densenet201": "densenet201", "cuda-sweep": "sweep"}
WINDOW = {"resnet": ["--iterations", "4", "--warmup", "2"], "bert-large": ["--iterations", "4", "--warmup", "2"],
          "sweep": ["--iterations", "8", "--warmup", "3"]}


def main():
    sim, traces, zoos = sys.argv[1], sys.argv[2], sys.argv[3:]
    print(f"{'workload':<12} {'mode':<15} {'limit GiB':>9} {'GPU ms':>8} {'sim ms':>8} {'sim/GPU':>7}")
    for arg in zoos:
        zoo, _, main_build = arg.partition(":")
        main_build = main_build or "1"
        for run in json.load(open(os.path.join(zoo, "zoo.json"))):
            mode = run["mode"]
            build = re.search(r"\[(\d)\]$", mode)
            if run["workload"] not in TRACE or mode == "native" or (build and build.group(1) != main_build):
                continue
            tag = re.sub(r"\s*\[\d\]$", "", mode).replace(" ", "-")
            suffix = f"-{build.group(1)}" if build else ""
            stats = os.path.join(zoo, "logs", f"{run['workload']}-{tag}{suffix}.stats.json")
            limit = json.load(open(stats))["resident_limit_bytes"]
            name = TRACE[run["workload"]]
            out = subprocess.run([sim, "replay", os.path.join(traces, name + ".dtrace"), "--limit", f"{limit}B",
                                  "--policy", "deepum-swap", *(["--machine", os.environ["MACHINE"]] if os.environ.get("MACHINE") else []), *WINDOW.get(name, ["--iterations", "5", "--warmup", "2"])],
                                 capture_output=True, text=True, check=True).stdout
            step = next(float(line.split()[1]) for line in out.splitlines() if line.startswith("deepum-swap "))
            print(f"{run['workload']:<12} {mode:<15} {limit / 2**30:>9.2f} {run['median_ms']:>8.1f} {step:>8.1f} "
                  f"{step / run['median_ms']:>7.2f}")


if __name__ == "__main__":
    main()
