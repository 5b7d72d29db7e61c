#!/usr/bin/env python3
"""bench/suite_report.py on fabricated runs (no GPU, standard library only): --collect gathers a
phase, the report writes suite.md and replaces only the marked section of a docs file."""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPORT = Path(__file__).resolve().parents[2] / "bench" / "suite_report.py"


def fake_phase(root: Path, phase: str, workload: str) -> Path:
    rundir = root / f"run_{phase}"
    rundir.mkdir()
    (rundir / "machine.txt").write_text("date 2026-01-02T03:04:05Z\nNVIDIA H100 80GB HBM3, 580.1, 81559 MiB, 80000 MiB\n")
    (rundir / "bandwidth.json").write_text(json.dumps({"h2d_64MiB_ranges_gbps": 40.0, "d2h_64MiB_ranges_gbps": 10.0}))
    footprint = 8 * 2**30
    manifest = []
    runs = [("native", 1.0, 100.0, None), ("um", 2.0, 900.0, None), ("deepum", 2.0, 700.0, None),
            ("um", 3.0, None, "out of memory at step 1: x")]
    for mode, ratio, ms, error in runs:
        name = f"{workload}_{mode}_x{ratio:g}"
        losses = [2.0, 1.5] if mode != "deepum" else [2.0, 1.5000001]
        (rundir / f"{name}.json").write_text(json.dumps({
            "median_step_ms": ms, "peak_reserved_bytes": footprint, "losses": losses, "error": error}))
        if mode != "native":
            (rundir / f"{name}_stats.json").write_text(json.dumps({"tracing": {
                "faults": 1000, "bytes_to_gpu": 2**31, "bytes_to_host": 2**30}}))
        limit = int(footprint / ratio) if mode != "native" else 0
        manifest.append("\t".join([name, workload, mode, str(ratio), str(limit), "", "0", "5",
                                   f"python3 x.py --json {name}.json"]))
    (rundir / "manifest.tsv").write_text("\n".join(manifest) + "\n")
    final = root / "final"
    final.mkdir(exist_ok=True)
    subprocess.run([sys.executable, str(REPORT), "--collect", str(rundir), "--phase", phase, "--machine",
                    str(rundir / "machine.txt"), "--bandwidth", str(rundir / "bandwidth.json"),
                    "--output", str(final / f"suite_{phase}.json")], check=True)
    return final


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(os.environ.get("SUITE_TEST_DIR") or tmp)  # set it to keep the files
        root.mkdir(parents=True, exist_ok=True)
        fake_phase(root, "gpt2-124m", "gpt2-124m")
        final = fake_phase(root, "bert-base", "bert-base")
        docs = root / "benchmarks.md"
        docs.write_text("# B\n\nbefore\n<!-- suite:begin -->\nplaceholder\n<!-- suite:end -->\nafter\n")
        subprocess.run([sys.executable, str(REPORT), "--docs", str(docs), str(final)], check=True,
                       stdout=subprocess.DEVNULL)
        md = (final / "suite.md").read_text()
        text = docs.read_text()
        checks = {
            "both workloads": "### gpt2-124m" in md and "### bert-base" in md,
            "x native 9.00": "| 9.00 |" in md,
            # floor at 2x: 4 GiB at 10 GB/s = 429 ms; 900 / 429.5 = 2.10
            "x floor": "2.10 (429)" in md,
            "losses": "identical" in md and "max rel diff" in md,
            "OOM row": "| OOM |" in md,
            "gpu and date": "NVIDIA H100 80GB HBM3" in md and "2026-01-02" in md,
            "docs replaced": "placeholder" not in text and "### bert-base" in text,
            "docs kept": text.startswith("# B\n\nbefore\n<!-- suite:begin -->") and text.endswith("<!-- suite:end -->\nafter\n"),
        }
        # The floor overlaps the two directions; a both-ways figure is reported, not used.
        sys.path.insert(0, str(REPORT.parent))
        from suite_report import floor_ms
        one_way = {"h2d_64MiB_ranges_gbps": 40.0, "d2h_64MiB_ranges_gbps": 10.0}
        checks["floor ignores both ways"] = floor_ms(100.0, 8 * 2**30, 2.0, {
            **one_way, "both_ways_64MiB_ranges_gbps": 25.0}) == floor_ms(100.0, 8 * 2**30, 2.0, one_way)
        checks["floor native when faster"] = floor_ms(2000.0, 8 * 2**30, 2.0, one_way) == 2000.0
        failed = [k for k, ok in checks.items() if not ok]
        for k in failed:
            print(f"FAILED: {k}\n{md}")
        print(f"{len(checks) - len(failed)} passed, {len(failed)} failed")
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
