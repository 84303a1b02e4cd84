// check_schedule, the order of checks `pipelens check` and the viewer share: a structural
// problem stops before any lowering, a compute-only schedule is lowered before its dry run, and
// the swapped-receive example's wait cycle is the one the CLI prints.
#include <gtest/gtest.h>

#include "engine/schedule/generate.hpp"
#include "engine/schedule/schedule_check.hpp"
#include "engine/schedule/schedule_csv.hpp"

namespace pipelens {
namespace {

TEST(ScheduleCheck, TheSwappedReceiveExampleHangsInATwoRankCycle) {
    const ScheduleCheck check =
        check_schedule(read_schedule_csv(PIPELENS_SOURCE_DIR "/assets/examples/swapped_recvs.csv"));
    ASSERT_FALSE(check.ok());
    EXPECT_TRUE(check.structure.ok());
    EXPECT_FALSE(check.lowered);        // it carries its own send/recv: run as written
    EXPECT_EQ(check.actions_run, 14u);  // rank 0's first 8 actions, rank 1's first 6
    ASSERT_TRUE(check.hang);
    ASSERT_EQ(check.hang->cycle.size(), 2u);
    const WaitLink& first = check.hang->cycle[0];
    EXPECT_EQ(first.rank, 0);
    EXPECT_EQ(first.step, 8);
    EXPECT_EQ(first.action, "0RECV_B1");
    EXPECT_EQ(first.needed, "1SEND_B1");
    EXPECT_EQ(first.holder_rank, 1);
    EXPECT_EQ(first.holder_step, 8);
    const WaitLink& second = check.hang->cycle[1];
    EXPECT_EQ(second.rank, 1);
    EXPECT_EQ(second.step, 6);
    EXPECT_EQ(second.action, "1RECV_F3");
    EXPECT_EQ(second.needed, "0SEND_F3");
    EXPECT_EQ(second.holder_rank, 0);
    EXPECT_EQ(second.holder_step, 11);
    EXPECT_EQ(check.problem_text(),
              "schedule can hang: wait cycle rank 0 -> rank 1 -> rank 0\n"
              "  rank 0 is stuck at step 8 (0RECV_B1): it needs 1SEND_B1, which rank 1 only runs "
              "at step 8\n"
              "  rank 1 is stuck at step 6 (1RECV_F3): it needs 0SEND_F3, which rank 0 only runs "
              "at step 11");
}

TEST(ScheduleCheck, AComputeOnlyScheduleIsLoweredThenRunToTheEnd) {
    const Schedule schedule = generate_schedule({ScheduleKind::one_f_one_b, 2, 1, 4});
    const ScheduleCheck check = check_schedule(schedule);
    EXPECT_TRUE(check.ok()) << check.problem_text();
    EXPECT_EQ(check.problem_text(), "");
    ASSERT_TRUE(check.lowered);
    // 16 computations, and per microbatch one pair each way: 8 pairs, 16 transfers.
    EXPECT_EQ(check.lowered->action_count(), 32u);
    EXPECT_EQ(check.lowered->pair_count, 8);
    EXPECT_EQ(check.actions_run, 32u);
    EXPECT_EQ(ok_text(schedule, check),
              "ok: pp=2, 2 stages, m=4, 16 actions (compute only; lowers to 32 actions with 8 "
              "send/recv pairs); dry run completes");
    EXPECT_EQ(ok_text(schedule, check, ActionNotation::legacy),
              "ok: pp=2, 2 stages, m=4, 16 actions (PyTorch's older notation, compute only; "
              "lowers to 32 actions with 8 send/recv pairs); dry run completes");
}

TEST(ScheduleCheck, AStructuralProblemStopsBeforeTheLowering) {
    Schedule schedule = generate_schedule({ScheduleKind::one_f_one_b, 2, 1, 4});
    schedule.ranks[0].pop_back();  // a backward of stage 0 never runs
    const ScheduleCheck check = check_schedule(schedule);
    EXPECT_FALSE(check.ok());
    EXPECT_FALSE(check.structure.ok());
    EXPECT_FALSE(check.hang);
    EXPECT_FALSE(check.lowered);
    EXPECT_EQ(check.problem_text(), check.structure.text());
}

}  // namespace
}  // namespace pipelens
