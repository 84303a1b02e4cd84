// What a calibration may not write: figures that no real computation can have, which would
// give the simulator (and the user reading `calibrate`) a cost model that contradicts the run it
// came from while its in-sample error still looks small. Each refused figure is one line naming
// the stage (or layer), the figure and the values; calibration throws them together, so a user
// sees every bad figure at once.
//
// Invariants: a check never changes a figure (it refuses or passes); a line never names a
// figure that is within what the measurement's own spread explains.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/cost_model.hpp"
#include "sim/simulator.hpp"
#include "traces/trace_records.hpp"

namespace pipelens::sim {

// The calibration's figures that cannot be right, one line each; its what() is the lines joined
// by newlines. An std::invalid_argument, so callers that only report calibration errors still
// do; `calibrate` tells it apart (the input was read, but its figures are wrong: exit 1).
class ImpossibleCalibration : public std::invalid_argument {
  public:
    // `from_profile`: the refused figures came from a `run --profile` profile (timed after the
    // step, a few times each), whose figures a busy machine can make stray.
    ImpossibleCalibration(std::vector<std::string> figures, bool from_profile);
    const std::vector<std::string>& figures() const { return figures_; }
    bool from_profile() const { return from_profile_; }

  private:
    std::vector<std::string> figures_;
    bool from_profile_ = false;
};

// How far one stage's measured figures spread (each at least 1): B's 90th percentile over its
// median, and I's and W's median over their 10th percentile.
struct StageSpread {
    double backward_high = 1;
    double input_low = 1;
    double weight_low = 1;
};

// Per stage, the stage costs as the simulator will charge them and their spreads. Refused:
// - F, B or W that is not positive, and I that is not positive past the first stage (the first
//   stage's inputs are data: its I may be empty): every computation a run times takes time;
// - I or W above B by more than the spreads explain: each is a part of the full backward, so
//   neither can take longer than all of it; only a part timed at its slow end (its median over
//   its 10th percentile) against a B at its fast end (its 90th percentile over its median) can
//   show it above, so the bound is B times both factors.
std::vector<std::string> impossible_stage_figures(const std::vector<StageCost>& stages,
                                                  const std::vector<StageSpread>& spreads);

// Layers whose F is off their peers by more than the measurements explain. Peers are layers
// timed on the same stage (one rank, one stretch of time: no difference of machine or moment
// between them) with the same shape, i.e. the same held, output and gradient bytes, so the same
// work. A layer is refused when its F median is above the median of its peers' by a factor
// beyond both what their 10-90 % ranges span together (its high/low times the peers' median
// high/low: the most that one timed at its slow end and the others at their fast end can show)
// and 2 (the same work twice as slow is not noise, however tight the ranges). Only the slow side
// is refused: delays add time, they never take it off. A slow rank shows in all its layers
// alike, not in one, and is left to the run's step times.
std::vector<std::string> layers_off_their_peers(const std::vector<traces::ProfileRecord>& profile);

// One rank's computations, each [start, end).
using ComputeSpans = std::vector<std::pair<std::int64_t, std::int64_t>>;

// Of the time some rank computes, the share during which two or more do (0 with no computation).
// A pipeline's ranks compute side by side; a run whose ranks took turns instead (they waited for
// cores: a loaded machine, or more busy threads than cores) timed that waiting into its costs.
double parallel_compute_share(const std::vector<ComputeSpans>& ranks);
// The share of recorded runs, each its actions (the median over the runs: each is on a clock of
// its own), and of a simulation.
double median_side_by_side(const std::vector<std::vector<traces::ActionRecord>>& runs);
double simulated_side_by_side(const SimulationResult& simulated);

// parallel_compute_share of the runs calibrated from and of their calibrated simulation.
struct SideBySide {
    double measured = 0;
    double simulated = 0;
    // The runs' ranks took turns where the simulation has them work side by side (it does for a
    // tenth of its computing or more, and they for under a third of that): they waited for
    // cores, and that waiting is in the fitted costs.
    bool took_turns() const { return simulated >= 0.1 && measured < simulated / 3; }
};

}  // namespace pipelens::sim
