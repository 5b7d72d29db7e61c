#!/usr/bin/env python3
"""volume.py CALL1_LOGS_TAR: what the committed build (call 1's [2] runs) moved a step at 2x, from each
run's statistics (whole runs, learning steps included), against the excess F - F/R (R = 2: the
resident limit). A step is the loop of addresses' period where it is a step or less, else the loop
of shapes' (the decoder's loop of addresses is two steps), for the sweep and the CuPy loop the
program's own 6 steps."""
import json
import sys
import tarfile

GIB = 2**30
with tarfile.open(sys.argv[1]) as tar:
    for member in sorted(tar.getnames()):
        if not member.endswith("-fastest-2x-2.stats.json"):
            continue
        stats = json.load(tar.extractfile(member))
        moves = stats["engine"]["moves"]
        name = member.split("/")[-1].removesuffix("-fastest-2x-2.stats.json")
        period = moves["shape_loop_period"] if moves["shape_loop_period"] >= 256 else 0
        steps = moves["operations"] / period if period else 6
        back = moves["restored_bytes"] + moves["restored_ahead_bytes"]
        victims = moves["victims_unpredicted_bytes"] + moves["victims_predicted_bytes"]
        print(f"{name:<11} steps {steps:4.1f}  swapped out {moves['swapped_out_bytes'] / GIB / steps:5.1f} GiB a step, "
              f"copied back {back / GIB / steps:5.1f}, dropped dead {moves['discarded_bytes'] / GIB / steps:5.1f}, "
              f"excess {stats['resident_limit_bytes'] / GIB:4.1f}; victims least recently named "
              f"{moves['victims_unpredicted_bytes'] / max(victims, 1):.0%}")
