// The straggler marks of the timeline's rank rows, from the run's engine/analysis/stragglers
// report (TimelineModel::stragglers, found with the critical path; nothing is computed again
// here): which rows are marked for the step picker's choice, and what a marked row's tooltip
// says. GUI-free, so the marks and their words are tested with exact values.
//
// Invariant: a row is marked exactly when the report flags its rank in the chosen step (every
// step: in any step).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/stragglers.hpp"

namespace pipelens::viewer {

// Rank `rank`'s flagged steps: step `step` alone, or every step (nullopt), by step.
std::vector<analysis::RankStraggle> rank_straggles(const analysis::StragglerReport& report,
                                                   int rank, std::optional<int> step);

// Per rank 0..rank_count-1, whether its row is marked.
std::vector<bool> marked_ranks(const analysis::StragglerReport& report, int rank_count,
                               std::optional<int> step);

// "rank 1: 1.50x the reference compute at step 0, on the critical path, cost 1.50 us" ("off the
// critical path" otherwise); the reference is named "calibrated" for a calibrated report.
std::string straggle_text(const analysis::RankStraggle& straggle, bool calibrated);

}  // namespace pipelens::viewer
