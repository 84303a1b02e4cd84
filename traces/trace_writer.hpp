// TraceWriter: appends runs to a trace file (creating it with traces/schema.sql when new).
//
// Rows go through prepared statements inside one open transaction that is committed every
// `batch_rows` rows, on flush() and on finish_run(); the database runs in WAL mode with
// synchronous=NORMAL, so everything committed survives the writing process being killed. A run
// is inserted with status `running` and only finish_run()/fail_run() change that, so a crash
// leaves a file that opens with the run marked unfinished.
//
// Invariants: one writer per file at a time (SQLite's lock; a second writer gets TraceError
// naming the file); the writer never rewrites or deletes rows of earlier runs.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "traces/trace_error.hpp"
#include "traces/trace_records.hpp"

namespace pipelens::traces {

// Whether `path` can take a trace, without creating or changing it: a new file in an existing
// directory, or a pipelens trace of a version this build writes. Throws TraceError naming the
// file, as TraceWriter would; for commands that write their trace only after long work.
void check_trace_destination(const std::filesystem::path& path);

struct TraceWriterOptions {
    int batch_rows = 50'000;  // rows per committed transaction
    // How long to wait for another process that holds the file to finish writing before failing
    // with "database is locked". A command that records after long work (a real run) waits, so
    // that a writer which started meanwhile costs it a moment, not its record.
    std::chrono::milliseconds wait_for_other_writer{0};
};

// What a command that records after long work (a real run, a sweep) gives wait_for_other_writer.
inline constexpr std::chrono::milliseconds kWaitAfterLongWork{60'000};

class TraceWriter {
  public:
    // Opens `path` for appending, creating the file and schema when it does not exist. Throws
    // TraceError when the file is not a pipelens trace, is corrupt or has a newer schema.
    explicit TraceWriter(const std::filesystem::path& path, TraceWriterOptions options = {});
    ~TraceWriter();  // commits what is pending; never throws
    TraceWriter(const TraceWriter&) = delete;
    TraceWriter& operator=(const TraceWriter&) = delete;

    // Inserts the run (status `running`) and commits it at once; returns its id.
    std::int64_t begin_run(const RunRecord& run);

    void add_rank(std::int64_t run_id, const RankRecord& rank);
    void add_action(std::int64_t run_id, const ActionRecord& action);
    void add_pair(std::int64_t run_id, const PairRecord& pair);
    void add_memory(std::int64_t run_id, const MemoryRecord& sample);
    void add_event(std::int64_t run_id, const EventRecord& event);
    void add_error(std::int64_t run_id, const ErrorRecord& error);
    void add_sharding(std::int64_t run_id, const ShardingRecord& decision);
    // One per (run, rank); a second for the same rank replaces the first.
    void add_state_snapshot(std::int64_t run_id, const StateSnapshotRecord& snapshot);
    void add_profile(std::int64_t run_id, const ProfileRecord& figure);

    // Commits everything added so far.
    void flush();
    // Records the figures, marks the run `finished` with the finish time, commits.
    void finish_run(std::int64_t run_id, std::int64_t step_time_ns, double bubble_ratio);
    // Marks the run `failed` with the reason, commits (rows already added are kept).
    void fail_run(std::int64_t run_id, const std::string& failure);
    // Begins `run` and calls `write` with its id to add its rows and finish or fail it. When
    // `write` throws, the run is marked failed with why (as far as the file allows) and the
    // error rethrown: no run stays `running` for ever. Returns the run's id.
    std::int64_t write_run(const RunRecord& run,
                           const std::function<void(std::int64_t run_id)>& write);

    const std::filesystem::path& path() const;

  private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace pipelens::traces
