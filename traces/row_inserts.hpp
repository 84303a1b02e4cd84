// The INSERT of each table TraceWriter fills with a run's rows, and how each record binds to it
// (internal to traces/). The SQL and the binding sit side by side in row_inserts.cpp because
// they must change together: parameter N of a table's INSERT is the N-th value its bind_row
// passes.
//
// Invariants: every INSERT's first parameter is the run id; bind_row binds integers, doubles
// and text only (an action's text is derived when read, never stored); describe_row is called
// only when a row could not be added, so the hot path formats nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "traces/sqlite_handle.hpp"
#include "traces/trace_records.hpp"

namespace pipelens::traces::detail {

struct RowInserts {
    Statement rank, action, action_part, pair, memory, event, error, sharding, snapshot, profile;
};

// Prepares every INSERT with `prepare`; the schema must exist.
RowInserts prepare_row_inserts(const std::function<Statement(std::string_view sql)>& prepare);

// Part `part` of an OVERLAP_F_B action (a row of `action_parts`).
struct ActionPartRow {
    const ActionRecord& action;
    int part;
};

void bind_row(sqlite3_stmt* statement, std::int64_t run_id, const RankRecord& rank);
// An action's kept text is stored interned: `text_id` is its id in `strings` (none for the
// actions whose text is derived).
void bind_row(sqlite3_stmt* statement, std::int64_t run_id, const ActionRecord& action,
              std::optional<std::int64_t> text_id);
void bind_row(sqlite3_stmt* statement, std::int64_t run_id, const ActionPartRow& row);
void bind_row(sqlite3_stmt* statement, std::int64_t run_id, const PairRecord& pair);
void bind_row(sqlite3_stmt* statement, std::int64_t run_id, const MemoryRecord& sample);
// An event's name is stored interned: `name_id` is its id in `strings`.
void bind_row(sqlite3_stmt* statement, std::int64_t run_id, const EventRecord& event,
              std::int64_t name_id);
void bind_row(sqlite3_stmt* statement, std::int64_t run_id, const ErrorRecord& error);
void bind_row(sqlite3_stmt* statement, std::int64_t run_id, const ShardingRecord& decision);
void bind_row(sqlite3_stmt* statement, std::int64_t run_id, const StateSnapshotRecord& snapshot);
void bind_row(sqlite3_stmt* statement, std::int64_t run_id, const ProfileRecord& figure);

// What failed, for the error message: "cannot add rank 2 to run 1".
std::string describe_row(std::int64_t run_id, const RankRecord& rank);
std::string describe_row(std::int64_t run_id, const ActionRecord& action);
std::string describe_row(std::int64_t run_id, const ActionPartRow& row);
std::string describe_row(std::int64_t run_id, const PairRecord& pair);
std::string describe_row(std::int64_t run_id, const MemoryRecord& sample);
std::string describe_row(std::int64_t run_id, const EventRecord& event);
std::string describe_row(std::int64_t run_id, const ErrorRecord& error);
std::string describe_row(std::int64_t run_id, const ShardingRecord& decision);
std::string describe_row(std::int64_t run_id, const StateSnapshotRecord& snapshot);
std::string describe_row(std::int64_t run_id, const ProfileRecord& figure);

}  // namespace pipelens::traces::detail
