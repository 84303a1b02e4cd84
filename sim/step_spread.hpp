// A simulated step on a noisy machine: the schedule simulated again and again, each
// computation's time multiplied by its own factor drawn from the experiment's [jitter]
// quantiles, and the spread of the steps those draws take. A pipeline hands work over at every
// transfer and waits there for the later of two ranks, so noise that leaves every rank's total
// work unchanged on average still lengthens the step: the step of the costs (what one
// simulation gives) is shorter than the median step a noisy machine measures.
//
// The quantiles describe a distribution by inverse transform: the i-th of n sits at probability
// (i + 0.5) / n, values between two neighbours are linear, and below the first or above the last
// the end value holds (a sample's extremes are single actions, and a line drawn out to them would
// weigh them as a whole slice of the probability). With [jitter] step_quantiles a draw is also
// one whole step's level: every computation of the draw multiplied by one more factor, drawn the
// same way and taken over that distribution's median (the costs are the median step's).
//
// Invariants: an action's factors are taken over the distribution's mean or median, as
// JitterSpec::centre says (the statistic the costs were fitted as), so noise moves no cost on
// that statistic; a step's level has median 1; the same schedule, costs and jitter (its seed
// included) give the same figures on every machine (a fixed generator, draws in order, no library
// distribution); with all quantiles equal every draw is the noise-free step; communications are
// never scaled.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "engine/experiment/experiment.hpp"
#include "engine/schedule/dependencies.hpp"
#include "engine/schedule/schedule.hpp"
#include "sim/cost_model.hpp"

namespace pipelens::sim {

// [jitter] that cannot be drawn: more draws than kMostJitteredActions allows, or a drawn time
// past what a step can hold. The experiment's fault; the message names the key.
class JitterError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

struct StepSpread {
    std::int64_t noise_free_ns = 0;  // the step of the costs themselves
    int draws = 0;
    std::int64_t median_ns = 0;  // over the draws (run_record::spread_of, as measured steps)
    std::int64_t p10_ns = 0;
    std::int64_t p90_ns = 0;
    std::int64_t min_ns = 0;
    std::int64_t max_ns = 0;
};

// The most simulated actions one spread may take (draws x the lowered schedule's actions):
// about a minute of simulating on one core.
inline constexpr std::int64_t kMostJitteredActions = 200'000'000;

// The value at `probability` (0 to 1) of the distribution `quantiles` describe (above).
double quantile_at(const std::vector<double>& quantiles, double probability);

// That distribution's mean, and its centre as `centre` names it.
double quantile_mean(const std::vector<double>& quantiles);
double quantile_centre(const std::vector<double>& quantiles, JitterCentre centre);

// How many draws of `jitter` fit kMostJitteredActions for a lowered schedule of `actions`
// actions: its draws, or fewer (at least 1).
int draws_that_fit(const JitterSpec& jitter, std::size_t actions);

// Simulates the lowered `schedule` jitter.draws times. Throws JitterError when the draws would
// simulate more than kMostJitteredActions actions (naming how many fit) or a drawn computation
// would not fit int64 nanoseconds, and what simulate throws.
StepSpread simulate_step_spread(const Schedule& lowered, const CostModel& costs,
                                const DependencyRules& rules, const JitterSpec& jitter);

}  // namespace pipelens::sim
