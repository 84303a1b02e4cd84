// Flight-recorder analysis. Groups are identified across ranks by name and member set (as
// fr_trace does since split_group made names repeat); collectives are keyed by (group, seq id),
// transfers by (group, sender, receiver) and their order; the hang chain goes on through every
// holder that is itself stuck (posted the op or not: a stuck rank posts nothing later), so a
// chain either closes on a rank it already visited or ends at a holder that is not stuck. What
// two entries must agree on is in flight_recorder_rules.cpp; how the report reads, in
// flight_recorder_report.cpp.
#include "engine/import/flight_recorder_analysis.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "engine/import/flight_recorder_rules.hpp"

namespace pipelens::import {
namespace {

std::string join_ranks(const std::vector<int>& ranks) {
    std::string out;
    for (const int rank : ranks)
        out += (out.empty() ? "" : ", ") + std::to_string(rank);
    return out;
}

// "input sizes differ", "state differs": what the rules name, plural or not.
bool plural(const std::string& what) {
    return !what.empty() && (what.back() == 's' || what.back() == ')');
}

struct GlobalGroup {
    std::string name;
    std::string desc;
    std::vector<int> ranks;  // sorted
};

class Analysis {
  public:
    explicit Analysis(const std::vector<FlightRecorderDump>& dumps) : dumps_(dumps) {
        for (std::size_t i = 0; i < dumps_.size(); ++i) {
            index_of_rank_[dumps_[i].rank] = i;
            states_.push_back(effective_states(dumps_[i]));
            heads_.push_back(first_pending(i));
        }
        build_groups();
        for (std::size_t dump = 0; dump < dumps_.size(); ++dump)
            for (std::size_t i = 0; i < dumps_[dump].entries.size(); ++i)
                entries_of_group_[static_cast<std::size_t>(group_of(dump, dumps_[dump].entries[i]))]
                    .push_back({dumps_[dump].rank, static_cast<int>(i)});
    }

    FlightRecorderReport run() {
        for (std::size_t group = 0; group < groups_.size(); ++group)
            match_collectives(group);
        for (std::size_t group = 0; group < groups_.size(); ++group)
            match_transfers(group);
        note_early_dumps();
        for (std::size_t i = 0; i < dumps_.size(); ++i)
            report_.ranks.push_back(summary(i));
        explain_hang();
        for (const FlightRecorderFinding& finding : report_.findings)
            report_.mismatch |= finding.kind == "type_mismatch" ||
                                finding.kind == "size_mismatch" || finding.kind == "dtype_mismatch";
        return std::move(report_);
    }

  private:
    using Key = std::pair<int, std::int64_t>;  // (global group, seq id)

    struct RankWait {
        WaitLink link;
        bool held = false;  // link.holder_rank keeps this rank waiting (not done with the op)
    };

    struct SeqSpans {  // per rank, its first and last collective seq id in one group
        std::map<int, std::int64_t> first, last;
    };
    struct EarlyDump {  // what a rank's dump ends before
        int ops = 0;
        std::string first;
    };

    const FlightRecorderEntry& entry(int rank, int step) const {
        return dumps_[index_of_rank_.at(rank)].entries[static_cast<std::size_t>(step)];
    }
    EntryState state(int rank, int step) const {
        return states_[index_of_rank_.at(rank)][static_cast<std::size_t>(step)];
    }
    bool has_dump(int rank) const { return index_of_rank_.count(rank) != 0; }
    int head(int rank) const { return heads_[index_of_rank_.at(rank)]; }
    int group_of(std::size_t dump, const FlightRecorderEntry& e) const {
        return local_to_global_[dump][static_cast<std::size_t>(e.group)];
    }
    const GlobalGroup& group_of(int rank, int step) const {
        const std::size_t dump = index_of_rank_.at(rank);
        return groups_[group_of(dump, dumps_[dump].entries[static_cast<std::size_t>(step)])];
    }
    bool wrapped(std::size_t dump) const {
        return !dumps_[dump].entries.empty() && dumps_[dump].entries.front().record_id > 0;
    }

    int first_pending(std::size_t dump) const {
        for (std::size_t i = 0; i < dumps_[dump].entries.size(); ++i)
            if (!is_marker(dumps_[dump].entries[i]) && states_[dump][i] != EntryState::completed)
                return static_cast<int>(i);
        return -1;
    }

    void build_groups() {
        std::map<std::pair<std::string, std::vector<int>>, int> index;
        for (const FlightRecorderDump& dump : dumps_) {
            std::vector<int>& local = local_to_global_.emplace_back();
            for (const ProcessGroupConfig& config : dump.pg_config) {
                std::vector<int> ranks = config.ranks;
                std::sort(ranks.begin(), ranks.end());
                const auto [found, fresh] =
                    index.emplace(std::make_pair(config.name, ranks), groups_.size());
                if (fresh) {
                    groups_.push_back({config.name, config.desc, ranks});
                    entries_of_group_.emplace_back();
                }
                local.push_back(found->second);
            }
        }
        for (const GlobalGroup& group : groups_) {
            std::vector<int> absent;
            for (const int rank : group.ranks)
                if (!has_dump(rank))
                    absent.push_back(rank);
            if (!absent.empty())
                report_.notes.push_back(fmt::format(
                    "process group '{}' ({}): rank(s) {} have no dump, so their side of its ops "
                    "is unknown",
                    group.name, group.desc, join_ranks(absent)));
        }
        for (const FlightRecorderDump& dump : dumps_)
            report_.notes.insert(report_.notes.end(), dump.notes.begin(), dump.notes.end());
        for (const FlightRecorderDump& dump : dumps_)
            if (const std::string note = gloo_dump_note(dump); !note.empty())
                report_.notes.push_back(note);
        for (std::size_t i = 0; i < dumps_.size(); ++i)
            if (wrapped(i))
                report_.notes.push_back(fmt::format(
                    "rank {}'s buffer wrapped (its dump starts at record {}): older ops are lost "
                    "and not counted as missing",
                    dumps_[i].rank, dumps_[i].entries.front().record_id));
    }

    std::string group_text(const GlobalGroup& group) const {
        return group.desc.empty() ? fmt::format("process group '{}'", group.name)
                                  : fmt::format("process group '{}' ({})", group.name, group.desc);
    }

    void add(FlightRecorderFinding finding) { report_.findings.push_back(std::move(finding)); }

    // `rank` has no side of `op`, which its peers completed: its dump was taken before the op.
    void dump_ends_before(int rank, std::string op) {
        EarlyDump& early = early_dumps_[rank];
        if (early.ops++ == 0)
            early.first = std::move(op);
    }

    // Dumps are taken one rank at a time: what a rank's dump ends before is said once, not found.
    void note_early_dumps() {
        for (const auto& [rank, early] : early_dumps_)
            report_.notes.push_back(fmt::format(
                "rank {}'s dump ends before {} op(s) that other ranks completed with it (the "
                "first: {}): it was dumped earlier, so they are not findings",
                rank, early.ops, early.first));
    }

    // Calls visit(rank, step, entry) for each entry of the group that is `wanted`, rank by rank
    // (those with a dump), in recorded order.
    template <typename Wanted, typename Visit>
    void for_each_entry_of(std::size_t group_index, Wanted&& wanted, Visit&& visit) const {
        for (const auto& [rank, step] : entries_of_group_[group_index])
            if (const FlightRecorderEntry& e = entry(rank, step); wanted(e))
                visit(rank, step, e);
    }

    // Per rank of the group: its collectives by seq id (several for a coalesced batch).
    void match_collectives(std::size_t group_index) {
        const GlobalGroup& group = groups_[group_index];
        const int g = static_cast<int>(group_index);
        std::map<std::int64_t, std::map<int, std::vector<int>>> by_seq;
        SeqSpans spans;
        for_each_entry_of(group_index, is_collective,
                          [&](int rank, int step, const FlightRecorderEntry& e) {
                              by_seq[e.collective_seq_id][rank].push_back(step);
                              spans.first.emplace(rank, e.collective_seq_id);
                              spans.last[rank] = e.collective_seq_id;
                          });
        for (const auto& [seq, steps] : by_seq) {
            for (const auto& [rank, list] : steps)
                collective_steps_[{g, seq}][rank] = list.front();
            check_collective(group, seq, steps, spans);
        }
    }

    // A rank with no entry for a collective that another rank completed, and nothing of the group
    // after it, was dumped before the collective ran: it cannot complete without every rank. A
    // retired Gloo op is no such proof: Gloo retires an op that failed (timed out) as well.
    bool dumped_before(int rank, const SeqSpans& spans, std::int64_t seq,
                       const std::map<int, std::vector<int>>& steps) const {
        if (spans.last.count(rank) && spans.last.at(rank) > seq)
            return false;
        return std::any_of(steps.begin(), steps.end(), [&](const auto& posted) {
            const int step = posted.second.front();
            return state(posted.first, step) == EntryState::completed &&
                   !is_gloo(entry(posted.first, step));
        });
    }

    void check_collective(const GlobalGroup& group, std::int64_t seq,
                          const std::map<int, std::vector<int>>& steps, const SeqSpans& spans) {
        const auto& [ref_rank, ref_steps] = *steps.begin();
        const FlightRecorderEntry& ref = entry(ref_rank, ref_steps.front());
        std::vector<int> present, absent;
        for (const int rank : group.ranks) {
            if (steps.count(rank)) {
                present.push_back(rank);
                continue;
            }
            const bool lost = has_dump(rank) && wrapped(index_of_rank_.at(rank)) &&
                              (!spans.first.count(rank) || seq < spans.first.at(rank));
            if (!has_dump(rank) || lost)
                continue;
            if (dumped_before(rank, spans, seq, steps))
                dump_ends_before(rank, fmt::format("{} collective #{} ({})", group_text(group), seq,
                                                   ref.profiling_name));
            else
                absent.push_back(rank);
        }
        if (!absent.empty())
            add({"missing_rank", group.name, seq, absent, absent.front(), -1, op_label(ref),
                 fmt::format("ranks {}", join_ranks(group.ranks)),
                 fmt::format("ranks {}", join_ranks(present)),
                 fmt::format("{} collective #{} ({}): rank(s) {} never posted it; rank(s) {} did{}",
                             group_text(group), seq, ref.profiling_name, join_ranks(absent),
                             join_ranks(present), gloo_missing_caveat(ref, absent))});
        bool differed = false;
        for (const auto& [rank, list] : steps) {
            if (rank == ref_rank)
                continue;
            const std::size_t count = std::min(list.size(), ref_steps.size());
            for (std::size_t k = 0; k < count; ++k) {
                const FlightRecorderEntry& other = entry(rank, list[k]);
                const auto difference =
                    compare_collective(entry(ref_rank, ref_steps[k]), state(ref_rank, ref_steps[k]),
                                       other, state(rank, list[k]), group.ranks.size());
                if (!difference)
                    continue;
                add({difference->kind,
                     group.name,
                     seq,
                     {ref_rank, rank},
                     rank,
                     list[k],
                     op_label(other),
                     difference->expected,
                     difference->actual,
                     fmt::format("{} collective #{}: rank {}'s {} {} {} from rank {}'s {}",
                                 group_text(group), seq, rank, difference->what, difference->actual,
                                 plural(difference->what) ? "differ" : "differs", ref_rank,
                                 difference->expected)});
                differed = true;
                break;  // one difference per rank and seq id: the rest follow from it
            }
        }
        if (!differed && present.size() == group.ranks.size())
            check_all_to_all_totals(group, seq, steps);
    }

    // fr_trace's check once every rank posted an all_to_all that no pair disagrees on. Dumps
    // before version 2.4 did not record its sizes.
    void check_all_to_all_totals(const GlobalGroup& group, std::int64_t seq,
                                 const std::map<int, std::vector<int>>& steps) {
        const auto& [ref_rank, ref_steps] = *steps.begin();
        const FlightRecorderEntry& ref = entry(ref_rank, ref_steps.front());
        if (ref.op.type != "all_to_all" ||
            !records_all_to_all_sizes(dumps_[index_of_rank_.at(ref_rank)].version))
            return;
        std::vector<const FlightRecorderEntry*> entries;
        for (const auto& [rank, list] : steps)
            entries.push_back(&entry(rank, list.front()));
        const std::optional<OpDifference> difference = compare_all_to_all_totals(entries);
        if (!difference)
            return;
        add({difference->kind, group.name, seq, group.ranks, ref_rank, ref_steps.front(),
             op_label(ref), difference->expected, difference->actual,
             fmt::format("{} collective #{} ({}): its ranks send {} in all but receive {}; "
                         "some rank's sizes are wrong",
                         group_text(group), seq, ref.profiling_name, difference->expected,
                         difference->actual)});
    }

    // Sends a->b in the group, in order, against recvs b<-a in order.
    void match_transfers(std::size_t group_index) {
        const GlobalGroup& group = groups_[group_index];
        std::map<std::pair<int, int>, std::vector<int>> sends, recvs;  // (from, to) -> steps
        for_each_entry_of(
            group_index, [](const FlightRecorderEntry& e) { return e.op.is_p2p(); },
            [&](int rank, int step, const FlightRecorderEntry& e) {
                if (e.op.is_send())
                    sends[{rank, e.peer_rank}].push_back(step);
                else
                    recvs[{e.peer_rank, rank}].push_back(step);
            });
        std::set<std::pair<int, int>> pairs;
        for (const auto& [pair, steps] : sends)
            pairs.insert(pair);
        for (const auto& [pair, steps] : recvs)
            pairs.insert(pair);
        for (const auto& [from, to] : pairs)
            if (has_dump(from) && has_dump(to))
                pair_up(group, from, to, sends[{from, to}], recvs[{from, to}]);
    }

    // One past the last of `steps` that completed on `rank`; 0 when none did.
    std::ptrdiff_t completed_prefix(int rank, const std::vector<int>& steps) const {
        for (std::size_t k = steps.size(); k-- > 0;)
            if (state(rank, steps[k]) == EntryState::completed)
                return static_cast<std::ptrdiff_t>(k + 1);
        return 0;
    }

    // How the pair's lists line up: sends[i] goes with recvs[i - offset]. Unwrapped, both lists
    // begin at the pair's first transfer. A wrapped side lost an unknown number of its oldest
    // entries, so the lists are lined up at the last transfer each side completed (a transfer
    // completes on both sides), the unwrapped side, which lost nothing, bounding the offset.
    std::ptrdiff_t transfer_offset(int from, int to, const std::vector<int>& sends,
                                   const std::vector<int>& recvs) const {
        const bool sends_wrapped = wrapped(index_of_rank_.at(from));
        const bool recvs_wrapped = wrapped(index_of_rank_.at(to));
        if (!sends_wrapped && !recvs_wrapped)
            return 0;
        std::ptrdiff_t offset = completed_prefix(from, sends) - completed_prefix(to, recvs);
        if (!recvs_wrapped)
            offset = std::min<std::ptrdiff_t>(offset, 0);
        if (!sends_wrapped)
            offset = std::max<std::ptrdiff_t>(offset, 0);
        return offset;
    }

    void pair_up(const GlobalGroup& group, int from, int to, const std::vector<int>& sends,
                 const std::vector<int>& recvs) {
        const std::ptrdiff_t offset = transfer_offset(from, to, sends, recvs);
        const auto send_count = static_cast<std::ptrdiff_t>(sends.size());
        const auto recv_count = static_cast<std::ptrdiff_t>(recvs.size());
        const std::ptrdiff_t first = std::max<std::ptrdiff_t>(0, offset);
        const std::ptrdiff_t last = std::min(send_count, recv_count + offset);
        if (const std::ptrdiff_t lost =
                std::min(first, send_count) + std::min(first - offset, recv_count);
            lost > 0)
            report_.notes.push_back(fmt::format(
                "transfers from rank {} to rank {} ({}): a wrapped buffer lost the oldest, so "
                "sends and recvs are lined up at the last one each side completed; {} older "
                "entr(ies) whose partner was lost are not paired",
                from, to, group_text(group), lost));
        for (std::ptrdiff_t i = first; i < last; ++i) {
            const auto s = static_cast<std::size_t>(i);
            const auto r = static_cast<std::size_t>(i - offset);
            const std::size_t k = s - static_cast<std::size_t>(first);
            report_.transfers.push_back({from, sends[s], to, recvs[r]});
            partner_[{from, sends[s]}] = {to, recvs[r]};
            partner_[{to, recvs[r]}] = {from, sends[s]};
            const FlightRecorderEntry& send = entry(from, sends[s]);
            const FlightRecorderEntry& recv = entry(to, recvs[r]);
            if (const std::optional<OpDifference> difference = compare_transfer(send, recv))
                add({difference->kind,
                     group.name,
                     recv.p2p_seq_id,
                     {from, to},
                     to,
                     recvs[k],
                     op_label(recv),
                     difference->expected,
                     difference->actual,
                     fmt::format("{}: transfer {} from rank {} to rank {}: rank {}'s {} (step {}) "
                                 "has {} {}, rank {}'s {} (step {}) {}",
                                 group_text(group), k + 1, from, to, to, recv.profiling_name,
                                 recvs[r], difference->what, difference->actual, from,
                                 send.profiling_name, sends[s], difference->expected)});
        }
        // Counted from where the lists line up: what each side posted that the other could see.
        const auto posted = [](std::ptrdiff_t count, std::ptrdiff_t start) {
            return static_cast<std::size_t>(std::max<std::ptrdiff_t>(0, count - start));
        };
        for (std::ptrdiff_t i = std::max(first, last); i < send_count; ++i)
            unmatched(group, from, sends[static_cast<std::size_t>(i)], to,
                      posted(recv_count, first - offset), static_cast<std::size_t>(i - first));
        for (std::ptrdiff_t r = std::max(first, last) - offset; r < recv_count; ++r)
            unmatched(group, to, recvs[static_cast<std::size_t>(r)], from,
                      posted(send_count, first), static_cast<std::size_t>(r - (first - offset)));
    }

    void unmatched(const GlobalGroup& group, int rank, int step, int peer, std::size_t posted,
                   std::size_t number) {
        const FlightRecorderEntry& e = entry(rank, step);
        const bool send = e.op.is_send();
        const std::string direction =
            send ? fmt::format("send {} from rank {} to rank {}", number + 1, rank, peer)
                 : fmt::format("recv {} of rank {} from rank {}", number + 1, rank, peer);
        // A transfer completes only once both sides posted it: the peer's dump was taken first.
        if (state(rank, step) == EntryState::completed) {
            dump_ends_before(peer, fmt::format("{}: rank {}'s {} ({})", group_text(group), rank,
                                               op_label(e), direction));
            return;
        }
        add({send ? "unmatched_send" : "unmatched_recv",
             group.name,
             e.p2p_seq_id,
             {std::min(rank, peer), std::max(rank, peer)},
             rank,
             step,
             op_label(e),
             fmt::format("{} on rank {}", partner_name(e), peer),
             fmt::format("rank {} posted {} matching {}", peer, posted,
                         send ? "recv(s)" : "send(s)"),
             fmt::format("{}: rank {}'s {} (step {}, {}) has no partner: rank {} posted only {} "
                         "{} rank {}",
                         group_text(group), rank, op_label(e), step, direction, peer, posted,
                         send ? "recv(s) from" : "send(s) to", rank)});
    }

    RankSummary summary(std::size_t dump) const {
        const FlightRecorderDump& d = dumps_[dump];
        RankSummary out;
        out.rank = d.rank;
        out.file = d.file;
        for (std::size_t i = 0; i < d.entries.size(); ++i) {
            if (is_marker(d.entries[i]))
                continue;
            ++out.ops;
            if (states_[dump][i] != EntryState::completed)
                continue;
            ++out.completed;
            out.last_completed_step = static_cast<int>(i);
            out.last_completed = op_label(d.entries[i]);
        }
        out.first_pending_step = heads_[dump];
        if (out.first_pending_step >= 0)
            out.first_pending = fmt::format(
                "{}, {}", op_label(d.entries[static_cast<std::size_t>(out.first_pending_step)]),
                entry_state_name(states_[dump][static_cast<std::size_t>(out.first_pending_step)]));
        return out;
    }

    // Rank `rank` is stuck at its head op: which op of which rank does it wait for?
    RankWait link_for(int rank) const {
        RankWait wait;
        WaitLink& link = wait.link;
        link.rank = rank;
        link.step = head(rank);
        const FlightRecorderEntry& e = entry(rank, link.step);
        link.action = op_label(e);
        if (e.op.is_p2p())
            transfer_holder(e, link);
        else
            collective_holder(e, link);
        wait.held = link.holder_rank >= 0;
        // A holder that completed the op does not hold this rank, whatever it waits for itself.
        if (link.holder_step >= 0 &&
            (head(link.holder_rank) < 0 || head(link.holder_rank) > link.holder_step)) {
            link.holder_note = fmt::format("which rank {} completed at step {}", link.holder_rank,
                                           link.holder_step);
            link.holder_step = -1;
            wait.held = false;
        }
        // A stuck rank cannot post anything later, so the chain goes on through it.
        if (link.holder_step < 0 && wait.held && has_dump(link.holder_rank) &&
            head(link.holder_rank) >= 0)
            link.holder_note += fmt::format(" (it is stuck at step {})", head(link.holder_rank));
        if (link.holder_step >= 0) {
            const int holder_head = head(link.holder_rank);
            link.holder_note =
                holder_head < link.holder_step
                    ? fmt::format(
                          "which rank {} posted at step {} but is stuck before it, at "
                          "step {}",
                          link.holder_rank, link.holder_step, holder_head)
                    : fmt::format("which rank {} posted at step {} and has not completed",
                                  link.holder_rank, link.holder_step);
        }
        return wait;
    }

    void transfer_holder(const FlightRecorderEntry& e, WaitLink& link) const {
        link.holder_rank = e.peer_rank;
        const auto found = partner_.find({link.rank, link.step});
        if (found == partner_.end()) {
            link.needed = fmt::format("{} on rank {}", partner_name(e), e.peer_rank);
            link.holder_note =
                has_dump(e.peer_rank)
                    ? fmt::format("which rank {} never posted", e.peer_rank)
                    : fmt::format("which rank {} may not have posted: it left no dump",
                                  e.peer_rank);
            return;
        }
        link.holder_step = found->second.second;
        link.needed = fmt::format("{} on rank {}", op_label(entry(e.peer_rank, link.holder_step)),
                                  e.peer_rank);
    }

    void collective_holder(const FlightRecorderEntry& e, WaitLink& link) const {
        const int g = group_of(index_of_rank_.at(link.rank), e);
        const auto steps = collective_steps_.find({g, e.collective_seq_id});
        // Who holds the group up, most telling first: a rank stuck before the op, one that never
        // posted it, one that left no dump (it may be either), one stuck at the op too.
        std::optional<std::pair<int, int>> behind, never, undumped, waiting;
        for (const int member : groups_[g].ranks) {
            if (member == link.rank)
                continue;
            if (!has_dump(member)) {
                if (!undumped)
                    undumped = {member, -1};
                continue;
            }
            const bool posted =
                steps != collective_steps_.end() && steps->second.count(member) != 0;
            if (!posted) {
                if (!never)
                    never = {member, -1};
                continue;
            }
            const int step = steps->second.at(member);
            if (state(member, step) == EntryState::completed)
                continue;
            auto& slot = head(member) < step ? behind : waiting;
            if (!slot)
                slot = {member, step};
        }
        const auto holder = behind ? behind : never ? never : undumped ? undumped : waiting;
        link.needed =
            fmt::format("{} [pg {}, #{}]", e.profiling_name, groups_[g].name, e.collective_seq_id);
        if (!holder) {
            link.needed += " to complete";
            link.holder_note =
                "which every other rank of the group completed: the op is stuck here";
            return;
        }
        link.holder_rank = holder->first;
        link.holder_step = holder->second;
        link.needed += fmt::format(" on rank {}", holder->first);
        if (!behind && never)
            link.holder_note = fmt::format("which rank {} never posted", holder->first);
        else if (!behind && !never && undumped)
            link.holder_note =
                fmt::format("which rank {} may not have posted: it left no dump", holder->first);
    }

    // The waits from `start`, followed through every rank that is itself stuck, until a rank
    // repeats (the chain is then cut to the cycle, from its lowest rank) or the holder is not
    // stuck.
    std::pair<std::vector<WaitLink>, bool> chain_from(int start,
                                                      const std::map<int, RankWait>& waits) const {
        std::vector<WaitLink> chain;
        std::set<int> seen;
        for (int rank = start;;) {
            const RankWait& wait = waits.at(rank);
            chain.push_back(wait.link);
            seen.insert(rank);
            const int holder = wait.link.holder_rank;
            if (!wait.held || waits.count(holder) == 0)
                return {chain, false};
            if (seen.count(holder)) {
                chain.erase(chain.begin(),
                            std::find_if(chain.begin(), chain.end(),
                                         [&](const WaitLink& l) { return l.rank == holder; }));
                // From its lowest rank, so a cycle reads the same whichever rank found it.
                std::rotate(chain.begin(),
                            std::min_element(chain.begin(), chain.end(),
                                             [](const WaitLink& a, const WaitLink& b) {
                                                 return a.rank < b.rank;
                                             }),
                            chain.end());
                return {chain, true};
            }
            rank = holder;
        }
    }

    void explain_hang() {
        std::map<int, RankWait> waits;
        for (const FlightRecorderDump& dump : dumps_)
            if (head(dump.rank) >= 0)
                waits.emplace(dump.rank, link_for(dump.rank));
        if (waits.empty())
            return;
        report_.hang = true;
        HangReport& hang = report_.hang_report;
        for (const auto& [rank, wait] : waits)
            hang.blocked.push_back(wait.link);
        // A cycle explains a hang best; without one, the lowest stuck rank's chain.
        bool cycle = false;
        for (const auto& [rank, wait] : waits) {
            auto [chain, closes] = chain_from(rank, waits);
            if (hang.cycle.empty() || closes) {
                hang.cycle = std::move(chain);
                cycle = closes;
            }
            if (closes)
                break;
        }
        report_.wait_cycle = cycle;
        const RankWait& last = waits.at(hang.cycle.back().rank);
        report_.hang_headline =
            hang_headline(hang.cycle, cycle, last.held,
                          last.link.holder_rank >= 0 && has_dump(last.link.holder_rank));
        for (const WaitLink& link : hang.blocked) {
            const FlightRecorderEntry& e = entry(link.rank, link.step);
            std::vector<int> ranks{link.rank};
            if (link.holder_rank >= 0 && link.holder_rank != link.rank)
                ranks.push_back(link.holder_rank);
            std::sort(ranks.begin(), ranks.end());
            add({"hang", group_of(link.rank, link.step).name,
                 e.op.is_p2p() ? e.p2p_seq_id : e.collective_seq_id, ranks, link.rank, link.step,
                 link.action, link.needed,
                 std::string(entry_state_name(state(link.rank, link.step))),
                 fmt::format("rank {} is stuck at step {} ({}, {}): it waits for {}{}", link.rank,
                             link.step, link.action, entry_state_name(state(link.rank, link.step)),
                             link.needed,
                             link.holder_note.empty() ? "" : ", " + link.holder_note)});
        }
    }

    const std::vector<FlightRecorderDump>& dumps_;
    std::map<int, std::size_t> index_of_rank_;
    std::vector<std::vector<EntryState>> states_;
    std::vector<int> heads_;
    std::vector<GlobalGroup> groups_;
    std::vector<std::vector<int>> local_to_global_;  // [dump][pg_config index] -> groups_
    std::vector<std::vector<std::pair<int, int>>> entries_of_group_;  // (rank, step), by rank
    std::map<Key, std::map<int, int>> collective_steps_;              // first step per rank
    std::map<std::pair<int, int>, std::pair<int, int>> partner_;      // (rank, step) both ways
    std::map<int, EarlyDump> early_dumps_;                            // by rank
    FlightRecorderReport report_;
};

}  // namespace

std::vector<EntryState> effective_states(const FlightRecorderDump& dump) {
    std::vector<EntryState> states;
    for (const FlightRecorderEntry& entry : dump.entries)
        states.push_back(is_gloo(entry) && entry.retired ? EntryState::completed : entry.state);
    for (std::size_t i = 0; i < dump.entries.size(); ++i) {
        const FlightRecorderEntry& marker = dump.entries[i];
        if (!is_marker(marker))
            continue;
        const auto seq_of = [](const FlightRecorderEntry& e) {
            return e.is_p2p ? e.p2p_seq_id : e.collective_seq_id;
        };
        for (std::size_t j = i; j-- > 0;) {
            const FlightRecorderEntry& member = dump.entries[j];
            if (is_marker(member) || member.group != marker.group ||
                member.is_p2p != marker.is_p2p || seq_of(member) != seq_of(marker))
                break;
            states[j] = marker.state;
        }
    }
    return states;
}

FlightRecorderReport analyse_flight_recorder(const std::vector<FlightRecorderDump>& dumps) {
    return Analysis(dumps).run();
}

}  // namespace pipelens::import
