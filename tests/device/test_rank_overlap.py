"""Tests of scripts/device/rank_overlap.py on small traces with exact expected figures (only the
columns it reads: runs.id, runs.kind and the actions' run, rank, lane and times). Run by ctest as
device.rank_overlap: python3 tests/device/test_rank_overlap.py
"""
import pathlib
import sqlite3
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "scripts" / "device" / "rank_overlap.py"
sys.path.insert(0, str(SCRIPT.parent))

import rank_overlap  # noqa: E402


def write_trace(path, runs):
    """runs: {run_id: (kind, [(rank, lane, start_ns, end_ns), ...])}"""
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, kind TEXT)")
    connection.execute("CREATE TABLE actions (run_id INTEGER, rank INTEGER, lane INTEGER, "
                       "start_ns INTEGER, end_ns INTEGER)")
    for run_id, (kind, actions) in runs.items():
        connection.execute("INSERT INTO runs VALUES (?, ?)", (run_id, kind))
        connection.executemany("INSERT INTO actions VALUES (?, ?, ?, ?, ?)",
                               [(run_id,) + action for action in actions])
    connection.commit()
    connection.close()


class RankOverlap(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.trace = str(pathlib.Path(self.folder.name) / "trace.db")

    def tearDown(self):
        self.folder.cleanup()

    def test_the_time_two_ranks_computed_at_once(self):
        write_trace(self.trace, {
            1: ("sim", [(0, 0, 0, 1000), (1, 0, 0, 1000)]),
            2: ("real", [
                # rank 0 busy 0-100 and 150-300 (two touching spans merge), 50 of communication
                (0, 0, 0, 100), (0, 0, 150, 200), (0, 0, 200, 300), (0, 1, 100, 150),
                # rank 1 busy 50-175 (two overlapping spans merge) and 300-400 (touches 0's end)
                (1, 0, 50, 120), (1, 0, 100, 175), (1, 0, 300, 400)]),
        })
        result = rank_overlap.rank_overlap(self.trace)
        self.assertEqual(result["run_id"], 2)
        self.assertEqual(result["busy_ns"], {"0": 250, "1": 225})
        # 50-100 and 150-175: 75 ns; communication (lane 1) and the touch at 300 do not count.
        self.assertEqual(result["overlap_ns"], 75)
        self.assertAlmostEqual(result["overlap_share"], 75 / 225, places=12)
        self.assertEqual(rank_overlap.rank_overlap(self.trace, 1)["overlap_ns"], 1000)

    def test_exit_status_says_whether_ranks_ever_overlapped(self):
        write_trace(self.trace, {1: ("real", [(0, 0, 0, 100), (1, 0, 100, 200)])})
        completed = subprocess.run([sys.executable, str(SCRIPT), self.trace],
                                   capture_output=True, text=True)
        self.assertEqual(completed.returncode, 1, completed.stderr)
        self.assertEqual(completed.stdout.strip(),
                         '{"run_id": 1, "busy_ns": {"0": 100, "1": 100}, "overlap_ns": 0, '
                         '"overlap_share": 0.0}')
        write_trace(self.trace + "2", {1: ("real", [(0, 0, 0, 100), (1, 0, 90, 200)])})
        completed = subprocess.run([sys.executable, str(SCRIPT), self.trace + "2"],
                                   capture_output=True, text=True)
        self.assertEqual(completed.returncode, 0, completed.stderr)


if __name__ == "__main__":
    unittest.main()
