// The step on a noisy machine: the quantile distribution [jitter] draws from, each draw's
// factors applied to exactly the computation they belong to, factors that average 1 (so a chain
// of work keeps its length in the median), the longer median step of a pipeline whose ranks
// meet at every hand-over, and the bound on how much a spread may simulate.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "sim/simulator.hpp"
#include "sim/step_spread.hpp"
#include "tests/thrown_message.hpp"

namespace pipelens::sim {
namespace {

CostModel costs_of(std::int64_t forward, std::int64_t input, std::int64_t weight) {
    CostModel costs;
    costs.stages = {StageCost{forward, input, weight, std::nullopt}};
    return costs;
}

Schedule lowered(ScheduleKind kind, int pp, int v, int m) {
    return lower(generate_schedule({kind, pp, v, m}));
}

JitterSpec jitter_of(std::vector<double> quantiles, int draws = 401) {
    JitterSpec jitter;
    jitter.quantiles = std::move(quantiles);
    jitter.draws = draws;
    return jitter;
}

// Three quantiles sit at probabilities 1/6, 1/2 and 5/6: linear between, the end values beyond.
TEST(StepSpread, QuantilesSitMidSliceAndAreLinearBetween) {
    const std::vector<double> quantiles = {0.5, 1.0, 2.0};
    EXPECT_DOUBLE_EQ(quantile_at(quantiles, 0.0), 0.5);
    EXPECT_DOUBLE_EQ(quantile_at(quantiles, 1.0 / 6), 0.5);
    EXPECT_DOUBLE_EQ(quantile_at(quantiles, 1.0 / 3), 0.75);
    EXPECT_DOUBLE_EQ(quantile_at(quantiles, 0.5), 1.0);
    EXPECT_DOUBLE_EQ(quantile_at(quantiles, 2.0 / 3), 1.5);
    EXPECT_DOUBLE_EQ(quantile_at(quantiles, 5.0 / 6), 2.0);
    EXPECT_DOUBLE_EQ(quantile_at(quantiles, 1.0), 2.0);
    EXPECT_DOUBLE_EQ(quantile_at(quantiles, -1.0), 0.5);  // clamped
    EXPECT_DOUBLE_EQ(quantile_at(quantiles, 2.0), 2.0);
    // A sixth at each end value, a third on each line: (0.5 + 2) / 6 + (0.75 + 1.5) / 3.
    EXPECT_DOUBLE_EQ(quantile_mean(quantiles), 3.5 / 3);
    EXPECT_DOUBLE_EQ(quantile_centre(quantiles, JitterCentre::mean), 3.5 / 3);
    EXPECT_DOUBLE_EQ(quantile_centre(quantiles, JitterCentre::median), 1.0);
    EXPECT_DOUBLE_EQ(quantile_mean({0.8, 1.2}), 1.0);
}

// One factor moves exactly its own computation: rank 0's F of GPipe pp=2 m=1 at 2x delays the
// whole chain F0 -> F1 -> B1 -> B0 by one F, and a factor on a communication is not read.
TEST(StepSpread, EachFactorScalesExactlyItsOwnComputation) {
    const Schedule schedule = lowered(ScheduleKind::gpipe, 2, 1, 1);
    const CostModel costs = costs_of(1000, 600, 400);
    ASSERT_EQ(simulate(schedule, costs).step_time_ns, 2 * 1000 + 2 * 1000);
    std::vector<double> factors(schedule.action_count(), 1.0);
    const auto& rank0 = schedule.ranks[0];
    const auto forward = std::find_if(rank0.begin(), rank0.end(), [](const Action& action) {
        return action.kind == ActionKind::forward;
    });
    ASSERT_NE(forward, rank0.end());
    factors[static_cast<std::size_t>(forward - rank0.begin())] = 2.0;
    for (std::size_t index = 0; index < rank0.size(); ++index)
        if (is_communication(rank0[index].kind))
            factors[index] = 50.0;
    const SimulationResult result = simulate(schedule, costs, rules_for(costs), factors);
    EXPECT_EQ(result.step_time_ns, 5000);
    EXPECT_EQ(result.timeline[static_cast<std::size_t>(forward - rank0.begin())].end_ns, 2000);
}

// The factors are laid out rank by rank: the F of GPipe pp=2 m=1's rank 1 at 3x, read from rank
// 1's own place, lengthens the chain by two F and ends where its rank's timeline says.
TEST(StepSpread, ALaterRanksFactorIsReadAtItsOwnPlace) {
    const Schedule schedule = lowered(ScheduleKind::gpipe, 2, 1, 1);
    const CostModel costs = costs_of(1000, 600, 400);
    std::vector<double> factors(schedule.action_count(), 1.0);
    const std::size_t rank1_start = schedule.ranks[0].size();
    const auto& rank1 = schedule.ranks[1];
    const auto forward = std::find_if(rank1.begin(), rank1.end(), [](const Action& action) {
        return action.kind == ActionKind::forward;
    });
    ASSERT_NE(forward, rank1.end());
    const std::size_t index = rank1_start + static_cast<std::size_t>(forward - rank1.begin());
    factors[index] = 3.0;
    const SimulationResult result = simulate(schedule, costs, rules_for(costs), factors);
    EXPECT_EQ(result.step_time_ns, 4000 + 2000);
    EXPECT_EQ(result.timeline[index].end_ns - result.timeline[index].start_ns, 3000);
}

TEST(StepSpread, FactorsNeedTheLoweredScheduleAndOnePerAction) {
    const CostModel costs = costs_of(1000, 1000, 1000);
    const Schedule compute_only = generate_schedule({ScheduleKind::one_f_one_b, 2, 1, 2});
    EXPECT_NE(testing::thrown_message<std::invalid_argument>(
                  [&] { simulate(compute_only, costs, rules_for(costs), {1.0}); }, "")
                  .find("not lowered"),
              std::string::npos);
    const Schedule schedule = lowered(ScheduleKind::one_f_one_b, 2, 1, 2);
    const std::string message = testing::thrown_message<std::invalid_argument>(
        [&] {
            simulate(schedule, costs, rules_for(costs), {1.0, 1.0});
        },
        "");
    EXPECT_NE(message.find("2 factors for " + std::to_string(schedule.action_count()) + " actions"),
              std::string::npos)
        << message;
}

TEST(StepSpread, EqualQuantilesDrawTheNoiseFreeStepEveryTime) {
    const Schedule schedule = lowered(ScheduleKind::one_f_one_b, 4, 1, 8);
    const CostModel costs = costs_of(1000, 1000, 1000);
    const StepSpread spread =
        simulate_step_spread(schedule, costs, rules_for(costs), jitter_of({1.3, 1.3}, 20));
    EXPECT_EQ(spread.noise_free_ns, (8 + 4 - 1) * 3000);
    EXPECT_EQ(spread.draws, 20);
    for (std::int64_t figure :
         {spread.median_ns, spread.p10_ns, spread.p90_ns, spread.min_ns, spread.max_ns})
        EXPECT_EQ(figure, spread.noise_free_ns);
}

// A chain has nothing to wait for but itself: its median step stays at the noise-free one
// even when the quantiles average 2 (they are divided by their mean), while the pipeline's
// ranks meet at every hand-over and wait for the later one, which lengthens its median step.
TEST(StepSpread, NoiseLengthensAPipelineButNotAChain) {
    const CostModel costs = costs_of(1000, 1000, 1000);
    const Schedule chain = lowered(ScheduleKind::gpipe, 2, 1, 1);
    const StepSpread alone =
        simulate_step_spread(chain, costs, rules_for(costs), jitter_of({1.0, 3.0}));
    EXPECT_NEAR(static_cast<double>(alone.median_ns) / static_cast<double>(alone.noise_free_ns),
                1.0, 0.03);
    EXPECT_LT(alone.min_ns, alone.p10_ns);
    EXPECT_LT(alone.p90_ns, alone.max_ns);

    const Schedule pipeline = lowered(ScheduleKind::one_f_one_b, 4, 1, 8);
    const StepSpread spread =
        simulate_step_spread(pipeline, costs, rules_for(costs), jitter_of({0.5, 1.5}));
    EXPECT_GT(static_cast<double>(spread.median_ns),
              1.03 * static_cast<double>(spread.noise_free_ns));
    EXPECT_LE(spread.min_ns, spread.p10_ns);
    EXPECT_LE(spread.p10_ns, spread.median_ns);
    EXPECT_LE(spread.median_ns, spread.p90_ns);
    EXPECT_LE(spread.p90_ns, spread.max_ns);
}

// With whole-step levels only (every action at its cost within a draw), a draw is the noise-free
// step times its level, and the levels are taken over their median (not their mean): levels
// at 0.5 up to probability 1/6, 0.5 to 1 up to 1/2, 1 to 3 up to 5/6 and 3 beyond draw steps
// from 0.5 to 3 times the noise-free one, with the noise-free step as their median and p10/p90
// at the end values.
TEST(StepSpread, WholeStepLevelsSpreadTheStepAboutItsMedian) {
    const Schedule schedule = lowered(ScheduleKind::one_f_one_b, 4, 1, 8);
    const CostModel costs = costs_of(1000, 1000, 1000);
    JitterSpec jitter = jitter_of({1.0, 1.0}, 2001);
    jitter.step_quantiles = {0.5, 1.0, 3.0};
    const StepSpread spread = simulate_step_spread(schedule, costs, rules_for(costs), jitter);
    const auto relative = [&](std::int64_t ns) {
        return static_cast<double>(ns) / static_cast<double>(spread.noise_free_ns);
    };
    EXPECT_NEAR(relative(spread.median_ns), 1.0, 0.03);
    EXPECT_NEAR(relative(spread.p10_ns), 0.5, 0.001);
    EXPECT_NEAR(relative(spread.p90_ns), 3.0, 0.001);
    EXPECT_GE(relative(spread.min_ns), 0.5 - 1e-3);
    EXPECT_LE(relative(spread.max_ns), 3.0 + 1e-3);
}

// The figures a seed draws are fixed on every machine (the generator and the arithmetic are):
// these are the ones it drew when the test was written.
TEST(StepSpread, ASeedDrawsTheSameFiguresEverywhere) {
    const Schedule schedule = lowered(ScheduleKind::one_f_one_b, 4, 1, 8);
    const CostModel costs = costs_of(1000, 1000, 1000);
    JitterSpec jitter = jitter_of({0.6, 0.9, 1.0, 1.1, 2.0}, 101);
    jitter.step_quantiles = {0.95, 1.0, 1.1};
    jitter.seed = 42;
    const StepSpread spread = simulate_step_spread(schedule, costs, rules_for(costs), jitter);
    EXPECT_EQ(spread.noise_free_ns, 33000);
    EXPECT_EQ(spread.median_ns, 38540);
    EXPECT_EQ(spread.p10_ns, 34567);
    EXPECT_EQ(spread.p90_ns, 42094);
    EXPECT_EQ(spread.min_ns, 31893);
    EXPECT_EQ(spread.max_ns, 45757);
}

TEST(StepSpread, TheSameSeedDrawsTheSameSteps) {
    const Schedule schedule = lowered(ScheduleKind::interleaved_1f1b, 2, 2, 4);
    const CostModel costs = costs_of(1000, 700, 500);
    JitterSpec jitter = jitter_of({0.6, 0.9, 1.0, 1.1, 2.5}, 50);
    const StepSpread first = simulate_step_spread(schedule, costs, rules_for(costs), jitter);
    const StepSpread again = simulate_step_spread(schedule, costs, rules_for(costs), jitter);
    EXPECT_EQ(first.median_ns, again.median_ns);
    EXPECT_EQ(first.p10_ns, again.p10_ns);
    EXPECT_EQ(first.max_ns, again.max_ns);
}

// A drawn time that int64 nanoseconds cannot hold is refused, never wrapped: one computation
// drawn past 2^52 ns, or a step whose computations, each within that, add up past 2^62 ns.
TEST(StepSpread, DrawnTimesPastWhatAStepHoldsAreRefused) {
    const Schedule chain = lowered(ScheduleKind::gpipe, 2, 1, 1);
    const CostModel costs = costs_of(1'000'000'000, 1'000'000'000, 1'000'000'000);
    std::vector<double> factors(chain.action_count(), 1.0);
    factors.front() = 1e7;  // rank 0's first action: its F, 10^16 ns
    EXPECT_THROW(simulate(chain, costs, rules_for(costs), factors), std::overflow_error);

    // The step of the costs, 561 x 8e15 ns, fits under 2^62 ns; drawn at up to 1.09 times the
    // median step level it does not.
    const CostModel huge =
        costs_of(4'000'000'000'000'000, 2'000'000'000'000'000, 2'000'000'000'000'000);
    const Schedule long_pipeline = lowered(ScheduleKind::gpipe, 2, 1, 560);
    JitterSpec levels = jitter_of({1, 1}, 20);
    levels.step_quantiles = {1.0, 1.2};
    const std::string message = testing::thrown_message<JitterError>(
        [&] { simulate_step_spread(long_pipeline, huge, rules_for(huge), levels); }, "");
    EXPECT_EQ(message.rfind("jitter: the drawn step runs past 4611686018427387904 ns", 0), 0u)
        << message;
    // Longer, the step of the costs itself is refused, as too large, not wrapped round.
    const std::string too_long = testing::thrown_message<std::overflow_error>(
        [&] { simulate(lowered(ScheduleKind::gpipe, 2, 1, 640), huge); }, "");
    EXPECT_EQ(too_long.rfind("the step runs past 4611686018427387904 ns, about 146 years", 0), 0u)
        << too_long;
}

// What calibrate gives a schedule too large for its draws: as many as fit, at least one.
TEST(StepSpread, TheDrawsThatFitTheBound) {
    const JitterSpec jitter = jitter_of({0.5, 1.5}, 1000);
    EXPECT_EQ(draws_that_fit(jitter, 100), 1000);
    EXPECT_EQ(draws_that_fit(jitter, 200'000), 1000);
    EXPECT_EQ(draws_that_fit(jitter, 300'000), 666);
    EXPECT_EQ(draws_that_fit(jitter, 500'000'000), 1);
}

TEST(StepSpread, TooManyDrawsAreRefusedBeforeAnyIsSimulated) {
    const Schedule schedule = lowered(ScheduleKind::one_f_one_b, 8, 1, 128);
    ASSERT_GT(schedule.action_count() * kMostJitterDraws, std::size_t(kMostJitteredActions));
    const CostModel costs = costs_of(1000, 1000, 1000);
    const std::string message = testing::thrown_message<std::invalid_argument>(
        [&] {
            simulate_step_spread(schedule, costs, rules_for(costs),
                                 jitter_of({0.5, 1.5}, kMostJitterDraws));
        },
        "");
    EXPECT_NE(message.find("jitter.draws: 100000 draws of " +
                           std::to_string(schedule.action_count()) + " actions"),
              std::string::npos)
        << message;
}

}  // namespace
}  // namespace pipelens::sim
