// Sharding decisions recorded as a run of their own (kind simulated, schedule "sharding"), the
// form `pipelens shard --out` and `pipelens plan --out` both write and the viewer's sharding
// panel reads: one row per decision, in order, and each choice as a state event so a replay
// rebuilds it.
//
// Invariants: rows are numbered 0.. in the order of `decisions`; row i's `chosen` indexes its
// strategies list and its state event names the same op and spec; the run is finished even with
// no decisions, so a reader never sees it as unfinished.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/sharding/sharding_propagation.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::run_record {

// Returns the new run's id. `config` is the run's JSON configuration (what was propagated).
std::int64_t record_sharding_run(traces::TraceWriter& writer, const sharding::DeviceMesh& mesh,
                                 const std::vector<sharding::ShardingDecision>& decisions,
                                 const std::string& config);

}  // namespace pipelens::run_record
