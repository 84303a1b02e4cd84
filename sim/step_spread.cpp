// Drawing a noisy machine's steps (see step_spread.hpp). The generator is std::mt19937_64, whose
// sequence the C++ standard fixes, and a uniform number is its top 53 bits: the library's
// distributions are not fixed by the standard, and a prediction must not change with it.
#include "sim/step_spread.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/run_record/repeated_timing.hpp"
#include "sim/simulator.hpp"

namespace pipelens::sim {
namespace {

double uniform(std::mt19937_64& generator) {
    return static_cast<double>(generator() >> 11) * 0x1.0p-53;
}

std::size_t action_count(const Schedule& schedule) {
    std::size_t actions = 0;
    for (const auto& rank : schedule.ranks)
        actions += rank.size();
    return actions;
}

}  // namespace

double quantile_at(const std::vector<double>& quantiles, double probability) {
    if (quantiles.empty())
        return 1.0;
    if (quantiles.size() == 1)
        return quantiles.front();
    const double position =
        std::clamp(probability, 0.0, 1.0) * static_cast<double>(quantiles.size() - 1);
    const auto below = std::min(static_cast<std::size_t>(position), quantiles.size() - 2);
    const double fraction = position - static_cast<double>(below);
    return quantiles[below] + fraction * (quantiles[below + 1] - quantiles[below]);
}

double quantile_mean(const std::vector<double>& quantiles) {
    if (quantiles.size() < 2)
        return quantiles.empty() ? 1.0 : quantiles.front();
    double sum = 0;  // each segment holds an equal share of the probability
    for (std::size_t index = 0; index + 1 < quantiles.size(); ++index)
        sum += (quantiles[index] + quantiles[index + 1]) / 2;
    return sum / static_cast<double>(quantiles.size() - 1);
}

StepSpread simulate_step_spread(const Schedule& lowered, const CostModel& costs,
                                const DependencyRules& rules, const JitterSpec& jitter) {
    const std::size_t actions = action_count(lowered);
    if (static_cast<double>(actions) * jitter.draws > static_cast<double>(kMostJitteredActions))
        throw std::invalid_argument(fmt::format(
            "jitter.draws: {} draws of {} actions would simulate more than {} actions; give "
            "fewer draws (at most {})",
            jitter.draws, actions, kMostJitteredActions,
            std::max<std::int64_t>(1, kMostJitteredActions / std::max<std::size_t>(actions, 1))));
    StepSpread spread;
    spread.noise_free_ns = simulate(lowered, costs, rules).step_time_ns;
    spread.draws = jitter.draws;
    const double mean = quantile_mean(jitter.quantiles);
    // The costs are the median step's level (calibration's median over steps), so a step's own
    // level is taken over the median of the steps' levels.
    const bool whole_steps = !jitter.step_quantiles.empty();
    const double median_level = whole_steps ? quantile_at(jitter.step_quantiles, 0.5) : 1.0;
    std::mt19937_64 generator(jitter.seed);
    std::vector<double> factors(actions, 1.0);
    std::vector<std::int64_t> steps;
    steps.reserve(static_cast<std::size_t>(jitter.draws));
    for (int draw = 0; draw < jitter.draws; ++draw) {
        const double level =
            whole_steps ? quantile_at(jitter.step_quantiles, uniform(generator)) / median_level
                        : 1.0;
        for (double& factor : factors)
            factor = level * quantile_at(jitter.quantiles, uniform(generator)) / mean;
        steps.push_back(simulate(lowered, costs, rules, factors).step_time_ns);
    }
    const auto [fewest, most] = std::minmax_element(steps.begin(), steps.end());
    spread.min_ns = *fewest;
    spread.max_ns = *most;
    const run_record::Spread figures = run_record::spread_of(std::move(steps));
    spread.median_ns = figures.median;
    spread.low_ns = figures.low;
    spread.high_ns = figures.high;
    return spread;
}

}  // namespace pipelens::sim
