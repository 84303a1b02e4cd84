// The thread budget: equal shares of the cores by default, the user's count when given, and the
// oversubscription warning exactly when ranks x threads exceed the cores.
#include <gtest/gtest.h>

#include "engine/run_record/thread_budget.hpp"

namespace pipelens::run_record {
namespace {

TEST(ThreadBudget, RanksShareTheCoresEqually) {
    EXPECT_EQ(plan_threads(16, 4, std::nullopt).threads_per_rank, 4);
    EXPECT_EQ(plan_threads(16, 3, std::nullopt).threads_per_rank, 5);  // 15 of 16 cores
    EXPECT_EQ(plan_threads(2, 2, std::nullopt).threads_per_rank, 1);
    EXPECT_FALSE(plan_threads(2, 2, std::nullopt).oversubscribed());
    EXPECT_EQ(plan_threads(2, 2, std::nullopt).warning(), "");
}

TEST(ThreadBudget, MoreRanksThanCoresGetOneThreadEachAndAWarning) {
    const ThreadBudget budget = plan_threads(2, 4, std::nullopt);
    EXPECT_EQ(budget.threads_per_rank, 1);
    EXPECT_TRUE(budget.oversubscribed());
    EXPECT_EQ(budget.warning(),
              "4 ranks x 1 thread on 2 cores: ranks will time-slice; timings will not match a "
              "pipeline");
}

TEST(ThreadBudget, ARequestedCountIsKeptAndWarnedAboutWhenItDoesNotFit) {
    EXPECT_EQ(plan_threads(16, 2, 8).warning(), "");
    EXPECT_EQ(plan_threads(16, 2, 9).warning(),
              "2 ranks x 9 threads on 16 cores: ranks will time-slice; timings will not match a "
              "pipeline");
    EXPECT_EQ(plan_threads(1, 1, 2).warning(),
              "1 rank x 2 threads on 1 core: ranks will time-slice; timings will not match a "
              "pipeline");
    EXPECT_THROW(plan_threads(4, 2, 0), std::invalid_argument);
}

TEST(ThreadBudget, AvailableCoresIsAtLeastOne) {
    EXPECT_GE(available_cores(), 1);
}

}  // namespace
}  // namespace pipelens::run_record
