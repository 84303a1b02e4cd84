// Fitting [jitter]: each action over its group's mean (one stage, one kind, one step), groups of
// one left out, and the quantiles kept: every ratio when there are few, 33 evenly spaced ones
// (the fewest and the most included) when there are many.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/jitter_fit.hpp"

namespace pipelens::sim {
namespace {

TEST(JitterFit, EachActionOverItsGroupsMeanAndLoneActionsLeftOut) {
    // Means 200 and 250; the lone 50 says nothing about noise.
    const std::vector<double> ratios = duration_ratios({{100, 300}, {50}, {200, 200, 200, 400}});
    EXPECT_EQ(ratios, (std::vector<double>{0.5, 0.8, 0.8, 0.8, 1.5, 1.6}));
    const std::optional<JitterSpec> jitter = fit_jitter({{100, 300}, {50}, {200, 200, 200, 400}});
    ASSERT_TRUE(jitter);
    EXPECT_EQ(jitter->quantiles, ratios);  // fewer ratios than quantiles: every one kept
    EXPECT_EQ(jitter->draws, JitterSpec{}.draws);
    EXPECT_EQ(jitter->seed, JitterSpec{}.seed);
}

TEST(JitterFit, ManyRatiosKeepEvenlySpacedQuantilesFromTheFewestToTheMost) {
    // 101 ratios 0.50, 0.51, ..., 1.50 (one group, mean 1): quantile i is ratio round(i * 100 /
    // 32).
    std::vector<std::int64_t> group;
    for (int index = 0; index <= 100; ++index)
        group.push_back(50 + index);
    const std::optional<JitterSpec> jitter = fit_jitter({group});
    ASSERT_TRUE(jitter);
    ASSERT_EQ(jitter->quantiles.size(), std::size_t(kJitterQuantiles));
    for (int index = 0; index < kJitterQuantiles; ++index) {
        const double expected = (50.0 + std::round(index * 100.0 / 32.0)) / 100.0;
        EXPECT_DOUBLE_EQ(jitter->quantiles[static_cast<std::size_t>(index)], expected) << index;
    }
    EXPECT_DOUBLE_EQ(jitter->quantiles.front(), 0.5);
    EXPECT_DOUBLE_EQ(jitter->quantiles.back(), 1.5);
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
