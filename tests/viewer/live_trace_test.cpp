// Watching a trace while it is written: the viewer's model polls the file and shows each step
// as it is committed, without reopening, and the reader never holds what the writer needs.
//
// No assertion here is timed. That the reader cannot stall the writer is checked by what SQLite
// itself reports: after each poll, a checkpoint that waits for no one copies every committed
// page of the WAL, so the reader holds no snapshot that pins the writer's log; and a writer
// thread committing step after step while the model polls finishes without a lock error (the
// writer gives up on a lock it waited its whole busy timeout for).
#include <gtest/gtest.h>

#include <sqlite3.h>

#include <atomic>
#include <exception>
#include <thread>

#include "app/viewer/trace_session.hpp"
#include "app/viewer/workbench.hpp"
#include "tests/viewer/multi_step_trace.hpp"

namespace pipelens::viewer {
namespace {

struct WalCheckpoint {
    int busy = -1, log_frames = -1, copied_frames = -1;
};

// PRAGMA wal_checkpoint(PASSIVE) on a connection of its own that waits for nothing (it runs
// beside the writer's open transaction): copied < log when another connection's open read
// still needs part of the WAL.
WalCheckpoint passive_checkpoint(const std::filesystem::path& path) {
    sqlite3* db = nullptr;
    WalCheckpoint result;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
        sqlite3_busy_timeout(db, 0);
        sqlite3_stmt* statement = nullptr;
        if (sqlite3_prepare_v2(db, "PRAGMA wal_checkpoint(PASSIVE)", -1, &statement, nullptr) ==
                SQLITE_OK &&
            sqlite3_step(statement) == SQLITE_ROW)
            result = {sqlite3_column_int(statement, 0), sqlite3_column_int(statement, 1),
                      sqlite3_column_int(statement, 2)};
        sqlite3_finalize(statement);
    }
    sqlite3_close(db);
    return result;
}

// A run being written, its first step committed, and a session that opened it.
struct LiveRun {
    explicit LiveRun(const std::string& name)
        : path(testing::fresh_trace(name)),
          writer(path),
          run_id(testing::begin_multi_step_run(writer)) {
        commit_step(0);
        opened = open_trace(session, path);
    }
    void commit_step(int step) {
        testing::write_step(writer, run_id, step);
        writer.flush();
    }
    std::filesystem::path path;
    traces::TraceWriter writer;
    std::int64_t run_id;
    TraceSession session;
    bool opened = false;
};

TEST(LiveTrace, EachCommittedStepAppearsAtTheNextPollAndTheReaderHoldsNoSnapshot) {
    LiveRun live("live_steps");
    const std::filesystem::path& path = live.path;
    traces::TraceWriter& writer = live.writer;
    const std::int64_t run_id = live.run_id;
    TraceSession& session = live.session;
    ASSERT_TRUE(live.opened) << session.error;
    ASSERT_EQ(session.summary.steps.size(), 1u);
    EXPECT_FALSE(session.live);  // nothing has grown since it opened
    double now = 0;
    EXPECT_FALSE(poll_trace(session, now));  // nothing new
    for (int step = 1; step < 3; ++step) {
        live.commit_step(step);
        EXPECT_FALSE(poll_trace(session, now + kTracePollSeconds / 2)) << "polled too soon";
        now += kTracePollSeconds;
        EXPECT_FALSE(poll_trace(session, now));  // the reload starts on a thread
        ASSERT_TRUE(finish_reload(session)) << session.error;
        ASSERT_EQ(session.summary.steps.size(), static_cast<std::size_t>(step + 1));
        EXPECT_EQ(session.summary.steps.back().start_ns, step * testing::kStepPeriodNs);
        EXPECT_EQ(session.summary.steps.back().end_ns,
                  step * testing::kStepPeriodNs + testing::kStepSpanNs);
        EXPECT_TRUE(session.live);
        const WalCheckpoint checkpoint = passive_checkpoint(path);
        EXPECT_EQ(checkpoint.busy, 0);
        EXPECT_GT(checkpoint.log_frames, 0);
        EXPECT_EQ(checkpoint.copied_frames, checkpoint.log_frames);
    }
    writer.finish_run(run_id, testing::kStepSpanNs, 0.5);
    now += kTracePollSeconds;
    poll_trace(session, now);
    ASSERT_TRUE(finish_reload(session));
    EXPECT_FALSE(session.live);  // finished: no longer being written
    EXPECT_EQ(session.model->run().status, traces::RunStatus::finished);
    now += kTracePollSeconds;
    EXPECT_FALSE(poll_trace(session, now));
    EXPECT_FALSE(finish_reload(session));  // nothing new, nothing started
}

TEST(LiveTrace, TheShownRunStaysWhileItsReloadIsReadAndAnotherRunDropsTheReload) {
    LiveRun live("live_pending");
    TraceSession& session = live.session;
    ASSERT_TRUE(live.opened) << session.error;
    const TimelineModel* shown = &*session.model;
    live.commit_step(1);
    EXPECT_FALSE(poll_trace(session, 1.0));
    EXPECT_TRUE(session.pending_reload.valid());
    EXPECT_EQ(&*session.model, shown);  // what was shown stays until the reload is shown
    EXPECT_EQ(session.summary.steps.size(), 1u);
    ASSERT_TRUE(show_run(session, live.run_id));  // chosen again: loaded now, the reload dropped
    EXPECT_FALSE(session.pending_reload.valid());
    EXPECT_EQ(session.summary.steps.size(), 2u);
    EXPECT_FALSE(finish_reload(session));
}

TEST(LiveTrace, ASimulationShownMeanwhileDropsTheReloadWithoutWaitingForIt) {
    LiveRun live("live_then_simulation");
    TraceSession& session = live.session;
    ASSERT_TRUE(live.opened) << session.error;
    live.commit_step(1);
    EXPECT_FALSE(poll_trace(session, 1.0));
    ASSERT_TRUE(session.pending_reload.valid());
    Workbench workbench;
    workbench.simulate();  // the default experiment
    workbench.wait_idle();
    ASSERT_TRUE(workbench.current()) << workbench.error();
    show_simulation(session, *workbench.current());
    EXPECT_FALSE(session.pending_reload.valid());
    EXPECT_FALSE(session.reader);
    EXPECT_EQ(session.model->action_count(), workbench.current()->model->action_count());
    // Let go of once read: polling never shows it.
    for (double now = 2.0; !session.dropped_reloads.empty(); now += kTracePollSeconds) {
        session.dropped_reloads.front().wait();
        EXPECT_FALSE(poll_trace(session, now));
    }
    EXPECT_EQ(session.model->action_count(), workbench.current()->model->action_count());
}

TEST(LiveTrace, AWriterCommittingStepsWhileTheModelPollsIsNeverRefusedAndEveryStepIsSeen) {
    constexpr int kSteps = 40;
    LiveRun live("live_concurrent");
    traces::TraceWriter& writer = live.writer;
    const std::int64_t run_id = live.run_id;
    TraceSession& session = live.session;
    ASSERT_TRUE(live.opened) << session.error;

    std::atomic<bool> done = false;
    std::atomic<int> reloads = 0;
    std::exception_ptr writer_error;
    std::thread writing([&] {
        try {
            for (int step = 1; step < kSteps; ++step) {
                testing::write_step(writer, run_id, step);
                writer.flush();
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
                // Halfway, the writer waits (at most 10 s) for a reload to have landed, so one
                // comes while it writes however the two threads were scheduled.
                for (int wait = 0; step == kSteps / 2 && reloads == 0 && wait < 5000; ++wait)
                    std::this_thread::sleep_for(std::chrono::milliseconds(2));
            }
            writer.finish_run(run_id, testing::kStepSpanNs, 0.5);
        } catch (...) {
            writer_error = std::current_exception();
        }
        done = true;
    });
    double now = 0;
    while (!done) {
        now += kTracePollSeconds;
        reloads += poll_trace(session, now) ? 1 : 0;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    writing.join();
    if (writer_error)
        std::rethrow_exception(writer_error);   // a lock the writer waited for in vain
    reloads += finish_reload(session) ? 1 : 0;  // one in flight when the writer ended
    now += kTracePollSeconds;
    poll_trace(session, now);
    finish_reload(session);
    EXPECT_TRUE(session.error.empty()) << session.error;
    EXPECT_GE(reloads, 1);
    ASSERT_EQ(session.summary.steps.size(), static_cast<std::size_t>(kSteps));
    EXPECT_EQ(session.summary.steps.back().start_ns, (kSteps - 1) * testing::kStepPeriodNs);
    EXPECT_EQ(session.model->run().status, traces::RunStatus::finished);
    EXPECT_FALSE(session.live);
}

}  // namespace
}  // namespace pipelens::viewer
