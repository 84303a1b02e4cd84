// The checks that decide whether a file is a pipelens trace this build can use (internal to
// traces/). TraceReader and TraceWriter share them, so both refuse the same files with the same
// one-line messages, in the same order: the path, then SQLite's format, then pipelens' meta
// table and schema version, then the integrity of the pages.
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <optional>

namespace pipelens::traces::detail {

enum class PathState { missing, empty_file, nonempty_file };

// Looks at `path` before SQLite does. Throws TraceError for a directory, a device or socket, or
// a path that cannot be examined; reports a missing path or an empty file to the caller, since
// the writer creates a trace there and the reader refuses it.
PathState examine_trace_path(const std::filesystem::path& path);

// The first queries on a new connection. Throws TraceError when the file is not an SQLite
// database, is damaged where SQLite reads first, is some other application's database, or has a
// schema version outside 1..kSchemaVersion. Returns nullopt for an SQLite database that has no
// tables at all (a file SQLite created but nobody filled), else the trace's schema version.
std::optional<int> check_trace_identity(sqlite3* connection, const std::filesystem::path& path);

// PRAGMA quick_check: every page and index entry is well formed (it skips only the costly
// cross-check of index contents against tables). Throws "trace is corrupt: <first problem>".
void check_trace_integrity(sqlite3* connection, const std::filesystem::path& path);

}  // namespace pipelens::traces::detail
