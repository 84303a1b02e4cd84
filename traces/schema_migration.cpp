// Creating and upgrading a trace's schema (see schema_migration.hpp).
#include "traces/schema_migration.hpp"

#include <string>

#include <fmt/format.h>

#include "traces/schema.hpp"
#include "traces/sqlite_handle.hpp"
#include "traces/trace_reader.hpp"

#ifndef PIPELENS_VERSION
#define PIPELENS_VERSION "unknown"
#endif

namespace pipelens::traces::detail {

void create_schema(sqlite3* connection, const std::filesystem::path& path,
                   std::int64_t created_at_ns) {
    std::string schema(schema_sql());  // sqlite3_exec wants a terminated string
    execute(connection, path, schema.c_str(), "cannot create the trace schema");
    Statement insert_meta = prepare(connection, path, "INSERT INTO meta (key, value) VALUES (?, ?)",
                                    "cannot create the trace schema");
    const std::string values[][2] = {
        {"schema_version", std::to_string(kSchemaVersion)},
        {"application", "pipelens"},
        {"writer", "pipelens " PIPELENS_VERSION},
        {"created_at_ns", std::to_string(created_at_ns)},
    };
    for (const auto& [key, value] : values) {
        bind_text(insert_meta.get(), 1, key);
        bind_text(insert_meta.get(), 2, value);
        step_to_done(insert_meta.get(), path, "cannot create the trace schema");
    }
}

void upgrade_schema(sqlite3* connection, const std::filesystem::path& path, int version) {
    const std::string statements = schema_sql_since(version);
    const std::string doing =
        fmt::format("cannot bring the trace from schema version {} to {}", version, kSchemaVersion);
    execute(connection, path, statements.c_str(), doing);
    Statement update =
        prepare(connection, path, "UPDATE meta SET value = ? WHERE key = 'schema_version'", doing);
    bind_text(update.get(), 1, std::to_string(kSchemaVersion));
    step_to_done(update.get(), path, doing);
}

}  // namespace pipelens::traces::detail
