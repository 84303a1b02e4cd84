// What two flight-recorder entries must agree on (internal to engine/import): PyTorch fr_trace's
// rules for a collective seen on two ranks of its group (types.py, Op.match) and for a send and
// the recv it is matched with, plus the small facts about an entry the analysis needs.
//
// Invariants: a collective's type is compared first, then its sizes (by the collective's own
// rule), then its dtypes, and its state last, as fr_trace's Op.match orders them; only the first
// difference is returned. Element counts saturate instead of
// overflowing, so a crafted dump cannot turn a mismatch into a match.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "engine/import/flight_recorder_dump.hpp"

namespace pipelens::import {

// How two entries differ: the finding's kind (type_mismatch, size_mismatch, dtype_mismatch,
// state_mismatch), what the reference has, what the other has, and what was compared.
struct OpDifference {
    std::string kind;
    std::string expected;
    std::string actual;
    std::string what;
};

// The entry PyTorch records after a batch of ops ("coalesced", or since 2.7 "ALLGATHER_coalesced"
// and the like), not an op itself.
bool is_marker(const FlightRecorderEntry& entry);
bool is_collective(const FlightRecorderEntry& entry);

// Gloo's entries ("gloo:all_reduce"): Gloo records no device events, so an entry stays
// "scheduled", and its work loop retires it once the work has run, whether it succeeded or
// failed (timed out waiting for a peer): `retired` says the op is over on this rank, not that
// every member of its group took part.
bool is_gloo(const FlightRecorderEntry& entry);

// The note a Gloo rank's dump gets ("" for another backend's): what it cannot show.
std::string gloo_dump_note(const FlightRecorderDump& dump);

// What a collective that ranks `absent` never posted means when `posted` is a Gloo op: appended
// to the missing-rank finding ("" for another backend).
std::string gloo_missing_caveat(const FlightRecorderEntry& posted, const std::vector<int>& absent);

// The op a transfer's other side posts: "nccl:send 0->1" pairs with "nccl:recv 1<-0".
std::string partner_name(const FlightRecorderEntry& entry);

// `other` against `ref`, the same collective (group and seq id) on another rank of a group of
// `group_size` ranks.
std::optional<OpDifference> compare_collective(const FlightRecorderEntry& ref, EntryState ref_state,
                                               const FlightRecorderEntry& other,
                                               EntryState other_state, std::size_t group_size);

// An all_to_all posted by every rank of its group (`entries`, one a rank): the total elements
// sent must equal the total received. fr_trace cannot decide all_to_all sizes pairwise.
std::optional<OpDifference> compare_all_to_all_totals(
    const std::vector<const FlightRecorderEntry*>& entries);

// Whether a dump of `version` records all_to_all sizes: from 2.4 on (fr_trace leaves them
// unchecked before).
bool records_all_to_all_sizes(const std::string& version);

// A send against the recv matched with it: the sizes, then the dtypes where both record them.
std::optional<OpDifference> compare_transfer(const FlightRecorderEntry& send,
                                             const FlightRecorderEntry& recv);

}  // namespace pipelens::import
