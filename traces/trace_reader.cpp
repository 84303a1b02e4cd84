// TraceReader: read-only queries over a trace, for the CLI, exports, replay and the viewer.
//
// Invariants:
// - The database is opened SQLITE_OPEN_READONLY and never written. In WAL mode SQLite still
//   maps the -shm index beside it; that is how the reader sees a live writer's commits, and how
//   it rebuilds the index when a writer was killed mid-transaction (uncommitted frames in the
//   WAL are ignored, committed ones are read).
// - Every query is its own read transaction: each result is one consistent snapshot of what has
//   been committed, and a live trace may have grown between two calls.
// - An action's text is derived from its integers (kind, stage, microbatch; an OVERLAP_F_B's
//   parts from `action_parts`), except for rows written before schema version 4, whose stored
//   text (`label_id`) is shown as it was. Interned ids are resolved in the query itself (a LEFT
//   JOIN with `strings`, one snapshot). Ids are never reused or changed.
// - The reader holds no mutable state besides the connection, so const methods stay const; like
//   the connection (opened without SQLite's per-call mutex, which costs read throughput), it is
//   used by one thread at a time.
// - No memory-mapped I/O: a trace truncated by another process while mapped would raise SIGBUS
//   instead of an error.
#include "traces/trace_reader.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>

#include "traces/sqlite_handle.hpp"
#include "traces/text/action_label.hpp"
#include "traces/trace_file_checks.hpp"

namespace pipelens::traces {
namespace {

using detail::column_optional_double;
using detail::column_optional_int64;
using detail::column_text;
using detail::Connection;
using detail::Statement;

// A concurrent writer never blocks readers in WAL mode; only WAL recovery after a crash or a
// checkpoint restart does, briefly. Past this the query fails with "database is locked".
constexpr int kBusyTimeoutMs = 5000;

constexpr const char* kRunColumns =
    "SELECT id, kind, schedule, pp, v, m, config, status, started_at_ns, finished_at_ns, "
    "step_time_ns, bubble_ratio, failure FROM runs";

// With the stored text of rows older than version 4 as the twelfth column (NULL for newer rows,
// or for a missing id, which column 6 then tells apart).
constexpr const char* kActionColumns =
    "SELECT a.rank, a.step, a.lane, a.kind, a.stage, a.microbatch, a.label_id, a.start_ns, "
    "a.end_ns, a.bytes, a.pair_id, s.text FROM actions a LEFT JOIN strings s "
    "ON s.id = a.label_id";

// Key of an action within a run: its rank and step.
std::int64_t step_key(std::int64_t rank, std::int64_t step) {
    return (rank << 32) | static_cast<std::uint32_t>(step);
}

}  // namespace

struct TraceReader::State {
    std::filesystem::path path;
    Connection connection;
    int schema_version = 0;
    // Runs from this id on store no action texts (schema 4); earlier runs may.
    std::int64_t first_run_with_derived_labels = std::numeric_limits<std::int64_t>::max();
    TraceReaderOptions options;

    sqlite3* db() const { return connection.get(); }

    [[noreturn]] void fail(std::string_view doing, int code) const {
        detail::throw_sqlite_error(path, doing, db(), code);
    }

    [[noreturn]] void corrupt(std::string_view what) const {
        detail::throw_trace_error(path, fmt::format("trace is corrupt: {}", what));
    }

    // The text a LEFT JOIN with `strings` found in column `text_column`, for the id in
    // `id_column`; a NULL means the id is missing, which only a damaged file has.
    std::string interned_text(sqlite3_stmt* row, int text_column, int id_column) const {
        if (sqlite3_column_type(row, text_column) == SQLITE_NULL)
            corrupt(fmt::format("string id {} is not in the strings table",
                                sqlite3_column_int64(row, id_column)));
        return column_text(row, text_column);
    }

    Statement prepare(std::string_view sql, std::string_view doing) const {
        return detail::prepare(db(), path, sql, doing);
    }

    // The texts of a run's OVERLAP_F_B actions (of one rank, or all), by step_key, from
    // `action_parts` (schema version 4; older files stored every text).
    std::unordered_map<std::int64_t, std::string> overlap_texts(std::int64_t run_id,
                                                                std::optional<int> rank) const {
        std::unordered_map<std::int64_t, std::string> texts;
        if (schema_version < 4)
            return texts;
        std::string doing = fmt::format("cannot read the OVERLAP_F_B parts of run {}", run_id);
        Statement statement = prepare(
            std::string("SELECT rank, step, kind, stage, microbatch FROM action_parts WHERE "
                        "run_id = ?") +
                (rank ? " AND rank = ?" : "") + " ORDER BY rank, step, part",
            doing);
        sqlite3_bind_int64(statement.get(), 1, run_id);
        if (rank)
            sqlite3_bind_int(statement.get(), 2, *rank);
        std::vector<text::ActionPart> parts;
        std::int64_t key = -1;
        const auto flush = [&] {
            if (key >= 0)
                text::append_overlap_action(texts[key], static_cast<int>(parts.size()),
                                            [&](int index) { return parts[index]; });
            parts.clear();
        };
        each_row(statement.get(), doing, [&](sqlite3_stmt* row) {
            const std::int64_t row_key =
                step_key(sqlite3_column_int(row, 0), sqlite3_column_int(row, 1));
            if (row_key != key) {
                flush();
                key = row_key;
            }
            parts.push_back({sqlite3_column_int(row, 2), sqlite3_column_int(row, 3),
                             sqlite3_column_int(row, 4)});
        });
        flush();
        return texts;
    }

    // An action row's text (columns as kActionColumns): stored before version 4, derived since.
    std::string label_of(sqlite3_stmt* row, const ActionRecord& action,
                         const std::unordered_map<std::int64_t, std::string>& overlaps) const {
        if (sqlite3_column_type(row, 6) != SQLITE_NULL)
            return interned_text(row, 11, 6);
        if (action.kind != text::kOverlapKind) {
            std::string label;
            text::append_plain_action(label, action.stage, action.kind, action.microbatch);
            return label;
        }
        const auto found = overlaps.find(step_key(action.rank, action.step));
        if (found == overlaps.end())
            corrupt(fmt::format("OVERLAP_F_B at rank {} step {} has no parts", action.rank,
                                action.step));
        return found->second;
    }

    template <typename OnRow>
    void each_row(sqlite3_stmt* statement, std::string_view doing, OnRow&& on_row) const {
        int code;
        while ((code = sqlite3_step(statement)) == SQLITE_ROW)
            on_row(statement);
        if (code != SQLITE_DONE)
            fail(doing, code);
    }

    // The one value `sql` (whose only parameter is the run id) yields; nothing for NULL.
    std::optional<std::int64_t> value_of_run(const std::string& sql, std::int64_t run_id,
                                             const std::string& doing) const {
        Statement statement = prepare(sql, doing);
        sqlite3_bind_int64(statement.get(), 1, run_id);
        const int code = sqlite3_step(statement.get());
        if (code != SQLITE_ROW)
            fail(doing, code);
        return column_optional_int64(statement.get(), 0);
    }

    // All rows of a run from `sql`, whose only parameter is the run id.
    template <typename Record, typename Convert>
    std::vector<Record> rows_of_run(std::int64_t run_id, const std::string& sql,
                                    std::string_view what, Convert&& convert) const {
        return rows_of<Record>(run_id, std::nullopt, sql, what, convert);
    }

    // All rows of one rank of a run from `sql`, whose parameters are the run id and the rank.
    template <typename Record, typename Convert>
    std::vector<Record> rows_of_rank(std::int64_t run_id, int rank, const std::string& sql,
                                     std::string_view what, Convert&& convert) const {
        return rows_of<Record>(run_id, rank, sql, what, convert);
    }

    template <typename Record, typename Convert>
    std::vector<Record> rows_of(std::int64_t run_id, std::optional<int> rank,
                                const std::string& sql, std::string_view what,
                                Convert&& convert) const {
        std::string doing =
            rank ? fmt::format("cannot read the {} of run {} rank {}", what, run_id, *rank)
                 : fmt::format("cannot read the {} of run {}", what, run_id);
        Statement statement = prepare(sql, doing);
        sqlite3_bind_int64(statement.get(), 1, run_id);
        if (rank)
            sqlite3_bind_int(statement.get(), 2, *rank);
        std::vector<Record> records;
        each_row(statement.get(), doing,
                 [&](sqlite3_stmt* row) { records.push_back(convert(row)); });
        return records;
    }

    RunRecord run_from(sqlite3_stmt* row) const {
        RunRecord run;
        run.id = sqlite3_column_int64(row, 0);
        std::string kind = column_text(row, 1);
        if (kind == "sim")
            run.kind = RunKind::simulated;
        else if (kind == "real")
            run.kind = RunKind::real;
        else
            corrupt(fmt::format("run {} has kind '{}'", run.id, kind));
        run.schedule = column_text(row, 2);
        run.pp = sqlite3_column_int(row, 3);
        run.v = sqlite3_column_int(row, 4);
        run.m = sqlite3_column_int(row, 5);
        run.config = column_text(row, 6);
        std::string status = column_text(row, 7);
        if (status == "running")
            run.status = RunStatus::running;
        else if (status == "finished")
            run.status = RunStatus::finished;
        else if (status == "failed")
            run.status = RunStatus::failed;
        else
            corrupt(fmt::format("run {} has status '{}'", run.id, status));
        run.started_at_ns = sqlite3_column_int64(row, 8);
        run.finished_at_ns = column_optional_int64(row, 9);
        run.step_time_ns = column_optional_int64(row, 10);
        run.bubble_ratio = column_optional_double(row, 11);
        run.failure = column_text(row, 12);
        return run;
    }

    void open() {
        switch (detail::examine_trace_path(path)) {
            case detail::PathState::missing:
                detail::throw_trace_error(path, "no such file");
            case detail::PathState::empty_file:
                detail::throw_trace_error(path, "not a pipelens trace (empty file)");
            case detail::PathState::nonempty_file:
                break;
        }
        connection = detail::open_connection(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
                                             "cannot open trace");
        sqlite3_busy_timeout(db(), kBusyTimeoutMs);
        std::optional<int> version = detail::check_trace_identity(db(), path);
        if (!version)
            detail::throw_trace_error(path,
                                      "not a pipelens trace (an SQLite database with no "
                                      "tables)");
        schema_version = *version;
        if (schema_version >= 4)
            if (const auto first = detail::query_text(
                    db(), path,
                    "SELECT value FROM meta WHERE key = 'first_run_with_derived_labels'",
                    "cannot open trace"))
                // A damaged value only costs the scan for older texts in every run.
                std::from_chars(first->data(), first->data() + first->size(),
                                first_run_with_derived_labels);
        if (options.check_integrity)
            detail::check_trace_integrity(db(), path);
        // Sorting (rarely needed: the indexes give most orders) stays in memory, and a viewer's
        // repeated window queries stay in a 64 MiB page cache.
        detail::execute(db(), path, "PRAGMA temp_store = MEMORY; PRAGMA cache_size = -65536;",
                        "cannot open trace");
    }
};

namespace {

StringTable read_strings(sqlite3* connection, const std::filesystem::path& path) {
    std::string_view doing = "cannot read the trace's strings";
    Statement select = detail::prepare(connection, path, "SELECT id, text FROM strings", doing);
    StringTable table;
    int code;
    while ((code = sqlite3_step(select.get())) == SQLITE_ROW) {
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(select.get(), 1));
        table.add(
            sqlite3_column_int64(select.get(), 0),
            std::string_view(text != nullptr ? text : "",
                             static_cast<std::size_t>(sqlite3_column_bytes(select.get(), 1))));
    }
    if (code != SQLITE_DONE)
        detail::throw_sqlite_error(path, doing, connection, code);
    return table;
}

ActionRecord action_from(sqlite3_stmt* row) {
    ActionRecord action;
    action.rank = sqlite3_column_int(row, 0);
    action.step = sqlite3_column_int(row, 1);
    action.lane = static_cast<ActionLane>(sqlite3_column_int(row, 2));
    action.kind = static_cast<std::uint8_t>(sqlite3_column_int(row, 3));
    action.stage = sqlite3_column_int(row, 4);
    action.microbatch = sqlite3_column_int(row, 5);
    action.start_ns = sqlite3_column_int64(row, 7);
    action.end_ns = sqlite3_column_int64(row, 8);
    action.bytes = sqlite3_column_int64(row, 9);
    action.pair_id = sqlite3_column_int(row, 10);
    return action;
}

}  // namespace

TraceReader::TraceReader(const std::filesystem::path& path, TraceReaderOptions options)
    : state_(std::make_unique<State>()) {
    state_->path = path;
    state_->options = options;
    state_->open();
}

TraceReader::~TraceReader() = default;

int TraceReader::schema_version() const {
    return state_->schema_version;
}

std::vector<RunRecord> TraceReader::runs() const {
    const State& state = *state_;
    std::string_view doing = "cannot read the runs";
    Statement statement = state.prepare(std::string(kRunColumns) + " ORDER BY id", doing);
    std::vector<RunRecord> runs;
    state.each_row(statement.get(), doing,
                   [&](sqlite3_stmt* row) { runs.push_back(state.run_from(row)); });
    return runs;
}

RunRecord TraceReader::run(std::int64_t run_id) const {
    const State& state = *state_;
    std::string doing = fmt::format("cannot read run {}", run_id);
    Statement statement = state.prepare(std::string(kRunColumns) + " WHERE id = ?", doing);
    sqlite3_bind_int64(statement.get(), 1, run_id);
    int code = sqlite3_step(statement.get());
    if (code == SQLITE_DONE)
        detail::throw_trace_error(state.path, fmt::format("no run {} in this trace", run_id));
    if (code != SQLITE_ROW)
        state.fail(doing, code);
    return state.run_from(statement.get());
}

std::int64_t TraceReader::latest_run_id() const {
    const State& state = *state_;
    std::string_view doing = "cannot read the latest run";
    Statement statement = state.prepare("SELECT max(id) FROM runs", doing);
    int code = sqlite3_step(statement.get());
    if (code != SQLITE_ROW)
        state.fail(doing, code);
    if (sqlite3_column_type(statement.get(), 0) == SQLITE_NULL)
        detail::throw_trace_error(state.path, "the trace has no runs");
    return sqlite3_column_int64(statement.get(), 0);
}

std::vector<RankRecord> TraceReader::ranks(std::int64_t run_id) const {
    const std::string clock =
        state_->schema_version >= 5 ? "clock_offset_ns, clock_uncertainty_ns" : "NULL, NULL";
    return state_->rows_of_run<RankRecord>(
        run_id,
        "SELECT rank, busy_ns, bubble_ns, bubble_ratio, peak_memory_bytes, warmup_ns, "
        "cooldown_ns, waiting_on, " +
            clock + " FROM ranks WHERE run_id = ? ORDER BY rank",
        "ranks", [](sqlite3_stmt* row) {
            RankRecord rank;
            rank.rank = sqlite3_column_int(row, 0);
            rank.busy_ns = sqlite3_column_int64(row, 1);
            rank.bubble_ns = sqlite3_column_int64(row, 2);
            rank.bubble_ratio = sqlite3_column_double(row, 3);
            rank.peak_memory_bytes = sqlite3_column_int64(row, 4);
            rank.warmup_ns = sqlite3_column_int64(row, 5);
            rank.cooldown_ns = sqlite3_column_int64(row, 6);
            rank.waiting_on = column_text(row, 7);
            rank.clock_offset_ns = column_optional_int64(row, 8);
            rank.clock_uncertainty_ns = column_optional_int64(row, 9);
            return rank;
        });
}

std::vector<ActionRecord> TraceReader::actions(std::int64_t run_id) const {
    const State& state = *state_;
    std::string doing = fmt::format("cannot read the actions of run {}", run_id);
    const auto overlaps = state.overlap_texts(run_id, std::nullopt);
    // The table's key (run_id, rank, start_ns, step) is this order: no sort, and actions that
    // start together keep their program order.
    Statement statement = state.prepare(
        std::string(kActionColumns) + " WHERE a.run_id = ? ORDER BY a.rank, a.start_ns, a.step",
        doing);
    sqlite3_bind_int64(statement.get(), 1, run_id);
    std::vector<ActionRecord> actions;
    actions.reserve(static_cast<std::size_t>(action_count(run_id)));
    state.each_row(statement.get(), doing, [&](sqlite3_stmt* row) {
        actions.push_back(action_from(row));
        actions.back().label = state.label_of(row, actions.back(), overlaps);
    });
    return actions;
}

std::vector<ActionRecord> TraceReader::actions(std::int64_t run_id, int rank, std::int64_t from_ns,
                                               std::int64_t to_ns) const {
    const State& state = *state_;
    std::string doing = fmt::format("cannot read the actions of run {} rank {} in [{}, {})", run_id,
                                    rank, from_ns, to_ns);
    const auto overlaps = state.overlap_texts(run_id, rank);
    // The key bounds start_ns < to_ns; end_ns > from_ns is a filter on the rows it yields, so
    // the cost grows with the number of the rank's actions before the window's end, not with the
    // window alone. Bounding start_ns from below would need the longest action's duration; a
    // window near the end of a long run is still one range scan of the key.
    Statement statement =
        state.prepare(std::string(kActionColumns) +
                          " WHERE a.run_id = ? AND a.rank = ? AND a.start_ns < ? AND a.end_ns > ? "
                          "ORDER BY a.start_ns, a.step",
                      doing);
    sqlite3_bind_int64(statement.get(), 1, run_id);
    sqlite3_bind_int(statement.get(), 2, rank);
    sqlite3_bind_int64(statement.get(), 3, to_ns);
    sqlite3_bind_int64(statement.get(), 4, from_ns);
    std::vector<ActionRecord> actions;
    state.each_row(statement.get(), doing, [&](sqlite3_stmt* row) {
        actions.push_back(action_from(row));
        actions.back().label = state.label_of(row, actions.back(), overlaps);
    });
    return actions;
}

std::int64_t TraceReader::action_count(std::int64_t run_id) const {
    return state_
        ->value_of_run("SELECT count(*) FROM actions WHERE run_id = ?", run_id,
                       fmt::format("cannot count the actions of run {}", run_id))
        .value_or(0);
}

std::vector<StoredAction> TraceReader::stored_actions(std::int64_t run_id, int rank) const {
    return state_->rows_of_rank<StoredAction>(
        run_id, rank,
        "SELECT step, stage, microbatch, pair_id, start_ns, end_ns, bytes, lane, kind "
        "FROM actions WHERE run_id = ? AND rank = ? ORDER BY start_ns, step",
        "actions", [](sqlite3_stmt* row) {
            StoredAction action;
            action.step = sqlite3_column_int(row, 0);
            action.stage = sqlite3_column_int(row, 1);
            action.microbatch = sqlite3_column_int(row, 2);
            action.pair_id = sqlite3_column_int(row, 3);
            action.start_ns = sqlite3_column_int64(row, 4);
            action.end_ns = sqlite3_column_int64(row, 5);
            action.bytes = sqlite3_column_int64(row, 6);
            action.lane = static_cast<ActionLane>(sqlite3_column_int(row, 7));
            action.kind = static_cast<std::uint8_t>(sqlite3_column_int(row, 8));
            return action;
        });
}

std::vector<std::pair<std::int32_t, std::string>> TraceReader::overlap_labels(std::int64_t run_id,
                                                                              int rank) const {
    const State& state = *state_;
    std::vector<std::pair<std::int32_t, std::string>> labels;
    if (state.schema_version >= 4) {
        for (auto& [key, text] : state.overlap_texts(run_id, rank))
            labels.emplace_back(static_cast<std::int32_t>(key & 0xffffffff), std::move(text));
    }
    // Rows written before version 4 kept their text, overlaps included. Looking for them scans
    // the rank's rows, so only runs that old are searched.
    if (run_id < state.first_run_with_derived_labels) {
        std::vector<std::pair<std::int32_t, std::string>> stored =
            state.rows_of_rank<std::pair<std::int32_t, std::string>>(
                run_id, rank,
                "SELECT a.step, a.label_id, s.text FROM actions a LEFT JOIN strings s ON "
                "s.id = a.label_id WHERE a.run_id = ? AND a.rank = ? AND a.kind = 8 AND "
                "a.label_id IS NOT NULL",
                "OVERLAP_F_B labels", [&](sqlite3_stmt* row) {
                    return std::pair<std::int32_t, std::string>(sqlite3_column_int(row, 0),
                                                                state.interned_text(row, 2, 1));
                });
        labels.insert(labels.end(), std::make_move_iterator(stored.begin()),
                      std::make_move_iterator(stored.end()));
    }
    std::sort(labels.begin(), labels.end());
    return labels;
}

StringTable TraceReader::strings() const {
    return read_strings(state_->db(), state_->path);
}

int TraceReader::action_rank_limit(std::int64_t run_id) const {
    // max() over the key's second column is one seek, not a scan.
    const std::optional<std::int64_t> highest =
        state_->value_of_run("SELECT max(rank) FROM actions WHERE run_id = ?", run_id,
                             fmt::format("cannot read the ranks of run {}", run_id));
    if (!highest)
        return 0;
    if (*highest < 0 || *highest >= (1 << 20))
        state_->corrupt(fmt::format("run {} has an action on rank {}", run_id, *highest));
    return static_cast<int>(*highest) + 1;
}

std::vector<PairRecord> TraceReader::pairs(std::int64_t run_id) const {
    return state_->rows_of_run<PairRecord>(
        run_id,
        "SELECT pair_id, send_rank, send_step, recv_rank, recv_step, bytes FROM pairs "
        "WHERE run_id = ? ORDER BY pair_id",
        "pairs", [](sqlite3_stmt* row) {
            PairRecord pair;
            pair.pair_id = sqlite3_column_int(row, 0);
            pair.send_rank = sqlite3_column_int(row, 1);
            pair.send_step = sqlite3_column_int(row, 2);
            pair.recv_rank = sqlite3_column_int(row, 3);
            pair.recv_step = sqlite3_column_int(row, 4);
            pair.bytes = sqlite3_column_int64(row, 5);
            return pair;
        });
}

namespace {

// A memory sample and its row id: samples at one moment keep the order they were written in.
struct MemoryRow {
    MemoryRecord sample;
    std::int64_t rowid = 0;
};

MemoryRow memory_from(sqlite3_stmt* row) {
    MemoryRow read;
    read.sample.rank = sqlite3_column_int(row, 0);
    read.sample.time_ns = sqlite3_column_int64(row, 1);
    read.sample.bytes = sqlite3_column_int64(row, 2);
    read.rowid = sqlite3_column_int64(row, 3);
    return read;
}

// The rows come in the covering index's order (rank, time, bytes, rowid), which SQLite reads
// without sorting; ordering by (time, rowid) in SQL made it sort every rank's samples in a
// temporary B-tree, doubling the read. Samples at one (rank, time) are few: they are put back
// in written order here.
std::vector<MemoryRecord> in_written_order(std::vector<MemoryRow> rows) {
    const auto same_moment = [](const MemoryRow& left, const MemoryRow& right) {
        return left.sample.rank == right.sample.rank && left.sample.time_ns == right.sample.time_ns;
    };
    for (auto first = rows.begin(); first != rows.end();) {
        auto last = std::next(first);
        while (last != rows.end() && same_moment(*first, *last))
            ++last;
        if (std::distance(first, last) > 1)
            std::sort(first, last, [](const MemoryRow& left, const MemoryRow& right) {
                return left.rowid < right.rowid;
            });
        first = last;
    }
    std::vector<MemoryRecord> samples;
    samples.reserve(rows.size());
    for (const MemoryRow& row : rows)
        samples.push_back(row.sample);
    return samples;
}

}  // namespace

std::vector<MemoryRecord> TraceReader::memory(std::int64_t run_id) const {
    return in_written_order(state_->rows_of_run<MemoryRow>(
        run_id,
        "SELECT rank, time_ns, bytes, rowid FROM memory WHERE run_id = ? "
        "ORDER BY rank, time_ns, bytes, rowid",
        "memory samples", memory_from));
}

std::vector<MemoryRecord> TraceReader::memory(std::int64_t run_id, int rank) const {
    return in_written_order(state_->rows_of_rank<MemoryRow>(
        run_id, rank,
        "SELECT rank, time_ns, bytes, rowid FROM memory WHERE run_id = ? AND rank = ? "
        "ORDER BY time_ns, bytes, rowid",
        "memory samples", memory_from));
}

std::vector<EventRecord> TraceReader::events(std::int64_t run_id) const {
    const State& state = *state_;
    // Files older than version 3 have no time column: their events have no time.
    const std::string time = state.schema_version >= 3 ? "e.time_ns" : "NULL";
    return state.rows_of_run<EventRecord>(
        run_id,
        "SELECT e.sequence, e.rank, e.parent, e.name_id, e.arguments, e.outcome, s.text, " + time +
            " FROM events e LEFT JOIN strings s ON s.id = e.name_id "
            "WHERE e.run_id = ? ORDER BY e.rank, e.sequence, e.rowid",
        "events", [&](sqlite3_stmt* row) {
            EventRecord event;
            event.sequence = sqlite3_column_int64(row, 0);
            event.rank = sqlite3_column_int(row, 1);
            event.parent = column_optional_int64(row, 2);
            event.name = state.interned_text(row, 6, 3);
            event.time_ns = column_optional_int64(row, 7);
            event.arguments = column_text(row, 4);
            event.outcome = column_text(row, 5);
            return event;
        });
}

std::vector<ErrorRecord> TraceReader::errors(std::int64_t run_id) const {
    // Files older than version 7 do not say when the interrupted action started.
    const std::string started = state_->schema_version >= 7 ? "started_ns" : "NULL";
    return state_->rows_of_run<ErrorRecord>(
        run_id,
        "SELECT rank, stage, microbatch, action, kind, expected, actual, message, time_ns, " +
            started + " FROM errors WHERE run_id = ? ORDER BY id",
        "errors", [](sqlite3_stmt* row) {
            ErrorRecord error;
            error.rank = sqlite3_column_int(row, 0);
            error.stage = sqlite3_column_int(row, 1);
            error.microbatch = sqlite3_column_int(row, 2);
            error.action = column_text(row, 3);
            error.kind = column_text(row, 4);
            error.expected = column_text(row, 5);
            error.actual = column_text(row, 6);
            error.message = column_text(row, 7);
            error.time_ns = column_optional_int64(row, 8);
            error.started_ns = column_optional_int64(row, 9);
            return error;
        });
}

std::vector<ShardingRecord> TraceReader::sharding(std::int64_t run_id) const {
    return state_->rows_of_run<ShardingRecord>(
        run_id,
        "SELECT sequence, op, mesh, strategies, chosen, redistributions FROM sharding "
        "WHERE run_id = ? ORDER BY sequence, rowid",
        "sharding decisions", [](sqlite3_stmt* row) {
            ShardingRecord decision;
            decision.sequence = sqlite3_column_int64(row, 0);
            decision.op = column_text(row, 1);
            decision.mesh = column_text(row, 2);
            decision.strategies = column_text(row, 3);
            decision.chosen = sqlite3_column_int(row, 4);
            decision.redistributions = column_text(row, 5);
            return decision;
        });
}

std::vector<StateSnapshotRecord> TraceReader::state_snapshots(std::int64_t run_id) const {
    if (state_->schema_version < 2)
        return {};
    return state_->rows_of_run<StateSnapshotRecord>(
        run_id,
        "SELECT rank, after_sequence, state FROM state_snapshots WHERE run_id = ? "
        "ORDER BY rank",
        "state snapshots", [](sqlite3_stmt* row) {
            StateSnapshotRecord snapshot;
            snapshot.rank = sqlite3_column_int(row, 0);
            snapshot.after_sequence = sqlite3_column_int64(row, 1);
            snapshot.state = column_text(row, 2);
            return snapshot;
        });
}

std::vector<ProfileRecord> TraceReader::profile(std::int64_t run_id) const {
    if (state_->schema_version < 6)
        return {};
    return state_->rows_of_run<ProfileRecord>(
        run_id,
        "SELECT rank, stage, layer, layer_name, quantity, peer, bytes, median, low, high, samples "
        "FROM profile WHERE run_id = ? ORDER BY rowid",
        "profile", [](sqlite3_stmt* row) {
            ProfileRecord figure;
            figure.rank = sqlite3_column_int(row, 0);
            figure.stage = sqlite3_column_int(row, 1);
            figure.layer = sqlite3_column_int(row, 2);
            figure.layer_name = column_text(row, 3);
            figure.quantity = column_text(row, 4);
            figure.peer = sqlite3_column_int(row, 5);
            figure.bytes = sqlite3_column_int64(row, 6);
            figure.median = sqlite3_column_int64(row, 7);
            figure.low = sqlite3_column_int64(row, 8);
            figure.high = sqlite3_column_int64(row, 9);
            figure.samples = sqlite3_column_int(row, 10);
            return figure;
        });
}

const std::filesystem::path& TraceReader::path() const {
    return state_->path;
}

}  // namespace pipelens::traces
