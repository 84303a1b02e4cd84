// Stragglers with exact values: in 1F1B pp=2 with rank 1 computing 1.5x slower, rank 1 is
// flagged at 1.5, sits on the critical path and costs exactly the step time the slowdown added;
// the same against calibrated stage costs; an even run flags nothing; each step stands alone.
#include <gtest/gtest.h>

#include "engine/analysis/stragglers.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "tests/analysis/simulated_run.hpp"

namespace pipelens::analysis {
namespace {

using testing::round_costs;
using testing::simulate_run;

constexpr ScheduleShape kOneFOneB{ScheduleKind::one_f_one_b, 2, 1, 4};

TEST(Stragglers, ARankComputingOneAndAHalfTimesSlowerIsFlaggedWithItsCost) {
    const auto base = simulate_run(kOneFOneB, round_costs());
    const auto slow = simulate_run(kOneFOneB, round_costs({1, 1.5}));
    const StragglerReport report = find_stragglers(slow.timed);
    ASSERT_EQ(report.steps.size(), 1u);
    const StepStraggle& step = report.steps[0];
    ASSERT_EQ(step.ranks.size(), 2u);
    EXPECT_DOUBLE_EQ(step.ranks[1].ratio, 1.5);
    EXPECT_EQ(step.ranks[1].computations, 8);
    EXPECT_TRUE(step.ranks[1].flagged);
    EXPECT_TRUE(step.ranks[1].on_critical_path);
    EXPECT_EQ(step.ranks[1].cost_ns, slow.result.step_time_ns - base.result.step_time_ns);
    EXPECT_DOUBLE_EQ(step.ranks[0].ratio, 1000.0 / 1500.0);
    EXPECT_FALSE(step.ranks[0].flagged);
    EXPECT_EQ(step.ranks[0].cost_ns, 0);
    // Megatron's figure: the slowest rank's throughput over the fastest's.
    EXPECT_DOUBLE_EQ(step.relative_throughput, 1000.0 / 1500.0);
    EXPECT_EQ(step.slowest_rank, 1);
    EXPECT_EQ(step.fastest_rank, 0);
    ASSERT_EQ(report.flagged.size(), 1u);
    EXPECT_EQ(report.flagged[0].rank, 1);

    // Above the threshold, not at it.
    EXPECT_TRUE(find_stragglers(slow.timed, {1.5, {}}).flagged.empty());
    EXPECT_EQ(find_stragglers(slow.timed, {1.49, {}}).flagged.size(), 1u);
}

TEST(Stragglers, CalibratedStageCostsAreTheReferenceWhenTheRunHasThem) {
    const auto slow = simulate_run(kOneFOneB, round_costs({1, 1.5}));
    StragglerOptions options;
    options.calibrated_ns = {{{0, ActionKind::forward}, 1000},
                             {{0, ActionKind::full_backward}, 2000},
                             {{1, ActionKind::forward}, 1000},
                             {{1, ActionKind::full_backward}, 2000}};
    const StragglerReport report = find_stragglers(slow.timed, options);
    EXPECT_TRUE(report.calibrated);
    EXPECT_DOUBLE_EQ(report.steps[0].ranks[0].ratio, 1);
    EXPECT_DOUBLE_EQ(report.steps[0].ranks[1].ratio, 1.5);
    EXPECT_DOUBLE_EQ(report.steps[0].relative_throughput, 1 / 1.5);

    std::vector<traces::ProfileRecord> profile(3);
    profile[0] = {0, 0, -1, "", "F", -1, 0, 1000, 900, 1100, 5};
    profile[1] = {0, 0, 3, "layer", "F", -1, 0, 77, 70, 80, 5};  // a layer, not the stage
    profile[2] = {1, 1, -1, "", "B", -1, 0, 2000, 1900, 2100, 5};
    const auto costs = calibrated_stage_costs(profile);
    EXPECT_EQ(costs,
              (std::map<std::pair<int, ActionKind>, std::int64_t>{
                  {{0, ActionKind::forward}, 1000}, {{1, ActionKind::full_backward}, 2000}}));
}

// Ranks whose stages hold different layer counts are no reference for each other: without a
// calibration the report measures nothing and says why (rank 0's 4 layers once "straggled" at
// 1.6x against rank 1's 2); with one, each stage has its own reference and is measured as usual.
// With v > 1 what counts is each rank's set of stages: 2+1 against 1+2 is alike.
TEST(Stragglers, RanksOfDifferentLayerCountsAreMeasuredOnlyAgainstACalibration) {
    const auto heavy = simulate_run(kOneFOneB, round_costs({2, 1}));
    const auto assign = [](int rank, int stage, const std::string& layers) {
        traces::EventRecord event;
        event.rank = rank;
        event.name = "assign_layers";
        event.arguments = "{\"layers\":[" + layers + "],\"stage\":" + std::to_string(stage) + "}";
        return event;
    };
    const std::vector<traces::EventRecord> events = {
        assign(0, 0, "\"layers.0\",\"layers.1\",\"layers.2\",\"layers.3\""),
        assign(0, 1, "\"layers.4\",\"layers.5\""),
        assign(1, 0, "\"layers.0\""),  // another rank's record is not read
    };
    EXPECT_EQ(stage_layer_counts(events), (std::vector<std::size_t>{4, 2}));
    EXPECT_TRUE(stage_layer_counts({events[1]}).empty());           // stage 0 not given
    EXPECT_TRUE(stage_layer_counts({assign(0, 0, "1,")}).empty());  // not JSON

    StragglerOptions options;
    options.stage_layers = stage_layer_counts(events);
    const StragglerReport unmeasured = find_stragglers(heavy.timed, options);
    EXPECT_TRUE(unmeasured.steps.empty());
    EXPECT_TRUE(unmeasured.flagged.empty());
    EXPECT_EQ(format_stragglers(unmeasured),
              "stragglers: n/a (the ranks' stages hold different numbers of layers (rank 0: 4, "
              "rank 1: 2), so no rank's time is a reference for another's; `run --profile` "
              "records each stage's own cost to compare against)\n");
    EXPECT_FALSE(find_stragglers(heavy.timed).flagged.empty());  // the false flag it avoids
    options.stage_layers = {3, 3};
    EXPECT_EQ(find_stragglers(heavy.timed, options).steps.size(), 1u);  // alike: measured

    options.stage_layers = {4, 2};
    options.calibrated_ns = {{{0, ActionKind::forward}, 2000},
                             {{0, ActionKind::full_backward}, 4000},
                             {{1, ActionKind::forward}, 1000},
                             {{1, ActionKind::full_backward}, 2000}};
    const StragglerReport calibrated = find_stragglers(heavy.timed, options);
    ASSERT_EQ(calibrated.steps.size(), 1u);
    EXPECT_DOUBLE_EQ(calibrated.steps[0].ranks[0].ratio, 1);
    EXPECT_TRUE(calibrated.flagged.empty());

    // Interleaved, v = 2: stages of 2, 2, 1, 1 layers put 2+1 on each rank.
    const auto interleaved = simulate_run({ScheduleKind::interleaved_1f1b, 2, 2, 4}, round_costs());
    StragglerOptions alike;
    alike.stage_layers = {2, 2, 1, 1};
    EXPECT_TRUE(find_stragglers(interleaved.timed, alike).not_measured.empty());
    alike.stage_layers = {2, 1, 2, 1};  // 2+2 against 1+1
    EXPECT_NE(
        find_stragglers(interleaved.timed, alike).not_measured.find("(rank 0: 2+2, rank 1: 1+1)"),
        std::string::npos);
}

// A real CPU run of 1F1B pp=2 m=2 whose rank 1 computes its forwards 20x slower (2000 ns, not
// 100): its host posts 1RECV_F1 only once 1F0 returned, and rank 0's receives wait there for
// data. Re-timed at the reference speed, the receive moves with the forward before it and rank
// 0's receives end as their data arrives (the second, posted after its data now, still takes
// the 10 ns it took after its send ended), so the slow rank costs the step 4740 - 650 = 4090 ns.
// (Keeping 1RECV_F1's post as host overhead, and each receive's recorded wait as its duration,
// once gave about half of that.)
TEST(Stragglers, ARealRunsSlowRankCostsWhatItsReceivesWaitedForToo) {
    TimedSchedule run;
    run.schedule = parse_schedule_csv(
        "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n"
        "1RECV_F0,1F0,1RECV_F1,1B0,1SEND_B0,1F1,1B1,1SEND_B1\n",
        "cpu_run.csv");
    const auto span = [](std::int64_t start, std::int64_t end, bool communication) {
        return ActionSpan{start, end, 0, communication, 0};
    };
    run.times = {{span(0, 100, false), span(100, 110, true), span(110, 210, false),
                  span(210, 220, true), span(220, 2330, true), span(2330, 2530, false),
                  span(2530, 4540, true), span(4540, 4740, false)},
                 {span(0, 110, true), span(110, 2110, false), span(2110, 2110, true),
                  span(2110, 2310, false), span(2310, 2320, true), span(2320, 4320, false),
                  span(4320, 4520, false), span(4520, 4530, true)}};
    StragglerOptions options;
    options.receives_posted_in_program_order = true;
    const StragglerReport report = find_stragglers(run, options);
    ASSERT_EQ(report.flagged.size(), 1u);
    EXPECT_EQ(report.flagged[0].rank, 1);
    EXPECT_DOUBLE_EQ(report.flagged[0].ratio, 20);
    EXPECT_EQ(report.flagged[0].cost_ns, 4090);
}

TEST(Stragglers, AnEvenRunFlagsNothing) {
    const auto even = simulate_run(kOneFOneB, round_costs());
    const StragglerReport report = find_stragglers(even.timed);
    EXPECT_TRUE(report.flagged.empty());
    for (const RankStraggle& rank : report.steps[0].ranks) {
        EXPECT_DOUBLE_EQ(rank.ratio, 1);
        EXPECT_TRUE(rank.on_critical_path);
    }
    EXPECT_DOUBLE_EQ(report.steps[0].relative_throughput, 1);
    EXPECT_NE(format_stragglers(report).find("none"), std::string::npos);
}

TEST(Stragglers, EachStepStandsAlone) {
    const auto even = simulate_run(kOneFOneB, round_costs());
    const auto slow = simulate_run(kOneFOneB, round_costs({1, 1.5}));
    const StragglerReport report =
        find_stragglers(testing::two_steps(even.timed, slow.timed, 1000));
    ASSERT_EQ(report.steps.size(), 2u);
    EXPECT_FALSE(report.steps[0].ranks[1].flagged);
    EXPECT_TRUE(report.steps[1].ranks[1].flagged);
    EXPECT_EQ(report.steps[1].ranks[1].cost_ns,
              slow.result.step_time_ns - even.result.step_time_ns);
    ASSERT_EQ(report.flagged.size(), 1u);
    EXPECT_EQ(report.flagged[0].step, 1);
    const std::string text = format_stragglers(report);
    EXPECT_NE(text.find("rank 1 step 1: 1.50x, on the critical path: yes, costs the step 5.800 us"),
              std::string::npos)
        << text;
}

}  // namespace
}  // namespace pipelens::analysis
