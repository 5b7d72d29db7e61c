"""launch-gaps.py TRACE.json ROW: for each launch of the program's main stream in one step (ROW of
bench/phase_breakdown.py's table, loss to loss), the time the GPU stood idle between the host's
launch call and the kernel's start, summed by the moves deepum decided at that launch (its hint
markers at the same timestamp). A trace converted by `deepum trace convert`."""
import collections
import json
import sys

events = json.load(open(sys.argv[1]))["traceEvents"]
row = int(sys.argv[2])
kernels = sorted((e for e in events if e.get("ph") == "X" and e.get("pid") == 1 and e.get("tid") == 10),
                 key=lambda e: e["ts"])
loss = [e["ts"] for e in kernels if "nll_loss_forward" in e["name"]]
launches = {e["args"].get("correlation_id"): e for e in events
            if e.get("pid") == 2 and e.get("tid") == 1 and e.get("ph") == "i"}
markers = collections.defaultdict(set)
for e in events:
    if e.get("pid") == 2 and e.get("tid") == 2:
        markers[e["ts"]].add(e["name"])
totals = collections.defaultdict(lambda: [0, 0.0])
busy_until = 0
for k in kernels:
    if not loss[row] <= k["ts"] < loss[row + 1]:
        continue
    launch = launches.get(k["args"].get("correlation_id"))
    if launch is not None:
        idle = max(0, min(k["ts"] - launch["ts"], k["ts"] - busy_until))
        key = ", ".join(sorted(markers.get(launch["ts"], ()))) or "no move"
        totals[key][0] += 1
        totals[key][1] += idle
    busy_until = max(busy_until, k["ts"] + k["dur"])
print(f"step {row}: {(loss[row + 1] - loss[row]) / 1000:.1f} ms, loss to loss")
print(f"{'moves decided at the launch':40s} {'launches':>8s} {'GPU idle, launch call to start':>32s}")
for key, (count, idle) in sorted(totals.items(), key=lambda kv: -kv[1][1]):
    print(f"{key:40s} {count:8d} {idle / 1000:29.1f} ms")
