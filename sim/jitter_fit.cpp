// Fitting [jitter] from measured actions (see jitter_fit.hpp).
#include "sim/jitter_fit.hpp"

#include <algorithm>
#include <cmath>

#include "engine/run_record/statistics.hpp"

namespace pipelens::sim {
namespace {

// At most kJitterQuantiles of `sorted`, nearest rank at evenly spaced probabilities from 0 to 1.
std::vector<double> evenly_spaced_quantiles(const std::vector<double>& sorted) {
    const std::size_t count = std::min(static_cast<std::size_t>(kJitterQuantiles), sorted.size());
    std::vector<double> quantiles;
    for (std::size_t index = 0; index < count; ++index) {
        const double position = static_cast<double>(index) *
                                static_cast<double>(sorted.size() - 1) /
                                static_cast<double>(count - 1);
        quantiles.push_back(sorted[static_cast<std::size_t>(std::llround(position))]);
    }
    return quantiles;
}

}  // namespace

std::vector<double> duration_ratios(const std::vector<std::vector<std::int64_t>>& groups) {
    std::vector<double> ratios;
    for (const std::vector<std::int64_t>& group : groups) {
        if (group.size() < 2)
            continue;
        double sum = 0;
        for (std::int64_t duration : group)
            sum += static_cast<double>(duration);
        const double mean = sum / static_cast<double>(group.size());
        if (!(mean > 0))
            continue;
        for (std::int64_t duration : group)
            ratios.push_back(static_cast<double>(duration) / mean);
    }
    std::sort(ratios.begin(), ratios.end());
    return ratios;
}

std::vector<double> step_level_quantiles(const std::vector<std::int64_t>& step_totals) {
    const std::int64_t median = run_record::median_of(step_totals);
    if (step_totals.size() < 2 || median <= 0)
        return {};
    std::vector<double> levels;
    for (std::int64_t total : step_totals)
        levels.push_back(static_cast<double>(total) / static_cast<double>(median));
    std::sort(levels.begin(), levels.end());
    if (levels.front() == levels.back() || !(levels.front() > 0))
        return {};
    return evenly_spaced_quantiles(levels);
}

std::optional<JitterSpec> fit_jitter(const std::vector<std::vector<std::int64_t>>& groups,
                                     const std::vector<std::int64_t>& step_totals) {
    const std::vector<double> ratios = duration_ratios(groups);
    if (ratios.empty() || ratios.front() == ratios.back())  // no noise seen: nothing to draw
        return std::nullopt;
    JitterSpec jitter;  // groups of two or more: at least two ratios, so two quantiles or more
    jitter.quantiles = evenly_spaced_quantiles(ratios);
    jitter.step_quantiles = step_level_quantiles(step_totals);
    return jitter;
}

}  // namespace pipelens::sim
