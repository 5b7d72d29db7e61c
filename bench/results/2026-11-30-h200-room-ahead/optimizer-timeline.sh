#!/bin/bash
# The 1B decoder's optimizer at 2x (the sixth step's AdamW, from its first foreach kernel to its
# last), from the trace kept in ../2026-11-30-h200-step-phases: the program's kernels, deepum's
# copies out (its two store lanes) and in (its discard stream's copies to the GPU) busy, how long
# both ways ran at once, the GiB each way, the copies in one by one and the gaps between them, the
# program's launches in it; then 5 ms buckets.
#   optimizer-timeline.sh BUILD_DIR   (a build with the deepum CLI)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
t=$(mktemp -d)
xz -dc "$here/../2026-11-30-h200-step-phases/call3-llama-1b-2x.dtrace.xz" > "$t/l.dtrace"
"$1/bin/deepum" trace convert "$t/l.dtrace" "$t/l.json" > /dev/null
python3 - "$t/l.json" "$here/../../../bench" <<'PY'
import collections, json, sys
sys.path.insert(0, sys.argv[2])
from step_breakdown import intersect_length, merged  # interval unions, as the breakdowns compute them
d = json.load(open(sys.argv[1]))["traceEvents"]
gpu = sorted((e for e in d if e.get("ph") == "X" and e.get("pid") == 1 and e.get("tid", 0) >= 10),
             key=lambda e: e["ts"])
loss = [e["ts"] for e in gpu if "nll_loss_forward" in e["name"]]
adam = [e for e in gpu if "Foreach" in e["name"] and loss[5] < e["ts"] < loss[6]]
begin, end = adam[0]["ts"], max(e["ts"] + e["dur"] for e in adam)
inside = [e for e in gpu if begin <= e["ts"] < end]
# Tracks: 10 the program's stream, 12 and 13 the store lanes out, 14 deepum's discard stream.
is_kernel = lambda e: e["tid"] == 10 and not e["name"].startswith(("memcpy", "memset"))
is_out = lambda e: e["tid"] in (12, 13)
is_in = lambda e: e["tid"] == 14 and e["name"].startswith("memcpy HtoD")
length = lambda iv: sum(f - s for s, f in iv)
def union(sel):
    return merged([(e["ts"], e["ts"] + e["dur"]) for e in sel], begin, end)
kernels, out, into = union(filter(is_kernel, inside)), union(filter(is_out, inside)), union(filter(is_in, inside))
gib = lambda sel: sum(e["args"].get("bytes", 0) for e in inside if sel(e)) / 2**30
print(f"optimizer {(end - begin) / 1e3:.1f} ms: kernels {length(kernels) / 1e3:.1f} ms, copies out busy "
      f"{length(out) / 1e3:.1f} ms ({gib(is_out):.2f} GiB), in busy {length(into) / 1e3:.1f} ms "
      f"({gib(is_in):.2f} GiB), both at once {intersect_length(out, into) / 1e3:.1f} ms")
# The copies in one by one: their rate, and the gaps between them (a piece's copy kernel between
# two copies is a short one).
ins = sorted((e for e in inside if is_in(e)), key=lambda e: e["ts"])
rates = sorted(e["args"]["bytes"] / e["dur"] / 1e3 for e in ins)
gaps = [b["ts"] - a["ts"] - a["dur"] for a, b in zip(ins, ins[1:])]
long_gaps = [g for g in gaps if g >= 1000]
print(f"copies in: {len(ins)}, median {rates[len(rates) // 2]:.1f} GB/s; gaps under 50 us: "
      f"{sum(g < 50 for g in gaps)} ({sum(g for g in gaps if g < 50) / 1e3:.1f} ms), of 1 ms or more: "
      f"{len(long_gaps)} ({sum(long_gaps) / 1e3:.1f} ms)")
# The program's launches (the host's track 1): the thread's time from the first to the last.
launches = sorted(e["ts"] for e in d if e.get("pid") == 2 and e.get("tid") == 1 and begin <= e.get("ts", -1) < end)
print(f"the program's launches in it: {len(launches)}, {(launches[-1] - launches[0]) / 1e3:.1f} ms from the "
      f"first to the last")
B = 5000.0
def buckets(iv):
    c = collections.defaultdict(float)
    for s, f in iv:
        s, f = s - begin, f - begin
        while s < f:
            b = int(s // B)
            c[b] += min(f, (b + 1) * B) - s
            s = (b + 1) * B
    return c
k, o, i = buckets(kernels), buckets(out), buckets(into)
print("ms         kernels   out    in")
for b in range(int((end - begin) // B) + 1):
    print(f"{b * 5:3d}-{b * 5 + 5:3d}   {k[b] / 1e3:7.1f} {o[b] / 1e3:5.1f} {i[b] / 1e3:5.1f}")
PY
rm -rf "$t"
