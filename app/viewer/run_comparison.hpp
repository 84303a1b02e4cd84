// A compared pair of runs as `pipelens diff` splits it: the step time of each, the difference,
// and the difference split into speed, kinds, communication and ordering
// (engine/analysis/run_divergence.hpp holds every definition; this file only picks which run is
// measured and which simulated, refuses the pairs diff refuses, and words the figures). GUI-free,
// so the sidebar's comparison lines are tested with exact values.
//
// Invariants: the same two runs give the numbers `pipelens diff` prints (the same analysis of the
// same rows); a pair diff refuses (schedule, pp, v or m differ) or the analysis refuses has no
// divergence and says why in `refused`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/viewer/timeline_model.hpp"
#include "engine/analysis/run_divergence.hpp"

namespace pipelens::viewer {

struct ComparisonSplit {
    // The measured side is the real run and the simulated side the simulation; of two runs of one
    // kind, the shown run is the measured side.
    traces::RunRecord measured, simulated;
    bool shown_measured = true;  // the shown run is the measured side
    std::optional<analysis::RunDivergence> divergence;
    std::string refused;  // why there is no divergence
};

// `shown` against `compared`, both runs of the trace at `source` (named in errors).
ComparisonSplit split_comparison(const TimelineModel& shown, const TimelineModel& compared,
                                 const std::string& source);

// The figures for the step picker's choice, as `pipelens diff` prints them: step k (the row of
// the shown run's step k), or every step (one step: its row; several: "over 3 steps, median: "
// the step times' medians, then "mean speed ...": the mean split):
//   "run 2 (real) 12.0 us vs run 1 (sim) 10.0 us: +2.0 us"
//   "speed +2.0 us  kinds 0 ns  communication 0 ns  ordering 0 ns"
// Empty without a comparison; one line saying why when there is no split.
std::vector<std::string> split_lines(const ComparisonSplit& split, std::optional<int> step);

}  // namespace pipelens::viewer
