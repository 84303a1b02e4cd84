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

// How many RECVs of the trace end before their SEND began (a real run should have none).
inline std::string receives_ending_before_their_send(const std::filesystem::path& path) {
    return query_trace(path,
                       "SELECT count(*) FROM actions s JOIN actions r ON r.run_id = s.run_id "
                       "AND r.pair_id = s.pair_id AND s.pair_id >= 0 AND s.kind IN (4, 6) AND "
                       "r.kind IN (5, 7) WHERE r.end_ns < s.start_ns");
}

}  // namespace pipelens::testing
