#!/usr/bin/env python3
"""lost_d2h_records.py TRACE.perfetto.json: bytes that migrated to the GPU while the migration
records in time order say they were already there, i.e. memory that left the GPU with no record
of it leaving. On a complete record stream this is zero (a page cannot arrive twice without
leaving in between). Also lists the 10 largest such arrivals by range.

Make the JSON with `deepum trace convert FILE.dtrace OUT.json`. Records with cause
"deepum eviction done" (deepum's own account of its finished evictions, trace format 1.2) count as
leaving unless --driver-only is given.
"""
import argparse
import collections
import json

GRANULE = 4096


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("--driver-only", action="store_true", help="ignore deepum's own eviction-done records")
    args = parser.parse_args()
    document = json.load(open(args.trace))
    events = document["traceEvents"] if isinstance(document, dict) else document
    ranges = sorted((int(e["args"]["address"], 16), e["args"]["bytes"])
                    for e in events if e.get("name") == "allocate")
    migrations = []
    for e in events:
        name = e.get("name", "")
        if not (name.startswith("H2D") or name.startswith("D2H")):
            continue
        if args.driver_only and "deepum eviction done" in name:
            continue
        start = e["ts"] if name.startswith("H2D") else e["ts"] + e.get("dur", 0)
        migrations.append((start, name[:3], int(e["args"]["address"], 16), e["args"]["bytes"]))
    migrations.sort()
    resident = set()
    again = collections.Counter()
    to_gpu = to_host = 0
    for _, direction, address, size in migrations:
        granules = range(address // GRANULE, (address + size + GRANULE - 1) // GRANULE)
        if direction == "H2D":
            to_gpu += size
            hit = sum(1 for g in granules if g in resident)
            if hit:
                base = max((b for b, _ in ranges if b <= address), default=0)
                again[base] += hit * GRANULE
            resident.update(granules)
        else:
            to_host += size
            resident.difference_update(granules)
    mib = 1 << 20
    print(f"migrated to GPU {to_gpu / mib:.1f} MiB, to host {to_host / mib:.1f} MiB by the records")
    print(f"arrived on the GPU again with no record of leaving: {sum(again.values()) / mib:.1f} MiB")
    for base, size in again.most_common(10):
        print(f"  range 0x{base:x}: {size / mib:.1f} MiB")


if __name__ == "__main__":
    main()
