#!/usr/bin/env python3
"""scripts/demo_report.py on fabricated runs (no GPU, standard library only): the floor is
max(native step, (F - F/R) / B) at the slower direction's both-ways rate, bit-identical losses pass,
one differing loss fails naming the step, and a run without deepum loaded or unfinished fails."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPORT = Path(__file__).resolve().parents[2] / "scripts" / "demo_report.py"
GIB = 2**30


def result(ms: float, losses: list[float], loaded: bool = True, completed: bool = True) -> dict:
    return {"median_step_ms": ms, "peak_reserved_bytes": 10 * GIB, "losses": losses, "completed": completed,
            "error": None if completed else "CUDA out of memory", "deepum_loaded": loaded}


class DemoReport(unittest.TestCase):
    def run_report(self, native: dict, deepum: dict, link: dict | None = None) -> subprocess.CompletedProcess:
        with tempfile.TemporaryDirectory() as d:
            files = {}
            for name, data in (("native", native), ("deepum", deepum), ("link", link)):
                if data is not None:
                    files[name] = Path(d) / f"{name}.json"
                    files[name].write_text(json.dumps(data))
            args = [sys.executable, str(REPORT), str(files["native"]), str(files["deepum"]), "--ratio", "2"]
            if "link" in files:
                args += ["--link", str(files["link"])]
            return subprocess.run(args, capture_output=True, text=True, timeout=60)

    def test_floor_is_the_slower_direction_at_both_ways_rates(self) -> None:
        # 5 GiB each way at min(40, 20) GB/s = 268 ms, above the 100 ms native step.
        out = self.run_report(result(100.0, [2.0, 1.5]), result(400.0, [2.0, 1.5]),
                              {"h2d_gbps": 40.0, "d2h_gbps": 20.0})
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertRegex(out.stdout, r"floor\s+268\.4\s+2\.68\s+max\(native, 5\.00 GiB each way a step at 20\.0 GB/s")
        self.assertRegex(out.stdout, r"deepum at 2x\s+400\.0\s+4\.00\s+\(1\.49x the floor\)")
        self.assertIn("losses: identical, bit for bit, in all 2 steps", out.stdout)

    def test_floor_is_the_native_step_when_the_link_is_fast_or_unmeasured(self) -> None:
        out = self.run_report(result(100.0, [2.0]), result(150.0, [2.0]), {"h2d_gbps": 500.0, "d2h_gbps": 500.0})
        self.assertRegex(out.stdout, r"floor\s+100\.0\s+1\.00")
        out = self.run_report(result(100.0, [2.0]), result(150.0, [2.0]))
        self.assertIn("the native step (no link rate measured)", out.stdout)

    def test_one_differing_loss_fails(self) -> None:
        out = self.run_report(result(100.0, [2.0, 1.5, 1.25]), result(400.0, [2.0, 1.5000001, 1.25]))
        self.assertEqual(out.returncode, 1)
        self.assertIn("losses DIFFER at 1 of 3 steps (first: step 1", out.stdout)

    def test_a_run_without_deepum_or_unfinished_fails(self) -> None:
        out = self.run_report(result(100.0, [2.0]), result(100.0, [2.0], loaded=False))
        self.assertEqual(out.returncode, 1)
        self.assertIn("without libdeepum.so loaded", out.stdout)
        out = self.run_report(result(100.0, [2.0]), result(100.0, [2.0], completed=False))
        self.assertEqual(out.returncode, 1)
        self.assertIn("the deepum run did not finish: CUDA out of memory", out.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
