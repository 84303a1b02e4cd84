// TraceReader: read-only access to a trace file for the CLI, exports, replay and the viewer.
//
// Opening checks, in order, that the file exists, is an SQLite database, carries pipelens' meta
// table and a schema version this build understands, and passes a quick integrity check; each
// failure is a TraceError with one line naming the file and the problem. The reader never
// writes (SQLITE_OPEN_READONLY), so it can open a trace another process is still writing and
// sees what that process has committed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "traces/string_table.hpp"
#include "traces/trace_error.hpp"
#include "traces/trace_records.hpp"

namespace pipelens::traces {

inline constexpr int kSchemaVersion = 10;

struct TraceReaderOptions {
    // PRAGMA quick_check at open (0.3 s per million actions). A reader that reads every row
    // anyway may skip it: a damaged page still fails the read that meets it, with the file
    // named.
    bool check_integrity = true;
};

class TraceReader {
  public:
    explicit TraceReader(const std::filesystem::path& path, TraceReaderOptions options = {});
    ~TraceReader();
    TraceReader(const TraceReader&) = delete;
    TraceReader& operator=(const TraceReader&) = delete;

    int schema_version() const;
    std::vector<RunRecord> runs() const;       // by id
    RunRecord run(std::int64_t run_id) const;  // TraceError when there is no such run
    std::int64_t latest_run_id() const;        // TraceError when the trace has no runs
    std::int64_t run_count() const;            // without reading (or checking) any run

    std::vector<RankRecord> ranks(std::int64_t run_id) const;  // by rank
    // Actions of a run by (rank, start time); optionally one rank and those overlapping
    // [from_ns, to_ns).
    std::vector<ActionRecord> actions(std::int64_t run_id) const;
    std::vector<ActionRecord> actions(std::int64_t run_id, int rank, std::int64_t from_ns,
                                      std::int64_t to_ns) const;
    std::int64_t action_count(std::int64_t run_id) const;
    // Bulk reading for a viewer: one rank's actions by start time without their text (which
    // follows from kind, stage and microbatch), by step the texts of that rank's actions whose
    // integers do not give them (OVERLAP_F_B's parts, kept texts, rows written before version 4),
    // the whole `strings` table, one rank's memory samples, and one more than the highest
    // rank with actions (0 when none). Readers on separate threads (one each) read ranks in
    // parallel.
    std::vector<StoredAction> stored_actions(std::int64_t run_id, int rank) const;
    std::vector<std::pair<std::int32_t, std::string>> stored_labels(std::int64_t run_id,
                                                                    int rank) const;
    StringTable strings() const;
    std::vector<MemoryRecord> memory(std::int64_t run_id, int rank) const;
    int action_rank_limit(std::int64_t run_id) const;
    std::vector<PairRecord> pairs(std::int64_t run_id) const;         // by pair id
    std::vector<MemoryRecord> memory(std::int64_t run_id) const;      // by (rank, time)
    std::vector<EventRecord> events(std::int64_t run_id) const;       // by (rank, sequence)
    std::vector<ErrorRecord> errors(std::int64_t run_id) const;       // in recorded order
    std::vector<ShardingRecord> sharding(std::int64_t run_id) const;  // by sequence
    // By rank; empty for a file older than schema version 2.
    std::vector<StateSnapshotRecord> state_snapshots(std::int64_t run_id) const;
    std::vector<ProfileRecord> profile(std::int64_t run_id) const;  // as written

    // SQLite's PRAGMA data_version: it changes when another connection (a writer still
    // recording the trace) has committed since this reader last asked. Cheap, and takes no lock
    // a writer waits for: a viewer polls it to show new rows as they land.
    std::int64_t data_version() const;

    const std::filesystem::path& path() const;

  private:
    // Refuses as corrupt a sample no writer records (negative bytes).
    std::vector<MemoryRecord> checked_memory(std::int64_t run_id,
                                             std::vector<MemoryRecord> samples) const;

    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace pipelens::traces
