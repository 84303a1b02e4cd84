// The work list's `turns` order, which decides where lowering places every RECV: each round asks
// the ranks in rank order, one action each; a rank that could not run is asked again only once
// woken, in the same round when woken by a lower rank, in the next when woken by a higher one
// (exactly what asking every rank every round gives), and never more often, so that lowering
// stays linear in its actions however many ranks wait.
#include <gtest/gtest.h>

#include <vector>

#include "engine/schedule/work_list.hpp"

namespace pipelens {
namespace {

// One forward per rank; `waits_for[rank]` is the rank whose action must have run first (-1:
// none). Returns the ranks in the order they ran, and counts how often a rank was asked.
std::vector<int> run_in_turns(const std::vector<int>& waits_for, std::size_t& asked) {
    Schedule schedule;
    for (std::size_t rank = 0; rank < waits_for.size(); ++rank)
        schedule.ranks.push_back({make_action(static_cast<int>(rank), ActionKind::forward, 0)});
    WorkList work(schedule, WorkOrder::turns);
    std::vector<bool> ran(waits_for.size(), false);
    std::vector<int> order;
    asked = 0;
    work.run([&](int rank, const Action&) {
        ++asked;
        const int needed = waits_for[static_cast<std::size_t>(rank)];
        if (needed >= 0 && !ran[static_cast<std::size_t>(needed)])
            return false;
        ran[static_cast<std::size_t>(rank)] = true;
        order.push_back(rank);
        for (std::size_t waiter = 0; waiter < waits_for.size(); ++waiter)
            if (waits_for[waiter] == rank)
                work.wake(static_cast<int>(waiter));
        return true;
    });
    EXPECT_TRUE(work.finished());
    return order;
}

TEST(WorkListTurns, ARankWokenByALowerRankRunsInTheSameRoundByAHigherOneInTheNext) {
    std::size_t asked = 0;
    // Round 1: rank 0 waits, rank 1 runs (waking rank 0 for round 2), rank 2 waits for rank 0.
    // Round 2: rank 0 runs and wakes rank 2, above it, which runs in the same round.
    EXPECT_EQ(run_in_turns({1, -1, 0}, asked), (std::vector<int>{1, 0, 2}));
    EXPECT_EQ(asked, 5u);
    // Rank 3 needs only rank 0 and runs in round 1; rank 2, woken by it, in round 2; rank 1 in 3.
    EXPECT_EQ(run_in_turns({-1, 2, 3, 0}, asked), (std::vector<int>{0, 3, 2, 1}));
}

// Each rank waits for the one above it: the ranks run one per round from the top. Asking every
// rank every round took pp^2 / 2 questions (lowering GPipe at pp=65536 took 33 s).
TEST(WorkListTurns, AWaitingRankIsAskedAgainOnlyOnceWoken) {
    constexpr int kRanks = 4096;
    std::vector<int> waits_for(kRanks);
    for (int rank = 0; rank < kRanks; ++rank)
        waits_for[static_cast<std::size_t>(rank)] = rank + 1 < kRanks ? rank + 1 : -1;
    std::size_t asked = 0;
    const std::vector<int> order = run_in_turns(waits_for, asked);
    ASSERT_EQ(order.size(), static_cast<std::size_t>(kRanks));
    EXPECT_EQ(order.front(), kRanks - 1);
    EXPECT_EQ(order.back(), 0);
    EXPECT_EQ(asked, 2u * kRanks - 1);
}

TEST(WorkListTurns, RanksThatWaitForEachOtherStopTheRunUnfinished) {
    Schedule schedule;
    for (int rank = 0; rank < 2; ++rank)
        schedule.ranks.push_back({make_action(rank, ActionKind::forward, 0)});
    WorkList work(schedule, WorkOrder::turns);
    std::size_t asked = 0;
    work.run([&](int, const Action&) {
        ++asked;
        return false;
    });
    EXPECT_FALSE(work.finished());
    EXPECT_EQ(asked, 2u);
    EXPECT_EQ(work.next_step(0), 0u);
}

}  // namespace
}  // namespace pipelens
