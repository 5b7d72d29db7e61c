#!/usr/bin/env python3
"""bench/phase_breakdown.py on a fabricated trace (no GPU, standard library only): each row runs
from one loss kernel to the next and splits into backward, optimizer and forward by the optimizer's
kernels; busy time is the union of the program's kernels (deepum's copy kernel left out), bytes
are summed by direction per phase, each direction's busy time and both at once are unions of the
copies, and a row's bound is each phase's longest of kernels and either direction; a step without an optimizer kernel makes no row; a file that is
not a trace gets a clear error; --timeline splits one phase into buckets of busy shares, launches
and move markers, and names a row or phase that does not exist."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

TOOL = Path(__file__).resolve().parents[2] / "bench" / "phase_breakdown.py"
spec = importlib.util.spec_from_file_location("phase_breakdown", TOOL)
phase_breakdown = importlib.util.module_from_spec(spec)
spec.loader.exec_module(phase_breakdown)
MS = 1000.0  # the trace's timestamps are in microseconds
GIB = 2**30


def kernel(name, start_ms, ms, tid=10):
    return {"name": name, "ph": "X", "pid": 1, "tid": tid, "ts": start_ms * MS, "dur": ms * MS, "args": {}}


def copy(kind, start_ms, gib, tid=12):
    return {"name": f"memcpy {kind}", "ph": "X", "pid": 1, "tid": tid, "ts": start_ms * MS, "dur": 1.0,
            "args": {"kind": kind, "bytes": int(gib * GIB)}}


def trace():
    events = [{"name": "thread_name", "ph": "M", "pid": 1, "tid": 10, "args": {"name": "stream 7"}}]
    for step in range(3):
        t = step * 100.0
        events += [kernel("gemm_forward", t, 10), kernel("nll_loss_forward_kernel", t + 20, 1),
                   kernel("gemm_backward", t + 30, 10), kernel("gemm_backward_overlapping", t + 35, 10),
                   kernel("deepum_copy_within_gpu", t + 50, 5, tid=14),
                   kernel("multi_tensor_apply_kernel_Foreach", t + 60, 2),
                   kernel("multi_tensor_apply_kernel_Foreach", t + 70, 2),
                   copy("DtoH", t + 5, 1.0), copy("HtoD", t + 40, 0.5), copy("HtoD", t + 65, 0.25),
                   # Page-fault and migration tracks (tids below 10) are not executions.
                   {"name": "fault", "ph": "X", "pid": 1, "tid": 1, "ts": (t + 31) * MS, "dur": MS}]
    # A fourth loss with no optimizer after the third: the last row still ends at it.
    events.append(kernel("nll_loss_forward_kernel", 320, 1))
    return {"traceEvents": events}


class PhaseBreakdown(unittest.TestCase):
    def rows(self, document, **kwargs):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "run.perfetto.json"
            path.write_text(json.dumps(document))
            return phase_breakdown.breakdown(phase_breakdown.load(str(path)), "nll_loss_forward",
                                             kwargs.get("optimizer", "Foreach|multi_tensor"))

    def test_phases_between_losses(self):
        rows = self.rows(trace())
        self.assertEqual(len(rows), 3)
        first = rows[0]
        self.assertAlmostEqual(first["step_ms"], 100.0)
        # Backward: from the loss (20 ms) to the first optimizer kernel (60 ms); the loss and the
        # two overlapping backward kernels busy 1 + 15 ms, the copy kernel not counted.
        self.assertAlmostEqual(first["backward"]["ms"], 40.0)
        self.assertAlmostEqual(first["backward"]["kernels_ms"], 16.0)
        self.assertAlmostEqual(first["backward"]["to_gpu_gib"], 0.5)
        self.assertAlmostEqual(first["backward"]["to_host_gib"], 0.0)
        # Optimizer: from its first kernel's start to its last kernel's end.
        self.assertAlmostEqual(first["optimizer"]["ms"], 12.0)
        self.assertAlmostEqual(first["optimizer"]["kernels_ms"], 4.0)
        self.assertAlmostEqual(first["optimizer"]["to_gpu_gib"], 0.25)
        # The next step's forward: from the optimizer's end (72 ms) to the next loss (120 ms).
        self.assertAlmostEqual(first["forward"]["ms"], 48.0)
        self.assertAlmostEqual(first["forward"]["kernels_ms"], 10.0)
        self.assertAlmostEqual(first["forward"]["to_host_gib"], 1.0)

    def test_a_step_without_an_optimizer_makes_no_row(self):
        self.assertEqual(len(self.rows(trace(), optimizer="fused_adam")), 0)

    def test_not_a_trace(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "x.json"
            path.write_text("[1, 2]")
            result = subprocess.run([sys.executable, str(TOOL), str(path)], capture_output=True, text=True)
            self.assertNotEqual(result.returncode, 0)
            self.assertIn("not a trace deepum wrote", result.stderr)

    def test_the_table(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "run.perfetto.json"
            path.write_text(json.dumps(trace()))
            result = subprocess.run([sys.executable, str(TOOL), str(path), "--optimizer-kernel", "Foreach"],
                                    capture_output=True, text=True, check=True)
            self.assertEqual(len(result.stdout.splitlines()), 2 + 3 + 2 + 3)
            self.assertIn("optimizer", result.stdout)
            self.assertIn("bound ms", result.stdout)


def host(tid, name, at_ms):
    return {"name": name, "ph": "i", "s": "t", "pid": 2, "tid": tid, "ts": at_ms * MS, "args": {}}


def timeline_trace():
    document = trace()
    # Row 0's backward runs from its loss (20 ms) to its first optimizer kernel (60 ms).
    document["traceEvents"] += [
        {"name": "memcpy HtoD 32.00 MiB", "ph": "X", "pid": 1, "tid": 14, "ts": 22 * MS, "dur": 5 * MS,
         "args": {"kind": "HtoD", "bytes": 32 << 20}},
        {"name": "memcpy DtoH 32.00 MiB", "ph": "X", "pid": 1, "tid": 12, "ts": 25 * MS, "dur": 10 * MS,
         "args": {"kind": "DtoH", "bytes": 32 << 20}},
        host(1, "gemm_backward", 21), host(1, "gemm_backward", 22), host(2, "discard", 41),
        host(2, "prefetch to GPU", 59), host(2, "prefetch to GPU", 59.5), host(2, "evict to host", 61)]
    return document


class Timeline(unittest.TestCase):
    def buckets(self):
        events = timeline_trace()["traceEvents"]
        rows = phase_breakdown.breakdown(phase_breakdown.gpu_executions(events), "nll_loss_forward",
                                         "Foreach|multi_tensor")
        begin, end = rows[0]["bounds_us"]["backward"]
        return phase_breakdown.timeline(events, begin, end, 10.0)

    def test_busy_shares_per_bucket(self):
        b = self.buckets()
        self.assertEqual([r["start_ms"] for r in b], [0, 10, 20, 30])
        # 20-30 ms: the loss kernel 1 ms, the copy to the GPU 5 ms, to the host 5 ms.
        self.assertAlmostEqual(b[0]["kernels_pct"], 10.0)
        self.assertAlmostEqual(b[0]["to_gpu_pct"], 50.0)
        self.assertAlmostEqual(b[0]["to_host_pct"], 50.0)
        # 30-40 ms: two overlapping backward kernels count once; 40-50: the second one's last 5 ms.
        self.assertAlmostEqual(b[1]["kernels_pct"], 100.0)
        self.assertAlmostEqual(b[1]["to_host_pct"], 50.0)
        self.assertAlmostEqual(b[2]["kernels_pct"], 50.0)
        # 50-60 ms: deepum's copy kernel is its own column, not the program's.
        self.assertAlmostEqual(b[3]["copy_kernel_pct"], 50.0)
        self.assertAlmostEqual(b[3]["kernels_pct"], 0.0)

    def test_each_direction_and_both_at_once(self):
        events = timeline_trace()["traceEvents"]
        row = phase_breakdown.breakdown(phase_breakdown.gpu_executions(events), "nll_loss_forward",
                                        "Foreach|multi_tensor")[0]
        # Row 0's backward: to the GPU 22-27 ms (and a 1 us copy at 40), to the host 25-35 ms;
        # both at once 25-27.
        self.assertAlmostEqual(row["backward"]["to_gpu_ms"], 5.001)
        self.assertAlmostEqual(row["backward"]["to_host_ms"], 10.0)
        self.assertAlmostEqual(row["backward"]["both_ways_ms"], 2.0)
        self.assertAlmostEqual(row["forward"]["both_ways_ms"], 0.0)
        # The bound: the backward's kernels (16 ms) over its copies each way, the optimizer's
        # kernels (4), the forward's (10).
        self.assertAlmostEqual(row["phases_bound_ms"], 30.0)

    def test_host_counts_per_bucket(self):
        b = self.buckets()
        self.assertEqual(b[0]["launches"], 2)
        self.assertEqual(b[2]["moves"], {"discard": 1})
        # The marker at 61 ms is past the phase.
        self.assertEqual(b[3]["moves"], {"prefetch to GPU": 2})

    def test_command_line(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "run.perfetto.json"
            path.write_text(json.dumps(timeline_trace()))

            def run(*arguments):
                return subprocess.run([sys.executable, str(TOOL), str(path), *arguments],
                                      capture_output=True, text=True)

            table = run("--timeline", "0", "backward")
            self.assertEqual(table.returncode, 0, table.stderr)
            self.assertEqual(len(table.stdout.splitlines()), 2 + 4)
            self.assertIn("discard 1", table.stdout)
            as_json = json.loads(run("--timeline", "0", "forward", "--bucket-ms", "48", "--json").stdout)
            self.assertEqual(len(as_json), 1)
            self.assertIn("row 7 is not one of 0..2", run("--timeline", "7", "backward").stderr)
            self.assertIn("'sideways' is not backward", run("--timeline", "0", "sideways").stderr)
            self.assertIn("must be positive", run("--bucket-ms", "0").stderr)


if __name__ == "__main__":
    unittest.main()
