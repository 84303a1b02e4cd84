// Giving a trace file its tables (internal to traces/): the whole schema with pipelens' meta rows
// for a new file, or the sections a file of an older version lacks. Both run inside the writer's
// open transaction, so a file gets all of a change or none of it.
//
// Invariant: what a new file is created with and what an upgraded file ends up with are the same
// statements (traces/schema.sql, cut at its `-- @since N` lines), so the two cannot drift apart.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>

namespace pipelens::traces::detail {

// Creates every table and index and writes the meta rows (schema version, application, writer,
// creation time).
void create_schema(sqlite3* connection, const std::filesystem::path& path,
                   std::int64_t created_at_ns);

// Adds what schema versions after `version` brought, and records the current version.
void upgrade_schema(sqlite3* connection, const std::filesystem::path& path, int version);

}  // namespace pipelens::traces::detail
