"""eviction-pieces.py TRACE.json ROW: in one step's optimizer (ROW as bench/phase_breakdown.py counts
steps, loss to loss; from 50 ms before its first multi_tensor_apply kernel to its last), the
eviction thread's copies in time order: each 32 MiB piece's copies into the staging buffer (DtoD,
its block copies grouped) and to the host (DtoH, the two lanes), with the time since the previous
one. A trace converted by `deepum trace convert`; the tracks are the ones call1 of
../2026-11-30-h200-decoder-phases found (11: the DtoD copies, 12 and 13: the lanes)."""
import json
import sys

events = json.load(open(sys.argv[1]))["traceEvents"]
row = int(sys.argv[2])
gpu = [e for e in events if e.get("pid") == 1 and e.get("ph") == "X"]
kernels = sorted((e for e in gpu if e["tid"] == 10), key=lambda e: e["ts"])
loss = [e["ts"] for e in kernels if "nll_loss_forward" in e["name"]]
optimizer = [k["ts"] for k in kernels if loss[row] <= k["ts"] < loss[row + 1] and "multi_tensor" in k["name"]]
begin, end = min(optimizer) - 50_000, max(optimizer)
staged = sorted((e["ts"], e["ts"] + e["dur"], e["args"].get("bytes", 0)) for e in gpu
                if e["tid"] == 11 and begin <= e["ts"] < end)
out = sorted((e["ts"], e["ts"] + e["dur"], e["tid"], e["args"].get("bytes", 0)) for e in gpu
             if e["tid"] in (12, 13) and begin <= e["ts"] < end)
pieces = []  # a piece's block copies run back to back: at most 16, gaps under 30 us
for start, stop, size in staged:
    if pieces and start - pieces[-1][1] < 30 and pieces[-1][3] < 16:
        pieces[-1][1] = max(pieces[-1][1], stop)
        pieces[-1][2] += size
        pieces[-1][3] += 1
    else:
        pieces.append([start, stop, size, 1])
timeline = sorted([(p[0], "DtoD", p[1] - p[0], p[2]) for p in pieces] +
                  [(s, f"DtoH{tid}", t - s, size) for s, t, tid, size in out])
print(f"{len(staged)} DtoD copies in {len(pieces)} pieces, {len(out)} DtoH copies")
previous = None
for start, kind, duration, size in timeline:
    since = (start - previous) / 1000 if previous is not None else 0.0
    print(f"{(start - begin) / 1000:9.2f} ms {kind:7s} {duration / 1000:6.3f} ms {size / 2**20:6.1f} MiB  "
          f"{since:7.2f} ms after the one before")
    previous = start
