#!/usr/bin/env python3
"""waits.py TRACE.perfetto.json WINDOW_MS [MIN_MS]: over the last WINDOW_MS of the program's stream
(found as bench/step_breakdown.py finds it), every program kernel that waited at least MIN_MS
(default 5) after it was runnable (the later of its launch call and the end of the work before it)
and what deepum's copy streams moved meanwhile; then, for each kernel launched in the window, how
long after its launch call the next launch call came (the program's thread held, or busy)."""
import json
import sys

sys.path.insert(0, "bench")
from step_breakdown import program_streams  # noqa: E402

trace, span = sys.argv[1], float(sys.argv[2])
least = float(sys.argv[3]) if len(sys.argv) > 3 else 5.0
events = json.load(open(trace))["traceEvents"]
launched = {e["args"].get("correlation_id"): e["ts"] / 1000 for e in events
            if e.get("ph") == "i" and e.get("pid") == 2 and e.get("tid") == 1}
names = {e["tid"]: e["args"]["name"] for e in events
         if e.get("ph") == "M" and e.get("pid") == 1 and e.get("name") == "thread_name"}
by_stream = {}
for e in events:
    if e.get("ph") == "X" and e.get("pid") == 1 and names.get(e["tid"], "").startswith("stream "):
        c = e.get("args", {}).get("correlation_id")
        by_stream.setdefault(e["tid"], []).append((e["ts"] / 1000, (e["ts"] + e["dur"]) / 1000, e["name"],
                                                   launched.get(c), c, e.get("args", {}).get("bytes", 0)))
program = program_streams(by_stream, set())
others = [op for tid, ops in by_stream.items() if tid not in program for op in ops]
hi = max(op[1] for ops in program.values() for op in ops)
lo = hi - span
print(f"kernels waiting {least} ms or more after they were runnable, the last {span:.0f} ms:")
for ops in program.values():
    previous_end = None
    for start, end, name, launch, _, _ in sorted(ops):
        if previous_end is not None and launch is not None and start >= lo:
            ready = max(previous_end, launch)
            if start - ready >= least:
                during = [op for op in others if op[0] < start and op[1] > ready]
                moved = sum(op[5] for op in during if op[2].startswith("memcpy DtoH"))
                back = sum(op[5] for op in during if op[2].startswith("memcpy HtoD"))
                print(f"  at {ready - lo:8.1f} ms waited {start - ready:6.1f} ms: {name[:50]}; meanwhile "
                      f"{moved / 1e6:.0f} MB copied to the host, {back / 1e6:.0f} MB back")
        previous_end = end if previous_end is None else max(previous_end, end)
calls = sorted(t for t in launched.values() if lo <= t <= hi)
gaps = [b - a for a, b in zip(calls, calls[1:])]
print(f"launch calls in the window: {len(calls)}; gaps to the next one of 1 ms or more: "
      f"{sum(g >= 1 for g in gaps)}, summing to {sum(g for g in gaps if g >= 1):.1f} ms; the longest "
      f"{max(gaps, default=0):.1f} ms")
pieces = sorted(op[1] - op[0] for op in others if op[0] >= lo and op[2] == "memcpy DtoH 32.00 MiB")
if pieces:
    print(f"deepum's 32 MiB copies to the host: {len(pieces)}, {pieces[0]:.2f}-{pieces[-1]:.2f} ms "
          f"(median {pieces[len(pieces) // 2]:.2f}, {32 * 1.048576 / pieces[len(pieces) // 2]:.1f} GB/s)")
