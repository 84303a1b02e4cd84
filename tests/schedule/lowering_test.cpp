// Lowering: the exact SEND/RECV placement of PyTorch's runtime lowering, FSDP action
// placement, pair ids, and hang detection for compute-only schedules that cannot be lowered.
#include <gtest/gtest.h>

#include "tests/schedule/schedule_test_text.hpp"

#include "engine/schedule/dry_run.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "engine/schedule/static_check.hpp"

namespace pipelens {
namespace {

using testing::split;
using testing::texts;

TEST(Lowering, OneFOneBGetsTheRuntimeSendRecvOrder) {
    const Schedule lowered = lower(generate_schedule({ScheduleKind::one_f_one_b, 2, 1, 4}));
    EXPECT_EQ(texts(lowered, 0),
              split("0F0 0SEND_F0 0F1 0SEND_F1 0RECV_B0 0B0 0F2 0SEND_F2 0RECV_B1 0B1 0F3 "
                    "0SEND_F3 0RECV_B2 0B2 0RECV_B3 0B3"));
    EXPECT_EQ(texts(lowered, 1),
              split("1RECV_F0 1F0 1RECV_F1 1B0 1SEND_B0 1F1 1RECV_F2 1B1 1SEND_B1 1F2 1RECV_F3 "
                    "1B2 1SEND_B2 1F3 1B3 1SEND_B3"));
    EXPECT_EQ(lowered.pair_count, 8);
    EXPECT_TRUE(lowered.has_communication);
}

TEST(Lowering, PairIdsLinkEachSendToItsRecv) {
    const Schedule lowered = lower(generate_schedule({ScheduleKind::one_f_one_b, 2, 1, 4}));
    // 0SEND_F0 is the first pair; its recv is rank 1's first action.
    EXPECT_EQ(lowered.ranks[0][1].link, lowered.ranks[1][0].link);
    EXPECT_EQ(lowered.ranks[0][1].link, 0);
    // 1SEND_B0 (rank 1, step 4) pairs with 0RECV_B0 (rank 0, step 4).
    EXPECT_EQ(lowered.ranks[1][4].link, lowered.ranks[0][4].link);
    EXPECT_NE(lowered.ranks[1][4].link, lowered.ranks[0][1].link);
}

TEST(Lowering, FsdpActionsCanBeKept) {
    LoweringOptions options;
    options.keep_fsdp_actions = true;
    const Schedule lowered =
        lower(generate_schedule({ScheduleKind::one_f_one_b, 2, 1, 2}), options);
    EXPECT_EQ(texts(lowered, 0), split("0UNSHARD 0F0 0SEND_F0 0F1 0SEND_F1 0RECV_B0 0B0 0RECV_B1 "
                                       "0B1 0REDUCE_GRAD 0RESHARD"));
    EXPECT_EQ(texts(lowered, 1), split("1UNSHARD 1RECV_F0 1F0 1RECV_F1 1B0 1SEND_B0 1F1 1B1 "
                                       "1SEND_B1 1REDUCE_GRAD 1RESHARD"));
}

TEST(Lowering, UnshardPrefetchesAndReshardsWhenAStageLeavesTheWindow) {
    const Schedule compute = generate_schedule({ScheduleKind::interleaved_1f1b, 2, 2, 4});
    const Schedule with_fsdp = lower_reduce_grad(lower_unshard_reshard(compute, 3));
    EXPECT_EQ(texts(with_fsdp, 0),
              split("0UNSHARD 2UNSHARD 0F0 0F1 2F0 2F1 0F2 2B0 0F3 2B1 2F2 0B0 2F3 0B1 2B2 2B3 "
                    "2REDUCE_GRAD 2RESHARD 0B2 0B3 0REDUCE_GRAD 0RESHARD"));
    // A window of one stage evicts on every stage switch.
    const Schedule narrow =
        lower_unshard_reshard(generate_schedule({ScheduleKind::looped_bfs, 1, 2, 1}), 1);
    EXPECT_EQ(texts(narrow, 0),
              split("0UNSHARD 0F0 0RESHARD 1UNSHARD 1F0 1B0 1RESHARD 0UNSHARD 0B0 0RESHARD"));
}

TEST(Lowering, AdjacentStagesOnOneRankExchangeNothing) {
    const Schedule lowered = lower(generate_schedule({ScheduleKind::zbv_zero_bubble, 2, 2, 4}));
    // Crossings: F of stages 0 and 2, backward of stages 1 and 3; stage 1 -> 2 stays on rank 1.
    EXPECT_EQ(lowered.pair_count, 4 * 4);
    for (const auto& actions : lowered.ranks)
        for (const Action& action : actions)
            if (is_communication(action.kind)) {
                EXPECT_NE(lowered.text(action).substr(0, 7), "1SEND_F");
                EXPECT_NE(lowered.text(action).substr(0, 7), "2SEND_B");
            }
}

TEST(Lowering, RejectsSchedulesThatAreNotComputeOnly) {
    const Schedule lowered = lower(generate_schedule({ScheduleKind::gpipe, 2, 1, 2}));
    try {
        lower(lowered);
        FAIL();
    } catch (const ScheduleCheckError& error) {
        EXPECT_NE(std::string(error.what())
                      .find("rank 0, step 1: expected a compute-only schedule "
                            "but found '0SEND_F0'"),
                  std::string::npos)
            << error.what();
    }
}

// PyTorch's GPipe and 1F1B print their compute tables with REDUCE_GRAD after each stage's last
// backward; such a table lowers exactly as the table without them, and so does one that leaves
// some out. One anywhere else is refused, naming where it stands and what lowering puts there.
TEST(Lowering, ReduceGradWhereLoweringPutsItIsAcceptedInAComputeTable) {
    const Schedule plain =
        parse_schedule_csv("0F0,0F1,0B0,0B1\r\n1F0,1B0,1F1,1B1\r\n", "plain.csv");
    const Schedule as_pytorch_prints = parse_schedule_csv(
        "0F0,0F1,0B0,0B1,0REDUCE_GRAD\r\n1F0,1B0,1F1,1B1,1REDUCE_GRAD\r\n", "gpipe.csv");
    const Schedule one_left_out =
        parse_schedule_csv("0F0,0F1,0B0,0B1\r\n1F0,1B0,1F1,1B1,1REDUCE_GRAD\r\n", "one.csv");
    for (const bool keep : {false, true}) {
        LoweringOptions options;
        options.keep_fsdp_actions = keep;
        const std::string expected = format_schedule_csv(lower(plain, options));
        EXPECT_EQ(format_schedule_csv(lower(as_pytorch_prints, options)), expected);
        EXPECT_EQ(format_schedule_csv(lower(one_left_out, options)), expected);
    }
    const auto refusal = [](const std::string& csv) {
        try {
            lower(parse_schedule_csv(csv, "bad.csv"));
        } catch (const ScheduleCheckError& error) {
            return std::string(error.what());
        }
        return std::string("lowered");
    };
    const std::string rule =
        "; a REDUCE_GRAD in a compute-only schedule stands right after its stage's last "
        "backward (B or W), as PyTorch places it, or is left out (lowering adds it)";
    EXPECT_EQ(refusal("0F0,0F1,0B0,0REDUCE_GRAD,0B1\r\n1F0,1B0,1F1,1B1\r\n"),
              "schedule check failed (1 problem):\n  - rank 0, step 3: '0REDUCE_GRAD' where "
              "lowering puts '0B1'" +
                  rule);
    EXPECT_EQ(refusal("0F0,0F1,0B0,0B1,0REDUCE_GRAD,0REDUCE_GRAD\r\n1F0,1B0,1F1,1B1\r\n"),
              "schedule check failed (1 problem):\n  - rank 0, step 5: '0REDUCE_GRAD' where "
              "lowering puts the end of the row" +
                  rule);
    // On another stage's rank it is the structure check that answers, as for any action.
    EXPECT_EQ(refusal("0F0,0F1,0B0,0B1,1REDUCE_GRAD\r\n1F0,1B0,1F1,1B1\r\n"),
              "schedule check failed (1 problem):\n  - rank 0, step 4: 1REDUCE_GRAD runs stage 1 "
              "on rank 0, but stage 1 is assigned to rank 1");
    // Before its stage's last backward on a table whose m says so, lowering's rule answers.
    EXPECT_EQ(refusal("0F0,0F1,0B0,0B1\r\n1F0,1B0,1REDUCE_GRAD,1F1,1B1\r\n"),
              "schedule check failed (1 problem):\n  - rank 1, step 2: '1REDUCE_GRAD' where "
              "lowering puts '1F1'" +
                  rule);
    // Beside a SEND it is the SEND that is not compute-only, as before.
    EXPECT_NE(refusal("0F0,0SEND_F0,0B0,0REDUCE_GRAD\r\n1RECV_F0,1F0,1B0\r\n")
                  .find("rank 0, step 1: expected a compute-only schedule but found '0SEND_F0'"),
              std::string::npos);
}

TEST(Lowering, ComputeOnlyCycleIsReportedNotLowered) {
    // Rank 1 runs microbatch 1 first, but rank 0 only sends microbatch 1 after backward 0.
    const Schedule compute =
        parse_schedule_csv("0F0,0B0,0F1,0B1\r\n1F1,1B1,1F0,1B0\r\n", "cycle.csv");
    try {
        lower(compute);
        FAIL() << "lowered a schedule that deadlocks";
    } catch (const ScheduleHangError& error) {
        const HangReport& report = error.report();
        ASSERT_EQ(report.cycle.size(), 2u) << report.text();
        EXPECT_EQ(report.cycle[0].rank, 0);
        EXPECT_EQ(report.cycle[0].action, "0B0");
        EXPECT_EQ(report.cycle[0].needed, "1B0");
        EXPECT_EQ(report.cycle[0].holder_rank, 1);
        EXPECT_EQ(report.cycle[0].holder_step, 3);
        EXPECT_EQ(report.cycle[1].rank, 1);
        EXPECT_EQ(report.cycle[1].action, "1F1");
        EXPECT_EQ(report.cycle[1].needed, "0F1");
        EXPECT_EQ(report.cycle[1].holder_step, 2);
        EXPECT_NE(report.text().find("wait cycle rank 0 -> rank 1 -> rank 0"), std::string::npos)
            << report.text();
    }
}

}  // namespace
}  // namespace pipelens
