#!/usr/bin/env python3
"""The benchmark suite's tables and plots (bench/suite_gpu.sh), standard library only.

    suite_report.py [--out DIR] [--docs PATH | --no-docs] [--bandwidth FILE] DIR_OR_FILE [...]
    suite_report.py --collect RUNDIR --phase P --machine FILE [--bandwidth FILE] --output FILE

The first form reads every suite_*.json under the given folders (one per phase, as suite_gpu.sh
writes them) and writes DIR/suite.md (default: the first folder) with one table per workload,
DIR/suite_WORKLOAD.png (median step time against oversubscription, one line per mode, with
native and the floor) when matplotlib can be imported, and replaces the text between
<!-- suite:begin --> and <!-- suite:end --> in docs/benchmarks.md. Without matplotlib the plots are
skipped with a message: put its wheels in .whl/ (`pip download matplotlib --only-binary=:all:
-d .whl/`) and suite_gpu.sh installs them on the GPU machine.

The second form (used by suite_gpu.sh) gathers one phase's manifest.tsv, per-run JSON and deepum
statistics into one suite_PHASE.json.

Ratios: "x native" divides by the native median step of the same phase. The floor at R (floor_ms,
which runs_report.py shares) is the larger of the native step time and the time to move
F - F/R bytes each way per step at the link's best measured rate in that direction (the larger of
the 64 MiB-range prefetch and the pinned copy, deepum's swap path, when prefetch_bandwidth measured
it), both directions overlapped. Without a bandwidth measurement the floor is the native step
time. `--bandwidth FILE` in the first form puts one measurement under every phase's floor (one
GPU model, phases measured before the pinned copy was).

A phase given twice (two calls, say the second for the runs the first skipped) keeps both calls'
rows, each with the ratios of its own call; a (workload, mode, R) that both ran keeps the later
call's row, and a run skipped in one call gives way to the other call's result.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

GIB = 1024**3
BEGIN, END = "<!-- suite:begin -->", "<!-- suite:end -->"
MODE_ORDER = ["native", "um", "deepum", "save-on-cpu", "fsdp2-cpu", "fsdp2-cpu-save-on-cpu"]
ROOT = Path(__file__).resolve().parent.parent


def load_json(path: Path) -> dict | None:
    try:
        with path.open(encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


# --------------------------------------------------------------------------
# --collect: one phase's runs into suite_PHASE.json
# --------------------------------------------------------------------------


def collect(args: argparse.Namespace) -> int:
    rundir = Path(args.collect)
    machine_lines = []
    if args.machine and Path(args.machine).exists():
        machine_lines = Path(args.machine).read_text(encoding="utf-8", errors="replace").splitlines()
    date = next((line.split(" ", 1)[1] for line in machine_lines if line.startswith("date ")), None)
    gpu_line = next((line for line in machine_lines if line.count(",") >= 3 and "MiB" in line), "")
    gpu = gpu_line.split(",")[0].strip() or None
    runs = []
    manifest = rundir / "manifest.tsv"
    for line in manifest.read_text(encoding="utf-8").splitlines() if manifest.exists() else []:
        fields = line.split("\t")
        if len(fields) < 9:
            continue
        name, workload, mode, ratio, limit, fraction, status, seconds, command = fields[:9]
        runs.append({
            "name": name, "workload": workload, "mode": mode, "ratio": float(ratio),
            "limit_bytes": int(limit or 0), "memory_fraction": float(fraction) if fraction else None,
            "exit_status": None if status == "skipped" else int(status), "skipped": status == "skipped",
            "wall_s": int(seconds), "command": command,
            "result": load_json(rundir / f"{name}.json"),
            "stats": load_json(rundir / f"{name}_stats.json"),
        })
    doc = {
        "phase": args.phase, "suite_command": f"bash bench/suite_gpu.sh {args.phase}", "date": date,
        "gpu": gpu, "machine": machine_lines, "alloc_limit_bytes": args.alloc_limit,
        "bandwidth": load_json(Path(args.bandwidth)) if args.bandwidth else None, "runs": runs,
    }
    text = json.dumps(doc, indent=1) + "\n"
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output} ({len(runs)} runs)")
    else:
        sys.stdout.write(text)
    return 0


# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------


def find_phases(paths: list[str]) -> list[dict]:
    files: list[Path] = []
    for p in map(Path, paths):
        files += sorted(p.rglob("suite_*.json")) if p.is_dir() else [p]
    phases: dict[str, dict] = {}
    for f in files:
        doc = load_json(f)
        if not doc or "runs" not in doc:
            print(f"suite_report: {f}: not a suite phase file, left out", file=sys.stderr)
            continue
        key = f"{doc.get('phase') or f.stem} {doc.get('date') or ''}"
        phases[key] = doc  # the same file given twice: once
    return list(phases.values())


def latest_rows(rows: list[dict]) -> list[dict]:
    """One row per (workload, mode, R) across calls: the latest that ran, else the latest;
    native rows all stay (each call's ratios are to its own)."""
    best: dict[tuple, dict] = {}
    for r in rows:
        if r["mode"] == "native":
            continue
        key = (r["workload"], r["mode"], r["ratio"])
        rank = (r["status"] != "skipped (phase budget)", r["phase"].get("date") or "")
        if key not in best or rank > best[key][0]:
            best[key] = (rank, r)
    kept = [r for _, r in best.values()]
    used = {id(r["phase"]) for r in kept}
    return [r for r in rows if r["mode"] == "native" and id(r["phase"]) in used] + kept


def losses_vs(native: dict | None, run: dict | None) -> str:
    la, lb = (native or {}).get("losses") or [], (run or {}).get("losses") or []
    if not la or not lb:
        return "-"
    n = min(len(la), len(lb))
    worst = max(abs(x - y) / max(abs(x), 1e-12) for x, y in zip(la[:n], lb[:n]))
    suffix = "" if len(la) == len(lb) else f" (first {n})"
    return ("identical" if worst == 0 else f"max rel diff {worst:.1e}") + suffix


def floor_ms(native_ms: float, footprint: int, ratio: float, bandwidth: dict | None) -> float:
    if not bandwidth or ratio <= 1:
        return native_ms
    must_move = footprint - footprint / ratio
    h2d = max(bandwidth.get("h2d_64MiB_ranges_gbps", 0), bandwidth.get("h2d_pinned_copy_gbps", 0)) * 1e9
    d2h = max(bandwidth.get("d2h_64MiB_ranges_gbps", 0), bandwidth.get("d2h_pinned_copy_gbps", 0)) * 1e9
    if h2d <= 0 or d2h <= 0:
        return native_ms
    return max(native_ms, 1000 * must_move / h2d, 1000 * must_move / d2h)


def status_of(run: dict) -> str:
    result = run.get("result") or {}
    if run.get("skipped"):
        return "skipped (phase budget)"
    if run.get("exit_status") in (124, 137):
        return "timeout"
    if result.get("error"):
        return "OOM" if "out of memory" in result["error"] else "error"
    if run.get("exit_status") not in (0, None) or not result:
        return f"failed (exit {run.get('exit_status')})"
    return "ok"


def rows_of(phase: dict) -> list[dict]:
    """Every run of one phase with its ratios to the phase's native run and to the floor."""
    natives = {r["workload"]: r for r in phase["runs"] if r["mode"] == "native"}
    rows = []
    for run in phase["runs"]:
        native = natives.get(run["workload"])
        nres = (native or {}).get("result") or {}
        native_ms = nres.get("median_step_ms")
        footprint = nres.get("peak_reserved_bytes") or 0
        result = run.get("result") or {}
        ms = result.get("median_step_ms") if status_of(run) == "ok" else None
        fl = floor_ms(native_ms, footprint, run["ratio"], phase.get("bandwidth")) if native_ms else None
        t = (run.get("stats") or {}).get("tracing", {})
        rows.append({
            "phase": phase, "run": run, "workload": run["workload"], "mode": run["mode"],
            "ratio": run["ratio"], "ms": ms, "native_ms": native_ms, "floor_ms": fl,
            "x_native": ms / native_ms if ms and native_ms else None,
            "x_floor": ms / fl if ms and fl else None,
            "losses": "-" if run["mode"] == "native" else losses_vs(nres, result),
            "faults": t.get("faults") if t else None,
            "to_gpu": t.get("bytes_to_gpu") if t else None, "to_host": t.get("bytes_to_host") if t else None,
            # Residency by the migration records in time order (deepum since session 5), not the live estimate.
            "peak_resident": t.get("peak_resident_bytes") if t else None,
            "status": status_of(run),
        })
    return rows


def fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def table(rows: list[dict]) -> list[str]:
    headers = ["mode", "oversub.", "GPU memory cap GiB", "median step ms", "x native", "x floor (floor ms)",
               "losses vs native", "faults", "GiB to GPU / to host", "peak resident GiB (vs cap)", "status", "GPU",
               "date (UTC)", "command"]
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    order = {m: i for i, m in enumerate(MODE_ORDER)}
    for r in sorted(rows, key=lambda r: (r["ratio"], order.get(r["mode"], 99), r["mode"])):
        run, phase = r["run"], r["phase"]
        moved = (f"{r['to_gpu'] / GIB:.1f} / {r['to_host'] / GIB:.1f}"
                 if r["to_gpu"] is not None and r["to_host"] is not None else "-")
        cap = run.get("limit_bytes")
        peak = r["peak_resident"]
        peak_cell = ("-" if not peak else
                     f"{peak / GIB:.2f}" + (f" ({100 * (peak - cap) / cap:+.0f}%)" if cap else ""))
        cells = [
            r["mode"], "-" if r["mode"] == "native" else f"{r['ratio']:g}x",
            "-" if not run.get("limit_bytes") else f"{run['limit_bytes'] / GIB:.2f}",
            fmt(r["ms"], ".1f"), fmt(r["x_native"], ".2f"),
            f"{fmt(r['x_floor'], '.2f')} ({fmt(r['floor_ms'], '.0f')})",
            r["losses"], fmt(r["faults"], "d"), moved, peak_cell, r["status"],
            phase.get("gpu") or "?", (phase.get("date") or "?")[:16].replace("T", " "),  # the time tells calls apart
            f"`{run.get('command', '').replace('|', '/')}`",
        ]
        out.append("| " + " | ".join(cells) + " |")
    return out


def plot(workload: str, rows: list[dict], path: Path) -> bool:
    import matplotlib  # noqa: PLC0415 (optional)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    fig, ax = plt.subplots(figsize=(6, 4))
    natives = [r for r in rows if r["mode"] == "native" and r["ms"]]
    ratios = sorted({r["ratio"] for r in rows if r["mode"] != "native"})
    for mode in [m for m in MODE_ORDER if m != "native"] + sorted({r["mode"] for r in rows} - set(MODE_ORDER)):
        pts = sorted((r["ratio"], r["ms"]) for r in rows if r["mode"] == mode and r["ms"])
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=mode)
    if natives and ratios:
        ax.axhline(natives[0]["ms"], color="gray", linestyle=":", label="native (fits)")
        floors = sorted({(r["ratio"], r["floor_ms"]) for r in rows
                         if r["mode"] in ("um", "deepum") and r["floor_ms"]})
        if floors:
            ax.plot([f[0] for f in floors], [f[1] for f in floors], color="black", linestyle="--", label="floor")
    ax.set_xlabel("oversubscription (footprint / GPU memory)")
    ax.set_ylabel("median step ms")
    ax.set_yscale("log")
    ax.set_title(f"{workload} ({natives[0]['phase'].get('gpu', '?') if natives else '?'})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def render(phases: list[dict], out_dir: Path) -> tuple[str, list[str]]:
    rows = latest_rows([r for phase in phases for r in rows_of(phase)])
    workloads = sorted({r["workload"] for r in rows})
    try:
        import matplotlib  # noqa: F401, PLC0415
        can_plot = True
    except ImportError:
        can_plot = False
    messages = [] if can_plot else [
        "plots skipped: matplotlib is not importable (pip download matplotlib --only-binary=:all: -d .whl/, "
        "then bench/suite_gpu.sh installs it on the GPU machine; or run suite_report.py where it is installed)"]
    lines = ["Generated by `bench/suite_report.py` from the phases "
             + ", ".join(f"`{p.get('suite_command', p.get('phase'))}` ({p.get('gpu', '?')}, {p.get('date', '?')})"
                         for p in sorted(phases, key=lambda p: p.get("phase", "")))
             + ". Modes: native (no deepum); um = deepum with a resident limit of footprint/R and "
               "evictions alone (`mode: evict`; earlier phases: `prefetch.enabled=false`, then the "
               "default); deepum = the same limit with the settings its command shows (`mode: fast`; "
               "phases run from 2026-11-24 to the mode key: `stream_ordered_prefetch`, `_discard`, "
               "`_place_fresh` and `_swap`, the same moves; earlier ones: the correlation prefetcher, "
               "`prefetch.enabled=true`); "
               "save-on-cpu / fsdp2-cpu = train_gpt2.py `--offload` by hand, PyTorch capped at "
               "footprint/R bytes. Ratios are to the native run and the floor of the same call. The floor: "
               "the native step, or moving F - F/R bytes each way at the link's best measured rate "
               "(prefetch or pinned copy, prefetch_bandwidth), both ways at once, when longer.", ""]
    for workload in workloads:
        wrows = [r for r in rows if r["workload"] == workload]
        lines += [f"### {workload}", ""]
        png = out_dir / f"suite_{workload}.png"
        if can_plot and any(r["ms"] for r in wrows):
            plot(workload, wrows, png)
        if png.exists():  # drawn now, or on the GPU machine with the phase's data
            lines += [f"![{workload}: median step time against oversubscription]({png.name})", ""]
        lines += table(wrows) + [""]
    return "\n".join(lines), messages


def replace_section(docs: Path, body: str) -> None:
    text = docs.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text or text.index(BEGIN) > text.index(END):
        raise SystemExit(f"suite_report: {docs} has no {BEGIN} ... {END} section")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    docs.write_text(f"{head}{BEGIN}\n{body.rstrip()}\n{END}{tail}", encoding="utf-8")


def report(args: argparse.Namespace) -> int:
    phases = find_phases(args.inputs)
    if not phases:
        print("suite_report: no suite_*.json found", file=sys.stderr)
        return 2
    if args.bandwidth:
        link = load_json(Path(args.bandwidth))
        if not link:
            raise SystemExit(f"suite_report: --bandwidth {args.bandwidth}: not a prefetch_bandwidth JSON line")
        for phase in phases:
            phase["bandwidth"] = link
    out_dir = Path(args.out or (args.inputs[0] if Path(args.inputs[0]).is_dir() else Path(args.inputs[0]).parent))
    out_dir.mkdir(parents=True, exist_ok=True)
    docs = None if args.no_docs else Path(args.docs)
    body, messages = render(phases, out_dir)
    (out_dir / "suite.md").write_text("# Benchmark suite\n\n" + body + "\n", encoding="utf-8")
    print(body)
    for m in messages:
        print(f"suite_report: {m}", file=sys.stderr)
    print(f"suite_report: wrote {out_dir / 'suite.md'}", file=sys.stderr)
    if docs:
        # Images in docs/ are linked relative to the docs file.
        rel = Path(os.path.relpath(out_dir, docs.parent))
        body_docs = re.sub(r"\]\((suite_[^)]+\.png)\)", lambda m: f"]({(rel / m.group(1)).as_posix()})", body)
        replace_section(docs, body_docs)
        print(f"suite_report: replaced the suite section of {docs}", file=sys.stderr)
    return 0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="*", help="folders (searched for suite_*.json) or suite_*.json files")
    p.add_argument("--out", help="where suite.md and the plots go (default: the first folder)")
    p.add_argument("--docs", default=str(ROOT / "docs" / "benchmarks.md"), help="the file with the suite markers")
    p.add_argument("--no-docs", action="store_true", help="leave docs/benchmarks.md alone")
    p.add_argument("--collect", metavar="RUNDIR", help="gather one phase's runs (manifest.tsv) into JSON")
    p.add_argument("--phase", help="with --collect: the phase's name")
    p.add_argument("--machine", help="with --collect: machine_PHASE.txt (date, nvidia-smi line, versions)")
    p.add_argument("--bandwidth", help="prefetch_bandwidth's JSON line: with --collect the phase's; otherwise "
                   "the one every phase's floor is computed from")
    p.add_argument("--alloc-limit", type=int, help="with --collect: deepum's allocation limit in bytes")
    p.add_argument("--output", help="with --collect: the file to write (default stdout)")
    args = p.parse_args(argv)
    if args.collect:
        if not args.phase:
            p.error("--collect needs --phase")
        return collect(args)
    if not args.inputs:
        p.error("give at least one folder or suite_*.json")
    return report(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
