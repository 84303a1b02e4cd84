// TraceReader: read-only queries over a trace, for the CLI, exports, replay and the viewer: one
// per table here; opening the file and the plumbing every query shares are in trace_query.cpp.
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
#include <optional>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "traces/sqlite_handle.hpp"
#include "traces/text/action_label.hpp"
#include "traces/trace_query.hpp"

namespace pipelens::traces {
namespace {

using detail::integer_cell;
using detail::read_columns;
using detail::Statement;

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

struct TraceReader::State : detail::TraceQuery {
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
            const std::int64_t row_key = step_key(static_cast<int>(integer_cell(row, 0)),
                                                  static_cast<int>(integer_cell(row, 1)));
            if (row_key != key) {
                flush();
                key = row_key;
            }
            text::ActionPart part;
            read_columns(row, 2, part.kind, part.stage, part.microbatch);
            parts.push_back(part);
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

// The checks of every action row, whichever reader reads it, on its columns as stored (before
// they are narrowed: a kind of 999 stored as 8 bits reads as 231): a row no writer could have
// produced is refused as corrupt, naming run, rank and step.
struct ActionColumns {
    std::int64_t rank, step, kind, stage, microbatch, start_ns, end_ns;
};

void check_action_row(const detail::TraceQuery& state, std::int64_t run_id,
                      const ActionColumns& row) {
    const auto fail = [&](const std::string& why) {
        state.corrupt(fmt::format("run {} rank {} step {}: {}", run_id, row.rank, row.step, why));
    };
    if (row.rank < 0 || row.rank >= kMostRanks)
        fail("the rank is out of range");
    if (row.kind < 0 || row.kind >= text::kActionKindNames)
        fail(fmt::format("action kind {} is not a pipeline action", row.kind));
    if (row.stage < -1 || row.stage >= kMostStages)
        fail(fmt::format("stage {} is out of range", row.stage));
    if (row.microbatch < -1 || row.microbatch >= kMostMicrobatches)
        fail(fmt::format("microbatch {} is out of range", row.microbatch));
    if (row.end_ns < row.start_ns)
        fail(fmt::format("it ends at {} ns, before it starts at {} ns", row.end_ns, row.start_ns));
    // No writer records a time past 2^62 ns (146 years) from the run's zero: a simulated step
    // that long is refused, an import's events are; the analyses' sums rely on it.
    constexpr std::int64_t kFarthest = std::int64_t{1} << 62;
    if (row.start_ns < -kFarthest || row.end_ns > kFarthest)
        fail(fmt::format("it spans {} to {} ns, past 2^62 ns from the run's start", row.start_ns,
                         row.end_ns));
}

// The run's pp, which its action and rank rows must lie within (0: says nothing of them).
std::int64_t rank_count_of(const detail::TraceQuery& state, std::int64_t run_id) {
    return state
        .value_of_run("SELECT pp FROM runs WHERE id = ?", run_id,
                      fmt::format("cannot read the ranks of run {}", run_id))
        .value_or(0);
}

// "outside its 4 ranks"
std::string outside_ranks(std::int64_t ranks) {
    return fmt::format("outside its {} rank{}", ranks, ranks == 1 ? "" : "s");
}

// At most `most` characters of `text`, "..." marking a cut.
std::string cut(std::string_view text, std::size_t most) {
    return text.size() <= most ? std::string(text) : std::string(text.substr(0, most)) + "...";
}

// Why a ranks row's waiting_on is none a writer makes (a JSON object of peer rank -> ns waited,
// each peer one of the run's `pp` ranks, each wait zero or more), if it is not; empty is none.
std::optional<std::string> unreadable_waiting(const std::string& text, std::int64_t pp) {
    if (text.empty())
        return std::nullopt;
    const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
    if (!parsed.is_object())
        return fmt::format("is not a JSON object of peer rank to ns: {}", cut(text, 80));
    for (const auto& [peer, waited] : parsed.items()) {
        int rank = -1;
        const auto [end, error] = std::from_chars(peer.data(), peer.data() + peer.size(), rank);
        if (error != std::errc() || end != peer.data() + peer.size() || rank < 0 ||
            (pp > 0 && rank >= pp))
            return fmt::format("names peer '{}', not one of its ranks", cut(peer, 40));
        if (!waited.is_number_integer() || waited.get<std::int64_t>() < 0)
            return fmt::format("gives peer {} a wait of {}", rank, cut(waited.dump(), 40));
    }
    return std::nullopt;
}

// An action row (columns as kActionColumns) as a record, checked first.
ActionRecord action_from(const detail::TraceQuery& state, std::int64_t run_id, sqlite3_stmt* row) {
    const auto column = [&](int index) { return integer_cell(row, index); };
    check_action_row(state, run_id,
                     {column(0), column(1), column(3), column(4), column(5), column(7), column(8)});
    ActionRecord action;
    read_columns(row, 0, action.rank, action.step, action.lane, action.kind, action.stage,
                 action.microbatch);
    read_columns(row, 7, action.start_ns, action.end_ns, action.bytes, action.pair_id);
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

std::int64_t TraceReader::data_version() const {
    const std::optional<std::string> version = detail::query_text(
        state_->db(), state_->path, "PRAGMA data_version", "cannot read the data version");
    return version ? std::stoll(*version) : 0;
}

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
    return state.read_row([&] { return state.run_from(statement.get()); });
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

std::int64_t TraceReader::run_count() const {
    const State& state = *state_;
    std::string_view doing = "cannot count the runs";
    Statement statement = state.prepare("SELECT count(*) FROM runs", doing);
    if (const int code = sqlite3_step(statement.get()); code != SQLITE_ROW)
        state.fail(doing, code);
    return sqlite3_column_int64(statement.get(), 0);
}

std::vector<RankRecord> TraceReader::ranks(std::int64_t run_id) const {
    const std::string clock =
        state_->schema_version >= 5 ? "clock_offset_ns, clock_uncertainty_ns" : "NULL, NULL";
    const std::string core_wait = state_->schema_version >= 10 ? "core_wait_ns" : "NULL";
    std::vector<RankRecord> ranks = state_->records_of(
        run_id, std::nullopt,
        "SELECT rank, busy_ns, bubble_ns, bubble_ratio, peak_memory_bytes, warmup_ns, "
        "cooldown_ns, waiting_on, " +
            clock + ", " + core_wait + " FROM ranks WHERE run_id = ? ORDER BY rank",
        "ranks", &RankRecord::rank, &RankRecord::busy_ns, &RankRecord::bubble_ns,
        &RankRecord::bubble_ratio, &RankRecord::peak_memory_bytes, &RankRecord::warmup_ns,
        &RankRecord::cooldown_ns, &RankRecord::waiting_on, &RankRecord::clock_offset_ns,
        &RankRecord::clock_uncertainty_ns, &RankRecord::core_wait_ns);
    // Figures no writer records (a fifth rank of a pp=4 run, a negative busy time) are damage,
    // not a row to print.
    const std::int64_t pp = rank_count_of(*state_, run_id);
    for (const RankRecord& rank : ranks) {
        const auto fail = [&](const std::string& why) {
            state_->corrupt(fmt::format("run {} rank {}: {}", run_id, rank.rank, why));
        };
        if (rank.rank < 0 || (pp > 0 && rank.rank >= pp))
            fail(outside_ranks(pp));
        for (const auto& [name, value] :
             {std::pair("busy_ns", rank.busy_ns), std::pair("bubble_ns", rank.bubble_ns),
              std::pair("warmup_ns", rank.warmup_ns), std::pair("cooldown_ns", rank.cooldown_ns)})
            if (value < 0)
                fail(fmt::format("{} = {}", name, value));
        if (!(rank.bubble_ratio >= 0 && rank.bubble_ratio <= 1))
            fail(fmt::format("bubble_ratio = {}", rank.bubble_ratio));
        if (rank.peak_memory_bytes < 0)
            fail(fmt::format("peak_memory_bytes = {}", rank.peak_memory_bytes));
        if (rank.clock_uncertainty_ns && *rank.clock_uncertainty_ns < 0)
            fail(fmt::format("clock_uncertainty_ns = {}", *rank.clock_uncertainty_ns));
        if (rank.core_wait_ns && *rank.core_wait_ns < 0)
            fail(fmt::format("core_wait_ns = {}", *rank.core_wait_ns));
        if (const auto why = unreadable_waiting(rank.waiting_on, pp))
            fail(fmt::format("waiting_on {}", *why));
    }
    return ranks;
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
    (void)action_rank_limit(run_id);  // every row on one of the run's ranks
    std::vector<ActionRecord> actions;
    actions.reserve(static_cast<std::size_t>(action_count(run_id)));
    state.each_row(statement.get(), doing, [&](sqlite3_stmt* row) {
        actions.push_back(action_from(state, run_id, row));
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
        actions.push_back(action_from(state, run_id, row));
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
    const State& state = *state_;
    return state.rows_of<StoredAction>(
        run_id, rank,
        "SELECT step, stage, microbatch, pair_id, start_ns, end_ns, bytes, lane, kind "
        "FROM actions WHERE run_id = ? AND rank = ? ORDER BY start_ns, step",
        "actions", [&](sqlite3_stmt* row) {
            const auto column = [&](int index) { return integer_cell(row, index); };
            check_action_row(
                state, run_id,
                {rank, column(0), column(8), column(1), column(2), column(4), column(5)});
            StoredAction action;
            read_columns(row, 0, action.step, action.stage, action.microbatch, action.pair_id,
                         action.start_ns, action.end_ns, action.bytes, action.lane, action.kind);
            return action;
        });
}

std::vector<std::pair<std::int32_t, std::string>> TraceReader::stored_labels(std::int64_t run_id,
                                                                             int rank) const {
    const State& state = *state_;
    std::vector<std::pair<std::int32_t, std::string>> labels;
    if (state.schema_version >= 4) {
        for (auto& [key, text] : state.overlap_texts(run_id, rank))
            labels.emplace_back(static_cast<std::int32_t>(key & 0xffffffff), std::move(text));
    }
    const auto kept = [&](const char* table, const char* which, std::string_view what) {
        std::vector<std::pair<std::int32_t, std::string>> stored =
            state.rows_of_rank<std::pair<std::int32_t, std::string>>(
                run_id, rank,
                std::string("SELECT a.step, a.label_id, s.text FROM ") + table +
                    " LEFT JOIN strings s ON s.id = a.label_id WHERE a.run_id = ? AND a.rank = ? "
                    "AND " +
                    which + "a.label_id IS NOT NULL",
                what, [&](sqlite3_stmt* row) {
                    return std::pair<std::int32_t, std::string>(
                        static_cast<std::int32_t>(integer_cell(row, 0)),
                        state.interned_text(row, 2, 1));
                });
        labels.insert(labels.end(), std::make_move_iterator(stored.begin()),
                      std::make_move_iterator(stored.end()));
    };
    // Rows written before version 4 kept their text, overlaps included. Looking for them scans
    // the rank's rows, so only runs that old are searched.
    if (run_id < state.first_run_with_derived_labels)
        kept("actions a", "a.kind = 8 AND ", "OVERLAP_F_B labels");
    // Since version 9 a row may keep a text its integers cannot give; the partial index
    // actions_with_text lists exactly those rows (named: the planner, without statistics,
    // would take the primary key and read every row of the rank).
    else if (state.schema_version >= 9)
        kept("actions a INDEXED BY actions_with_text", "", "kept action texts");
    std::sort(labels.begin(), labels.end());
    return labels;
}

StringTable TraceReader::strings() const {
    return read_strings(state_->db(), state_->path);
}

int TraceReader::action_rank_limit(std::int64_t run_id) const {
    // min() and max() over the key's second column are one seek each, not a scan. A row outside
    // the run's ranks would be dropped by the readers that go rank by rank, and drawn by those
    // that read the whole run: neither, it is corrupt.
    const std::string doing = fmt::format("cannot read the ranks of run {}", run_id);
    const std::optional<std::int64_t> highest =
        state_->value_of_run("SELECT max(rank) FROM actions WHERE run_id = ?", run_id, doing);
    if (!highest)
        return 0;
    const std::int64_t lowest =
        state_->value_of_run("SELECT min(rank) FROM actions WHERE run_id = ?", run_id, doing)
            .value_or(0);
    const std::int64_t ranks = rank_count_of(*state_, run_id);
    // pp 0 says nothing of the ranks (hand-made files): only the limit every trace keeps.
    for (const std::int64_t rank : {lowest, *highest})
        if (rank < 0 || rank >= kMostRanks || (ranks > 0 && rank >= ranks))
            state_->corrupt(fmt::format("run {} has an action on rank {}{}", run_id, rank,
                                        ranks > 0 ? ", " + outside_ranks(ranks) : std::string()));
    return static_cast<int>(*highest) + 1;
}

std::vector<PairRecord> TraceReader::pairs(std::int64_t run_id) const {
    // Files older than version 8 name each pair once for all training steps: step 0.
    const std::string training_step = state_->schema_version >= 8 ? "training_step" : "0";
    std::vector<PairRecord> pairs =
        state_->records_of(run_id, std::nullopt,
                           "SELECT pair_id, send_rank, send_step, recv_rank, recv_step, bytes, " +
                               training_step + " FROM pairs WHERE run_id = ? ORDER BY pair_id",
                           "pairs", &PairRecord::pair_id, &PairRecord::send_rank,
                           &PairRecord::send_step, &PairRecord::recv_rank, &PairRecord::recv_step,
                           &PairRecord::bytes, &PairRecord::training_step);
    const std::int64_t pp = rank_count_of(*state_, run_id);
    const auto inside = [&](std::int64_t rank) { return rank >= 0 && (pp == 0 || rank < pp); };
    for (const PairRecord& pair : pairs) {
        const auto fail = [&](const std::string& why) {
            state_->corrupt(fmt::format("run {} pair {}: {}", run_id, pair.pair_id, why));
        };
        if (!inside(pair.send_rank))
            fail(fmt::format("its SEND is on rank {}, {}", pair.send_rank, outside_ranks(pp)));
        if (!inside(pair.recv_rank))
            fail(fmt::format("its RECV is on rank {}, {}", pair.recv_rank, outside_ranks(pp)));
        if (pair.bytes < 0)
            fail(fmt::format("bytes = {}", pair.bytes));
    }
    return pairs;
}

namespace {

// A memory sample and its row id: samples at one moment keep the order they were written in.
struct MemoryRow {
    MemoryRecord sample;
    std::int64_t rowid = 0;
};

MemoryRow memory_from(sqlite3_stmt* row) {
    MemoryRow read;
    read_columns(row, 0, read.sample.rank, read.sample.time_ns, read.sample.bytes, read.rowid);
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
    return checked_memory(run_id, in_written_order(state_->rows_of_run<MemoryRow>(
                                      run_id,
                                      "SELECT rank, time_ns, bytes, rowid FROM memory WHERE "
                                      "run_id = ? ORDER BY rank, time_ns, bytes, rowid",
                                      "memory samples", memory_from)));
}

std::vector<MemoryRecord> TraceReader::memory(std::int64_t run_id, int rank) const {
    return checked_memory(run_id, in_written_order(state_->rows_of_rank<MemoryRow>(
                                      run_id, rank,
                                      "SELECT rank, time_ns, bytes, rowid FROM memory WHERE "
                                      "run_id = ? AND rank = ? ORDER BY time_ns, bytes, rowid",
                                      "memory samples", memory_from)));
}

std::vector<MemoryRecord> TraceReader::checked_memory(std::int64_t run_id,
                                                      std::vector<MemoryRecord> samples) const {
    for (const MemoryRecord& sample : samples)
        if (sample.bytes < 0)
            state_->corrupt(fmt::format("run {} rank {}: a memory sample at {} ns of {} bytes",
                                        run_id, sample.rank, sample.time_ns, sample.bytes));
    return samples;
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
            read_columns(row, 0, event.sequence, event.rank, event.parent);
            event.name = state.interned_text(row, 6, 3);
            read_columns(row, 4, event.arguments, event.outcome);
            read_columns(row, 7, event.time_ns);
            return event;
        });
}

std::vector<ErrorRecord> TraceReader::errors(std::int64_t run_id) const {
    // Files older than version 7 do not say when the interrupted action started.
    const std::string started = state_->schema_version >= 7 ? "started_ns" : "NULL";
    std::vector<ErrorRecord> errors = state_->records_of(
        run_id, std::nullopt,
        "SELECT rank, stage, microbatch, action, kind, expected, actual, message, time_ns, " +
            started + " FROM errors WHERE run_id = ? ORDER BY id",
        "errors", &ErrorRecord::rank, &ErrorRecord::stage, &ErrorRecord::microbatch,
        &ErrorRecord::action, &ErrorRecord::kind, &ErrorRecord::expected, &ErrorRecord::actual,
        &ErrorRecord::message, &ErrorRecord::time_ns, &ErrorRecord::started_ns);
    // -1: the whole run's (a simulation's, a launcher's); any other is one of its ranks.
    const std::int64_t pp = rank_count_of(*state_, run_id);
    for (const ErrorRecord& error : errors)
        if (error.rank < -1 || (pp > 0 && error.rank >= pp))
            state_->corrupt(fmt::format("run {} has an error on rank {}, {}", run_id, error.rank,
                                        outside_ranks(pp)));
    return errors;
}

std::vector<ShardingRecord> TraceReader::sharding(std::int64_t run_id) const {
    return state_->records_of(
        run_id, std::nullopt,
        "SELECT sequence, op, mesh, strategies, chosen, redistributions FROM sharding "
        "WHERE run_id = ? ORDER BY sequence, rowid",
        "sharding decisions", &ShardingRecord::sequence, &ShardingRecord::op, &ShardingRecord::mesh,
        &ShardingRecord::strategies, &ShardingRecord::chosen, &ShardingRecord::redistributions);
}

std::vector<StateSnapshotRecord> TraceReader::state_snapshots(std::int64_t run_id) const {
    if (state_->schema_version < 2)
        return {};
    return state_->records_of(
        run_id, std::nullopt,
        "SELECT rank, after_sequence, state FROM state_snapshots WHERE run_id = ? "
        "ORDER BY rank",
        "state snapshots", &StateSnapshotRecord::rank, &StateSnapshotRecord::after_sequence,
        &StateSnapshotRecord::state);
}

std::vector<ProfileRecord> TraceReader::profile(std::int64_t run_id) const {
    if (state_->schema_version < 6)
        return {};
    return state_->records_of(
        run_id, std::nullopt,
        "SELECT rank, stage, layer, layer_name, quantity, peer, bytes, median, low, high, samples "
        "FROM profile WHERE run_id = ? ORDER BY rowid",
        "profile", &ProfileRecord::rank, &ProfileRecord::stage, &ProfileRecord::layer,
        &ProfileRecord::layer_name, &ProfileRecord::quantity, &ProfileRecord::peer,
        &ProfileRecord::bytes, &ProfileRecord::median, &ProfileRecord::low, &ProfileRecord::high,
        &ProfileRecord::samples);
}

const std::filesystem::path& TraceReader::path() const {
    return state_->path;
}

}  // namespace pipelens::traces
