// SQL run on a trace file the way a user would with the sqlite3 shell, for tests that tamper
// with a recorded trace or look at what it holds.
#pragma once

#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <sqlite3.h>

namespace pipelens::testing {

// Returns how many rows the statement changed.
inline int edit_trace(const std::filesystem::path& path, const std::string& sql) {
    sqlite3* connection = nullptr;
    EXPECT_EQ(sqlite3_open(path.c_str(), &connection), SQLITE_OK);
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(connection, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
        << (error != nullptr ? error : "");
    sqlite3_free(error);
    const int changed = sqlite3_changes(connection);
    sqlite3_close(connection);
    return changed;
}

// The first row of a query, columns joined with '|' as the sqlite3 shell prints them.
inline std::string query_trace(const std::filesystem::path& path, const std::string& sql) {
    sqlite3* connection = nullptr;
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &connection, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* statement = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(connection, sql.c_str(), -1, &statement, nullptr), SQLITE_OK)
        << sqlite3_errmsg(connection);
    std::string row = "<no row>";
    if (statement != nullptr && sqlite3_step(statement) == SQLITE_ROW) {
        row.clear();
        for (int column = 0; column < sqlite3_column_count(statement); ++column) {
            const unsigned char* text = sqlite3_column_text(statement, column);
            if (column > 0)
                row += '|';
            row += text != nullptr ? reinterpret_cast<const char*>(text) : "NULL";
        }
    }
    sqlite3_finalize(statement);
    sqlite3_close(connection);
    return row;
}

}  // namespace pipelens::testing
