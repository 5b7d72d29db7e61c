"""both-ways.py TRACE.json: per step (loss kernel to loss kernel) and phase (backward, optimizer,
forward as bench/phase_breakdown.py splits them), how long deepum's copies kept each direction of
the link busy, both at once, and how long the link stood idle both ways while the program's
kernels did not run either. Each row ends with the step against a bound of its phases: each phase
at least as long as its kernels and as each direction's copies (the same bytes, moved in the same
phase, at the rate they ran). Copies to the host: every DtoH copy record; to the GPU: every HtoD
copy record (deepum's copies back); each direction the union of its records' intervals."""
import json
import sys

events = json.load(open(sys.argv[1]))["traceEvents"]
gpu = [e for e in events if e.get("pid") == 1 and e.get("ph") == "X"]


def union(intervals):
    out = []
    for s, t in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], t)
        else:
            out.append([s, t])
    return out


def clip(spans, a, b):
    return [[max(s, a), min(t, b)] for s, t in spans if t > a and s < b]


def total(spans):
    return sum(t - s for s, t in spans)


def intersect(x, y):
    out, i, j = [], 0, 0
    while i < len(x) and j < len(y):
        s, t = max(x[i][0], y[j][0]), min(x[i][1], y[j][1])
        if s < t:
            out.append([s, t])
        if x[i][1] < y[j][1]:
            i += 1
        else:
            j += 1
    return out


copies = [e for e in gpu if e["name"].startswith("memcpy")]
d2h = union((e["ts"], e["ts"] + e["dur"]) for e in copies if " DtoH " in e["name"])
h2d = union((e["ts"], e["ts"] + e["dur"]) for e in copies if " HtoD " in e["name"])
program = sorted((e for e in gpu if not e["name"].startswith(("memcpy", "memset")) and e["tid"] >= 10
                  and e["name"] != "deepum_copy_within_gpu"), key=lambda e: e["ts"])
kernels = union((e["ts"], e["ts"] + e["dur"]) for e in program)
loss = [e["ts"] for e in program if "nll_loss_forward" in e["name"]]
print(f"{'row':>3s} {'phase':9s} {'ms':>7s} {'to host':>8s} {'to GPU':>7s} {'both':>6s} {'one way':>8s} "
      f"{'kernels':>8s} {'all idle':>8s}")
for row in range(len(loss) - 1):
    a, b = loss[row], loss[row + 1]
    opt = [e["ts"] for e in program if a <= e["ts"] < b and ("multi_tensor" in e["name"] or "Foreach" in e["name"])]
    if not opt:
        continue
    o1 = min(opt)
    o2 = max(e["ts"] + e["dur"] for e in program if a <= e["ts"] < b and ("multi_tensor" in e["name"] or "Foreach" in e["name"]))
    bound = 0.0
    for name, (s, t) in (("backward", (a, o1)), ("optimizer", (o1, o2)), ("forward", (o2, b))):
        out, into, busy = clip(d2h, s, t), clip(h2d, s, t), clip(kernels, s, t)
        both = total(intersect(out, into))
        either = union([tuple(x) for x in out + into])
        anything = union([tuple(x) for x in either + busy])
        print(f"{row:3d} {name:9s} {(t - s) / 1e3:7.1f} {total(out) / 1e3:8.1f} {total(into) / 1e3:7.1f} "
              f"{both / 1e3:6.1f} {(total(either) - both) / 1e3:8.1f} {total(busy) / 1e3:8.1f} "
              f"{(t - s - total(anything)) / 1e3:8.1f}")
        bound += max(total(out), total(into), total(busy))
    print(f"{row:3d} step      {(b - a) / 1e3:7.1f}   its phases' bound {bound / 1e3:.1f} ms")
