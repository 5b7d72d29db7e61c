"""sim-gaps.py TIMELINE.json: in each step's optimizer of a deepum-sim replay's timeline
(`deepum-sim replay TRACE --policy deepum-swap --timeline TIMELINE.json`), from 50 ms before its
first multi_tensor_apply kernel to its last, the link to the host busy with the replay's copies out
(one per eviction) and the gaps of over 1 ms between them, as eviction-gaps.py measures a trace."""
import json
import sys

events = json.load(open(sys.argv[1]))["traceEvents"]
kernels = sorted((e for e in events if e.get("pid") == 1 and e.get("tid") == 10 and e.get("ph") == "X"),
                 key=lambda e: e["ts"])
loss = [e["ts"] for e in kernels if "nll_loss_forward" in e["name"]]
out = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
             if e.get("ph") == "X" and e.get("name", "").startswith("memcpy DtoH"))
for row in range(len(loss) - 1):
    optimizer = [e["ts"] for e in kernels if loss[row] <= e["ts"] < loss[row + 1] and "multi_tensor" in e["name"]]
    if not optimizer:
        continue
    start, end = min(optimizer) - 50_000, max(optimizer)
    copies = [(s, t) for s, t in out if start <= s < end]
    gaps = sorted(b[0] - a[1] for a, b in zip(copies, copies[1:]) if b[0] - a[1] > 1000)
    print(f"row {row}: step {(loss[row + 1] - loss[row]) / 1000:.0f} ms, optimizer {(end - start) / 1000 - 50:.0f} ms; "
          f"copies out busy {sum(t - s for s, t in copies) / 1000:.0f} ms in {len(copies)} evictions; "
          f"{len(gaps)} gaps over 1 ms, {sum(gaps) / 1000:.0f} ms, median {gaps[len(gaps) // 2] / 1000 if gaps else 0:.1f}")
