"""gap-fill.py TRACE.json ROW: what filled each gap of over 1 ms between the eviction thread's
copies to the host in one step's optimizer (as eviction-pieces.py picks it): from the previous
copies' end, when the next eviction was decided (its latest "evict to host" marker before its first
DtoD copy), when that copy began, when the program's last kernel before it ended, how many of the
program's kernels began in the gap and how long they ran, and how long deepum's copies back (the
HtoD copies and copy kernels of tracks 14 and 15) ran in it."""
import bisect
import json
import sys

events = json.load(open(sys.argv[1]))["traceEvents"]
row = int(sys.argv[2])
gpu = [e for e in events if e.get("pid") == 1 and e.get("ph") == "X"]
kernels = sorted((e for e in gpu if e["tid"] == 10), key=lambda e: e["ts"])
loss = [e["ts"] for e in kernels if "nll_loss_forward" in e["name"]]
optimizer = [k["ts"] for k in kernels if loss[row] <= k["ts"] < loss[row + 1] and "multi_tensor" in k["name"]]
begin, end = min(optimizer) - 50_000, max(optimizer)
out = sorted((e["ts"], e["ts"] + e["dur"]) for e in gpu if e["tid"] in (12, 13) and begin <= e["ts"] < end)
staged = sorted(e["ts"] for e in gpu if e["tid"] == 11 and begin <= e["ts"] < end)
kernel_ends = sorted(e["ts"] + e["dur"] for e in kernels)
kernel_starts = [e["ts"] for e in kernels]
back = [(e["ts"], e["ts"] + e["dur"]) for e in gpu if e["tid"] in (14, 15) and begin <= e["ts"] < end]
decided = sorted(e["ts"] for e in events if e.get("pid") == 2 and e.get("tid") == 2
                 and e.get("name") == "evict to host" and begin <= e["ts"] < end)


def overlap(spans, a, b):
    return sum(min(t, b) - max(s, a) for s, t in spans if s < b and t > a)


print(f"{'gap ms':>7s} {'decided':>8s} {'first DtoD':>10s} {'last kernel end':>15s} {'kernels':>8s} "
      f"{'their ms':>8s} {'copies back ms':>14s}   (ms from the previous copies' end)")
last = None
for start, stop in out:
    if last is not None and start - last > 1000:
        first = staged[bisect.bisect_left(staged, last)]
        decision = decided[bisect.bisect_right(decided, first) - 1]
        kernel_end = kernel_ends[bisect.bisect_right(kernel_ends, first) - 1]
        count = bisect.bisect_left(kernel_starts, first) - bisect.bisect_left(kernel_starts, last)
        ran = overlap([(e["ts"], e["ts"] + e["dur"]) for e in kernels if last - 50_000 < e["ts"] < first], last, first)
        print(f"{(start - last) / 1e3:7.1f} {(decision - last) / 1e3:8.1f} {(first - last) / 1e3:10.1f} "
              f"{(kernel_end - last) / 1e3:15.1f} {count:8d} {ran / 1e3:8.1f} {overlap(back, last, first) / 1e3:14.1f}")
    last = stop if last is None else max(last, stop)
