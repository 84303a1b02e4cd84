// Turning SQLite failures into one-line TraceErrors. SQLite's own wording ("database is locked")
// is kept, since users search for it, and a hint is added for the failures a user can fix.
#include "traces/sqlite_handle.hpp"

#include <fmt/format.h>

namespace pipelens::traces::detail {
namespace {

std::string_view hint_for(int code) {
    switch (code) {
        case SQLITE_READONLY_ROLLBACK:
        case SQLITE_READONLY_RECOVERY:
        case SQLITE_READONLY_CANTINIT:
        case SQLITE_READONLY_CANTLOCK:
            // A writer died and left a journal or WAL index to repair, which needs write access.
            return "a writer was interrupted and the file needs recovery, which a read-only open "
                   "cannot do; open it once with write access, e.g. with the sqlite3 shell";
        default:
            break;
    }
    switch (code & 0xff) {
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
            return "another pipelens process is writing it";
        case SQLITE_READONLY:
            return "the file or its directory is read-only";
        case SQLITE_CANTOPEN:
            return "check that the directory exists and is writable";
        case SQLITE_FULL:
            return "the disk is full";
        default:
            return {};
    }
}

}  // namespace

std::string trace_message(const std::filesystem::path& path, std::string_view what) {
    std::string message = fmt::format("{}: {}", path.string(), what);
    // A message that spans lines breaks log parsers and the CLI's one-line error format.
    std::string folded;
    folded.reserve(message.size());
    for (char character : message) {
        if (character == '\r')
            continue;
        if (character == '\n')
            folded += "; ";
        else
            folded += character;
    }
    while (!folded.empty() && (folded.back() == ' ' || folded.back() == ';'))
        folded.pop_back();
    return folded;
}

void throw_trace_error(const std::filesystem::path& path, std::string_view what) {
    throw TraceError(trace_message(path, what));
}

void throw_cell_type_error(sqlite3_stmt* row, int column, std::string_view wanted) {
    const char* file = sqlite3_db_filename(sqlite3_db_handle(row), "main");
    const char* table = sqlite3_column_table_name(row, column);
    const char* name = sqlite3_column_origin_name(row, column);
    if (name == nullptr)
        name = sqlite3_column_name(row, column);
    const std::string where =
        table != nullptr ? fmt::format("{}.{}", table, name) : std::string(name ? name : "?");
    std::string found;
    switch (sqlite3_column_type(row, column)) {
        case SQLITE_NULL:
            found = "NULL";
            break;
        case SQLITE_FLOAT:
            found = fmt::format("the real number {}", sqlite3_column_double(row, column));
            break;
        case SQLITE_BLOB:
            found = fmt::format("a blob ({} bytes)", sqlite3_column_bytes(row, column));
            break;
        default: {
            std::string text = column_text(row, column);
            if (text.size() > 40)
                text = text.substr(0, 40) + "...";
            found = fmt::format("the text '{}'", text);
        }
    }
    std::string problem = fmt::format("{} holds {} where {} belongs", where, found, wanted);
    throw CorruptCell(trace_message(file != nullptr ? file : "trace",
                                    fmt::format("trace is corrupt: {}", problem)),
                      problem);
}

std::string sqlite_error_message(const std::filesystem::path& path, std::string_view doing,
                                 sqlite3* connection, int code) {
    // The connection's message describes its most recent failure, which is this one unless the
    // caller passed a code from elsewhere; fall back to the generic text for the code.
    std::string reason = sqlite3_errstr(code);
    if (connection != nullptr && (sqlite3_errcode(connection) & 0xff) == (code & 0xff))
        reason = sqlite3_errmsg(connection);
    std::string_view hint = hint_for(code);
    if (hint.empty())
        return trace_message(path, fmt::format("{}: {}", doing, reason));
    return trace_message(path, fmt::format("{}: {} ({})", doing, reason, hint));
}

void throw_sqlite_error(const std::filesystem::path& path, std::string_view doing,
                        sqlite3* connection, int code) {
    throw TraceError(sqlite_error_message(path, doing, connection, code));
}

Connection open_connection(const std::filesystem::path& path, int flags, std::string_view doing) {
    sqlite3* raw = nullptr;
    int code = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
    // sqlite3_open_v2 hands back a handle even on failure; it carries the error and must be
    // closed, which the owning pointer does whichever way this returns.
    Connection connection(raw);
    if (code != SQLITE_OK)
        throw_sqlite_error(path, doing, connection.get(), code);
    sqlite3_extended_result_codes(connection.get(), 1);
    return connection;
}

Statement prepare(sqlite3* connection, const std::filesystem::path& path, std::string_view sql,
                  std::string_view doing, bool persistent) {
    sqlite3_stmt* raw = nullptr;
    int code = sqlite3_prepare_v3(connection, sql.data(), static_cast<int>(sql.size()),
                                  persistent ? SQLITE_PREPARE_PERSISTENT : 0, &raw, nullptr);
    Statement statement(raw);
    if (code != SQLITE_OK)
        throw_sqlite_error(path, doing, connection, code);
    return statement;
}

void execute(sqlite3* connection, const std::filesystem::path& path, const char* sql,
             std::string_view doing) {
    int code = sqlite3_exec(connection, sql, nullptr, nullptr, nullptr);
    if (code != SQLITE_OK)
        throw_sqlite_error(path, doing, connection, code);
}

void step_to_done(sqlite3_stmt* statement, const std::filesystem::path& path,
                  std::string_view doing) {
    int code;
    while ((code = sqlite3_step(statement)) == SQLITE_ROW) {
    }
    if (code != SQLITE_DONE) {
        // Take the message before the reset, which may replace the connection's error text.
        std::string message = sqlite_error_message(path, doing, sqlite3_db_handle(statement), code);
        sqlite3_reset(statement);
        throw TraceError(message);
    }
    sqlite3_reset(statement);
}

std::optional<std::string> query_text(sqlite3* connection, const std::filesystem::path& path,
                                      const char* sql, std::string_view doing) {
    Statement statement = prepare(connection, path, sql, doing);
    int code = sqlite3_step(statement.get());
    if (code == SQLITE_DONE)
        return std::nullopt;
    if (code != SQLITE_ROW)
        throw_sqlite_error(path, doing, connection, code);
    return column_text(statement.get(), 0);
}

}  // namespace pipelens::traces::detail
