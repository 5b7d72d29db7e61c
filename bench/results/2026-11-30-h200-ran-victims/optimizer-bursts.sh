#!/bin/bash
# The 1B decoder's optimizer at 2x, its first 100 ms in order (the sixth step's, from the trace kept
# in ../2026-11-30-h200-step-phases): each track's work merged where less than 0.3 ms apart (K the
# program's kernels, O deepum's copies out, D their copies into the staging buffer, I its copies in,
# i the copy kernel placing them, H the program's thread launching nothing for over 1 ms), with
# start, end, length, MiB and pieces.
#   optimizer-bursts.sh BUILD_DIR   (a build with the deepum CLI)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
t=$(mktemp -d)
xz -dc "$here/../2026-11-30-h200-step-phases/call3-llama-1b-2x.dtrace.xz" > "$t/l.dtrace"
"$1/bin/deepum" trace convert "$t/l.dtrace" "$t/l.json" > /dev/null
python3 - "$t/l.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["traceEvents"]
gpu = sorted((e for e in d if e.get("ph") == "X" and e.get("pid") == 1 and e.get("tid", 0) >= 10), key=lambda e: e["ts"])
loss = [e["ts"] for e in gpu if "nll_loss_forward" in e["name"]]
adam = [e for e in gpu if "Foreach" in e["name"] and loss[5] < e["ts"] < loss[6]]
begin, end = adam[0]["ts"], max(e["ts"] + e["dur"] for e in adam)
w0 = begin
w1 = w0 + 100000
def track(e):
    if e["tid"] == 10: return "K" if not e["name"].startswith(("memcpy", "memset")) else "k"
    if e["tid"] in (12, 13): return "O"
    if e["tid"] == 14: return "I" if e["name"].startswith("memcpy HtoD") else "i"
    return "D" if e["tid"] == 11 else "?%d" % e["tid"]
items = []
for e in gpu:
    if w0 <= e["ts"] < w1: items.append((track(e), e["ts"], e["ts"] + e["dur"], e["args"].get("bytes", 0), e["name"][:40]))
# merge per track with gap < 300us
out = []
last = {}
for t, s, f, b, n in items:
    if t in last and s - last[t][2] < 300:
        l = last[t]; l[2] = max(l[2], f); l[3] += b; l[4] += 1
    else:
        l = [t, s, f, b, 1, n]; last[t] = l; out.append(l)
launch = sorted(e["ts"] for e in d if e.get("pid") == 2 and e.get("tid") == 1 and w0 <= e.get("ts", -1) < w1)
# launch gaps > 1ms
gaps = [(a, b) for a, b in zip(launch, launch[1:]) if b - a > 1000]
for a, b in gaps: out.append(["H", a, b, 0, 0, "program thread: no launch"])
out.sort(key=lambda l: l[1])
for t, s, f, b, c, n in out:
    print(f"{t} {(s-begin)/1e3:8.2f} {(f-begin)/1e3:8.2f} {(f-s)/1e3:6.2f}ms {b/2**20:8.0f}MiB n={c:<4} {n}")
PY
rm -rf "$t"
