#!/usr/bin/env python3
"""How long the ranks of a real run computed at the same time, read from its trace.

Usage: rank_overlap.py TRACE.db [RUN_ID]   (default: the trace's last real run)

Reads the run's compute actions (the `actions` table's lane 0: F, I, W, B, OVERLAP_F_B, whose
times on a GPU are the CUDA events' on each rank's stream), merges each rank's into the time it
was busy, and prints one JSON object: per rank its busy time, and for the ranks together the time
two or more of them were busy at once (`overlap_ns`) and that as a share of the least busy
rank's time (`overlap_share`). Exit 1 when no two ranks ever computed at the same time (or the
run has fewer than two ranks with computations), else 0.

Why: ranks that are threads of one process on one GPU (`--transport local --device cuda`) each
compute on their own stream (engine/runtime/rank_streams.hpp); on one shared stream their
kernels would run one after another. Overlap is what a GPU run must show; it does not prove the
streams on its own (spans of ranks whose events were queued interleaved on one stream overlap
too), so check.sh reads it beside the reference check, which a hand-over without its event
would fail. Python's standard library only.
"""

import json
import sqlite3
import sys


def busy_intervals(spans):
    """Sorted, merged (start, end) intervals covering the spans."""
    merged = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [tuple(interval) for interval in merged]


def total(intervals):
    return sum(end - start for start, end in intervals)


def overlap_of(per_rank):
    """Time two or more ranks were busy at once: every rank's busy edges swept in time order."""
    edges = []
    for intervals in per_rank.values():
        for start, end in intervals:
            edges.append((start, 1))
            edges.append((end, -1))
    edges.sort(key=lambda edge: (edge[0], edge[1]))  # an end before a start at the same time
    busy, overlap, previous = 0, 0, None
    for time, change in edges:
        if busy >= 2 and previous is not None:
            overlap += time - previous
        busy += change
        previous = time
    return overlap


def rank_overlap(path, run_id=None):
    connection = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        if run_id is None:
            row = connection.execute("SELECT max(id) FROM runs WHERE kind = 'real'").fetchone()
            run_id = row[0]
        spans = {}
        for rank, start, end in connection.execute(
                "SELECT rank, start_ns, end_ns FROM actions WHERE run_id = ? AND lane = 0",
                (run_id,)):
            spans.setdefault(rank, []).append((start, end))
    finally:
        connection.close()
    per_rank = {rank: busy_intervals(rank_spans) for rank, rank_spans in spans.items()}
    busy = {str(rank): total(intervals) for rank, intervals in sorted(per_rank.items())}
    overlap = overlap_of(per_rank)
    least = min(busy.values()) if busy else 0
    return {"run_id": run_id, "busy_ns": busy, "overlap_ns": overlap,
            "overlap_share": overlap / least if least else 0.0}


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    result = rank_overlap(sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else None)
    print(json.dumps(result))
    return 0 if len(result["busy_ns"]) >= 2 and result["overlap_ns"] > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
