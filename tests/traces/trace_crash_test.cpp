// Crash safety with a real process: pipelens_trace_crash_writer writes a trace, announcing each
// commit on stdout, and is killed with SIGKILL (no destructor, no close, WAL and -shm left
// behind). The trace must then open read-only with the run unfinished, hold at least every
// announced row, pass the integrity check, and accept a new writer. Every wait has a deadline,
// and a child still running when a test ends is killed, so nothing here can hang.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "tests/child_process.hpp"
#include "tests/raw_database.hpp"
#include "tests/temp_directory.hpp"
#include "traces/trace_reader.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::traces {
namespace {

namespace fs = std::filesystem;
using testing::RawDatabase;
using Clock = std::chrono::steady_clock;

constexpr auto kDeadline = std::chrono::seconds(15);

// The crash writer as a child process whose stdout we read line by line.
class CrashWriter : public testing::ChildProcess {
  public:
    CrashWriter(const fs::path& trace, const char* mode)
        : ChildProcess({PIPELENS_CRASH_WRITER, trace.string(), mode}) {}
};

// "committed 4000" -> 4000; nullopt for any other line.
std::optional<std::int64_t> committed_count(const std::string& line) {
    const std::string prefix = "committed ";
    if (line.rfind(prefix, 0) != 0)
        return std::nullopt;
    return std::stoll(line.substr(prefix.size()));
}

std::string integrity_check(const fs::path& path) {
    return RawDatabase(path, SQLITE_OPEN_READONLY).value("PRAGMA integrity_check");
}

class TraceCrashTest : public testing::TempDirectoryTest {
  protected:
    TraceCrashTest() : TempDirectoryTest("crash") {}
    void SetUp() override {
        TempDirectoryTest::SetUp();
        trace_ = directory_ / "crash.db";
    }

    // After the kill: the file opens read-only, the run is unfinished, the integrity check
    // passes, and a new writer can append a run.
    void expect_recoverable(std::int64_t at_least_actions) {
        ASSERT_TRUE(fs::exists(trace_.string() + "-wal"));  // the crash left the WAL behind
        {
            TraceReader reader(trace_);
            std::vector<RunRecord> runs = reader.runs();
            ASSERT_EQ(runs.size(), 1u);
            EXPECT_EQ(runs[0].status, RunStatus::running);
            EXPECT_EQ(runs[0].finished_at_ns, std::nullopt);
            EXPECT_GE(reader.action_count(runs[0].id), at_least_actions);
            EXPECT_EQ(static_cast<std::int64_t>(reader.actions(runs[0].id).size()),
                      reader.action_count(runs[0].id));
        }
        EXPECT_EQ(integrity_check(trace_), "ok");

        TraceWriter writer(trace_);
        RunRecord run;
        run.schedule = "GPipe";
        run.pp = 1;
        run.m = 1;
        std::int64_t run_id = writer.begin_run(run);
        ActionRecord action;
        action.end_ns = 10;
        writer.add_action(run_id, action);
        writer.finish_run(run_id, 10, 0);
        TraceReader reader(trace_);
        ASSERT_EQ(reader.runs().size(), 2u);
        EXPECT_EQ(reader.runs()[0].status, RunStatus::running);
        EXPECT_EQ(reader.run(run_id).status, RunStatus::finished);
        EXPECT_EQ(reader.action_count(run_id), 1);
    }

    fs::path trace_;
};

TEST_F(TraceCrashTest, KilledWhileWritingLeavesAReadableUnfinishedRun) {
    CrashWriter child(trace_, "busy");
    ASSERT_TRUE(child.started()) << PIPELENS_CRASH_WRITER;
    const auto deadline = Clock::now() + kDeadline;
    std::int64_t announced = 0;
    int commits = 0;
    while (commits < 3) {
        std::optional<std::string> line = child.next_line(deadline);
        ASSERT_TRUE(line.has_value()) << "crash writer announced " << commits << " commits";
        std::optional<std::int64_t> count = committed_count(*line);
        ASSERT_TRUE(count.has_value()) << *line;
        announced = *count;
        if (++commits == 1) {
            // A reader in this process sees the other process's commits while it writes.
            TraceReader reader(trace_);
            EXPECT_EQ(reader.run(1).status, RunStatus::running);
            EXPECT_GE(reader.action_count(1), announced);
        }
    }
    ASSERT_TRUE(child.kill_and_wait());
    expect_recoverable(announced);
}

TEST_F(TraceCrashTest, SecondWriterIsRefusedWhileAnotherProcessCommits) {
    CrashWriter child(trace_, "busy");
    ASSERT_TRUE(child.started()) << PIPELENS_CRASH_WRITER;
    const auto deadline = Clock::now() + kDeadline;
    ASSERT_TRUE(child.next_line(deadline).has_value());
    // The child commits every few milliseconds; each attempt polls for its lock for a while, so
    // a writer that released the lock between batches (or while checkpointing) would be caught.
    for (int attempt = 0; attempt < 3; ++attempt) {
        try {
            TraceWriter writer(trace_);
            ADD_FAILURE() << "attempt " << attempt << ": a second writer opened the trace";
        } catch (const TraceError& error) {
            EXPECT_EQ(std::string(error.what()),
                      trace_.string() +
                          ": cannot append to trace: database is locked (another pipelens "
                          "process is writing it)");
        }
    }
    // The child was not disturbed: it still commits.
    std::optional<std::string> line = child.next_line(deadline);
    ASSERT_TRUE(line.has_value());
    EXPECT_TRUE(committed_count(*line).has_value()) << *line;
    ASSERT_TRUE(child.kill_and_wait());
}

TEST_F(TraceCrashTest, KilledWithUncommittedRowsKeepsExactlyTheCommittedOnes) {
    CrashWriter child(trace_, "pending");
    ASSERT_TRUE(child.started()) << PIPELENS_CRASH_WRITER;
    const auto deadline = Clock::now() + kDeadline;
    std::int64_t announced = 0;
    for (;;) {
        std::optional<std::string> line = child.next_line(deadline);
        ASSERT_TRUE(line.has_value()) << "crash writer stopped after " << announced << " rows";
        if (line->rfind("pending ", 0) == 0)
            break;
        std::optional<std::int64_t> count = committed_count(*line);
        ASSERT_TRUE(count.has_value()) << *line;
        announced = *count;
    }
    ASSERT_GE(announced, 3 * 2000);
    {
        // The child holds the write lock with rows pending: readers see only committed rows,
        // and a second writer is turned away rather than kept waiting.
        TraceReader reader(trace_);
        EXPECT_EQ(reader.action_count(1), announced);
        try {
            TraceWriter writer(trace_);
            ADD_FAILURE() << "a second writer opened a trace that another process is writing";
        } catch (const TraceError& error) {
            EXPECT_EQ(std::string(error.what()),
                      trace_.string() +
                          ": cannot append to trace: database is locked (another pipelens "
                          "process is writing it)");
        }
    }
    ASSERT_TRUE(child.kill_and_wait());
    expect_recoverable(announced);
    EXPECT_EQ(TraceReader(trace_).action_count(1), announced);
}

}  // namespace
}  // namespace pipelens::traces
