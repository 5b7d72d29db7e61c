#!/usr/bin/env python3
"""table.py CALL...: for every zoo run at 2x in the calls' archives (callN-zoo.tar.gz, in this
folder; or an archive's path in place of N, such as a later folder's calls of the same A and B),
main ([1], A) against placements after their blocks' earlier users ([2], B): the step (median of
steps 1-7), x floor, the program thread's time in move calls per step, and from the
statistics the placements ordered after a progress marker; per workload the geometric mean of B/A
over its calls, then over the workloads."""
import io
import json
import math
import statistics
import sys
import tarfile
from pathlib import Path

here = Path(__file__).parent
per_workload = {}
print(f"{'call':<5} {'at 2x':<12} {'native':>7} {'floor':>7} {'A ms':>7} {'x floor':>7} {'B ms':>7} {'x floor':>7} "
      f"{'B/A':>6} {'A moves':>8} {'B moves':>8} {'B after marker':>14}")
for call in sys.argv[1:]:
    archive = here / f"call{call}-zoo.tar.gz" if call.isdigit() else Path(call)
    if not call.isdigit():  # labelled by the folder's name after the date and card, and the call
        folder = archive.resolve().parent.name.split("-h200-")[-1]
        call = folder + "/" + archive.name.split("-")[0].removeprefix("call")
    with tarfile.open(archive) as tar:
        rows = {}
        for r in json.load(tar.extractfile("zoo/zoo.json")):
            if r["mode"].startswith("fastest 2x ["):
                rows.setdefault(r["workload"], {})[r["mode"][-3:]] = r
        for w, r in rows.items():
            a, b = r["[1]"], r["[2]"]
            stats = json.load(tar.extractfile(f"zoo/logs/{w}-fastest-2x-2.stats.json"))
            marked = stats["engine"].get("placements_after_marker", 0)
            native = a["median_ms"] / a["x_native"]
            ratio = b["median_ms"] / a["median_ms"]
            per_workload.setdefault(w, []).append(ratio)
            print(f"{call:<5} {w:<12} {native:>7.1f} {a['floor_ms']:>7.1f} {a['median_ms']:>7.1f} {a['x_floor']:>7.2f} "
                  f"{b['median_ms']:>7.1f} {b['x_floor']:>7.2f} {ratio:>6.3f} {a['move_calls_ms_per_step']:>8.1f} "
                  f"{b['move_calls_ms_per_step']:>8.1f} {marked:>14}")
means = {w: math.exp(statistics.fmean(math.log(x) for x in rs)) for w, rs in per_workload.items()}
for w, m in means.items():
    print(f"{w:<12} B/A {m:.3f} over {len(per_workload[w])} call(s)")
print(f"B against A: each step {statistics.geometric_mean(list(means.values())):.3f} of A's "
      f"(geometric mean over {len(means)} workloads)")
