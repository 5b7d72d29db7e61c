#!/usr/bin/env python3
"""The direct runs' table from call2-, call3- and call9-logs.tar.gz: per run the first two
steps, the median of the last three, the swap store's pinning, and what the driver wrote back
(swaps refused for want of a slot)."""
import json
import re
import statistics
import sys
import tarfile
from pathlib import Path

here = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent)
print("call run          first two steps s  steps 3-5 median ms  pinned GiB  pinning s  pin GB/s  written back GiB")
for call in ("call2", "call3", "call9"):
    with tarfile.open(here / f"{call}-logs.tar.gz") as tar:
        files = {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers() if m.isfile()}
    order = [line.split()[:2] for line in (here / f"{call}-direct.txt").read_text().splitlines()]
    for tag, name in order:
        log = files[f"{tag}-{name}.log"]
        steps = [float(m) for m in re.findall(r"^step \d+ .*time_ms ([\d.]+)", log, re.M)]
        engine = json.loads(files[f"{tag}-{name}.stats.json"])["engine"]
        back = re.search(r"([\d.]+) (GiB|MiB|B) written back by the driver", log)
        back_gib = float(back.group(1)) / {"GiB": 1, "MiB": 1024, "B": 2**30}[back.group(2)]
        print(f"{call} {tag} {name:11s} {(steps[0] + steps[1]) / 1e3:8.1f} {statistics.median(steps[2:]):20.0f}"
              f" {engine['swap_store_pinned_bytes'] / 2**30:11.2f} {engine['swap_store_pin_ns'] / 1e9:10.2f}"
              f" {engine['swap_store_pinned_bytes'] / engine['swap_store_pin_ns']:9.2f} {back_gib:17.2f}")
