// Copies every run of one trace file into another: how `pipelens merge` joins the traces that
// the shards of a sweep (or any separate jobs) recorded.
//
// Invariants: the source is only read (opened read-only, checked to be a pipelens trace and
// whole); the runs arrive with new ids, in the source's order, with every row that belongs to
// them (any table with a run_id column, so a table added later is copied without change here)
// and their text re-interned in the destination's `strings`; all of a source's runs land in one
// transaction, so a failure leaves the destination as it was. A source of an older schema is
// first copied (VACUUM INTO) to a temporary file that a writer upgrades, so its rows arrive as
// the upgrade rewrites them (before version 8 a multi-step run shared its pairs among its
// steps); the source itself is never changed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

namespace pipelens::traces {

// The destination is created (or upgraded to the current schema) as a TraceWriter would.
// Returns the new ids, one per source run. Throws TraceError naming the file at fault.
std::vector<std::int64_t> copy_trace_runs(const std::filesystem::path& source,
                                          const std::filesystem::path& destination);

}  // namespace pipelens::traces
