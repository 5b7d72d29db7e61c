#!/bin/bash
# From call 2's traces (BERT-large and GPT-2 124M at 2x): each step's phases
# (bench/phase_breakdown.py), row 3's backward and forward in 10 ms buckets (--timeline), deepum's
# move markers per phase in GiB, and BERT-large's forward from 40 to 130 ms event by event (the
# copies out merged into runs, the program's kernels into busy spans, the markers grouped), and its
# backward from 250 to 300 ms: where the stream of deepum's copies back stands still, and the
# program kernel whose start it resumes at.
#   timelines.sh BUILD_DIR   (a build with the deepum CLI). Output: timelines.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
t=$(mktemp -d)
for n in bert-large gpt2-124m; do
  xz -dc "$here/call2-$n-2x.dtrace.xz" > "$t/$n.dtrace"
  "$1/bin/deepum" trace convert "$t/$n.dtrace" "$t/$n.json" > /dev/null
  echo "== $n at 2x"
  python3 "$root/bench/phase_breakdown.py" "$t/$n.json"
  for phase in backward forward; do
    python3 "$root/bench/phase_breakdown.py" "$t/$n.json" --timeline 3 $phase
  done
  python3 - "$t/$n.json" <<'PY'
import json, re, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
gpu = sorted((e for e in events if e.get("ph") == "X" and e.get("pid") == 1 and e.get("tid", 0) >= 10),
             key=lambda e: e["ts"])
loss = [e["ts"] for e in gpu if "nll_loss_forward" in e["name"]]
optimizer = re.compile("Foreach|multi_tensor")
print("deepum's move markers per phase: count / GiB (evict to host includes swaps)")
for row in range(len(loss) - 1):
    b0, b1 = loss[row], loss[row + 1]
    inside = [e for e in gpu if b0 < e["ts"] < b1 and optimizer.search(e["name"])]
    if not inside:
        continue
    o0, o1 = inside[0]["ts"], max(e["ts"] + e["dur"] for e in inside)
    cells = []
    for phase, (a, b) in (("backward", (b0, o0)), ("optimizer", (o0, o1)), ("forward", (o1, b1))):
        sums = {}
        for e in events:
            if e.get("pid") == 2 and e.get("tid") == 2 and a <= e.get("ts", -1) < b:
                n, g = sums.get(e["name"], (0, 0.0))
                sums[e["name"]] = (n + 1, g + e["args"].get("bytes", 0) / 2**30)
        cells.append(phase + ": " + ", ".join(f"{k} {n} / {g:.1f}" for k, (n, g) in sorted(sums.items())))
    print(f"row {row}: " + " | ".join(cells))
PY
done
echo "== bert-large, row 3's forward from 40 to 130 ms, event by event (ms from the forward's start)"
python3 - "$t/bert-large.json" <<'PY'
import json, re, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
gpu = sorted((e for e in events if e.get("ph") == "X" and e.get("pid") == 1 and e.get("tid", 0) >= 10),
             key=lambda e: e["ts"])
loss = [e["ts"] for e in gpu if "nll_loss_forward" in e["name"]]
inside = [e for e in gpu if loss[3] < e["ts"] < loss[4] and re.search("Foreach|multi_tensor", e["name"])]
start = max(e["ts"] + e["dur"] for e in inside)
lo, hi = start + 40e3, start + 130e3
def runs(intervals, gap):
    out = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1] + gap:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out
lines = []
out_copies = [(e["ts"], e["ts"] + e["dur"]) for e in gpu
              if lo <= e["ts"] < hi and e["name"].startswith("memcpy DtoH") and e["tid"] != 10]
lines += [(a, f"copies to the host, {(b - a) / 1e3:.1f} ms") for a, b in runs(out_copies, 200)]
kernels = [(e["ts"], e["ts"] + e["dur"]) for e in gpu if lo <= e["ts"] < hi and e["tid"] == 10]
lines += [(a, f"program kernels busy {(b - a) / 1e3:.1f} ms") for a, b in runs(kernels, 300) if b - a > 1000]
markers = {}
for e in events:
    if e.get("pid") == 2 and e.get("tid") == 2 and lo <= e.get("ts", -1) < hi:
        key = (round(e["ts"] / 100), e["name"])
        n, b, ts = markers.get(key, (0, 0, e["ts"]))
        markers[key] = (n + 1, b + e["args"]["bytes"], ts)
lines += [(ts, f"{name} x{n}, {b / 2**20:.0f} MiB") for (_, name), (n, b, ts) in markers.items()]
launches = sorted(e["ts"] for e in events if e.get("pid") == 2 and e.get("tid") == 1 and lo <= e.get("ts", -1) < hi)
lines += [(a, f"no launch for {(b - a) / 1e3:.1f} ms") for a, b in zip(launches, launches[1:]) if b - a > 2000]
for ts, text in sorted(lines):
    print(f"{(ts - start) / 1e3:8.2f}  {text}")
PY
echo "== bert-large, row 3's backward from 250 to 300 ms: deepum's copies back (staging copies and copy kernel) in runs"
python3 - "$t/bert-large.json" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
gpu = sorted((e for e in events if e.get("ph") == "X" and e.get("pid") == 1 and e.get("tid", 0) >= 10),
             key=lambda e: e["ts"])
loss = [e["ts"] for e in gpu if "nll_loss_forward" in e["name"]]
start = loss[3]
lo, hi = start + 250e3, start + 300e3
lane = next(e["tid"] for e in gpu if e["name"] == "deepum_copy_within_gpu" and e["ts"] >= lo)
back = [(e["ts"], e["ts"] + e["dur"]) for e in gpu if e["tid"] == lane and lo <= e["ts"] < hi]
kernels = [e for e in gpu if e["tid"] == 10 and lo - 5e3 <= e["ts"] < hi]
runs = []
for a, b in back:
    if runs and a <= runs[-1][1] + 500:
        runs[-1][1] = max(runs[-1][1], b)
    else:
        runs.append([a, b])
for (a, b), nxt in zip(runs, runs[1:] + [None]):
    line = f"{(a - start) / 1e3:8.2f}-{(b - start) / 1e3:7.2f} ms copies back"
    if nxt is not None:
        resumed = max((k for k in kernels if k["ts"] <= nxt[0]), key=lambda k: k["ts"], default=None)
        line += f"; still {(nxt[0] - b) / 1e3:.1f} ms"
        if resumed is not None:
            line += f", resumed {(nxt[0] - resumed['ts']) / 1e3:.2f} ms after the start of a program kernel"
    print(line)
PY
rm -rf "$t"
