#!/bin/bash
# The 1B decoder's forward at 2x, in 5 ms buckets, from call 3's trace: the program's kernels busy,
# deepum's copies to the host busy (its two store lanes), its discard stream busy, the program's
# launches and deepum's move markers (evictions, drops, placements) in each bucket; then the copies
# out as bursts. The forward is
# the sixth row of bench/phase_breakdown.py's table (from the optimizer's last kernel to the loss).
#   forward-timeline.sh BUILD_DIR   (a build with the deepum CLI)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
t=$(mktemp -d)
xz -dc "$here/call3-llama-1b-2x.dtrace.xz" > "$t/l.dtrace"
"$1/bin/deepum" trace convert "$t/l.dtrace" "$t/l.json" > /dev/null
python3 - "$t/l.json" <<'PY'
import collections, json, sys
d = json.load(open(sys.argv[1]))["traceEvents"]
gpu = sorted((e for e in d if e.get("ph") == "X" and e.get("pid") == 1 and e.get("tid", 0) >= 10),
             key=lambda e: e["ts"])
loss = [e["ts"] for e in gpu if "nll_loss_forward" in e["name"]]
opt_end = max(e["ts"] + e["dur"] for e in gpu if "Foreach" in e["name"] and loss[5] < e["ts"] < loss[6])
begin, end = opt_end, loss[6]
tracks = collections.Counter(e["tid"] for e in gpu if begin <= e["ts"] < end and e["name"].startswith("memcpy DtoH 32"))
lanes = {tid for tid, n in tracks.items() if n > 10}
B = 5000.0
def busy(sel):
    c = collections.defaultdict(float)
    for e in sel:
        s, f = e["ts"] - begin, e["ts"] - begin + e["dur"]
        while s < f:
            b = int(s // B); nb = (b + 1) * B
            c[b] += min(f, nb) - s; s = nb
    return c
inside = [e for e in gpu if begin <= e["ts"] < end]
kern = busy(e for e in inside if e["tid"] == 10 and not e["name"].startswith(("memcpy", "memset")))
out = busy(e for e in inside if e["tid"] in lanes)
disc = busy(e for e in inside if e["tid"] not in lanes and e["tid"] != 10 and not e["name"].startswith("memcpy DtoD"))
host = [e for e in d if e.get("pid") == 2 and begin <= e.get("ts", -1) < end]
launches = collections.Counter(int((e["ts"] - begin) // B) for e in host if e.get("tid") == 1)
moves = collections.Counter(int((e["ts"] - begin) // B) for e in host if e.get("tid") == 2)
print(f"forward of row 5: {(end - begin) / 1e3:.1f} ms; store lanes: tracks {sorted(lanes)}")
print("ms         kernels  copies out  discard stream  launches  move markers")
for b in range(int((end - begin) // B) + 1):
    print(f"{b*5:3d}-{b*5+5:3d}   {kern[b]/1e3:7.1f}  {out[b]/1e3:10.1f}  {disc[b]/1e3:14.1f}  {launches[b]:8d}  {moves[b]:12d}")
# The copies out as bursts (gaps over 1 ms apart): when, how many, how much, each copy's duration.
bursts = []
for e in sorted((e for e in inside if e["tid"] in lanes), key=lambda e: e["ts"]):
    if bursts and e["ts"] - bursts[-1][-1]["ts"] - bursts[-1][-1]["dur"] < 1000:
        bursts[-1].append(e)
    else:
        bursts.append([e])
for b in bursts:
    ms = [e["dur"] / 1e3 for e in b]
    gib = sum(e["args"].get("bytes", 0) for e in b) / 2**30
    print(f"burst {(b[0]['ts'] - begin) / 1e3:6.1f}-{(b[-1]['ts'] + b[-1]['dur'] - begin) / 1e3:6.1f} ms: "
          f"{len(b)} copies, {gib:.2f} GiB, each {min(ms):.2f}-{max(ms):.2f} ms")
PY
rm -rf "$t"
