// `run` when a step fails or its trace is taken: a failed run's ranks still on one clock, and
// a trace another writer holds refused before the work.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli/run_pipelens.hpp"
#include "tests/cli/sqlite_edit.hpp"
#include "tests/fresh_trace.hpp"

namespace pipelens {
namespace {

using pipelens::testing::fresh_trace;
using testing::run_pipelens;

// A failed step's ranks never measured their clock offsets; on one host they read one clock,
// so the trace still places them exactly, and a RECV that no action waited for is outstanding
// until its rank stopped, never ending before its SEND began.
void expect_failed_run_on_one_clock(const std::filesystem::path& trace) {
    EXPECT_EQ(testing::query_trace(trace,
                                   "SELECT group_concat(coalesce(clock_offset_ns, 'none')) "
                                   "FROM ranks ORDER BY rank"),
              "0,0,0");
    EXPECT_EQ(testing::receives_ending_before_their_send(trace), "0");
    EXPECT_NE(testing::query_trace(trace, "SELECT count(*) FROM actions WHERE kind IN (5, 7)"),
              "0");
}

TEST(RunCliGloo, AStuckRankTimesOutInsteadOfHanging) {
    PIPELENS_SKIP_WITHOUT_GLOO();
    const auto trace = fresh_trace("stuck");
    const auto result = run_pipelens(
        "run --schedule 1F1B --pp 3 --m 3 --batch 12 --transport gloo --nproc 3 --fault "
        "stage1=sleep:120s --timeout 2s --json --out " +
        trace.string());
    EXPECT_EQ(result.exit_code, 1) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    bool timed_out = false;
    for (const auto& error : json["errors"])
        timed_out |= error["kind"] == "timeout";
    EXPECT_TRUE(timed_out) << json["errors"].dump();
    expect_failed_run_on_one_clock(trace);
}

// A trace another writer holds is refused before the work, not after every step ran (the run's
// report was lost then, with "database is locked").
TEST(RunCli, ATraceAnotherWriterHoldsIsRefusedBeforeTheRun) {
    const auto trace = fresh_trace("held");
    ASSERT_EQ(run_pipelens("simulate --out " + trace.string()).exit_code, 0);
    const int held = ::open(trace.c_str(), O_RDWR);
    ASSERT_GE(held, 0);
    ASSERT_EQ(::flock(held, LOCK_EX | LOCK_NB), 0);  // as a writer holds it
    const auto result = run_pipelens("run --pp 2 --m 4 --steps 50 --out " + trace.string());
    ::close(held);
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err, "pipelens: " + trace.string() +
                              ": cannot append to trace: database is locked (another pipelens "
                              "process is writing it)\n");
}

TEST(RunCli, AFailedRunOfThreadsIsOnOneClock) {
    const auto trace = fresh_trace("stuck_threads");
    const auto result = run_pipelens(
        "run --schedule 1F1B --pp 3 --m 3 --batch 12 --fault stage1=sleep:120s --timeout 1s "
        "--out " +
        trace.string());
    EXPECT_EQ(result.exit_code, 1) << result.err;
    expect_failed_run_on_one_clock(trace);
    // Rank 2 waited for stage 1 from the start and computed nothing: it has no warm-up to give
    // (its "0 ns" said it began at once); rank 0 computed its forwards.
    const auto summary = run_pipelens("summary " + trace.string() + " --json");
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    const auto ranks = nlohmann::json::parse(summary.out)["runs"][0]["ranks"];
    ASSERT_EQ(ranks.size(), 3u) << summary.out;
    EXPECT_TRUE(ranks[0]["warmup_ns"].is_number()) << ranks.dump();
    EXPECT_EQ(ranks[2]["busy_ns"], 0) << ranks.dump();
    EXPECT_TRUE(ranks[2]["warmup_ns"].is_null()) << ranks.dump();
}

}  // namespace
}  // namespace pipelens
