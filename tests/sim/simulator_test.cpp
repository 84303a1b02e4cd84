// The simulator against the closed forms at zero communication cost: bubble shares of GPipe,
// 1F1B and Interleaved1F1B, 1F1B vs ZB-H1 with unequal F/I/W, peak activations, and a link
// latency worked out by hand; what an OVERLAP_F_B hides; what a split backward holds between
// its I and W.
#include <gtest/gtest.h>

#include <map>

#include "engine/schedule/generate.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "sim/simulator.hpp"

namespace pipelens::sim {
namespace {

CostModel unit_costs(std::int64_t forward, std::int64_t input, std::int64_t weight) {
    CostModel costs;
    costs.stages = {StageCost{forward, input, weight, std::nullopt}};
    return costs;
}

SimulationResult run(ScheduleKind kind, int pp, int v, int m, const CostModel& costs) {
    return simulate(generate_schedule({kind, pp, v, m}), costs);
}

TEST(SimulatorClosedForms, GPipeAndOneFOneBBubbleShare) {
    const CostModel costs = unit_costs(1000, 1000, 1000);  // B = I + W = 2000
    for (ScheduleKind kind : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b})
        for (int p = 1; p <= 6; ++p)
            for (int m = p; m <= 16; ++m) {
                SCOPED_TRACE(::testing::Message()
                             << schedule_kind_name(kind) << " p=" << p << " m=" << m);
                const SimulationResult result = run(kind, p, 1, m, costs);
                EXPECT_EQ(result.step_time_ns, (m + p - 1) * 3000);
                EXPECT_NEAR(result.bubble_ratio, double(p - 1) / (m + p - 1), 1e-12);
                for (const RankResult& rank : result.ranks) {
                    EXPECT_EQ(rank.busy_ns, m * 3000);
                    EXPECT_EQ(rank.bubble_ns, (p - 1) * 3000);
                    EXPECT_EQ(rank.bubbles.warmup_ns + rank.bubbles.cooldown_ns +
                                  rank.bubbles.waiting_ns(),
                              rank.bubble_ns);
                }
            }
}

// A straggler k taking s times its stage costs bounds GPipe: the forwards leave it at its pace
// and the fast stages add one F each, the backwards likewise, so the step is
// (p - 1)(F + B) + m s (F + B) wherever the slow rank sits, and only it is busier.
TEST(SimulatorClosedForms, GPipeWithOneSlowRank) {
    CostModel costs = unit_costs(1000, 600, 400);  // B = 1000
    for (int p = 2; p <= 5; ++p)
        for (int slow = 0; slow < p; ++slow)
            for (double factor : {2.0, 3.0}) {
                SCOPED_TRACE(::testing::Message()
                             << "p=" << p << " slow rank " << slow << " x" << factor);
                costs.rank_slowdown.assign(static_cast<std::size_t>(p), 1.0);
                costs.rank_slowdown[static_cast<std::size_t>(slow)] = factor;
                const int m = 2 * p;
                const SimulationResult result = run(ScheduleKind::gpipe, p, 1, m, costs);
                const auto scaled = static_cast<std::int64_t>(factor * m * 2000);
                EXPECT_EQ(result.step_time_ns, (p - 1) * 2000 + scaled);
                for (const RankResult& rank : result.ranks)
                    EXPECT_EQ(rank.busy_ns, rank.rank == slow ? scaled : m * 2000);
            }
    costs.rank_slowdown = {1.0};  // fewer factors than ranks: the others at 1
    EXPECT_EQ(run(ScheduleKind::gpipe, 2, 1, 2, costs).step_time_ns, 3 * 2000);
}

TEST(SimulatorClosedForms, InterleavedBubbleShrinksWithStagesPerRank) {
    const CostModel costs = unit_costs(1000, 1000, 1000);
    for (int p = 2; p <= 4; ++p)
        for (int v = 2; v <= 3; ++v)
            for (int m : {p, 2 * p, 3 * p}) {
                SCOPED_TRACE(::testing::Message() << "p=" << p << " v=" << v << " m=" << m);
                const SimulationResult result = run(ScheduleKind::interleaved_1f1b, p, v, m, costs);
                EXPECT_NEAR(result.bubble_ratio, double(p - 1) / (v * m + p - 1), 1e-12);
            }
}

TEST(SimulatorClosedForms, ZeroBubbleH1BeatsOneFOneBByTwoWeightGradients) {
    const std::int64_t F = 3000, I = 2000, W = 1000;
    const CostModel costs = unit_costs(F, I, W);
    for (int p = 2; p <= 6; ++p)
        for (int m = p; m <= 3 * p; m += p) {
            SCOPED_TRACE(::testing::Message() << "p=" << p << " m=" << m);
            const SimulationResult one_f_one_b = run(ScheduleKind::one_f_one_b, p, 1, m, costs);
            EXPECT_EQ(one_f_one_b.step_time_ns, m * (F + I + W) + (p - 1) * (F + I + W));
            const SimulationResult zb_h1 =
                run(ScheduleKind::interleaved_zero_bubble, p, 1, m, costs);
            EXPECT_EQ(zb_h1.step_time_ns, m * (F + I + W) + (p - 1) * (F + I - W));
        }
}

TEST(SimulatorMemory, PeakActivationsOnTheFirstRank) {
    CostModel costs = unit_costs(1000, 1000, 1000);
    costs.activation_bytes = {1 << 20};
    for (int p = 2; p <= 5; ++p) {
        const int m = 3 * p;
        EXPECT_EQ(run(ScheduleKind::one_f_one_b, p, 1, m, costs).ranks[0].peak_memory_bytes,
                  std::int64_t{p} << 20);
        EXPECT_EQ(run(ScheduleKind::gpipe, p, 1, m, costs).ranks[0].peak_memory_bytes,
                  std::int64_t{m} << 20);
    }
}

TEST(SimulatorMemory, GradientsTemporariesAndKeptBytes) {
    // GPipe on two ranks, m = 3: rank 0 holds 3 x 100 when its first backward starts, which
    // allocates the 1000 weight-gradient bytes and 10 of temporaries; each backward frees its
    // 100 but 30, kept to the end of the step.
    CostModel costs = unit_costs(1000, 1000, 1000);
    costs.activation_bytes = {100};
    costs.gradient_bytes = {1000};
    costs.backward_peak_bytes = {10};
    costs.kept_bytes = {30};
    const SimulationResult result = run(ScheduleKind::gpipe, 2, 1, 3, costs);
    EXPECT_EQ(result.ranks[0].peak_memory_bytes, 3 * 100 + 1000 + 10);
    std::int64_t last = -1;
    for (const MemorySample& sample : result.memory)
        if (sample.rank == 0)
            last = sample.bytes;
    EXPECT_EQ(last, 1000 + 3 * 30);
}

TEST(SimulatorMemory, WhatAnInputBackwardLeavesIsHeldUntilItsWeightBackward) {
    // One rank runs F0 F1 I0 I1 W0 W1: 2 x 100 held after the forwards, each I leaves 40 for its
    // W on top, each W frees its microbatch's 100 and that 40.
    const Schedule schedule =
        parse_schedule_csv("0F0,0F1,0I0,0I1,0W0,0W1\r\n", "one rank, split backwards");
    CostModel costs = unit_costs(1000, 1000, 1000);
    costs.activation_bytes = {100};
    const SimulationResult without = simulate(schedule, costs);
    EXPECT_EQ(without.ranks[0].peak_memory_bytes, 200);
    costs.input_kept_bytes = {40};
    const SimulationResult with = simulate(schedule, costs);
    EXPECT_EQ(with.ranks[0].peak_memory_bytes, 200 + 2 * 40);
    std::vector<std::int64_t> after_each;
    for (const MemorySample& sample : with.memory)
        if (sample.rank == 0)
            after_each.push_back(sample.bytes);
    ASSERT_FALSE(after_each.empty());
    EXPECT_EQ(after_each.back(), 0);
}

TEST(SimulatorMemory, PostedReceivesHoldTheirBuffersUntilTheirConsumerTakesThem) {
    // Each message is 100 bytes, as each stage's held activations are. Rank 1 posts both input
    // receives before its F0: 200 until F0 starts, where the first input becomes F0's own held
    // activation (still 200), then 100 after B0. Rank 0 holds two forwards (200) and posts both
    // gradient receives at F1's end: 400 until B0 ends, freeing its activation and its gradient.
    const Schedule schedule = parse_schedule_csv(
        "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0RECV_B1,0B0,0B1\n"
        "1RECV_F0,1RECV_F1,1F0,1B0,1SEND_B0,1F1,1B1,1SEND_B1\n",
        "receives posted early");
    CostModel costs = unit_costs(1000, 1000, 1000);
    costs.activation_bytes = {100};
    const SimulationResult without = simulate(schedule, costs);
    EXPECT_EQ(without.ranks[0].peak_memory_bytes, 200);
    EXPECT_EQ(without.ranks[1].peak_memory_bytes, 100);
    costs.posted_receive_buffers = true;
    const SimulationResult with = simulate(schedule, costs);
    EXPECT_EQ(with.ranks[0].peak_memory_bytes, 400);
    EXPECT_EQ(with.ranks[1].peak_memory_bytes, 200);
    for (int rank : {0, 1}) {
        std::int64_t last = -1;
        for (const MemorySample& sample : with.memory)
            if (sample.rank == rank)
                last = sample.bytes;
        EXPECT_EQ(last, 0) << "rank " << rank << " ends the step holding nothing";
    }
    // Actions of no microbatch (FSDP's) hold no receive buffer.
    const Schedule sharded = parse_schedule_csv(
        "0UNSHARD,0F0,0SEND_F0,0RECV_B0,0B0,0RESHARD\n"
        "1UNSHARD,1RECV_F0,1F0,1B0,1SEND_B0,1RESHARD\n",
        "sharded stages");
    const SimulationResult fsdp = simulate(sharded, costs);
    EXPECT_EQ(fsdp.ranks[0].peak_memory_bytes, 200);
    EXPECT_EQ(fsdp.ranks[1].peak_memory_bytes, 100);
}

TEST(SimulatorBubbles, WarmupCooldownAndWaitingNameThePeer) {
    const SimulationResult result =
        run(ScheduleKind::one_f_one_b, 4, 1, 8, unit_costs(1000, 1000, 1000));
    // The last rank starts after three upstream forwards; rank 0 starts at once.
    EXPECT_EQ(result.ranks[3].bubbles.warmup_ns, 3000);
    EXPECT_EQ(result.ranks[0].bubbles.warmup_ns, 0);
    // Rank 0 only ever waits for gradients from rank 1.
    ASSERT_EQ(result.ranks[0].bubbles.waiting_on_rank.size(), 1u);
    EXPECT_EQ(result.ranks[0].bubbles.waiting_on_rank.begin()->first, 1);
}

TEST(SimulatorLinks, LatencyIsPaidOnEveryCrossing) {
    CostModel costs = unit_costs(1000, 500, 500);
    costs.intra_host.latency_ns = 300;
    const SimulationResult result = run(ScheduleKind::gpipe, 2, 1, 1, costs);
    // F0 on rank 0, 300 ns to rank 1, F and B there, 300 ns back, B on rank 0.
    EXPECT_EQ(result.step_time_ns, 1000 + 300 + 1000 + 1000 + 300 + 1000);
    CostModel bandwidth = costs;
    bandwidth.intra_host.latency_ns = 0;
    bandwidth.intra_host.bytes_per_ns = 2.0;  // 2 GB/s
    bandwidth.activation_bytes = {1000};
    EXPECT_EQ(run(ScheduleKind::gpipe, 2, 1, 1, bandwidth).step_time_ns, 4000 + 2 * 500);
}

// A SEND's issue is host time on its rank's thread, in program order: GPipe pp=2 m=2 with
// F = B = 1000 and no latency. Rank 0 issues SEND_F0 between F0 and F1, so rank 1's F1 starts
// 100 later; rank 1 issues SEND_B0 between B0 and B1, so rank 0's B1 does too: 6000 + 2 x 100.
TEST(SimulatorLinks, ASendsIssueHoldsUpItsRanksNextComputation) {
    CostModel costs = unit_costs(1000, 500, 500);
    EXPECT_EQ(run(ScheduleKind::gpipe, 2, 1, 2, costs).step_time_ns, 6000);
    costs.send_issue_ns = 100;
    EXPECT_EQ(run(ScheduleKind::gpipe, 2, 1, 2, costs).step_time_ns, 6200);
    // With one microbatch every issue falls in a wait the step has anyway.
    EXPECT_EQ(run(ScheduleKind::gpipe, 2, 1, 1, costs).step_time_ns, 4000);
}

// The time a rank spends issuing its own sends is its own gap, not a wait on the peer whose input
// had long arrived: 1F1B pp=2 m=4, F = 10 us, B = 20 us, 5 us per issue. Rank 1 issues SEND_B
// after each B, and its next F, whose input arrived 15 us before, starts 5 us after that B;
// rank 0 waits on rank 1's gradients for 40 us. As `diff` reads the recorded run.
TEST(SimulatorLinks, ASendsIssueIsTheRanksOwnGapNotAWaitOnItsPeer) {
    CostModel costs = unit_costs(10'000, 10'000, 10'000);
    costs.send_issue_ns = 5'000;
    const SimulationResult result = run(ScheduleKind::one_f_one_b, 2, 1, 4, costs);
    EXPECT_EQ(result.step_time_ns, 165'000);
    EXPECT_TRUE(result.ranks[1].bubbles.waiting_on_rank.empty());
    EXPECT_EQ(result.ranks[1].bubbles.local_ns, 15'000);
    EXPECT_EQ(result.ranks[1].bubbles.warmup_ns + result.ranks[1].bubbles.cooldown_ns, 30'000);
    EXPECT_EQ(result.ranks[0].bubbles.waiting_on_rank, (std::map<int, std::int64_t>{{1, 40'000}}));
    EXPECT_EQ(result.ranks[0].bubbles.local_ns, 5'000);
}

// Times of unknown make (stated or measured): the efficiency is the share of the shorter part
// hidden, and nothing is hidden unless it is stated.
TEST(CostModelOverlap, HidesAShareOfTheShorterPartOfOpaqueTimes) {
    CostModel costs;
    EXPECT_EQ(costs.overlap({1000, 0}, {3000, 0}).ns, 4000);
    costs.overlap_efficiency = 0.5;
    EXPECT_EQ(costs.overlap({1000, 0}, {3000, 0}).ns, 3500);
    costs.overlap_efficiency = 1;
    EXPECT_EQ(costs.overlap({1000, 0}, {3000, 0}).ns, 3000);
}

// Two parts on one device share its arithmetic: only what is not arithmetic can be hidden.
TEST(CostModelOverlap, NeverHidesArithmetic) {
    CostModel costs;
    costs.overlap_efficiency = 1;
    const Work pair = costs.overlap({1000, 1000}, {3000, 3000});
    EXPECT_EQ(pair.ns, 4000);
    EXPECT_EQ(pair.arithmetic_ns, 4000);
    EXPECT_EQ(costs.overlap({1000, 800}, {3000, 2500}).ns, 3300);  // 200 + 500 hidden
    costs.overlap_efficiency = 0.5;
    EXPECT_EQ(costs.overlap({1000, 800}, {3000, 2500}).ns, 3650);
}

// A DualPipeV step whose costs are all arithmetic takes as long at any overlap efficiency: its
// FLOPs, not less.
TEST(CostModelOverlap, AllArithmeticDualPipeVIsTheSameAtAnyEfficiency) {
    CostModel costs = unit_costs(1000, 1200, 900);
    costs.stages.front().forward_arithmetic_ns = 1000;
    costs.stages.front().input_arithmetic_ns = 1200;
    costs.stages.front().weight_arithmetic_ns = 900;
    const SimulationResult serial = run(ScheduleKind::dual_pipe_v, 4, 2, 10, costs);
    costs.overlap_efficiency = 1;
    const SimulationResult overlapped = run(ScheduleKind::dual_pipe_v, 4, 2, 10, costs);
    EXPECT_EQ(overlapped.step_time_ns, serial.step_time_ns);
    for (const RankResult& rank : overlapped.ranks) {
        EXPECT_EQ(rank.arithmetic_ns, rank.busy_ns);
        EXPECT_EQ(rank.busy_ns, 10 * 2 * (1000 + 1200 + 900));
    }
    // Opaque times of the same sizes: the overlap hides the shorter part.
    costs.stages.front() = StageCost{1000, 1200, 900, std::nullopt};
    EXPECT_LT(run(ScheduleKind::dual_pipe_v, 4, 2, 10, costs).step_time_ns, serial.step_time_ns);
}

}  // namespace
}  // namespace pipelens::sim
