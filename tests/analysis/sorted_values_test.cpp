// nth_without: order statistics of a sorted multiset less a sorted part of it, checked against
// the values written out, duplicates and an empty removal included.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "engine/analysis/sorted_values.hpp"

namespace pipelens::analysis {
namespace {

TEST(NthWithout, NothingRemovedIsThePlainOrderStatistic) {
    const std::vector<std::int64_t> all{1, 3, 3, 7, 9};
    EXPECT_EQ(nth_without(all, {}, 0), 1);
    EXPECT_EQ(nth_without(all, {}, 2), 3);
    EXPECT_EQ(nth_without(all, {}, 4), 9);
}

TEST(NthWithout, RemovedValuesAreSkippedOncePerCopy) {
    // {1, 3, 3, 3, 7, 9, 9} less {3, 9} leaves {1, 3, 3, 7, 9}.
    const std::vector<std::int64_t> all{1, 3, 3, 3, 7, 9, 9};
    const std::vector<std::int64_t> removed{3, 9};
    EXPECT_EQ(nth_without(all, removed, 0), 1);
    EXPECT_EQ(nth_without(all, removed, 1), 3);
    EXPECT_EQ(nth_without(all, removed, 2), 3);
    EXPECT_EQ(nth_without(all, removed, 3), 7);
    EXPECT_EQ(nth_without(all, removed, 4), 9);
}

TEST(NthWithout, RemovingTheSmallestShiftsTheMedian) {
    // {2, 4, 6, 8} less {2, 4} leaves {6, 8}: the upper median (position 1) is 8.
    const std::vector<std::int64_t> all{2, 4, 6, 8};
    EXPECT_EQ(nth_without(all, {2, 4}, 1), 8);
    EXPECT_EQ(nth_without(all, {6, 8}, 1), 4);
}

}  // namespace
}  // namespace pipelens::analysis
