// A flight-recorder analysis in words (flight_recorder_analysis.hpp): op labels, the headline of
// a hang and the report a user reads. Kept apart from the matching so that what is found and how
// it is said can change independently.
//
// Invariants: every line names ranks, groups and sequence ids as the dumps record them; the
// hang's links are worded by HangReport::text, so they read as `pipelens check`'s.
#include <fmt/format.h>

#include "engine/import/flight_recorder_analysis.hpp"

namespace pipelens::import {
namespace {

// A cycle in which each rank's needed op is the very op the next rank is stuck at: nobody waits
// for an op still to be posted; they all sit in one transfer or collective that never finishes.
bool posted_on_both_sides(const HangReport& hang) {
    if (!hang.closes_cycle())
        return false;
    for (std::size_t i = 0; i < hang.cycle.size(); ++i)
        if (hang.cycle[i].holder_step != hang.cycle[(i + 1) % hang.cycle.size()].step)
            return false;
    return true;
}

// Where a chain that is no cycle ends: the holder that is not stuck, or the op itself.
std::string chain_end(const WaitLink& link, bool held, bool holder_dumped) {
    if (link.holder_rank < 0)
        return fmt::format(
            ": rank {}'s op is stuck itself (every other rank of its group "
            "completed it)",
            link.rank);
    if (!held)
        return fmt::format(
            ": rank {} completed the op rank {} needs, so the op is stuck on rank "
            "{}'s side",
            link.holder_rank, link.rank, link.rank);
    if (!holder_dumped)
        return fmt::format(" -> rank {}, which left no dump", link.holder_rank);
    return fmt::format(
        " -> rank {}, which never posted the op rank {} needs and is not stuck "
        "(was its dump taken earlier?)",
        link.holder_rank, link.rank);
}

}  // namespace

std::string op_label(const FlightRecorderEntry& entry) {
    if (entry.op.is_p2p())
        return fmt::format("{} [pg {}, p2p #{}]", entry.profiling_name, entry.pg_name,
                           entry.p2p_seq_id);
    return fmt::format("{} [pg {}, #{}]", entry.profiling_name, entry.pg_name,
                       entry.collective_seq_id);
}

std::string hang_headline(const std::vector<WaitLink>& chain, bool cycle, bool held,
                          bool holder_dumped) {
    std::string ranks;
    for (const WaitLink& link : chain)
        ranks += fmt::format("{}rank {}", ranks.empty() ? "" : " -> ", link.rank);
    if (!cycle)
        return "wait chain " + ranks + chain_end(chain.back(), held, holder_dumped);
    if (chain.size() == 1)
        return fmt::format("rank {} waits on itself", chain.front().rank);
    return fmt::format("wait cycle {} -> rank {}", ranks, chain.front().rank);
}

std::string FlightRecorderReport::text() const {
    std::string out = fmt::format("flight-recorder dumps of {} rank(s)", ranks.size());
    for (const RankSummary& rank : ranks) {
        out += fmt::format("\n  rank {} ({}): {} op(s), {} completed", rank.rank, rank.file,
                           rank.ops, rank.completed);
        if (rank.last_completed_step >= 0)
            out += fmt::format("; last completed: step {} {}", rank.last_completed_step,
                               rank.last_completed);
        if (rank.first_pending_step >= 0)
            out += fmt::format("; first not completed: step {} {}", rank.first_pending_step,
                               rank.first_pending);
    }
    for (const std::string& note : notes)
        out += "\n  note: " + note;
    bool listed = false;
    for (const FlightRecorderFinding& finding : findings) {
        if (finding.kind == "hang")
            continue;
        out += listed ? "" : "\nfindings:";
        listed = true;
        out += fmt::format("\n  {}: {}", finding.kind, finding.message);
    }
    if (hang) {
        // The schedule check's headline knows only cycles of posted ops; a dump's chain also
        // runs through ranks stuck before the op, so the headline is this report's own.
        const std::string links = hang_report.text("");
        out += "\nthe dumps show a hang: " + hang_headline;
        out += links.substr(links.find('\n'));
        if (posted_on_both_sides(hang_report))
            out +=
                "\n every rank of this cycle has posted the op the next one waits for and none "
                "completed: the op itself is stuck (see the mismatches above, a rank without "
                "a dump, the network)";
    }
    if (!hang && !listed)
        out += "\nno hang and no mismatch: every op completed and the ranks agree";
    return out;
}

}  // namespace pipelens::import
