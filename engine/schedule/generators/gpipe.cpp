// GPipe (fill-drain): every forward, then every backward, in microbatch order. One stage per
// rank. Matches ScheduleGPipe._step_microbatches.
#include "engine/schedule/generate.hpp"

namespace pipelens::generators {

void gpipe(Schedule& schedule) {
    const int m = schedule.microbatch_count;
    for (int rank = 0; rank < schedule.rank_count; ++rank) {
        auto& actions = schedule.ranks[rank];
        actions.reserve(2 * m);
        for (int mb = 0; mb < m; ++mb)
            actions.push_back(make_action(rank, ActionKind::forward, mb));
        for (int mb = 0; mb < m; ++mb)
            actions.push_back(make_action(rank, ActionKind::full_backward, mb));
    }
}

}  // namespace pipelens::generators
