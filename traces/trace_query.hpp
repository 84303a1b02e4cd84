// A read-only connection to a trace file and the queries every part of TraceReader shares
// (internal to traces/): opening with the checks of trace_file_checks.hpp, statements stepped
// row by row, the rows of a run (or of one rank of it) converted one by one, and a run's row.
// What each table holds, and how an action's text is derived, stay in trace_reader.cpp.
//
// Invariants:
// - The database is opened SQLITE_OPEN_READONLY and never written (see trace_reader.cpp for
//   what that means for a live writer's WAL), without memory-mapped I/O: a trace truncated by
//   another process while mapped would raise SIGBUS instead of an error.
// - Every query prepares its own statement and is its own read transaction; nothing is cached
//   between calls, so const queries stay const, and one thread at a time uses a connection.
// - Every failure is a TraceError naming the file: SQLite's own reason, or "trace is corrupt:"
//   for what only a damaged file holds (an unknown run kind, a missing string id).
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "traces/sqlite_handle.hpp"
#include "traces/trace_reader.hpp"
#include "traces/trace_records.hpp"

namespace pipelens::traces::detail {

struct TraceQuery {
    std::filesystem::path path;
    Connection connection;
    int schema_version = 0;
    // Runs from this id on store no action texts (schema 4); earlier runs may.
    std::int64_t first_run_with_derived_labels = std::numeric_limits<std::int64_t>::max();
    TraceReaderOptions options;

    // Opens `path` read-only and checks that it is a trace this build reads (options say
    // whether its pages are checked too); sets schema_version and first_run_with_derived_labels.
    void open();

    sqlite3* db() const { return connection.get(); }

    [[noreturn]] void fail(std::string_view doing, int code) const {
        throw_sqlite_error(path, doing, db(), code);
    }

    [[noreturn]] void corrupt(std::string_view what) const {
        throw_trace_error(path, fmt::format("trace is corrupt: {}", what));
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

    template <typename OnRow>
    void each_row(sqlite3_stmt* statement, std::string_view doing, OnRow&& on_row) const {
        int code;
        try {
            while ((code = sqlite3_step(statement)) == SQLITE_ROW)
                on_row(statement);
        } catch (const CorruptCell& cell) {
            corrupt(cell.problem());
        }
        if (code != SQLITE_DONE)
            fail(doing, code);
    }

    // `read` of a row stepped to outside each_row, a corrupt cell named with the user's path.
    template <typename Read>
    auto read_row(Read&& read) const {
        try {
            return read();
        } catch (const CorruptCell& cell) {
            corrupt(cell.problem());
        }
    }

    // The one value `sql` (whose only parameter is the run id) yields; nothing for NULL.
    std::optional<std::int64_t> value_of_run(const std::string& sql, std::int64_t run_id,
                                             const std::string& doing) const {
        Statement statement = prepare(sql, doing);
        sqlite3_bind_int64(statement.get(), 1, run_id);
        const int code = sqlite3_step(statement.get());
        if (code != SQLITE_ROW)
            fail(doing, code);
        return read_row([&] { return column_optional_int64(statement.get(), 0); });
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

    // All rows of a run (or of one rank of it, as rows_of) from `sql`, column i read into the
    // i-th of `fields` of a default Record, by the field's type (read_column).
    template <typename Record, typename... Field>
    std::vector<Record> records_of(std::int64_t run_id, std::optional<int> rank,
                                   const std::string& sql, std::string_view what,
                                   Field Record::*... fields) const {
        return rows_of<Record>(run_id, rank, sql, what, [&](sqlite3_stmt* row) {
            Record record;
            read_columns(row, 0, (record.*fields)...);
            return record;
        });
    }

    // A row of `runs` (columns id, kind, schedule, pp, v, m, config, status, started_at_ns,
    // finished_at_ns, step_time_ns, bubble_ratio, failure) as a record.
    RunRecord run_from(sqlite3_stmt* row) const;
};

}  // namespace pipelens::traces::detail
