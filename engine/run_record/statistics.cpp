// The median's index, size / 2: the middle of an odd count, the upper middle of an even one.
#include "engine/run_record/statistics.hpp"

#include <algorithm>

namespace pipelens::run_record {

std::int64_t median_of_sorted(const std::vector<std::int64_t>& sorted) {
    return sorted.empty() ? 0 : sorted[sorted.size() / 2];
}

std::int64_t median_of(std::vector<std::int64_t> values) {
    if (values.empty())
        return 0;
    const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
    std::nth_element(values.begin(), middle, values.end());
    return *middle;
}

}  // namespace pipelens::run_record
