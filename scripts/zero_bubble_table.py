#!/usr/bin/env python3
"""Prints the table in docs/schedules.md of Qi et al.'s published bubble rates (Zero Bubble Pipeline
Parallelism, table 5) beside what `pipelens simulate` predicts from the paper's profiled times
(its table 6): for each setting, 1F1B, ZB-H1, ZB-H2 and ZeroBubbleAuto at 1p and 2p memory.
The bubble rate is the paper's: (cost - m (F + B + W)) / cost, cost the longest stage span
(first computation's start to last one's end), read from each rank's warm-up and cool-down.

  scripts/zero_bubble_table.py [PIPELENS]     (default build/app/cli/pipelens)
"""
import json
import subprocess
import sys

PIPELENS = sys.argv[1] if len(sys.argv) > 1 else "build/app/cli/pipelens"

# model, p, m, F, B, W, comm (ms); published 1F1B, ZB-H1, ZB-H2, ZB-1p, ZB-2p
TABLE = [
    ("1.5B", 8, 24, 18.522, 18.086, 9.337, 0.601, 0.2431, 0.1585, 0.1083, 0.1585, 0.0433),
    ("1.5B", 8, 32, 18.513, 18.086, 9.331, 0.626, 0.1985, 0.1242, 0.0837, 0.1242, 0.0039),
    ("1.5B", 8, 64, 18.546, 18.097, 9.321, 0.762, 0.1240, 0.0674, 0.0444, 0.0674, 0.0026),
    ("6.2B", 8, 24, 29.718, 29.444, 19.927, 0.527, 0.2347, 0.1323, 0.0698, 0.1323, 0.0029),
    ("6.2B", 8, 32, 29.802, 29.428, 19.530, 0.577, 0.1898, 0.1045, 0.0559, 0.1045, 0.0022),
    ("6.2B", 8, 64, 29.935, 29.621, 19.388, 0.535, 0.1091, 0.0554, 0.0294, 0.0554, 0.0010),
    ("14.6B", 16, 48, 11.347, 11.248, 8.132, 0.377, 0.2552, 0.1397, 0.0672, 0.1397, 0.0066),
    ("14.6B", 16, 64, 11.307, 11.254, 8.101, 0.379, 0.2082, 0.1088, 0.0516, 0.1088, 0.0054),
    ("14.6B", 16, 128, 11.325, 11.308, 8.109, 0.378, 0.1251, 0.0576, 0.0266, 0.0576, 0.0028),
    ("28.3B", 32, 96, 10.419, 10.207, 7.715, 0.408, 0.2646, 0.1421, 0.0641, 0.1421, 0.0038),
    ("28.3B", 32, 128, 10.408, 10.204, 7.703, 0.408, 0.2168, 0.1106, 0.0490, 0.1106, 0.0029),
    ("28.3B", 32, 256, 10.402, 10.248, 7.698, 0.460, 0.1352, 0.0594, 0.0257, 0.0594, 0.0018),
]

SCHEDULES = [("1F1B", []), ("InterleavedZeroBubble", ["--v", "1"]), ("ZeroBubbleH2", []),
             ("ZeroBubbleAuto", ["--max-activations", "p"]),
             ("ZeroBubbleAuto", ["--max-activations", "2p"])]


def rate(kind, extra, p, m, f, b, w, comm):
    args = [PIPELENS, "simulate", "--schedule", kind, "--pp", str(p), "--m", str(m),
            "--f", f"{f}ms", "--i", f"{b}ms", "--w", f"{w}ms", "--p2p-latency", f"{comm}ms",
            "--json"] + extra
    result = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    step = result["step_time_ns"]
    cost = max(step - r["warmup_ns"] - r["cooldown_ns"] for r in result["ranks"])
    work = m * round((f + b + w) * 1e6)
    return (cost - work) / cost


print("| model | p | m | 1F1B | ZB-H1 | ZB-H2 | ZB-1p | ZB-2p |")
print("|---|---|---|---|---|---|---|---|")
worst = 0.0
for model, p, m, f, b, w, comm, *published in TABLE:
    cells = []
    for (kind, extra), paper in zip(SCHEDULES, published):
        predicted = rate(kind, extra, p, m, f, b, w, comm)
        worst = max(worst, abs(predicted - paper))
        cells.append(f"{paper:.4f} / {predicted:.5f}")
    print(f"| {model} | {p} | {m} | " + " | ".join(cells) + " |")
print(f"\nlargest |predicted - published|: {worst:.6f}")
