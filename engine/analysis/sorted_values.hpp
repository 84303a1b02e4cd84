// Order statistics of a sorted multiset with a sorted part of it taken out, without building
// the rest: the straggler rules take, for each rank, the median of a kind's times on every other
// rank, and copying the other ranks' times once per rank made that quadratic in the ranks.
//
// Invariants: both inputs are sorted ascending and `removed` is a sub-multiset of `all`; the
// answer is what std::nth_element would put at position `position` of all minus removed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace pipelens::analysis {

// The value at 0-based `position` of `all` minus `removed` in ascending order; position must be
// below all.size() - removed.size().
template <typename Value>
Value nth_without(const std::vector<Value>& all, const std::vector<Value>& removed,
                  std::size_t position) {
    // How many of the remaining values are <= v grows with v; the answer is the least value of
    // `all` for which it passes position.
    const auto remaining_up_to = [&](const Value& value) {
        const auto in_all = std::upper_bound(all.begin(), all.end(), value) - all.begin();
        const auto in_removed =
            std::upper_bound(removed.begin(), removed.end(), value) - removed.begin();
        return static_cast<std::size_t>(in_all - in_removed);
    };
    std::size_t low = 0, high = all.size() - 1;
    while (low < high) {
        const std::size_t middle = low + (high - low) / 2;
        if (remaining_up_to(all[middle]) > position)
            high = middle;
        else
            low = middle + 1;
    }
    return all[low];
}

}  // namespace pipelens::analysis
