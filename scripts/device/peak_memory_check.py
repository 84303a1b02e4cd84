#!/usr/bin/env python3
"""Whether a run's simulated peak memory per rank is within 10 % of the measured peak.

Usage: peak_memory_check.py CALIBRATE.json

Reads the object `pipelens calibrate TRACE --json` prints (its `peak_memory_bytes`: per rank the
measured peak and the peak the calibrated simulation predicts) and prints one JSON object: per
rank both peaks and the error ((simulated - measured) / measured, in %), and `within_10pct`.
Exit 0 when every rank is within 10 %, 1 when one is not or the JSON holds no rank with a
measured peak, 2 when the file does not read.

Why: on a GPU the measured peak is the CUDA caching allocator's (allocated bytes above what the
device held when the recorded steps began, the highest inside each action) and the simulation's is pipelens' memory model; the GPU checks hold them to
the same 10 % as the CPU's fidelity table. Run it on a run with one rank per device: ranks that
share a GPU each see the whole device's allocations. Python's standard library only.
"""

import json
import sys

TOLERANCE_PCT = 10.0


def compare(calibration):
    ranks = []
    for entry in calibration.get("peak_memory_bytes", []):
        measured, simulated = entry.get("measured", 0), entry.get("simulated")
        # simulated is null when the calibration had no profile (nothing sized the tensors)
        error = (100.0 * (simulated - measured) / measured
                 if measured and simulated is not None else None)
        ranks.append({"rank": entry.get("rank"), "measured": measured, "simulated": simulated,
                      "error_pct": error})
    within = bool(ranks) and all(r["error_pct"] is not None and abs(r["error_pct"]) <= TOLERANCE_PCT
                                 for r in ranks)
    return {"ranks": ranks, "tolerance_pct": TOLERANCE_PCT, "within_10pct": within}


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as handle:
            calibration = json.load(handle)
    except (OSError, ValueError) as error:
        print("peak_memory_check.py: %s: %s" % (argv[1], error), file=sys.stderr)
        return 2
    result = compare(calibration)
    print(json.dumps(result))
    return 0 if result["within_10pct"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
