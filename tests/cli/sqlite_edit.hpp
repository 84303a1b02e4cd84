// SQL run on a trace file the way a user would with the sqlite3 shell, for tests that tamper
// with a recorded trace or look at what it holds.
#pragma once

#include <filesystem>
#include <string>

#include "tests/raw_database.hpp"

namespace pipelens::testing {

// Returns how many rows the statement changed.
inline int edit_trace(const std::filesystem::path& path, const std::string& sql) {
    RawDatabase database(path);
    database.execute(sql);
    return database.changes();
}

// The first row of a query, columns joined with '|' as the sqlite3 shell prints them.
inline std::string query_trace(const std::filesystem::path& path, const std::string& sql) {
    return RawDatabase(path, SQLITE_OPEN_READONLY).value(sql);
}

}  // namespace pipelens::testing
