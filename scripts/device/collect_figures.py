#!/usr/bin/env python3
"""Gathers check.sh's results into OUT_DIR/figures.json and prints the summary.

Runs wherever check.sh runs (its last step), with python3's standard library only.
Usage: collect_figures.py OUT_DIR CHECKS_TSV BUILD_ENV CUDA_REASON ELAPSED_S

Reads CHECKS_TSV (one line per check: name, status, seconds, reason, log, json, tab-separated,
paths relative to OUT_DIR), each run's `pipelens run --json` output, the test logs' gtest
counts, BUILD_ENV (build.sh's device-build.env) and pytorch/side_by_side.json. Writes
figures.json: every check with its status, reason, seconds and figures; a summary of counts;
and the PyTorch side-by-side next to pipelens' runs of the same shape. The exit status is 1
when any check failed, else 0: check.sh's own.
"""

import json
import os
import re
import socket
import subprocess
import sys

# pipelens' schedule names for PyTorch's classes.
PYTORCH_TO_PIPELENS = {
    "ScheduleInterleaved1F1B": "Interleaved1F1B",
    "ScheduleLoopedBFS": "LoopedBFS",
    "ScheduleInterleavedZeroBubble": "InterleavedZeroBubble",
    "ScheduleZBVZeroBubble": "ZBVZeroBubble",
    "ScheduleDualPipeV": "DualPipeV",
}

# pipelens' reference tolerances (rtol, atol) per `--dtype`; the one definition is
# engine/run_record/run_dtype.cpp, this is its copy for a script without pipelens. Two sides'
# losses from the same weights and batch are held to them as each side's gradients are.
TOLERANCES = {"float32": (1e-4, 1e-5), "bfloat16": (1.6e-2, 1e-3)}


def read_checks(path):
    checks = []
    with open(path) as handle:
        for line in handle:
            fields = line.rstrip("\n").split("\t")
            name, status, seconds, reason, log, json_path = (fields + [""] * 6)[:6]
            checks.append({"name": name, "status": status, "seconds": float(seconds or 0),
                           "reason": reason or None, "log": log or None,
                           "json": json_path or None})
    return checks


def read_env(path):
    values = {}
    if not os.path.exists(path):
        return values
    with open(path) as handle:
        for line in handle:
            match = re.match(r"^(\w+)='(.*)'$", line.strip())
            if match:
                values[match.group(1)] = match.group(2)
    return values


def load_json(path):
    try:
        with open(path) as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def run_figures(run):
    """The figures of one `pipelens run --json` object worth comparing across machines.
    step_time_ns is the last recorded step's; with --steps N the median and the extremes of the
    N recorded steps come from its `steps` object (absent from older builds: None)."""
    reference = run.get("reference") or {}
    steps = run.get("steps") or {}
    return {"completed": run.get("completed"), "device": run.get("device"),
            "dtype": run.get("dtype"),
            "loss": run.get("loss"), "step_time_ns": run.get("step_time_ns"),
            "step_time_median_ns": steps.get("median_ns"),
            "step_time_min_ns": steps.get("min_ns"),
            "step_time_max_ns": steps.get("max_ns"),
            "steps_recorded": steps.get("recorded"), "steps_warmup": steps.get("warmup"),
            "bubble_ratio": run.get("bubble_ratio"),
            "reference_checked": reference.get("checked"),
            "reference_loss": reference.get("loss"),
            "outputs_match": reference.get("outputs_match"),
            "gradients_match": reference.get("gradients_match"),
            "gradient_max_error": reference.get("gradient_max_error"),
            "errors": run.get("errors")}


def benchmark_figures(report):
    """Google Benchmark's JSON (aggregates only): each benchmark's median counters."""
    rows = {}
    for entry in report.get("benchmarks", []):
        if entry.get("aggregate_name") != "median":
            continue
        counters = {key: entry[key] for key in ("B_ms", "I_ms", "W_ms", "IW_over_B", "W_over_B",
                                                "per_action_s")
                    if key in entry}
        rows[entry.get("run_name", entry.get("name"))] = dict(counters, label=entry.get("label"))
    return rows


def step_time_s(figures):
    """A pipelens run's step time in seconds: the median of its recorded steps where the run
    reports one, else its one step's time; and which of the two it is."""
    if figures.get("step_time_median_ns"):
        return figures["step_time_median_ns"] / 1e9, "median"
    if figures.get("step_time_ns"):
        return figures["step_time_ns"] / 1e9, "one step"
    return None, None


def gtest_figures(log_path):
    """gtest's closing counts ([  PASSED  ] N tests, ...) from a test binary's log, summed
    over its shards."""
    counts = {}
    try:
        with open(log_path, errors="replace") as handle:
            text = handle.read()
    except OSError:
        return counts
    # One closing block per gtest shard: the counts add up.
    for word in ("PASSED", "FAILED", "SKIPPED"):
        found = re.findall(r"\[\s+%s\s+\]\s+(\d+) tests?" % word, text)
        if found:
            counts[word.lower()] = sum(int(count) for count in found)
    return counts


def per_action_figures(pytorch_empty, pipelens_empty):
    """The schedule runtimes' own overhead per compute action on the `empty` model: PyTorch's
    from its own count of rank 0's compute actions, pipelens' from its step time over the same
    count (the same schedule, stages and microbatches run the same computations)."""
    row = {}
    actions = (pytorch_empty or {}).get("compute_actions")
    if (pytorch_empty or {}).get("step_time_s_per_action") is not None:
        row["pytorch_per_action_ns"] = pytorch_empty["step_time_s_per_action"] * 1e9
    seconds, _ = step_time_s(pipelens_empty or {})
    if actions and seconds is not None:
        row["compute_actions"] = actions
        row["pipelens_per_action_ns"] = seconds * 1e9 / actions
    return row


def compare_schedule(entry, pipelens, dtype="float32"):
    """PyTorch's entry for one schedule against pipelens' run of it: the loss difference and
    the step-time ratio, from both sides' medians when pipelens gives one."""
    row = {}
    if entry.get("loss") is not None and pipelens.get("loss") is not None:
        difference = abs(entry["loss"] - pipelens["loss"])
        row["loss_difference"] = difference
        # Same weights and batch give the same loss up to summation order.
        rtol, atol = TOLERANCES[dtype]
        row["loss_matches"] = difference <= atol + rtol * abs(pipelens["loss"])
    seconds, basis = step_time_s(pipelens)
    if entry.get("step_time_s_median") and seconds is not None:
        row["step_time_ratio_pipelens_over_pytorch"] = seconds / entry["step_time_s_median"]
        row["step_time_ratio_basis"] = "pipelens %s / PyTorch median" % basis
    return row


def side_by_side(out_dir, checks):
    """PyTorch's schedules next to pipelens' runs of the same shape (one rank, v=2, m=4)."""
    pytorch = load_json(os.path.join(out_dir, "pytorch", "side_by_side.json"))
    if pytorch is None:
        return None
    # sbs.DEVICE.MODEL.SCHEDULE in float32, sbs.DEVICE.MODEL.SCHEDULE.DTYPE in another dtype.
    runs = {}
    for check in checks:
        parts = check["name"].split(".")
        if parts[0] == "sbs" and len(parts) in (4, 5):
            dtype = parts[4] if len(parts) == 5 else "float32"
            runs[(parts[2], parts[3], dtype)] = check.get("figures") or {}
    rows = {}
    for class_name, entry in (pytorch.get("schedules") or {}).items():
        schedule = PYTORCH_TO_PIPELENS.get(class_name, class_name)
        row = {"pytorch": entry,
               "pipelens_mlp": runs.get(("mlp", schedule, "float32")),
               "pipelens_empty": runs.get(("empty", schedule, "float32"))}
        row.update(compare_schedule(entry, row["pipelens_mlp"] or {}))
        row.update(per_action_figures(entry.get("empty_model"), row["pipelens_empty"]))
        bfloat16 = {"pytorch": entry.get("bfloat16"),
                    "pipelens_mlp": runs.get(("mlp", schedule, "bfloat16"))}
        if bfloat16["pytorch"] is not None or bfloat16["pipelens_mlp"] is not None:
            bfloat16.update(compare_schedule(bfloat16["pytorch"] or {},
                                             bfloat16["pipelens_mlp"] or {}, "bfloat16"))
            row["bfloat16"] = bfloat16
        rows[schedule] = row
    summary = {"torch": pytorch.get("torch"), "device": pytorch.get("device"),
               "whole_model_loss": pytorch.get("whole_model_loss"),
               "whole_model_loss_bfloat16": pytorch.get("whole_model_loss_bfloat16"),
               "skipped": pytorch.get("skipped"), "schedules": rows}
    # The Python model rebuilt from pipelens' recipe against pipelens' own single-rank
    # reference: equal losses mean the two sides hold the same weights and batch.
    references = [figures.get("reference_loss") for (model, _, dtype), figures in runs.items()
                  if model == "mlp" and dtype == "float32"
                  and figures.get("reference_loss") is not None]
    whole = pytorch.get("whole_model_loss")
    if references and whole is not None:
        summary["pipelens_reference_loss"] = references[0]
        summary["weights_match_pipelens"] = all(
            abs(whole - reference) <= 1e-5 + 1e-4 * abs(reference) for reference in references)
    return summary


def gpu_name():
    try:
        output = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                                 "--format=csv,noheader"], capture_output=True, text=True,
                                timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return output.stdout.strip() or None if output.returncode == 0 else None


def main():
    if len(sys.argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir, checks_path, env_path, cuda_reason, elapsed = sys.argv[1:]
    checks = read_checks(checks_path)
    for check in checks:
        if check["json"]:
            run = load_json(os.path.join(out_dir, check["json"]))
            if not isinstance(run, dict):
                check["figures"] = None
            elif check["name"].endswith(("_overlap", ".peak", ".breakdown")):
                # rank_overlap.py's, peak_memory_check.py's or profile_breakdown.py's own
                check["figures"] = run
            elif check["name"].endswith(".calibrate"):
                check["figures"] = {key: run.get(key) for key in (
                    "measured_step_time_ns", "simulated_step_time_ns", "relative_error",
                    "from_profile", "peak_memory_bytes", "link_fit_note")}
            elif check["name"].startswith("bench."):
                check["figures"] = benchmark_figures(run)
            else:
                check["figures"] = run_figures(run)
        elif check["name"].startswith("tests.") and check["log"]:
            check["figures"] = gtest_figures(os.path.join(out_dir, check["log"]))
    summary = {status: sum(1 for check in checks if check["status"] == status)
               for status in ("pass", "fail", "skipped")}
    figures = {
        "host": {"name": socket.gethostname(), "cores": os.cpu_count(), "gpu": gpu_name()},
        "build": read_env(env_path),
        "cuda": {"available": not cuda_reason, "reason": cuda_reason or None},
        "elapsed_s": float(elapsed),
        "summary": summary,
        "checks": checks,
        "side_by_side": side_by_side(out_dir, checks),
    }
    with open(os.path.join(out_dir, "figures.json"), "w") as handle:
        json.dump(figures, handle, indent=1)
    print("check.sh: %d passed, %d failed, %d skipped in %s s; figures: %s" % (
        summary["pass"], summary["fail"], summary["skipped"], elapsed,
        os.path.join(out_dir, "figures.json")))
    for check in checks:
        if check["status"] == "fail":
            print("check.sh: FAILED %s: %s" % (check["name"], check["reason"]))
    return 1 if summary["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
