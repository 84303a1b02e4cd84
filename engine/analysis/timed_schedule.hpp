// A run as the analyses of timed runs see it: the schedule each rank ran, in program order, and
// when each action ran — the same value whether the run was simulated, executed or imported.
//
// Invariants: `times[r]` is parallel to `schedule.ranks[r]` (one span per action, in program
// order: the recorded step order, and with several training steps, where a rank's list is recorded
// once per step, each step's list after the previous one's, the k-th row of an index in time
// order being step k's); OVERLAP_F_B parts are in `schedule.parts`; a stage maps
// to the one rank that runs it (-1 for a stage no recorded action names, as in a run that failed
// before reaching it). An action that started and never ended has `end_ns < 0`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "engine/schedule/schedule.hpp"
#include "traces/trace_reader.hpp"

namespace pipelens::analysis {

struct ActionSpan {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;  // < 0: never ended
    std::int32_t step = 0;    // as recorded (a failed run's ranks record a prefix of their steps)
    bool communication_lane = false;
    std::int64_t bytes = 0;  // what a transfer moved, as recorded (0: not a transfer, or unknown)
};

struct TimedSchedule {
    Schedule schedule;
    std::vector<std::vector<ActionSpan>> times;  // parallel to schedule.ranks
    // By rank, (index in program order, text), by index: the actions that kept a text their
    // integers do not give (an imported flight-recorder op). Empty for pipeline runs.
    std::vector<std::vector<std::pair<std::int32_t, std::string>>> kept_texts;
    // Where it was read from, for messages ("run.db: trace is corrupt: run 3"); empty for a
    // schedule no trace holds.
    std::string source;

    bool ended(int rank, int step) const {
        return times[static_cast<std::size_t>(rank)][static_cast<std::size_t>(step)].end_ns >= 0;
    }
    // What a report calls the action at `index` of `rank`: its kept text, else PyTorch's.
    std::string text(int rank, int index) const;
};

// One rank's stored rows (any order) and, by step, the texts its integers do not give (an
// OVERLAP_F_B's parts, an imported op's kept text), as TraceReader::stored_actions and
// stored_labels give them.
struct RankRows {
    std::vector<traces::StoredAction> actions;
    std::vector<std::pair<std::int32_t, std::string>> stored_labels;
};

// Builds the timed schedule of `run` from its ranks' rows (index = rank). Throws
// traces::TraceError naming `path`, the rank and the step for what no run can hold: a kind out
// of range, a stage run by two ranks, steps repeated, an OVERLAP_F_B without its parts.
TimedSchedule timed_schedule_from_rows(const std::filesystem::path& path,
                                       const traces::RunRecord& run, std::vector<RankRows> ranks);

// Reads every rank of `run_id` and builds its timed schedule.
TimedSchedule read_timed_schedule(const traces::TraceReader& reader, std::int64_t run_id);

// Throws traces::TraceError naming `path` when a finished run's header names more microbatches
// than its `action_count` actions do (`named_microbatches`: the highest they name, plus one).
void check_run_header(const std::filesystem::path& path, const traces::RunRecord& run,
                      int named_microbatches, std::size_t action_count);

}  // namespace pipelens::analysis
