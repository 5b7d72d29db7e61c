#!/usr/bin/env python3
"""copy-calls.py CALL...: from each call's zoo archive (callN-zoo.tar.gz, in this folder), per run at
2x, main ([1]) and the change ([2]): the eviction thread's time in its copy calls and in drops, the
program thread's waits for the eviction thread and its time in placement calls (ms, whole run),
the evictions ahead of a peak, and the change's copy calls against main's."""
import json
import sys
import tarfile
from pathlib import Path

here = Path(__file__).parent
print(f"{'call':<5} {'workload':<12} {'run':<4} {'copy calls':>10} {'drops':>7} {'thread waits':>12} "
      f"{'placements':>10} {'peak evictions':>14}")
for call in sys.argv[1:]:
    with tarfile.open(here / f"call{call}-zoo.tar.gz") as tar:
        names = sorted(n for n in tar.getnames() if n.endswith("-fastest-2x-1.stats.json"))
        for name in names:
            workload = Path(name).name.removesuffix("-fastest-2x-1.stats.json")
            copies = []
            for run in ("1", "2"):
                s = json.load(tar.extractfile(name.replace("-1.stats.json", f"-{run}.stats.json")))
                thread, program = s["engine"]["eviction_thread"], s["program_thread"]
                copies.append(thread["copy_calls_ns"])
                print(f"{call:<5} {workload:<12} [{run}] {thread['copy_calls_ns'] / 1e6:>10.0f} "
                      f"{thread['drops_ns'] / 1e6:>7.0f} {program['eviction_thread_waits_ns'] / 1e6:>12.0f} "
                      f"{program['move_calls_ns']['placements'] / 1e6:>10.0f} "
                      f"{s['engine']['moves']['peak_evictions']:>14}")
            print(f"{'':<5} {workload:<12} copy calls [2]/[1] {copies[1] / copies[0]:.2f}")
