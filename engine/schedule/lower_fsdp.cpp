// The two FSDP lowering passes: UNSHARD/RESHARD placement with a prefetch window, and
// REDUCE_GRAD after each stage's last backward.
//
// PyTorch finds "the next N distinct stages" by rescanning the rest of the rank's list at every
// action, which is quadratic when a rank holds fewer than N stages. Here each stage's next
// occurrence is tracked with a cursor into its list of positions, and the stages are kept
// ordered by it, so the pass costs log(stages per rank) per action, with identical output.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "engine/schedule/lower.hpp"

namespace pipelens {
namespace {

struct StageOccurrences {
    int stage = 0;
    std::vector<int> positions;  // ascending positions of actions that touch the stage
    std::size_t cursor = 0;
};

// The stages the upcoming actions touch, in first-occurrence order, up to `limit` (an
// OVERLAP_F_B that crosses the limit contributes all its new stages, as in PyTorch). Every stage
// with an occurrence left sits in `upcoming_` under its next position; a call moves only the
// stages whose next occurrence it has passed, and reads the first few entries, so a rank of
// many stages (Interleaved1F1B at v = 4000) costs log(stages) per action, not a sort of them all.
class UpcomingStages {
  public:
    UpcomingStages(const Schedule& schedule, const std::vector<Action>& actions) {
        std::map<int, std::size_t> index_of_stage;
        for (int position = 0; position < static_cast<int>(actions.size()); ++position) {
            for (const Action& part : schedule.parts_of(actions[position])) {
                auto [found, inserted] = index_of_stage.emplace(part.stage, stages_.size());
                if (inserted)
                    stages_.push_back({part.stage, {}, 0});
                auto& positions = stages_[found->second].positions;
                if (positions.empty() || positions.back() != position)
                    positions.push_back(position);
            }
        }
        for (std::size_t index = 0; index < stages_.size(); ++index)
            upcoming_.insert({stages_[index].positions.front(), stages_[index].stage, index});
    }

    // Fills `result` for the action at `position` (positions asked in ascending order).
    void from(int position, const Schedule& schedule, const std::vector<Action>& actions, int limit,
              std::vector<int>& result) {
        while (!upcoming_.empty() && std::get<0>(*upcoming_.begin()) < position) {
            const std::size_t index = std::get<2>(*upcoming_.begin());
            upcoming_.erase(upcoming_.begin());
            StageOccurrences& occurrences = stages_[index];
            while (occurrences.cursor < occurrences.positions.size() &&
                   occurrences.positions[occurrences.cursor] < position)
                ++occurrences.cursor;
            if (occurrences.cursor < occurrences.positions.size())
                upcoming_.insert(
                    {occurrences.positions[occurrences.cursor], occurrences.stage, index});
        }
        result.clear();
        for (auto group = upcoming_.begin(); group != upcoming_.end();) {
            const int group_position = std::get<0>(*group);
            auto group_end = group;
            while (group_end != upcoming_.end() && std::get<0>(*group_end) == group_position)
                ++group_end;
            // Stages first seen at the same action enter together, in the action's part order.
            for (const Action& part : schedule.parts_of(actions[group_position]))
                for (auto scan = group; scan != group_end; ++scan)
                    if (std::get<1>(*scan) == part.stage &&
                        std::find(result.begin(), result.end(), part.stage) == result.end())
                        result.push_back(part.stage);
            group = group_end;
            if (static_cast<int>(result.size()) >= limit)
                break;
        }
    }

  private:
    std::vector<StageOccurrences> stages_;
    std::set<std::tuple<int, int, std::size_t>> upcoming_;  // (next position, stage, index)
};

}  // namespace

Schedule lower_unshard_reshard(const Schedule& compute_only, int max_active_stages) {
    Schedule result = empty_like(compute_only);
    result.parts = compute_only.parts;
    for (std::size_t rank = 0; rank < compute_only.ranks.size(); ++rank) {
        const auto& actions = compute_only.ranks[rank];
        auto& out = result.ranks[rank];
        out.reserve(actions.size() + 8);
        UpcomingStages upcoming(compute_only, actions);
        std::vector<int> active;  // kept sorted
        std::vector<int> next, evict;
        for (int position = 0; position < static_cast<int>(actions.size()); ++position) {
            upcoming.from(position, compute_only, actions, max_active_stages, next);
            evict.clear();
            for (int stage : active)
                if (std::find(next.begin(), next.end(), stage) == next.end())
                    evict.push_back(stage);
            for (int stage : evict) {
                active.erase(std::find(active.begin(), active.end(), stage));
                out.push_back(make_action(stage, ActionKind::reshard));
            }
            for (int stage : next) {
                if (std::binary_search(active.begin(), active.end(), stage))
                    continue;
                active.insert(std::upper_bound(active.begin(), active.end(), stage), stage);
                out.push_back(make_action(stage, ActionKind::unshard));
            }
            out.push_back(actions[position]);
        }
        for (int stage : active)
            out.push_back(make_action(stage, ActionKind::reshard));
    }
    return result;
}

Schedule lower_reduce_grad(const Schedule& schedule) {
    Schedule result = empty_like(schedule);
    result.parts = schedule.parts;
    result.has_communication = schedule.has_communication;
    result.pair_count = schedule.pair_count;
    std::vector<int> backwards_done(schedule.stage_count, 0);
    for (std::size_t rank = 0; rank < schedule.ranks.size(); ++rank) {
        auto& out = result.ranks[rank];
        out.reserve(schedule.ranks[rank].size() + schedule.stages_per_rank);
        for (const Action& action : schedule.ranks[rank]) {
            out.push_back(action);
            for (const Action& part : schedule.parts_of(action)) {
                if (part.kind != ActionKind::backward_weight &&
                    part.kind != ActionKind::full_backward)
                    continue;
                if (part.stage < 0 || part.stage >= schedule.stage_count)
                    continue;
                if (++backwards_done[part.stage] == schedule.microbatch_count)
                    out.push_back(make_action(part.stage, ActionKind::reduce_grad));
            }
        }
    }
    return result;
}

Schedule strip_fsdp_actions(Schedule schedule) {
    for (auto& actions : schedule.ranks)
        std::erase_if(actions, [](const Action& action) { return is_fsdp(action.kind); });
    return schedule;
}

}  // namespace pipelens
