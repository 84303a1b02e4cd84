// Recording flight-recorder dumps as a pipelens run: kind `real`, schedule "flight-recorder",
// pp = the highest rank + 1, one communication-lane action per recorded op (the closing
// "coalesced" entry of a batch is not an op of its own and is left out), a pair per matched
// send/recv, and every finding of the analysis as an error row.
//
// The trace's action kinds are pipeline kinds; dumps know nothing of stages or microbatches, so:
//  - send  -> SEND_F, recv -> RECV_F, with `stage` = the peer's global rank and `microbatch` =
//    the op's p2p_seq_id (so "1SEND_F3" reads "to rank 1, p2p #3");
//  - collectives -> UNSHARD for the all-gather family and broadcast, REDUCE_GRAD for the rest
//    (all_reduce, reduce_scatter, all_to_all, ...), with `stage` = the process group's pg_id and
//    `microbatch` = collective_seq_id.
// `step` is the entry's index in the rank's dump, so error rows and the hang report point at the
// same ops. Times: start = time_created_ns, end = time_discovered_completed_ns for a completed
// op; an op that did not complete runs to the latest time any dump recorded, and its hang row
// carries its start (time_discovered_started_ns, else time_created_ns) in `started_ns`. All
// times are shifted so the earliest time_created_ns is 0. Bytes: elements x dtype size of the
// inputs (a recv: its outputs).
//
// Invariant: nothing is read or analysed here, so callers read every file and analyse first,
// and an unreadable input writes nothing. The run is `failed` (with the first finding's
// message) when the report shows a hang or a mismatch, `finished` otherwise.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/import/flight_recorder_analysis.hpp"
#include "engine/import/flight_recorder_dump.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::import {

std::int64_t record_flight_recorder(traces::TraceWriter& writer,
                                    const std::vector<FlightRecorderDump>& dumps,
                                    const FlightRecorderReport& report);

}  // namespace pipelens::import
