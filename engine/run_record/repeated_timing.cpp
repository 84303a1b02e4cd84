// The stability rule. The median, not the mean, decides: one descheduled repetition on a busy
// machine moves a mean by its whole excess but a median not at all.
#include "engine/run_record/repeated_timing.hpp"

#include <algorithm>
#include <cmath>

#include "engine/run_record/statistics.hpp"

namespace pipelens::run_record {
namespace {

// The nearest-rank percentile: the smallest sample at or above `percent` % of them, the
// ceil(percent / 100 * n)-th. In integers, since 0.1 * 30 is 3.0000000000000004 in doubles.
std::int64_t nearest_rank(const std::vector<std::int64_t>& sorted, std::size_t percent) {
    const std::size_t rank = std::max<std::size_t>(1, (percent * sorted.size() + 99) / 100);
    return sorted[std::min(rank, sorted.size()) - 1];
}

bool has_settled(std::int64_t before, std::int64_t now, double tolerance) {
    if (before <= 0)
        return now <= 0;
    return std::abs(static_cast<double>(now - before)) <= tolerance * static_cast<double>(before);
}

}  // namespace

Spread spread_of(std::vector<std::int64_t> samples) {
    if (samples.empty())
        return {};
    std::sort(samples.begin(), samples.end());
    return {median_of_sorted(samples), nearest_rank(samples, 10), nearest_rank(samples, 90),
            static_cast<int>(samples.size())};
}

Spread repeat_until_stable(const std::function<std::int64_t()>& timed_run, const RepeatRule& rule) {
    const auto deadline = std::chrono::steady_clock::now() + rule.budget;
    for (int run = 0; run < rule.warmup; ++run)
        timed_run();
    std::vector<std::int64_t> samples;
    std::int64_t previous_median = -1;
    for (;;) {
        samples.push_back(timed_run());
        const int count = static_cast<int>(samples.size());
        const bool out_of_time = std::chrono::steady_clock::now() >= deadline;
        if (count >= rule.max_samples || (out_of_time && count >= 3))
            break;
        if (count % rule.batch != 0)
            continue;
        const std::int64_t median = spread_of(samples).median;
        if (count >= rule.min_samples && has_settled(previous_median, median, rule.settled))
            break;
        previous_median = median;
    }
    return spread_of(std::move(samples));
}

}  // namespace pipelens::run_record
