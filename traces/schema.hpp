// The trace schema (traces/schema.sql) as compiled into the library, so creating a trace never
// looks for a file at run time. TraceWriter executes it on a new file; tests and benchmarks use
// it to build files with exactly the same tables and indexes.
#pragma once

#include <string_view>

namespace pipelens::traces {

// The full text of traces/schema.sql: several SQL statements, for sqlite3_exec.
std::string_view schema_sql();

}  // namespace pipelens::traces
