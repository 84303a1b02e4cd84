// Reading PyTorch's printed Schedule1F1B table as the order its runtime runs
// (printed_1f1b_table.hpp).
#include "engine/schedule/printed_1f1b_table.hpp"

#include <vector>

namespace pipelens {
namespace {

// The microbatches of `rank`'s actions of `kind`, in order.
std::vector<int> microbatches_of(const std::vector<Action>& rank, ActionKind kind) {
    std::vector<int> microbatches;
    for (const Action& action : rank)
        if (action.kind == kind)
            microbatches.push_back(action.microbatch);
    return microbatches;
}

bool counts_from(const std::vector<int>& microbatches, int first) {
    for (std::size_t index = 0; index < microbatches.size(); ++index)
        if (microbatches[index] != first + static_cast<int>(index))
            return false;
    return !microbatches.empty();
}

// The last rank of 1F1B runs one forward, then one backward, and so on: F1, B0, F2, B1, ... as
// printed. A file whose last rank does not (a GPipe order numbered wrong) is no such table.
bool alternates(const std::vector<Action>& rank) {
    bool forward_next = true;
    for (const Action& action : rank) {
        if (action.kind != ActionKind::forward && action.kind != ActionKind::full_backward) {
            if (is_compute(action.kind))
                return false;
            continue;  // its REDUCE_GRAD
        }
        if ((action.kind == ActionKind::forward) != forward_next)
            return false;
        forward_next = !forward_next;
    }
    return forward_next;
}

bool one_stage_per_rank(const Schedule& schedule) {
    for (std::size_t rank = 0; rank < schedule.ranks.size(); ++rank)
        for (const Action& action : schedule.ranks[rank])
            if (action.stage != static_cast<int>(rank) || is_communication(action.kind))
                return false;
    return true;
}

}  // namespace

std::optional<int> renumber_printed_1f1b_last_rank(Schedule& schedule) {
    if (schedule.ranks.size() < 2 || schedule.has_communication || !one_stage_per_rank(schedule))
        return std::nullopt;
    std::vector<Action>& last = schedule.ranks.back();
    const std::vector<int> forwards = microbatches_of(last, ActionKind::forward);
    const std::vector<int> backwards = microbatches_of(last, ActionKind::full_backward);
    const std::vector<int> first_forwards = microbatches_of(schedule.ranks[0], ActionKind::forward);
    if (!counts_from(forwards, 1) || !counts_from(backwards, 0) ||
        !counts_from(first_forwards, 0) || backwards.size() != forwards.size() ||
        first_forwards.size() != forwards.size() || !alternates(last))
        return std::nullopt;
    for (Action& action : last)
        if (action.kind == ActionKind::forward)
            --action.microbatch;
    return static_cast<int>(forwards.size());
}

}  // namespace pipelens
