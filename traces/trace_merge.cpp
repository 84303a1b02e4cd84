// Run copying with SQL: the source attached read-only to the destination's connection, and per
// table one INSERT ... SELECT whose column list is the columns both files have (an older source
// lacks columns added since; they stay NULL, as the schema's `@since` sections make them).
#include "traces/trace_merge.hpp"

#include <unistd.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>

#include "traces/sqlite_handle.hpp"
#include "traces/trace_reader.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::traces {
namespace {

using detail::column_text;

std::vector<std::string> column_names(sqlite3* connection, const std::filesystem::path& path,
                                      const std::string& schema, const std::string& table) {
    const detail::Statement statement = detail::prepare(
        connection, path, fmt::format("PRAGMA {}.table_info(\"{}\")", schema, table),
        "cannot read the columns of " + table);
    std::vector<std::string> names;
    while (sqlite3_step(statement.get()) == SQLITE_ROW)
        names.push_back(column_text(statement.get(), 1));
    return names;
}

// The tables rows of runs live in, as the destination has them.
std::vector<std::string> run_tables(sqlite3* connection, const std::filesystem::path& path) {
    const detail::Statement statement = detail::prepare(
        connection, path,
        "SELECT name FROM main.sqlite_master WHERE type = 'table' AND name != 'runs' ORDER BY name",
        "cannot list the tables");
    std::vector<std::string> tables;
    while (sqlite3_step(statement.get()) == SQLITE_ROW)
        tables.push_back(column_text(statement.get(), 0));
    std::vector<std::string> with_runs;
    for (const std::string& table : tables) {
        const std::vector<std::string> columns = column_names(connection, path, "main", table);
        if (std::find(columns.begin(), columns.end(), "run_id") != columns.end())
            with_runs.push_back(table);
    }
    return with_runs;
}

// The SELECT list that moves `table`'s rows of source run ?1 to destination run ?2.
std::string copy_sql(sqlite3* connection, const std::filesystem::path& path,
                     const std::string& table) {
    const std::vector<std::string> source_columns = column_names(connection, path, "source", table);
    const std::set<std::string> in_source(source_columns.begin(), source_columns.end());
    std::string columns, values;
    for (const std::string& column : column_names(connection, path, "main", table)) {
        if (!in_source.count(column) || column == "id")
            continue;  // the destination numbers its own rows
        std::string value = column;
        if (column == "run_id")
            value = "?2";
        else if (column == "label_id" || column == "name_id")
            value = fmt::format(
                "(SELECT d.id FROM main.strings d JOIN source.strings s "
                "ON d.text = s.text WHERE s.id = t.{})",
                column);
        columns += (columns.empty() ? "" : ", ") + column;
        values += (values.empty() ? "" : ", ") + value;
    }
    return fmt::format(
        "INSERT INTO main.{0} ({1}) SELECT {2} FROM source.{0} t WHERE t.run_id = ?1", table,
        columns, values);
}

std::vector<std::int64_t> source_run_ids(sqlite3* connection, const std::filesystem::path& path) {
    const detail::Statement statement = detail::prepare(
        connection, path, "SELECT id FROM source.runs ORDER BY id", "cannot list the runs");
    std::vector<std::int64_t> ids;
    while (sqlite3_step(statement.get()) == SQLITE_ROW)
        ids.push_back(sqlite3_column_int64(statement.get(), 0));
    return ids;
}

std::int64_t copy_run_row(sqlite3* connection, const std::filesystem::path& path,
                          std::int64_t source_run) {
    const std::vector<std::string> source_columns =
        column_names(connection, path, "source", "runs");
    std::string columns;
    for (const std::string& column : column_names(connection, path, "main", "runs"))
        if (column != "id" &&
            std::find(source_columns.begin(), source_columns.end(), column) != source_columns.end())
            columns += (columns.empty() ? "" : ", ") + column;
    const detail::Statement insert = detail::prepare(
        connection, path,
        fmt::format("INSERT INTO main.runs ({0}) SELECT {0} FROM source.runs WHERE id = ?1",
                    columns),
        "cannot copy a run");
    sqlite3_bind_int64(insert.get(), 1, source_run);
    detail::step_to_done(insert.get(), path, fmt::format("cannot copy run {}", source_run));
    return sqlite3_last_insert_rowid(connection);
}

// A copy of an older source upgraded to the current schema, removed when it goes; the source
// itself is opened read-only. An upgrade rewrites rows (schema.sql's sections), so copying the
// older file's rows as they are would keep what the upgrade exists to fix.
class UpgradedCopy {
  public:
    UpgradedCopy(const std::filesystem::path& source, const std::filesystem::path& destination)
        : path_(destination.string() + ".merge-source-" + std::to_string(::getpid())) {
        std::filesystem::remove(path_);
        {
            const detail::Connection connection = detail::open_connection(
                source, SQLITE_OPEN_READONLY, "cannot open it to merge from");
            const detail::Statement vacuum = detail::prepare(
                connection.get(), source, "VACUUM INTO ?1", "cannot copy it to upgrade it");
            detail::bind_text(vacuum.get(), 1, path_.string());
            detail::step_to_done(vacuum.get(), source, "cannot copy it to upgrade it");
        }
        const TraceWriter upgrade(path_);
    }
    ~UpgradedCopy() {
        std::error_code ignored;
        for (const char* suffix : {"", "-wal", "-shm"})
            std::filesystem::remove(path_.string() + suffix, ignored);
    }
    UpgradedCopy(const UpgradedCopy&) = delete;
    UpgradedCopy& operator=(const UpgradedCopy&) = delete;
    const std::filesystem::path& path() const { return path_; }

  private:
    std::filesystem::path path_;
};

}  // namespace

std::vector<std::int64_t> copy_trace_runs(const std::filesystem::path& given_source,
                                          const std::filesystem::path& destination) {
    int source_version = 0;
    {
        const TraceReader check(given_source);  // a pipelens trace, whole, of a version we read
        source_version = check.schema_version();
    }
    std::optional<UpgradedCopy> upgraded;
    if (source_version < kSchemaVersion)
        upgraded.emplace(given_source, destination);
    const std::filesystem::path& source = upgraded ? upgraded->path() : given_source;
    {
        const TraceWriter create(destination);  // the schema, current
    }
    const detail::Connection connection =
        detail::open_connection(destination, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI,
                                "cannot open the trace to merge into");
    sqlite3* db = connection.get();
    sqlite3_busy_timeout(db, 5000);
    const detail::Statement attach = detail::prepare(db, destination, "ATTACH ?1 AS source",
                                                     "cannot attach " + given_source.string());
    const std::string uri = "file:" + source.string() + "?mode=ro";
    detail::bind_text(attach.get(), 1, uri);
    detail::step_to_done(attach.get(), given_source, "cannot open it to merge from");
    detail::execute(db, destination, "BEGIN IMMEDIATE", "cannot start merging");
    std::vector<std::int64_t> copied;
    try {
        detail::execute(db, destination,
                        "INSERT OR IGNORE INTO main.strings (text) SELECT text FROM source.strings",
                        "cannot copy the strings");
        std::vector<std::pair<std::string, detail::Statement>> copies;
        for (const std::string& table : run_tables(db, destination))
            if (!column_names(db, destination, "source", table).empty())
                copies.emplace_back(
                    table, detail::prepare(db, destination, copy_sql(db, destination, table),
                                           "cannot copy " + table));
        for (const std::int64_t run : source_run_ids(db, destination)) {
            const std::int64_t new_run = copy_run_row(db, destination, run);
            for (auto& [table, statement] : copies) {
                sqlite3_bind_int64(statement.get(), 1, run);
                sqlite3_bind_int64(statement.get(), 2, new_run);
                detail::step_to_done(statement.get(), destination,
                                     fmt::format("cannot copy {} of run {} from {}", table, run,
                                                 given_source.string()));
            }
            copied.push_back(new_run);
        }
        detail::execute(db, destination, "COMMIT", "cannot commit the merged runs");
    } catch (...) {
        sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
    return copied;
}

}  // namespace pipelens::traces
