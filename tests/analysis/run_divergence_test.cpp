// The real-versus-simulated comparison with exact values: a run that matches its simulation is
// all zeros; a rank computing 1.5x slower is all speed, and changes what three computations
// waited for; one SEND started late is all ordering and none of it speed; steps of a multi-step run
// each meet the one simulated step, and so do the steps of repeated runs; an action on one side
// only is listed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <tuple>

#include "engine/analysis/run_divergence.hpp"
#include "engine/analysis/training_steps.hpp"
#include "tests/analysis/simulated_run.hpp"

namespace pipelens::analysis {
namespace {

using testing::delay;
using testing::round_costs;
using testing::simulate_run;

constexpr ScheduleShape kOneFOneB{ScheduleKind::one_f_one_b, 2, 1, 4};

void expect_split_sums(const StepDivergence& step) {
    EXPECT_EQ(step.split.total(), step.step_time.difference());
}

// The step's difference and its split into speed, kinds, communication and ordering.
void expect_split(const StepDivergence& step, std::int64_t difference, DivergenceSplit split) {
    EXPECT_EQ(step.step_time.difference(), difference);
    EXPECT_EQ(step.split.speed_ns, split.speed_ns);
    EXPECT_EQ(step.split.kinds_ns, split.kinds_ns);
    EXPECT_EQ(step.split.communication_ns, split.communication_ns);
    EXPECT_EQ(step.split.ordering_ns, split.ordering_ns);
}

TEST(RunDivergence, ARunThatMatchesItsSimulationIsAllZeros) {
    const auto sim = simulate_run(kOneFOneB, round_costs());
    const RunDivergence diff = run_divergence(sim.timed, sim.timed);
    ASSERT_EQ(diff.steps.size(), 1u);
    const StepDivergence& step = diff.steps[0];
    EXPECT_EQ(step.step_time.measured, sim.result.step_time_ns);
    EXPECT_EQ(step.step_time.difference(), 0);
    EXPECT_EQ(step.split.speed_ns, 0);
    EXPECT_EQ(step.split.kinds_ns, 0);
    EXPECT_EQ(step.split.communication_ns, 0);
    EXPECT_EQ(step.split.ordering_ns, 0);
    ASSERT_EQ(step.ranks.size(), 2u);
    for (const RankDivergence& rank : step.ranks) {
        EXPECT_EQ(rank.busy.difference(), 0);
        EXPECT_EQ(rank.waiting.difference(), 0);
        EXPECT_EQ(rank.bubble.difference(), 0);
        EXPECT_EQ(rank.busy.measured, 4 * 3000);
        EXPECT_DOUBLE_EQ(rank.speed, 1);
    }
    for (const KindDivergence& kind : diff.kinds)
        EXPECT_DOUBLE_EQ(kind.median_ratio, 1) << kind.kind;
    EXPECT_EQ(diff.kinds.size(), 6u);  // F, B, SEND_F, RECV_F, SEND_B, RECV_B
    ASSERT_EQ(diff.top.size(), 10u);
    for (const ActionDivergence& action : diff.top)
        EXPECT_EQ(action.measured_ns, action.simulated_ns);
    EXPECT_TRUE(diff.unmatched.empty());
    EXPECT_TRUE(step.waits.empty());
}

TEST(RunDivergence, ARankComputingSlowerIsAllSpeed) {
    const auto sim = simulate_run(kOneFOneB, round_costs());
    const auto real = simulate_run(kOneFOneB, round_costs({1, 1.5}));
    const RunDivergence diff = run_divergence(real.timed, sim.timed, 3);
    ASSERT_EQ(diff.steps.size(), 1u);
    const StepDivergence& step = diff.steps[0];
    const std::int64_t late = real.result.step_time_ns - sim.result.step_time_ns;
    ASSERT_GT(late, 0);
    EXPECT_EQ(step.step_time.difference(), late);
    EXPECT_EQ(step.split.speed_ns, late);
    EXPECT_EQ(step.split.kinds_ns, 0);
    EXPECT_EQ(step.split.communication_ns, 0);
    EXPECT_EQ(step.split.ordering_ns, 0);
    EXPECT_DOUBLE_EQ(step.ranks[0].speed, 1);
    EXPECT_DOUBLE_EQ(step.ranks[1].speed, 1.5);
    // What waited for what changed with it: rank 1's F2 and F3 wait for its own stream, not
    // rank 0's data. (Rank 0's B1 waits for rank 1's B1 through its receive in both: in the
    // simulation its receive and its own F2 are ready at once, and a tie goes to the input; a
    // posted receive is held by its data alone, never by a SEND before it on its lane.)
    const auto wait = [](const WaitChange& change) {
        return std::to_string(change.rank) + " " + change.label + ": " + change.measured_wait +
               " (simulated " + change.simulated_wait + ")";
    };
    ASSERT_EQ(step.waits.size(), 2u);
    EXPECT_EQ(wait(step.waits[0]), "1 1F2: 1B1 (simulated 0F2)");
    EXPECT_EQ(wait(step.waits[1]), "1 1F3: 1B2 (simulated 0F3)");
    EXPECT_EQ(step.ranks[1].busy.measured, 4 * 4500);
    EXPECT_EQ(step.ranks[1].busy.simulated, 4 * 3000);
    // Each kind: half its actions at 1, half at 1.5; the median is the upper middle.
    for (const KindDivergence& kind : diff.kinds)
        EXPECT_DOUBLE_EQ(kind.median_ratio, kind.kind == "F" || kind.kind == "B" ? 1.5 : 1)
            << kind.kind;
    ASSERT_EQ(diff.top.size(), 3u);
    EXPECT_EQ(diff.top[0].rank, 1);  // its B: 3000 for 2000
    EXPECT_EQ(diff.top[0].label, "1B0");
    EXPECT_EQ(diff.top[0].measured_ns, 3000);
    EXPECT_EQ(diff.top[0].simulated_ns, 2000);
    EXPECT_DOUBLE_EQ(diff.top[0].ratio, 1.5);
}

TEST(RunDivergence, ALateSendIsOrderingNotSpeed) {
    const auto sim = simulate_run(kOneFOneB, round_costs());
    auto real = sim;
    delay(real.timed, testing::find_action(real.timed, 0, "0SEND_F3"), 700);
    const RunDivergence diff = run_divergence(real.timed, sim.timed);
    const StepDivergence& step = diff.steps[0];
    expect_split(step, 700, {0, 0, 0, 700});
    for (const WaitChange& change : step.waits)
        ADD_FAILURE() << change.rank << " " << change.label << " real " << change.measured_wait
                      << " sim " << change.simulated_wait;
    for (const RankDivergence& rank : step.ranks) {
        EXPECT_DOUBLE_EQ(rank.speed, 1);
        EXPECT_EQ(rank.busy.difference(), 0);
    }
}

TEST(RunDivergence, ALongerTransferThatItsReceiverWaitedForIsCommunication) {
    const auto sim = simulate_run(kOneFOneB, round_costs());
    // The same run with one transfer taking 700 more, everything after it re-timed; rank 0 waits
    // for B0's gradient from before it is sent, so the run shows the whole delivery.
    const ActionRef send = testing::find_action(sim.timed, 1, "1SEND_B0");
    auto real = sim;
    const auto ends = retime(sim.timed, [&](ActionRef ref) {
        const ActionSpan& span = sim.timed.times[ref.rank][ref.index];
        return span.end_ns - span.start_ns + (ref == send ? 700 : 0);
    });
    for (std::size_t rank = 0; rank < ends.size(); ++rank)
        for (std::size_t index = 0; index < ends[rank].size(); ++index) {
            ActionSpan& span = real.timed.times[rank][index];
            const std::int64_t took =
                span.end_ns - span.start_ns +
                (ActionRef{static_cast<int>(rank), static_cast<int>(index)} == send ? 700 : 0);
            span.end_ns = ends[rank][index];
            span.start_ns = span.end_ns - took;
        }
    const RunDivergence diff =
        run_divergence(testing::as_the_runtime_records(real.timed), sim.timed);
    const StepDivergence& step = diff.steps[0];
    expect_split(step, 700, {0, 0, 700, 0});
}

TEST(RunDivergence, EveryTransferSlowerIsCommunicationSeenOrNot) {
    // Transfers of 250 where 100 were predicted: five of the eight were seen whole; the other
    // three (their receivers busy when the data was sent) are charged at the seen ratio, 2.5.
    const auto sim = simulate_run(kOneFOneB, round_costs());
    sim::CostModel slow_link = round_costs();
    slow_link.intra_host.latency_ns = slow_link.inter_host.latency_ns = 250;
    const auto real = simulate_run(kOneFOneB, slow_link);
    const RunDivergence diff =
        run_divergence(testing::as_the_runtime_records(real.timed), sim.timed);
    const StepDivergence& step = diff.steps[0];
    ASSERT_GT(step.step_time.difference(), 0);
    expect_split(step, step.step_time.difference(), {0, 0, step.step_time.difference(), 0});
    for (const KindDivergence& kind : diff.kinds) {
        const bool transfer = kind.kind.find("SEND") != std::string::npos ||
                              kind.kind.find("RECV") != std::string::npos;
        EXPECT_DOUBLE_EQ(kind.median_ratio, transfer ? 2.5 : 1) << kind.kind;
    }
}

TEST(RunDivergence, TheRuntimesRecordOfItsReceivesIsNoDivergence) {
    // The runtime posts a RECV early and ends it when its data is needed: a RECV span of 2200
    // where the transfer took 100. The same run recorded that way differs from its simulation
    // in nothing, its split included.
    const auto sim = simulate_run(kOneFOneB, round_costs());
    const TimedSchedule recorded = testing::as_the_runtime_records(sim.timed);
    const RunDivergence diff = run_divergence(recorded, sim.timed);
    const StepDivergence& step = diff.steps[0];
    expect_split(step, 0, {0, 0, 0, 0});
    for (const KindDivergence& kind : diff.kinds)
        EXPECT_DOUBLE_EQ(kind.median_ratio, 1) << kind.kind;
    for (const ActionDivergence& action : diff.top)
        EXPECT_EQ(action.measured_ns, action.simulated_ns) << action.label;
}

TEST(RunDivergence, EveryStepOfAMultiStepRunMeetsTheOneSimulatedStep) {
    const auto sim = simulate_run(kOneFOneB, round_costs());
    const auto slow = simulate_run(kOneFOneB, round_costs({1, 1.5}));
    const TimedSchedule real = testing::two_steps(sim.timed, slow.timed, 5000);
    ASSERT_EQ(training_steps(real).size(), 2u);
    const RunDivergence diff = run_divergence(real, sim.timed);
    ASSERT_EQ(diff.steps.size(), 2u);
    const std::int64_t late = slow.result.step_time_ns - sim.result.step_time_ns;
    EXPECT_EQ(diff.steps[0].step_time.difference(), 0);
    EXPECT_EQ(diff.steps[1].real_step, 1);
    EXPECT_EQ(diff.steps[1].sim_step, 0);
    EXPECT_EQ(diff.steps[1].step_time.difference(), late);
    EXPECT_EQ(diff.steps[1].split.speed_ns, late);
    for (const StepDivergence& step : diff.steps)
        expect_split_sums(step);
    EXPECT_EQ(diff.median_step_time.measured, slow.result.step_time_ns);  // the upper middle
    EXPECT_EQ(diff.mean_split.speed_ns, late / 2);
    EXPECT_EQ(diff.mean_split.total(), late / 2);
    EXPECT_TRUE(diff.unmatched.empty());
}

// Repeats of one configuration pooled: the same figures as one run holding both as steps, each
// step and action keeping the position of its run.
TEST(RunDivergence, SeveralRunsArePooledAsTheStepsOfOneRunWouldBe) {
    const auto sim = simulate_run(kOneFOneB, round_costs());
    const auto slow = simulate_run(kOneFOneB, round_costs({1, 1.5}));
    const std::vector<TimedSchedule> runs{sim.timed, slow.timed};
    const RunDivergence pooled = run_divergence(runs, sim.timed, 40);
    const RunDivergence as_steps =
        run_divergence(testing::two_steps(sim.timed, slow.timed, 5000), sim.timed, 40);
    ASSERT_EQ(pooled.steps.size(), 2u);
    const std::int64_t late = slow.result.step_time_ns - sim.result.step_time_ns;
    EXPECT_EQ(pooled.steps[0].real_run, 0);
    EXPECT_EQ(pooled.steps[1].real_run, 1);
    EXPECT_EQ(pooled.steps[1].real_step, 0);  // the first step of its own run
    EXPECT_EQ(pooled.steps[1].split.speed_ns, late);
    EXPECT_EQ(pooled.median_step_time.measured, as_steps.median_step_time.measured);
    EXPECT_EQ(pooled.mean_split.speed_ns, as_steps.mean_split.speed_ns);
    EXPECT_EQ(pooled.mean_split.total(), late / 2);
    ASSERT_EQ(pooled.kinds.size(), as_steps.kinds.size());
    for (std::size_t kind = 0; kind < pooled.kinds.size(); ++kind) {
        EXPECT_EQ(pooled.kinds[kind].actions, as_steps.kinds[kind].actions);
        EXPECT_DOUBLE_EQ(pooled.kinds[kind].median_ratio, as_steps.kinds[kind].median_ratio);
    }
    ASSERT_EQ(pooled.top.size(), as_steps.top.size());
    EXPECT_EQ(pooled.top[0].real_run, 1);  // the slow rank's computations are furthest off
    EXPECT_EQ(pooled.top[0].rank, 1);
    for (const ActionDivergence& action : pooled.top)
        if (action.measured_ns != action.simulated_ns) {
            EXPECT_EQ(action.real_run, 1) << action.label;  // run 0 is the simulation itself
        }
    // One run given alone is the one-run comparison.
    const RunDivergence alone = run_divergence(std::span(&slow.timed, 1), sim.timed);
    EXPECT_EQ(alone.steps[0].split.speed_ns, late);
    EXPECT_EQ(alone.steps[0].real_run, 0);
}

// The actions furthest off are kept as they arrive, never all of them: the first N of a list
// long enough to hold every matched action are the N kept, ties in arrival order.
TEST(RunDivergence, TheFurthestActionsAreTheHeadOfTheWholeOrderedList) {
    const auto sim = simulate_run(kOneFOneB, round_costs());
    const auto slow = simulate_run(kOneFOneB, round_costs({1, 1.5}));
    const std::vector<TimedSchedule> runs{slow.timed, sim.timed, slow.timed};
    const RunDivergence all = run_divergence(runs, sim.timed, 100000);
    ASSERT_GT(all.top.size(), 60u);
    for (std::size_t index = 1; index < all.top.size(); ++index)
        EXPECT_GE(std::llabs(all.top[index - 1].measured_ns - all.top[index - 1].simulated_ns),
                  std::llabs(all.top[index].measured_ns - all.top[index].simulated_ns));
    for (const int count : {0, 1, 5, 17, 40}) {
        const RunDivergence some = run_divergence(runs, sim.timed, count);
        ASSERT_EQ(some.top.size(), static_cast<std::size_t>(count));
        for (std::size_t index = 0; index < some.top.size(); ++index) {
            const ActionDivergence& kept = some.top[index];
            const ActionDivergence& whole = all.top[index];
            EXPECT_EQ(
                std::tie(kept.real_run, kept.step, kept.rank, kept.label, kept.measured_ns),
                std::tie(whole.real_run, whole.step, whole.rank, whole.label, whole.measured_ns))
                << count << " " << index;
        }
    }
}

TEST(RunDivergence, AnActionOnOneSideOnlyIsListed) {
    const auto sim = simulate_run(kOneFOneB, round_costs());
    auto real = sim;
    const ActionRef last = testing::find_action(real.timed, 1, "1B3");
    real.timed.schedule.ranks[1].erase(real.timed.schedule.ranks[1].begin() + last.index);
    real.timed.times[1].erase(real.timed.times[1].begin() + last.index);
    const RunDivergence diff = run_divergence(real.timed, sim.timed);
    ASSERT_EQ(diff.unmatched.size(), 1u);
    EXPECT_FALSE(diff.unmatched[0].real);
    EXPECT_EQ(diff.unmatched[0].rank, 1);
    EXPECT_EQ(diff.unmatched[0].label, "1B3");
    expect_split_sums(diff.steps[0]);
}

}  // namespace
}  // namespace pipelens::analysis
