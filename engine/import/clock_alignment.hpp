// Putting the ranks of an imported run on one clock. Each rank's file carries its own
// timestamps (wall clock since the epoch: equal on one host, off by the hosts' clock difference
// otherwise). Every matched transfer bounds the difference: a RECV cannot end before its SEND
// started. align_clocks shifts ranks by the least that satisfies every such bound (a longest-
// path relaxation over the ranks) and reports what it moved: the residual of the files' own
// clocks.
//
// Invariant after alignment: for every linked SEND/RECV pair, recv end >= send start; rank 0
// (and every rank whose bounds already held) keeps its times.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/import/imported_run.hpp"

namespace pipelens::import {

struct ClockAlignment {
    std::vector<std::int64_t> shift_ns;     // added to each rank's times
    std::int64_t largest_violation_ns = 0;  // worst "recv ended before send started" before
    int pairs_used = 0;
    bool consistent = true;  // false: the bounds contradict each other (clocks drifted)
};

// `run.schedule` must have its SEND/RECV linked (link_send_recv_pairs). Shifts run.timings and
// memory in place, sets run.clocks to each rank's shift with the violation as uncertainty.
ClockAlignment align_clocks(ImportedRun& run);

// What an alignment did, as a run's note ("clocks: ..."): the files' own times kept, ranks
// shifted (by how much at worst), or no one offset per rank fitting (drift).
std::string clock_alignment_note(const ClockAlignment& clocks);

// A duration as the import notes give it: "1.234 ms" from a millisecond, else "12.3 us".
std::string duration_text(std::int64_t ns);

}  // namespace pipelens::import
