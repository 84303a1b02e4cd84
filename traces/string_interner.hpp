// The writer's mirror of a trace's `strings` table (internal to traces/): interning a text is a
// hash lookup, and only a text the file does not hold yet costs an INSERT.
//
// Invariants: between load()s the mirror holds exactly the ids the file had plus those intern()
// added, so a text always gets the id the file gives it; a miss inserts with INSERT OR IGNORE
// and reads the id back if the text was there after all (only another writer can have added
// it). After SQLite rolls a transaction back the ids it handed out are gone: the owner load()s
// again.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "traces/sqlite_handle.hpp"

namespace pipelens::traces::detail {

class StringInterner {
  public:
    // The connection and path must outlive every later call.
    void attach(sqlite3* connection, const std::filesystem::path& path);
    // Reads the whole `strings` table into the mirror, replacing what it held.
    void load();
    // Prepares the statements that add texts; the schema must exist.
    void prepare();
    // The text's id in `strings`, added to the table (in the open transaction) when new.
    std::int64_t intern(const std::string& text);

  private:
    // Lets the map be searched with a string_view, so a hit costs no allocation.
    struct TextHash {
        using is_transparent = void;
        std::size_t operator()(std::string_view text) const noexcept {
            return std::hash<std::string_view>{}(text);
        }
    };

    std::int64_t store(const std::string& text);

    sqlite3* connection_ = nullptr;
    const std::filesystem::path* path_ = nullptr;
    Statement insert_;
    Statement select_;
    std::unordered_map<std::string, std::int64_t, TextHash, std::equal_to<>> ids_;
    // The most recently interned text (a key of `ids_`; node keys never move): consecutive rows
    // often repeat a label, and then not even a hash is needed.
    const std::string* last_text_ = nullptr;
    std::int64_t last_id_ = 0;
};

}  // namespace pipelens::traces::detail
