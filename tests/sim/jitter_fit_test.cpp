// Fitting [jitter]: each action over its group's mean or median (one stage, one kind, one step),
// groups of one and durations of 0 or less left out, and the quantiles kept: every ratio when
// there are few, 101 at the middles of equal slices of probability when there are many.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/jitter_fit.hpp"

namespace pipelens::sim {
namespace {

TEST(JitterFit, EachActionOverItsGroupsMeanAndLoneActionsLeftOut) {
    // Means 200 and 250; the lone 50 says nothing about noise, nor does a clock that did not move.
    const std::vector<double> ratios =
        duration_ratios({{100, 300, 0}, {50}, {200, 200, 200, 400}, {-5, 70}});
    EXPECT_EQ(ratios, (std::vector<double>{0.5, 0.8, 0.8, 0.8, 1.5, 1.6}));
    // About the medians (the upper middle of two, 300, and 200) instead.
    EXPECT_EQ(duration_ratios({{100, 300}, {200, 200, 200, 400}}, JitterCentre::median),
              (std::vector<double>{100.0 / 300, 1.0, 1.0, 1.0, 1.0, 2.0}));
    const std::optional<JitterSpec> jitter = fit_jitter({{100, 300}, {50}, {200, 200, 200, 400}});
    ASSERT_TRUE(jitter);
    EXPECT_EQ(jitter->quantiles, ratios);  // fewer ratios than quantiles: every one kept
    EXPECT_EQ(jitter->draws, JitterSpec{}.draws);
    EXPECT_EQ(jitter->seed, JitterSpec{}.seed);
}

TEST(JitterFit, ManyRatiosKeepTheQuantilesAtTheMiddlesOfEqualSlices) {
    // 1001 ratios 0.500, 0.501, ..., 1.500 (one group, mean 1): quantile i is the nearest rank at
    // probability (i + 0.5) / 101, ratio round((i + 0.5) * 1001 / 101 - 0.5); the fewest and the
    // most seen are single actions, not a slice of the probability, and are not kept.
    std::vector<std::int64_t> group;
    for (int index = 0; index <= 1000; ++index)
        group.push_back(500 + index);
    const std::optional<JitterSpec> jitter = fit_jitter({group});
    ASSERT_TRUE(jitter);
    EXPECT_EQ(jitter->centre, JitterCentre::mean);
    ASSERT_EQ(jitter->quantiles.size(), std::size_t(kJitterQuantiles));
    for (int index = 0; index < kJitterQuantiles; ++index) {
        const double expected = (500.0 + std::round((index + 0.5) * 1001.0 / 101.0 - 0.5)) / 1000.0;
        EXPECT_DOUBLE_EQ(jitter->quantiles[static_cast<std::size_t>(index)], expected) << index;
    }
    EXPECT_DOUBLE_EQ(jitter->quantiles.front(), 0.504);
    EXPECT_DOUBLE_EQ(jitter->quantiles.back(), 1.496);
}

// A few ratios are kept whole, so one descheduled action could make them wider than an
// experiment may be: the top is held at kWidestJitter times the fewest.
TEST(JitterFit, AFewRatiosAreHeldToTheWidestAnExperimentTakes) {
    const std::optional<JitterSpec> jitter = fit_jitter({{10, 10, 10, 50'000}});
    ASSERT_TRUE(jitter);
    const double fewest = 40.0 / 50'030;
    EXPECT_DOUBLE_EQ(jitter->quantiles.front(), fewest);
    EXPECT_DOUBLE_EQ(jitter->quantiles.back(), fewest * kWidestJitter);
}

// A step's level: its computations added up over the median step's (the upper middle of four
// is 110); the fit keeps them beside the actions' noise.
TEST(JitterFit, WholeStepsOverTheMedianStep) {
    EXPECT_EQ(step_level_quantiles({100, 110, 90, 220}),
              (std::vector<double>{90.0 / 110, 100.0 / 110, 1.0, 2.0}));
    EXPECT_TRUE(step_level_quantiles({100}).empty());       // one step: no spread to see
    EXPECT_TRUE(step_level_quantiles({100, 100}).empty());  // no spread
    const std::optional<JitterSpec> jitter = fit_jitter({{100, 300}}, {100, 110, 90, 220});
    ASSERT_TRUE(jitter);
    EXPECT_EQ(jitter->quantiles, (std::vector<double>{0.5, 1.5}));
    EXPECT_EQ(jitter->step_quantiles, (std::vector<double>{90.0 / 110, 100.0 / 110, 1.0, 2.0}));
    EXPECT_TRUE(fit_jitter({{100, 300}})->step_quantiles.empty());
}

TEST(JitterFit, NoGroupOfTwoOrNoSpreadIsNoJitter) {
    EXPECT_FALSE(fit_jitter({}));
    EXPECT_FALSE(fit_jitter({{100}, {200}}));
    EXPECT_FALSE(fit_jitter({{0, 0}}));                 // no time to be noisy about
    EXPECT_FALSE(fit_jitter({{200, 200}, {7, 7, 7}}));  // every action at its mean: no noise
}

}  // namespace
}  // namespace pipelens::sim
