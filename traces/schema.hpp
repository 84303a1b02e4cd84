// The trace schema (traces/schema.sql) as compiled into the library, so creating a trace never
// looks for a file at run time. TraceWriter executes it on a new file; tests and benchmarks use
// it to build files with exactly the same tables and indexes.
//
// Invariant: schema.sql is the whole current schema; what version N added follows a line
// `-- @since N`, so the same text both creates a new file and brings an older one up to date.
#pragma once

#include <string>
#include <string_view>

namespace pipelens::traces {

// The full text of traces/schema.sql: several SQL statements, for sqlite3_exec.
std::string_view schema_sql();

// The statements a file of schema version `version` lacks: the `-- @since N` sections with
// N > version, in order. Empty when the file is current.
std::string schema_sql_since(int version);

}  // namespace pipelens::traces
