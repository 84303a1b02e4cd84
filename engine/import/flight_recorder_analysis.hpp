// What a set of flight-recorder dumps (one per rank) says about a hung or desynchronised job, as
// PyTorch's fr_trace (tools/flight_recorder) works it out, in pipelens' terms:
//  - per process group, collectives matched across its ranks by collective_seq_id: ranks that
//    never posted one ("missing_rank"), and type, dtype, size and state mismatches between the
//    ranks that did (fr_trace's MatchState; size rules per collective as fr_trace has them);
//  - an all_to_all every rank posted, checked over the group (elements sent = received);
//  - every send a->b matched to a recv b<-a by order within the pair and group, with size and
//    dtype checks; sends and recvs without a partner ("unmatched_send", "unmatched_recv"); where
//    either side's buffer wrapped, the two lists lined up at the last transfer each completed;
//  - per rank the last completed op and the first op not completed;
//  - for a hang, the chain of waits: rank X is stuck at op O and needs op P of rank Y; that is
//    followed through every rank that is itself stuck (one stuck before an op can never post
//    it) until a rank repeats (a cycle) or the holder is not stuck (it left no dump, completed
//    the op, or has nothing pending). It is the HangReport of engine/schedule/dry_run.hpp, so its
//    links read like `pipelens check`'s report;
//  - a rank with no side of an op that another rank completed (a transfer or collective cannot
//    complete without it) was dumped earlier: a note, not a finding. A retired Gloo op is no
//    proof of that (below): a Gloo collective a member has no entry of is a finding.
//
// Gloo dumps: fr_trace stops on them (their pg_config lists the group unnamed, see
// flight_recorder_dump.hpp; its Op also takes only nccl: and xccl: names); here they are read,
// a retired Gloo op counts as completed on its rank, and a note per rank says that only
// collectives are recorded, so a send or recv that never finished is not in the dump. Gloo's
// work loop retires an op whether it ran or failed (ProcessGroupGloo::runLoop retires after
// AsyncWork::execute, which catches the failure), so a retired op does not show that the rest of
// its group posted it: a member without it is reported missing (a possible hang), not put down
// to its dump being taken earlier, as a completed NCCL op, whose end event fired, is.
//
// Deliberate differences from fr_trace: every mismatch is reported (fr_trace stops pairing a
// group after its first); a rank without a dump is a note and a possible holder of a hang, not
// a refusal; a rank whose buffer wrapped (first record_id > 0) is not called missing from
// collectives older than its first one, and its transfers are lined up per pair of ranks
// (fr_trace drops every rank's entries older than the latest first record_id of any rank).
//
// Invariants: `steps` are indices into the rank's dump entries; a WaitLink's holder_step >= 0
// only when that op was posted and not completed on a rank that is itself stuck, so a cycle
// through an op never posted has wait_cycle set but HangReport::closes_cycle() false.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/import/flight_recorder_dump.hpp"
#include "engine/schedule/dry_run.hpp"

namespace pipelens::import {

struct FlightRecorderFinding {
    std::string kind;           // missing_rank, type_mismatch, size_mismatch, dtype_mismatch,
                                // state_mismatch, unmatched_send, unmatched_recv, hang
    std::string process_group;  // group name ("0"), empty when none applies
    std::int64_t seq_id = -1;   // collective_seq_id, or the p2p op's p2p_seq_id
    std::vector<int> ranks;     // the ranks concerned, ascending
    int rank = -1;              // the rank it is recorded against
    int step = -1;              // that rank's entry index, -1 when it never posted the op
    std::string action;         // that op's label, e.g. "nccl:send 0->1 (group 0, p2p seq 3)"
    std::string expected;
    std::string actual;
    std::string message;  // one line a user can act on: group, seq id, ranks, what differs
};

struct RankSummary {
    int rank = 0;
    std::string file;
    int ops = 0;                   // entries, not counting "coalesced" markers
    int completed = 0;             // of those
    int last_completed_step = -1;  // -1: none completed
    std::string last_completed;    // its label
    int first_pending_step = -1;   // first op not completed; -1: all completed
    std::string first_pending;     // its label and state
};

struct MatchedTransfer {
    int send_rank = 0;
    int send_step = 0;
    int recv_rank = 0;
    int recv_step = 0;
};

struct FlightRecorderReport {
    std::vector<RankSummary> ranks;               // by rank
    std::vector<FlightRecorderFinding> findings;  // collectives, then p2p, then hang links
    std::vector<MatchedTransfer> transfers;       // matched send/recv pairs
    HangReport hang_report;                       // empty cycle when no rank is stuck
    bool wait_cycle = false;                      // hang_report.cycle closes on its first rank
    std::string hang_headline;                    // "wait cycle rank 1 -> rank 3 -> rank 1"
    std::vector<std::string> notes;               // limits of what the dumps can tell
    bool hang = false;                            // some rank has an op that did not complete
    bool mismatch = false;  // ranks disagree on a collective or transfer (type, size, dtype)
    std::string text() const;
};

// An op's label: profiling name, group and sequence id.
std::string op_label(const FlightRecorderEntry& entry);

// What a hang comes to, for the report's headline: "wait cycle rank 1 -> rank 3 -> rank 1", or
// the chain and where it ends ("wait chain rank 0 -> rank 1 -> rank 2, which left no dump").
// `held`: the chain's last holder keeps its rank waiting (it did not complete the op);
// `holder_dumped`: that holder left a dump.
std::string hang_headline(const std::vector<WaitLink>& chain, bool cycle, bool held,
                          bool holder_dumped);

// Each entry's state, where an op inside a coalesced batch takes the state of the batch's
// closing "coalesced" entry (PyTorch records the batch's progress only there), and a retired
// Gloo op is completed (Gloo leaves every entry "scheduled" and retires it once it has run,
// or failed).
std::vector<EntryState> effective_states(const FlightRecorderDump& dump);

// `dumps` as read_flight_recorder_dumps returns them (one per rank).
FlightRecorderReport analyse_flight_recorder(const std::vector<FlightRecorderDump>& dumps);

}  // namespace pipelens::import
