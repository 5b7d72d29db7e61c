#!/usr/bin/env python3
"""The model zoo: workloads of many shapes, each run natively, under deepum's default settings,
and under deepum's fastest settings at 2x oversubscription (the resident limit half the native
footprint; 1x and 3x on request), every deepum run under a watchdog. A run fails when a step takes
over ten times as long as the same step natively (or the program stops printing steps), when it
exits with an error, or when its losses differ from native by a single bit.

Every run's allocation limit is 60% of the GPU's free memory, so no program asks for more managed
memory than the card has.

    python3 tests/zoo/model_zoo.py --lib build/lib/libdeepum.so --sweep build/tests/sweep --out DIR
    python3 tests/zoo/model_zoo.py ... --only bert-large cupy     # some workloads
    python3 tests/zoo/model_zoo.py ... --modes "fastest 2x" "lru 2x"  # the 2x runs alone
    python3 tests/zoo/model_zoo.py ... --set evictions_ahead=2        # a setting for every deepum run
    python3 tests/zoo/model_zoo.py ... --steps 12                     # longer runs (default 6 steps)
    python3 tests/zoo/model_zoo.py --lib A/libdeepum.so B/libdeepum.so ...  # two builds, one native run
The modes: default (deepum's defaults, no resident limit), "fastest 1x", "fastest 2x" and "fastest 3x"
(the fastest settings, resident limit the footprint, half of it, a third of it) and "lru 2x" (2x with
learn_loop off: victims least recently named, copied back at the launch naming them, as the engine did
before it learned loops). "evict 2x" and "safe 2x" run modes evict and safe at 2x: with "lru 2x" and
"fastest 2x" they make an ablation of the engine's moves (docs/configuration.md, Modes).

Each Rx row also shows the floor, max(native step, (F - F/R) / B): F the native footprint, B the
pinned-copy rate per direction with both directions at once (bench/pinned_copy_rate.py), measured at
the start of the same run. Each deepum row ends with the program thread's time in deepum from the
run's statistics (docs/stats-format.md): per launch at the median and the 99th percentile, and in the
driver's move calls per step (the run's total over its steps). The table comes last, then for each
deepum row label the geometric mean of x floor over its workloads and, with several builds, each
build's steps against build [1]'s; DIR gets zoo.json and every run's log and statistics in
zoo-logs.tar.gz.

The runs do not inherit DEEPUM_* variables (each mode sets its own); --set gives every deepum run a
setting (docs/configuration.md's keys, as DEEPUM_<KEY>).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
STEP = re.compile(r"^step (\d+) loss (\S+) time_ms ([0-9.]+)")
FOOTPRINT = re.compile(r"^(?:summary peak_reserved_bytes|footprint_bytes) (\d+)")
# deepum's fastest settings: every move ordered in the launch's stream (the default mode, named so
# the runs say what they ran).
FASTEST = {"DEEPUM_MODE": "fast"}
MODES = ("default", "fastest 1x", "fastest 2x", "fastest 3x", "lru 2x", "evict 2x", "safe 2x")
SLOWDOWN_LIMIT = 10.0  # a step may take this many times its native time
MIN_ALLOWANCE_S = 5.0  # ... but never less than this (startup, tiny steps)


# XLA autotunes by timing, so its kernels (and the last bits of a loss) can differ between two runs;
# the zoo compares losses bit for bit, so the JAX loop runs with autotuning off and deterministic ops.
WORKLOAD_ENV = {"jax": {"XLA_FLAGS": "--xla_gpu_autotune_level=0 --xla_gpu_deterministic_ops=true"}}


def workloads(sweep: str, steps: int = 6) -> dict[str, list[str]]:
    hf = str(ROOT / "examples/zoo/train_hf.py")
    return {
        "bert-large": [PY, hf, "--model", "bert-large", "--batch", "16", "--seq-len", "512", "--steps", str(steps)],
        "llama-1b": [PY, hf, "--model", "llama-1b", "--batch", "4", "--seq-len", "512", "--vocab", "32000",
                     "--steps", str(steps)],
        "t5-base": [PY, hf, "--model", "t5-base", "--batch", "16", "--seq-len", "512", "--steps", str(steps)],
        "resnet152": [PY, str(ROOT / "examples/pytorch/train_resnet.py"), "--model", "resnet152", "--batch", "32",
                      "--steps", str(steps), "--warmup-steps", "1"],
        "densenet201": [PY, str(ROOT / "examples/pytorch/train_resnet.py"), "--model", "densenet201", "--batch", "32",
                        "--steps", str(steps), "--warmup-steps", "1"],
        "gpt2": [PY, str(ROOT / "examples/pytorch/train_gpt2.py"), "--preset", "gpt2-124m", "--batch", "8",
                 "--steps", str(steps), "--warmup-steps", "1"],
        # The benchmark suite's other shapes (bench/suite_gpu.sh), for the simulator's suite points.
        "gpt2-350m": [PY, str(ROOT / "examples/pytorch/train_gpt2.py"), "--preset", "gpt2-350m", "--batch", "8",
                      "--steps", str(steps), "--warmup-steps", "1"],
        "bert-base": [PY, str(ROOT / "examples/pytorch/train_bert.py"), "--preset", "bert-base", "--batch", "32",
                      "--steps", str(steps), "--warmup-steps", "1"],
        "resnet50": [PY, str(ROOT / "examples/pytorch/train_resnet.py"), "--model", "resnet50", "--batch", "64",
                     "--steps", str(steps), "--warmup-steps", "1"],
        # Shapes and settings the others lack: a vision transformer, a CNN of depthwise convolutions and
        # LayerNorm, a decoder in bf16 autocast with activation checkpointing (the backward computes each
        # layer's forward again), and torch.compile's Triton kernels.
        "vit-b16": [PY, str(ROOT / "examples/pytorch/train_resnet.py"), "--model", "vit_b_16", "--batch", "96",
                    "--steps", str(steps), "--warmup-steps", "1"],
        "convnext": [PY, str(ROOT / "examples/pytorch/train_resnet.py"), "--model", "convnext_base", "--batch", "64",
                     "--steps", str(steps), "--warmup-steps", "1"],
        "llama-bf16-ckpt": [PY, hf, "--model", "llama-1b", "--batch", "8", "--seq-len", "1024", "--vocab", "32000",
                            "--dtype", "bf16", "--checkpointing", "--steps", str(steps)],
        "gpt2-compiled": [PY, hf, "--model", "gpt2", "--batch", "16", "--seq-len", "1024", "--compile",
                          "--steps", str(steps)],
        "cupy": [PY, str(ROOT / "examples/zoo/cupy_loop.py"), "--arrays", "16", "--mib", "256", "--steps", str(steps)],
        "jax": [PY, str(ROOT / "examples/zoo/jax_loop.py"), "--steps", str(steps)],
        "cuda-sweep": [sweep, "--arrays", "16", "--mib", "256", "--steps", str(steps)],
    }


class Run:
    """One program run: its step lines as they come, timed, under a per-step deadline."""

    def __init__(self, cmd: list[str], env: dict[str, str], allowances: list[float] | None, log: Path):
        self.cmd, self.env, self.allowances, self.log = cmd, env, allowances, log
        self.steps: list[tuple[str, float, float]] = []  # (loss, step ms, seconds since start)
        self.footprint = 0
        self.exit_code: int | None = None
        self.watchdog = ""

    def _read(self, proc: subprocess.Popen, start: float, out) -> None:
        for line in proc.stdout:
            out.write(line)
            if m := STEP.match(line):
                self.steps.append((m.group(2), float(m.group(3)), time.monotonic() - start))
            elif m := FOOTPRINT.match(line):
                self.footprint = int(m.group(1))

    def go(self) -> "Run":
        start = time.monotonic()
        with open(self.log, "w", encoding="utf-8") as out:
            proc = subprocess.Popen(self.cmd, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    text=True, errors="replace", start_new_session=True)
            reader = threading.Thread(target=self._read, args=(proc, start, out), daemon=True)
            reader.start()
            while proc.poll() is None:
                time.sleep(0.1)
                seen = len(self.steps)
                last = self.steps[-1][2] if seen else 0.0
                allowed = self._allowance(seen)
                if time.monotonic() - start - last > allowed:
                    self.watchdog = f"no step {seen} within {allowed:.0f} s of the last (10x native)"
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                    break
            reader.join(timeout=10)
            self.exit_code = proc.returncode
        return self

    def _allowance(self, index: int) -> float:
        if self.allowances is None:
            return 1200.0  # native: no watchdog beyond a hang
        # The gap to step `index` (or to the exit, after the last step), ten times native's.
        gap = self.allowances[min(index, len(self.allowances) - 1)]
        return max(SLOWDOWN_LIMIT * gap, MIN_ALLOWANCE_S + (30.0 if index >= len(self.allowances) - 1 else 0.0))

    def gaps(self, total_s: float) -> list[float]:
        """Seconds from each step line to the next (the first from the start, the last to the exit)."""
        times = [0.0] + [t for _, _, t in self.steps]
        return [b - a for a, b in zip(times, times[1:])] + [max(total_s - times[-1], 1.0)]

    def median_ms(self) -> float:
        ms = [m for _, m, _ in self.steps[1:]] or [m for _, m, _ in self.steps]
        return statistics.median(ms) if ms else float("nan")


def free_mib() -> int:
    out = subprocess.run(["nvidia-smi", "--query-gpu=memory.free", "--format=csv,noheader,nounits", "-i", "0"],
                         capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0])


def link_gbps(out: Path) -> float:
    """The pinned-copy rate per direction with both running, GB/s (0 when it cannot be measured)."""
    path = out / "link.json"
    done = subprocess.run([PY, str(ROOT / "bench/pinned_copy_rate.py"), "--mib", "1024", "--json", str(path)],
                          capture_output=True, text=True)
    print(done.stdout.strip() or done.stderr.strip(), flush=True)
    if done.returncode != 0 or not path.exists():
        return 0.0
    link = json.loads(path.read_text())
    return min(float(link["h2d_gbps"]), float(link["d2h_gbps"]))


def zoo(args: argparse.Namespace) -> list[dict]:
    base = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false", PYTHONUNBUFFERED="1")
    ignored = sorted(k for k in base if k.startswith("DEEPUM_") and k != "DEEPUM_CUPTI_LIBRARY")
    if ignored:
        print(f"ignored from the environment: {', '.join(ignored)} (give settings with --set KEY=VALUE)", flush=True)
    base = {k: v for k, v in base.items() if k not in ignored}
    settings = {f"DEEPUM_{key.upper()}": value for key, value in args.set}
    base.pop("LD_PRELOAD", None)
    alloc_limit = f"{free_mib() * 6 // 10}MiB"
    logs = Path(args.out) / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    gbps = link_gbps(Path(args.out))
    rows = []
    for turn, (name, cmd) in enumerate((n, c) for n, c in workloads(args.sweep, args.steps).items()
                                       if not args.only or n in args.only):
        t0 = time.monotonic()
        env = dict(base, **WORKLOAD_ENV.get(name, {}))
        native = Run(cmd, env, None, logs / f"{name}-native.log").go()
        gaps = native.gaps(time.monotonic() - t0)
        rows.append(row(name, "native", native, native, gbps))
        if native.exit_code != 0 or not native.steps:
            print(f"{name}: native run failed (exit {native.exit_code}); skipping its deepum runs", flush=True)
            continue
        for mode, mode_env in deepum_runs(env, native, alloc_limit, settings).items():
            if mode not in args.modes:
                continue
            # Several builds take turns going first, workload by workload: a call's first run is
            # often slower.
            first = turn % len(args.lib)
            for index in [*range(first, len(args.lib)), *range(first)]:
                label = mode if len(args.lib) == 1 else f"{mode} [{index + 1}]"
                stem = f"{name}-{label.replace(' ', '-').replace('[', '').replace(']', '')}"
                # The statistics beside the log (docs/stats-format.md): where each run's time went.
                lib_env = dict(mode_env, LD_PRELOAD=args.lib[index], DEEPUM_STATS_FILE=str(logs / f"{stem}.stats.json"))
                run = Run(cmd, lib_env, gaps, logs / f"{stem}.log").go()
                rows.append(row(name, label, run, native, gbps, program_thread(logs / f"{stem}.stats.json")))
                print(format_row(rows[-1]), flush=True)
    return rows


def deepum_runs(env: dict[str, str], native: Run, alloc_limit: str, settings: dict[str, str]) -> dict[str, dict]:
    """Each mode's environment, LD_PRELOAD left for the caller."""
    deepum = dict(env, DEEPUM_ALLOC_LIMIT=alloc_limit)
    runs = {"default": {**deepum, **settings}}
    if native.footprint:
        for ratio in (1, 2, 3):
            runs[f"fastest {ratio}x"] = {**deepum, "DEEPUM_RESIDENT_LIMIT": f"{native.footprint // ratio}B",
                                         **FASTEST, **settings}
        runs["lru 2x"] = dict(runs["fastest 2x"], DEEPUM_LEARN_LOOP="false")
        for mode in ("evict", "safe"):
            runs[f"{mode} 2x"] = dict(runs["fastest 2x"], DEEPUM_MODE=mode)
    return runs


def floor_ms(native: Run, ratio: float, gbps: float) -> float:
    """max(native step, (F - F/R) / B): what leaves the GPU each step, and comes back, at the link's rate."""
    moved = native.footprint - native.footprint / ratio
    return max(native.median_ms(), moved / (gbps * 1e9) * 1e3 if gbps > 0 else 0.0)


def program_thread(stats: Path) -> dict:
    """The program thread's time in deepum, from a run's statistics file; empty where it has none."""
    try:
        thread = json.loads(stats.read_text())["program_thread"]
        launches = thread["launch_callback"]
        return {"launch_p50_us": launches["p50_ns"] / 1e3, "launch_p99_us": launches["p99_ns"] / 1e3,
                "move_calls_ms": thread["move_calls_ns"]["total"] / 1e6}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def row(name: str, mode: str, run: Run, native: Run, gbps: float, thread: dict | None = None) -> dict:
    losses, native_losses = [s[0] for s in run.steps], [s[0] for s in native.steps]
    ratio = re.search(r"(\d+)x\b", mode)
    floor = floor_ms(native, float(ratio.group(1)), gbps) if ratio else native.median_ms()
    identical = losses == native_losses
    ok = run.exit_code == 0 and not run.watchdog and identical and len(losses) == len(native_losses)
    thread = thread or {}
    moves = thread.get("move_calls_ms")
    return {
        "workload": name, "mode": mode, "steps": len(losses), "exit": run.exit_code, "watchdog": run.watchdog,
        "median_ms": run.median_ms(), "x_native": run.median_ms() / native.median_ms(),
        "floor_ms": floor, "x_floor": run.median_ms() / floor, "link_gbps": gbps,
        "footprint_bytes": run.footprint, "losses": losses, "identical": identical,
        "launch_p50_us": thread.get("launch_p50_us"), "launch_p99_us": thread.get("launch_p99_us"),
        "move_calls_ms_per_step": moves / len(losses) if moves is not None and losses else None,
        "verdict": "PASS" if ok else "FAIL",
    }


HEADER = (f"{'workload':<15} {'mode':<15} {'steps':>5} {'median ms':>10} {'x nat':>7} {'floor ms':>9} "
          f"{'x floor':>7} {'identical':>9}  verdict {'launch p50 us':>13} {'p99 us':>9} {'moves ms/step':>13}")


def format_row(r: dict) -> str:
    why = r["watchdog"] or ("" if r["identical"] else "losses differ") or (f"exit {r['exit']}" if r["exit"] else "")

    def number(key: str, width: int) -> str:
        value = r.get(key)
        return f"{value:>{width}.1f}" if value is not None else f"{'-':>{width}}"

    return (f"{r['workload']:<15} {r['mode']:<15} {r['steps']:>5} {r['median_ms']:>10.1f} {r['x_native']:>7.2f} "
            f"{r['floor_ms']:>9.1f} {r['x_floor']:>7.2f} {'yes' if r['identical'] else 'NO':>9}  {r['verdict']:<7} "
            f"{number('launch_p50_us', 13)} {number('launch_p99_us', 9)} {number('move_calls_ms_per_step', 13)}"
            f"{' ' + why if why else ''}")


def summary(rows: list[dict]) -> list[str]:
    """Per deepum row label, the geometric mean of x floor over its workloads (the bound the acceptance
    sets); with several builds, each build's steps against build [1]'s on the workloads both ran."""
    by_label: dict[str, dict[str, dict]] = {}
    for r in rows:
        if r["mode"] != "native" and r["median_ms"] > 0:
            by_label.setdefault(r["mode"], {})[r["workload"]] = r
    lines = []
    for label, runs in by_label.items():
        floors = [r["x_floor"] for r in runs.values()]
        failed = sum(r["verdict"] != "PASS" for r in runs.values())
        lines.append(f"{label}: x floor {statistics.geometric_mean(floors):.2f} (geometric mean over {len(floors)} "
                     f"workload{'s' if len(floors) != 1 else ''}, {min(floors):.2f}-{max(floors):.2f})"
                     f"{f', {failed} failed' if failed else ''}")
        build = re.fullmatch(r"(.*) \[(\d+)\]", label)
        first = by_label.get(f"{build.group(1)} [1]") if build and build.group(2) != "1" else None
        shared = [w for w in runs if first and w in first]
        if shared:
            ratio = statistics.geometric_mean([runs[w]["median_ms"] / first[w]["median_ms"] for w in shared])
            lines.append(f"{label} against [1]: each step {ratio:.3f} of [1]'s (geometric mean over "
                         f"{len(shared)} workload{'s' if len(shared) != 1 else ''})")
    return lines


def setting(text: str) -> tuple[str, str]:
    """KEY=VALUE, KEY a configuration key (letters, digits, underscores)."""
    key, sep, value = text.partition("=")
    if not sep or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", key) or not value:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE with a configuration key, such as evictions_ahead=2, "
                                         f"got {text!r}")
    return key, value


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lib", required=True, nargs="+",
                   help="libdeepum.so; with several, each deepum mode runs with each (rows marked [1], [2], ...)")
    p.add_argument("--sweep", required=True, help="the built tests/programs/sweep")
    p.add_argument("--out", required=True, help="folder for zoo.json and the logs")
    p.add_argument("--only", nargs="*", help="workloads to run (default: all)")
    p.add_argument("--modes", nargs="*", choices=MODES, default=["default", "fastest 2x"],
                   help="deepum runs beside native (default: default and fastest 2x)")
    p.add_argument("--steps", type=int, default=6,
                   help="training steps (loop rounds) each run takes (default 6); the median leaves the first out")
    p.add_argument("--set", action="append", type=setting, default=[], metavar="KEY=VALUE",
                   help="a deepum setting for every deepum run, such as evictions_ahead=2 (repeatable)")
    args = p.parse_args()
    if args.steps < 2:
        p.error(f"--steps must be at least 2 (the median leaves the first step out), got {args.steps}")
    known = workloads(args.sweep, args.steps)
    unknown = [name for name in args.only or [] if name not in known]
    if unknown:
        p.error(f"--only: no workload named {', '.join(unknown)} (the workloads: {', '.join(known)})")
    rows = zoo(args)
    out = Path(args.out)
    (out / "zoo.json").write_text(json.dumps(rows, indent=2) + "\n")
    with tarfile.open(out / "zoo-logs.tar.gz", "w:gz") as tar:
        tar.add(out / "logs", arcname="logs")
    table = "\n".join([HEADER] + [format_row(r) for r in rows] + [""] + summary(rows))
    (out / "zoo.txt").write_text(table + "\n")
    print(table)
    return 0 if all(r["verdict"] == "PASS" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
