// Fitting [jitter] from measured actions (see jitter_fit.hpp).
#include "sim/jitter_fit.hpp"

#include <algorithm>
#include <cmath>

namespace pipelens::sim {

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

std::optional<JitterSpec> fit_jitter(const std::vector<std::vector<std::int64_t>>& groups) {
    const std::vector<double> ratios = duration_ratios(groups);
    if (ratios.empty() || ratios.front() == ratios.back())  // no noise seen: nothing to draw
        return std::nullopt;
    const std::size_t count = std::min(static_cast<std::size_t>(kJitterQuantiles), ratios.size());
    JitterSpec jitter;  // groups of two or more: at least two ratios, so count >= 2
    for (std::size_t index = 0; index < count; ++index) {
        const double position = static_cast<double>(index) *
                                static_cast<double>(ratios.size() - 1) /
                                static_cast<double>(count - 1);
        jitter.quantiles.push_back(ratios[static_cast<std::size_t>(std::llround(position))]);
    }
    return jitter;
}

}  // namespace pipelens::sim
