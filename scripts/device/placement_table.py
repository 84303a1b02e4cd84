#!/usr/bin/env python3
"""placement_table.py OUT_DIR: the tables of placement_probe.sh, printed and written to
placement.json.

Reads OUT_DIR/solo.tsv (one rank's work alone on each CPU, and on the pair CPU beside an
identical run on each other CPU) and OUT_DIR/layouts.tsv (the pp=4 anchor per layout and
repeat). A pair's slowdown is the pair CPU's step beside that partner over its median step
alone: a partner sharing its physical core shows far above the rest. A rank-run counts as slow
when its busy time is 1.2 times the fastest quarter's median or more, the same cut that the
16-core table's two speed groups fall either side of.
"""
import csv
import json
import statistics
import sys
from pathlib import Path

SLOW = 1.2


def read_tsv(path):
    if not path.exists():
        return []
    with path.open() as f:
        return list(csv.DictReader(f, delimiter="\t"))


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def solo_tables(rows):
    alone = {int(r["cpu"]): number(r["step_ns"]) for r in rows if r["kind"] == "alone"}
    pairs = [r for r in rows if r["kind"] == "pair"]
    out = {"alone_ms": {cpu: (v / 1e6 if v else None) for cpu, v in alone.items()}, "pairs": []}
    measured = [v for v in alone.values() if v]
    if measured:
        print(f"one rank alone, per CPU: median {statistics.median(measured) / 1e6:.2f} ms, "
              f"{min(measured) / 1e6:.2f} to {max(measured) / 1e6:.2f} ms")
        print("  " + " ".join(f"{cpu}:{v / 1e6:.2f}" if v else f"{cpu}:-"
                              for cpu, v in sorted(alone.items())))
    for r in pairs:
        cpu, partner = int(r["cpu"]), int(r["partner"])
        base = alone.get(cpu)
        step = number(r["step_ns"])
        slowdown = step / base if step and base else None
        out["pairs"].append({"cpu": cpu, "partner": partner, "slowdown": slowdown})
    if out["pairs"]:
        cpu = out["pairs"][0]["cpu"]
        print(f"CPU {cpu} beside an identical run on each other CPU (its step over its step alone):")
        print("  " + " ".join(f"{p['partner']}:{p['slowdown']:.2f}" if p["slowdown"] else
                              f"{p['partner']}:-" for p in out["pairs"]))
        shared = [p["partner"] for p in out["pairs"] if p["slowdown"] and p["slowdown"] >= SLOW]
        print(f"  partners slowing it {SLOW}x or more: {shared if shared else 'none'}")
        out["shares_core_with"] = shared
    return out


def layout_tables(rows):
    runs = []
    for r in rows:
        busy = [number(b) for b in (r["busy_ns_per_rank"] or "").split(",") if b]
        runs.append({"layout": r["layout"], "repeat": int(r["repeat"]),
                     "step_ns": number(r["step_ns"]), "busy_ns": busy})
    every = sorted(b for run in runs for b in run["busy_ns"] if b)
    if not every:
        return {"runs": runs}
    fast = statistics.median(every[: max(1, len(every) // 4)])
    print(f"pp=4 anchor per layout (rank busy per step; slow: {SLOW}x the fastest quarter's "
          f"median, {fast / 1e6:.2f} ms, or more):")
    summary = {}
    for layout in dict.fromkeys(run["layout"] for run in runs):
        mine = [run for run in runs if run["layout"] == layout]
        steps = [run["step_ns"] for run in mine if run["step_ns"]]
        # A run that failed (fewer than four ranks' figures) is no evidence of fast ranks.
        complete = [run for run in mine if len([b for b in run["busy_ns"] if b]) == 4]
        slow = [sum(1 for b in run["busy_ns"] if b >= SLOW * fast) for run in complete]
        summary[layout] = {"runs": len(mine), "failed": len(mine) - len(complete),
                           "median_step_ms":
                           statistics.median(steps) / 1e6 if steps else None,
                           "slow_ranks_per_run": slow}
        busy = "; ".join(",".join(f"{b / 1e6:.1f}" for b in run["busy_ns"] if b) for run in mine)
        step = f"{summary[layout]['median_step_ms']:.2f} ms" if steps else "-"
        failed = f"  failed runs {len(mine) - len(complete)}" if len(complete) < len(mine) else ""
        print(f"  {layout:<12} median step {step:>9}  slow ranks per run {slow}{failed}  "
              f"busy ms: {busy}")
    return {"runs": runs, "fast_busy_ns": fast, "layouts": summary}


def main():
    out = Path(sys.argv[1])
    result = {"solo": solo_tables(read_tsv(out / "solo.tsv")),
              "layouts": layout_tables(read_tsv(out / "layouts.tsv"))}
    (out / "placement.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
