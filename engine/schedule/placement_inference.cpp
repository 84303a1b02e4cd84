// Stage placement inference (see placement_inference.hpp for the rule). Two passes over the
// actions: computations first, then the other actions for the stages still unplaced, so a
// transfer listed before its stage's computations never decides the placement.
#include "engine/schedule/placement_inference.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace pipelens {
namespace {

bool in_pipeline(const Schedule& schedule, int stage) {
    return stage >= 0 && stage < schedule.stage_count;
}

std::size_t stage_slots(const Schedule& schedule) {
    return static_cast<std::size_t>(std::max(schedule.stage_count, 0));
}

// Calls `visit(rank, step, part)` for every part of every action, in rank then step order.
template <typename Visit>
void for_each_part(const Schedule& schedule, Visit&& visit) {
    for (int rank = 0; rank < static_cast<int>(schedule.ranks.size()); ++rank) {
        const std::vector<Action>& actions = schedule.ranks[rank];
        for (int step = 0; step < static_cast<int>(actions.size()); ++step)
            for (const Action& part : schedule.parts_of(actions[step]))
                if (in_pipeline(schedule, part.stage))
                    visit(rank, step, part);
    }
}

}  // namespace

StagePlacementError::StagePlacementError(StageSplit split)
    : std::runtime_error(
          fmt::format("stage {} computes on rank {} and on rank {}; a stage must run on one rank",
                      split.stage, split.first_rank, split.rank)),
      split_(split) {}

std::vector<int> infer_stage_to_rank(const Schedule& schedule, SplitStage split) {
    std::vector<int> stage_to_rank(stage_slots(schedule), kNoRank);
    for_each_part(schedule, [&](int rank, int step, const Action& part) {
        if (!is_compute(part.kind))
            return;
        int& owner = stage_to_rank[static_cast<std::size_t>(part.stage)];
        if (owner == kNoRank)
            owner = rank;
        else if (owner != rank && split == SplitStage::refuse)
            throw StagePlacementError(StageSplit{part.stage, owner, rank, step});
    });
    // Only computed stages are placed so far: the rest go to the first rank naming them.
    for_each_part(schedule, [&](int rank, int, const Action& part) {
        int& owner = stage_to_rank[static_cast<std::size_t>(part.stage)];
        if (owner == kNoRank)
            owner = rank;
    });
    return stage_to_rank;
}

std::vector<int> stages_without_computation(const Schedule& schedule) {
    std::vector<bool> computed(stage_slots(schedule));
    for_each_part(schedule, [&](int, int, const Action& part) {
        if (is_compute(part.kind))
            computed[static_cast<std::size_t>(part.stage)] = true;
    });
    std::vector<int> stages;
    for (int stage = 0; stage < schedule.stage_count; ++stage)
        if (!computed[static_cast<std::size_t>(stage)])
            stages.push_back(stage);
    return stages;
}

}  // namespace pipelens
