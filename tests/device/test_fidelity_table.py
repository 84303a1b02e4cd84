"""Tests of scripts/device/fidelity_table.py's table on a small fake fidelity.sh output folder:
the plain error, the drift-paired error that scales a prediction by the anchors (runs of the
calibrated configuration) on either side of its row, and a row measured in several rounds
(its runs' steps pooled), with exact expected values. Run by ctest as
device.fidelity_table: python3 tests/device/test_fidelity_table.py
"""
import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "scripts" / "device" / "fidelity_table.py"

PREDICTIONS = [  # kind, pp, v, m, predicted step (ns), predicted peak per rank
    ("1F1B", 2, 1, 8, 50_000_000, "1000,1000"),
    ("GPipe", 2, 1, 8, 40_000_000, "2000,2000"),
    ("ZBVZeroBubble", 2, 2, 8, 40_000_000, "1000,1000"),
    ("DualPipeV", 2, 2, 8, 30_000_000, "1000,1000"),
]


def run_json(median_ns, peaks=(1000, 1000)):
    return {"completed": True, "run_id": 1,
            "steps": {"recorded": 20, "median_ns": median_ns, "min_ns": median_ns,
                      "p10_ns": median_ns, "p90_ns": median_ns, "max_ns": median_ns},
            "ranks": [{"peak_memory_bytes": p} for p in peaks]}


def tsv(path, header, rows):
    lines = ["\t".join(header)] + ["\t".join(str(c) for c in row) for row in rows]
    path.write_text("\n".join(lines) + "\n")


class FidelityTable(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.out = pathlib.Path(self.folder.name)
        (self.out / "runs").mkdir()
        tsv(self.out / "meta.tsv", ["key", "value"],
            [("calibration_pp", 2), ("calibration_m", 8), ("transport", "gloo")])
        tsv(self.out / "predictions.tsv",
            ["kind", "pp", "v", "m", "status", "predicted_step_ns", "predicted_peak_bytes",
             "sim_run", "reason"],
            [(k, pp, v, m, "predicted", ns, peaks, "", "") for k, pp, v, m, ns, peaks
             in PREDICTIONS])
        # Anchors: predicted 50 ms; measured 50, 60.5 (anchor 3 failed), 55 ms: speeds 1.0,
        # 1.21, -, 1.1.
        tsv(self.out / "anchors.tsv", ["index", "status", "step_ns", "seconds", "reason"],
            [(0, "predicted", 50_000_000, 0, ""), (1, "measured", 50_000_000, 1.5, ""),
             (2, "measured", 60_500_000, 1.5, ""), (3, "failed", "", 0.1, "exit 1"),
             (4, "measured", 55_000_000, 1.5, "")])
        measured = {"1F1B": 55_000_000, "GPipe": 48_400_000, "ZBVZeroBubble": 50_000_000,
                    "DualPipeV": 30_000_000}
        anchors = {"1F1B": 1, "GPipe": 2, "ZBVZeroBubble": 3, "DualPipeV": 0}
        rows = []
        for kind, pp, v, m, _, _ in PREDICTIONS:
            name = "%s.pp%d.v%d.m%d" % (kind, pp, v, m)
            (self.out / "runs" / (name + ".json")).write_text(json.dumps(run_json(
                measured[kind])))
            rows.append((kind, pp, v, m, "measured", "", "runs/%s.json" % name, "", 2.0, 0.5,
                         3.0, 1.5, anchors[kind]))
        tsv(self.out / "rows.tsv",
            ["kind", "pp", "v", "m", "status", "reason", "run_json", "diff_json", "seconds",
             "load", "cpu_s", "running_mean", "anchor_before"], rows)

    def tearDown(self):
        self.folder.cleanup()

    def table(self):
        completed = subprocess.run([sys.executable, str(SCRIPT), "table", str(self.out)],
                                   capture_output=True, text=True)
        self.assertEqual(completed.returncode, 0, completed.stderr)
        document = json.loads((self.out / "fidelity.json").read_text())
        return {row["kind"]: row for row in document["rows"]}, document["targets"], \
            completed.stdout

    def test_the_most_any_rank_waited_for_a_core_is_a_share_of_the_median_step(self):
        for kind, waits in (("GPipe", [1_000_000, 4_840_000]), ("DualPipeV", [0, 300_000])):
            path = self.out / "runs" / ("%s.pp2.v%d.m8.json" % (kind, 2 if kind == "DualPipeV"
                                                                 else 1))
            document = json.loads(path.read_text())
            document["step_time_ns"] = document["steps"]["median_ns"]
            for rank, wait in zip(document["ranks"], waits):
                rank["core_wait_ns"] = wait
            path.write_text(json.dumps(document))
        rows, _, printed = self.table()
        self.assertAlmostEqual(rows["GPipe"]["core_wait_pct"], 10.0)  # 4.84 of 48.4 ms
        self.assertAlmostEqual(rows["DualPipeV"]["core_wait_pct"], 1.0)  # 0.3 of 30 ms
        self.assertIsNone(rows["1F1B"]["core_wait_pct"])  # an older run: not measured
        self.assertIn("median step: 10.0 % at the median row, 10.0 % at the worst (2 rows)",
                      printed)

    def test_a_row_is_paired_with_the_geometric_mean_of_the_anchors_around_it(self):
        rows, _, _ = self.table()
        # 1F1B sits between anchors 1 and 2: sqrt(1.0 * 1.21) = 1.1; 50 ms * 1.1 = 55 ms.
        self.assertAlmostEqual(rows["1F1B"]["drift_factor"], 1.1, places=12)
        self.assertAlmostEqual(rows["1F1B"]["drift_paired_error_pct"], 0.0, places=9)
        self.assertAlmostEqual(rows["1F1B"]["error_pct"], -100 * 5 / 55, places=9)

    def test_a_failed_anchor_leaves_the_row_its_other_neighbour(self):
        rows, _, _ = self.table()
        # GPipe: anchors 2 (1.21) and 3 (failed): 40 ms * 1.21 = 48.4 ms, its measured step.
        self.assertAlmostEqual(rows["GPipe"]["drift_factor"], 1.21, places=12)
        self.assertAlmostEqual(rows["GPipe"]["drift_paired_error_pct"], 0.0, places=9)
        # ZBVZeroBubble: anchors 3 (failed) and 4 (1.1): 44 ms against 50 ms measured.
        self.assertAlmostEqual(rows["ZBVZeroBubble"]["drift_paired_error_pct"], -12.0,
                               places=9)

    def test_a_row_without_anchors_has_no_paired_error_and_keeps_its_plain_one(self):
        rows, targets, _ = self.table()
        self.assertIsNone(rows["DualPipeV"]["drift_factor"])
        self.assertIsNone(rows["DualPipeV"]["drift_paired_error_pct"])
        self.assertAlmostEqual(rows["DualPipeV"]["error_pct"], 0.0, places=9)
        self.assertEqual(targets["drift_paired_rows"], 3)
        self.assertEqual(targets["drift_paired_rows_within_5pct"], 2)
        self.assertAlmostEqual(targets["drift_paired_median_abs_error_pct"], 0.0, places=9)

    def test_the_printed_table_names_the_anchors_in_order(self):
        _, _, printed = self.table()
        self.assertIn("drift-paired: 2 rows within 5 % of 3, median |error| 0.0 %", printed)
        self.assertIn("3 measured, measured / predicted from 1.000 to 1.210, median 1.100,"
                      " in order: 1.00 1.21 1.10", printed)

    def test_a_row_of_several_runs_pools_their_steps_peaks_and_anchors(self):
        # GPipe measured in two rounds: 3 steps, then 4; its anchors 2 (1.21) and 4 (1.1, with
        # 5 not measured): factors 1.21 (2 and 3 failed) and 1.1, geometric mean sqrt(1.331).
        runs = []
        for round_number, times, peaks in ((1, [40, 50, 60], (1000, 2500)),
                                           (2, [45, 55, 65, 70], (3000, 2000))):
            document = run_json(sorted(times)[len(times) // 2] * 1_000_000, peaks)
            document["steps"]["times_ns"] = [t * 1_000_000 for t in times]
            name = "runs/GPipe.pp2.v1.m8.r%d.json" % round_number
            (self.out / name).write_text(json.dumps(document))
            runs.append(name)
        lines = (self.out / "rows.tsv").read_text().splitlines()
        lines = [line if not line.startswith("GPipe\t") else "\t".join(
            ["GPipe", "2", "1", "8", "measured", "", ",".join(runs), "", "4.0", "0.5", "6.0",
             "1.5", "2,4"]) for line in lines]
        (self.out / "rows.tsv").write_text("\n".join(lines) + "\n")
        tsv(self.out / "meta.tsv", ["key", "value"],
            [("calibration_pp", 2), ("calibration_m", 8), ("rounds", 2)])
        rows, _, printed = self.table()
        gpipe = rows["GPipe"]
        self.assertEqual(gpipe["runs"], 2)
        self.assertEqual(gpipe["steps"], 7)
        # 40 45 50 55 60 65 70 ms: the median the 4th, p10 the 1st, p90 the 7th (nearest rank).
        self.assertEqual(gpipe["measured_ns"], {"median": 55_000_000, "min": 40_000_000,
                                                "p10": 40_000_000, "p90": 70_000_000,
                                                "max": 70_000_000})
        self.assertEqual(gpipe["peak_measured_bytes"], [3000, 2500])
        self.assertEqual(gpipe["peak_error_pct"], [100 * (2000 - 3000) / 3000, -20.0])
        self.assertAlmostEqual(gpipe["drift_factor"], 1.331 ** 0.5, places=12)
        self.assertAlmostEqual(gpipe["error_pct"], 100 * (40 - 55) / 55, places=9)
        self.assertIn("each row measured in 2 rounds", printed)
        # The runs' own medians (upper middles), 50 and 65 ms: the second 30 % slower.
        self.assertEqual(gpipe["run_medians_ns"], [50_000_000, 65_000_000])
        self.assertIn("run to run: the slowest of a row's runs over its fastest (medians),"
                      " +30.0 % at the median row, +30.0 % at the most (1 rows)", printed)
        # The other three rows kept one run each, and the table says so.
        self.assertIn("3 row(s) in fewer runs: 1F1B pp=2 m=8 (1), ZBVZeroBubble pp=2 m=8 (1),"
                      " DualPipeV pp=2 m=8 (1)", printed)

    def test_an_older_folder_without_anchors_still_makes_its_table(self):
        (self.out / "anchors.tsv").unlink()
        rows, targets, printed = self.table()
        self.assertIsNone(rows["1F1B"]["drift_paired_error_pct"])
        self.assertEqual(targets["drift_paired_rows"], 0)
        self.assertNotIn("drift-paired", printed)


class Prediction(unittest.TestCase):
    """`prediction SIM_JSON`: a simulation with [jitter] is predicted by its draws' median, one
    without by its step; each rank's peak follows."""

    def predicted(self, simulated):
        with tempfile.TemporaryDirectory() as folder:
            path = pathlib.Path(folder) / "sim.json"
            path.write_text(json.dumps(simulated))
            return subprocess.run([sys.executable, str(SCRIPT), "prediction", str(path)],
                                  capture_output=True, text=True, check=True).stdout

    def test_the_draws_median_where_there_are_draws(self):
        ranks = [{"peak_memory_bytes": 10}, {"peak_memory_bytes": 20}]
        self.assertEqual(self.predicted({"step_time_ns": 100, "ranks": ranks}), "100\t10,20\n")
        self.assertEqual(self.predicted({"step_time_ns": 100, "predicted_step_time_ns": 107,
                                         "jitter": {"draws": 1000}, "ranks": ranks}),
                         "107\t10,20\n")


if __name__ == "__main__":
    unittest.main()
