// The median calibration takes of figures and repeats: the upper middle of an even count (a
// value that was measured, never an average of two), 0 for none.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace pipelens::sim {

inline std::int64_t median_of(std::vector<std::int64_t> values) {
    if (values.empty())
        return 0;
    const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
    std::nth_element(values.begin(), middle, values.end());
    return *middle;
}

}  // namespace pipelens::sim
