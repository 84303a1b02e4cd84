// Drawing a noisy machine's steps (see step_spread.hpp). The generator is std::mt19937_64, whose
// sequence the C++ standard fixes, and a uniform number is its top 53 bits: the library's
// distributions are not fixed by the standard, and a prediction must not change with it.
#include "sim/step_spread.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "engine/run_record/repeated_timing.hpp"
#include "sim/simulator.hpp"

namespace pipelens::sim {
namespace {

double uniform(std::mt19937_64& generator) {
    return static_cast<double>(generator() >> 11) * 0x1.0p-53;
}

}  // namespace

double quantile_at(const std::vector<double>& quantiles, double probability) {
    if (quantiles.empty())
        return 1.0;
    const auto count = static_cast<double>(quantiles.size());
    const double position = std::clamp(probability * count - 0.5, 0.0, count - 1);
    const auto below = static_cast<std::size_t>(position);
    if (below + 1 >= quantiles.size())
        return quantiles.back();
    const double fraction = position - static_cast<double>(below);
    return quantiles[below] + fraction * (quantiles[below + 1] - quantiles[below]);
}

double quantile_mean(const std::vector<double>& quantiles) {
    if (quantiles.empty())
        return 1.0;
    // Half a slice of probability at each end holds its end value; each slice between two
    // neighbours holds their average.
    const auto count = static_cast<double>(quantiles.size());
    double sum = (quantiles.front() + quantiles.back()) / 2;
    for (std::size_t index = 0; index + 1 < quantiles.size(); ++index)
        sum += (quantiles[index] + quantiles[index + 1]) / 2;
    return sum / count;
}

double quantile_centre(const std::vector<double>& quantiles, JitterCentre centre) {
    return centre == JitterCentre::median ? quantile_at(quantiles, 0.5) : quantile_mean(quantiles);
}

int draws_that_fit(const JitterSpec& jitter, std::size_t actions) {
    const std::int64_t most =
        kMostJitteredActions / static_cast<std::int64_t>(std::max<std::size_t>(actions, 1));
    return static_cast<int>(std::clamp<std::int64_t>(most, 1, jitter.draws));
}

StepSpread simulate_step_spread(const Schedule& lowered, const CostModel& costs,
                                const DependencyRules& rules, const JitterSpec& jitter) {
    const std::size_t actions = lowered.action_count();
    if (jitter.draws < 1)
        throw JitterError(
            fmt::format("jitter.draws: {} draws: give 1 to {}", jitter.draws, kMostJitterDraws));
    if (draws_that_fit(jitter, actions) < jitter.draws)
        throw JitterError(fmt::format(
            "jitter.draws: {} draws of {} actions would simulate more than {} actions; give "
            "fewer draws (at most {})",
            jitter.draws, actions, kMostJitteredActions, draws_that_fit(jitter, actions)));
    StepSpread spread;
    spread.noise_free_ns = simulate(lowered, costs, rules).step_time_ns;
    spread.draws = jitter.draws;
    const double centre = quantile_centre(jitter.quantiles, jitter.centre);
    const bool whole_steps = !jitter.step_quantiles.empty();
    const double median_level = whole_steps ? quantile_at(jitter.step_quantiles, 0.5) : 1.0;
    std::mt19937_64 generator(static_cast<std::uint64_t>(jitter.seed));
    std::vector<double> factors(actions, 1.0);
    std::vector<std::int64_t> steps;
    steps.reserve(static_cast<std::size_t>(jitter.draws));
    for (int draw = 0; draw < jitter.draws; ++draw) {
        const double level =
            whole_steps ? quantile_at(jitter.step_quantiles, uniform(generator)) / median_level
                        : 1.0;
        for (double& factor : factors)
            factor = level * quantile_at(jitter.quantiles, uniform(generator)) / centre;
        try {
            steps.push_back(simulate(lowered, costs, rules, factors).step_time_ns);
        } catch (const std::overflow_error& error) {
            throw JitterError(fmt::format("jitter: {}", error.what()));
        }
    }
    const auto [fewest, most] = std::minmax_element(steps.begin(), steps.end());
    spread.min_ns = *fewest;
    spread.max_ns = *most;
    const run_record::Spread figures = run_record::spread_of(std::move(steps));
    spread.median_ns = figures.median;
    spread.p10_ns = figures.low;
    spread.p90_ns = figures.high;
    return spread;
}

}  // namespace pipelens::sim
