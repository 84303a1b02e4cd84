// Raw SQLite access to a trace file, as a user with the sqlite3 shell has it: tests look at
// what a file holds, tamper with it, or build one as an older pipelens would have.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>
#include <vector>

namespace pipelens::testing {

// Raw SQLite access, to look at the file the way a user with the sqlite3 shell would.
class RawDatabase {
  public:
    explicit RawDatabase(const std::filesystem::path& path, int flags = SQLITE_OPEN_READWRITE) {
        EXPECT_EQ(sqlite3_open_v2(path.c_str(), &connection_, flags, nullptr), SQLITE_OK);
    }
    ~RawDatabase() { sqlite3_close_v2(connection_); }
    RawDatabase(const RawDatabase&) = delete;
    RawDatabase& operator=(const RawDatabase&) = delete;

    void execute(const std::string& sql) {
        char* error = nullptr;
        EXPECT_EQ(sqlite3_exec(connection_, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
            << (error != nullptr ? error : "") << " in " << sql;
        sqlite3_free(error);
    }
    // Rows changed by the last statement `execute` ran.
    int changes() const { return sqlite3_changes(connection_); }
    // The rows of `sql`, each row's columns joined with '|', as the sqlite3 shell prints them.
    std::vector<std::string> rows(const std::string& sql) {
        sqlite3_stmt* statement = nullptr;
        EXPECT_EQ(sqlite3_prepare_v2(connection_, sql.c_str(), -1, &statement, nullptr), SQLITE_OK)
            << sqlite3_errmsg(connection_);
        std::vector<std::string> result;
        while (statement != nullptr && sqlite3_step(statement) == SQLITE_ROW) {
            std::string row;
            for (int column = 0; column < sqlite3_column_count(statement); ++column) {
                if (column > 0)
                    row += '|';
                const unsigned char* text = sqlite3_column_text(statement, column);
                row += text != nullptr ? reinterpret_cast<const char*>(text) : "NULL";
            }
            result.push_back(row);
        }
        sqlite3_finalize(statement);
        return result;
    }
    std::string value(const std::string& sql) {
        std::vector<std::string> all = rows(sql);
        return all.empty() ? std::string("<no row>") : all.front();
    }

  private:
    sqlite3* connection_ = nullptr;
};

}  // namespace pipelens::testing
