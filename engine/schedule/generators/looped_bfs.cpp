// LoopedBFS (breadth-first): each rank runs all microbatches of its first local stage, then
// of the next, ...; backwards go through local stages in reverse and microbatches in reverse.
// Matches ScheduleLoopedBFS._calculate_single_rank_operations.
#include "engine/schedule/generate.hpp"

namespace pipelens::generators {

void looped_bfs(Schedule& schedule) {
    const int m = schedule.microbatch_count;
    const int pp = schedule.rank_count;
    const int v = schedule.stages_per_rank;
    for (int rank = 0; rank < pp; ++rank) {
        auto& actions = schedule.ranks[rank];
        actions.reserve(2 * v * m);
        for (int local = 0; local < v; ++local)
            for (int mb = 0; mb < m; ++mb)
                actions.push_back(make_action(local * pp + rank, ActionKind::forward, mb));
        for (int local = v - 1; local >= 0; --local)
            for (int mb = m - 1; mb >= 0; --mb)
                actions.push_back(make_action(local * pp + rank, ActionKind::full_backward, mb));
    }
}

}  // namespace pipelens::generators
