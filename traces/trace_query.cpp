// Opening a trace read-only and reading a run's row (see trace_query.hpp).
#include "traces/trace_query.hpp"

#include <charconv>

#include "traces/trace_file_checks.hpp"

namespace pipelens::traces::detail {
namespace {

// A concurrent writer never blocks readers in WAL mode; only WAL recovery after a crash or a
// checkpoint restart does, briefly. Past this the query fails with "database is locked".
constexpr int kBusyTimeoutMs = 5000;

}  // namespace

void TraceQuery::open() {
    switch (examine_trace_path(path)) {
        case PathState::missing:
            throw_trace_error(path, "no such file");
        case PathState::empty_file:
            throw_trace_error(path, "not a pipelens trace (empty file)");
        case PathState::nonempty_file:
            break;
    }
    connection =
        open_connection(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, "cannot open trace");
    sqlite3_busy_timeout(db(), kBusyTimeoutMs);
    std::optional<int> version = check_trace_identity(db(), path);
    if (!version) {
        // A trace still being written, or whose writer was killed, holds its contents in the
        // write-ahead log beside it; SQLite ignores a log that is damaged (or another file's).
        std::error_code error;
        const std::filesystem::path log = path.string() + "-wal";
        if (std::filesystem::file_size(log, error) > 0 && !error)
            throw_trace_error(path, fmt::format("its tables are in its write-ahead log {}, which "
                                                "SQLite could not use: the log is damaged or "
                                                "belongs to another file",
                                                log.string()));
        throw_trace_error(path, "not a pipelens trace (an SQLite database with no tables)");
    }
    schema_version = *version;
    if (schema_version >= 4)
        if (const auto first = query_text(
                db(), path, "SELECT value FROM meta WHERE key = 'first_run_with_derived_labels'",
                "cannot open trace"))
            // A damaged value only costs the scan for older texts in every run.
            std::from_chars(first->data(), first->data() + first->size(),
                            first_run_with_derived_labels);
    if (options.check_integrity)
        check_trace_integrity(db(), path);
    // Sorting (rarely needed: the indexes give most orders) stays in memory, and a viewer's
    // repeated window queries stay in a 64 MiB page cache.
    execute(db(), path, "PRAGMA temp_store = MEMORY; PRAGMA cache_size = -65536;",
            "cannot open trace");
}

RunRecord TraceQuery::run_from(sqlite3_stmt* row) const {
    RunRecord run;
    run.id = integer_cell(row, 0);
    std::string kind = column_text(row, 1);
    if (kind == "sim")
        run.kind = RunKind::simulated;
    else if (kind == "real")
        run.kind = RunKind::real;
    else
        corrupt(fmt::format("run {} has kind '{}'", run.id, kind));
    // Checked before they are narrowed to int.
    const std::pair<const char*, std::int64_t> counts[] = {
        {"pp", kMostRanks}, {"v", kMostStages}, {"m", kMostMicrobatches}};
    for (int index = 0; index < 3; ++index)
        if (const std::int64_t value = integer_cell(row, 3 + index);
            value < 0 || value > counts[index].second)
            corrupt(fmt::format("run {} has {} = {}", run.id, counts[index].first, value));
    read_columns(row, 2, run.schedule, run.pp, run.v, run.m, run.config);
    std::string status = column_text(row, 7);
    if (status == "running")
        run.status = RunStatus::running;
    else if (status == "finished")
        run.status = RunStatus::finished;
    else if (status == "failed")
        run.status = RunStatus::failed;
    else
        corrupt(fmt::format("run {} has status '{}'", run.id, status));
    read_columns(row, 8, run.started_at_ns, run.finished_at_ns, run.step_time_ns, run.bubble_ratio,
                 run.failure);
    // Figures no writer records: printed as read, they once gave a step of -5 ns, a 500% bubble,
    // a 9223 s step beside 2 ms of work, or a finished run's "step time 0 ns" (NULL read as 0).
    constexpr std::int64_t kLongestStepNs = std::int64_t{1} << 62;
    if (run.step_time_ns && (*run.step_time_ns < 0 || *run.step_time_ns > kLongestStepNs))
        corrupt(fmt::format("run {} has step_time_ns = {}", run.id, *run.step_time_ns));
    if (run.status == RunStatus::finished && (!run.step_time_ns || !run.bubble_ratio))
        corrupt(fmt::format("run {} is finished but has no {}", run.id,
                            run.step_time_ns ? "bubble_ratio" : "step_time_ns"));
    if (run.bubble_ratio && !(*run.bubble_ratio >= 0 && *run.bubble_ratio <= 1))
        corrupt(fmt::format("run {} has bubble_ratio = {}", run.id, *run.bubble_ratio));
    return run;
}

}  // namespace pipelens::traces::detail
