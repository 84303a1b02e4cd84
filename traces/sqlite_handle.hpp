// SQLite plumbing shared by TraceWriter and TraceReader (internal to traces/): owning handles for
// connections and statements, and the one place an SQLite failure becomes a TraceError.
//
// Invariants: a Connection or Statement releases its handle exactly once and never throws, so
// they are safe to destroy while an exception unwinds. Every message built here is a single line
// that starts with the trace's path; callers only say what they were doing ("cannot add action
// to run 3"), and SQLite's own reason plus, where one helps, a hint are appended.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "traces/trace_error.hpp"

namespace pipelens::traces::detail {

struct ConnectionCloser {
    void operator()(sqlite3* connection) const noexcept { sqlite3_close_v2(connection); }
};
using Connection = std::unique_ptr<sqlite3, ConnectionCloser>;

struct StatementFinalizer {
    void operator()(sqlite3_stmt* statement) const noexcept { sqlite3_finalize(statement); }
};
using Statement = std::unique_ptr<sqlite3_stmt, StatementFinalizer>;

// "<path>: <what>", with any line break in `what` folded so the result is one line.
std::string trace_message(const std::filesystem::path& path, std::string_view what);

[[noreturn]] void throw_trace_error(const std::filesystem::path& path, std::string_view what);

// "<path>: <doing>: <SQLite's reason>[ (hint)]". `code` is the failing call's result; the reason
// is taken from `connection` when it has one for that code, else from the code itself.
std::string sqlite_error_message(const std::filesystem::path& path, std::string_view doing,
                                 sqlite3* connection, int code);
[[noreturn]] void throw_sqlite_error(const std::filesystem::path& path, std::string_view doing,
                                     sqlite3* connection, int code);

// Opens `path` with `flags`; on failure throws "<path>: <doing>: <reason>".
Connection open_connection(const std::filesystem::path& path, int flags, std::string_view doing);

// Prepares one statement. `persistent` tells SQLite it will be reused for the connection's life.
Statement prepare(sqlite3* connection, const std::filesystem::path& path, std::string_view sql,
                  std::string_view doing, bool persistent = false);

// Runs SQL that returns no rows we need (pragmas that are set, BEGIN/COMMIT, the schema).
void execute(sqlite3* connection, const std::filesystem::path& path, const char* sql,
             std::string_view doing);

// Steps `statement` to completion ignoring rows, then resets it; throws on failure.
void step_to_done(sqlite3_stmt* statement, const std::filesystem::path& path,
                  std::string_view doing);

// Steps an INSERT or UPDATE once and resets it; throws on failure. `describe` builds the
// "cannot ..." text only then, so a hot path formats nothing.
template <typename Describe>
void step_once(sqlite3_stmt* statement, const std::filesystem::path& path, Describe&& describe) {
    const int code = sqlite3_step(statement);
    if (code != SQLITE_DONE) {
        // Take the message before the reset, which may replace the connection's error text.
        std::string message =
            sqlite_error_message(path, describe(), sqlite3_db_handle(statement), code);
        sqlite3_reset(statement);
        throw TraceError(message);
    }
    sqlite3_reset(statement);
}

// Runs a query that returns one text value (e.g. `PRAGMA journal_mode=WAL`); nullopt when it
// returns no row.
std::optional<std::string> query_text(sqlite3* connection, const std::filesystem::path& path,
                                      const char* sql, std::string_view doing);

// Binds text that must outlive only the next sqlite3_step (SQLITE_TRANSIENT copies it).
inline int bind_text(sqlite3_stmt* statement, int index, std::string_view text) {
    return sqlite3_bind_text(statement, index, text.data(), static_cast<int>(text.size()),
                             SQLITE_TRANSIENT);
}

// Binds the value, or NULL when there is none (the optional columns' convention).
inline int bind_optional_int64(sqlite3_stmt* statement, int index,
                               std::optional<std::int64_t> value) {
    return value ? sqlite3_bind_int64(statement, index, *value)
                 : sqlite3_bind_null(statement, index);
}

inline std::string column_text(sqlite3_stmt* statement, int column) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement, column));
    if (text == nullptr)
        return {};
    return std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(statement, column)));
}

// A cell whose type is not the one its column holds, which SQLite would read as 0 (or cut a
// real to an integer). Its message names the file as SQLite knows it (an absolute path); a reader
// that knows the name the user gave rethrows `problem` with it (TraceQuery::each_row).
class CorruptCell : public TraceError {
  public:
    CorruptCell(const std::string& message, std::string problem)
        : TraceError(message), problem_(std::move(problem)) {}
    // "actions.start_ns holds the text 'soon' where an integer belongs"
    const std::string& problem() const { return problem_; }

  private:
    std::string problem_;
};
[[noreturn]] void throw_cell_type_error(sqlite3_stmt* row, int column, std::string_view wanted);

// The integer in `column`; any other cell (text, a real, a blob, NULL) is refused as corrupt.
inline std::int64_t integer_cell(sqlite3_stmt* row, int column) {
    if (sqlite3_column_type(row, column) != SQLITE_INTEGER)
        throw_cell_type_error(row, column, "an integer");
    return sqlite3_column_int64(row, column);
}

// The number in `column`, integer or real; anything else is refused as corrupt.
inline double number_cell(sqlite3_stmt* row, int column) {
    const int type = sqlite3_column_type(row, column);
    if (type != SQLITE_INTEGER && type != SQLITE_FLOAT)
        throw_cell_type_error(row, column, "a number");
    return sqlite3_column_double(row, column);
}

inline std::optional<std::int64_t> column_optional_int64(sqlite3_stmt* statement, int column) {
    if (sqlite3_column_type(statement, column) == SQLITE_NULL)
        return std::nullopt;
    return integer_cell(statement, column);
}

inline std::optional<double> column_optional_double(sqlite3_stmt* statement, int column) {
    if (sqlite3_column_type(statement, column) == SQLITE_NULL)
        return std::nullopt;
    return number_cell(statement, column);
}

// Binds `value` to parameter `index` by its type: integers of up to 32 bits, bool and enums as
// int, wider integers as int64, floating point as double, an optional int64 as the value or NULL
// (the optional columns' convention), anything else as text.
template <typename Value>
void bind_value(sqlite3_stmt* statement, int index, const Value& value) {
    if constexpr (std::is_same_v<Value, std::optional<std::int64_t>>)
        bind_optional_int64(statement, index, value);
    else if constexpr (std::is_enum_v<Value>)
        sqlite3_bind_int(statement, index, static_cast<int>(value));
    else if constexpr (std::is_floating_point_v<Value>)
        sqlite3_bind_double(statement, index, value);
    else if constexpr (std::is_integral_v<Value> && sizeof(Value) <= sizeof(int))
        sqlite3_bind_int(statement, index, value);
    else if constexpr (std::is_integral_v<Value>)
        sqlite3_bind_int64(statement, index, value);
    else
        bind_text(statement, index, std::string_view(value));
}

// Binds the values to consecutive parameters from `first` (1 for the first), each by its type
// as bind_value does, so a row's binding reads as the list of its columns.
template <typename... Values>
void bind_values(sqlite3_stmt* statement, int first, const Values&... values) {
    int index = first;
    (bind_value(statement, index++, values), ...);
}

// Reads column `column` into `field` by the field's type, the converse of bind_value: NULL is an
// empty optional, NULL text an empty string; a number column holding anything else, NULL
// included, is refused as corrupt (integer_cell, number_cell).
template <typename Field>
void read_column(sqlite3_stmt* row, int column, Field& field) {
    if constexpr (std::is_same_v<Field, std::optional<std::int64_t>>)
        field = column_optional_int64(row, column);
    else if constexpr (std::is_same_v<Field, std::optional<double>>)
        field = column_optional_double(row, column);
    else if constexpr (std::is_floating_point_v<Field>)
        field = number_cell(row, column);
    else if constexpr (std::is_enum_v<Field> || std::is_integral_v<Field>)
        field = static_cast<Field>(integer_cell(row, column));
    else
        field = column_text(row, column);
}

// Reads consecutive columns from `first` (0 for the first) into the fields, each by its type as
// read_column does.
template <typename... Fields>
void read_columns(sqlite3_stmt* row, int first, Fields&... fields) {
    int column = first;
    (read_column(row, column++, fields), ...);
}

}  // namespace pipelens::traces::detail
