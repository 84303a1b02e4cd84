"""Tests of scripts/device/collect_figures.py on a small fake check.sh output folder (a checks
table, two `pipelens run --json` objects and PyTorch's side_by_side.json), with exact expected
figures. Run by ctest as device.collect_figures: python3 tests/device/test_collect_figures.py
"""
import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "scripts" / "device" / "collect_figures.py"
sys.path.insert(0, str(SCRIPT.parent))

import collect_figures  # noqa: E402


def pipelens_run(loss, step_time_ns, median_ns=None, dtype=None):
    run = {"completed": True, "device": "cuda:0", "loss": loss, "step_time_ns": step_time_ns,
           "bubble_ratio": 0.25, "errors": [],
           "reference": {"checked": True, "loss": loss, "outputs_match": True,
                         "gradients_match": True, "gradient_max_error": 0.0}}
    if median_ns is not None:
        run["steps"] = {"recorded": 20, "warmup": 5, "median_ns": median_ns,
                        "min_ns": median_ns - 100, "max_ns": median_ns + 900}
    if dtype is not None:
        run["dtype"] = dtype
    return run


PYTORCH = {
    "torch": "2.11.0", "device": "cuda:0", "whole_model_loss": 2.5,
    "schedules": {
        "ScheduleInterleaved1F1B": {
            "loss": 2.5, "step_time_s_median": 0.004,
            "empty_model": {"compute_actions": 16, "step_time_s_median": 0.0032,
                            "step_time_s_per_action": 0.0002},
            "bfloat16": {"loss": 2.52, "step_time_s_median": 0.003}},
        "ScheduleLoopedBFS": {"loss": 2.5, "step_time_s_median": 0.005},
    },
}


class CollectFigures(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.out = pathlib.Path(self.folder.name)
        (self.out / "runs").mkdir()
        (self.out / "pytorch").mkdir()
        (self.out / "pytorch" / "side_by_side.json").write_text(json.dumps(PYTORCH))
        runs = {
            "sbs.cuda.mlp.Interleaved1F1B": pipelens_run(2.5, 3_000_000, 2_000_000),
            # bfloat16: its own loss and reference, which the weights check must not read.
            "sbs.cuda.mlp.Interleaved1F1B.bfloat16": pipelens_run(2.51, 2_000_000, 1_500_000,
                                                                  "bfloat16"),
            "sbs.cuda.empty.Interleaved1F1B": pipelens_run(1.0, 2_000_000, 1_600_000),
            # An older build's run: one step, no `steps` object.
            "sbs.cuda.mlp.LoopedBFS": pipelens_run(2.5, 4_000_000),
        }
        lines = []
        for name, run in runs.items():
            (self.out / "runs" / (name + ".json")).write_text(json.dumps(run))
            lines.append("\t".join([name, "pass", "1.5", "", "logs/%s.log" % name,
                                    "runs/%s.json" % name]))
        (self.out / "checks.tsv").write_text("\n".join(lines) + "\n")

    def tearDown(self):
        self.folder.cleanup()

    def collect(self):
        completed = subprocess.run(
            [sys.executable, str(SCRIPT), str(self.out), str(self.out / "checks.tsv"),
             str(self.out / "no-build.env"), "no GPU", "12"],
            capture_output=True, text=True)
        self.assertEqual(completed.returncode, 0, completed.stderr)
        self.assertEqual(completed.stdout.splitlines()[0],
                         "check.sh: 4 passed, 0 failed, 0 skipped in 12 s; figures: %s"
                         % (self.out / "figures.json"))
        return json.loads((self.out / "figures.json").read_text())

    def test_run_figures_carry_the_median_and_extremes_of_the_recorded_steps(self):
        figures = collect_figures.run_figures(pipelens_run(2.5, 3_000_000, 2_000_000, "float32"))
        self.assertEqual(figures["step_time_ns"], 3_000_000)
        self.assertEqual(figures["step_time_median_ns"], 2_000_000)
        self.assertEqual(figures["step_time_min_ns"], 1_999_900)
        self.assertEqual(figures["step_time_max_ns"], 2_000_900)
        self.assertEqual(figures["steps_recorded"], 20)
        self.assertEqual(figures["steps_warmup"], 5)
        self.assertEqual(figures["dtype"], "float32")
        older = collect_figures.run_figures(pipelens_run(2.5, 4_000_000))
        self.assertIsNone(older["step_time_median_ns"])
        self.assertIsNone(older["dtype"])

    def test_the_ratio_comes_from_both_medians_where_pipelens_gives_one(self):
        rows = self.collect()["side_by_side"]["schedules"]
        row = rows["Interleaved1F1B"]
        # 2 ms median over PyTorch's 4 ms median, not the 3 ms of the last step.
        self.assertAlmostEqual(row["step_time_ratio_pipelens_over_pytorch"], 0.5, places=12)
        self.assertEqual(row["step_time_ratio_basis"], "pipelens median / PyTorch median")
        self.assertEqual(row["loss_difference"], 0.0)
        self.assertTrue(row["loss_matches"])
        older = rows["LoopedBFS"]
        self.assertAlmostEqual(older["step_time_ratio_pipelens_over_pytorch"], 0.8, places=12)
        self.assertEqual(older["step_time_ratio_basis"], "pipelens one step / PyTorch median")

    def test_per_action_overhead_of_the_empty_model_on_both_sides(self):
        row = self.collect()["side_by_side"]["schedules"]["Interleaved1F1B"]
        self.assertEqual(row["compute_actions"], 16)
        # 1.6 ms median over PyTorch's 16 compute actions; PyTorch's own 0.2 ms per action.
        self.assertAlmostEqual(row["pipelens_per_action_ns"], 100_000.0, places=6)
        self.assertAlmostEqual(row["pytorch_per_action_ns"], 200_000.0, places=6)
        # No empty-model figures on either side: no per-action figures.
        looped = self.collect()["side_by_side"]["schedules"]["LoopedBFS"]
        self.assertNotIn("pipelens_per_action_ns", looped)
        self.assertNotIn("pytorch_per_action_ns", looped)


    def test_bfloat16_rows_compare_bfloat16_runs_with_bfloat16_tolerance(self):
        side = self.collect()["side_by_side"]
        row = side["schedules"]["Interleaved1F1B"]["bfloat16"]
        self.assertEqual(row["pipelens_mlp"]["dtype"], "bfloat16")
        self.assertEqual(row["pytorch"]["loss"], 2.52)
        self.assertAlmostEqual(row["loss_difference"], 0.01, places=12)
        # 0.01 is within 1e-3 + 1.6e-2 * 2.51, far outside float32's 1e-5 + 1e-4 * 2.51.
        self.assertTrue(row["loss_matches"])
        self.assertAlmostEqual(row["step_time_ratio_pipelens_over_pytorch"], 0.5, places=12)
        self.assertEqual(collect_figures.compare_schedule(
            {"loss": 2.52}, {"loss": 2.5})["loss_matches"], False)
        # The float32 row reads the float32 run, and the weights check only float32 references.
        self.assertEqual(side["schedules"]["Interleaved1F1B"]["pipelens_mlp"]["step_time_ns"],
                         3_000_000)
        self.assertEqual(side["pipelens_reference_loss"], 2.5)
        self.assertTrue(side["weights_match_pipelens"])
        self.assertNotIn("bfloat16", side["schedules"]["LoopedBFS"])


if __name__ == "__main__":
    unittest.main()
