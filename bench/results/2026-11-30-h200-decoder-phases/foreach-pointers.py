"""foreach-pointers.py TRACE.json: the managed pointers deepum found in each launch of PyTorch's
multi_tensor_apply kernels, counted by the kernel's tensor-list depth and grid (blocks). A trace
converted by `deepum trace convert`."""
import collections
import json
import re
import sys

events = json.load(open(sys.argv[1]))["traceEvents"]
counts = collections.Counter()
for e in events:
    if e.get("pid") == 1 and e.get("tid") == 10 and e.get("ph") == "X" and "multi_tensor" in e.get("name", ""):
        depth = re.search(r"TensorListMetadataILi(\d)E", e["name"])
        counts[(int(depth.group(1)) if depth else 0, e["args"]["grid"][0], e["args"].get("managed_pointers"))] += 1
print(f"{'depth':>5s} {'blocks':>6s} {'pointers':>8s} {'launches':>8s}   (depth 0: a metadata type other than TensorListMetadata)")
for (depth, blocks, pointers), n in sorted(counts.items()):
    print(f"{depth:5d} {blocks:6d} {pointers:8d} {n:8d}")
