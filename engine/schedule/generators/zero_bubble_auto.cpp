// ZeroBubbleAuto: the order the automatic zero-bubble scheduler (zero_bubble_search.hpp) finds
// for the shape's times and memory limit, one stage per rank, as F/I/W actions. The search's own
// timing only chooses the order; the simulator times it like any other schedule.
#include "engine/schedule/generate.hpp"
#include "engine/schedule/zero_bubble_search.hpp"

namespace pipelens::generators {

void zero_bubble_auto(Schedule& schedule, const ZeroBubbleInputs& inputs) {
    const ZeroBubbleSearch search =
        search_zero_bubble(schedule.rank_count, schedule.microbatch_count, inputs);
    const ZeroBubbleRun& best = search.runs[static_cast<std::size_t>(search.best)];
    for (int rank = 0; rank < schedule.rank_count; ++rank) {
        auto& actions = schedule.ranks[rank];
        actions.reserve(best.stages[rank].size());
        for (const ZeroBubbleOp& op : best.stages[rank])
            actions.push_back(make_action(rank, op.kind, op.microbatch));
    }
}

}  // namespace pipelens::generators
