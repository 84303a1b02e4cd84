// Bubble accounting: the split of one rank's idle time with exact values, a hand-timed 1F1B
// (pp = 2, m = 2, F = 1, B = 2, free transfers) before and after a delay whose only cause is on
// the delayed rank itself, the V-shape's local hand-off, and the accounting of a recorded run
// agreeing exactly with the simulator's for every schedule kind.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/analysis/bubble_accounting.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "sim/simulator.hpp"
#include "tests/analysis/every_schedule_kind.hpp"
#include "tests/analysis/simulated_run.hpp"

namespace pipelens::analysis {
namespace {

// The simulated run as a recorded one reads back: the lowered program and its times.
TimedSchedule timed_from(const Schedule& lowered, const sim::SimulationResult& result) {
    TimedSchedule timed{lowered, {}, {}, {}};
    timed.times.resize(lowered.ranks.size());
    for (std::size_t rank = 0; rank < lowered.ranks.size(); ++rank)
        for (std::size_t step = 0; step < lowered.ranks[rank].size(); ++step) {
            const sim::TimelineEntry& entry = result.timeline[result.first_entry[rank] + step];
            timed.times[rank].push_back({entry.start_ns, entry.end_ns,
                                         static_cast<std::int32_t>(step),
                                         entry.lane == sim::Lane::communication});
        }
    return timed;
}

struct SimulatedRun {
    Schedule lowered;
    sim::SimulationResult result;
    TimedSchedule timed;
};

SimulatedRun simulate(const ScheduleShape& shape, const sim::CostModel& costs,
                      const LoweringOptions& options = {}) {
    SimulatedRun run;
    run.lowered = lower(generate_schedule(shape), options);
    run.result = sim::simulate(run.lowered, costs);
    run.timed = timed_from(run.lowered, run.result);
    return run;
}

sim::CostModel unit_costs() {  // F = 1, I = 1, W = 1 (B = 2), free transfers
    sim::CostModel costs;
    costs.stages = {sim::StageCost{1, 1, 1, std::nullopt}};
    return costs;
}

std::int64_t step_end(const TimedSchedule& timed) {
    std::int64_t end = 0;
    for (const auto& spans : timed.times)
        for (const ActionSpan& span : spans)
            end = std::max(end, span.end_ns);
    return end;
}

void expect_split_adds_up(const RankBubbles& rank) {
    EXPECT_EQ(rank.split.warmup_ns + rank.split.waiting_ns() + rank.split.local_ns +
                  rank.split.cooldown_ns,
              rank.bubble_ns);
}

TEST(BubbleAccounting, ARanksGapsGoToThePeerProvidingOrStayLocal) {
    RankBubbleAccount account(1);
    account.add_computation(2, 4, 0);     // the first computation: 2 of warm-up
    account.add_computation(5, 6, 0);     // 1 waiting on rank 0
    account.add_computation(6, 8, 2);     // no gap: nothing to attribute
    account.add_computation(10, 11, 1);   // 2 waiting on itself: local
    account.add_computation(12, 13, -1);  // 1 waiting on nothing known: local
    account.add_computation(15, 16, 2);   // 2 waiting on rank 2
    const RankBubbles figures = account.finish(20);
    EXPECT_TRUE(figures.computed);
    EXPECT_EQ(figures.busy_ns, 8);
    EXPECT_EQ(figures.bubble_ns, 12);
    EXPECT_DOUBLE_EQ(figures.bubble_ratio, 0.6);
    EXPECT_EQ(figures.split.warmup_ns, 2);
    EXPECT_EQ(figures.split.cooldown_ns, 4);
    EXPECT_EQ(figures.split.local_ns, 3);
    EXPECT_EQ(figures.split.waiting_on_rank, (std::map<int, std::int64_t>{{0, 1}, {2, 2}}));
    EXPECT_EQ(figures.split.waiting_ns(), 3);
    expect_split_adds_up(figures);

    // A rank that never computed idled the whole step, all of it warm-up.
    const RankBubbles idle = RankBubbleAccount(3).finish(20);
    EXPECT_FALSE(idle.computed);
    EXPECT_EQ(idle.busy_ns, 0);
    EXPECT_EQ(idle.bubble_ns, 20);
    EXPECT_EQ(idle.split.warmup_ns, 20);
    EXPECT_EQ(idle.split.cooldown_ns, 0);
}

// Rank 0 runs F0 [0,1] F1 [1,2], waits for rank 1's B0 [2,4], runs B0 [4,6], waits for B1
// [5,7], runs B1 [7,9]. Rank 1 starts at 1 and ends at 7: warm-up 1, cool-down 2.
TEST(BubbleAccounting, OneFOneBTwoRanksByHand) {
    const SimulatedRun run = simulate({ScheduleKind::one_f_one_b, 2, 1, 2}, unit_costs());
    ASSERT_EQ(run.result.step_time_ns, 9);
    const std::vector<RankBubbles> ranks =
        account_bubbles(run.timed, HoldGraph(run.timed), run.result.step_time_ns);
    ASSERT_EQ(ranks.size(), 2u);
    EXPECT_EQ(ranks[0].busy_ns, 6);
    EXPECT_EQ(ranks[0].split.warmup_ns, 0);
    EXPECT_EQ(ranks[0].split.waiting_on_rank, (std::map<int, std::int64_t>{{1, 3}}));
    EXPECT_EQ(ranks[0].split.local_ns, 0);
    EXPECT_EQ(ranks[0].split.cooldown_ns, 0);
    EXPECT_EQ(ranks[1].busy_ns, 6);
    EXPECT_EQ(ranks[1].split.warmup_ns, 1);
    EXPECT_TRUE(ranks[1].split.waiting_on_rank.empty());
    EXPECT_EQ(ranks[1].split.local_ns, 0);
    EXPECT_EQ(ranks[1].split.cooldown_ns, 2);
    for (const RankBubbles& rank : ranks) {
        EXPECT_EQ(rank.bubble_ns, 3);
        expect_split_adds_up(rank);
    }
    // The simulator's own figures are the same accounting.
    for (std::size_t rank = 0; rank < 2; ++rank) {
        EXPECT_EQ(run.result.ranks[rank].bubbles.waiting_on_rank,
                  ranks[rank].split.waiting_on_rank);
        EXPECT_EQ(run.result.ranks[rank].bubbles.warmup_ns, ranks[rank].split.warmup_ns);
        EXPECT_EQ(run.result.ranks[rank].bubbles.cooldown_ns, ranks[rank].split.cooldown_ns);
    }
}

// The same run with 1 of host overhead before rank 1's B0, whose only input is rank 1's own F0:
// that gap is local, not waiting on a peer; rank 0 now waits 3 + 1 on rank 1; the step is 10.
TEST(BubbleAccounting, AGapWhoseOnlyCauseIsOnTheSameRankIsLocal) {
    SimulatedRun run = simulate({ScheduleKind::one_f_one_b, 2, 1, 2}, unit_costs());
    const ActionRef backward = testing::find_action(run.timed, 1, "1B0");
    const HoldGraph before(run.timed);
    ASSERT_TRUE(before.held_by(backward));
    EXPECT_EQ(before.held_by(backward)->rank, 1);  // its own F0
    testing::delay(run.timed, backward, 1);
    ASSERT_EQ(step_end(run.timed), 10);
    const HoldGraph holds(run.timed);
    const WaitedFor waited = waited_for(run.timed, holds, backward);
    EXPECT_EQ(waited.peer, -1);
    ASSERT_TRUE(waited.held_by);
    EXPECT_EQ(run.timed.schedule.text(run.timed.schedule.ranks[1][waited.held_by->index]), "1F0");

    const std::vector<RankBubbles> ranks = account_bubbles(run.timed, holds, 10);
    EXPECT_EQ(ranks[0].split.waiting_on_rank, (std::map<int, std::int64_t>{{1, 4}}));
    EXPECT_EQ(ranks[0].split.local_ns, 0);
    EXPECT_EQ(ranks[1].split.warmup_ns, 1);
    EXPECT_TRUE(ranks[1].split.waiting_on_rank.empty());
    EXPECT_EQ(ranks[1].split.local_ns, 1);
    EXPECT_EQ(ranks[1].split.cooldown_ns, 2);
    for (const RankBubbles& rank : ranks) {
        EXPECT_EQ(rank.bubble_ns, 4);
        expect_split_adds_up(rank);
    }
    // Rank 0's B0 was held by its receive, whose data rank 1's B0 computed.
    const WaitedFor peer = waited_for(run.timed, holds, testing::find_action(run.timed, 0, "0B0"));
    EXPECT_EQ(peer.peer, 1);
    ASSERT_TRUE(peer.held_by);
    EXPECT_EQ(run.timed.schedule.text(run.timed.schedule.ranks[0][peer.held_by->index]),
              "0RECV_B0");
    ASSERT_TRUE(peer.waited_on);
    EXPECT_EQ(peer.waited_on->rank, 1);
    EXPECT_EQ(run.timed.schedule.text(run.timed.schedule.ranks[1][peer.waited_on->index]), "1B0");
}

// ZB-V puts stages 1 and 2 on rank 1: stage 2's first F takes stage 1's output on the same rank,
// no transfer. Host overhead before it is local to rank 1, never rank 1 waiting on itself.
TEST(BubbleAccounting, TheVShapesLocalHandOffIsNotWaitingOnAPeer) {
    SimulatedRun run = simulate({ScheduleKind::zbv_zero_bubble, 2, 2, 4}, unit_costs());
    for (const sim::RankResult& rank : run.result.ranks) {
        EXPECT_EQ(rank.bubbles.local_ns, 0) << rank.rank;
        EXPECT_FALSE(rank.bubbles.waiting_on_rank.contains(rank.rank)) << rank.rank;
    }
    const ActionRef hand_off = testing::find_action(run.timed, 1, "2F0");
    testing::delay(run.timed, hand_off, 5);
    const HoldGraph holds(run.timed);
    const WaitedFor waited = waited_for(run.timed, holds, hand_off);
    EXPECT_EQ(waited.peer, -1);
    ASSERT_TRUE(waited.held_by);
    EXPECT_EQ(waited.held_by->rank, 1);
    const std::vector<RankBubbles> ranks = account_bubbles(run.timed, holds, step_end(run.timed));
    EXPECT_EQ(ranks[1].split.local_ns, 5);
    EXPECT_FALSE(ranks[1].split.waiting_on_rank.contains(1));
    for (const RankBubbles& rank : ranks)
        expect_split_adds_up(rank);
}

// Returns the local time over every rank.
std::int64_t expect_same_accounting(const SimulatedRun& run) {
    const std::vector<RankBubbles> ranks =
        account_bubbles(run.timed, HoldGraph(run.timed), run.result.step_time_ns);
    EXPECT_EQ(ranks.size(), run.result.ranks.size());
    std::int64_t local = 0;
    for (std::size_t rank = 0; rank < std::min(ranks.size(), run.result.ranks.size()); ++rank) {
        SCOPED_TRACE(::testing::Message() << "rank " << rank);
        const sim::RankResult& simulated = run.result.ranks[rank];
        EXPECT_EQ(ranks[rank].busy_ns, simulated.busy_ns);
        EXPECT_EQ(ranks[rank].bubble_ns, simulated.bubble_ns);
        EXPECT_EQ(ranks[rank].split.warmup_ns, simulated.bubbles.warmup_ns);
        EXPECT_EQ(ranks[rank].split.cooldown_ns, simulated.bubbles.cooldown_ns);
        EXPECT_EQ(ranks[rank].split.local_ns, simulated.bubbles.local_ns);
        EXPECT_EQ(ranks[rank].split.waiting_on_rank, simulated.bubbles.waiting_on_rank);
        EXPECT_FALSE(simulated.bubbles.waiting_on_rank.contains(static_cast<int>(rank)));
        expect_split_adds_up(ranks[rank]);
        local += ranks[rank].split.local_ns;
    }
    return local;
}

// What a recorded run's accounting attributes through the hold graph is what the simulator
// attributed while timing it: uneven stages and a slow link, so nothing lines up by accident,
// with eager and rendezvous transfers, and with FSDP. With one stage unsharded at a time, an
// interleaved rank re-gathers its parameters before each switch of stage, and a computation that
// waits for that UNSHARD (its own communication stream) idles locally.
TEST(BubbleAccounting, ARecordedRunIsAccountedAsTheSimulatorAccountedIt) {
    std::int64_t fsdp_local = 0, local_without_fsdp = 0;
    const auto& shapes = kEveryScheduleKind;
    for (const bool rendezvous : {false, true})
        for (const bool fsdp : {false, true})
            for (const ScheduleShape& shape : shapes) {
                SCOPED_TRACE(::testing::Message()
                             << schedule_kind_name(shape.kind) << (rendezvous ? " rendezvous" : "")
                             << (fsdp ? " fsdp" : ""));
                sim::CostModel costs;
                for (int stage = 0; stage < shape.rank_count * shape.stages_per_rank; ++stage)
                    costs.stages.push_back(
                        {1300 - 70 * stage, 900 + 40 * stage, 700, std::nullopt});
                costs.intra_host.latency_ns = 170;
                costs.intra_host.bytes_per_ns = 2.0;
                costs.activation_bytes = {4096};
                costs.rendezvous = rendezvous;
                costs.unshard_ns = 2500;
                costs.reshard_ns = 100;
                costs.reduce_grad_ns = 900;
                LoweringOptions options;
                options.keep_fsdp_actions = fsdp;
                options.max_active_stages = 1;
                const std::int64_t local = expect_same_accounting(simulate(shape, costs, options));
                (fsdp ? fsdp_local : local_without_fsdp) += local;
            }
    EXPECT_GT(fsdp_local, 0);
    EXPECT_EQ(local_without_fsdp, 0);  // without UNSHARD, every gap waits on a peer
}

}  // namespace
}  // namespace pipelens::analysis
