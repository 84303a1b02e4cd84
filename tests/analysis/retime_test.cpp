// Re-timing a run under the dependency rules (critical_path.hpp's `retime`) and cutting a run
// into training steps (training_steps.hpp), with exact values: unchanged durations give back
// every recorded end; a simulation with one rank slowed, re-timed at that rank's normal speed,
// is exactly the simulation without the slowdown, for every schedule kind; a run that repeats
// its program twice is two steps, each starting at 0.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>

#include "engine/analysis/critical_path.hpp"
#include "engine/analysis/training_steps.hpp"
#include "tests/analysis/every_schedule_kind.hpp"
#include "tests/analysis/simulated_run.hpp"

namespace pipelens::analysis {
namespace {

using testing::round_costs;
using testing::simulate_run;

std::vector<std::vector<std::int64_t>> recorded_ends(const TimedSchedule& timed) {
    std::vector<std::vector<std::int64_t>> ends(timed.times.size());
    for (std::size_t rank = 0; rank < timed.times.size(); ++rank)
        for (const ActionSpan& span : timed.times[rank])
            ends[rank].push_back(span.end_ns);
    return ends;
}

std::int64_t recorded_duration(const TimedSchedule& timed, ActionRef ref) {
    const ActionSpan& span = timed.times[ref.rank][ref.index];
    return span.end_ns - span.start_ns;
}

TEST(Retime, UnchangedDurationsGiveBackTheRecordedEnds) {
    for (const ScheduleShape& shape : kEveryScheduleKind) {
        const auto run = simulate_run(shape, round_costs());
        const auto ends =
            retime(run.timed, [&](ActionRef ref) { return recorded_duration(run.timed, ref); });
        EXPECT_EQ(ends, recorded_ends(run.timed)) << schedule_kind_name(shape.kind);
        EXPECT_EQ(retimed_end(ends), run.result.step_time_ns);
    }
}

TEST(Retime, ASlowRankAtItsNormalSpeedIsTheRunWithoutTheSlowdown) {
    for (const ScheduleShape& shape : kEveryScheduleKind) {
        const auto base = simulate_run(shape, round_costs());
        const auto slow = simulate_run(shape, round_costs({1, 1.5, 1, 1}));
        ASSERT_GT(slow.result.step_time_ns, base.result.step_time_ns);
        const auto ends = retime(slow.timed, [&](ActionRef ref) {
            const std::int64_t took = recorded_duration(slow.timed, ref);
            if (ref.rank != 1 || !is_compute(slow.timed.schedule.ranks[1][ref.index].kind))
                return took;
            return static_cast<std::int64_t>(std::llround(static_cast<double>(took) / 1.5));
        });
        EXPECT_EQ(ends, recorded_ends(base.timed)) << schedule_kind_name(shape.kind);
        EXPECT_EQ(retimed_end(ends), base.result.step_time_ns) << schedule_kind_name(shape.kind);
    }
}

// With rendezvous transfers (a receive posted when its rank reaches it, its data flowing once
// both sides are there) the same holds under the rendezvous rules, with links long against the
// computations: keeping the recorded wait of a transfer for its post once made the cost of a
// slowed rank come out short by up to a fifth.
TEST(Retime, ASlowRankAtItsNormalSpeedIsTheRendezvousRunWithoutTheSlowdown) {
    for (const std::int64_t latency : {100, 2000}) {
        for (const ScheduleShape& shape : kEveryScheduleKind) {
            sim::CostModel costs = round_costs();
            costs.rendezvous = true;
            costs.intra_host.latency_ns = costs.inter_host.latency_ns = latency;
            sim::CostModel slowed = costs;
            slowed.rank_slowdown = {1, 1.5, 1, 1};
            const auto base = simulate_run(shape, costs);
            const auto slow = simulate_run(shape, slowed);
            const auto ends = retime(
                slow.timed,
                [&](ActionRef ref) {
                    const std::int64_t took = recorded_duration(slow.timed, ref);
                    if (ref.rank != 1 || !is_compute(slow.timed.schedule.ranks[1][ref.index].kind))
                        return took;
                    return static_cast<std::int64_t>(std::llround(static_cast<double>(took) / 1.5));
                },
                DependencyRules::pytorch_rendezvous(), ReceivedData::once_posted);
            EXPECT_EQ(retimed_end(ends), base.result.step_time_ns)
                << schedule_kind_name(shape.kind) << " latency " << latency;
            for (std::size_t rank = 0; rank < ends.size(); ++rank)
                for (std::size_t at = 0; at < ends[rank].size(); ++at)
                    if (ends[rank][at] != base.timed.times[rank][at].end_ns) {
                        ADD_FAILURE()
                            << schedule_kind_name(shape.kind) << " latency " << latency << " rank "
                            << rank << " "
                            << slow.timed.schedule.text(slow.timed.schedule.ranks[rank][at]) << ": "
                            << ends[rank][at] << " against " << base.timed.times[rank][at].end_ns;
                        break;
                    }
        }
    }
}

TEST(TrainingSteps, ARunRepeatingItsProgramIsOneStepPerRepeat) {
    const auto run = simulate_run({ScheduleKind::one_f_one_b, 2, 1, 4}, round_costs());
    const std::vector<TrainingStep> one = training_steps(run.timed);
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0].offset_ns, 0);
    EXPECT_EQ(one[0].end_ns, run.result.step_time_ns);

    const std::vector<TrainingStep> two =
        training_steps(testing::two_steps(run.timed, run.timed, 250));
    ASSERT_EQ(two.size(), 2u);
    EXPECT_EQ(two[1].offset_ns, run.result.step_time_ns + 250);
    for (const TrainingStep& step : two) {
        EXPECT_EQ(step.end_ns, run.result.step_time_ns);
        EXPECT_EQ(recorded_ends(step.timed), recorded_ends(run.timed));
        EXPECT_EQ(step.timed.schedule.ranks, run.timed.schedule.ranks);
    }
}

traces::ActionRecord recorded(int rank, int index, std::string label, std::int64_t start) {
    traces::ActionRecord action;
    action.rank = rank;
    action.step = index;
    action.label = std::move(label);
    action.start_ns = start;
    action.end_ns = start + 5;
    return action;
}

// A trace's rows split by training step: the k-th row of a text on a rank (by start) is step
// k's, whatever order the rows come in; ranks count their own occurrences.
TEST(TrainingSteps, TraceRowsSplitByTheOccurrenceOfTheirTextOnTheirRank) {
    const std::vector<traces::ActionRecord> rows = {
        recorded(0, 0, "0F0", 100), recorded(1, 0, "1F0", 20),  recorded(0, 0, "0F0", 0),
        recorded(0, 1, "0B0", 10),  recorded(1, 0, "1F0", 120), recorded(0, 0, "0F0", 200)};
    const auto steps = split_by_training_step(rows);
    ASSERT_EQ(steps.size(), 3u);
    const auto starts = [](const std::vector<traces::ActionRecord>& step) {
        std::vector<std::pair<int, std::int64_t>> found;
        for (const traces::ActionRecord& action : step)
            found.emplace_back(action.rank, action.start_ns);
        return found;
    };
    using Found = std::vector<std::pair<int, std::int64_t>>;
    EXPECT_EQ(starts(steps[0]), (Found{{1, 20}, {0, 0}, {0, 10}}));
    EXPECT_EQ(starts(steps[1]), (Found{{0, 100}, {1, 120}}));
    EXPECT_EQ(starts(steps[2]), (Found{{0, 200}}));
    EXPECT_TRUE(split_by_training_step({}).empty());
}

}  // namespace
}  // namespace pipelens::analysis
