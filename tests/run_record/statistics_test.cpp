// The median: one of the values, of an even count the upper middle (never an average), 0 for
// none; the median a repeated timing reports is the same one.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "engine/run_record/repeated_timing.hpp"
#include "engine/run_record/statistics.hpp"

namespace pipelens::run_record {
namespace {

using Values = std::vector<std::int64_t>;

TEST(Median, TheMiddleOfAnOddCount) {
    EXPECT_EQ(median_of({7}), 7);
    EXPECT_EQ(median_of({3, 1, 2}), 2);
    EXPECT_EQ(median_of({50, -4, 9, 9, 1000}), 9);
}

TEST(Median, TheUpperMiddleOfAnEvenCountNeverAnAverage) {
    EXPECT_EQ(median_of({10, 20}), 20);                             // not 15
    EXPECT_EQ(median_of({4, 1, 3, 2}), 3);                          // not 2 or 2.5
    EXPECT_EQ(median_of({1000, 1, 3000, 2000, 5000, 4000}), 3000);  // not 2500
    EXPECT_EQ(median_of({-5, 5}), 5);
}

TEST(Median, NoValuesGiveZero) {
    EXPECT_EQ(median_of({}), 0);
    EXPECT_EQ(median_of_sorted({}), 0);
}

TEST(Median, OfSortedValuesIsTheSame) {
    EXPECT_EQ(median_of_sorted({1, 2, 3, 4}), 3);
    EXPECT_EQ(median_of_sorted({1, 2, 3}), 2);
    EXPECT_EQ(median_of_sorted({8}), 8);
}

TEST(Median, ARepeatedTimingReportsTheSameMedian) {
    EXPECT_EQ(spread_of({4, 1, 3, 2}).median, 3);
    const Spread spread = spread_of({10, 9, 8, 7, 6, 5, 4, 3, 2, 1});
    EXPECT_EQ(spread.median, 6);
    EXPECT_EQ(spread.low, 2);   // 10th percentile, nearest rank
    EXPECT_EQ(spread.high, 9);  // 90th
    EXPECT_EQ(spread.samples, 10);
    EXPECT_EQ(spread_of({}).median, 0);
}

}  // namespace
}  // namespace pipelens::run_record
