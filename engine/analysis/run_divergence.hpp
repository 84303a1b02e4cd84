// Where a real run went apart from its simulation: step times, each rank's busy, waiting and
// bubble (bubble_accounting's one definition, both sides), each action kind's median
// measured/simulated duration, the actions furthest off, and the step-time difference split into
// four parts that sum to it exactly.
//
// Matching: the real run and the simulation are cut into training steps (training_steps.hpp);
// real step k is compared with simulated step k, or with the simulation's only step when it has
// one (a simulation predicts one step). Within a pair of steps actions match by (rank, kind,
// stage, microbatch) (their text); an action on one side only is listed in `unmatched`.
// Several real runs of one configuration (repeats on a machine whose speed moves from run to
// run) are compared run by run in the same way, and their steps pooled: the figures over steps
// are over every run's steps, each step keeping the position of its run (`real_run`).
//
// The split of one step (T = step time, re-timing = critical_path.hpp's `retime` of the
// simulated step under the dependency rules):
//   speed         = T(simulation, each rank's computations x its speed factor) - T(simulation)
//   kinds         = T(simulation, every matched computation at its measured time) - T(speed's)
//   communication = T(kinds', every matched transfer and collective at its measured time too)
//                   - T(kinds'); a transfer's measured time is its delivery where the run saw
//                   it whole (transfer_deliveries.hpp), else its prediction times the step's
//                   median seen/predicted ratio, capped at what its RECV's end allows: a RECV's
//                   recorded span (posted early, ended when its data was needed) is not one
//   ordering      = T(real) - T(communication's): what waited for what, and host time between
//                   actions, that the model did not predict; `waits` lists the computations
//                   that waited last for something else than simulated.
// A rank's speed factor is the median over its matched computations of measured / simulated
// time (the "at ranks" factor). The parts telescope, so they sum to T(real) - T(simulation).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "engine/analysis/timed_schedule.hpp"

namespace pipelens::analysis {

struct Measured {
    std::int64_t measured = 0;
    std::int64_t simulated = 0;
    std::int64_t difference() const { return measured - simulated; }
};

struct RankDivergence {
    int rank = 0;
    Measured busy, waiting, bubble;
    double speed = 1;  // median measured / simulated over its matched computations
};

struct DivergenceSplit {
    std::int64_t speed_ns = 0;
    std::int64_t kinds_ns = 0;
    std::int64_t communication_ns = 0;
    std::int64_t ordering_ns = 0;
    std::int64_t total() const { return speed_ns + kinds_ns + communication_ns + ordering_ns; }
};

// A computation that waited last for something else than in the simulation (bubble
// accounting's `waited_for`: what held it, through transfers to the computation behind them).
struct WaitChange {
    int rank = 0;
    std::string label;
    std::string measured_wait;   // the action it waited for last in the real run ("" none)
    std::string simulated_wait;  // the same in the simulation
};

struct StepDivergence {
    int real_run = 0;   // the position of its run among the real runs compared (0 for one run)
    int real_step = 0;  // the step within that run
    int sim_step = 0;
    Measured step_time;
    std::vector<RankDivergence> ranks;
    DivergenceSplit split;          // split.total() == step_time.difference()
    std::vector<WaitChange> waits;  // in rank, then program order
};

struct KindDivergence {
    std::string kind;  // "F", "SEND_F", "OVERLAP_F_B", ...
    double median_ratio = 0;
    int actions = 0;  // matched actions with a simulated time above 0 (transfers: seen ones)
};

struct ActionDivergence {
    int real_run = 0;  // as StepDivergence's
    int rank = 0;
    int step = 0;  // the real run's training step
    std::string label;
    std::int64_t measured_ns = 0;
    std::int64_t simulated_ns = 0;
    double ratio = 0;  // measured / simulated; 0 when simulated is 0
};

struct UnmatchedAction {
    int real_run = 0;  // the real run compared (as StepDivergence's), either side
    bool real = true;  // on the real side only (else the simulated side only)
    int rank = 0;
    int step = 0;
    std::string label;
};

struct RunDivergence {
    std::vector<StepDivergence> steps;
    // Over the steps: step times' medians; the split's means (they sum to the mean difference).
    Measured median_step_time;
    DivergenceSplit mean_split;
    std::vector<KindDivergence> kinds;  // by kind, in ActionKind order
    std::vector<ActionDivergence> top;  // largest |measured - simulated| first
    std::vector<UnmatchedAction> unmatched;
};

// `top_count`: how many of the actions furthest off to keep.
RunDivergence run_divergence(const TimedSchedule& real, const TimedSchedule& simulated,
                             int top_count = 10);

// The same over several real runs of the simulated configuration, their steps pooled in the
// order given (run 0's steps, then run 1's, ...).
RunDivergence run_divergence(std::span<const TimedSchedule> real_runs,
                             const TimedSchedule& simulated, int top_count = 10);

// The same, each run read when it is compared (`read_run(i)`, i < run_count; what it returns
// need stay valid only until the next call), so that only one run's actions are held at a time.
RunDivergence run_divergence(std::size_t run_count,
                             const std::function<const TimedSchedule&(std::size_t)>& read_run,
                             const TimedSchedule& simulated, int top_count = 10);

}  // namespace pipelens::analysis
