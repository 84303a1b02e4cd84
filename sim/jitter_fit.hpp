// How much a machine's computations vary about their costs, fitted from measured actions for
// [jitter] (engine/experiment/experiment.hpp's JitterSpec, drawn by sim/step_spread.hpp). Each
// action is taken over the centre of its group: one stage's actions of one kind (F, I, W or B)
// in one training step, so what a stage costs, what a rank's speed is and how a step as a whole
// drifted are all divided out and only the action-to-action noise is left. The centre is the
// statistic the costs were fitted as: the mean with a profile, the median without
// (sim/calibration.hpp). A group of n actions shows (n - 1) / n of the noise's variance about
// its mean (the mean holds each action too): an 8-microbatch run's groups understate it by an
// eighth.
//
// A whole step's level is its computations added up over the median step's (the upper middle of
// an even count, as every median in pipelens): a step the machine ran slow as a whole.
//
// Invariants: durations of 0 or less (a clock that did not move, two clocks) are left out; a
// group of one action says nothing about noise and is left out; the i-th of n quantiles is the
// sorted ratios' nearest rank at probability (i + 0.5) / n, so they ascend and each is one of the
// ratios; no ratio, or no spread among them, no jitter.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/experiment/experiment.hpp"

namespace pipelens::sim {

// How many quantiles a fit keeps at most.
inline constexpr int kJitterQuantiles = 101;

// Each group's positive durations (ns) over the group's centre, pooled and sorted.
std::vector<double> duration_ratios(const std::vector<std::vector<std::int64_t>>& groups,
                                    JitterCentre centre = JitterCentre::mean);

// At most kJitterQuantiles of `sorted` (above); all of them when there are no more.
std::vector<double> probability_quantiles(const std::vector<double>& sorted);

// The quantiles of the steps' levels from each step's computations added up; empty for fewer
// than two steps or steps that all took the same.
std::vector<double> step_level_quantiles(const std::vector<std::int64_t>& step_totals);

// The quantiles of `groups`' ratios about `centre` and of the steps' levels, with JitterSpec's
// default draws and seed; nullopt when no group has two actions or every action took exactly its
// group's centre (a simulation's or a unit-step dump's timeline).
std::optional<JitterSpec> fit_jitter(const std::vector<std::vector<std::int64_t>>& groups,
                                     const std::vector<std::int64_t>& step_totals = {},
                                     JitterCentre centre = JitterCentre::mean);

}  // namespace pipelens::sim
