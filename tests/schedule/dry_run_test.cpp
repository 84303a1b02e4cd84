// The dependency dry run: a CSV with two recvs swapped reports the wait cycle (which rank waits
// at which action for which action, held by which rank); a misordered recv is a self-wait.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/schedule/dry_run.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "engine/schedule/schedule_csv.hpp"

namespace pipelens {
namespace {

// The lowered 1F1B pp=2 m=4 schedule as CSV text, with two actions of one rank swapped.
Schedule swapped(int rank, const std::string& first, const std::string& second) {
    const Schedule lowered = lower(generate_schedule({ScheduleKind::one_f_one_b, 2, 1, 4}));
    std::vector<std::vector<std::string>> rows(lowered.ranks.size());
    for (std::size_t r = 0; r < lowered.ranks.size(); ++r)
        for (const Action& action : lowered.ranks[r])
            rows[r].push_back(lowered.text(action));
    auto a = std::find(rows[rank].begin(), rows[rank].end(), first);
    auto b = std::find(rows[rank].begin(), rows[rank].end(), second);
    EXPECT_TRUE(a != rows[rank].end() && b != rows[rank].end());
    std::iter_swap(a, b);
    std::string csv;
    for (const auto& row : rows) {
        for (std::size_t i = 0; i < row.size(); ++i)
            csv += (i ? "," : "") + row[i];
        csv += "\r\n";
    }
    return parse_schedule_csv(csv, "swapped.csv");
}

TEST(DryRun, SwappedRecvsReportTheWaitCycle) {
    const DryRunResult result = dry_run(swapped(1, "1RECV_F2", "1RECV_F3"));
    ASSERT_FALSE(result.completed);
    const HangReport& report = result.hang;
    ASSERT_TRUE(report.closes_cycle());
    ASSERT_EQ(report.cycle.size(), 2u) << report.text();

    EXPECT_EQ(report.cycle[0].rank, 0);
    EXPECT_EQ(report.cycle[0].step, 8);
    EXPECT_EQ(report.cycle[0].action, "0RECV_B1");
    EXPECT_EQ(report.cycle[0].needed, "1SEND_B1");
    EXPECT_EQ(report.cycle[0].holder_rank, 1);
    EXPECT_EQ(report.cycle[0].holder_step, 8);

    EXPECT_EQ(report.cycle[1].rank, 1);
    EXPECT_EQ(report.cycle[1].step, 6);
    EXPECT_EQ(report.cycle[1].action, "1RECV_F3");
    EXPECT_EQ(report.cycle[1].needed, "0SEND_F3");
    EXPECT_EQ(report.cycle[1].holder_rank, 0);
    EXPECT_EQ(report.cycle[1].holder_step, 11);

    EXPECT_EQ(report.text(),
              "schedule can hang: wait cycle rank 0 -> rank 1 -> rank 0\n"
              "  rank 0 is stuck at step 8 (0RECV_B1): it needs 1SEND_B1, which rank 1 only runs "
              "at step 8\n"
              "  rank 1 is stuck at step 6 (1RECV_F3): it needs 0SEND_F3, which rank 0 only runs "
              "at step 11");
}

TEST(DryRun, ComputeBeforeItsRecvWaitsOnItself) {
    const DryRunResult result = dry_run(swapped(0, "0RECV_B0", "0B0"));
    ASSERT_FALSE(result.completed);
    ASSERT_EQ(result.hang.cycle.size(), 1u) << result.hang.text();
    EXPECT_EQ(result.hang.cycle[0].action, "0B0");
    EXPECT_EQ(result.hang.cycle[0].needed, "0RECV_B0");
    EXPECT_EQ(result.hang.cycle[0].holder_rank, 0);
    EXPECT_EQ(result.hang.cycle[0].holder_step, 5);
    EXPECT_NE(result.hang.text().find("schedule can hang: rank 0 waits on itself"),
              std::string::npos);
    EXPECT_NE(result.hang.text().find("which rank 0 itself only runs later, at step 5"),
              std::string::npos)
        << result.hang.text();
    // Rank 1 is stuck too, waiting on rank 0, and is listed apart from the cycle.
    ASSERT_EQ(result.hang.blocked.size(), 2u);
    EXPECT_NE(result.hang.text().find("also stuck:"), std::string::npos);
}

TEST(DryRun, ValidScheduleRunsEveryAction) {
    const Schedule lowered = lower(generate_schedule({ScheduleKind::dual_pipe_v, 3, 2, 6}));
    const DryRunResult result = dry_run(lowered);
    EXPECT_TRUE(result.completed);
    EXPECT_EQ(result.actions_run, lowered.action_count());
    EXPECT_EQ(result.hang.text(), "schedule runs to completion");
}

}  // namespace
}  // namespace pipelens
