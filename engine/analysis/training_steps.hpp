// A recorded run cut into its training steps: what the run-divergence and straggler analyses
// compare step by step.
//
// Training step of an action: a rank runs its schedule's program once per step, so the k-th
// action on a rank with the same text (kind, stage, microbatch; an OVERLAP_F_B's parts) belongs
// to step k. This needs nothing beyond the actions themselves, so a one-step run (every file
// written so far) is one step, and a run that repeats its program N times is N steps.
//
// Invariants: each step keeps every rank's actions of that step in program order, its times
// moved so the step's earliest start is 0; the steps together hold every action exactly once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/analysis/critical_path.hpp"
#include "engine/analysis/timed_schedule.hpp"
#include "traces/trace_records.hpp"

namespace pipelens::analysis {

struct TrainingStep {
    TimedSchedule timed;         // the step alone, starting at 0
    std::int64_t offset_ns = 0;  // its start in the whole run
    std::int64_t end_ns = 0;     // the latest end of its actions (its step time); 0 if none ended
};

// The training step of every action, index as schedule.ranks: the occurrences of its text on its
// rank before it (0 throughout for a run that never repeats its program).
std::vector<std::vector<std::int32_t>> action_steps(const Schedule& schedule);

// How many training steps the schedule's actions make (1 for a program run once): without
// copying the run, as training_steps does.
std::int32_t training_step_count(const Schedule& schedule);

// The run's steps, earliest first (one step for a run that never repeats its program).
std::vector<TrainingStep> training_steps(const TimedSchedule& run);

// The same rule on a trace's rows: `actions` split by training step, earliest first, each
// action's step being the number of earlier actions (by start, then index) on its rank with the
// same text (`label`, as TraceReader::actions fills it). Each step keeps its actions in their
// given order and times; no step is empty, and an empty run has no step.
std::vector<std::vector<traces::ActionRecord>> split_by_training_step(
    const std::vector<traces::ActionRecord>& actions);

// The step whose figures stand for a run of several: the first whose time is the run's median
// step time, so that its ranks' busy and bubble, and its critical path, add up to that step time
// (medians taken figure by figure come from different steps and do not). None when no step took
// the median (a run with no step time).
std::optional<std::size_t> median_step(const std::vector<std::int64_t>& step_times_ns,
                                       std::int64_t median_step_time_ns);

// The latest end over ended actions, 0 for none.
std::int64_t latest_end(const TimedSchedule& timed);

}  // namespace pipelens::analysis
