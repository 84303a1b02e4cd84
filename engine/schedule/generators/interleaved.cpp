// Interleaved1F1B and InterleavedZeroBubble (ZB1P): depth-first over v looped stages per rank.
//
// Both follow PyTorch's `_get_1f1b_rank_ops`: microbatches are processed in rounds of
// m / max(1, m / pp); a rank warms up with (v-1)*per_round + k*(pp-1-rank) forwards (k = 2 for
// 1F1B, 1 for zero bubble), then pairs one forward with one backward, then drains. The
// zero-bubble variant splits each backward into I and W and delays W: rank r runs its first r
// steady-state backwards without a W, then one W (oldest first) after each backward, and
// flushes the rest at the end.
#include <algorithm>
#include <vector>

#include "engine/schedule/generate.hpp"

namespace pipelens::generators {

void interleaved(Schedule& schedule, bool zero_bubble) {
    const int pp = schedule.rank_count;
    const int v = schedule.stages_per_rank;
    const int m = schedule.microbatch_count;
    const int rounds = std::max(1, m / pp);
    const int per_round = m / rounds;
    const ActionKind backward_kind =
        zero_bubble ? ActionKind::backward_input : ActionKind::full_backward;

    for (int rank = 0; rank < pp; ++rank) {
        const int warmup =
            std::min((v - 1) * per_round + (zero_bubble ? 1 : 2) * (pp - 1 - rank), m * v);
        const int steady = v * m - warmup;
        const int total = warmup + steady + warmup;  // cooldown drains the warmup's backwards
        const int steady_before_weights = zero_bubble ? rank : 0;

        auto forward_stage = [&](int step) { return ((step / per_round) % v) * pp + rank; };
        auto backward_stage = [&](int step) {
            return (v - 1 - ((step - warmup) / per_round) % v) * pp + rank;
        };

        std::vector<int> next_forward(v, 0), next_backward(v, 0), next_weight(v, 0);
        std::vector<int> backward_steps;
        backward_steps.reserve(v * m);
        std::size_t weights_done = 0;
        auto& actions = schedule.ranks[rank];
        actions.reserve((zero_bubble ? 3 : 2) * v * m);

        auto add_forward = [&](int step) {
            const int stage = forward_stage(step);
            actions.push_back(make_action(stage, ActionKind::forward, next_forward[stage / pp]++));
        };
        auto add_backward = [&](int step) {
            const int stage = backward_stage(step);
            actions.push_back(make_action(stage, backward_kind, next_backward[stage / pp]++));
            backward_steps.push_back(step);
        };
        auto add_weight = [&]() {
            const int stage = backward_stage(backward_steps[weights_done++]);
            actions.push_back(
                make_action(stage, ActionKind::backward_weight, next_weight[stage / pp]++));
        };

        for (int step = 0; step < total; ++step) {
            if (step < warmup) {
                add_forward(step);
                continue;
            }
            if (step < warmup + steady)
                add_forward(step);
            add_backward(step);
            if (zero_bubble && step - warmup >= steady_before_weights)
                add_weight();
        }
        while (zero_bubble && weights_done < backward_steps.size())
            add_weight();
    }
}

}  // namespace pipelens::generators
