// 1F1B: stage s warms up with min(m, pp - s) forwards, then alternates one backward and one
// forward, then drains the remaining backwards. Matches Schedule1F1B._step_microbatches (the
// runtime loop; its printed table shows the same order with idle slots).
#include <algorithm>

#include "engine/schedule/generate.hpp"

namespace pipelens::generators {

void one_f_one_b(Schedule& schedule) {
    const int m = schedule.microbatch_count;
    const int pp = schedule.rank_count;
    for (int rank = 0; rank < pp; ++rank) {
        auto& actions = schedule.ranks[rank];
        actions.reserve(2 * m);
        const int warmup = std::min(m, pp - rank);
        int next_forward = 0;
        int next_backward = 0;
        while (next_forward < warmup)
            actions.push_back(make_action(rank, ActionKind::forward, next_forward++));
        while (true) {
            actions.push_back(make_action(rank, ActionKind::full_backward, next_backward++));
            if (next_forward == m)
                break;
            actions.push_back(make_action(rank, ActionKind::forward, next_forward++));
        }
        while (next_backward < m)
            actions.push_back(make_action(rank, ActionKind::full_backward, next_backward++));
    }
}

}  // namespace pipelens::generators
