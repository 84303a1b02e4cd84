"""scripts/device/fidelity.sh end to end on this machine's CPU, in two rounds: a tiny model, ranks
as threads, one kind; each row is run once a round and its runs are diffed together, so the table
pools both runs' steps; an anchor every second run. Run by ctest as device.fidelity_rounds:
python3 tests/device/test_fidelity_rounds.py BUILD_DIR
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "scripts" / "device" / "fidelity.sh"
BUILD = pathlib.Path(sys.argv.pop(1) if len(sys.argv) > 1 else ROOT / "build")

SETTINGS = {"FIDELITY_PP": "2", "FIDELITY_M": "4", "FIDELITY_KINDS": "GPipe",
            "FIDELITY_ROUNDS": "2", "FIDELITY_STEPS": "3", "FIDELITY_WARMUP": "1",
            "FIDELITY_CALIBRATION_RUNS": "1", "FIDELITY_CALIBRATION_M": "4",
            "FIDELITY_ANCHOR_STEPS": "1", "FIDELITY_ANCHOR_WARMUP": "0",
            "FIDELITY_ANCHOR_EVERY": "2", "FIDELITY_HIDDEN": "32", "FIDELITY_LAYERS": "4",
            "FIDELITY_ROWS_PER_MICROBATCH": "8", "FIDELITY_TRANSPORT": "local",
            "FIDELITY_PARTITION_ROUNDS": "0", "FIDELITY_BUDGET_S": "240"}


class FidelityRounds(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.out = pathlib.Path(tempfile.mkdtemp(prefix="fidelity_rounds_"))
        cls.result = subprocess.run(["bash", str(SCRIPT), str(BUILD), str(cls.out)],
                                    capture_output=True, text=True, timeout=300,
                                    env=dict(os.environ, **SETTINGS))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.out)

    def test_each_row_is_two_runs_diffed_together_and_pooled(self):
        self.assertEqual(self.result.returncode, 0, self.result.stdout + self.result.stderr)
        rows = {row["kind"]: row for row in
                json.loads((self.out / "fidelity.json").read_text())["rows"]}
        gpipe = rows["GPipe"]
        self.assertEqual(gpipe["status"], "measured", gpipe)
        self.assertEqual(gpipe["runs"], 2)
        self.assertEqual(gpipe["steps"], 4)  # ceil(3 / 2) steps a run
        diff = json.loads((self.out / "diffs" / "GPipe.pp2.v1.m4.json").read_text())
        self.assertEqual(len(diff["real"]["runs"]), 2)
        self.assertEqual(diff["over_steps"]["steps"], 4)
        self.assertGreater(diff["over_steps"]["median_step_time"]["simulated_ns"], 0)
        self.assertEqual(sorted({step["real_run"] for step in diff["steps"]}),
                         sorted(diff["real"]["runs"]))
        for round_number in (1, 2):
            run = json.loads((self.out / "runs" / ("GPipe.pp2.v1.m4.r%d.json" % round_number))
                             .read_text())
            self.assertEqual(run["steps"]["recorded"], 2)
        self.assertIn("each row measured in 2 rounds", self.result.stdout)

    def test_an_anchor_every_second_run_and_one_after_the_last(self):
        self.assertEqual(self.result.returncode, 0, self.result.stdout + self.result.stderr)
        anchors = (self.out / "anchors.tsv").read_text().splitlines()[1:]
        self.assertEqual([line.split("\t")[:2] for line in anchors],
                         [["0", "predicted"], ["1", "measured"], ["2", "measured"]])
        rows = (self.out / "rows.tsv").read_text().splitlines()
        self.assertEqual(rows[1].split("\t")[-1], "1,1")  # both runs sit between anchors 1 and 2

    def test_a_round_count_that_is_not_a_whole_number_is_refused(self):
        for name, value in (("FIDELITY_ROUNDS", "0"), ("FIDELITY_ROUNDS", "00"),
                            ("FIDELITY_ROUNDS", "2x"), ("FIDELITY_ANCHOR_EVERY", "000")):
            result = subprocess.run(["bash", str(SCRIPT), str(BUILD), str(self.out / "bad")],
                                    capture_output=True, text=True, timeout=60,
                                    env={**os.environ, **SETTINGS, name: value})
            self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
            self.assertIn("%s must be a whole number of at least 1, not '%s'" % (name, value),
                          result.stderr)
        # Written with a leading zero, a count is still decimal (08 is not octal).
        result = subprocess.run(["bash", str(SCRIPT), str(BUILD), str(self.out / "octal")],
                                capture_output=True, text=True, timeout=120,
                                env={**os.environ, **SETTINGS, "FIDELITY_ROUNDS": "02"})
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("round 2 of 2", result.stdout)


class FidelityBudgetRunsOut(unittest.TestCase):
    """A budget spent in the middle of the rounds (36 runs of about 0.4 s each against 10 s):
    every row measured keeps its diff (the split, the error at each rank's speed), and the rows
    cut short say how many runs they got."""

    def test_every_measured_row_keeps_its_diff(self):
        out = pathlib.Path(tempfile.mkdtemp(prefix="fidelity_budget_"))
        try:
            settings = {**SETTINGS, "FIDELITY_KINDS": "GPipe 1F1B Interleaved1F1B",
                        "FIDELITY_ROUNDS": "12", "FIDELITY_STEPS": "12",
                        "FIDELITY_ANCHOR_STEPS": "0", "FIDELITY_BUDGET_S": "10"}
            result = subprocess.run(["bash", str(SCRIPT), str(BUILD), str(out)],
                                    capture_output=True, text=True, timeout=200,
                                    env={**os.environ, **settings})
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
            self.assertIn("the budget of 10 s ran out", result.stdout)  # it did run out
            rows = json.loads((out / "fidelity.json").read_text())["rows"]
            measured = [row for row in rows if row["status"] == "measured"]
            self.assertTrue(measured, result.stdout)
            for row in measured:
                self.assertTrue(row["split_pct_of_measured"], row)
                self.assertIsNotNone(row["at_rank_speed_error_pct"], row)
            self.assertTrue(any(row["runs"] < 12 for row in measured), measured)
            self.assertIn("in fewer runs: ", result.stdout)
        finally:
            shutil.rmtree(out)


if __name__ == "__main__":
    unittest.main()
