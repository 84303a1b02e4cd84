// A real writer process for trace_crash_test: it writes a trace until the test kills it with
// SIGKILL, so the test can check what a crash leaves behind.
//
//   pipelens_trace_crash_writer TRACE busy    commits batches of actions without end
//   pipelens_trace_crash_writer TRACE pending commits a few batches, then adds rows it never
//                                             commits and waits
//
// After each commit it prints "committed N" (N = actions committed so far) and flushes stdout,
// so whatever the test has read is on disk. In `pending` mode it then prints "pending M" once
// M more rows are added but uncommitted. Either way it exits by itself after kMaxSeconds, so a
// test that failed to kill it leaves no process (and no huge file) behind.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "traces/trace_writer.hpp"

namespace {

using pipelens::traces::ActionLane;
using pipelens::traces::ActionRecord;
using pipelens::traces::RunKind;
using pipelens::traces::RunRecord;
using pipelens::traces::TraceError;
using pipelens::traces::TraceWriter;
using pipelens::traces::TraceWriterOptions;

constexpr int kRowsPerCommit = 2000;
constexpr int kCommitsBeforePending = 4;
constexpr int kPendingRows = 500;
// Bounds for a writer nobody kills: at most 20 s and 4 M rows (about 250 MB).
constexpr int kMaxSeconds = 20;
constexpr int kMaxCommits = 2000;

ActionRecord make_action(std::int64_t index) {
    ActionRecord action;
    action.rank = static_cast<std::int32_t>(index % 4);
    action.step = static_cast<std::int32_t>(index / 4);
    action.lane = index % 3 == 0 ? ActionLane::communication : ActionLane::compute;
    action.kind = static_cast<std::uint8_t>(index % 8);  // F ... RECV_B: no OVERLAP_F_B parts
    action.stage = action.rank;
    action.microbatch = static_cast<std::int32_t>(index % 8);
    action.start_ns = index * 1000;
    action.end_ns = index * 1000 + 800;
    action.bytes = 4096;
    return action;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3 || (std::strcmp(argv[2], "busy") != 0 && std::strcmp(argv[2], "pending") != 0)) {
        std::fprintf(stderr, "usage: %s TRACE busy|pending\n", argv[0]);
        return 2;
    }
    const bool pending_mode = std::strcmp(argv[2], "pending") == 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kMaxSeconds);
    try {
        // Commits happen only on flush(), so what was announced is exactly what is committed.
        TraceWriter writer(argv[1], TraceWriterOptions{.batch_rows = 1'000'000});
        RunRecord run;
        run.kind = RunKind::real;
        run.schedule = "1F1B";
        run.pp = 4;
        run.m = 8;
        run.config = "{}";
        const std::int64_t run_id = writer.begin_run(run);
        std::int64_t written = 0;
        for (int commit = 0; commit < kMaxCommits && std::chrono::steady_clock::now() < deadline;
             ++commit) {
            if (pending_mode && commit == kCommitsBeforePending) {
                for (int row = 0; row < kPendingRows; ++row)
                    writer.add_action(run_id, make_action(written++));
                std::printf("pending %d\n", kPendingRows);
                std::fflush(stdout);
                while (std::chrono::steady_clock::now() < deadline)
                    std::this_thread::sleep_for(std::chrono::milliseconds(50));
                break;
            }
            for (int row = 0; row < kRowsPerCommit; ++row)
                writer.add_action(run_id, make_action(written++));
            writer.flush();
            std::printf("committed %lld\n", static_cast<long long>(written));
            std::fflush(stdout);
        }
    } catch (const TraceError& error) {
        std::fprintf(stderr, "%s\n", error.what());
        return 1;
    }
    std::fprintf(stderr, "crash writer: not killed within %d s or %d commits\n", kMaxSeconds,
                 kMaxCommits);
    return 3;
}
