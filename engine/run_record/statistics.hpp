// The median, defined once for every figure the project sums up from many: calibration's
// per-stage times and delivery, the repeats of a profiled figure, ZeroBubbleAuto's stage times.
//
// Invariants: the median is always one of the values: of an even count the upper of the two
// middles, never an average of two, so a median time is one that was measured (and the one the
// zero-bubble authors' runtime orders with, `sorted(x)[len(x) // 2]`); 0 for no values.
#pragma once

#include <cstdint>
#include <vector>

namespace pipelens::run_record {

std::int64_t median_of(std::vector<std::int64_t> values);

// The same for values already sorted ascending.
std::int64_t median_of_sorted(const std::vector<std::int64_t>& sorted);

}  // namespace pipelens::run_record
