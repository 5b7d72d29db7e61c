"""phase-gaps.py TRACE.json ROW: launch-gaps.py's sums, split by phase: backward (before the step's
first optimizer kernel), optimizer (its first to last multi_tensor_apply or fused Adam kernel) and
forward (after it). A trace converted by `deepum trace convert`."""
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
step = [k for k in kernels if loss[row] <= k["ts"] < loss[row + 1]]
optimizer = [k["ts"] for k in step if "multi_tensor" in k["name"] or "fused_adam" in k["name"].lower()]
first, last = min(optimizer), max(optimizer)
print(f"step {row}: {(loss[row + 1] - loss[row]) / 1000:.1f} ms, loss to loss; optimizer "
      f"{(last - first) / 1000:.1f} ms from {(first - loss[row]) / 1000:.1f} ms")
totals = collections.defaultdict(lambda: [0, 0.0])
busy_until = 0
for k in step:
    launch = launches.get(k["args"].get("correlation_id"))
    phase = "backward" if k["ts"] < first else "optimizer" if k["ts"] <= last else "forward"
    if launch is not None:
        idle = max(0, min(k["ts"] - launch["ts"], k["ts"] - busy_until))
        key = phase + ": " + (", ".join(sorted(markers.get(launch["ts"], ()))) or "no move")
        totals[key][0] += 1
        totals[key][1] += idle
    busy_until = max(busy_until, k["ts"] + k["dur"])
print(f"{'phase: moves decided at the launch':55s} {'launches':>8s} {'GPU idle, launch call to start':>32s}")
for key, (count, idle) in sorted(totals.items(), key=lambda kv: -kv[1][1]):
    print(f"{key:55s} {count:8d} {idle / 1000:29.1f} ms")
