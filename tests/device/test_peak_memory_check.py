"""Tests of scripts/device/peak_memory_check.py on `calibrate --json` objects with exact figures.
Run by ctest as device.peak_memory_check: python3 tests/device/test_peak_memory_check.py
"""
import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "scripts" / "device" / "peak_memory_check.py"
sys.path.insert(0, str(SCRIPT.parent))

import peak_memory_check  # noqa: E402


def peaks(*pairs):
    return {"peak_memory_bytes": [{"rank": rank, "measured": measured, "simulated": simulated}
                                  for rank, (measured, simulated) in enumerate(pairs)]}


class PeakMemoryCheck(unittest.TestCase):
    def test_every_rank_within_ten_percent_passes(self):
        result = peak_memory_check.compare(peaks((1000, 1100), (2000, 1800)))
        self.assertTrue(result["within_10pct"])
        self.assertEqual([r["error_pct"] for r in result["ranks"]], [10.0, -10.0])

    def test_one_rank_past_ten_percent_fails(self):
        result = peak_memory_check.compare(peaks((1000, 1000), (1000, 1101)))
        self.assertFalse(result["within_10pct"])
        self.assertAlmostEqual(result["ranks"][1]["error_pct"], 10.1)

    def test_no_measured_peak_is_not_a_pass(self):
        self.assertFalse(peak_memory_check.compare({})["within_10pct"])
        self.assertFalse(peak_memory_check.compare(peaks((0, 500)))["within_10pct"])

    def test_exit_status_and_output(self):
        with tempfile.TemporaryDirectory() as folder:
            good = pathlib.Path(folder) / "good.json"
            good.write_text(json.dumps(peaks((4096, 4000))))
            bad = pathlib.Path(folder) / "bad.json"
            bad.write_text(json.dumps(peaks((4096, 2048))))
            broken = pathlib.Path(folder) / "broken.json"
            broken.write_text("{")
            run = lambda path: subprocess.run([sys.executable, str(SCRIPT), str(path)],
                                              capture_output=True, text=True)
            passed = run(good)
            self.assertEqual(passed.returncode, 0, passed.stderr)
            self.assertTrue(json.loads(passed.stdout)["within_10pct"])
            self.assertEqual(run(bad).returncode, 1)
            failed = run(broken)
            self.assertEqual(failed.returncode, 2)
            self.assertIn("broken.json", failed.stderr)


if __name__ == "__main__":
    unittest.main()
