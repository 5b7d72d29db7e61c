#!/usr/bin/env python3
"""phases.py TRACE.perfetto.json[.xz] LAST_MS [SPLIT_MS]: the last LAST_MS of a deepum trace, split
in two at SPLIT_MS from its start (default: the issue time of the largest placement, "prefetch to
GPU", in it, the last of them: in a training step, the logits' room at the forward pass's end). For each part: the
program's kernels busy (the stream with the most kernels), deepum's copies out (device-to-device
into its buffer and device-to-host) and back (host-to-device and its copy kernel) busy, out and
back at once, kernels beside copies, and time with nothing of these running; then the whole window
in 4 ms rows (K kernels, O out, I back; darker is busier)."""
import collections
import json
import lzma
import sys


def load(path):
    return json.load(lzma.open(path) if path.endswith(".xz") else open(path))


def union(intervals):
    merged = []
    for s, f in sorted(intervals):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], f)
        else:
            merged.append([s, f])
    return merged


def length(intervals, lo, hi):
    return sum(max(0, min(f, hi) - max(s, lo)) for s, f in intervals)


def intersect(a, b):
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        s, f = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if s < f:
            out.append([s, f])
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def main():
    trace, last_ms = sys.argv[1], float(sys.argv[2])
    events = load(trace)["traceEvents"]
    spans = [e for e in events if e.get("ph") == "X" and e.get("pid") == 1]
    end = max(e["ts"] + e["dur"] for e in spans)
    start = end - last_ms * 1000
    names = {e.get("tid"): e["args"]["name"] for e in events if e.get("ph") == "M" and e["name"] == "thread_name" and e.get("pid") == 1}
    streams = [t for t, n in names.items() if n.startswith("stream")]
    kernels = collections.Counter(e["tid"] for e in spans if e["tid"] in streams and not e["name"].startswith("memcpy")
                                  and e["name"] != "deepum_copy_within_gpu")
    program = kernels.most_common(1)[0][0]
    kinds = {"K": [], "O": [], "I": []}
    for e in spans:
        if e["tid"] not in streams or e["ts"] + e["dur"] < start:
            continue
        iv = (e["ts"], e["ts"] + e["dur"])
        name = e["name"]
        if e["tid"] == program:
            kinds["K"].append(iv)
        elif name.startswith("memcpy DtoD") or name.startswith("memcpy DtoH"):
            kinds["O"].append(iv)
        elif name.startswith("memcpy HtoD") or name == "deepum_copy_within_gpu":
            kinds["I"].append(iv)
    kinds = {k: union(v) for k, v in kinds.items()}
    if len(sys.argv) > 3:
        split = start + float(sys.argv[3]) * 1000
    else:
        places = [e for e in events if e.get("ph") == "i" and e.get("name") == "prefetch to GPU" and e["ts"] >= start]
        largest = max((e["args"].get("bytes", 0) for e in places), default=0)
        split = max((e["ts"] for e in places if e["args"].get("bytes", 0) == largest), default=end)
    anything = union(kinds["K"] + kinds["O"] + kinds["I"])
    both = intersect(kinds["O"], kinds["I"])
    beside = intersect(kinds["K"], union(kinds["O"] + kinds["I"]))
    print(f"{trace}: the last {last_ms:.0f} ms, split at {(split - start) / 1000:.1f} ms; program stream: {names[program]}")
    print("| part | ms | kernels | copies out | copies back | out and back at once | kernels beside copies | nothing |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, lo, hi in (("before", start, split), ("after", split, end), ("all", start, end)):
        row = [length(kinds["K"], lo, hi), length(kinds["O"], lo, hi), length(kinds["I"], lo, hi),
               length(both, lo, hi), length(beside, lo, hi), (hi - lo) - length(anything, lo, hi)]
        print(f"| {label} | {(hi - lo) / 1000:.0f} | " + " | ".join(f"{v / 1000:.0f}" for v in row) + " |")
    shade = " .:-=+*#%@"
    step = 4000
    for t in range(int(start), int(end), step):
        cells = "".join(shade[min(9, int(length(kinds[k], t, t + step) / step * 9.99))] for k in "KOI")
        print(f"{(t - start) / 1000:7.1f} {cells}{'  <- split' if t <= split < t + step else ''}")


if __name__ == "__main__":
    main()
