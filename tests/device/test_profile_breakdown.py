"""Tests of scripts/device/profile_breakdown.py on a small hand-made profile in the shape
`pipelens run --torch-profile` writes, with exact expected medians. Run by ctest as
device.profile_breakdown: python3 tests/device/test_profile_breakdown.py
"""
import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "scripts" / "device" / "profile_breakdown.py"
sys.path.insert(0, str(SCRIPT.parent))

import profile_breakdown  # noqa: E402


def event(name, cat, ts, dur, tid=1, pid=7):
    return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "pid": pid, "tid": tid}


PROFILE = {"traceEvents": [
    # 0F0: 100 us; operators cover 10-40 and 30-60 (overlapping: 50 us) and, on the autograd
    # engine's thread, 70-80 (10 us): 60 covered, 40 outside.
    event("PP:0F0", "user_annotation", 0, 100),
    event("aten::addmm", "cpu_op", 10, 30),
    event("aten::relu", "cpu_op", 30, 30),
    event("aten::mul", "cpu_op", 70, 10, tid=2),
    event("cudaLaunchKernel", "kernel", 20, 5, pid=0),  # a kernel starting inside: 5 us
    # 0F1: 50 us, one operator of 20 us: 30 outside; an operator that runs past its end is not
    # counted.
    event("PP:0F1", "user_annotation", 200, 50),
    event("aten::addmm", "cpu_op", 210, 20),
    event("aten::copy_", "cpu_op", 240, 20),
    # 1B0: 30 us with nothing inside.
    event("PP:1B0", "user_annotation", 300, 30),
    {"ph": "i", "name": "PP:1B9", "ts": 400},  # not a complete event: ignored
]}


class ProfileBreakdown(unittest.TestCase):
    def test_medians_per_kind_count_overlapping_operators_once(self):
        result = profile_breakdown.breakdown(PROFILE)
        self.assertEqual(sorted(result), ["B", "F"])
        forward = result["F"]
        self.assertEqual(forward["actions"], 2)
        self.assertEqual(forward["median_span_us"], 100)  # the upper middle of 50 and 100
        self.assertEqual(forward["median_operators_us"], 60)
        self.assertEqual(forward["median_outside_operators_us"], 40)
        self.assertEqual(forward["median_kernels_us"], 5)
        self.assertEqual(result["B"], {"actions": 1, "median_span_us": 30,
                                       "median_operators_us": 0,
                                       "median_outside_operators_us": 30,
                                       "median_kernels_us": 0})

    def test_a_profile_without_action_ranges_is_an_error_naming_the_file(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
            json.dump({"traceEvents": [event("aten::mm", "cpu_op", 0, 1)]}, handle)
        completed = subprocess.run([sys.executable, str(SCRIPT), handle.name],
                                   capture_output=True, text=True)
        pathlib.Path(handle.name).unlink()
        self.assertEqual(completed.returncode, 1)
        self.assertIn(handle.name + ": no PP:<action> range", completed.stderr)

    def test_a_file_that_is_not_json_is_a_usage_error(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
            handle.write("{not json")
        completed = subprocess.run([sys.executable, str(SCRIPT), handle.name, "--json"],
                                   capture_output=True, text=True)
        pathlib.Path(handle.name).unlink()
        self.assertEqual(completed.returncode, 2)
        self.assertTrue(completed.stderr.startswith("profile_breakdown.py: " + handle.name))


if __name__ == "__main__":
    unittest.main()
