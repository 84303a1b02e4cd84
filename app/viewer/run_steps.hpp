// The training steps of a run as the timeline shows them: where each step starts and ends on the
// run's clock, and its step time and bubble share. GUI-free, so the step boundaries, the step
// picker's ranges and the per-step figures are tested with exact values.
//
// A step is found, not read: the trace's `actions.step` column is an action's index in its
// rank's action list, not the training step. Every step runs each rank's same action list once,
// so an action belongs to step k when it is the (k+1)-th occurrence, in start order, of its own
// action (kind, lane, stage, microbatch; an OVERLAP_F_B by its parts' text) on its rank. That
// holds whether a writer numbers actions on through the run or afresh each step.
//
// Invariants: steps are numbered 0.. in order; a step's start is the earliest start and its end
// the latest end of its actions over every rank; busy_ns sums its compute actions' durations.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/viewer/timeline_model.hpp"
#include "app/viewer/viewer_layout.hpp"

namespace pipelens::viewer {

struct RunStep {
    int step = 0;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t busy_ns = 0;       // compute time of every rank within the step
    std::int64_t action_count = 0;  // its actions over every rank and lane
    std::int64_t step_ns() const { return end_ns - start_ns; }
    // Idle share of the step over all `ranks` ranks (0..1); 0 for an empty step.
    double bubble_ratio(int ranks) const;
    friend bool operator==(const RunStep&, const RunStep&) = default;
};

// The training step of each action of one rank, by lane and index in the lane.
struct RankActionSteps {
    std::vector<std::int32_t> compute, communication;
    friend bool operator==(const RankActionSteps&, const RankActionSteps&) = default;
};

// Every action's training step, per rank (index = rank), by the rule above.
std::vector<RankActionSteps> number_steps(const TimelineModel& model);
// The steps of `model`'s run, in order; empty for a run without actions. `numbers`:
// number_steps(model), when the caller already has them.
std::vector<RunStep> find_steps(const TimelineModel& model);
std::vector<RunStep> find_steps(const TimelineModel& model,
                                const std::vector<RankActionSteps>& numbers);

// Whether the last of `steps` is incomplete: its run is `running` (being written, or its writer
// died) and it holds fewer actions than the first (every step runs the same actions). A lone
// first step cannot be told.
bool last_step_incomplete(const std::vector<RunStep>& steps, bool run_running);

// Each rank's compute time within each of `steps`: [step][rank].
std::vector<std::vector<std::int64_t>> busy_by_step(const TimelineModel& model,
                                                    const std::vector<RunStep>& steps,
                                                    const std::vector<RankActionSteps>& numbers);

// The training step of the action at `at` (0 when `numbers` does not cover it).
int step_of(const std::vector<RankActionSteps>& numbers, const ActionLocation& at);
// The same action as `at` (its rank, lane and text) in training step `step`: `at` itself when it
// is of that step, nothing when the step does not run it.
std::optional<ActionLocation> copy_in_step(const TimelineModel& model,
                                           const std::vector<RankActionSteps>& numbers,
                                           const ActionLocation& at, int step);

// For each key, how many times it came before: {7, 3, 7, 7, 3} -> {0, 0, 1, 2, 1}. (A flat
// table of counts, neither a node-based map nor a sort: a re-simulated timeline counts 100,000
// actions each time.)
std::vector<int> occurrence_numbers(const std::vector<std::uint64_t>& keys);

// The time range the view shows for the step picker's choice: every step (nullopt) is the whole
// run's span; step k its own [start, end]. A step the run does not have reads as every step.
std::pair<std::int64_t, std::int64_t> step_range(const std::vector<RunStep>& steps,
                                                 std::optional<int> chosen, TimeSpan run);

// The timeline fitted to the picker's choice in a window `window_width` pixels wide: every step
// as fitted_geometry(window_width, run); step k from its start to its end with a 2% margin
// either side.
TimelineGeometry fitted_step_geometry(float window_width, const std::vector<RunStep>& steps,
                                      std::optional<int> chosen, TimeSpan run);

// "step 2: 57.0 us, bubble 18.2%" for the run summary's per-step lines; an incomplete step has
// no time: "step 2: in progress, 5 of 32 actions so far" while the trace is being written
// (`writing`), "step 2: incomplete, 5 of 32 actions" once nothing writes it (`complete`: how
// many a whole step holds).
std::string step_figures_text(const RunStep& step, int ranks);
std::string incomplete_step_text(const RunStep& step, std::int64_t complete, bool writing);

}  // namespace pipelens::viewer
