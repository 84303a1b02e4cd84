#!/usr/bin/env python3
"""Where the host time of each pipelens action goes, from `pipelens run --torch-profile DIR`'s
DIR/rankR.json (LibTorch's profile, each action a "PP:<action>" range).

  profile_breakdown.py PROFILE.json [--json]

Per action kind (F, B, W, I, SEND_F, RECV_F, ...): how many actions, and the medians of the
action's span, of the time inside it that LibTorch operators cover on any of the process's
threads (a GPU's backward runs on the autograd engine's device thread), and of the rest: the
executor's own work between operators (and the profiler's own cost, which this cannot separate).
Kernels (a GPU profile from a LibTorch built with Kineto) that start inside an action add their
median summed time. Prints a table, or one JSON object with --json.

Invariants: only complete events ("ph": "X") are read; an operator counts for an action when it
lies wholly inside the action's span; overlapping operators (nested ones, or two threads) are
counted once (the union of their spans); medians of an even count are the upper middle, as
everywhere in pipelens.
"""
import json
import re
import sys

ACTION = re.compile(r"^PP:(\d+)([A-Z_]+)(\d+)$")


def upper_median(values):
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else None


def union_length(spans):
    """Total length of the union of (start, end) spans."""
    total, reach = 0.0, None
    for start, end in sorted(spans):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def breakdown(profile):
    events = [e for e in profile.get("traceEvents", []) if e.get("ph") == "X"]
    actions, operators, kernels = [], [], []
    for event in events:
        start = float(event["ts"])
        span = (start, start + float(event.get("dur", 0)))
        match = ACTION.match(event.get("name", ""))
        if match:
            actions.append((match.group(2), span))
        elif event.get("cat") == "kernel":
            kernels.append(span)
        elif event.get("cat") == "cpu_op":
            operators.append(span)
    operators.sort()
    by_kind = {}
    for kind, (start, end) in actions:
        inside = [(s, e) for s, e in operators if s >= start and e <= end]
        covered = union_length(inside)
        kernel_us = sum(e - s for s, e in kernels if start <= s < end)
        row = by_kind.setdefault(kind, {"span": [], "operators": [], "outside": [],
                                        "kernels": []})
        row["span"].append(end - start)
        row["operators"].append(covered)
        row["outside"].append(end - start - covered)
        row["kernels"].append(kernel_us)
    result = {}
    for kind, row in sorted(by_kind.items()):
        result[kind] = {"actions": len(row["span"]),
                        "median_span_us": upper_median(row["span"]),
                        "median_operators_us": upper_median(row["operators"]),
                        "median_outside_operators_us": upper_median(row["outside"]),
                        "median_kernels_us": upper_median(row["kernels"]) if kernels else None}
    return result


def main(argv):
    if len(argv) not in (2, 3) or (len(argv) == 3 and argv[2] != "--json"):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as handle:
            profile = json.load(handle)
    except (OSError, ValueError) as error:
        print("profile_breakdown.py: %s: %s" % (argv[1], error), file=sys.stderr)
        return 2
    result = breakdown(profile)
    if not result:
        print("profile_breakdown.py: %s: no PP:<action> range (was it written by pipelens run"
              " --torch-profile?)" % argv[1], file=sys.stderr)
        return 1
    if len(argv) == 3:
        print(json.dumps(result))
        return 0
    print("%-8s %7s %12s %14s %16s %12s" % ("kind", "actions", "span us", "operators us",
                                            "outside ops us", "kernels us"))
    for kind, row in result.items():
        kernels = row["median_kernels_us"]
        print("%-8s %7d %12.1f %14.1f %16.1f %12s" % (
            kind, row["actions"], row["median_span_us"], row["median_operators_us"],
            row["median_outside_operators_us"], "-" if kernels is None else "%.1f" % kernels))
    print("medians per action of its span, of the time LibTorch operators cover inside it (any"
          " thread), of the rest (the executor's own work and the profiler's), and of the"
          " kernels that start inside it")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
