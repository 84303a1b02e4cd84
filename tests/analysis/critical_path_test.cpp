// The critical path and what held each action, on simulated runs read back from a real trace
// file: exact chains where the schedule's closed form fixes them, and the invariant that the
// path's shares add up to the step time for every schedule kind.
#include <gtest/gtest.h>

#include <numeric>

#include "engine/analysis/critical_path.hpp"
#include "engine/analysis/training_steps.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "sim/simulation_trace.hpp"
#include "tests/analysis/every_schedule_kind.hpp"
#include "tests/fresh_trace.hpp"
#include "traces/trace_error.hpp"

namespace pipelens::analysis {
namespace {

struct Simulated {
    TimedSchedule timed;
    std::int64_t step_time_ns = 0;
};

// Simulates `shape` under `costs`, records it in a fresh trace and reads it back.
Simulated simulate_through_trace(const ScheduleShape& shape, const sim::CostModel& costs,
                                 const std::string& name) {
    const auto path = testing::fresh_trace(name);
    const Schedule lowered = lower(generate_schedule(shape));
    std::int64_t run_id = 0;
    std::int64_t step = 0;
    {
        traces::TraceWriter writer(path);
        traces::RunRecord run;
        run.schedule = std::string(schedule_kind_name(shape.kind));
        run.pp = shape.rank_count;
        run.v = shape.stages_per_rank;
        run.m = shape.microbatch_count;
        const auto recorded = sim::simulate_and_record(writer, lowered, costs, run);
        run_id = recorded.run_id;
        step = recorded.result.step_time_ns;
    }
    const traces::TraceReader reader(path);
    return {read_timed_schedule(reader, run_id), step};
}

std::string text_of(const TimedSchedule& timed, ActionRef ref) {
    return timed.schedule.text(timed.schedule.ranks[ref.rank][ref.index]);
}

// The computations on the path, in order (transfers left out).
std::vector<std::string> compute_chain(const TimedSchedule& timed, const CriticalPath& path) {
    std::vector<std::string> chain;
    for (const PathLink& link : path.links)
        if (is_compute(timed.schedule.ranks[link.action.rank][link.action.index].kind))
            chain.push_back(text_of(timed, link.action));
    return chain;
}

std::int64_t share(const CriticalPath& path, PathShare which) {
    return path.share_ns[static_cast<std::size_t>(which)];
}

// 1F1B pp=4 m=8 with a last stage twice as slow as the others and free transfers: the first
// microbatch's forwards fill the pipeline, the last stage then runs every F and B back to back,
// and the last microbatch's backwards drain it.
TEST(CriticalPath, OneFOneBRunsThroughTheSlowLastStage) {
    sim::CostModel costs;
    costs.stages = {{1000, 1000, 1000, 2000},
                    {1000, 1000, 1000, 2000},
                    {1000, 1000, 1000, 2000},
                    {2000, 2000, 2000, 4000}};
    const Simulated run =
        simulate_through_trace({ScheduleKind::one_f_one_b, 4, 1, 8}, costs, "cp_1f1b");
    ASSERT_EQ(run.step_time_ns, 3 * 1000 + 8 * 6000 + 3 * 2000);

    const CriticalPath path = critical_path(run.timed, HoldGraph(run.timed));
    std::vector<std::string> expected = {"0F0", "1F0", "2F0"};
    for (int microbatch = 0; microbatch < 8; ++microbatch) {
        expected.push_back("3F" + std::to_string(microbatch));
        expected.push_back("3B" + std::to_string(microbatch));
    }
    for (const char* drain : {"2B7", "1B7", "0B7"})
        expected.push_back(drain);
    EXPECT_EQ(compute_chain(run.timed, path), expected);
    EXPECT_EQ(path.end_ns, run.step_time_ns);
    EXPECT_EQ(share(path, PathShare::forward), 3 * 1000 + 8 * 2000);
    EXPECT_EQ(share(path, PathShare::full_backward), 8 * 4000 + 3 * 2000);
    EXPECT_EQ(share(path, PathShare::communication), 0);
    EXPECT_EQ(share(path, PathShare::waiting), 0);
}

// GPipe pp=2 m=2, F=1000, B=2000, 500 ns per transfer, worked by hand: rank 0 runs F0 and F1
// (0-2000); F1 arrives at 2500; rank 1 runs F0 (1500-2500), F1, B0, B1 (to 7500); B1's gradient
// arrives at 8000 and rank 0 runs B0 and B1 (to 10000). The path: 0F0 0F1, a transfer, 1F1 1B0
// 1B1, a transfer, 0B1 (a receive that ends with the stream's previous action counts as the wait).
TEST(CriticalPath, TransfersOnThePathCountAsCommunication) {
    sim::CostModel costs;
    costs.stages = {{1000, 1000, 1000, 2000}};
    costs.intra_host.latency_ns = 500;
    const Simulated run = simulate_through_trace({ScheduleKind::gpipe, 2, 1, 2}, costs, "cp_gpipe");
    ASSERT_EQ(run.step_time_ns, 10000);
    const CriticalPath path = critical_path(run.timed, HoldGraph(run.timed));
    EXPECT_EQ(path.end_ns, 10000);
    EXPECT_EQ(compute_chain(run.timed, path),
              (std::vector<std::string>{"0F0", "0F1", "1F1", "1B0", "1B1", "0B1"}));
    EXPECT_EQ(share(path, PathShare::forward), 3000);
    EXPECT_EQ(share(path, PathShare::full_backward), 6000);
    EXPECT_EQ(share(path, PathShare::communication), 1000);
    EXPECT_EQ(share(path, PathShare::waiting), 0);
}

// A real run's step starts at its earliest action, not at the clock's zero: the first action
// starts a little after it, or a RECV was posted before it. The path spans the step either way:
// its shares add up to the last end minus the earliest start, with no waiting invented before
// the first action and no time cut off before zero.
TEST(CriticalPath, SpansTheStepFromItsEarliestStartWhereverTheClocksZeroIs) {
    sim::CostModel costs;
    costs.stages = {{1000, 1000, 1000, 2000}};
    costs.intra_host.latency_ns = 500;
    const Simulated run = simulate_through_trace({ScheduleKind::gpipe, 2, 1, 2}, costs, "cp_shift");
    const CriticalPath unshifted = critical_path(run.timed, HoldGraph(run.timed));
    for (const std::int64_t shift : {std::int64_t{599}, std::int64_t{-300}}) {
        SCOPED_TRACE(shift);
        TimedSchedule shifted = run.timed;
        for (auto& rank : shifted.times)
            for (ActionSpan& span : rank) {
                span.start_ns += shift;
                span.end_ns += shift;
            }
        const CriticalPath path = critical_path(shifted, HoldGraph(shifted));
        EXPECT_EQ(path.start_ns, shift);
        EXPECT_EQ(path.end_ns, 10000 + shift);
        EXPECT_EQ(path.length_ns(), 10000);
        EXPECT_EQ(std::accumulate(path.share_ns.begin(), path.share_ns.end(), std::int64_t{0}),
                  10000);
        EXPECT_EQ(path.share_ns, unshifted.share_ns);
        ASSERT_FALSE(path.links.empty());
        EXPECT_EQ(path.links.front().waited_ns, 0);
    }
}

TEST(CriticalPath, SharesAddUpToTheStepForEveryScheduleKind) {
    // Uneven stages and a link with latency and bandwidth: nothing lines up by accident.
    const auto costs_for = [](int stages) {
        sim::CostModel costs;
        for (int stage = 0; stage < stages; ++stage)
            costs.stages.push_back({1300 - 70 * stage, 900 + 40 * stage, 700, std::nullopt});
        costs.intra_host.latency_ns = 170;
        costs.intra_host.bytes_per_ns = 2.0;
        costs.activation_bytes = {4096};
        return costs;
    };
    const auto& shapes = kEveryScheduleKind;
    for (const ScheduleShape& shape : shapes) {
        SCOPED_TRACE(schedule_kind_name(shape.kind));
        const Simulated run = simulate_through_trace(
            shape, costs_for(shape.rank_count * shape.stages_per_rank), "cp_kinds");
        const CriticalPath path = critical_path(run.timed, HoldGraph(run.timed));
        EXPECT_EQ(path.end_ns, run.step_time_ns);
        EXPECT_EQ(path.start_ns, 0);
        EXPECT_EQ(std::accumulate(path.share_ns.begin(), path.share_ns.end(), std::int64_t{0}),
                  run.step_time_ns);
        // A simulator starts every action the moment its last input is ready.
        EXPECT_EQ(share(path, PathShare::waiting), 0);
        ASSERT_FALSE(path.links.empty());
        EXPECT_EQ(path.links.front().action.rank, 0);
        for (std::size_t index = 1; index < path.links.size(); ++index)
            EXPECT_EQ(path.links[index].from_ns,
                      path.links[index - 1].end_ns + path.links[index].waited_ns);
    }
}

// Rank 0's first backward in 1F1B waits for the gradient rank 1 sends: its holder is the receive.
TEST(HoldGraph, ABackwardIsHeldByTheReceiveOfItsGradient) {
    sim::CostModel costs;
    costs.stages = {{1000, 1000, 1000, 2000}};
    const Simulated run =
        simulate_through_trace({ScheduleKind::one_f_one_b, 2, 1, 4}, costs, "cp_hold");
    const HoldGraph holds(run.timed);
    const auto& rank0 = run.timed.schedule.ranks[0];
    const auto first_backward = std::find_if(rank0.begin(), rank0.end(), [](const Action& action) {
        return action.kind == ActionKind::full_backward;
    });
    ASSERT_NE(first_backward, rank0.end());
    const ActionRef backward{0, static_cast<std::int32_t>(first_backward - rank0.begin())};
    const std::optional<ActionRef> holder = holds.held_by(backward);
    ASSERT_TRUE(holder);
    EXPECT_EQ(text_of(run.timed, *holder), "0RECV_B0");
    const std::optional<ActionRef> sender = holds.held_by(*holder);
    ASSERT_TRUE(sender);
    EXPECT_EQ(text_of(run.timed, *sender), "1SEND_B0");
    EXPECT_FALSE(holds.held_by({0, 0}));  // 0F0 waits for nothing
}

traces::StoredAction row(std::int32_t step, ActionKind kind, std::int32_t stage,
                         std::int32_t microbatch, std::int64_t start, std::int64_t end) {
    traces::StoredAction stored;
    stored.step = step;
    stored.kind = static_cast<std::uint8_t>(kind);
    stored.stage = stage;
    stored.microbatch = microbatch;
    stored.start_ns = start;
    stored.end_ns = end;
    return stored;
}

TEST(TimedSchedule, AStageRunByTwoRanksIsNamedWithRankAndStep) {
    traces::RunRecord run;
    run.pp = 2;
    run.m = 1;
    std::vector<RankRows> ranks(2);
    ranks[0].actions = {row(0, ActionKind::forward, 0, 0, 0, 10)};
    ranks[1].actions = {row(0, ActionKind::forward, 1, 0, 10, 20),
                        row(1, ActionKind::full_backward, 0, 0, 20, 30)};
    try {
        timed_schedule_from_rows("t.db", run, ranks);
        FAIL() << "a stage on two ranks was accepted";
    } catch (const traces::TraceError& error) {
        EXPECT_STREQ(error.what(),
                     "t.db: trace is corrupt: rank 1 step 1: stage 0 is also run by rank 0");
    }
}

// A flight-recorder import numbers a transfer by its peer rank, so one number can sit on several
// ranks without any stage running twice: only computations can split a stage.
TEST(TimedSchedule, TransfersNumberedByTheirPeerAreNoSplitStage) {
    traces::RunRecord run;
    run.pp = 3;
    run.m = 2;
    std::vector<RankRows> ranks(3);
    ranks[0].actions = {row(0, ActionKind::send_forward, 1, 0, 0, 10)};
    ranks[1].actions = {row(0, ActionKind::recv_forward, 0, 0, 0, 10),
                        row(1, ActionKind::send_forward, 2, 1, 10, 20)};
    ranks[2].actions = {row(0, ActionKind::recv_forward, 1, 1, 10, 20)};
    const TimedSchedule timed = timed_schedule_from_rows("t.db", run, ranks);
    EXPECT_EQ(timed.schedule.stage_to_rank, (std::vector<int>{1, 0, 1}));
}

TEST(TimedSchedule, RowsComeBackInStepOrderWithUnknownKindsRefused) {
    traces::RunRecord run;
    run.pp = 1;
    run.m = 2;
    std::vector<RankRows> ranks(1);
    ranks[0].actions = {row(1, ActionKind::forward, 0, 1, 10, 20),
                        row(0, ActionKind::forward, 0, 0, 0, 10)};
    const TimedSchedule timed = timed_schedule_from_rows("t.db", run, ranks);
    ASSERT_EQ(timed.schedule.ranks[0].size(), 2u);
    EXPECT_EQ(timed.schedule.text(timed.schedule.ranks[0][0]), "0F0");
    EXPECT_EQ(timed.times[0][1].start_ns, 10);

    ranks[0].actions[0].kind = 42;
    EXPECT_THROW(timed_schedule_from_rows("t.db", run, ranks), traces::TraceError);
}

// `run --steps 2` records each rank's list twice: the second row of an index (by time) is the
// second step's, and program order puts the whole first step before the second.
TEST(TimedSchedule, IndicesRecordedOncePerStepComeBackStepAfterStep) {
    traces::RunRecord run;
    run.pp = 1;
    run.m = 2;
    std::vector<RankRows> ranks(1);
    ranks[0].actions = {
        row(1, ActionKind::forward, 0, 1, 110, 125), row(0, ActionKind::forward, 0, 0, 0, 10),
        row(0, ActionKind::forward, 0, 0, 100, 110), row(1, ActionKind::forward, 0, 1, 10, 20)};
    const TimedSchedule timed = timed_schedule_from_rows("t.db", run, ranks);
    std::vector<std::int64_t> starts;
    for (const ActionSpan& span : timed.times[0])
        starts.push_back(span.start_ns);
    EXPECT_EQ(starts, (std::vector<std::int64_t>{0, 10, 100, 110}));
    const std::vector<TrainingStep> steps = training_steps(timed);
    ASSERT_EQ(steps.size(), 2u);
    EXPECT_EQ(steps[1].offset_ns, 100);
    EXPECT_EQ(steps[0].end_ns, 20);
    EXPECT_EQ(steps[1].end_ns, 25);
}

}  // namespace
}  // namespace pipelens::analysis
