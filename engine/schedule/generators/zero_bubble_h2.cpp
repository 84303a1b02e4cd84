// ZeroBubbleH2: the handcrafted zero-bubble schedule of Qi et al. (Zero Bubble Pipeline
// Parallelism, ICLR 2024, figure 3 bottom), one stage per rank.
//
// Stage r warms up with twice 1F1B's forwards, 2(p-1-r) before the steady state, so the gap
// before its first backward is filled; then it repeats F, I, W with each W delayed by 2r
// backwards, and drains the delayed W's at the end. With F = I = W and free links every stage
// runs without a gap (the paper's parallelogram), at up to (2p-1) microbatches of activations on
// stage 0. With c = 1 instead of 2 the same rule is ZB-H1 (InterleavedZeroBubble, v = 1).
// When m is too small for the warm-up (m < 2(p-1)), the warm-ups take at most m, and each
// stage's W is delayed by what its warm-up lacks against stage 0's (2r when nothing is cut):
// delaying by the full 2r there left gaps, a slower step than ZB-H1's.
#include <algorithm>

#include "engine/schedule/generate.hpp"

namespace pipelens::generators {

void zero_bubble_h2(Schedule& schedule) {
    constexpr int kWarmupFactor = 2;  // ZB-H1 is 1
    const int pp = schedule.rank_count;
    const int m = schedule.microbatch_count;
    for (int rank = 0; rank < pp; ++rank) {
        auto& actions = schedule.ranks[rank];
        actions.reserve(3 * static_cast<std::size_t>(m));
        const int warmup = std::min(kWarmupFactor * (pp - 1 - rank), m);
        const int weight_delay = std::min(kWarmupFactor * (pp - 1), m) - warmup;
        for (int microbatch = 0; microbatch < warmup; ++microbatch)
            actions.push_back(make_action(rank, ActionKind::forward, microbatch));
        int weights = 0;
        for (int backward = 0; backward < m; ++backward) {
            if (warmup + backward < m)
                actions.push_back(make_action(rank, ActionKind::forward, warmup + backward));
            actions.push_back(make_action(rank, ActionKind::backward_input, backward));
            if (backward >= weight_delay)
                actions.push_back(make_action(rank, ActionKind::backward_weight, weights++));
        }
        while (weights < m)
            actions.push_back(make_action(rank, ActionKind::backward_weight, weights++));
    }
}

}  // namespace pipelens::generators
