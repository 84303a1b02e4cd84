// ZBVZeroBubble: two stages per rank placed in a V (rank r holds stages r and 2pp-1-r).
// Follows ScheduleZBVZeroBubble._calculate_single_rank_operations: a three-part warm-up, a
// steady phase of F/I/W on both chunks, a two-part cool-down, then the remaining W's. The
// schedule is built for max(2pp-1, m) microbatches and actions of microbatches >= m are
// dropped, exactly as PyTorch does.
#include <algorithm>

#include "engine/schedule/generate.hpp"

namespace pipelens::generators {

void zbv_zero_bubble(Schedule& schedule) {
    const int pp = schedule.rank_count;
    const int m = schedule.microbatch_count;
    const int built_microbatches = std::max(2 * pp - 1, m);

    for (int rank = 0; rank < pp; ++rank) {
        auto& actions = schedule.ranks[rank];
        actions.reserve(6 * m);
        const int chunk0 = rank;
        const int chunk1 = schedule.stage_count - 1 - rank;
        int forward0 = 0, forward1 = 0, backward0 = 0, backward1 = 0;
        auto add = [&](int stage, ActionKind kind, int mb) {
            if (mb < m)
                actions.push_back(make_action(stage, kind, mb));
        };

        for (int i = 0; i < 2 * (pp - rank) - 1; ++i)
            add(chunk0, ActionKind::forward, forward0++);
        for (int i = 0; i < rank; ++i) {
            add(chunk1, ActionKind::forward, forward1++);
            add(chunk0, ActionKind::forward, forward0++);
        }
        for (int i = 0; i < pp - rank; ++i) {
            add(chunk1, ActionKind::forward, forward1++);
            add(chunk1, ActionKind::backward_input, backward1);
            add(chunk1, ActionKind::backward_weight, backward1++);
        }
        while (forward1 < forward0 || forward0 < built_microbatches) {
            if (forward0 < built_microbatches)
                add(chunk0, ActionKind::forward, forward0++);
            add(chunk0, ActionKind::backward_input, backward0);
            add(chunk0, ActionKind::backward_weight, backward0++);
            add(chunk1, ActionKind::forward, forward1++);
            add(chunk1, ActionKind::backward_input, backward1);
            add(chunk1, ActionKind::backward_weight, backward1++);
        }
        int weight0 = backward0, weight1 = backward1;
        for (int i = 0; i < rank; ++i) {
            add(chunk0, ActionKind::backward_input, backward0++);
            add(chunk1, ActionKind::backward_input, backward1++);
        }
        for (int i = 0; i < pp - rank; ++i) {
            add(chunk0, ActionKind::backward_input, backward0++);
            add(chunk0, ActionKind::backward_weight, weight0++);
        }
        while (weight1 < backward1)
            add(chunk1, ActionKind::backward_weight, weight1++);
        while (weight0 < backward0)
            add(chunk0, ActionKind::backward_weight, weight0++);
    }
}

}  // namespace pipelens::generators
