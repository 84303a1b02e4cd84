// Fitting [jitter] from measured actions (see jitter_fit.hpp).
#include "sim/jitter_fit.hpp"

#include <algorithm>
#include <cmath>

#include "engine/run_record/statistics.hpp"

namespace pipelens::sim {
namespace {

std::vector<std::int64_t> positive(const std::vector<std::int64_t>& durations) {
    std::vector<std::int64_t> kept;
    std::copy_if(durations.begin(), durations.end(), std::back_inserter(kept),
                 [](std::int64_t duration) { return duration > 0; });
    return kept;
}

double centre_of(const std::vector<std::int64_t>& durations, JitterCentre centre) {
    if (centre == JitterCentre::median)
        return static_cast<double>(run_record::median_of(durations));
    double sum = 0;
    for (std::int64_t duration : durations)
        sum += static_cast<double>(duration);
    return sum / static_cast<double>(durations.size());
}

// A few actions' ratios are kept whole, extremes included: one descheduled microsecond action
// could make them wider than any experiment may be (kWidestJitter), so the top is held there.
std::vector<double> held_to_widest(std::vector<double> quantiles) {
    for (double& value : quantiles)
        value = std::min(value, quantiles.front() * kWidestJitter);
    return quantiles;
}

}  // namespace

std::vector<double> duration_ratios(const std::vector<std::vector<std::int64_t>>& groups,
                                    JitterCentre centre) {
    std::vector<double> ratios;
    for (const std::vector<std::int64_t>& group : groups) {
        const std::vector<std::int64_t> durations = positive(group);
        if (durations.size() < 2)
            continue;
        const double typical = centre_of(durations, centre);
        for (std::int64_t duration : durations)
            ratios.push_back(static_cast<double>(duration) / typical);
    }
    std::sort(ratios.begin(), ratios.end());
    return ratios;
}

std::vector<double> probability_quantiles(const std::vector<double>& sorted) {
    const std::size_t count = std::min(static_cast<std::size_t>(kJitterQuantiles), sorted.size());
    std::vector<double> quantiles;
    for (std::size_t index = 0; index < count; ++index) {
        const double probability = (static_cast<double>(index) + 0.5) / static_cast<double>(count);
        const double rank = probability * static_cast<double>(sorted.size()) - 0.5;
        const auto nearest = static_cast<std::size_t>(std::clamp<long long>(
            std::llround(rank), 0, static_cast<long long>(sorted.size()) - 1));
        quantiles.push_back(sorted[nearest]);
    }
    return quantiles;
}

std::vector<double> step_level_quantiles(const std::vector<std::int64_t>& step_totals) {
    const std::vector<std::int64_t> totals = positive(step_totals);
    const std::int64_t median = run_record::median_of(totals);
    if (totals.size() < 2 || median <= 0)
        return {};
    std::vector<double> levels;
    for (std::int64_t total : totals)
        levels.push_back(static_cast<double>(total) / static_cast<double>(median));
    std::sort(levels.begin(), levels.end());
    if (levels.front() == levels.back())
        return {};
    return held_to_widest(probability_quantiles(levels));
}

std::optional<JitterSpec> fit_jitter(const std::vector<std::vector<std::int64_t>>& groups,
                                     const std::vector<std::int64_t>& step_totals,
                                     JitterCentre centre) {
    const std::vector<double> ratios = duration_ratios(groups, centre);
    if (ratios.empty() || ratios.front() == ratios.back())  // no noise seen: nothing to draw
        return std::nullopt;
    JitterSpec jitter;  // groups of two or more: at least two ratios, so two quantiles or more
    jitter.quantiles = held_to_widest(probability_quantiles(ratios));
    jitter.step_quantiles = step_level_quantiles(step_totals);
    jitter.centre = centre;
    return jitter;
}

}  // namespace pipelens::sim
