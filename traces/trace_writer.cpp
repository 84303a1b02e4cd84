// TraceWriter: the only code that changes a trace file. This file holds its transactions and the
// runs it began; each table's INSERT and binding are in row_inserts.cpp, string interning in
// string_interner.cpp, creating and upgrading the schema in schema_migration.cpp.
//
// Invariants:
// - Between calls the connection holds an open write transaction (BEGIN IMMEDIATE), committed
//   and reopened every `batch_rows` rows, on flush(), begin_run(), finish_run() and fail_run().
//   Holding it is the one-writer-per-file lock of the header: a second writer's BEGIN IMMEDIATE
//   fails with "database is locked". It costs nothing, since rows are batched in a transaction
//   anyway, and WAL mode lets readers see every committed batch while it is held.
//   The lock is free only for the microseconds between a COMMIT and the next BEGIN (checkpoints
//   run under it, see checkpoint()); a second writer that tries to open in exactly that gap gets
//   in, and then one of the two fails later with "database is locked" instead of at once.
// - `strings` mirrors the whole `strings` table (string_interner.hpp; only a writer that slipped
//   through the gap above can add to the table behind it). If a commit fails and SQLite rolls the
//   transaction back, the mirror is reloaded, since ids it handed out are gone.
// - Rows are added only to runs this writer began and has not finished or failed, so it never
//   changes the rows of earlier runs or of runs another process left unfinished.
// - The hot path (add_action) does one integer compare for the run and binds integers only: an
//   action's text is derived when read, never stored. Everything that allocates is on the slow
//   paths.
#include "traces/trace_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <chrono>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "traces/row_inserts.hpp"
#include "traces/schema_migration.hpp"
#include "traces/sqlite_handle.hpp"
#include "traces/string_interner.hpp"
#include "traces/trace_file_checks.hpp"
#include "traces/trace_reader.hpp"
#include "traces/writer_lock.hpp"

namespace pipelens::traces {
namespace {

using detail::bind_text;
using detail::Connection;
using detail::Statement;

// A second writer waits this long for the first one's lock before giving up: long enough to ride
// out a commit in progress, short enough that "database is locked" comes back at once.
constexpr int kLockWaitMs = 200;
// Every other wait (a reader recovering the WAL after a crash, a checkpoint) is bounded too.
constexpr int kBusyTimeoutMs = 5000;
// Checkpoint (copy the WAL back into the file) once the WAL holds this many pages, as SQLite's
// own automatic checkpoint would (16 MiB at 16 KiB pages).
constexpr int kCheckpointPages = 1000;

std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

const char* run_kind_text(RunKind kind) {
    return kind == RunKind::real ? "real" : "sim";
}

const char* run_status_text(RunStatus status) {
    switch (status) {
        case RunStatus::running:
            return "running";
        case RunStatus::finished:
            return "finished";
        case RunStatus::failed:
            return "failed";
    }
    return "running";
}

// Settings only a new file can take. Pages of 16 KiB suit a file that mostly grows by appending
// millions of small rows: fewer page splits and index levels, about 12% more rows/s than 4 KiB.
// The application id ("PPLN" in the SQLite header's bytes 68..71) lets tools that read only a
// file's first bytes tell a trace from other SQLite files: the desktop's MIME type
// (assets/desktop/pipelens-trace.xml) matches it.
constexpr const char* kNewFileSettings =
    "PRAGMA page_size = 16384;"
    "PRAGMA application_id = 1347439694;";  // 0x50504C4E, "PPLN"

// Settings for a writer connection (WAL mode itself is switched on separately, as it can fail).
// WAL lets readers read while we write and makes every commit durable against the process dying;
// synchronous=NORMAL skips the fsync per commit (only a power loss can lose the last commits,
// never corrupt the file). Foreign keys are documented in the schema but not enforced: a parent
// lookup per row would cost throughput, and the writer itself guarantees rows only go to runs it
// began.
constexpr const char* kConnectionSettings =
    "PRAGMA synchronous = NORMAL;"
    "PRAGMA temp_store = MEMORY;"
    "PRAGMA cache_size = -32768;"  // 32 MiB: keeps the actions index's hot pages in memory
    "PRAGMA foreign_keys = OFF;";

// A trace about to be created needs its folder: named here, not by SQLite's "unable to open".
void require_directory_for(const std::filesystem::path& path) {
    const std::filesystem::path directory = path.parent_path();
    std::error_code error;
    if (directory.empty() || std::filesystem::is_directory(directory, error))
        return;
    detail::throw_trace_error(
        path, "cannot create trace: " +
                  (std::filesystem::exists(directory, error)
                       ? fmt::format("{} is not a directory", directory.string())
                       : fmt::format("directory {} does not exist", directory.string())));
}

// A run is written only in a shape the reader takes (trace_query.cpp reads pp, v and m up to
// these limits and calls anything above them corruption): one such run once made every later
// read of the whole trace fail.
void refuse_shape_no_reader_takes(const std::filesystem::path& path, const RunRecord& run) {
    const std::tuple<const char*, int, int> counts[] = {
        {"pp", run.pp, kMostRanks}, {"v", run.v, kMostStages}, {"m", run.m, kMostMicrobatches}};
    for (const auto& [name, value, most] : counts)
        if (value < 0 || value > most)
            detail::throw_trace_error(
                path, fmt::format("cannot record a run with {} = {}: a trace holds {} from 0 to {}",
                                  name, value, name, most));
}

}  // namespace

struct TraceWriter::State {
    std::filesystem::path path;
    TraceWriterOptions options;
    // Declared before the connection so it is released after the connection closes.
    WriterLock writer_lock;
    // Declared before the statements so it is destroyed after them.
    Connection connection;

    Statement begin;
    Statement commit;
    Statement insert_run;
    Statement finish_run;
    Statement fail_run;
    detail::RowInserts rows;
    detail::StringInterner strings;

    // Runs begun by this writer, with their current status.
    std::unordered_map<std::int64_t, RunStatus> session_runs;
    // A run id known to be open while a transaction is open; 0 (never a run id) forces the slow
    // path, which also reopens the transaction after a failed commit.
    std::int64_t ready_run = 0;

    std::int64_t pending_rows = 0;
    bool in_transaction = false;
    bool found_schema = false;  // the file held a trace's tables when opened under the lock
    int wal_pages = 0;          // pages in the WAL after the last commit (from the WAL hook)

    sqlite3* db() const { return connection.get(); }

    [[noreturn]] void fail(std::string_view doing, int code) const {
        detail::throw_sqlite_error(path, doing, db(), code);
    }

    void execute(const char* sql, std::string_view doing) const {
        detail::execute(db(), path, sql, doing);
    }

    Statement prepare(std::string_view sql) const {
        return detail::prepare(db(), path, sql, "cannot prepare trace statements", true);
    }

    // Steps an INSERT/UPDATE once. `describe` builds the "cannot ..." text only on failure.
    template <typename Describe>
    void step_once(sqlite3_stmt* statement, Describe&& describe) const {
        detail::step_once(statement, path, describe);
    }

    void begin_transaction(std::string_view doing) {
        int code = sqlite3_step(begin.get());
        sqlite3_reset(begin.get());
        if (code != SQLITE_DONE)
            fail(doing, code);
        in_transaction = true;
    }

    void commit_transaction() {
        int code = sqlite3_step(commit.get());
        sqlite3_reset(commit.get());
        if (code != SQLITE_DONE) {
            std::string message =
                detail::sqlite_error_message(path, "cannot commit trace rows", db(), code);
            if (sqlite3_get_autocommit(db())) {
                // SQLite rolled the transaction back: the rows and any strings it added are gone.
                in_transaction = false;
                ready_run = 0;
                pending_rows = 0;
                try {
                    strings.load();
                } catch (const TraceError&) {
                    // Keep the commit failure as the error. The mirror is left empty, which is
                    // only slower: each label is looked up in the file again on first use.
                }
            }
            throw TraceError(message);
        }
        in_transaction = false;
        pending_rows = 0;
        if (wal_pages >= kCheckpointPages)
            checkpoint();
    }

    // SQLite's automatic checkpoint runs after the commit has released the write lock, leaving a
    // window, as long as the checkpoint and its fsync, in which a second writer could take the
    // lock this writer means to hold for its whole life. A FULL checkpoint holds the write lock
    // while it runs instead; with no busy wait it never waits for readers either, it just copies
    // what no reader still needs (a later checkpoint copies the rest). Failures leave the rows
    // safe in the WAL, so they are not errors.
    void checkpoint() {
        sqlite3_busy_timeout(db(), 0);
        sqlite3_wal_checkpoint_v2(db(), "main", SQLITE_CHECKPOINT_FULL, nullptr, nullptr);
        sqlite3_busy_timeout(db(), kBusyTimeoutMs);
        wal_pages = 0;
    }

    static int on_wal_commit(void* self, sqlite3*, const char*, int pages) {
        static_cast<State*>(self)->wal_pages = pages;
        return SQLITE_OK;
    }

    void commit_and_continue() {
        if (in_transaction)
            commit_transaction();
        begin_transaction("cannot continue writing the trace");
    }

    void row_added() {
        if (++pending_rows >= options.batch_rows)
            commit_and_continue();
    }

    // The slow half of the per-row run check: the run must be one of ours and still running, and
    // a transaction must be open.
    void prepare_rows_for(std::int64_t run_id, std::string_view what) {
        auto found = session_runs.find(run_id);
        if (found == session_runs.end())
            detail::throw_trace_error(
                path, fmt::format("cannot add {} to run {}: run {} was not begun by this writer",
                                  what, run_id, run_id));
        if (found->second != RunStatus::running)
            detail::throw_trace_error(
                path, fmt::format("cannot add {} to run {}: the run is already {}", what, run_id,
                                  run_status_text(found->second)));
        if (!in_transaction)
            begin_transaction("cannot continue writing the trace");
        ready_run = run_id;
    }

    // Binds `row` (and `extra`, see detail::bind_row) to `insert` and steps it once.
    template <typename Row, typename... Extra>
    void insert(Statement& insert, std::int64_t run_id, const Row& row, const Extra&... extra) {
        detail::bind_row(insert.get(), run_id, row, extra...);
        step_once(insert.get(), [&] { return detail::describe_row(run_id, row); });
    }

    // A row of one table for a run this writer began and has not closed; `what` names it in
    // errors ("a rank").
    template <typename Row>
    void add_row(std::int64_t run_id, std::string_view what, Statement& insert_row,
                 const Row& row) {
        if (run_id != ready_run)
            prepare_rows_for(run_id, what);
        insert(insert_row, run_id, row);
        row_added();
    }

    void require_running(std::int64_t run_id, std::string_view doing) {
        auto found = session_runs.find(run_id);
        if (found == session_runs.end())
            detail::throw_trace_error(path,
                                      fmt::format("{}: it was not begun by this writer", doing));
        if (found->second != RunStatus::running)
            detail::throw_trace_error(
                path, fmt::format("{}: it is already {}", doing, run_status_text(found->second)));
    }

    void close_run(std::int64_t run_id, RunStatus status) {
        session_runs[run_id] = status;
        if (ready_run == run_id)
            ready_run = 0;
    }

    // Marks a running run of this writer `status` with `update`, whose parameters are `values`
    // and then the run id, in a commit of its own; `doing` says what failed ("cannot finish run
    // 3"), `begin_doing` what failed when the transaction it needs could not be opened.
    template <typename... Values>
    void end_run(std::int64_t run_id, RunStatus status, Statement& update, const std::string& doing,
                 std::string_view begin_doing, const Values&... values) {
        require_running(run_id, doing);
        if (!in_transaction)
            begin_transaction(begin_doing);
        detail::bind_values(update.get(), 1, values..., run_id);
        step_once(update.get(), [&] { return doing; });
        commit_transaction();
        close_run(run_id, status);
        begin_transaction("cannot continue writing the trace");
    }

    // The rows' statements; they need the schema, so they come after it is created or checked.
    void prepare_row_statements() {
        strings.prepare();
        insert_run = prepare(
            "INSERT INTO runs (kind, schedule, pp, v, m, config, status, started_at_ns) "
            "VALUES (?, ?, ?, ?, ?, ?, 'running', ?)");
        finish_run = prepare(
            "UPDATE runs SET status = 'finished', finished_at_ns = ?, step_time_ns = ?, "
            "bubble_ratio = ? WHERE id = ?");
        fail_run = prepare(
            "UPDATE runs SET status = 'failed', finished_at_ns = ?, failure = ? WHERE id = ?");
        rows = detail::prepare_row_inserts([this](std::string_view sql) { return prepare(sql); });
    }

    // A file this writer created and failed to give a schema (a full disk, say) is removed,
    // with its WAL and index, so that it is not left as "an SQLite database with no tables".
    // Safe only under the writer lock, which a second writer needs before it writes anything.
    void remove_unfinished_new_file() {
        std::error_code ignored;
        for (const char* suffix : {"", "-wal", "-shm"})
            std::filesystem::remove(path.string() + suffix, ignored);
    }

    void open() {
        if (options.batch_rows < 1)
            detail::throw_trace_error(
                path, fmt::format("batch_rows must be at least 1 (got {})", options.batch_rows));
        detail::PathState path_state = detail::examine_trace_path(path);
        // A run added beside a damaged one could not be read back: summary and the viewer read
        // every run's header first.
        if (path_state == detail::PathState::nonempty_file)
            TraceReader(path, {.check_integrity = false}).runs();
        bool creating = path_state == detail::PathState::missing;
        if (creating)
            require_directory_for(path);
        std::string_view doing = creating ? "cannot create trace" : "cannot append to trace";
        connection = detail::open_connection(
            path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, doing);
        strings.attach(db(), path);
        if (sqlite3_db_readonly(db(), "main") == 1)
            detail::throw_trace_error(path, fmt::format("{}: the file is read-only", doing));
        if (std::string why; !writer_lock.acquire(path, why, options.wait_for_other_writer))
            detail::throw_trace_error(path, fmt::format("{}: {}", doing, why));
        try {
            set_up(path_state, doing);
        } catch (const std::exception&) {
            if (creating && !found_schema)
                remove_unfinished_new_file();
            throw;
        }
    }

    // Under the writer lock: WAL mode, the first transaction, and the schema created, upgraded
    // or checked.
    void set_up(detail::PathState path_state, std::string_view doing) {
        sqlite3_busy_timeout(db(), kBusyTimeoutMs);

        // Identify the file before changing anything in it: switching someone else's database
        // to WAL mode would already be a write.
        if (path_state == detail::PathState::nonempty_file)
            detail::check_trace_identity(db(), path);
        else
            execute(kNewFileSettings, doing);

        std::optional<std::string> journal_mode =
            detail::query_text(db(), path, "PRAGMA journal_mode = WAL", doing);
        if (!journal_mode || *journal_mode != "wal")
            detail::throw_trace_error(
                path, fmt::format("{}: cannot switch to WAL journal mode (got '{}')", doing,
                                  journal_mode.value_or("")));
        execute(kConnectionSettings, doing);
        // Replaces SQLite's automatic checkpoint (see checkpoint()).
        sqlite3_wal_hook(db(), &State::on_wal_commit, this);
        begin = prepare("BEGIN IMMEDIATE");
        commit = prepare("COMMIT");

        sqlite3_busy_timeout(db(), kLockWaitMs);
        int code = sqlite3_step(begin.get());
        sqlite3_reset(begin.get());
        sqlite3_busy_timeout(db(), kBusyTimeoutMs);
        if (code != SQLITE_DONE)
            fail(doing, code);
        in_transaction = true;

        // Decided again under the lock: another writer may have created the schema meanwhile.
        std::optional<int> version = detail::check_trace_identity(db(), path);
        found_schema = version.has_value();
        if (!version) {
            detail::create_schema(db(), path, now_ns());
        } else {
            // Newer versions were refused by check_trace_identity; an older file gets the
            // tables its version lacks, inside this transaction, so it is all or nothing.
            if (*version < kSchemaVersion)
                detail::upgrade_schema(db(), path, *version);
            detail::check_trace_integrity(db(), path);
            strings.load();
        }
        prepare_row_statements();
        commit_and_continue();
    }
};

void check_trace_destination(const std::filesystem::path& path) {
    const detail::PathState state = detail::examine_trace_path(path);
    if (state == detail::PathState::nonempty_file) {
        const TraceReader existing(path, {.check_integrity = false});
        // Its runs are read as every reader reads them: a damaged one would make the file, the
        // run about to be added included, unreadable by summary and the viewer after the work.
        existing.runs();
        if (::access(path.c_str(), W_OK) != 0)
            detail::throw_trace_error(path, "cannot append to trace: the file is read-only");
        // Another writer now: this one would do its work and then fail to record it. (It may
        // still start later; the writer's own lock decides then.)
        WriterLock probe;
        if (std::string why; !probe.acquire(path, why))
            detail::throw_trace_error(path, "cannot append to trace: " + why);
        return;
    }
    if (state == detail::PathState::missing) {
        require_directory_for(path);
        const std::filesystem::path directory =
            path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
        if (::access(directory.c_str(), W_OK) != 0)
            detail::throw_trace_error(path, fmt::format("cannot create trace: directory {} is not "
                                                        "writable",
                                                        directory.string()));
        // Write access is not creation: /sys or /proc grant root the one and refuse the other,
        // which the writer found only after the whole run. The file is made and removed.
        const int probe = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (probe < 0 && errno != EEXIST)
            detail::throw_trace_error(path,
                                      fmt::format("cannot create trace: {}", std::strerror(errno)));
        if (probe >= 0) {
            ::close(probe);
            ::unlink(path.c_str());
        }
    }
}

TraceWriter::TraceWriter(const std::filesystem::path& path, TraceWriterOptions options)
    : state_(std::make_unique<State>()) {
    state_->path = path;
    state_->options = options;
    state_->open();
}

TraceWriter::~TraceWriter() {
    if (!state_ || !state_->connection)
        return;
    if (state_->in_transaction) {
        // Commit what is pending but leave every run's status alone: a run that was never
        // finished must read back as `running`. A failure here cannot be reported; SQLite rolls
        // the transaction back when the connection closes, and earlier commits stay.
        sqlite3_step(state_->commit.get());
        sqlite3_reset(state_->commit.get());
        state_->in_transaction = false;
    }
    // Leave a trace nobody is writing as one self-contained file in rollback-journal mode: the
    // WAL is checkpointed and removed, and readers (which cannot remove a WAL or its -shm
    // index) open it without creating either. Only possible while no reader has the file open;
    // then it stays in WAL mode, which is just as correct. Never wait for that.
    sqlite3_busy_timeout(state_->db(), 0);
    sqlite3_exec(state_->db(), "PRAGMA journal_mode = DELETE", nullptr, nullptr, nullptr);
}

std::int64_t TraceWriter::begin_run(const RunRecord& run) {
    State& state = *state_;
    refuse_shape_no_reader_takes(state.path, run);
    if (!state.in_transaction)
        state.begin_transaction("cannot begin a run");
    sqlite3_stmt* statement = state.insert_run.get();
    sqlite3_bind_text(statement, 1, run_kind_text(run.kind), -1, SQLITE_STATIC);
    bind_text(statement, 2, run.schedule);
    sqlite3_bind_int(statement, 3, run.pp);
    sqlite3_bind_int(statement, 4, run.v);
    sqlite3_bind_int(statement, 5, run.m);
    bind_text(statement, 6, run.config);
    sqlite3_bind_int64(statement, 7, run.started_at_ns != 0 ? run.started_at_ns : now_ns());
    state.step_once(statement, [] { return std::string("cannot begin a run"); });
    std::int64_t run_id = sqlite3_last_insert_rowid(state.db());
    state.commit_transaction();
    state.session_runs[run_id] = RunStatus::running;
    state.begin_transaction("cannot continue writing the trace");
    return run_id;
}

void TraceWriter::add_rank(std::int64_t run_id, const RankRecord& rank) {
    state_->add_row(run_id, "a rank", state_->rows.rank, rank);
}

void TraceWriter::add_action(std::int64_t run_id, const ActionRecord& action) {
    State& state = *state_;
    if (run_id != state.ready_run)
        state.prepare_rows_for(run_id, "an action");
    state.insert(state.rows.action, run_id, action,
                 action.kept_text.empty()
                     ? std::nullopt
                     : std::optional<std::int64_t>(state.strings.intern(action.kept_text)));
    for (std::size_t part = 0; part < action.parts.size(); ++part)
        state.insert(state.rows.action_part, run_id,
                     detail::ActionPartRow{action, static_cast<int>(part)});
    state.row_added();
}

void TraceWriter::add_pair(std::int64_t run_id, const PairRecord& pair) {
    state_->add_row(run_id, "a pair", state_->rows.pair, pair);
}

void TraceWriter::add_memory(std::int64_t run_id, const MemoryRecord& sample) {
    state_->add_row(run_id, "a memory sample", state_->rows.memory, sample);
}

void TraceWriter::add_event(std::int64_t run_id, const EventRecord& event) {
    State& state = *state_;
    if (run_id != state.ready_run)
        state.prepare_rows_for(run_id, "an event");
    state.insert(state.rows.event, run_id, event, state.strings.intern(event.name));
    state.row_added();
}

void TraceWriter::add_error(std::int64_t run_id, const ErrorRecord& error) {
    state_->add_row(run_id, "an error", state_->rows.error, error);
}

void TraceWriter::add_state_snapshot(std::int64_t run_id, const StateSnapshotRecord& snapshot) {
    state_->add_row(run_id, "a state snapshot", state_->rows.snapshot, snapshot);
}

void TraceWriter::add_profile(std::int64_t run_id, const ProfileRecord& figure) {
    state_->add_row(run_id, "a profile figure", state_->rows.profile, figure);
}

void TraceWriter::add_sharding(std::int64_t run_id, const ShardingRecord& decision) {
    state_->add_row(run_id, "a sharding decision", state_->rows.sharding, decision);
}

void TraceWriter::flush() {
    state_->commit_and_continue();
}

void TraceWriter::finish_run(std::int64_t run_id, std::int64_t step_time_ns, double bubble_ratio) {
    state_->end_run(run_id, RunStatus::finished, state_->finish_run,
                    fmt::format("cannot finish run {}", run_id), "cannot finish the run", now_ns(),
                    step_time_ns, bubble_ratio);
}

std::int64_t TraceWriter::write_run(const RunRecord& run,
                                    const std::function<void(std::int64_t run_id)>& write) {
    const std::int64_t run_id = begin_run(run);
    try {
        write(run_id);
    } catch (const std::exception& error) {
        try {
            fail_run(run_id, error.what());
        } catch (const std::exception&) {
            // The file itself is failing; the original error says why.
        }
        throw;
    }
    return run_id;
}

void TraceWriter::fail_run(std::int64_t run_id, const std::string& failure) {
    state_->end_run(run_id, RunStatus::failed, state_->fail_run,
                    fmt::format("cannot mark run {} as failed", run_id),
                    "cannot mark the run as failed", now_ns(), failure);
}

const std::filesystem::path& TraceWriter::path() const {
    return state_->path;
}

}  // namespace pipelens::traces
