// How much a machine's computations vary about their costs, fitted from measured actions for
// [jitter] (engine/experiment/experiment.hpp's JitterSpec, drawn by sim/step_spread.hpp). Each
// action is taken over the mean of its group: one stage's actions of one kind (F, I, W or B) in
// one training step, so what a stage costs, what a rank's speed is and how a step as a whole
// drifted are all divided out and only the action-to-action noise is left.
//
// A whole step's level is its computations added up over the median step's (the upper middle of
// an even count, as every median in pipelens): a step the machine ran slow as a whole.
//
// Invariants: a group of one action says nothing about noise and is left out; the quantiles
// ascend, are taken at evenly spaced probabilities from 0 to 1 (the fewest and the most seen
// included) and are never more than the ratios they come from; no ratio, no jitter.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/experiment/experiment.hpp"

namespace pipelens::sim {

// How many quantiles a fit keeps at most: 32 equal slices of probability.
inline constexpr int kJitterQuantiles = 33;

// Each group's durations (ns) over the group's mean, pooled and sorted.
std::vector<double> duration_ratios(const std::vector<std::vector<std::int64_t>>& groups);

// The quantiles of the steps' levels from each step's computations added up (nearest rank, as
// below); empty for fewer than two steps or steps that all took the same.
std::vector<double> step_level_quantiles(const std::vector<std::int64_t>& step_totals);

// The quantiles of `groups`' ratios (nearest rank, at i / (n - 1) for n = min(kJitterQuantiles,
// ratios)) and of the steps' levels, with JitterSpec's default draws and seed; nullopt when no
// group has two actions or every action took exactly its group's mean (a simulation's or a
// unit-step dump's timeline).
std::optional<JitterSpec> fit_jitter(const std::vector<std::vector<std::int64_t>>& groups,
                                     const std::vector<std::int64_t>& step_totals = {});

}  // namespace pipelens::sim
