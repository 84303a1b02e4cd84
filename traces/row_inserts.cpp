// Each table's INSERT next to the binding of its record (see row_inserts.hpp).
#include "traces/row_inserts.hpp"

#include <fmt/format.h>

namespace pipelens::traces::detail {

RowInserts prepare_row_inserts(const std::function<Statement(std::string_view sql)>& prepare) {
    RowInserts rows;
    rows.rank = prepare(
        "INSERT INTO ranks (run_id, rank, busy_ns, bubble_ns, bubble_ratio, "
        "peak_memory_bytes, warmup_ns, cooldown_ns, waiting_on, clock_offset_ns, "
        "clock_uncertainty_ns, core_wait_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    rows.action = prepare(
        "INSERT INTO actions (run_id, rank, step, lane, kind, stage, microbatch, start_ns, "
        "end_ns, bytes, pair_id, label_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    // A run of several training steps records each rank's list once per step; an overlapped
    // action's parts are the same every step, so each step after the first adds nothing.
    rows.action_part = prepare(
        "INSERT OR IGNORE INTO action_parts (run_id, rank, step, part, kind, stage, microbatch) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)");
    rows.pair = prepare(
        "INSERT INTO pairs (run_id, pair_id, send_rank, send_step, recv_rank, recv_step, "
        "bytes, training_step) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    rows.memory = prepare("INSERT INTO memory (run_id, rank, time_ns, bytes) VALUES (?, ?, ?, ?)");
    rows.event = prepare(
        "INSERT INTO events (run_id, rank, sequence, parent, name_id, arguments, outcome, "
        "time_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    rows.error = prepare(
        "INSERT INTO errors (run_id, rank, stage, microbatch, action, kind, expected, "
        "actual, message, time_ns, started_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    rows.sharding = prepare(
        "INSERT INTO sharding (run_id, sequence, op, mesh, strategies, chosen, "
        "redistributions) VALUES (?, ?, ?, ?, ?, ?, ?)");
    rows.snapshot = prepare(
        "INSERT OR REPLACE INTO state_snapshots (run_id, rank, after_sequence, state) "
        "VALUES (?, ?, ?, ?)");
    rows.profile = prepare(
        "INSERT INTO profile (run_id, rank, stage, layer, layer_name, quantity, peer, bytes, "
        "median, low, high, samples) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    return rows;
}

void bind_row(sqlite3_stmt* statement, std::int64_t run_id, const RankRecord& rank) {
    bind_values(statement, 1, run_id, rank.rank, rank.busy_ns, rank.bubble_ns, rank.bubble_ratio,
                rank.peak_memory_bytes, rank.warmup_ns, rank.cooldown_ns, rank.waiting_on,
                rank.clock_offset_ns, rank.clock_uncertainty_ns, rank.core_wait_ns);
}

void bind_row(sqlite3_stmt* statement, std::int64_t run_id, const ActionRecord& action,
              std::optional<std::int64_t> text_id) {
    bind_values(statement, 1, run_id, action.rank, action.step, action.lane, action.kind,
                action.stage, action.microbatch, action.start_ns, action.end_ns, action.bytes,
                action.pair_id, text_id);
}

void bind_row(sqlite3_stmt* statement, std::int64_t run_id, const ActionPartRow& row) {
    const ActionPartRecord& part = row.action.parts[static_cast<std::size_t>(row.part)];
    bind_values(statement, 1, run_id, row.action.rank, row.action.step, row.part, part.kind,
                part.stage, part.microbatch);
}

void bind_row(sqlite3_stmt* statement, std::int64_t run_id, const PairRecord& pair) {
    bind_values(statement, 1, run_id, pair.pair_id, pair.send_rank, pair.send_step, pair.recv_rank,
                pair.recv_step, pair.bytes, pair.training_step);
}

void bind_row(sqlite3_stmt* statement, std::int64_t run_id, const MemoryRecord& sample) {
    bind_values(statement, 1, run_id, sample.rank, sample.time_ns, sample.bytes);
}

void bind_row(sqlite3_stmt* statement, std::int64_t run_id, const EventRecord& event,
              std::int64_t name_id) {
    bind_values(statement, 1, run_id, event.rank, event.sequence, event.parent, name_id,
                event.arguments, event.outcome, event.time_ns);
}

void bind_row(sqlite3_stmt* statement, std::int64_t run_id, const ErrorRecord& error) {
    bind_values(statement, 1, run_id, error.rank, error.stage, error.microbatch, error.action,
                error.kind, error.expected, error.actual, error.message, error.time_ns,
                error.started_ns);
}

void bind_row(sqlite3_stmt* statement, std::int64_t run_id, const ShardingRecord& decision) {
    bind_values(statement, 1, run_id, decision.sequence, decision.op, decision.mesh,
                decision.strategies, decision.chosen, decision.redistributions);
}

void bind_row(sqlite3_stmt* statement, std::int64_t run_id, const StateSnapshotRecord& snapshot) {
    bind_values(statement, 1, run_id, snapshot.rank, snapshot.after_sequence, snapshot.state);
}

void bind_row(sqlite3_stmt* statement, std::int64_t run_id, const ProfileRecord& figure) {
    bind_values(statement, 1, run_id, figure.rank, figure.stage, figure.layer, figure.layer_name,
                figure.quantity, figure.peer, figure.bytes, figure.median, figure.low, figure.high,
                figure.samples);
}

std::string describe_row(std::int64_t run_id, const RankRecord& rank) {
    return fmt::format("cannot add rank {} to run {}", rank.rank, run_id);
}

std::string describe_row(std::int64_t run_id, const ActionRecord& action) {
    return fmt::format("cannot add action {} of rank {} to run {}", action.step, action.rank,
                       run_id);
}

std::string describe_row(std::int64_t run_id, const ActionPartRow& row) {
    return fmt::format("cannot add part {} of action {} of rank {} to run {}", row.part,
                       row.action.step, row.action.rank, run_id);
}

std::string describe_row(std::int64_t run_id, const PairRecord& pair) {
    return fmt::format("cannot add pair {} to run {}", pair.pair_id, run_id);
}

std::string describe_row(std::int64_t run_id, const MemoryRecord& sample) {
    return fmt::format("cannot add a memory sample of rank {} to run {}", sample.rank, run_id);
}

std::string describe_row(std::int64_t run_id, const EventRecord& event) {
    return fmt::format("cannot add event {} of rank {} to run {}", event.sequence, event.rank,
                       run_id);
}

std::string describe_row(std::int64_t run_id, const ErrorRecord& error) {
    return fmt::format("cannot add a {} error to run {}", error.kind, run_id);
}

std::string describe_row(std::int64_t run_id, const ShardingRecord& decision) {
    return fmt::format("cannot add sharding decision {} to run {}", decision.sequence, run_id);
}

std::string describe_row(std::int64_t run_id, const StateSnapshotRecord& snapshot) {
    return fmt::format("cannot add the state snapshot of rank {} to run {}", snapshot.rank, run_id);
}

std::string describe_row(std::int64_t run_id, const ProfileRecord& figure) {
    return fmt::format("cannot add the profile figure {} of rank {} to run {}", figure.quantity,
                       figure.rank, run_id);
}

}  // namespace pipelens::traces::detail
