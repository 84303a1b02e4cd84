// Recognising a pipelens trace. A first query is run at once because SQLite opens any file
// lazily: a text file or random bytes only show as "file is not a database" when the schema is
// first read, and a truncated file as "database disk image is malformed". Each failure is named
// by what the user has in hand (not a database, someone else's database, a newer trace, a
// damaged trace), not by SQLite's error code.
#include "traces/trace_file_checks.hpp"

#include <charconv>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "traces/sqlite_handle.hpp"
#include "traces/trace_reader.hpp"

namespace pipelens::traces::detail {
namespace {

// A failure of the first reads, translated into what it says about the file.
[[noreturn]] void throw_unreadable(sqlite3* connection, const std::filesystem::path& path,
                                   int code) {
    switch (code & 0xff) {
        case SQLITE_NOTADB:
            throw_trace_error(path, "not an SQLite database (it is some other kind of file)");
        case SQLITE_CORRUPT:
            throw_trace_error(path, fmt::format("trace is corrupt: {}", sqlite3_errstr(code)));
        default:
            throw_sqlite_error(path, "cannot read trace", connection, code);
    }
}

Statement prepare_first(sqlite3* connection, const std::filesystem::path& path, const char* sql) {
    sqlite3_stmt* raw = nullptr;
    int code = sqlite3_prepare_v2(connection, sql, -1, &raw, nullptr);
    Statement statement(raw);
    if (code != SQLITE_OK)
        throw_unreadable(connection, path, code);
    return statement;
}

std::optional<std::string> meta_value(sqlite3_stmt* lookup, sqlite3* connection,
                                      const std::filesystem::path& path, const char* key) {
    sqlite3_reset(lookup);
    sqlite3_bind_text(lookup, 1, key, -1, SQLITE_STATIC);
    int code = sqlite3_step(lookup);
    if (code == SQLITE_DONE)
        return std::nullopt;
    if (code != SQLITE_ROW)
        throw_unreadable(connection, path, code);
    return column_text(lookup, 0);
}

}  // namespace

PathState examine_trace_path(const std::filesystem::path& path) {
    // SQLite would open a temporary database for an empty name.
    if (path.empty())
        throw TraceError("no trace file given (the path is empty)");
    std::error_code error;
    std::filesystem::file_status status = std::filesystem::status(path, error);
    if (error && error != std::errc::no_such_file_or_directory &&
        error != std::errc::not_a_directory)
        throw_trace_error(path, fmt::format("cannot access the file: {}", error.message()));
    if (!std::filesystem::exists(status))
        return PathState::missing;
    if (std::filesystem::is_directory(status))
        throw_trace_error(path, "is a directory, not a trace file");
    if (!std::filesystem::is_regular_file(status))
        throw_trace_error(path, "is not a regular file, so it cannot be a trace");
    std::uintmax_t size = std::filesystem::file_size(path, error);
    if (error)
        throw_trace_error(path, fmt::format("cannot access the file: {}", error.message()));
    return size == 0 ? PathState::empty_file : PathState::nonempty_file;
}

std::optional<int> check_trace_identity(sqlite3* connection, const std::filesystem::path& path) {
    Statement tables =
        prepare_first(connection, path, "SELECT name FROM sqlite_master WHERE type = 'table'");
    int table_count = 0;
    bool has_meta = false;
    int code;
    while ((code = sqlite3_step(tables.get())) == SQLITE_ROW) {
        ++table_count;
        if (column_text(tables.get(), 0) == "meta")
            has_meta = true;
    }
    if (code != SQLITE_DONE)
        throw_unreadable(connection, path, code);
    if (table_count == 0)
        return std::nullopt;
    if (!has_meta)
        throw_trace_error(path, "not a pipelens trace (no meta table)");

    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(connection, "SELECT value FROM meta WHERE key = ?", -1, &raw, nullptr) !=
        SQLITE_OK) {
        sqlite3_finalize(raw);
        throw_trace_error(path, "not a pipelens trace (its meta table has no key/value columns)");
    }
    Statement lookup(raw);
    std::optional<std::string> application =
        meta_value(lookup.get(), connection, path, "application");
    if (!application)
        throw_trace_error(path, "not a pipelens trace (meta has no application)");
    if (*application != "pipelens")
        throw_trace_error(
            path, fmt::format("not a pipelens trace (meta application is '{}')", *application));
    std::optional<std::string> version_text =
        meta_value(lookup.get(), connection, path, "schema_version");
    if (!version_text)
        throw_trace_error(path, "not a pipelens trace (meta has no schema_version)");

    int version = 0;
    const char* begin = version_text->data();
    const char* end = begin + version_text->size();
    auto [parsed_end, parse_error] = std::from_chars(begin, end, version);
    if (parse_error != std::errc() || parsed_end != end)
        throw_trace_error(path,
                          fmt::format("trace schema version '{}' is not a number", *version_text));
    if (version > kSchemaVersion)
        throw_trace_error(path, fmt::format("trace schema version {} is newer than this pipelens "
                                            "supports ({}); upgrade pipelens",
                                            version, kSchemaVersion));
    if (version < 1)
        throw_trace_error(path, fmt::format("trace schema version {} is not valid (versions start "
                                            "at 1)",
                                            version));
    return version;
}

void check_trace_integrity(sqlite3* connection, const std::filesystem::path& path) {
    Statement check = prepare_first(connection, path, "PRAGMA quick_check");
    int code = sqlite3_step(check.get());
    if (code != SQLITE_ROW)
        throw_unreadable(connection, path, code);
    std::string first = column_text(check.get(), 0);
    if (first == "ok")
        return;
    int more = 0;
    while ((code = sqlite3_step(check.get())) == SQLITE_ROW)
        ++more;
    if (more == 0)
        throw_trace_error(path, fmt::format("trace is corrupt: {}", first));
    throw_trace_error(path, fmt::format("trace is corrupt: {} (and {} more problem{})", first, more,
                                        more == 1 ? "" : "s"));
}

}  // namespace pipelens::traces::detail
