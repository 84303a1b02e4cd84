// A compared run matched with the shown one training step by training step, as `pipelens diff`
// matches them (engine/analysis/run_divergence.hpp): the shown run's step k with the compared
// run's step k, or with its only step when it has one (a simulation predicts one step); a shown
// step past the last of a compared run of several has no match. Within a pair of steps, actions
// match by their text (rank, kind, stage, microbatch). GUI-free, so the ghost bars, the tooltip's
// durations and the sidebar's per-step deltas are tested with exact values.
//
// Invariants: step k's ghosts are the compared actions of its matched step moved by the two
// steps' start difference, so they start where the shown step starts, on every step; every
// listed difference is of one action of one step (never the same action twice) and is not 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/viewer/run_summary.hpp"
#include "app/viewer/timeline_model.hpp"

namespace pipelens::viewer {

// A shown compute action whose duration differs from its match's.
struct ActionDifference {
    ActionLocation at;          // in the shown run
    int step = 0;               // its training step
    std::int64_t delta_ns = 0;  // its duration minus its match's; never 0
};

// One rank of the compared run as drawn behind the shown one: lanes indexed as Lane's are.
struct GhostRank {
    Lane compute, communication;
};

struct StepMatch {
    std::vector<std::optional<int>> compared_step;  // per shown step: the compared step it meets
    // By the shown run's label ids: the matched action's duration, -1 when it has none.
    std::vector<std::int64_t> durations;
    std::vector<GhostRank> ghosts;              // index = rank
    std::vector<ActionDifference> differences;  // largest |delta| first
    // busy[step][rank]: compute time of the rank within the step, each run by its own steps.
    std::vector<std::vector<std::int64_t>> shown_busy, compared_busy;
};

// Matches `compared` with `shown`; the summaries are of the two models (their steps and each
// action's step).
StepMatch match_steps(const TimelineModel& shown, const RunSummary& shown_summary,
                      const TimelineModel& compared, const RunSummary& compared_summary);

// At most `count` differences of training step `step` (nullopt: of any step), largest first.
std::vector<ActionDifference> largest_differences(const StepMatch& match, std::optional<int> step,
                                                  std::size_t count = 8);

// The sidebar's line for a difference: "0F0  -13.158 ms", and "0F0 (step 2)  -13.158 ms" when
// `name_step` (every step shown, in a run of several).
std::string difference_text(const TimelineModel& shown, const ActionDifference& difference,
                            bool name_step);

// The step time against the compared run's for step `step` (matched as above):
// "step 1 vs run 2's step 0: -6.403 ms (-1.4%)", or why there is nothing to compare.
std::string step_delta_text(const RunSummary& shown, std::int64_t compared_id,
                            const RunSummary& compared, const StepMatch& match, int step);

// Each rank's busy time against the compared run's: over every step the runs' recorded
// figures ("rank 0 busy +1.000 us"); for step `step` the two matched steps' compute time. Ranks
// busy as long in both are one last line ("62 ranks are busy as long in both runs").
std::vector<std::string> rank_busy_lines(const TimelineModel& shown, const TimelineModel& compared,
                                         const StepMatch& match, std::optional<int> step);

}  // namespace pipelens::viewer
