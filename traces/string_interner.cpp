// Interning a writer's strings (see string_interner.hpp).
#include "traces/string_interner.hpp"

#include <fmt/format.h>

namespace pipelens::traces::detail {

void StringInterner::attach(sqlite3* connection, const std::filesystem::path& path) {
    connection_ = connection;
    path_ = &path;
}

void StringInterner::load() {
    ids_.clear();
    last_text_ = nullptr;
    Statement select = detail::prepare(connection_, *path_, "SELECT id, text FROM strings",
                                       "cannot load the trace's strings");
    int code;
    while ((code = sqlite3_step(select.get())) == SQLITE_ROW)
        ids_.emplace(column_text(select.get(), 1), sqlite3_column_int64(select.get(), 0));
    if (code != SQLITE_DONE)
        throw_sqlite_error(*path_, "cannot load the trace's strings", connection_, code);
}

void StringInterner::prepare() {
    insert_ =
        detail::prepare(connection_, *path_, "INSERT OR IGNORE INTO strings (text) VALUES (?)",
                        "cannot prepare trace statements", true);
    select_ = detail::prepare(connection_, *path_, "SELECT id FROM strings WHERE text = ?",
                              "cannot prepare trace statements", true);
}

std::int64_t StringInterner::intern(const std::string& text) {
    if (last_text_ != nullptr && *last_text_ == text)
        return last_id_;
    auto found = ids_.find(std::string_view(text));
    if (found == ids_.end())
        found = ids_.emplace(text, store(text)).first;
    last_text_ = &found->first;
    last_id_ = found->second;
    return found->second;
}

std::int64_t StringInterner::store(const std::string& text) {
    auto doing = [&] { return fmt::format("cannot store the string '{}'", text); };
    bind_text(insert_.get(), 1, text);
    step_once(insert_.get(), *path_, doing);
    if (sqlite3_changes(connection_) == 1)
        return sqlite3_last_insert_rowid(connection_);
    sqlite3_stmt* select = select_.get();
    bind_text(select, 1, text);
    int code = sqlite3_step(select);
    if (code != SQLITE_ROW) {
        std::string message = sqlite_error_message(*path_, doing(), connection_,
                                                   code == SQLITE_DONE ? SQLITE_CORRUPT : code);
        sqlite3_reset(select);
        throw TraceError(message);
    }
    std::int64_t id = sqlite3_column_int64(select, 0);
    sqlite3_reset(select);
    return id;
}

}  // namespace pipelens::traces::detail
