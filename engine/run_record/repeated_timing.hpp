// Timing something that takes microseconds to milliseconds on a shared machine: repeat it,
// drop the warm-up, and stop once the median has settled (or the budget is spent), keeping the
// spread so a reader can tell a steady figure from a noisy one. Torch-free: the timed work is a
// callback.
//
// Invariants: warm-up runs are never in the samples; at least `min_samples` are taken unless
// the budget ends first, and never fewer than 3; low <= median <= high.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

namespace pipelens::run_record {

struct Spread {
    std::int64_t median = 0;
    std::int64_t low = 0;   // 10th percentile
    std::int64_t high = 0;  // 90th percentile
    int samples = 0;
};

// The median (median_of's) and the 10th/90th percentiles by nearest rank (of 10 samples the
// 1st and the 9th smallest, of 7 the 1st and the 7th); all zero for no samples.
Spread spread_of(std::vector<std::int64_t> samples);

struct RepeatRule {
    int warmup = 1;
    int batch = 5;  // samples between stability checks
    int min_samples = 10;
    int max_samples = 60;
    double settled = 0.02;  // the median moved less than this (relative) over the last batch
    std::chrono::nanoseconds budget{std::chrono::milliseconds(200)};  // warm-up included
};

// Calls `timed_run` (which returns the ns it measured) until the rule is met.
Spread repeat_until_stable(const std::function<std::int64_t()>& timed_run, const RepeatRule& rule);

}  // namespace pipelens::run_record
