#!/usr/bin/env python3
"""bench/suite_report.py on fabricated runs (no GPU, standard library only): --collect gathers a
phase, the report writes suite.md and replaces only the marked section of a docs file, a second
call of a phase fills in what the first did not run, and the floor takes the link's best rate."""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPORT = Path(__file__).resolve().parents[2] / "bench" / "suite_report.py"


FIRST_CALL = [("native", 1.0, 100.0, None), ("um", 2.0, 900.0, None), ("deepum", 2.0, 700.0, None),
              ("um", 3.0, None, "out of memory at step 1: x")]


def fake_phase(root: Path, phase: str, workload: str, runs=FIRST_CALL, day: str = "02") -> Path:
    rundir = root / f"run_{phase}_{day}"
    rundir.mkdir()
    (rundir / "machine.txt").write_text(f"date 2026-01-{day}T03:04:05Z\nNVIDIA H100 80GB HBM3, 580.1, 81559 MiB, 80000 MiB\n")
    (rundir / "bandwidth.json").write_text(json.dumps({"h2d_64MiB_ranges_gbps": 40.0, "d2h_64MiB_ranges_gbps": 10.0}))
    footprint = 8 * 2**30
    manifest = []
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
                    "--output", str(final / f"suite_{phase}_{day}.json")], check=True)
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
        # Pinned copies faster than prefetches (to the host): the floor takes them, 4 GiB at 40 GB/s
        # each way (the slower pinned copy to the GPU gives way to the prefetch): 107 ms.
        pinned = {**one_way, "d2h_pinned_copy_gbps": 40.0, "h2d_pinned_copy_gbps": 20.0}
        checks["floor takes the faster copy"] = round(floor_ms(100.0, 8 * 2**30, 2.0, pinned)) == 107

        # A second call of bert-base runs 3x, which the first could not: its row replaces the OOM
        # one, with the ratio to its own native run; the first call's 2x rows stay.
        fake_phase(root, "bert-base", "bert-base", [("native", 1.0, 110.0, None), ("um", 3.0, 1210.0, None)], "03")
        (root / "pinned.json").write_text(json.dumps(pinned))
        subprocess.run([sys.executable, str(REPORT), "--no-docs", "--bandwidth", str(root / "pinned.json"), str(final)],
                       check=True, stdout=subprocess.DEVNULL)
        merged = (final / "suite.md").read_text()
        bert = merged.split("### bert-base")[1].split("###")[0]
        checks["second call's run"] = "| um | 3x | 2.67 | 1210.0 | 11.00 |" in bert and "| OOM |" not in bert
        checks["first call's rows kept"] = "| um | 2x | 4.00 | 900.0 | 9.00 |" in bert
        checks["both natives"] = bert.count("| native |") == 2 and "2026-01-03" in bert
        checks["--bandwidth floor"] = "8.38 (107)" in bert  # 900 / 107.4
        failed = [k for k, ok in checks.items() if not ok]
        for k in failed:
            print(f"FAILED: {k}")
        if failed:
            print(f"{md}\n{merged}")
        print(f"{len(checks) - len(failed)} passed, {len(failed)} failed")
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
