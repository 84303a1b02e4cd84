// Deferred receives, PyTorch's optional lowering pass `_defer_recv_ops` (`defer_pp_recv=True`):
// after SEND/RECV placement, each RECV leaves the place the sender gave it and is posted just
// before the computation that consumes it (F for RECV_F, I or B for RECV_B, or an OVERLAP_F_B
// holding one of those), so a posted receive no longer sits on the communication stream while
// unrelated work runs. Between two ranks the lower one posts its receives from a peer before
// its next send to that peer (rank < peer: RECV before SEND; rank > peer: SEND before RECV),
// the parity order that keeps rendezvous point-to-point from deadlocking.
//
// Invariants: only RECVs move, and only later in their rank's list; every other action keeps its
// relative order; pair ids travel with their RECV. Each rank is handled alone, in one pass.
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "engine/schedule/action_facts.hpp"
#include "engine/schedule/lower.hpp"
#include "engine/schedule/static_check.hpp"

namespace pipelens {
namespace {

std::vector<Action> defer_rank(const Schedule& schedule, int rank) {
    const std::vector<Action>& actions = schedule.ranks[rank];
    std::vector<Action> result;
    result.reserve(actions.size());
    std::vector<Action> pending;  // receives taken out, in the order they were met
    auto post_if = [&](auto&& wanted) {
        auto keep = pending.begin();
        for (auto it = pending.begin(); it != pending.end(); ++it) {
            if (wanted(*it))
                result.push_back(*it);
            else
                *keep++ = *it;
        }
        pending.erase(keep, pending.end());
    };
    for (const Action& action : actions) {
        if (is_receive(action.kind)) {
            pending.push_back(action);
            continue;
        }
        if (is_send(action.kind)) {
            const int peer = transfer_peer_rank(schedule, action);
            if (rank < peer)
                post_if([&](const Action& r) { return transfer_peer_rank(schedule, r) == peer; });
        } else if (is_compute(action.kind)) {
            for (const Action& part : schedule.parts_of(action))
                post_if([&](const Action& r) { return consumes(part, r); });
        }
        result.push_back(action);
    }
    if (!pending.empty())
        throw ScheduleCheckError(CheckReport{{fmt::format(
            "rank {}: {} has no computation after it that consumes it, so it cannot be "
            "deferred",
            rank, schedule.text(pending.front()))}});
    return result;
}

}  // namespace

Schedule defer_receives(const Schedule& lowered) {
    if (!lowered.has_communication)
        throw ScheduleCheckError(CheckReport{
            {"defer_receives takes a schedule with SEND/RECV actions; lower it first"}});
    Schedule result = lowered;
    for (int rank = 0; rank < static_cast<int>(lowered.ranks.size()); ++rank)
        result.ranks[rank] = defer_rank(lowered, rank);
    return result;
}

}  // namespace pipelens
