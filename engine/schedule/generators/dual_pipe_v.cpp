// DualPipeV (DeepSeek's DualPipe folded into a V): two stages per rank, rank r holds stages r
// and 2pp-1-r. Follows ScheduleDualPipeV._calculate_single_rank_operations step by step:
// F0 warm-up, F0F1, I1W1F1, the main overlapped F0B1-F1B0 phase (OVERLAP_F_B actions whose
// backward part is a full B), B1-F1B0, B1B0 switching to split I/W half way, W0B0, and the
// pending W's. Split backwards queue their W, which is emitted oldest first.
#include <deque>
#include <map>
#include <utility>

#include "engine/schedule/generate.hpp"

namespace pipelens::generators {
namespace {

class DualPipeVRank {
  public:
    DualPipeVRank(Schedule& schedule, int rank) : schedule_(schedule), rank_(rank) {}

    void add(int stage, ActionKind kind) {
        // A full backward takes its microbatch from the input-gradient counter.
        const ActionKind counter_kind =
            kind == ActionKind::full_backward ? ActionKind::backward_input : kind;
        const int mb = next(stage, counter_kind);
        schedule_.ranks[rank_].push_back(make_action(stage, kind, mb));
        if (kind == ActionKind::full_backward) {
            count_backward(stage);
            return;
        }
        if (kind == ActionKind::backward_input)
            pending_weights_.emplace_back(stage, mb);
        ++counters_[{stage, counter_kind}];
    }

    void add_overlap(int forward_stage, int backward_stage) {
        const int forward_mb = next(forward_stage, ActionKind::forward);
        const int backward_mb = next(backward_stage, ActionKind::backward_input);
        schedule_.add_overlap(
            rank_, {make_action(forward_stage, ActionKind::forward, forward_mb),
                    make_action(backward_stage, ActionKind::full_backward, backward_mb)});
        ++counters_[{forward_stage, ActionKind::forward}];
        count_backward(backward_stage);
    }

    void add_pending_weight() {
        if (pending_weights_.empty())
            return;
        auto [stage, mb] = pending_weights_.front();
        pending_weights_.pop_front();
        schedule_.ranks[rank_].push_back(make_action(stage, ActionKind::backward_weight, mb));
        ++counters_[{stage, ActionKind::backward_weight}];
    }

  private:
    int next(int stage, ActionKind kind) {
        auto found = counters_.find({stage, kind});
        return found == counters_.end() ? 0 : found->second;
    }
    void count_backward(int stage) {
        ++counters_[{stage, ActionKind::backward_input}];
        ++counters_[{stage, ActionKind::backward_weight}];
    }

    Schedule& schedule_;
    int rank_;
    std::map<std::pair<int, ActionKind>, int> counters_;
    std::deque<std::pair<int, int>> pending_weights_;
};

}  // namespace

void dual_pipe_v(Schedule& schedule) {
    const int pp = schedule.rank_count;
    const int m = schedule.microbatch_count;
    for (int rank = 0; rank < pp; ++rank) {
        schedule.ranks[rank].reserve(4 * m);
        DualPipeVRank builder(schedule, rank);
        const int stage0 = rank;
        const int stage1 = 2 * pp - 1 - rank;
        const ActionKind F = ActionKind::forward;
        const ActionKind I = ActionKind::backward_input;
        const ActionKind B = ActionKind::full_backward;

        for (int i = 0; i < (pp - rank - 1) * 2; ++i)
            builder.add(stage0, F);
        for (int i = 0; i < rank + 1; ++i) {
            builder.add(stage0, F);
            builder.add(stage1, F);
        }
        for (int i = 0; i < pp - rank - 1; ++i) {
            builder.add(stage1, I);
            builder.add_pending_weight();
            builder.add(stage1, F);
        }
        const int main_steps = m - pp * 2 + rank + 1;
        for (int i = 0; i < main_steps; ++i) {
            if (i == 0 && rank == pp - 1) {
                // The last rank does not overlap its first pair, to shrink the bubble.
                builder.add(stage0, F);
                builder.add(stage1, B);
            } else {
                builder.add_overlap(stage0, stage1);
            }
            builder.add_overlap(stage1, stage0);
        }
        for (int i = 0; i < pp - rank - 1; ++i) {
            builder.add(stage1, B);
            builder.add_overlap(stage1, stage0);
        }
        const int drain_steps = rank + 1;
        bool split_backward = false;
        for (int i = 0; i < drain_steps; ++i) {
            if (i == drain_steps / 2 && rank % 2 == 1)
                split_backward = true;
            builder.add(stage1, split_backward ? I : B);
            if (i == drain_steps / 2 && rank % 2 == 0)
                split_backward = true;
            builder.add(stage0, split_backward ? I : B);
        }
        for (int i = 0; i < pp - rank - 1; ++i) {
            builder.add_pending_weight();
            builder.add(stage0, split_backward ? I : B);
        }
        for (int i = 0; i < rank + 1; ++i)
            builder.add_pending_weight();
    }
}

}  // namespace pipelens::generators
