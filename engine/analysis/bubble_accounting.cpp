// Bubble accounting (see bubble_accounting.hpp for the split and its invariants): the figures
// of one rank, and the attribution of a recorded run's gaps through the hold graph.
#include "engine/analysis/bubble_accounting.hpp"

#include "engine/schedule/action_facts.hpp"

namespace pipelens::analysis {
namespace {

// Transfers `waited_on` looks through to reach the computation whose data was moved.
constexpr int kTransferHops = 4;

const Action& action_at(const TimedSchedule& timed, ActionRef ref) {
    return timed.schedule
        .ranks[static_cast<std::size_t>(ref.rank)][static_cast<std::size_t>(ref.index)];
}

// The rank whose work `holder` carried: a receive its sender's (the transfer's peer; -1 for a
// peer stage outside a damaged run's pipeline), anything else its own rank's.
int carrier_of(const TimedSchedule& timed, ActionRef holder) {
    const Action& action = action_at(timed, holder);
    if (!is_receive(action.kind))
        return holder.rank;
    const int stage = transfer_peer_stage(action);
    const std::vector<int>& stage_to_rank = timed.schedule.stage_to_rank;
    return stage >= 0 && static_cast<std::size_t>(stage) < stage_to_rank.size()
               ? stage_to_rank[static_cast<std::size_t>(stage)]
               : -1;
}

// The peer whose work `computation` waited for last; -1 where that was on its own rank.
int peer_of(const TimedSchedule& timed, const HoldGraph& holds, ActionRef computation) {
    const std::optional<ActionRef> holder = holds.held_by(computation);
    if (!holder)
        return -1;
    const int carrier = carrier_of(timed, *holder);
    return carrier == computation.rank ? -1 : carrier;
}

}  // namespace

std::int64_t BubbleSplit::waiting_ns() const {
    std::int64_t total = 0;
    for (const auto& [rank, idle] : waiting_on_rank)
        total += idle;
    return total;
}

void RankBubbleAccount::add_gap(std::int64_t gap, int provider) {
    if (provider < 0 || provider == rank_)
        split_.local_ns += gap;
    else
        split_.waiting_on_rank[provider] += gap;
}

RankBubbles RankBubbleAccount::finish(std::int64_t step_end_ns) const {
    RankBubbles figures;
    figures.computed = computed_;
    figures.busy_ns = busy_ns_;
    figures.bubble_ns = std::max<std::int64_t>(0, step_end_ns - busy_ns_);
    figures.bubble_ratio =
        step_end_ns > 0 ? static_cast<double>(figures.bubble_ns) / step_end_ns : 0;
    figures.split = split_;
    if (!computed_)
        figures.split.warmup_ns = step_end_ns;  // idle throughout
    else
        figures.split.cooldown_ns = std::max<std::int64_t>(0, step_end_ns - free_ns_);
    return figures;
}

WaitedFor waited_for(const TimedSchedule& timed, const HoldGraph& holds, ActionRef computation) {
    WaitedFor result;
    result.held_by = holds.held_by(computation);
    result.peer = peer_of(timed, holds, computation);
    std::optional<ActionRef> behind = result.held_by;
    for (int hop = 0; behind && hop < kTransferHops; ++hop) {
        if (!is_communication(action_at(timed, *behind).kind))
            break;
        const std::optional<ActionRef> next = holds.held_by(*behind);
        if (!next)
            break;
        behind = next;
    }
    result.waited_on = behind;
    return result;
}

std::vector<RankBubbles> account_bubbles(const TimedSchedule& timed, const HoldGraph& holds,
                                         std::int64_t step_end_ns) {
    std::vector<RankBubbles> ranks;
    ranks.reserve(timed.times.size());
    for (std::size_t rank = 0; rank < timed.times.size(); ++rank) {
        RankBubbleAccount account(static_cast<int>(rank));
        const std::vector<ActionSpan>& spans = timed.times[rank];
        for (std::size_t index = 0; index < spans.size(); ++index) {
            const ActionSpan& span = spans[index];
            if (span.communication_lane || span.end_ns < 0)
                continue;
            const ActionRef computation{static_cast<std::int32_t>(rank),
                                        static_cast<std::int32_t>(index)};
            account.add_computation(span.start_ns, span.end_ns, peer_of(timed, holds, computation));
        }
        ranks.push_back(account.finish(step_end_ns));
    }
    return ranks;
}

}  // namespace pipelens::analysis
