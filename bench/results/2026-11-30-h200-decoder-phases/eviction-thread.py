"""eviction-thread.py ARCHIVE.tar...: per run's statistics in each archive, the eviction thread's
time per eviction: its copy calls (copies into the store) and its drops (the host's waits for the
copies to end, the drop call and its end), against the bytes each eviction swapped out."""
import json
import sys
import tarfile

G = 2**30
for archive in sys.argv[1:]:
    with tarfile.open(archive) as tar:
        for member in sorted(tar.getmembers(), key=lambda m: m.name):
            if not member.name.endswith(".stats.json"):
                continue
            s = json.load(tar.extractfile(member))
            e, m = s["engine"]["eviction_thread"], s["engine"]["moves"]
            n = m["evictions"]
            out = m["swapped_out_bytes"]
            busy = (e["copy_calls_ns"] + e["drops_ns"]) / 1e9
            print(f"{member.name.split('/')[-1]:28s} {n:4d} evictions, {out / G:6.1f} GiB out "
                  f"({out / n / G:.2f} GiB each): copy calls {e['copy_calls_ns'] / 1e6 / n:5.1f} ms, "
                  f"drops {e['drops_ns'] / 1e6 / n:5.1f} ms each; {out / 1e9 / busy:5.1f} GB/s while busy; "
                  f"the thread in move calls {e['move_calls_ns'] / 1e9:5.2f} s of a {s['run_ns'] / 1e9:5.1f} s run")
