#!/usr/bin/env python3
"""The JSON reading and the table of scripts/device/fidelity.sh (python3 is on every machine the
device scripts run on; jq is not).

  fidelity_table.py prediction SIM_JSON   prints "STEP_NS<TAB>PEAK,PEAK,..." of `simulate --json`
                                           (STEP_NS: its predicted step, the median of the
                                           [jitter] draws where the experiment has them)
  fidelity_table.py run_id RUN_JSON        prints the run id of `run --json` (empty when none)
  fidelity_table.py median_step RUN_JSON   prints the median step (ns) of `run --json`
  fidelity_table.py table OUT_DIR          writes OUT_DIR/fidelity.tsv and fidelity.json from
                                           predictions.tsv, rows.tsv, meta.tsv and the runs' and
                                           diffs' JSON; prints the table and the targets

Invariants: a row is "measured" only when its run completed and its JSON read back; every other
row keeps its status (skipped, failed, refused) and reason, so the table always lists every
configuration that was predicted. Errors are (predicted - measured) / measured, as in
scripts/bench_fidelity.sh. Medians of an even count are the upper middle, as everywhere in
pipelens (engine/run_record/statistics.hpp). The drift-paired error scales a row's prediction by
the machine's speed in the row's own minutes: the geometric mean of measured / predicted over
the anchors (runs of the calibrated configuration) just before and just after it, whichever
were measured; a row with neither has none. The prediction itself is never changed: it was
written before any row ran.

A row measured in several rounds (FIDELITY_ROUNDS) lists its runs' JSON in rows.tsv's run_json
and its anchors in anchor_before, both comma-separated: its steps are pooled (the median and the
spread over every run's steps, by nearest rank as `run` reports one run's), each rank's peak is
its largest over the runs, its drift factor the geometric mean of its runs', and its diff is one
`pipelens diff --real-run A,B,...` over all of them.
"""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from collect_figures import load_json  # noqa: E402  (one reader of the runs' JSON)

TARGET_ROW = 5.0  # every row's step within 5 %
TARGET_MEDIAN = 2.0  # the median row's within 2 %
TARGET_MEMORY = 10.0  # every rank's peak memory within 10 %


def upper_median(values):
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else None


def nearest_rank(ordered, pct):
    """engine/run_record/repeated_timing's percentile: of 10 samples the 1st and 9th smallest."""
    rank = max(1, (pct * len(ordered) + 99) // 100)
    return ordered[min(rank, len(ordered)) - 1]


def geometric_mean(values):
    product = 1.0
    for value in values:
        product *= value
    return product ** (1.0 / len(values)) if values else None


def pooled_steps(runs):
    """{median, min, p10, p90, max, recorded} over the runs' steps: one run's own figures, or
    those of every run's step times (run --json's steps.times_ns) taken together."""
    if len(runs) == 1:
        steps = runs[0]["steps"]
        figures = {k: steps[k + "_ns"] for k in ("median", "min", "p10", "p90", "max")}
        figures["recorded"] = steps.get("recorded")
        return figures
    times = sorted(t for run in runs for t in run["steps"].get("times_ns", []))
    if not times:
        return None
    return {"median": upper_median(times), "min": times[0], "p10": nearest_rank(times, 10),
            "p90": nearest_rank(times, 90), "max": times[-1], "recorded": len(times)}


def percent(predicted, measured):
    if predicted is None or not measured:
        return None
    return 100.0 * (predicted - measured) / measured


def read_tsv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def prediction(path):
    data = load_json(path)
    if not data or "step_time_ns" not in data:
        sys.exit(1)
    peaks = [str(rank.get("peak_memory_bytes", 0)) for rank in data.get("ranks", [])]
    # With [jitter] the median of the drawn steps: a measured median is compared with a median.
    step = data.get("predicted_step_time_ns", data["step_time_ns"])
    print("%d\t%s" % (step, ",".join(peaks)))


def run_id(path):
    data = load_json(path) or {}
    value = data.get("run_id")
    print("" if value is None else value)


def median_step(path):
    data = load_json(path) or {}
    value = (data.get("steps") or {}).get("median_ns") if data.get("completed") else None
    print("" if value is None else value)


def anchor_speeds(out_dir):
    """{anchor index: its measured / predicted step} over anchors.tsv (index 0 the prediction)."""
    rows = read_tsv(os.path.join(out_dir, "anchors.tsv"))
    predicted = [int(r["step_ns"]) for r in rows if r["index"] == "0" and r["step_ns"]]
    if not predicted or predicted[0] <= 0:
        return {}
    return {int(r["index"]): int(r["step_ns"]) / predicted[0] for r in rows
            if r["index"] != "0" and r["status"] == "measured" and r["step_ns"]}


def drift_factor(speeds, anchor_before):
    """The geometric mean of the anchors' speeds on either side of a row's run; None when
    neither was measured, or when the row ran without anchors (anchor_before 0 or absent). A row
    of several runs (anchor_before "3,40,77"): the geometric mean of its runs' factors."""
    factors = []
    for text in str(anchor_before or "").split(","):
        try:
            before = int(text)
        except ValueError:
            continue
        around = [speeds[i] for i in (before, before + 1) if i in speeds] if before >= 1 else []
        if around:
            factors.append(geometric_mean(around))
    return geometric_mean(factors)


def at_rank_speed_error(diff):
    """Median over the steps of (prediction at each rank's speed - measured) / measured."""
    errors = []
    for step in diff.get("steps", []):
        measured = step.get("step_time", {}).get("measured_ns")
        at_speed = step.get("at_rank_speed_ns")
        if measured and at_speed is not None:
            errors.append(percent(at_speed, measured))
    return upper_median(errors)


def split_percent(diff, measured):
    split = diff.get("over_steps", {}).get("mean_split", {})
    return {part: 100.0 * split[part + "_ns"] / measured if measured else None
            for part in ("speed", "kinds", "communication", "ordering") if part + "_ns" in split}


def measured_row(row, predicted_ns, predicted_peaks, out_dir, speeds):
    paths = [path for path in (row["run_json"] or "").split(",") if path]
    runs = [load_json(os.path.join(out_dir, path)) for path in paths]
    runs = [run for run in runs if run and run.get("completed") and "steps" in run]
    steps = pooled_steps(runs) if runs else None
    if not steps:
        return {"status": "failed", "reason": row["reason"] or "the run's JSON did not read back"}
    measured = steps["median"]
    peaks = [max(values) for values in
             zip(*[[rank.get("peak_memory_bytes", 0) for rank in run.get("ranks", [])]
                   for run in runs])]
    peak_errors = [percent(p, m) for p, m in zip(predicted_peaks, peaks) if m]
    diff = load_json(os.path.join(out_dir, row["diff_json"])) if row["diff_json"] else None
    drift = drift_factor(speeds, row.get("anchor_before"))
    result = {
        "status": "measured", "reason": row["reason"],
        "measured_ns": {k: steps[k] for k in ("median", "min", "p10", "p90", "max")},
        "steps": steps.get("recorded"), "runs": len(runs),
        "run_medians_ns": [run["steps"]["median_ns"] for run in runs],
        "error_pct": percent(predicted_ns, measured),
        "peak_measured_bytes": peaks, "peak_error_pct": peak_errors,
        "at_rank_speed_error_pct": at_rank_speed_error(diff) if diff else None,
        "drift_factor": drift,
        "drift_paired_error_pct": percent(predicted_ns * drift, measured)
        if drift is not None and predicted_ns is not None else None,
        "split_pct_of_measured": split_percent(diff, measured) if diff else {},
        "kinds": diff.get("kinds", []) if diff else [],
        "rank_speed": [r.get("speed") for r in diff["steps"][0]["ranks"]]
        if diff and diff.get("steps") else [],
        "seconds": float(row["seconds"] or 0), "load": row["load"],
        "cpu_s": number_or_none(row.get("cpu_s")),
        "running_mean": number_or_none(row.get("running_mean")),
        "core_wait_pct": worst_core_wait_pct(runs),
    }
    return result


def core_wait_pct(run):
    """The most any rank waited for a core in the run's median step, in % of that step (the
    run's per-rank core_wait_ns); None where no rank measured it (an older pipelens, a kernel
    without schedstat)."""
    step = run.get("step_time_ns")
    waits = [r["core_wait_ns"] for r in run.get("ranks", []) if r.get("core_wait_ns") is not None]
    if not waits or not step:
        return None
    return 100.0 * max(waits) / step


def worst_core_wait_pct(runs):
    """core_wait_pct's largest over a row's runs; None where no run measured it."""
    waits = [wait for wait in (core_wait_pct(run) for run in runs) if wait is not None]
    return max(waits) if waits else None


def number_or_none(text):
    """A rows.tsv number; None where the column is empty or absent (an older rows.tsv)."""
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def sharing_line(rows):
    """What else ran while the rows' commands did, start-up included (each rank process loads
    LibTorch and builds its model then, with threads of its own): a high figure here does not by
    itself say the steps shared their cores; scripts/device/quick_probe.sh samples a rank's
    threads mid-run for that."""
    measured = [r for r in rows if r.get("status") == "measured" and r.get("seconds")
                and r.get("running_mean") is not None and r.get("cpu_s") is not None]
    if not measured:
        return None
    over = [r for r in measured if r["running_mean"] > r["pp"] + 1]
    worst = max(measured, key=lambda r: r["running_mean"] - r["pp"])
    cores_used = sorted(r["cpu_s"] / r["seconds"] for r in measured)
    return ("while the rows' commands ran, start-up included: %d of %d rows had more threads"
            " running than their pp ranks + 1"
            " (most: %s pp=%d m=%d, %.1f running on average); a row's run used %.1f to %.1f"
            " cores (CPU s / wall, start-up included)" % (
                len(over), len(measured), worst["kind"], worst["pp"], worst["m"],
                worst["running_mean"], cores_used[0], cores_used[-1]))


def fmt(value, pattern="%+.1f"):
    return "-" if value is None else pattern % value


def worst(values):
    return max(values, key=abs) if values else None


def build_rows(out_dir, meta):
    rows = []
    speeds = anchor_speeds(out_dir)
    measured_by_key = {(r["kind"], r["pp"], r["v"], r["m"]): r
                       for r in read_tsv(os.path.join(out_dir, "rows.tsv"))}
    for p in read_tsv(os.path.join(out_dir, "predictions.tsv")):
        key = (p["kind"], p["pp"], p["v"], p["m"])
        predicted_ns = int(p["predicted_step_ns"]) if p["predicted_step_ns"] else None
        predicted_peaks = [int(x) for x in p["predicted_peak_bytes"].split(",") if x]
        row = {"kind": p["kind"], "pp": int(p["pp"]), "v": int(p["v"]), "m": int(p["m"]),
               "in_sample": (p["kind"] == "1F1B" and p["pp"] == meta.get("calibration_pp")
                             and p["m"] == meta.get("calibration_m")),
               "predicted_ns": predicted_ns, "peak_predicted_bytes": predicted_peaks}
        if p["status"] != "predicted":
            row.update(status=p["status"], reason=p["reason"])
        elif key not in measured_by_key:
            row.update(status="skipped", reason="not measured")
        else:
            measured = measured_by_key[key]
            if measured["status"] != "measured":
                row.update(status=measured["status"], reason=measured["reason"])
            else:
                row.update(measured_row(measured, predicted_ns, predicted_peaks, out_dir,
                                        speeds))
        rows.append(row)
    return rows


def targets(rows):
    measured = [r for r in rows if r["status"] == "measured"]
    errors = [abs(r["error_pct"]) for r in measured]
    at_speed = [abs(r["at_rank_speed_error_pct"]) for r in measured
                if r["at_rank_speed_error_pct"] is not None]
    memory_ok = [all(abs(e) <= TARGET_MEMORY for e in r["peak_error_pct"]) and
                 bool(r["peak_error_pct"]) for r in measured]
    time_ok = [e <= TARGET_ROW for e in errors]
    paired = [abs(r["drift_paired_error_pct"]) for r in measured
              if r.get("drift_paired_error_pct") is not None]
    return {
        "rows": len(rows), "measured": len(measured),
        "rows_within_5pct": sum(time_ok),
        "every_row_within_5pct": bool(measured) and all(time_ok),
        "median_row_abs_error_pct": upper_median(errors),
        "median_row_within_2pct": bool(errors) and upper_median(errors) <= TARGET_MEDIAN,
        "rows_memory_within_10pct": sum(memory_ok),
        "every_rank_memory_within_10pct": bool(measured) and all(memory_ok),
        "rows_passing_time_and_memory": sum(t and m for t, m in zip(time_ok, memory_ok)),
        "at_rank_speed_rows_within_5pct": sum(e <= TARGET_ROW for e in at_speed),
        "at_rank_speed_median_abs_error_pct": upper_median(at_speed),
        "drift_paired_rows": len(paired),
        "drift_paired_rows_within_5pct": sum(e <= TARGET_ROW for e in paired),
        "drift_paired_median_abs_error_pct": upper_median(paired),
    }


TSV_COLUMNS = ["kind", "pp", "v", "m", "in_sample", "status", "predicted_ms",
               "measured_median_ms", "min_ms", "p10_ms", "p90_ms", "max_ms", "error_pct",
               "at_rank_speed_error_pct", "drift_factor", "drift_paired_error_pct", "split_speed_pct", "split_kinds_pct",
               "split_communication_pct", "split_ordering_pct", "peak_predicted_kib",
               "peak_measured_kib", "peak_error_pct", "reason"]


def tsv_line(row):
    ms = lambda ns: "" if ns is None else "%.3f" % (ns / 1e6)
    kib = lambda values: ",".join("%.0f" % (b / 1024) for b in values)
    measured = row.get("measured_ns", {})
    split = row.get("split_pct_of_measured", {})
    num = lambda value: "" if value is None else "%.2f" % value
    cells = [row["kind"], row["pp"], row["v"], row["m"], int(row["in_sample"]), row["status"],
             ms(row["predicted_ns"]), ms(measured.get("median")), ms(measured.get("min")),
             ms(measured.get("p10")), ms(measured.get("p90")), ms(measured.get("max")),
             num(row.get("error_pct")), num(row.get("at_rank_speed_error_pct")),
             "" if row.get("drift_factor") is None else "%.4f" % row["drift_factor"],
             num(row.get("drift_paired_error_pct")),
             num(split.get("speed")), num(split.get("kinds")), num(split.get("communication")),
             num(split.get("ordering")), kib(row["peak_predicted_bytes"]),
             kib(row.get("peak_measured_bytes", [])),
             ",".join("%.1f" % e for e in row.get("peak_error_pct", [])),
             (row.get("reason") or "").replace("\t", " ").replace("\n", " ")]
    return "\t".join(str(cell) for cell in cells)


def anchor_line(out_dir):
    """How far the machine's speed moved over the table: the anchors' measured / predicted."""
    speeds = anchor_speeds(out_dir)
    if not speeds:
        return None
    ordered = [speeds[i] for i in sorted(speeds)]
    return ("anchors (1F1B at the calibrated pp and m, between the rows): %d measured,"
            " measured / predicted from %.3f to %.3f, median %.3f, in order: %s" % (
                len(ordered), min(ordered), max(ordered), upper_median(ordered),
                " ".join("%.2f" % x for x in ordered)))


def print_table(rows, summary, meta, out_dir):
    print("\nfidelity where cores are not shared: transport %s, %s cores, %s intra-op thread(s)"
          " per rank, device %s; calibrated on 1F1B pp=%s m=%s (%s runs)" % (
              meta.get("transport"), meta.get("cores"), meta.get("threads"),
              meta.get("device"), meta.get("calibration_pp"), meta.get("calibration_m"),
              meta.get("calibration_runs")))
    if meta.get("transport_note"):
        print("note: " + meta["transport_note"])
    rounds = int(meta.get("rounds") or 1)
    if rounds > 1:
        measured = [r for r in rows if r["status"] == "measured"]
        fewer = [r for r in measured if r.get("runs", rounds) < rounds]
        print("each row measured in %d rounds (one run a round, spread over the session), its"
              " runs' steps pooled%s" % (rounds, "; %d row(s) in fewer runs: %s" % (
                  len(fewer), ", ".join("%s pp=%d m=%d (%d)" % (r["kind"], r["pp"], r["m"],
                                                                r["runs"]) for r in fewer))
                  if fewer else ""))
    header = "%-22s %2s %2s %3s %10s %10s %-25s %7s %8s %8s %-28s %s" % (
        "schedule", "pp", "v", "m", "predicted", "measured", "spread min/p10/p90/max",
        "error", "paired", "at ranks", "split spd/kind/comm/ord %",
        "peak memory error per rank %")
    print(header)
    for row in rows:
        label = row["kind"] + (" *" if row["in_sample"] else "")
        predicted = fmt(row["predicted_ns"] and row["predicted_ns"] / 1e6, "%.2f ms")
        if row["status"] != "measured":
            print("%-22s %2d %2d %3d %10s %s: %s" % (label, row["pp"], row["v"], row["m"],
                                                     predicted, row["status"].upper(),
                                                     row.get("reason", "")))
            continue
        m = {k: v / 1e6 for k, v in row["measured_ns"].items()}
        split = row["split_pct_of_measured"]
        print("%-22s %2d %2d %3d %10s %7.2f ms %-25s %6s%% %7s%% %7s%% %-28s %s" % (
            label, row["pp"], row["v"], row["m"], predicted, m["median"],
            "%.1f/%.1f/%.1f/%.1f" % (m["min"], m["p10"], m["p90"], m["max"]),
            fmt(row["error_pct"]), fmt(row.get("drift_paired_error_pct")),
            fmt(row["at_rank_speed_error_pct"]),
            "/".join(fmt(split.get(part), "%+.1f")
                     for part in ("speed", "kinds", "communication", "ordering")),
            " ".join(fmt(e) for e in row["peak_error_pct"])))
    print("* in sample (the calibrated configuration). error: (predicted - measured) / measured;"
          " paired: the same with the prediction scaled by the calibrated configuration's"
          " measured / predicted step in the anchor runs just before and after the row's run"
          " (with several runs, the geometric mean over its runs; with FIDELITY_ANCHOR_EVERY,"
          " the nearest anchors either side);"
          " at ranks: the same with the prediction re-timed at each rank's measured speed;"
          " split: measured - predicted as pipelens diff splits it (speed, kinds,"
          " communication, ordering; means over the steps), in % of the measured median")
    s = summary
    yes = lambda flag: "met" if flag else "NOT met"
    print("targets over %d measured rows of %d: every row within 5 %%: %s (%d within);"
          " median row within 2 %%: %s (%s %%); peak memory per rank within 10 %%: %s (%d rows);"
          " rows passing time and memory: %d of %d" % (
              s["measured"], s["rows"], yes(s["every_row_within_5pct"]), s["rows_within_5pct"],
              yes(s["median_row_within_2pct"]), fmt(s["median_row_abs_error_pct"], "%.1f"),
              yes(s["every_rank_memory_within_10pct"]), s["rows_memory_within_10pct"],
              s["rows_passing_time_and_memory"], s["measured"]))
    print("at each rank's speed: %d rows within 5 %%, median |error| %s %%" % (
        s["at_rank_speed_rows_within_5pct"],
        fmt(s["at_rank_speed_median_abs_error_pct"], "%.1f")))
    if s["drift_paired_rows"]:
        print("drift-paired: %d rows within 5 %% of %d, median |error| %s %%" % (
            s["drift_paired_rows_within_5pct"], s["drift_paired_rows"],
            fmt(s["drift_paired_median_abs_error_pct"], "%.1f")))
    line = anchor_line(out_dir)
    if line:
        print(line)
    line = sharing_line(rows)
    if line:
        print(line)
    line = core_wait_line(rows)
    if line:
        print(line)
    line = run_to_run_line(rows)
    if line:
        print(line)


def run_to_run_line(rows):
    """With rounds: how far apart a row's runs came out (the slowest run's median over the
    fastest's), the part of a one-run row's error that is the draw of its run."""
    spreads = sorted((max(r["run_medians_ns"]) / min(r["run_medians_ns"]) - 1) * 100
                     for r in rows if r.get("status") == "measured"
                     and len(r.get("run_medians_ns") or []) > 1 and min(r["run_medians_ns"]) > 0)
    if not spreads:
        return None
    return ("run to run: the slowest of a row's runs over its fastest (medians), +%.1f %% at the"
            " median row, +%.1f %% at the most (%d rows)" % (upper_median(spreads), spreads[-1],
                                                            len(spreads)))


def core_wait_line(rows):
    """How long ranks waited for a core in the rows' measured median steps: the direct test of
    "cores not shared"."""
    waits = sorted(r["core_wait_pct"] for r in rows
                   if r.get("status") == "measured" and r.get("core_wait_pct") is not None)
    if not waits:
        return None
    return ("waited for a core (ready to run, none free), the most of any rank in %% of the"
            " median step: %.1f %% at the median row, %.1f %% at the worst (%d rows)" % (
                upper_median(waits), waits[-1], len(waits)))


def table(out_dir):
    meta = {r["key"]: r["value"] for r in read_tsv(os.path.join(out_dir, "meta.tsv"))}
    rows = build_rows(out_dir, meta)
    summary = targets(rows)
    with open(os.path.join(out_dir, "fidelity.tsv"), "w") as handle:
        handle.write("\t".join(TSV_COLUMNS) + "\n")
        for row in rows:
            handle.write(tsv_line(row) + "\n")
    calibration = load_json(os.path.join(out_dir, "calibration.json"))
    document = {"meta": meta, "calibration": calibration, "targets": summary, "rows": rows}
    with open(os.path.join(out_dir, "fidelity.json"), "w") as handle:
        json.dump(document, handle, indent=1)
    print_table(rows, summary, meta, out_dir)


def main(argv):
    commands = {"prediction": prediction, "run_id": run_id, "median_step": median_step,
                "table": table}
    if len(argv) != 3 or argv[1] not in commands:
        print(__doc__, file=sys.stderr)
        return 2
    commands[argv[1]](argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
