// A simulated step on a noisy machine: the schedule simulated again and again, each
// computation's time multiplied by its own factor drawn from the experiment's [jitter]
// quantiles, and the spread of the steps those draws take. A pipeline hands work over at every
// transfer and waits there for the later of two ranks, so noise that leaves every rank's total
// work unchanged on average still lengthens the step: the step of mean costs (what one
// simulation gives) is shorter than the median step a noisy machine measures.
//
// With [jitter] step_quantiles a draw is also one whole step's level: every computation of the
// draw multiplied by one more factor, drawn the same way and divided by its distribution's
// median (the costs are the median step's), so the drawn steps spread as measured ones do.
//
// Invariants: the factors are drawn by inverse transform, linear between the quantiles, then
// divided by that distribution's mean, so they average exactly 1 and noise moves no cost on
// average; a step's level has median 1; the same schedule, costs and jitter (its seed included)
// give the same figures on every machine (a fixed generator, draws in order, no library
// distribution); with all quantiles equal every draw is the noise-free step; communications are
// never scaled.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/experiment/experiment.hpp"
#include "engine/schedule/dependencies.hpp"
#include "engine/schedule/schedule.hpp"
#include "sim/cost_model.hpp"

namespace pipelens::sim {

struct StepSpread {
    std::int64_t noise_free_ns = 0;  // the step of the costs themselves
    int draws = 0;
    std::int64_t median_ns = 0;  // over the draws (run_record::spread_of, as measured steps)
    std::int64_t low_ns = 0;     // 10th percentile
    std::int64_t high_ns = 0;    // 90th percentile
    std::int64_t min_ns = 0;
    std::int64_t max_ns = 0;
};

// The most simulated actions one spread may take (draws x the lowered schedule's actions):
// about a minute of simulating on one core.
inline constexpr std::int64_t kMostJitteredActions = 200'000'000;

// The value at `probability` (0 to 1) of the distribution whose quantiles, at evenly spaced
// probabilities from 0 to 1, are `quantiles`: linear between them.
double quantile_at(const std::vector<double>& quantiles, double probability);

// That distribution's mean.
double quantile_mean(const std::vector<double>& quantiles);

// Simulates the lowered `schedule` jitter.draws times. Throws std::invalid_argument when the
// draws would simulate more than kMostJitteredActions actions (naming the figures, so the
// draws can be lowered), and what simulate throws.
StepSpread simulate_step_spread(const Schedule& lowered, const CostModel& costs,
                                const DependencyRules& rules, const JitterSpec& jitter);

}  // namespace pipelens::sim
