#!/usr/bin/env python3
"""overlap.py TRACE.perfetto.json STEPS WINDOW_MS: per step, over the last WINDOW_MS of the program's
stream (found as bench/step_breakdown.py finds it), from the stream tracks of a deepum trace: the
program's kernels; deepum's copies out (streams that copy device to host or within the device, and
nothing else) and back (the other streams that are not the program's: host-to-device copies and
the copy kernel); the time both directions ran at once, kernels and copies at once, copies alone,
and nothing at all."""
import json
import sys

sys.path.insert(0, "bench")
from step_breakdown import intersect_length, merged, program_streams  # noqa: E402

trace, steps, span = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
events = json.load(open(trace))["traceEvents"]
launched = {e.get("args", {}).get("correlation_id"): e["ts"] for e in events
            if e.get("ph") == "i" and e.get("pid") == 2 and e.get("tid") == 1}
by_stream = {}
names = {e["tid"]: e["args"]["name"] for e in events
         if e.get("ph") == "M" and e.get("pid") == 1 and e.get("name") == "thread_name"}
for e in events:
    if e.get("ph") != "X" or e.get("pid") != 1 or not names.get(e["tid"], "").startswith("stream "):
        continue
    correlation = e.get("args", {}).get("correlation_id")
    by_stream.setdefault(e["tid"], []).append((e["ts"] / 1000, (e["ts"] + e["dur"]) / 1000, e["name"],
                                               launched.get(correlation), correlation))
program = program_streams(by_stream, set())
hi = max(op[1] for ops in program.values() for op in ops)
lo = hi - span
out_ids = {t for t, ops in by_stream.items() if t not in program
           and all(op[2].startswith(("memcpy DtoH", "memcpy DtoD")) for op in ops)}
back_ids = set(by_stream) - set(program) - out_ids


def intervals(ids):
    return merged([(op[0], op[1]) for t in ids for op in by_stream[t]], lo, hi)


def length(a):
    return sum(end - start for start, end in a)


kernels, out, back = intervals(program), intervals(out_ids), intervals(back_ids)
copies = merged(out + back, lo, hi)
busy = merged(kernels + copies, lo, hi)
print(f"per step over the last {span:.0f} ms ({steps} steps): kernels {length(kernels) / steps:.0f} ms, "
      f"copies out {length(out) / steps:.0f}, back {length(back) / steps:.0f}, "
      f"out and back at once {intersect_length(out, back) / steps:.0f}, "
      f"kernels and copies at once {intersect_length(kernels, copies) / steps:.0f}, "
      f"copies alone {(length(copies) - intersect_length(kernels, copies)) / steps:.0f}, "
      f"nothing {(span - length(busy)) / steps:.0f}")
