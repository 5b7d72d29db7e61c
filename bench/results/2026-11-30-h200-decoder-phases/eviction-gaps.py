"""eviction-gaps.py TRACE.json ROW: in one step's optimizer (ROW as bench/phase_breakdown.py counts
steps, loss to loss; its first to last multi_tensor_apply kernel), how busy the link to the host
was with deepum's copies out (the eviction thread's two lanes, their DtoH copies), and each gap of
more than 1 ms between them: when the next eviction was decided (the latest "evict to host"
marker at a launch before its first copy, from the previous copies' end) and when its first copy
into the staging buffer (DtoD) and to the host (DtoH) began. A trace converted by
`deepum trace convert`; the lanes' and the staging copies' tracks are found by their copies."""
import bisect
import collections
import json
import sys

events = json.load(open(sys.argv[1]))["traceEvents"]
row = int(sys.argv[2])
gpu = [e for e in events if e.get("pid") == 1 and e.get("ph") == "X"]
kernels = sorted((e for e in gpu if e.get("tid") == 10), key=lambda e: e["ts"])
loss = [e["ts"] for e in kernels if "nll_loss_forward" in e["name"]]
optimizer = [k["ts"] for k in kernels if loss[row] <= k["ts"] < loss[row + 1] and "multi_tensor" in k["name"]]
first, last = min(optimizer), max(optimizer)
by_track = collections.defaultdict(collections.Counter)
for e in gpu:
    by_track[e["tid"]][e["name"].split(" ")[1] if e["name"].startswith("memcpy") else "kernel"] += 1
lanes = {tid for tid, kinds in by_track.items() if kinds["DtoH"] > 100}
staging = {tid for tid, kinds in by_track.items() if kinds["DtoD"] > 100}
window = (first - 50_000, last)  # the eviction running as the optimizer starts, too
copies_out = sorted((e["ts"], e["ts"] + e["dur"]) for e in gpu
                    if e["tid"] in lanes and "DtoH" in e["name"] and window[0] <= e["ts"] < window[1])
staged = sorted(e["ts"] for e in gpu if e["tid"] in staging and window[0] <= e["ts"] < window[1])
decided = sorted(e["ts"] for e in events if e.get("pid") == 2 and e.get("tid") == 2
                 and e.get("name") == "evict to host" and window[0] <= e["ts"] < window[1])
busy, gaps, end = 0.0, [], None
for start, stop in copies_out:
    if end is not None and start - end > 1000:
        staged_at = staged[bisect.bisect_right(staged, start) - 1]
        decided_at = decided[bisect.bisect_right(decided, staged_at) - 1]
        gaps.append((start - end, decided_at - end, staged_at - end))
    if end is None or start > end:
        busy += stop - start
        end = stop
    elif stop > end:
        busy += stop - end
        end = stop
print(f"step {row}'s optimizer: {(last - first) / 1000:.1f} ms; copies out busy {busy / 1000:.1f} ms "
      f"({len(copies_out)} copies); {len(gaps)} gaps over 1 ms, {sum(g[0] for g in gaps) / 1000:.1f} ms in all")
print(f"{'gap ms':>8s} {'next decided at ms':>19s} {'its first DtoD at ms':>21s}   (from the copies' end)")
for gap, decided_at, staged_at in gaps:
    print(f"{gap / 1000:8.1f} {decided_at / 1000:19.1f} {staged_at / 1000:21.1f}")
