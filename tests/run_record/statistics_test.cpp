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
    EXPECT_EQ(spread.low, 1);   // 10th percentile by nearest rank: the ceil(0.1 x 10) = 1st
    EXPECT_EQ(spread.high, 9);  // 90th: the ceil(0.9 x 10) = 9th
    EXPECT_EQ(spread.samples, 10);
    EXPECT_EQ(spread_of({}).median, 0);
}

// Nearest rank: the ceil(p x n)-th smallest, so p10 and p90 of 7 are the 1st and the 7th, of 6
// the 1st and the 6th (symmetric; rounding an index once made them the 2nd and the 6th), of 30
// the 3rd and the 27th (0.1 x 30 in doubles is just above 3).
TEST(Median, PercentilesAreNearestRank) {
    const auto low_high = [](int count) {
        std::vector<std::int64_t> samples;
        for (int value = count; value >= 1; --value)
            samples.push_back(value);
        const Spread spread = spread_of(samples);
        return std::vector<std::int64_t>{spread.low, spread.high};
    };
    EXPECT_EQ(low_high(1), (std::vector<std::int64_t>{1, 1}));
    EXPECT_EQ(low_high(6), (std::vector<std::int64_t>{1, 6}));
    EXPECT_EQ(low_high(7), (std::vector<std::int64_t>{1, 7}));
    EXPECT_EQ(low_high(11), (std::vector<std::int64_t>{2, 10}));
    EXPECT_EQ(low_high(20), (std::vector<std::int64_t>{2, 18}));
    EXPECT_EQ(low_high(30), (std::vector<std::int64_t>{3, 27}));
    EXPECT_EQ(low_high(1000), (std::vector<std::int64_t>{100, 900}));
}

}  // namespace
}  // namespace pipelens::run_record
