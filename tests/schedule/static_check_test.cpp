// The static check on hand-broken schedules: each problem names rank, step and action.
#include <gtest/gtest.h>

#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "engine/schedule/static_check.hpp"

namespace pipelens {
namespace {

CheckReport check_csv(const std::string& text) {
    return check_structure(parse_schedule_csv(text, "broken.csv"));
}

// The check of a CSV schedule declaring `microbatch_count` (as `check --m` does), which need
// not be what its cells run.
CheckReport check_csv_declaring(const std::string& text, int microbatch_count) {
    Schedule schedule = parse_schedule_csv(text, "broken.csv");
    schedule.microbatch_count = microbatch_count;
    return check_structure(schedule);
}

// Whether some problem of `report` contains `fragment`; a miss prints the whole report, so
// a changed wording shows what the check says now.
::testing::AssertionResult mentions(const CheckReport& report, const std::string& fragment) {
    for (const auto& problem : report.problems)
        if (problem.find(fragment) != std::string::npos)
            return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "no problem mentions \"" << fragment << "\" in:\n"
                                         << report.text();
}

TEST(StaticCheck, ValidScheduleHasNoProblems) {
    const CheckReport report = check_csv("0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n");
    EXPECT_TRUE(report.ok()) << report.text();
    EXPECT_EQ(report.text(), "schedule check passed");
}

TEST(StaticCheck, StageOnTwoRanks) {
    const CheckReport report = check_csv("0F0,0B0,0B1\n1F0,1B0,0F1,1F1,1B1\n");
    EXPECT_TRUE(mentions(report,
                         "rank 1, step 2: 0F1 runs stage 0 on rank 1, but stage 0 is "
                         "assigned to rank 0"));
}

TEST(StaticCheck, BackwardBeforeForward) {
    const CheckReport report = check_csv("0B0,0F0,0F1,0B1\n1F0,1B0,1F1,1B1\n");
    EXPECT_TRUE(mentions(report,
                         "rank 0, step 0: 0B0 runs the full backward of stage 0, "
                         "microbatch 0 before its forward"));
}

TEST(StaticCheck, WeightBeforeInputAndUnequalCounts) {
    const CheckReport report = check_csv("0F0,0W0,0I0,0F1,0B1\n1F0,1B0,1F1,1B1,1I1\n");
    EXPECT_TRUE(mentions(report,
                         "rank 0, step 1: 0W0 runs the weight backward of stage 0, "
                         "microbatch 0 before its input backward (I)"));
    EXPECT_TRUE(mentions(report,
                         "rank 1, step 4: 1I1: stage 1, microbatch 1 already ran a "
                         "backward (B and I are exclusive)"));
    EXPECT_TRUE(mentions(report,
                         "stage 1: I and W counts differ: I=1, W=0 (rank 1: 1W1 is "
                         "missing)"));
}

TEST(StaticCheck, MissingForwardAndDuplicate) {
    const CheckReport report = check_csv("0F0,0F0,0B0\n1F0,1B0\n");
    EXPECT_TRUE(mentions(report, "rank 0, step 1: 0F0 appears a second time"));
}

TEST(StaticCheck, CountsUseTheDeclaredMicrobatchCount) {
    const CheckReport report = check_csv_declaring("0F0,0B0\n1F0,1B0\n", 2);
    // The missing action is named with its rank: past every microbatch the file names.
    EXPECT_TRUE(mentions(report,
                         "stage 0: 1 of 2 microbatches have a forward (F) (rank 0: 0F1 "
                         "is missing)"));
    EXPECT_TRUE(mentions(report,
                         "stage 1: expected 2 backwards (B + I), got B=1, I=0 (rank 1: "
                         "1B1 or 1I1 is missing)"));
}

TEST(StaticCheck, MicrobatchAndStageRanges) {
    const CheckReport report = check_csv_declaring("0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n", 1);
    EXPECT_TRUE(mentions(report, "rank 0, step 1: 0F1 names microbatch 1, but m is 1"));
    // A CSV with a gap in its stage numbers is refused by the reader, naming the cell; a
    // schedule built otherwise still meets this rule.
    Schedule gap = parse_schedule_csv("0F0,0B0\n1F0,1B0\n", "gap.csv");
    gap.stage_count = 3;
    gap.stage_to_rank = {0, 1, -1};
    EXPECT_TRUE(mentions(check_structure(gap), "stage 2 is not run by any rank"));
}

TEST(StaticCheck, EverySendNeedsItsRecv) {
    Schedule lowered = lower(generate_schedule({ScheduleKind::one_f_one_b, 2, 1, 2}));
    // Drop rank 1's first action, 1RECV_F0.
    ASSERT_EQ(lowered.text(lowered.ranks[1][0]), "1RECV_F0");
    lowered.ranks[1].erase(lowered.ranks[1].begin());
    const CheckReport report = check_structure(lowered);
    EXPECT_TRUE(mentions(report,
                         "rank 0 sends 0SEND_F0 but rank 1 never receives it: 1RECV_F0 is "
                         "missing"));
}

TEST(StaticCheck, RankCrossingComputeMustBeSent) {
    Schedule lowered = lower(generate_schedule({ScheduleKind::one_f_one_b, 2, 1, 2}));
    ASSERT_EQ(lowered.text(lowered.ranks[0][1]), "0SEND_F0");
    lowered.ranks[0].erase(lowered.ranks[0].begin() + 1);
    const CheckReport report = check_structure(lowered);
    EXPECT_TRUE(mentions(report, "rank 0 runs 0F0 but never sends it: 0SEND_F0 is missing"));
    EXPECT_TRUE(mentions(report, "rank 1 waits for 1RECV_F0 but rank 0 never sends it"));
}

TEST(StaticCheck, ProblemListIsBounded) {
    std::string row0 = "0B0", row1 = "1F0";
    for (int mb = 1; mb < 50; ++mb) {
        row0 += ",0B" + std::to_string(mb);
        row1 += ",1F" + std::to_string(mb);
    }
    const CheckReport report = check_csv(row0 + "\n" + row1 + "\n");
    EXPECT_EQ(report.problems.size(), 20u);
    EXPECT_TRUE(report.truncated);
    EXPECT_NE(report.text().find("more problems not shown"), std::string::npos);
}

}  // namespace
}  // namespace pipelens
