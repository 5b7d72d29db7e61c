"""copies-back-leads.py TRACE.dtrace ROW: in one step's backward, when each block copied back (a
'prefetch to GPU' hint for a block deepum evicted before) was decided, against the launch that
next names it: lead in launches and in host ms; per 5 ms of the backward, bytes copied back
decided, bytes evicted/discarded decided, and returned (dead) bytes."""
import bisect, collections, struct, sys
BLOCK = 2 << 20
path, row = sys.argv[1], int(sys.argv[2])
data = open(path, "rb").read()
at = 24
for _ in range(struct.unpack_from("<I", data, 20)[0]):
    at += 4 + struct.unpack_from("<I", data, at)[0]
    at += 4 + struct.unpack_from("<I", data, at)[0]
names, launches, operands, hints, bufs = {}, [], {}, [], []
while at < len(data):
    kind, length = data[at], struct.unpack_from("<I", data, at + 1)[0]
    p = at + 5
    if kind == 0x01:
        function, n = struct.unpack_from("<QI", data, p)
        names[function] = data[p + 12:p + 12 + n].decode(errors="replace")
    elif kind == 0x02:
        correlation, _, function, _, host_time = struct.unpack_from("<QQQQQ", data, p)
        launches.append((host_time, correlation, function))
    elif kind == 0x0A:
        correlation, stream, host_time = struct.unpack_from("<QQQ", data, p)
        launches.append((host_time, correlation, 0))
        op, cnt = struct.unpack_from("<BH", data, p + 24)
        ops = struct.unpack_from("<QQ", data, p + 27)
        nbytes = struct.unpack_from("<Q", data, p + 43)[0]
        operands[correlation] = [(o, nbytes) for o in ops[:cnt] if o]
    elif kind == 0x09:
        correlation, _, count = struct.unpack_from("<QBH", data, p)
        operands[correlation] = [struct.unpack_from("<QQ", data, p + 11 + 16 * i) for i in range(count)]
    elif kind == 0x07:
        hints.append(struct.unpack_from("<QQQB", data, p))
    elif kind == 0x0B:
        k, t, a, b, s = struct.unpack_from("<BQQQQ", data, p)
        bufs.append((t, k, a, b))
    elif kind == 0xFF:
        break
    at = p + length
launches.sort()
times = [t for t, _, _ in launches]
uses = collections.defaultdict(list)
for index, (_, correlation, _) in enumerate(launches):
    for pointer, extent in operands.get(correlation, []):
        for block in range(pointer // BLOCK, (pointer + max(extent, 1) - 1) // BLOCK + 1):
            uses[block].append(index)
name = [names.get(f, "copy") for _, _, f in launches]
loss = [i for i, n in enumerate(name) if "nll_loss_forward" in n]
opt = [i for i, n in enumerate(name) if "multi_tensor" in n or "Foreach" in n or "fused_adam" in n]
b0 = loss[row]
b1 = min(o for o in opt if o > b0)
t0, t1 = times[b0], times[b1]
print(f"backward launches {b0}-{b1} ({b1-b0}), host {((t1-t0)/1e6):.1f} ms")
evicted = set()
hints.sort()
leads = []
bucket = collections.defaultdict(lambda: [0, 0, 0, 0, 0])
for time, address, size, kind in hints:
    blocks = range(address // BLOCK, (address + size - 1) // BLOCK + 1)
    inside = t0 <= time < t1
    now = bisect.bisect_right(times, time)
    bk = int((time - t0) / 5e6) if inside else None
    for block in blocks:
        if kind == 1:
            if inside: bucket[bk][1] += BLOCK
            evicted.add(block)
        elif kind == 2:
            if inside: bucket[bk][2] += BLOCK
            evicted.discard(block)
        elif kind == 0:
            was = block in evicted
            evicted.discard(block)
            if not inside: continue
            if not was:
                bucket[bk][4] += BLOCK
                continue
            named = uses.get(block, [])
            k = bisect.bisect_left(named, now - 1)
            nxt = named[k] if k < len(named) else None
            bucket[bk][0] += BLOCK
            if nxt is not None:
                leads.append((nxt - now, (times[nxt] - time) / 1e6))
for t, k, a, b in bufs:
    if t0 <= t < t1 and k == 1:
        bucket[int((t - t0) / 5e6)][3] += b
G = 2 ** 30
print("  ms  restored  evict  discard  returned  placed (GiB decided)")
for k in sorted(bucket):
    r, e, d, ret, pl = bucket[k]
    print(f"{k*5:4d}  {r/G:7.2f}  {e/G:6.2f}  {d/G:6.2f}  {ret/G:7.2f}  {pl/G:6.2f}")
if leads:
    leads.sort()
    n = len(leads)
    print(f"copies back: {n} blocks; lead in launches p10/50/90 {leads[n//10][0]}/{leads[n//2][0]}/{leads[9*n//10][0]}")
    ms = sorted(l[1] for l in leads)
    print(f"lead in host ms p10/50/90 {ms[n//10]:.2f}/{ms[n//2]:.2f}/{ms[9*n//10]:.2f}; at lead<=1 launch: {sum(1 for l in leads if l[0] <= 1)}")
# Demand: per 5 ms of host time in the backward, bytes of blocks launches name that were copied
# back in this backward (their first naming after the copy back).
first_need = {}
ev = set()
restored_blocks = set()
for time, address, size, kind in hints:
    if t0 <= time < t1 and kind == 0:
        for block in range(address // BLOCK, (address + size - 1) // BLOCK + 1):
            restored_blocks.add(block)
need = collections.Counter()
seen = set()
for i in range(b0, b1):
    for pointer, extent in operands.get(launches[i][1], []):
        for block in range(pointer // BLOCK, (pointer + max(extent, 1) - 1) // BLOCK + 1):
            if block in restored_blocks and block not in seen:
                seen.add(block)
                need[int((times[i] - t0) / 5e6)] += BLOCK
print("first naming of blocks copied back, GiB per 5 ms:", " ".join(f"{k*5}:{v/G:.2f}" for k, v in sorted(need.items())))
