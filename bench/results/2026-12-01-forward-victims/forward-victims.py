"""forward-victims.py TRACE.dtrace ROW: of what deepum decided to move to the host (its "evict to
host" hints) in one step's forward (ROW as bench/phase_breakdown.py counts steps, loss to loss;
the forward runs from the step's last optimizer launch to the next loss launch, in the host's
launch order), the bytes by where they were last named before: in this forward, in the optimizer
or backward before it, or earlier; and by where they are named next. Blocks are 2 MiB; a launch
names the blocks its operands' extents reach (the block of the pointer where the extent is 0).
Read from the trace file itself (docs/trace-format.md, version 1.4)."""
import bisect
import collections
import struct
import sys

BLOCK = 2 << 20
path, row = sys.argv[1], int(sys.argv[2])
data = open(path, "rb").read()
assert data[:8] == b"DEEPUMTR", "not a deepum trace"
at = 24
for _ in range(struct.unpack_from("<I", data, 20)[0]):
    at += 4 + struct.unpack_from("<I", data, at)[0]
    at += 4 + struct.unpack_from("<I", data, at)[0]
names, launches, operands, hints = {}, [], {}, []
while at < len(data):
    kind, length = data[at], struct.unpack_from("<I", data, at + 1)[0]
    p = at + 5
    if kind == 0x01:
        function, n = struct.unpack_from("<QI", data, p)
        names[function] = data[p + 12:p + 12 + n].decode(errors="replace")
    elif kind == 0x02:
        correlation, _, function, _, host_time = struct.unpack_from("<QQQQQ", data, p)
        launches.append((host_time, correlation, function))
    elif kind == 0x09:
        correlation, _, count = struct.unpack_from("<QBH", data, p)
        operands[correlation] = [struct.unpack_from("<QQ", data, p + 11 + 16 * i) for i in range(count)]
    elif kind == 0x07:
        time, address, size, hint = struct.unpack_from("<QQQB", data, p)
        if hint == 1:
            hints.append((time, address, size))
    elif kind == 0xFF:
        break
    at = p + length
launches.sort()
times = [t for t, _, _ in launches]
uses = collections.defaultdict(list)  # block -> launch indices naming it, in order
for index, (_, correlation, _) in enumerate(launches):
    for pointer, extent in operands.get(correlation, []):
        for block in range(pointer // BLOCK, (pointer + max(extent, 1) - 1) // BLOCK + 1):
            uses[block].append(index)
name = [names.get(f, "") for _, _, f in launches]
loss = [i for i, n in enumerate(name) if "nll_loss_forward" in n]
optimizer = [i for i, n in enumerate(name) if "multi_tensor" in n or "Foreach" in n or "fused_adam" in n]


def phase(index):
    """The phase a launch belongs to, named from the forward of `row`."""
    if index < 0:
        return "never"
    step = bisect.bisect_right(loss, index) - 1  # the loss launch at or before it
    in_step = [o for o in optimizer if (loss[step] if step >= 0 else -1) < o < (loss[step + 1] if step + 1 < len(loss) else 1 << 60)]
    relative = step - row
    if in_step and index <= max(in_step):
        where = "optimizer" if index >= min(in_step) else "backward"
    else:
        where = "forward"  # step s's forward runs from its optimizer to loss s+1
    return f"{where} {relative:+d}"


fwd_begin = max(o for o in optimizer if loss[row] < o < loss[row + 1])
fwd_end = loss[row + 1]
t0, t1 = times[fwd_begin], times[fwd_end]
before, after = collections.Counter(), collections.Counter()
total = 0
for time, address, size in hints:
    if not t0 <= time < t1:
        continue
    now = bisect.bisect_right(times, time)  # launches decided before the hint: below `now`
    for block in range(address // BLOCK, (address + size - 1) // BLOCK + 1):
        named = uses.get(block, [])
        k = bisect.bisect_left(named, now)
        last = named[k - 1] if k > 0 else -1
        following = named[k] if k < len(named) else -1
        part = min(BLOCK, size)
        before[phase(last)] += part
        after[phase(following)] += part
        total += part
G = 2**30
print(f"step {row}'s forward: launches {fwd_begin}-{fwd_end}, {total / G:.2f} GiB decided to the host "
      f"(+0: this step's backward, optimizer and forward; +1: the next step's)")
print("last named before:", ", ".join(f"{k} {v / G:.2f}" for k, v in sorted(before.items())))
print("named next:      ", ", ".join(f"{k} {v / G:.2f}" for k, v in sorted(after.items())))
